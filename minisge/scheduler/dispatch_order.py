"""The order in which one scheduling pass takes its pending tasks (sge_priority(5)).

Named for what it gives a pass: its dispatch order.  :func:`dispatch_order`
gives exactly what ``job_order.dispatch_order(tasks, dispatch_figures(snap))``
gives -- the pending tasks by decreasing sge_priority(5) priority, then job
number, then task number -- in one sweep, without making a ``JobFacts`` and
a ``Figures`` object per job: with 100,000 pending jobs those objects cost
more than the placement.  It computes the same numbers with the same float
operations in the same order as ``job_order.figures`` (urgency: resource
contribution per (requests, PE), waiting time and deadline contributions;
normalized urgency and POSIX priority; ``ntckts`` from the ticket policies, :func:`ntckts`),
so the order is the same to the last bit; tests compare the two on random
snapshots.  :func:`dispatch_figures` gives the figures themselves, as
``qstat -pri`` shows them.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

from minisge.scheduler import job_order, tickets
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.snapshot import PendingTask, Snapshot


@functools.lru_cache(maxsize=16384)
def _contribution(requests: tuple[tuple[str, str], ...], slots: int, cx: ComplexIndex) -> float:
    """job_order.resource_contribution's sum, remembered: a pass counts the
    same running jobs' requests as the pass before."""
    return job_order.resource_contribution(requests, slots, cx)[0]


#: the name a pending task keeps its resource contribution (with the
#: complexes and slot count it is of) and its normalized POSIX priority
#: under (no field: not compared, not printed; a snapshot may hand a pass
#: the same task objects as the pass before)
_KEPT = "_urgency"


def pending_facts(snap: Snapshot) -> list[job_order.JobFacts]:
    """job_order.JobFacts of the pending jobs of ``snap`` (one per job, from
    its first task) followed by the running jobs' (``snap.running``)."""
    seen: dict[int, job_order.JobFacts] = {}
    for t in snap.pending:
        if t.held or t.job_id in seen:
            continue
        seen[t.job_id] = job_order.JobFacts(
            t.job_id, t.priority, t.submission_time, None, t.deadline,
            tuple(t.requests.items()), t.pe)
    return [*seen.values(), *(f for f in snap.running if f.job_id not in seen)]


def ntckts(snap: Snapshot) -> tuple[dict[int, float], float]:
    """Each job's normalized tickets and the value of a job without any
    (tickets.job_ntckts of the snapshot's ticket input; none: 0.5 for all)."""
    if snap.tickets is None:
        return {}, 0.5
    return tickets.job_ntckts(tickets.tickets(snap.ticket_tasks, snap.tickets))


def dispatch_figures(snap: Snapshot) -> dict[int, job_order.Figures]:
    """sge_priority(5) figures of the pending jobs (normalized together with
    the running ones), as the pass orders them."""
    nt, default = ntckts(snap)
    return job_order.figures(pending_facts(snap), snap.complexes, snap.pes, snap.weights, snap.now, nt, default)


def _sweep(pending: Sequence[PendingTask], snap: Snapshot) -> tuple[list[PendingTask], list[float], list[float],
                                                                    list[int]] | None:
    """The tasks of ``pending`` that are not held, in its order, each with
    its job's urgency and normalized POSIX priority (the same for every task
    of a job), and the jobs' numbers; None if ``pending`` is not in job
    number, then task number order (the qmaster makes it so unless a job
    came back into its index out of turn, qrls)."""
    cx, pes, weights, now = snap.complexes, snap.pes, snap.weights, snap.now
    w_wait, w_dead = weights.waiting_time, weights.deadline
    slots_of: dict[object, int] = {}  # -pe request -> job_slot_request
    tasks: list[PendingTask] = []
    urgs: list[float] = []
    nps: list[float] = []
    jobs: list[int] = []
    last_job, last_task = -1, -1
    u = p = 0.0
    for t in pending:
        if t.held:
            continue
        job_id = t.job_id
        if job_id != last_job:
            if job_id < last_job:
                return None
            pe = t.pe
            if pe is None:
                slots = 1
            else:
                slots = slots_of.get(pe)  # type: ignore[assignment]
                if slots is None:
                    slots = slots_of[pe] = job_order.job_slot_request(pe, pes)
            # (complexes, slots, resource contribution, nppri) of a pass before
            kept = t.__dict__.get(_KEPT)
            if kept is not None and kept[0] is cx and kept[1] == slots:
                u, p = kept[2], kept[3]
            else:
                requests = t.requests
                u = _contribution(tuple(requests.items()) if requests else (), slots, cx)
                p = job_order.normalized_posix_priority(t.priority)
                object.__setattr__(t, _KEPT, (cx, slots, u, p))
            if w_wait:  # w_wait * max(0.0, waited), without the call
                waited = now - t.submission_time
                u += w_wait * (waited if waited > 0.0 else 0.0)
            if w_dead and t.deadline:
                u += w_dead / max(t.deadline - now, 1.0)
            last_job = job_id
            jobs.append(job_id)
        elif t.task_id < last_task:
            return None
        last_task = t.task_id
        tasks.append(t)
        urgs.append(u)
        nps.append(p)
    return tasks, urgs, nps, jobs


