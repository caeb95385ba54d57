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
    from collections.abc import Callable, Collection

    from minisge import formats, output  # noqa: F401  (minisge.NAME: loaded when used)


def loaded_when_used(package: str, names: "Collection[str]",  # (quoted: no __future__ import to load)
                     module: str | None = None) -> "Callable[[str], object]":
    """A package's PEP 562 ``__getattr__`` (issue 14: what a command does not
    use, it does not load): the modules ``names`` of ``package``, or, with
    ``module``, those names of that module, each loaded at its first use
    (the import system then sets a module on its package, so this runs once
    a module); any other name is an AttributeError, as without it.  The
    users import them under ``TYPE_CHECKING`` for the type checker."""

    def attribute(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module is None:
            return __import__(f"{package}.{name}", fromlist=["__name__"])
        return getattr(__import__(module, fromlist=["__name__"]), name)

    return attribute


#: The packages a command loads only when it uses them, as attributes of this
#: package (``minisge.output.qstat_out``, as the packages' own ``WHEN_USED``):
#: a ``qsub`` without ``-verify`` prints with no output module, a ``qstat`` of
#: no job matches no queue pattern and prints nothing, and each package's
#: ``__init__`` is a module more to load (issue 14).
WHEN_USED = frozenset({"formats", "output"})
__getattr__ = loaded_when_used(__name__, WHEN_USED)
