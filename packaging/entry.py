"""The single binary's entry: a multi-call program, like busybox.

Called as ``qsub``, ``qstat``, … (a symlink or a copy named so: every name of
the table of commands, :mod:`minisge.cli.commands`) it is that command; called
by any other name it is ``minisge``, which also runs ``minisge qsub …``.
``minisge -m NAME ARGS`` runs one of the table's runnable modules as
``python -m NAME ARGS`` would: that is how the ``minisge`` command starts its
daemons (``sys.executable -m minisge.daemon``), and in the binary
sys.executable is the binary.
"""

from __future__ import annotations

import gc
import os
import sys

from minisge.cli import run
from minisge.cli.commands import COMMANDS, RUNNABLE_MODULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# modules the spec keeps out of the bootstrap's reach (ctypes: see minisge.spec),
# importable from here on
DEFERRED = "deferred"


def target(argv: list[str]) -> tuple[str, list[str]]:
    """The module whose ``main`` the binary runs for ``argv`` (``argv[0]``
    the name it was called by) and that main's arguments.  ``minisge qsub
    ARGS`` is qsub itself, as the ``minisge`` command would run it
    (``minisge.cli.minisge:run_command``), without loading that command's
    own modules first (argparse, subprocess...: ~30 ms of a ``qsub``)."""
    name = argv[0].rpartition("/")[2]
    if name in COMMANDS and name != "minisge":
        return COMMANDS[name].module, argv[1:]
    if len(argv) > 1 and argv[1] in COMMANDS and argv[1] != "minisge":
        return COMMANDS[argv[1]].module, argv[2:]
    if len(argv) > 2 and argv[1] == "-m" and argv[2] in RUNNABLE_MODULES:
        return RUNNABLE_MODULES[argv[2]], argv[3:]
    return COMMANDS["minisge"].module, argv[1:]


def main() -> NoReturn:
    bundle = getattr(sys, "_MEIPASS", None)  # the binary's _internal/ (PyInstaller)
    if bundle is not None:
        sys.path.append(os.path.join(bundle, DEFERRED))
    module, args = target(sys.argv)
    gc.disable()  # no collection while the command's modules load (setup.py's launchers do the same)
    command = __import__(module, fromlist=["main"])  # not importlib's: its package imports warnings
    return run(lambda: command.main(args))  # the collector back on, the status out (minisge.cli.run)


if __name__ == "__main__":
    main()
