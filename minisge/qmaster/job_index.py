"""Which of the qmaster's jobs a scheduling pass and its helpers look at.

A long queue of held jobs (``qsub -h``, ``-hold_jid`` successors waiting
for their predecessors) must not cost every pass a look at each of them:
a pass counts only the jobs that hold a task or are not held as a whole
(``Job.held``: a hold on the job and all its tasks, or a -hold_jid
predecessor; :meth:`minisge.qmaster.config_state.ConfigState.running_jobs_of`
skips the others too).  :class:`JobIndex` keeps those apart, with the two
other sets the qmaster's scheduler loop asks for after every pass: the
immediate jobs (``qsub -now y``, whose one chance is the next pass) and the
``qsub -a`` execution times still to come (the loop runs a pass at the
first), in a heap.  It also keeps the jobs that wait for others (``-hold_jid``,
``-hold_jid_ad``): a task's end looks at them alone for the successors
it releases, not at every job (:meth:`Qmaster.release_dependents`).

The qmaster tells the index of every job it takes (:meth:`JobIndex.add`),
changes (:meth:`JobIndex.update`: every change of a job is spooled, so the
qmaster calls it where it writes a job, and for the jobs it marked for its
flush before each pass) and lets go (:meth:`JobIndex.remove`); the index
reads nothing else.  It also tells who asks (:meth:`JobIndex.take_changed`)
which jobs it filed since the last time: a pass counts those again and takes
the others as it counted them.  ``tests/test_job_index.py`` compares it with a full
scan after random sequences of submissions, holds, releases, deletions and
ends.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

from minisge.qmaster.job import Job


def considered(job: Job) -> bool:
    """A pass counts the job: it holds a task (running, suspended, in error),
    or it is not held as a whole (some task may be dispatched)."""
    return bool(job.tasks) or not job.held


class JobIndex:
    """The jobs a pass considers, the immediate jobs and the coming
    execution times (see the module)."""

    __slots__ = ("considered", "immediate", "dependents", "_times", "_timed", "_changed")

    def __init__(self) -> None:
        self.considered: dict[int, Job] = {}  # by number: see considered()
        self.immediate: dict[int, Job] = {}  # qsub -now y jobs, until they leave
        self.dependents: dict[int, Job] = {}  # jobs with a -hold_jid or -hold_jid_ad predecessor
        self._times: list[tuple[float, int]] = []  # heap of (execution time, job number); stale ones popped
        self._timed: dict[int, float] = {}  # job number -> the execution time it has in the heap
        self._changed: set[int] = set()  # the jobs filed since take_changed() (added, changed, removed)

    def add(self, job: Job) -> None:
        """A job the qmaster took (submitted, loaded)."""
        if job.spec.get("now"):
            self.immediate[job.number] = job
        self.update(job)

    def add_all(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            self.add(job)

    def update(self, job: Job) -> None:
        """A job the qmaster changed (its tasks, holds, predecessors, pending
        tasks or execution time): filed again."""
        self._changed.add(job.number)
        if considered(job):
            self.considered[job.number] = job
        else:
            self.considered.pop(job.number, None)
        if job.predecessors or job.ad_predecessors:
            self.dependents[job.number] = job
        else:
            self.dependents.pop(job.number, None)
        when = job.execution_time
        if when and job.pending and self._timed.get(job.number) != when:
            self._timed[job.number] = when
            heapq.heappush(self._times, (when, job.number))

    def remove(self, job: Job) -> None:
        """A job that left the qmaster (done, deleted)."""
        self._changed.add(job.number)
        self.considered.pop(job.number, None)
        self.immediate.pop(job.number, None)
        self.dependents.pop(job.number, None)
        self._timed.pop(job.number, None)  # its heap entry goes when it comes first

    def take_changed(self) -> set[int]:
        """The numbers of the jobs added, filed again or removed since the
        last call (a pass's count of the jobs looks at those alone:
        :meth:`minisge.qmaster.running_jobs.RunningJobs.count`)."""
        changed, self._changed = self._changed, set()
        return changed

    def next_execution_time(self, jobs: Mapping[int, Job], now: float) -> float | None:
        """The earliest execution time later than ``now`` of a job of ``jobs``
        with a pending task, or None; the entries that passed or no longer
        hold (the job left, has no pending task, got another time) leave
        the heap on the way."""
        times = self._times
        while times:
            when, number = times[0]
            job = jobs.get(number)
            if when > now and job is not None and job.execution_time == when and job.pending:
                return when
            heapq.heappop(times)
            if self._timed.get(number) == when:
                del self._timed[number]
        return None
