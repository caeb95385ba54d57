"""What the thin commands print: pure formatting functions, standard library only.

``qstat_out`` formats ``qstat`` (default listing, ``-f``, ``-F``, ``-r``, ``-ext``,
``-pri``, ``-urg``, ``-t``, ``-g c|d|t``, ``-j``, ``-xml``) and ``qacct_out``
formats ``qacct`` (``-j`` records and the usage summaries), byte for byte as
Grid Engine 8.1.9 prints them.  The commands must start in a few milliseconds,
so these modules import nothing but the standard library (no attrs, trio or
cattrs) and never touch files, sockets or the clock: the qmaster sends plain
dicts, whose keys each module's docstring lists (that is the contract).
"""

from minisge import loaded_when_used

#: The output modules a command loads only when it prints with them, as
#: attributes of this package (``output.json_views.qstat_view(...)``, PEP 562):
#: a plain ``qstat`` prints no JSON and no job's details, a plain ``qsub`` no
#: ``-verify``, and those modules (with qacct_out and qhost_out, which
#: json_views imports) were about a tenth of their instructions (issue 14);
#: a ``qstat`` with no job to list prints nothing, without ``qstat_out`` and
#: what it imports (``text``, ``resource_value``, ``formats.sge_types``), a
#: tenth of an empty ``qstat``'s instructions.
#: Their users import them under ``TYPE_CHECKING`` for the type checker.
WHEN_USED = frozenset({"job_detail_out", "json_views", "qstat_out", "submit_verify", "text"})

__getattr__ = loaded_when_used(__name__, WHEN_USED)
