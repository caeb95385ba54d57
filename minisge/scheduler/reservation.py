"""Resource reservation and backfilling (sched_conf(5) ``max_reservation``, qsub(1) ``-R y``).

Named for Grid Engine's resource utilization diagrams
(sge_resource_utilization.c): for every resource -- the slots and
consumables of a queue instance (``Q``), the consumables of a host (``H``)
and of the cell (``G``), the slots of a parallel environment (``P``) -- the
amounts booked over time.  A :class:`Utilization` holds what the running
tasks hold until their start + ``h_rt`` (or ``default_duration``) +
``DURATION_OFFSET``, what the pass starts (from ``now``) and what it
reserves.  All of it on the pass's ``now``: no clock is read.

* :meth:`Utilization.earliest` -- a ``-R y`` job that cannot start now: the
  earliest time (now, or the end of something booked) at which the pass's
  own placement finds room for it for its whole duration, on a
  :class:`.booking.Book` holding each resource's peak over that window.
* :meth:`Utilization.backfill_book` -- a later job placed now: the pass's
  book plus, per resource, what the reservations will hold during the
  job's window beyond what is booked now.  A job that ends before a
  reservation starts, or touches none of its resources, sees the book as it
  is: it backfills; one that would delay a reservation does not fit.
* :func:`schedule_lines` -- the schedule file (``params MONITOR=1``), one
  line per resource of each entry, ``job:task:STATE:start:duration:level:
  object:resource:amount``, as 8.1.9 wrote it beside the peer.

Where it differs from 8.1.9: the resource quota sets are not planned over
time (a reservation is searched outside them; a job placed now meets them
as it always does); advance reservations (:mod:`.advance_reservation`)
are held for the whole pass of the jobs whose window meets them, not as
diagrams of their own; a running task past its expected end is taken to
end a second after ``now``; one task per array job is reserved for;
``qstat -j`` saying when and where a job is reserved is minisge's own
(8.1.9 says it only in the schedule file).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from minisge.scheduler.advance_reservation import held_message
from minisge.scheduler.booking import Book, debit
from minisge.scheduler.matching import EXCL_JOBS
from minisge.scheduler.queue_filter import full_message
from minisge.scheduler.snapshot import Dispatch, PendingTask, Plan, QInstance, ScheduleEntry, Snapshot

#: a resource of the diagrams: (level Q|H|G|P, object name, resource name)
Key = tuple[str, str, str]

#: sched_conf(5) params DURATION_OFFSET's default (seconds)
DEFAULT_DURATION_OFFSET = 60.0


def amounts(snap: Snapshot, granted: Iterable[tuple[str, str, int]], requests: Mapping[str, str],
            pe: str | None) -> dict[Key, float]:
    """What a task of ``requests`` granted ``granted`` books per resource:
    the slots of each queue instance (and of its PE), its consumables on the
    queue, host and global levels as :func:`.booking.debit` books them."""
    out: dict[Key, float] = {}
    total = 0
    for i, (cqueue, host, n) in enumerate(granted):
        name = f"{cqueue}@{host}"
        total += n
        out[("Q", name, "slots")] = out.get(("Q", name, "slots"), 0.0) + n
        q: dict[str, float] = {}
        h: dict[str, float] = {}
        g: dict[str, float] = {}
        debit(snap.complexes, requests, n, i == 0, (q, h, g))
        for level, obj, values in (("Q", name, q), ("H", host, h), ("G", "global", g)):
            for res, v in values.items():
                out[(level, obj, res)] = out.get((level, obj, res), 0.0) + v
    if pe:
        out[("P", pe, "slots")] = float(total)
    return out


def task_duration(snap: Snapshot, task: PendingTask) -> float:
    """How long the scheduler books a job for: its ``h_rt`` (or
    ``default_duration``) plus ``DURATION_OFFSET`` (sched_conf(5))."""
    return task.duration + snap.duration_offset


class Utilization:
    """The resource utilization diagrams of one pass (the module docstring)."""

    __slots__ = ("snap", "bookings", "running", "reserved")

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.bookings: dict[Key, list[tuple[float, float, float]]] = {}
        self.running: dict[Key, float] = {}  # what the running tasks hold now (in the snapshot's used amounts)
        self.reserved: list[tuple[ScheduleEntry, frozenset[Key]]] = []  # the pass's reservations, their resources
        for e in snap.running_tasks:
            # a task past its expected end is expected to end at any moment
            end = max(e.end, snap.now + 1.0)
            for key, v in amounts(snap, e.granted, e.requests, e.pe).items():
                self.running[key] = self.running.get(key, 0.0) + v
                self.bookings.setdefault(key, []).append((e.start, end, v))

    def add(self, start: float, end: float, booked: Mapping[Key, float]) -> None:
        """Book ``booked`` from ``start`` to ``end``."""
        for key, v in booked.items():
            self.bookings.setdefault(key, []).append((start, end, v))

    def reserve(self, entry: ScheduleEntry) -> None:
        """Book a reservation (``RESERVING``) from its start for its duration."""
        booked = amounts(self.snap, entry.granted, entry.requests, entry.pe)
        self.add(entry.start, entry.end, booked)
        self.reserved.append((entry, frozenset(booked)))

    def level(self, key: Key, at: float) -> float:
        """The amount of ``key`` booked at time ``at``."""
        return sum(v for s, e, v in self.bookings.get(key, ()) if s <= at < e)

    def peak(self, key: Key, start: float, end: float) -> float:
        """The most of ``key`` booked at any time of ``[start, end)``."""
        bs = self.bookings.get(key)
        if not bs:
            return 0.0
        points = [start] + [s for s, _e, _v in bs if start < s < end]
        return max(sum(v for s, e, v in bs if s <= p < e) for p in points)

    def ends(self) -> list[float]:
        """The times something booked ends after ``now``, in order: when a
        reservation may start."""
        now = self.snap.now
        return sorted({e for bs in self.bookings.values() for _s, e, _v in bs if now < e < math.inf})

    def future_book(self, start: float, end: float) -> Book:
        """A book of the cell during ``[start, end)``: each resource at its
        peak there; what the snapshot holds without a known end (a running
        task not in ``running_tasks``) held throughout.  Outside the
        resource quota sets (their usage is known only now)."""
        book = Book(self.snap)
        book.quota_ledger = None
        for key, bs in self.bookings.items():
            if bs:
                held = max(0.0, _get(book, key) - self.running.get(key, 0.0))  # without a known end
                _set(book, key, held + self.peak(key, start, end))
        return book

    def backfill_book(self, book: Book, start: float, end: float) -> Book:
        """``book`` (the pass's, now) as a job running ``[start, end)`` must
        see it: a trial of it plus what the reservations add during the
        window; ``book`` itself if they add nothing."""
        extra: dict[Key, float] = {}
        for r, keys in self.reserved:
            if r.start < end and start < r.end:
                for key in keys:
                    if key not in extra:
                        more = self.peak(key, start, end) - self.level(key, start)
                        if more > 0:
                            extra[key] = more
        if not extra:
            return book
        trial = book.trial()
        for key, more in extra.items():
            _set(trial, key, _get(trial, key) + more)
        return trial


def _get(book: Book, key: Key) -> float:
    level, obj, res = key
    if level == "P":
        return float(book.pe_used.get(obj, 0))
    if level == "G":
        return book.global_consumed.get(res, 0.0)
    if level == "H":
        return book.host_consumed.setdefault(obj, {}).get(res, 0.0)
    if res == "slots":
        return float(book.qi_used.get(obj, 0))
    return book.qi_consumed.setdefault(obj, {}).get(res, 0.0)


def _set(book: Book, key: Key, value: float) -> None:
    level, obj, res = key
    if level == "P":
        book.pe_used[obj] = math.ceil(value)
    elif level == "G":
        book.global_consumed[res] = value
    elif level == "H":
        book.host_consumed[obj][res] = value
    elif res == "slots":
        book.qi_used[obj] = math.ceil(value)
    else:
        book.qi_consumed[obj][res] = value


def held_reasons(snap: Snapshot, task: PendingTask, book: Book, trial: Book, reasons: list[str]) -> list[str]:
    """The reasons of a job that did not fit the :meth:`Utilization.backfill_book`
    ``trial``: a queue instance with a free slot now that the reservations
    hold during the job's run is not full; it "offers only qc:slots=N due
    to a reservation", as 8.1.9 says of the slots a reservation holds."""
    held = {full_message(qi.name): held_message(snap, task, qi.name, max(0, qi.slots - trial.qi_used[qi.name]))
            for qi in snap.qinstances if trial.qi_used[qi.name] != book.qi_used[qi.name]
            and qi.slots > book.qi_used[qi.name]}
    return [held.get(r, r) for r in reasons] if held else reasons


def book_dispatch(snap: Snapshot, book: Book, task: PendingTask, d: Dispatch) -> None:
    """Book ``d`` (placed on another book: a backfill's trial) into ``book``."""
    by_name = {f"{c}@{h}": (c, h) for c, h, _n in d.granted}
    qis = {qi.name: qi for qi in snap.qinstances if qi.name in by_name}
    for i, (cqueue, host, n) in enumerate(d.granted):
        book.book(snap.complexes, qis[f"{cqueue}@{host}"], task.requests, n, i == 0)
    if d.pe:
        book.pe_used[d.pe] = book.pe_used.get(d.pe, 0) + sum(n for _c, _h, n in d.granted)


def pass_entries(snap: Snapshot, plan: Plan) -> list[ScheduleEntry]:
    """What the schedule file lists for a pass: the running tasks, then the
    tasks it starts (``STARTING``, from ``now`` for their duration) and
    the ones it reserves for (``RESERVING``), in the order it decided them."""
    pending = {(t.job_id, t.task_id): t for t in snap.pending}
    decided: list[ScheduleEntry] = []
    reserved = list(zip(plan.reserved_after, plan.reservations, strict=True))
    for i, d in enumerate(plan.dispatches):
        while reserved and reserved[0][0] <= i:
            decided.append(reserved.pop(0)[1])
        t = pending.get((d.job_id, d.task_id))
        requests = t.requests if t is not None else {}
        duration = task_duration(snap, t) if t is not None else math.inf
        decided.append(ScheduleEntry(d.job_id, d.task_id, "STARTING", snap.now, duration,
                                     tuple(d.granted), requests, d.pe))
    decided += [r for _i, r in reserved]
    return [*snap.running_tasks, *decided]


def _number(v: float) -> str:
    return f"{v:.6f}"


def schedule_lines(snap: Snapshot, entries: Iterable[ScheduleEntry]) -> list[str]:
    """The schedule file's lines of one pass (sched_conf(5) ``MONITOR``):
    per entry its PE's slots, the global consumables, each host's, then
    each queue instance's slots and consumables, each where it is in the
    object's complex_values (the order of 8.1.9's ``add_job_utilization``;
    hosts and queues in the order granted, consumables by name);
    ``::::::::`` ends the pass."""
    out = []
    qis = {qi.name: qi for qi in snap.qinstances}
    for e in entries:
        head = f"{e.job_id}:{e.task_id}:{e.state}:{int(e.start)}:{_duration(e.duration)}"
        booked = amounts(snap, e.granted, e.requests, e.pe)
        at = {name: i for i, name in enumerate([*(h for _c, h, _n in e.granted),
                                                  *(f"{c}@{h}" for c, h, _n in e.granted)])}
        order = sorted(booked, key=lambda k: ("PGHQ".index(k[0]), at.get(k[1], 0), k[2] != "slots", k[2]))
        for level, obj, res in order:
            if res.startswith(EXCL_JOBS) or not _configured(snap, qis, level, obj, res):
                continue
            out.append(f"{head}:{level}:{obj}:{res}:{_number(booked[(level, obj, res)])}")
    out.append("::::::::")
    return out


def _configured(snap: Snapshot, qis: Mapping[str, QInstance], level: str, obj: str, res: str) -> bool:
    """Does the object have ``res`` in its complex_values (8.1.9 records a
    consumable only where it is configured; every PE and queue instance has slots)?"""
    if res == "slots" and level in "PQ":
        return True
    if level == "G":
        return res in snap.global_values
    if level == "H":
        host = snap.hosts.get(obj)
        return host is not None and res in host.values
    qi = qis.get(obj)
    return qi is not None and res in qi.complex_value_names


def _duration(d: float) -> str:
    # an unlimited duration (no h_rt, default_duration INFINITY): not seen beside the peer
    return "INFINITY" if math.isinf(d) else str(int(d))
