"""Advance reservations in the scheduler (qrsub(1), qsub(1) ``-ar``).

Two pure decisions, both made by the pass of :mod:`.dispatch` on a snapshot
shaped for them:

* :func:`grant` -- qrsub: may the reservation have its slots for its
  window?  The queue instances are offered as they will be then: minus the
  slots (and consumables) of the reservations already granted whose window
  overlaps, minus the running jobs when the window starts now (a running
  job without ``h_rt`` is not held against a reservation that starts later:
  8.1.9 granted such a one beside the peer); every queue instance not
  orphaned is a candidate, whatever its state (qrsub(1); 8.1.9 granted one
  on a queue instance in load alarm); the pass places one task with
  the reservation's ``-l``, ``-q`` and ``-pe``, outside the resource quota
  sets.  Its placement is the grant.

* :func:`schedule_around` -- a pass with reservations: first the jobs of each
  running reservation, each in its granted queue instances alone, with its
  slots, outside the resource quota sets (sge_resource_quota(5): "jobs
  with an advance reservation are not subject to resource quotas"), none
  while the reservation is in state E and asked for hard error handling
  (qrsub ``-he y``; with ``-he n`` they run where they can); then
  the other jobs, where every reservation whose window meets the job's
  (now to now + ``h_rt``, or sched_conf(5) ``default_duration``) holds its
  slots and consumables.  The other jobs are placed in groups that meet the
  same reservations, the group that meets the most first, each group seeing
  what the groups before it booked (slots, consumables, PE slots; the
  resource quota usage of a group is seen by the next pass).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from minisge.scheduler.booking import debit
from minisge.scheduler.matching import request_text
from minisge.scheduler.queue_filter import ALL_DROPPED, full_message
from minisge.scheduler.snapshot import (
    Dispatch,
    HostInfo,
    PendingTask,
    PeRequest,
    Plan,
    QInstance,
    Reservation,
    Snapshot,
)

Schedule = Callable[[Snapshot], Plan]


def not_reserved_message(qi: str, ar_id: int) -> str:
    """sge_schedd_text: a queue instance the job's reservation does not hold (msg 47146)."""
    return f'cannot run in queue instance "{qi}" because it was not reserved by advance reservation {ar_id}'


def held_message(snap: Snapshot, task: PendingTask, qi: str, free: int) -> str:
    """A queue instance whose free slots a reservation holds, in 8.1.9's words
    (sge_select_queue.c with MSG_SCHEDD_DUETORR), as qstat -j showed it beside
    the peer: ``(-l NONE) cannot run in queue "all.q@vm" because it offers only
    qc:slots=0.000000 due to a reservation``."""
    return (f'(-l {request_text(snap.complexes, task.requests) or "NONE"}) cannot run in queue "{qi}" because it '
            f"offers only qc:slots={free:.6f} due to a reservation")


def not_started_message(qi: str) -> str:
    """The queue instances of a reservation whose start time is still to come
    offer no slot yet to its jobs."""
    return f'(-l NONE) cannot run in queue "{qi}" because it offers only qc:slots=0.000000'


def _held(reservations: Iterable[Reservation], cx_levels: Callable[[QInstance], Sequence[dict[str, float]]],
          snap: Snapshot) -> None:
    """Debit the consumables the reservations hold (per slot, as a job of
    their ``-l`` would) into the levels of their queue instances."""
    by_name = {qi.name: qi for qi in snap.qinstances}
    for r in reservations:
        for i, (name, n) in enumerate(r.granted):
            qi = by_name.get(name)
            if qi is not None and r.requests:
                debit(snap.complexes, r.requests, n, i == 0, cx_levels(qi))


def with_instances_taken(hosts: Mapping[str, HostInfo], placed: Iterable[Dispatch]) -> dict[str, HostInfo]:
    """``hosts`` with the instances of resource maps (sge_rsmap(5)) that the
    dispatches of an earlier part of the pass were granted taken too."""
    taken: dict[str, dict[str, list[str]]] = {}
    for d in placed:
        for (_cqueue, host, _n), maps in zip(d.granted, d.resource_maps, strict=False):
            for name, ids in maps.items():
                taken.setdefault(host, {}).setdefault(name, []).extend(ids)
    out = dict(hosts)
    for h, maps in taken.items():
        if h in out:
            used = {n: tuple(ids) for n, ids in out[h].rsmap_used.items()}
            for n, ids in maps.items():
                used[n] = used.get(n, ()) + tuple(ids)
            out[h] = dataclasses.replace(out[h], rsmap_used=used)
    return out