def _swept(snap: Snapshot) -> tuple[list[PendingTask], list[float], list[float], list[int]]:
    """:func:`_sweep` of ``snap.pending``, put in job and task number order first if it is not."""
    swept = _sweep(snap.pending, snap)
    if swept is None:
        swept = _sweep(sorted(snap.pending, key=_JOB_TASK), snap)
        assert swept is not None
    return swept


#: a pending task's place in the job and task number order
_JOB_TASK = operator.attrgetter("job_id", "task_id")


def _keys(snap: Snapshot, tasks: list[PendingTask], urgs: list[float], nps: list[float],
          jobs: list[int]) -> list[float]:
    """The sge_priority(5) ``prio`` of each task's job (:func:`_sweep`'s
    lists), the urgency normalized over the pending jobs and ``snap.running``."""
    if not tasks:
        return []
    cx, pes, weights, now = snap.complexes, snap.pes, snap.weights, snap.now
    w_wait, w_dead = weights.waiting_time, weights.deadline
    low, high = min(urgs), max(urgs)
    # the running jobs count for the urgency range only; a running job's
    # requests are its own (its h_rt): their contribution is remembered across passes
    pending_jobs: set[int] | None = None
    slots_of: dict[object, int] = {}
    for f in snap.running:
        if pending_jobs is None:
            pending_jobs = set(jobs)
        if f.job_id in pending_jobs:
            continue
        _job_id, _posix, submitted, until, deadline, running_requests, pe = f
        slots = slots_of.get(pe)
        if slots is None:
            slots = slots_of[pe] = job_order.job_slot_request(pe, pes)
        u = _contribution(running_requests, slots, cx)
        if w_wait:
            u += w_wait * max(0.0, (now if until is None else until) - submitted)
        if w_dead and deadline:
            u += w_dead / max(deadline - now, 1.0)
        if u < low:
            low = u
        if u > high:
            high = u
    wp, wu, wt = weights.priority, weights.urgency, weights.ticket
    span = high - low
    nt, default = ntckts(snap)
    if span < job_order.EPSILON:
        if not nt:
            return [wu * 0.5 + wp * p + wt * default for p in nps]
        return [wu * 0.5 + wp * p + wt * nt.get(t.job_id, default) for t, p in zip(tasks, nps, strict=True)]
    if not nt:
        return [wu * ((u - low) / span) + wp * p + wt * default for u, p in zip(urgs, nps, strict=True)]
    return [wu * ((u - low) / span) + wp * p + wt * nt.get(t.job_id, default)
            for t, u, p in zip(tasks, urgs, nps, strict=True)]


def priorities(snap: Snapshot) -> dict[int, float]:
    """job id -> sge_priority(5) ``prio`` of every pending job of ``snap``
    that has a task not held, normalized over them and ``snap.running``."""
    tasks, urgs, nps, jobs = _swept(snap)
    return dict(zip((t.job_id for t in tasks), _keys(snap, tasks, urgs, nps, jobs), strict=True))


def dispatch_order(snap: Snapshot) -> list[PendingTask]:
    """The tasks of ``snap.pending`` that are not held, in the order the
    pass takes them (job_order.dispatch_order: sgeee_sort_jobs): by
    decreasing priority, then job number, then task number -- the tasks in
    job and task number order (:func:`_swept`), then a stable sort by the
    priority alone, with no key tuple per task."""
    tasks, urgs, nps, jobs = _swept(snap)
    if len(jobs) <= 1:  # one job's tasks: no priority orders them
        return tasks
    keys = _keys(snap, tasks, urgs, nps, jobs)
    # sorted() keeps the order of equal keys, reversed or not
    return [tasks[i] for i in sorted(range(len(tasks)), key=keys.__getitem__, reverse=True)]
