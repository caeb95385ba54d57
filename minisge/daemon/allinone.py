"""The running cell: qmaster, scheduler and execd as tasks of one trio process.

``run_allinone`` is what ``minisge start`` runs: one nursery owns the
qmaster's local server, the scheduler loop and the local execd; SIGTERM
cancels it, and the execd's shepherds (own processes, see
:mod:`minisge.execd.shepherd`) keep running and are picked up by the next start.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import trio

from minisge.cell import Cell
from minisge.daemon.process import guarded, local_limits, remove_runtime_files, watch_signals, write_pid
from minisge.execd.execd import Execd
from minisge.protocol import trio_streams as protocol_trio
from minisge.qmaster.outbox import ExecdLink
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.requests import RequestHandler
from minisge.qmaster.scheduling import scheduler_loop

log = logging.getLogger("minisge.daemon")


class InProcessExecd(ExecdLink):
    """The qmaster's link to an execd in the same process.  Its messages
    are handed over as they are, not checked against the protocol
    catalogue: both ends are this process's own code, the data of every
    message (a job's request included) was checked where it came in (a
    command's request at the qmaster's socket), and a message never crosses
    a process boundary here; what crosses a socket is checked on its way in
    (the remote execd's ``qmaster_link.py``, the qmaster's ``execd_links.py``).
    The execd's reports come the same way (``RequestHandler.handle_report``)."""

    def __init__(self, execd: Execd):
        self.execd = execd
        self.host = execd.host

    async def send(self, msg: dict[str, Any]) -> None:
        await self.execd.handle(msg)


async def own_execd_report(handler: RequestHandler, msg: dict[str, Any]) -> None:
    """A report of the execd of this process, handed to the qmaster as it is
    (see :class:`InProcessExecd`)."""
    await handler.handle_report(str(msg["op"]), msg)


async def run_allinone(cell: Cell, host: str, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    qm = Qmaster(cell, host)
    qm.load()
    qm.settle_journal()
    with trio.CancelScope() as scope:
        handler = RequestHandler(qm, shutdown=scope.cancel)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_signals, scope)
            execd = Execd(cell, host, functools.partial(own_execd_report, handler))
            qm.execds[host] = InProcessExecd(execd)
            qm.config.register_execd(host)
            await nursery.start(execd.run)
            qm.reconcile_host(host, set(execd.running))  # after execd.run's recovery of active_jobs
            nursery.start_soon(scheduler_loop, qm)
            nursery.start_soon(qm.load_control.run_timer)  # queue_conf(5) suspend_interval
            nursery.start_soon(qm.reservations.run_mailer)  # qrsub -m mails
            nursery.start_soon(qm.backlog.run_timer, qm.released)  # writes a full spool did not take
            nursery.start_soon(qm.share_usage.run_timer, qm.clock)  # the users' usage, once a second
            await nursery.start(qm.accounting_sync.run, qm.send_synced_acks)  # ends' records synced off the loop
            await nursery.start(qm.group_commit.run)  # the syncs submissions share (spool.py:GroupCommit)
            listener = await protocol_trio.open_unix_listener(cell.socket_path)
            serve = guarded(protocol_trio.serving(handler, limits=local_limits(qm)))
            nursery.start_soon(trio.serve_listeners, serve, [listener])
            write_pid(cell.pid_file)
            log.info("qmaster and execd of cell %s started on %s", cell.name, host)
            qm.changed()
            task_status.started()
    remove_runtime_files(cell)
