"""What every daemon process does: its log file, its pid file, SIGTERM."""

from __future__ import annotations

import logging
import logging.handlers
import os
import resource
import signal
from collections.abc import Awaitable, Callable

import trio

from minisge.cell import Cell
from minisge.protocol.trio_streams import LocalLimits
from minisge.qmaster.qmaster import Qmaster

log = logging.getLogger("minisge.daemon")


def guarded(per_connection: Callable[[trio.SocketStream], Awaitable[None]]
            ) -> Callable[[trio.SocketStream], Awaitable[None]]:
    """The per-connection function of a listener, such that a fault while serving
    one connection (whatever it is, an ExceptionGroup from a nursery of its
    tasks included) is logged with its traceback and ends that connection only:
    out of ``trio.serve_listeners`` it would end the daemon."""
    async def serve(stream: trio.SocketStream) -> None:
        try:
            await per_connection(stream)
        except Exception:
            log.exception("serving a connection failed: closed")
            await trio.aclose_forcefully(stream)

    return serve


async def watch_signals(cancel_scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("got signal %d: shutting down", signum)
            cancel_scope.cancel()
            return


def raise_descriptor_limit() -> int:
    """Raise RLIMIT_NOFILE's soft limit to its hard limit (every caller's
    connection is a descriptor); the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as err:
            log.warning("cannot raise the limit of open files from %d to %d: %s", soft, hard, err)
    return soft


def local_limits(qm: Qmaster) -> LocalLimits:
    """The limits of the qmaster's Unix socket: the environment's
    (:meth:`LocalLimits.from_environ`), the cell's managers exempt."""
    return LocalLimits.from_environ(os.environ, privileged=qm.is_manager)


#: the bound of a daemon's ``messages`` file: when a line would take it past
#: this size it is renamed ``messages.1`` (replacing the one before) and a new
#: one begins, so a daemon's log never takes more than twice this on disk
MESSAGES_MAX_BYTES = 10 * 1024 * 1024


def setup_logging(path: str, max_bytes: int = MESSAGES_MAX_BYTES) -> None:
    """The daemon's log: ``path`` (its ``messages`` file), rotated once at
    ``max_bytes`` into ``path.1``."""
    # a line the log cannot take (its disk is full) is lost, not printed with a traceback
    logging.raiseExceptions = False
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=1)
    handler.setFormatter(logging.Formatter("%(asctime)s|%(name)s|%(levelname)s|%(message)s", "%m/%d/%Y %H:%M:%S"))
    root = logging.getLogger("minisge")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


def write_pid(path: str) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(path + ".tmp", path)


def remove_file(path: str) -> None:
    """Remove a runtime file (a pid file, a socket) if it is there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_runtime_files(cell: Cell) -> None:
    for p in (cell.socket_path, cell.pid_file):
        remove_file(p)
    log.info("shut down")
