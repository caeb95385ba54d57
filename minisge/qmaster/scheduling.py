"""When the scheduler runs: on every change, coalesced.

The scheduling itself is a pure function (:mod:`minisge.scheduler`); the
qmaster builds its snapshot and applies its plan (:meth:`Qmaster.schedule`).
This module is the loop that calls it: woken by ``Qmaster.changed`` (and by
load control's suspend_interval timer through it), it lets a burst of events
gather (:meth:`Qmaster.wait_changed`), runs one pass, spools the pass's
changes and sends the start messages, then the messages posted meanwhile
(acknowledgements, suspend and resume).  A job submitted with ``qsub -a``
gets a pass when its execution time comes, with or without an event, and so does an
advance reservation at its start and end time (its end deletes its jobs).  When the spool cannot be written,
the dispatches of the jobs it did not take are undone and the
acknowledgements of ends not yet on disk wait (:mod:`minisge.qmaster.spool_backlog`,
whose timer runs beside this loop and wakes it when the writes work again).
"""

from __future__ import annotations

import logging
import math

import trio
import trio.lowlevel

from minisge.qmaster.qmaster import Qmaster

log = logging.getLogger("minisge.daemon")


async def scheduler_loop(qm: Qmaster) -> None:
    """Run a scheduling pass whenever something changed."""
    while True:
        due = qm.next_execution_time()  # qsub -a: a pass when the first waiting job may start
        with trio.move_on_after(max(0.0, due - qm.clock()) + 0.05 if due is not None else math.inf):
            await qm.wait_changed()
        try:
            await qm.reservations.tick()  # advance reservations whose start or end time came
            started = qm.flush(qm.schedule())  # a dispatch the spool did not take is undone
            for job, task in started:
                await qm.start_task(job, task)
            await qm.deliver()  # after the starts: the execd cleans up when it has time
        except Exception:  # a bug in one pass must not take the cell down; logged
            log.exception("scheduling pass failed")
        await trio.lowlevel.checkpoint()
