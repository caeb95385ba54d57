"""Grid Engine's classic text formats: one module per format.

Each module parses text into an attrs model and writes the model back the
way Grid Engine 8.1 writes it.  Parsers raise
:class:`minisge.formats.errors.FormatError`, whose message reads
``FILE:LINE: what is wrong`` (not imported here: a ``qsub`` or ``qstat``
that loads this package for its option parser or its queue patterns does
not load the errors module with it).
"""

from minisge import loaded_when_used

#: Modules a command loads only when it uses them, as attributes of this
#: package (``formats.wc_queue.list_matches(...)``, PEP 562): a plain ``qstat``
#: matches no queue or PE pattern, and these were ~5% of its instructions
#: (issue 14).  Their users import them under ``TYPE_CHECKING`` for the type
#: checker.
WHEN_USED = frozenset({"wc_queue", "wildcard"})

__getattr__ = loaded_when_used(__name__, WHEN_USED)
