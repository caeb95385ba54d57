"""The scheduler: a pure function from a snapshot of the cell to a plan.

No I/O and no clock: :func:`schedule` takes an immutable :class:`Snapshot`
(queue instances with their free slots and values, hosts with load and
consumables, the complex list, parallel environments, pending tasks in
submission order) and returns a :class:`Plan` (the tasks to dispatch and
where, and why the others wait).  The qmaster calls it on events; a teacher
or a test can call it on plain data.

Placement follows Nomad's shape: for each pending task (highest priority
first, then oldest), *feasibility* filters the queue instances, *ranking*
orders the feasible ones (``seq_no`` or load, as ``queue_sort_method``
says), and the chosen slots are booked in the working copy so that later
tasks see them taken.  Jobs with equal requests share one category, so a
category found unplaceable is not tried again in the same pass.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Callable, Mapping


@dataclass(frozen=True)
class QInstance:
    cqueue: str
    host: str
    seq_no: int
    slots: int
    used: int
    qtype: frozenset = frozenset({"BATCH", "INTERACTIVE"})
    pe_list: tuple = ()
    states: str = ""
    values: Mapping[str, str] = field(default_factory=dict)  # complex_values + queue attributes
    consumed: Mapping[str, float] = field(default_factory=dict)  # consumables used in the instance

    @property
    def name(self) -> str:
        return f"{self.cqueue}@{self.host}"


@dataclass(frozen=True)
class HostInfo:
    name: str
    load: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)  # complex_values
    consumed: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PE:
    name: str
    slots: int
    used: int
    allocation_rule: str = "$pe_slots"


@dataclass(frozen=True)
class PendingTask:
    job_id: int
    task_id: int
    owner: str
    priority: int = 0
    requests: Mapping[str, str] = field(default_factory=dict)  # hard -l
    queues: tuple = ()  # hard -q
    pe: tuple | None = None  # (name pattern, [(lo, hi), ...])
    held: bool = False


@dataclass(frozen=True)
class Snapshot:
    qinstances: tuple
    hosts: Mapping[str, HostInfo]
    pending: tuple  # PendingTask, in submission order
    complexes: object  # has .get(name) -> attr (type, relop, consumable, default) and compare()
    pes: Mapping[str, PE] = field(default_factory=dict)
    global_values: Mapping[str, str] = field(default_factory=dict)
    global_consumed: Mapping[str, float] = field(default_factory=dict)
    queue_sort_method: str = "load"
    load_of: Callable[[HostInfo], float] | None = None


@dataclass
class Dispatch:
    job_id: int
    task_id: int
    granted: list  # [(cqueue, host, slots)]
    pe: str | None = None


@dataclass
class Plan:
    dispatches: list = field(default_factory=list)
    reasons: dict = field(default_factory=dict)  # job_id -> [text]


_UNAVAILABLE_STATES = set("aAdDEuSsCco")


def _queue_matches(patterns: tuple, qi: QInstance) -> bool:
    if not patterns:
        return True
    for p in patterns:
        if "@" in p:
            qp, hp = p.split("@", 1)
            if fnmatch.fnmatchcase(qi.cqueue, qp or "*") and fnmatch.fnmatchcase(qi.host, hp or "*"):
                return True
        elif fnmatch.fnmatchcase(qi.cqueue, p):
            return True
    return False


class _Book:
    """The working copy of what is used, updated as the pass places tasks."""

    def __init__(self, snap: Snapshot):
        self.qi_used = {qi.name: qi.used for qi in snap.qinstances}
        self.qi_consumed = {qi.name: dict(qi.consumed) for qi in snap.qinstances}
        self.host_consumed = {h: dict(info.consumed) for h, info in snap.hosts.items()}
        self.global_consumed = dict(snap.global_consumed)
        self.pe_used = {n: pe.used for n, pe in snap.pes.items()}


def _numeric(complexes, name: str, text: str) -> float:
    return complexes.numeric(name, text)


def _consumable_fits(snap: Snapshot, book: _Book, qi: QInstance, name: str, amount: float) -> str | None:
    """None if ``amount`` of consumable ``name`` is free at every level that defines it."""
    levels = (
        (snap.global_values, book.global_consumed, "global"),
        (snap.hosts[qi.host].values if qi.host in snap.hosts else {}, book.host_consumed.setdefault(qi.host, {}), f"host {qi.host}"),
        (qi.values, book.qi_consumed[qi.name], f"queue {qi.name}"),
    )
    defined = False
    for values, consumed, where in levels:
        if name in values:
            defined = True
            total = _numeric(snap.complexes, name, values[name])
            if total - consumed.get(name, 0.0) < amount:
                return f"cannot run in {where} because it offers only {name}={total - consumed.get(name, 0.0):g}"
    if not defined:
        return f"cannot run in queue {qi.name} because it offers no {name}"
    return None


def _fixed_fits(snap: Snapshot, qi: QInstance, name: str, requested: str) -> str | None:
    """A non-consumable request against queue, host and global values."""
    cx = snap.complexes
    host = snap.hosts.get(qi.host)
    for values in (qi.values, host.values if host else {}, host.load if host else {}, snap.global_values):
        if name in values:
            if cx.compare(name, requested, values[name]):
                return None
            return f"cannot run in queue instance {qi.name} because of {name}={values[name]}"
    return f"cannot run in queue instance {qi.name} because it offers no {name}"


def _fits(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int) -> str | None:
    if set(qi.states) & _UNAVAILABLE_STATES:
        return f"queue instance \"{qi.name}\" dropped because it is {'disabled' if 'd' in qi.states else 'unavailable'}"
    if "BATCH" not in qi.qtype:
        return f"queue instance \"{qi.name}\" dropped because it is not of type batch"
    if not _queue_matches(task.queues, qi):
        return f"cannot run in queue instance \"{qi.name}\" because it is not contained in its hard queue list (-q)"
    if qi.slots - book.qi_used[qi.name] < slots:
        return f"cannot run in queue instance \"{qi.name}\" because it has not enough free slots"
    cx = snap.complexes
    for name, value in task.requests.items():
        attr = cx.get(name)
        if attr is None:
            return f"unknown resource \"{name}\""
        if attr.consumable != "NO":
            amount = _numeric(cx, attr.name, value) * (1 if attr.consumable == "JOB" else slots)
            why = _consumable_fits(snap, book, qi, attr.name, amount)
        else:
            why = _fixed_fits(snap, qi, attr.name, value)
        if why:
            return why
    # consumables every job uses by default (slots itself is booked separately)
    return None


def _default_consumption(snap: Snapshot, task: PendingTask) -> dict[str, tuple[float, str]]:
    """Consumables a task books: its requests and the complex defaults."""
    out: dict[str, tuple[float, str]] = {}
    cx = snap.complexes
    for attr in cx.consumables():
        if attr.name == "slots":
            continue
        if attr.name in task.requests or attr.shortcut in task.requests:
            val = task.requests.get(attr.name, task.requests.get(attr.shortcut))
            out[attr.name] = (_numeric(cx, attr.name, val), attr.consumable)
        else:
            d = _numeric(cx, attr.name, attr.default) if attr.default not in ("", "NONE") else 0.0
            if d:
                out[attr.name] = (d, attr.consumable)
    return out


def _book(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int, master: bool) -> None:
    book.qi_used[qi.name] += slots
    for name, (amount, mode) in _default_consumption(snap, task).items():
        if mode == "JOB" and not master:
            continue
        total = amount if mode == "JOB" else amount * slots
        for consumed in (book.qi_consumed[qi.name], book.host_consumed.setdefault(qi.host, {}), book.global_consumed):
            consumed[name] = consumed.get(name, 0.0) + total


def _ranked(snap: Snapshot, qis: list[QInstance]) -> list[QInstance]:
    if snap.queue_sort_method == "seqno" or snap.load_of is None:
        return sorted(qis, key=lambda q: (q.seq_no, q.name))

    def key(q: QInstance):
        host = snap.hosts.get(q.host)
        return (snap.load_of(host) if host else 0.0, q.seq_no, q.name)

    return sorted(qis, key=key)


def _category(task: PendingTask) -> tuple:
    return (tuple(sorted(task.requests.items())), task.queues, task.pe, task.owner)


def schedule(snap: Snapshot) -> Plan:
    plan = Plan()
    book = _Book(snap)
    order = sorted(snap.pending, key=lambda t: (-t.priority, t.job_id, t.task_id))
    ranked = _ranked(snap, list(snap.qinstances))
    unplaceable: dict[tuple, list[str]] = {}
    for task in order:
        if task.held:
            continue
        cat = _category(task)
        if cat in unplaceable:
            plan.reasons.setdefault(task.job_id, unplaceable[cat])
            continue
        reasons: list[str] = []
        placed = _place_pe(snap, book, ranked, task, reasons) if task.pe else _place_single(snap, book, ranked, task, reasons)
        if placed is None:
            unplaceable[cat] = reasons
            plan.reasons.setdefault(task.job_id, reasons)
        else:
            plan.dispatches.append(placed)
    return plan


def _place_single(snap, book, ranked, task, reasons) -> Dispatch | None:
    for qi in ranked:
        why = _fits(snap, book, qi, task, 1)
        if why is None:
            _book(snap, book, qi, task, 1, True)
            return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, 1)])
        reasons.append(why)
    return None


def _place_pe(snap, book, ranked, task, reasons) -> Dispatch | None:
    pattern, ranges = task.pe
    candidates = [pe for name, pe in sorted(snap.pes.items()) if fnmatch.fnmatchcase(name, pattern)]
    if not candidates:
        reasons.append(f"cannot run because requested pe \"{pattern}\" does not exist")
        return None
    wanted = sorted({n for lo, hi in ranges for n in (hi, lo)}, reverse=True)
    for pe in candidates:
        free_pe = pe.slots - book.pe_used.get(pe.name, 0)
        for n in wanted:
            if n > free_pe:
                reasons.append(f"cannot run in PE \"{pe.name}\" because it only offers {free_pe} slots")
                continue
            if pe.allocation_rule != "$pe_slots":
                reasons.append(f"allocation_rule {pe.allocation_rule} of PE \"{pe.name}\" is not supported yet")
                break
            for qi in ranked:
                if pe.name not in qi.pe_list:
                    reasons.append(f"cannot run in queue instance \"{qi.name}\" because PE \"{pe.name}\" is not in pe_list")
                    continue
                why = _fits(snap, book, qi, task, n)
                if why is None:
                    _book(snap, book, qi, task, n, True)
                    book.pe_used[pe.name] = book.pe_used.get(pe.name, 0) + n
                    return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, n)], pe.name)
                reasons.append(why)
    return None