def shaped(snap: Snapshot, holding: Sequence[Reservation], pending: Sequence[PendingTask],
           booked: Sequence[tuple[PendingTask, Dispatch]] = (), running: bool = True,
           granted: Sequence[Dispatch] = ()) -> Snapshot:
    """``snap`` as the jobs outside the reservations see it: each instance's
    used slots are its running jobs' (``running``) outside the reservations,
    what ``booked`` placed there, and the slots ``holding`` reserves; the
    resource map instances ``granted`` earlier in the pass are taken."""
    in_ar: dict[str, int] = {}
    for r in snap.reservations:
        for name, n in r.used.items():
            in_ar[name] = in_ar.get(name, 0) + n
    held: dict[str, int] = {}
    for r in holding:
        for name, n in r.granted:
            held[name] = held.get(name, 0) + n
    placed: dict[str, int] = {}
    pe_placed: dict[str, int] = {}
    for _task, d in booked:
        for cqueue, host, n in d.granted:
            placed[f"{cqueue}@{host}"] = placed.get(f"{cqueue}@{host}", 0) + n
        if d.pe:
            pe_placed[d.pe] = pe_placed.get(d.pe, 0) + sum(n for _c, _h, n in d.granted)
    qi_consumed = {qi.name: dict(qi.consumed) if running else {} for qi in snap.qinstances}
    host_consumed = {h: dict(info.consumed) if running else {} for h, info in snap.hosts.items()}
    global_consumed = dict(snap.global_consumed) if running else {}

    def levels(qi: QInstance) -> Sequence[dict[str, float]]:
        return (qi_consumed[qi.name], host_consumed.setdefault(qi.host, {}), global_consumed)

    _held(holding, levels, snap)
    by_name = {qi.name: qi for qi in snap.qinstances}
    for task, d in booked:
        for i, (cqueue, host, n) in enumerate(d.granted):
            qi = by_name.get(f"{cqueue}@{host}")
            if qi is not None:
                debit(snap.complexes, task.requests, n, i == 0, levels(qi))
    qis = []
    for qi in snap.qinstances:
        base = max(0, qi.used - in_ar.get(qi.name, 0)) if running else 0
        qis.append(dataclasses.replace(qi, used=base + held.get(qi.name, 0) + placed.get(qi.name, 0),
                                       consumed=qi_consumed[qi.name]))
    hosts = with_instances_taken(
        {h: dataclasses.replace(info, consumed=host_consumed.get(h, {}),
                                rsmap_used=info.rsmap_used if running else {}) for h, info in snap.hosts.items()},
        granted)
    pes = {n: dataclasses.replace(pe, used=(pe.used if running else 0) + pe_placed.get(n, 0))
           for n, pe in snap.pes.items()}
    return dataclasses.replace(snap, qinstances=tuple(qis), hosts=hosts, pes=pes, global_consumed=global_consumed,
                               pending=tuple(pending), reservations=())


def in_error_message(ar_id: int) -> str:
    """A job of a reservation in state E that asked for hard error handling (qrsub -he y)."""
    return f"cannot run because requested advance reservation {ar_id} is in error state"


def inside(snap: Snapshot, r: Reservation, pending: Sequence[PendingTask],
           placed: Sequence[Dispatch] = ()) -> Snapshot:
    """``snap`` as the jobs of the running reservation ``r`` see it: its
    granted instances alone, with its slots, outside the quota sets; the
    resource map instances ``placed`` earlier in the pass are taken."""
    granted = dict(r.granted)
    qis = tuple(dataclasses.replace(qi, slots=granted[qi.name], used=r.used.get(qi.name, 0))
                for qi in snap.qinstances if qi.name in granted)
    return dataclasses.replace(snap, qinstances=qis, hosts=with_instances_taken(snap.hosts, placed),
                               pending=tuple(pending), quotas=None, reservations=())


