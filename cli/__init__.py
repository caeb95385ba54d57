"""The commands (packaged as ``minisge.cli``).

``commands.py`` is the one table of commands (the console scripts, the single binary and its
links, ``minisge -help``); each command is a module with ``main(argv) -> int``:
``qsub.py``, ``qstat.py``, ``qdel.py``, ``qhold.py`` and ``qrls.py``, ``qalter.py``, ``qresub.py``, ``qmod.py``,
``qacct.py`` (reads the accounting file itself), ``qconf.py``, ``qquota.py``, ``qhost.py``, ``qselect.py``, ``qrsh.py``
(``-inherit``, and interactive jobs), ``qlogin.py`` (qrsh's login form), ``qsh.py`` (refused: X11), ``qping.py``,
``sge_share_mon.py`` (the share tree with usage), ``qrsub.py``, ``qrstat.py`` and ``qrdel.py`` (advance reservations)
and ``minisge.py`` (init, start, stop, status, the roles); ``submitter.py`` is what qsub, qrsh and qlogin read
of the calling process (environment, user, home, cell, directory, host).  ``run`` (here) is how the
launchers and the single binary run a command's ``main`` and leave, ``load_when_used`` how a
command loads a big module it prints with in the middle of its ``main`` (``qstat``'s listing).

A command starts about as fast as the interpreter: it imports the standard library, the
protocol's wire and client, the cell's paths, the formats it needs and the output modules,
never trio, attrs or cattrs (tests/test_architecture.py checks both the imports and what a
started command loads).
"""

from __future__ import annotations

import gc
import posix  # the interpreter's own (os is not loaded by every command)
import sys

TYPE_CHECKING = False  # not typing's: the commands load no typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn, TypeVar

    T = TypeVar("T")


def run(main: Callable[[], int | None]) -> NoReturn:
    """Run a command's ``main`` (its modules loaded) and leave with its exit
    status, as ``sys.exit(main())`` does, but without the interpreter's
    finalization when nothing needs it: the modules' teardown and the last
    collections were 9.5 M of a plain ``qstat``'s 59 M instructions (issue 14;
    6.2 M of them the bare interpreter's own).  stdout and stderr are flushed first;
    a command that loaded ``threading`` (threads to join) or ``atexit``
    (handlers to run), a flush that fails (the error is then Python's, as
    before: "Exception ignored ..." and status 120) or a status that is not
    a plain int leaves the ordinary way.  Files a command writes are closed
    by their ``with`` blocks before main returns.

    The objects made so far (the modules') are frozen out of the cyclic
    collector (``gc.freeze``): they live as long as the command, so the
    collections its main triggers need not traverse them."""
    gc.freeze()
    gc.enable()  # the launchers load the modules with the collector off
    status: str | int | None
    try:
        status = main()
    except SystemExit as leaving:
        status = leaving.code
    except BaseException:  # a traceback, then the finalization as ever
        gc.unfreeze()
        raise
    if (status is None or type(status) is int) and "threading" not in sys.modules and "atexit" not in sys.modules:
        try:
            if sys.stdout is not None:
                sys.stdout.flush()
            if sys.stderr is not None:
                sys.stderr.flush()
            flushed = True
        except Exception:  # noqa: BLE001  (the ordinary way below says it, as Python does)
            flushed = False
        if flushed:
            posix._exit((status or 0) & 0xFF)
    gc.unfreeze()  # the finalization as ever: frozen objects would miss it (their __del__ never runs)
    sys.exit(status)


def load_when_used(get: Callable[[], T]) -> T:
    """``get()``, which loads a module of a package's ``WHEN_USED`` in the
    middle of a command's ``main``, as the launchers load the first modules:
    the cyclic collector off meanwhile, then everything made so far (the
    module's objects, and the reply the command holds) frozen out of its
    later collections, as :func:`run` froze the first modules' (``qstat``
    at 10,000 pending: 2.2 M instructions of 106 M, qstat_out loaded in
    its ``main`` with the collector on and not frozen)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return get()
    finally:
        gc.freeze()
        if enabled:
            gc.enable()

