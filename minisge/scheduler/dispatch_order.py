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

from minisge.scheduler import job_order, tickets
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.snapshot import PendingTask, Snapshot


@functools.lru_cache(maxsize=16384)
def _contribution(requests: tuple[tuple[str, str], ...], slots: int, cx: ComplexIndex) -> float:
    """job_order.resource_contribution's sum, remembered: a pass counts the
    same running jobs' requests as the pass before."""
    return job_order.resource_contribution(requests, slots, cx)[0]


#: the name a pending task keeps its resource contribution under, with the
#: complexes and slot count it is of (no field: not compared, not printed;
#: a snapshot may hand a pass the same task objects as the pass before)
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


def priorities(snap: Snapshot) -> dict[int, float]:
    """job id -> sge_priority(5) ``prio`` of every pending job of ``snap``
    that has a task not held, normalized over them and ``snap.running``."""
    cx, pes, weights, now = snap.complexes, snap.pes, snap.weights, snap.now
    w_wait, w_dead = weights.waiting_time, weights.deadline
    slots_of: dict[object, int] = {}  # -pe request -> job_slot_request
    nppri_of: dict[int, float] = {}
    urg: dict[int, float] = {}
    nppri: dict[int, float] = {}
    urgs: list[float] = []
    for t in snap.pending:
        job_id = t.job_id
        if t.held or job_id in urg:
            continue
        pe = t.pe
        slots = slots_of.get(pe)
        if slots is None:
            slots = slots_of[pe] = job_order.job_slot_request(pe, pes)
        kept = t.__dict__.get(_KEPT)  # (complexes, slots, contribution) of a pass before
        if kept is not None and kept[0] is cx and kept[1] == slots:
            u = kept[2]
        else:
            requests = t.requests
            u = _contribution(tuple(requests.items()) if requests else (), slots, cx)
            object.__setattr__(t, _KEPT, (cx, slots, u))
        if w_wait:
            u += w_wait * max(0.0, now - t.submission_time)
        if w_dead and t.deadline:
            u += w_dead / max(t.deadline - now, 1.0)
        urg[job_id] = u
        urgs.append(u)
        posix = t.priority
        p = nppri_of.get(posix)
        if p is None:
            p = nppri_of[posix] = job_order.normalized_posix_priority(posix)
        nppri[job_id] = p
    if not urg:
        return {}
    # the running jobs count for the urgency range only; a running job's
    # requests are its own (its h_rt): their contribution is remembered across passes
    for f in snap.running:
        if f.job_id in urg:
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
        urgs.append(u)
    low, high = min(urgs), max(urgs)
    wp, wu, wt = weights.priority, weights.urgency, weights.ticket
    span = high - low
    nt, default = ntckts(snap)
    out = {}
    for job_id, u in urg.items():
        nurg = 0.5 if span < job_order.EPSILON else (u - low) / span
        out[job_id] = wu * nurg + wp * nppri[job_id] + wt * nt.get(job_id, default)
    return out


def dispatch_order(snap: Snapshot) -> list[PendingTask]:
    """The tasks of ``snap.pending`` that are not held, in the order the
    pass takes them (job_order.dispatch_order: sgeee_sort_jobs)."""
    tasks = [t for t in snap.pending if not t.held]
    if len({t.job_id for t in tasks}) <= 1:  # the tasks of one job: no priority orders them
        return sorted(tasks, key=lambda t: t.task_id)
    prio = priorities(snap)
    get = prio.get
    return sorted(tasks, key=lambda t: (-get(t.job_id, 0.0), t.job_id, t.task_id))