def schedule_around(snap: Snapshot, run: Schedule) -> Plan:
    """A pass of ``run`` (:func:`.dispatch.schedule`) that honours the
    snapshot's reservations (the module docstring says how)."""
    plan = Plan()
    mine: dict[int, list[PendingTask]] = {}
    others: list[PendingTask] = []
    for t in snap.pending:
        if t.ar:
            mine.setdefault(t.ar, []).append(t)
        else:
            others.append(t)
    by_id = {r.ar_id: r for r in snap.reservations}
    for ar_id, tasks in mine.items():
        r = by_id.get(ar_id)
        if r is None or not r.start <= snap.now < r.end:
            names = [name for name, _n in r.granted] if r is not None else []
            for t in tasks:
                plan.reasons.setdefault(t.job_id, [not_started_message(n) for n in names])
            continue
        if r.in_error:  # qrsub -he y: not while a reserved queue instance is in error (8.1.9)
            for t in tasks:
                plan.reasons.setdefault(t.job_id, [in_error_message(ar_id)])
            continue
        _merge(plan, run(inside(snap, r, tasks, plan.dispatches)), messages=False)
    groups: dict[frozenset[int], list[PendingTask]] = {}
    for t in others:
        key = frozenset(r.ar_id for r in snap.reservations if r.overlaps(snap.now, snap.now + t.duration))
        groups.setdefault(key, []).append(t)
    booked: list[tuple[PendingTask, Dispatch]] = []
    first = True
    for key in sorted(groups, key=lambda k: (-len(k), sorted(k))):
        tasks = groups[key]
        sub = shaped(snap, [by_id[i] for i in sorted(key)], tasks, booked, granted=plan.dispatches)
        part = run(sub)
        if key:
            _held_reasons(snap, shaped(snap, [], tasks, booked), sub, tasks, part)
        _merge(plan, part, messages=first)
        first = False
        by_task = {(t.job_id, t.task_id): t for t in tasks}
        booked += [(by_task[(d.job_id, d.task_id)], d) for d in part.dispatches]
    if first:  # no job outside a reservation: the queue instances as they are, for the messages
        plan.global_messages = run(shaped(snap, list(snap.reservations), ())).global_messages
    return plan


def _held_reasons(snap: Snapshot, free: Snapshot, held: Snapshot, tasks: Sequence[PendingTask], part: Plan) -> None:
    """In 8.1.9 a reservation's slots are not used slots: an instance full only
    because of them is not dropped for every job (no "dropped because it is
    full"); each job that did not start is told it offers no slot "due to a
    reservation" instead."""
    by_hold = [(q.name, max(0, q.slots - q.used)) for q0, q in zip(free.qinstances, held.qinstances, strict=True)
               if q0.used < q0.slots <= q.used]
    if not by_hold:
        return
    gone = {full_message(name) for name, _n in by_hold} | {ALL_DROPPED}
    part.global_messages = [m for m in part.global_messages if m not in gone]
    started = {d.job_id for d in part.dispatches}
    for t in tasks:
        if t.job_id not in started:
            reasons = [held_message(snap, t, name, n) for name, n in by_hold]
            rest = [r for r in part.reasons.get(t.job_id, []) if r not in reasons and r not in gone]
            part.reasons[t.job_id] = reasons + rest


def _merge(plan: Plan, part: Plan, messages: bool) -> None:
    plan.reserved_after += [len(plan.dispatches) + n for n in part.reserved_after]
    plan.reservations += part.reservations
    plan.dispatches += part.dispatches
    for job_id, reasons in part.reasons.items():
        plan.reasons.setdefault(job_id, reasons)
    if messages:
        plan.global_messages = part.global_messages


@dataclasses.dataclass(frozen=True)
class ReservationRequest:
    """What qrsub asks for: the window and the resources, for its owner."""

    owner: str
    start: float
    end: float
    requests: Mapping[str, str] = dataclasses.field(default_factory=dict)  # -l
    queues: tuple[str, ...] = ()  # -q
    pe: PeRequest | None = None  # -pe
    group: str = ""
    master_queues: tuple[str, ...] = ()  # -masterq


def grant(snap: Snapshot, request: ReservationRequest, run: Schedule) -> Dispatch | None:
    """qrsub: the queue instances (and PE) ``request`` is granted for its
    window, found by the pass ``run`` on the cell as it will be then, or None
    (``advance_reservation: no suitable queues``)."""
    holding = [r for r in snap.reservations if r.overlaps(request.start, request.end)]
    task = PendingTask(job_id=0, task_id=1, owner=request.owner, requests=dict(request.requests),
                       queues=request.queues, pe=request.pe, group=request.group,
                       master_queues=request.master_queues, duration=request.end - request.start)
    sub = shaped(snap, holding, [task], running=request.start <= snap.now)
    # qrsub(1): "all queues that are not in orphaned state are considered as suited"
    qis = tuple(dataclasses.replace(qi, states="o" if "o" in qi.states else "", load_alarm="", suspend_alarm="")
                for qi in sub.qinstances)
    sub = dataclasses.replace(sub, qinstances=qis, quotas=None, now=max(snap.now, request.start))
    plan = run(sub)
    return plan.dispatches[0] if plan.dispatches else None


def duration_of(h_rt: float | None, default_duration: float) -> float:
    """How long a job may hold its slots: its ``h_rt``, else sched_conf(5)
    ``default_duration`` (INFINITY: for ever)."""
    return h_rt if h_rt else (default_duration if default_duration > 0 else math.inf)
