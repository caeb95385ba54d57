"""One scheduling pass: :func:`schedule`, a pure function from a snapshot to a plan.

Named for Grid Engine's ``dispatch_jobs`` (sge_sched_thread.c), the pass
that takes the pending jobs in order and dispatches what fits.  No I/O and
no clock: the qmaster calls it on events; a teacher or a test calls it on
plain data.  The stages, each in its module:

0. leave out the jobs whose ``-a`` execution time is still to come
   (:func:`not_before_execution_time`);
1. drop the queue instances no job may use and say so in the global
   messages (:mod:`.queue_filter`);
2. order the pending tasks by sge_priority(5) (:mod:`.dispatch_order`,
   :mod:`.job_order`);
3. for each task: skip it if its job category (:mod:`.category_cache`) was
   already found unplaceable in this pass, or if the global host's access
   lists (host_conf(5)) shut its owner or project out; else find the queue instances it
   fits (:mod:`.queue_match`, :mod:`.matching`, :mod:`.quota`), take the
   best in queue sort order (:mod:`.queue_sort`) -- a parallel job by its
   PE's allocation rule (:mod:`.pe_allocation`) -- and book it
   (:mod:`.booking`) so that later tasks see it taken; a queue instance
   that fills up joins the global messages;
4. with sched_conf(5) ``max_reservation``: a ``-R y`` task that did not
   fit is booked at the earliest time it will (:func:`reserve`), and every
   later task is placed on the book as the reservations leave it during
   its run (backfilling: :mod:`.reservation`).

A job category found unplaceable keeps its reasons for every job of it.
A queue instance without a free slot takes no task, so every task is first
tried on the instances with one (the same choice, found faster); only a
task that fits nowhere is tried on all of them, for Grid Engine's reason
per instance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from minisge.scheduler import advance_reservation, job_order
from minisge.scheduler.assignment import Assignment, Discard, by_cqueue
from minisge.scheduler.booking import Book
from minisge.scheduler.category_cache import (
    Category,
    CategoryCache,
    asked_names,
    job_categories,
    queue_shape,
    resources_are_static,
)
from minisge.scheduler.dispatch_order import dispatch_figures, dispatch_order
from minisge.scheduler.pe_allocation import place_pe
from minisge.scheduler.queue_filter import dropped_at_start, full_message
from minisge.scheduler.queue_match import fits_within_quotas, host_access
from minisge.scheduler.queue_sort import ranked as queue_sorted
from minisge.scheduler.queue_sort import soft_violations
from minisge.scheduler.reservation import Utilization, amounts, book_dispatch, held_reasons, task_duration
from minisge.scheduler.snapshot import Dispatch, PendingTask, Plan, QInstance, ScheduleEntry, Snapshot

#: the reason of a job whose qsub -a time is still to come (sge_schedd_text.h)
EXECUTION_TIME_NOT_REACHED = "execution time not reached"

#: a placement: the queue instances to try, in queue sort order, and where its reasons go
Place = Callable[[Assignment, Book, Sequence[QInstance], list[str]], Dispatch | None]


def schedule(snap: Snapshot, *, caches: bool = True) -> Plan:
    """One scheduling pass: the pending tasks in sge_priority(5) order, each
    placed on the best queue instances that fit, booked so later tasks see
    them taken; held tasks are skipped.  ``caches=False`` checks everything
    afresh for every task (the reference the tests compare the fast path with).
    Advance reservations (qrsub(1)) are honoured by :mod:`.advance_reservation`,
    which runs this pass on the snapshot shaped for each group of jobs."""
    if snap.reservations:
        return advance_reservation.schedule_around(snap, lambda sub: schedule(sub, caches=caches))
    messages, dropped = dropped_at_start(snap.qinstances)
    plan = Plan(global_messages=messages)
    snap = not_before_execution_time(snap, plan)
    book = Book(snap)
    if caches:  # the same order, without a Figures object per job
        order = dispatch_order(snap)
    else:
        order = job_order.dispatch_order([t for t in snap.pending if not t.held], dispatch_figures(snap))
    ranked = queue_sorted(snap, snap.qinstances)
    by_name = {qi.name: qi for qi in snap.qinstances}
    cqueues = by_cqueue(snap.qinstances)
    unplaceable: dict[Category, list[str]] = {}
    category_caches: dict[Category, CategoryCache] = {}
    access: dict[tuple[str, str, str | None], dict[str, str | None]] = {}  # (owner, group, project) -> verdicts
    shapes: dict[tuple[object, ...], dict[str, tuple[str | None, str | None]]] = {}  # queue shape -> verdicts
    g = snap.global_host
    global_host_restricts = bool(g.user_lists or g.xuser_lists or g.projects or g.xprojects)
    # sched_conf(5) max_reservation: the utilization diagrams, only in a pass that may reserve
    util = Utilization(snap) if snap.max_reservation > 0 and any(t.reserve for t in order) else None
    # the instances with a free slot (in queue sort order), as the pass books them
    free = [qi for qi in ranked if qi.slots > book.qi_used[qi.name]]
    known_unplaceable = unplaceable.get
    for task, cat in zip(order, job_categories(order), strict=True):
        why_not = known_unplaceable(cat)
        if why_not is not None:
            plan.reasons.setdefault(task.job_id, why_not)
            if util is not None:
                reserve(snap, util, task, plan, cqueues)
            continue
        why = host_access(snap, snap.global_host, task) if global_host_restricts else None
        if why:  # the global host's access lists shut the job out of every host
            unplaceable[cat] = [why]
            plan.reasons.setdefault(task.job_id, unplaceable[cat])
            continue
        place: Place = place_pe if task.pe else place_single
        cache = None
        if caches:  # the category's booking-independent verdicts
            cache = category_caches.get(cat)
            if cache is None:
                cache = category_caches[cat] = CategoryCache(
                    resources_are_static(snap.complexes, task.requests, snap.complexes.exclusive),
                    access.setdefault((task.owner, task.group, task.project), {}),
                    asked_names(snap.complexes, task.requests), shapes.setdefault(queue_shape(task), {}))
        a = Assignment(snap, task, cache, cqueues)
        # backfilling: a job that would run into a reservation sees what it holds then
        b = book if util is None or not util.reserved else util.backfill_book(
            book, snap.now, snap.now + task_duration(snap, task))
        placed = place(a, b, free if b is book else [qi for qi in ranked if qi.slots > b.qi_used[qi.name]],
                       Discard() if caches else [])
        reasons: list[str] = []
        if placed is None and snap.explain:  # again on every instance, for the reasons
            placed = place(a, b, ranked, reasons)
        if placed is None:
            if b is not book:
                reasons = held_reasons(snap, task, book, b, reasons)
            unplaceable[cat] = reasons = list(dict.fromkeys(reasons))  # each reason once
            plan.reasons.setdefault(task.job_id, reasons)
            if util is not None:
                reserve(snap, util, task, plan, cqueues)
            continue
        if b is not book:
            book_dispatch(snap, book, task, placed)
        if util is not None:
            util.add(snap.now, snap.now + task_duration(snap, task),
                     amounts(snap, placed.granted, task.requests, placed.pe))
        plan.dispatches.append(placed)
        book.grant_resource_maps(snap, task.requests, placed)
        book.debit_quotas(task, placed)
        filled = False
        for cqueue, host, _n in placed.granted:  # sge_split_queue_slots_free after a dispatch
            name = f"{cqueue}@{host}"
            if book.qi_used[name] >= by_name[name].slots:
                filled = True
                if name not in dropped:
                    dropped.add(name)
                    plan.global_messages.append(full_message(name))
        if filled or b is not book:
            free = [qi for qi in free if qi.slots > book.qi_used[qi.name]]
    return plan


def reserve(snap: Snapshot, util: Utilization, task: PendingTask, plan: Plan,
            cqueues: Mapping[str, Sequence[QInstance]]) -> ScheduleEntry | None:
    """sched_conf(5) max_reservation, qsub(1) -R y: a job that cannot start
    now and asked for a reservation gets one, while the pass has made fewer
    than ``max_reservation`` (the jobs in dispatch order: the highest
    priority first; one per job): at the earliest time something booked
    ends after which the pass's placement finds it room for its whole
    duration, on the cell as it will be then.  It is booked into ``util``
    and kept in the plan (for qstat -j and the schedule file)."""
    if not task.reserve or len(plan.reservations) >= snap.max_reservation or \
            any(r.job_id == task.job_id for r in plan.reservations):
        return None
    duration = task_duration(snap, task)
    place: Place = place_pe if task.pe else place_single
    a = Assignment(snap, task, None, cqueues)
    ranked = queue_sorted(snap, snap.qinstances)
    for start in util.ends():
        placed = place(a, util.future_book(start, start + duration), ranked, Discard())
        if placed is not None:
            entry = ScheduleEntry(task.job_id, task.task_id, "RESERVING", start, duration,
                                  tuple(placed.granted), task.requests, placed.pe)
            util.reserve(entry)
            plan.reservations.append(entry)
            plan.reserved_after.append(len(plan.dispatches))
            return entry
    return None


def not_before_execution_time(snap: Snapshot, plan: Plan) -> Snapshot:
    """qsub -a: a job whose execution time is later than the pass's ``now``
    is not considered (``execution time not reached``, its reason in ``plan``)."""
    waiting = {t.job_id for t in snap.pending if t.execution_time > snap.now}
    if not waiting:
        return snap
    for job_id in waiting:
        plan.reasons[job_id] = [EXECUTION_TIME_NOT_REACHED]
    return dataclasses.replace(snap, pending=tuple(t for t in snap.pending if t.job_id not in waiting))


def place_single(a: Assignment, book: Book, ranked: Sequence[QInstance], reasons: list[str]) -> Dispatch | None:
    """The first queue instance (in queue sort order) that fits; with soft
    requests the one that fits and meets the most of them, as Grid Engine
    goes on looking until it finds one without soft violations."""
    task = a.task
    soft = bool(task.soft_requests or task.soft_queues)
    best: tuple[int, QInstance] | None = None
    for qi in ranked:
        why = fits_within_quotas(a, book, qi, 1)
        if why is not None:
            reasons.append(why)
            continue
        violations = soft_violations(a, book, qi) if soft else 0
        if best is None or violations < best[0]:
            best = (violations, qi)
        if violations == 0:
            break
    if best is None:
        return None
    qi = best[1]
    book.book(a.snap.complexes, qi, task.requests, 1, True)
    return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, 1)])
