"""The running cell: qmaster, scheduler and execd as tasks of one trio process.

``run_allinone`` is what ``minisge start`` runs: one nursery owns the
qmaster's local server, the scheduler loop and the local execd; SIGTERM
cancels it, and the execd's shepherds (own processes, see
:mod:`minisge.shepherd`) keep running and are picked up by the next start.
"""

from __future__ import annotations

import logging
import os
import signal

import trio

from minisge import protocol_trio
from minisge.cell import Cell
from minisge.execd import Execd
from minisge.qmaster import ExecdLink, Qmaster
from minisge.requests import RequestHandler

log = logging.getLogger("minisge.daemon")


class InProcessExecd(ExecdLink):
    """The qmaster's link to an execd in the same process."""

    def __init__(self, execd: Execd):
        self.execd = execd
        self.host = execd.host

    async def send(self, msg: dict) -> None:
        await self.execd.handle(msg)


COALESCE_CHECKPOINTS = 3


async def scheduler_loop(qm: Qmaster) -> None:
    """The scheduling passes, and the load-control timer they own."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(load_control_timer, qm)
        await scheduling_passes(qm)


async def load_control_timer(qm: Qmaster) -> None:
    """queue_conf(5) suspend_interval: wake the scheduler when the interval
    load control waits for ends (``qm.load_decision.next_due``); re-armed by
    every pass (``qm.load_timer_rearm``)."""
    while True:
        qm.load_timer_rearm = rearm = trio.Event()
        d = getattr(qm, "load_decision", None)
        due = d.next_due if d is not None else None
        if due is None:
            await rearm.wait()
            continue
        with trio.move_on_after(max(0.0, due - qm.clock()) + 0.05):
            await rearm.wait()
            continue
        qm.changed()
        await rearm.wait()  # the pass it starts re-arms the timer


async def scheduling_passes(qm: Qmaster) -> None:
    """Run a scheduling pass whenever something changed.

    A burst of events (a loop of qsub calls, many tasks ending at once) gives
    one pass: after a wake-up the loop lets the other tasks run for a moment
    (a few scheduling rounds) before it takes its snapshot.
    """
    while True:
        await qm.wake_scheduler.wait()
        for _ in range(COALESCE_CHECKPOINTS):  # let the other ready tasks add their events
            await trio.lowlevel.checkpoint()
        qm.wake_scheduler = trio.Event()
        try:
            started = qm.schedule()
            qm.flush()
            for job, task in started:
                await qm.start_task(job, task)
            await qm.send_acks()  # after the starts: the execd cleans up when it has time
        except Exception:  # a bug in one pass must not take the cell down
            log.exception("scheduling pass failed")
        await trio.sleep(0)


async def _watch_signals(cancel_scope: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("got signal %d: shutting down", signum)
            cancel_scope.cancel()
            return


def setup_logging(path: str) -> None:
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s|%(name)s|%(levelname)s|%(message)s", "%m/%d/%Y %H:%M:%S"))
    root = logging.getLogger("minisge")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


async def run_allinone(cell: Cell, host: str, task_status=trio.TASK_STATUS_IGNORED) -> None:
    qm = Qmaster(cell, host)
    qm.load()
    qm.wake_scheduler = trio.Event()
    handler = RequestHandler(qm)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, scope)

            async def execd_report(msg: dict) -> None:
                await handler.execd_report(msg)

            execd = Execd(cell, host, execd_report)
            qm.execds[host] = InProcessExecd(execd)
            qm.config.register_execd(host)
            handler.shutdown = scope.cancel
            await nursery.start(execd.run)
            qm.reconcile_host(host, set(execd.running))  # after execd.run's recovery of active_jobs
            nursery.start_soon(scheduler_loop, qm)
            listener = await protocol_trio.open_unix_listener(cell.socket_path)
            nursery.start_soon(trio.serve_listeners, protocol_trio.serving(handler), [listener])
            write_pid(cell.pid_file)
            log.info("qmaster and execd of cell %s started on %s", cell.name, host)
            qm.changed()
            task_status.started()
    remove_runtime_files(cell)


def write_pid(path: str) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(path + ".tmp", path)


def remove_runtime_files(cell: Cell) -> None:
    for p in (cell.socket_path, cell.pid_file):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    log.info("shut down")
