"""When the scheduler runs: on every change, coalesced.

The scheduling itself is a pure function (:mod:`minisge.scheduler`); the
qmaster builds its snapshot and applies its plan (:meth:`Qmaster.schedule`).
This module is the loop that calls it: woken by ``Qmaster.changed`` (and by
load control's suspend_interval timer through it), it lets a burst of events
gather (:meth:`Qmaster.wait_changed`), runs one pass, spools the pass's
changes and sends the start messages, then the messages posted meanwhile
(acknowledgements, suspend and resume).  A job submitted with ``qsub -a``
gets a pass when its execution time comes, with or without an event, and so does an
advance reservation at its start and end time (its end deletes its jobs).
A pass is followed by a pause as long as it took (:data:`PASS_PAUSE`): a
stream of changes (submissions one after the other, ends) gathers meanwhile
and shares the next pass, so that passes take at most about half of the
qmaster's time however long they are, as sge_conf(5) ``flush_submit_sec``
and ``schedule_interval`` bound 8.1.9's; a pass of a small cell takes a
millisecond or two, so a job still starts at once.  When the spool cannot be written,
the dispatches of the jobs it did not take are undone and the
acknowledgements of ends not yet on disk wait (:mod:`minisge.qmaster.spool_backlog`,
whose timer runs beside this loop and wakes it when the writes work again).
"""

from __future__ import annotations

import logging
import math
import time

import trio

from minisge.qmaster.qmaster import Qmaster

log = logging.getLogger("minisge.daemon")

#: after a pass, the loop waits this many times the pass's own time before the next one
PASS_PAUSE = 1.0


async def scheduler_loop(qm: Qmaster) -> None:
    """Run a scheduling pass whenever something changed, no sooner after the
    last one than :data:`PASS_PAUSE` times what it took."""
    not_before = -math.inf  # trio's clock: the end of the pause after the last pass
    while True:
        due = qm.next_execution_time()  # qsub -a: a pass when the first waiting job may start
        wake = trio.current_time() + max(0.0, due - qm.clock()) + 0.05 if due is not None else math.inf
        with trio.CancelScope(deadline=max(wake, not_before)):
            await qm.wait_changed(not_before)
        spent = 0.0
        try:
            await qm.reservations.tick()  # advance reservations whose start or end time came
            began = time.perf_counter()
            started = qm.flush(qm.schedule())  # a dispatch the spool did not take is undone
            spent = time.perf_counter() - began
            for job, task in started:
                await qm.start_task(job, task)
            await qm.deliver()  # after the starts: the execd cleans up when it has time
        except Exception:  # a bug in one pass must not take the cell down; logged
            log.exception("scheduling pass failed")
        # the changes meanwhile gather for the next pass; a change that comes
        # after the pause costs no timer at all (Qmaster.wait_changed)
        not_before = trio.current_time() + spent * PASS_PAUSE
