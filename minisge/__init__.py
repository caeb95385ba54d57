"""minisge: a Grid Engine for a few workstations, on trio.

The packages (each folder's README.md maps its files; ARCHITECTURE.md at the top of the
source tree maps the whole): ``formats/`` (Grid Engine's text formats), ``rules/`` (pure
rules the daemons share), ``scheduler/`` (snapshot in, plan out), ``protocol/``,
``qmaster/``, ``execd/``, ``daemon/`` (the processes), ``output/`` (how the commands
print); the commands are ``minisge.cli`` (the ``cli/`` folder).  Four modules of their own:

- ``cell.py``: where a cell lives (``$SGE_ROOT/$SGE_CELL``) and the paths inside it;
- ``offline.py``: ``python -m minisge.offline``, the scheduler run on a cell's spool;
- ``mailer.py``: running sge_conf(5) ``mailer`` for one mail (the execd's and the qmaster's);
- ``name_service.py``: the password and group databases' entries, kept a few seconds (both daemons).
"""

__version__ = "0.1.0"

TYPE_CHECKING = False  # not typing's: a command must not pay for importing typing
if TYPE_CHECKING:
    from minisge import formats, output  # noqa: F401  (minisge.NAME: loaded when used)

#: The packages a command loads only when it uses them, as attributes of this
#: package (``minisge.output.qstat_out``, PEP 562, as the packages' own
#: ``WHEN_USED``): a ``qsub`` without ``-verify`` prints with no output
#: module, a ``qstat`` of no job matches no queue pattern and prints nothing,
#: and each package's ``__init__`` is a module more to load (issue 14).
WHEN_USED = frozenset({"formats", "output"})


def __getattr__(name: str) -> object:
    """A package of :data:`WHEN_USED`, loaded at its first use (the import
    system then sets it on this package: this runs once a package)."""
    if name not in WHEN_USED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return __import__(f"{__name__}.{name}", fromlist=["__name__"])
