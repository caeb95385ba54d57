"""What the thin commands print: pure formatting functions, standard library only.

``qstat_out`` formats ``qstat`` (default listing, ``-f``, ``-F``, ``-r``, ``-ext``,
``-pri``, ``-urg``, ``-t``, ``-g c|d|t``, ``-j``, ``-xml``) and ``qacct_out``
formats ``qacct`` (``-j`` records and the usage summaries), byte for byte as
Grid Engine 8.1.9 prints them.  The commands must start in a few milliseconds,
so these modules import nothing but the standard library (no attrs, trio or
cattrs) and never touch files, sockets or the clock: the qmaster sends plain
dicts, whose keys each module's docstring lists (that is the contract).
"""
