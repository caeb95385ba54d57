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

import copy
import fnmatch
from dataclasses import dataclass, field
from typing import Callable, Mapping

from minisge.formats import access_list


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
    user_lists: tuple = ()  # queue_conf(5) access: userset names (empty = NONE)
    xuser_lists: tuple = ()
    projects: tuple = ()
    xprojects: tuple = ()

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
    user_lists: tuple = ()  # sge_pe(5) access: userset names (empty = NONE)
    xuser_lists: tuple = ()
    job_is_first_task: bool = True


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
    group: str = ""  # the owner's primary group, for @group access list entries
    project: str | None = None  # -P


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
    acls: Mapping[str, object] = field(default_factory=dict)  # userset name -> access_list.AccessList
    quotas: object = None  # quota.QuotaContext: resource quota sets and their usage (None: no quotas)


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


def _has_access(snap: Snapshot, task: PendingTask, user_lists: tuple, xuser_lists: tuple) -> bool:
    """queue_conf(5), sge_pe(5): a user in an ``xuser_lists`` list is denied
    (even if also in ``user_lists``); with ``user_lists`` NONE anyone else may
    enter, otherwise only members of one of its lists."""
    groups = (task.group,) if task.group else ()
    return access_list.has_access(task.owner, groups, user_lists, xuser_lists, snap.acls)


def _instance_access(snap: Snapshot, qi: QInstance, task: PendingTask) -> str | None:
    """Why the job's owner or project may not use queue instance ``qi``
    (queue_conf(5) user_lists/xuser_lists, projects/xprojects), in Grid
    Engine's words; None if it may."""
    if not _has_access(snap, task, qi.user_lists, qi.xuser_lists):
        return f'has no permission for queue "{qi.name}"'
    if qi.projects:
        if not task.project:
            return f'(no project) does not have the correct project to run in queue "{qi.name}"'
        if task.project not in qi.projects:
            return f'(project {task.project}) does not have the correct project to run in queue "{qi.name}"'
    if task.project and task.project in qi.xprojects:
        return f'(project {task.project}) is not allowed to run in queue "{qi.name}" based on the excluded project list'
    return None


def _siblings(snap: Snapshot, qi: QInstance) -> list[QInstance]:
    return [q for q in snap.qinstances if q.cqueue == qi.cqueue]


def _access_rejects(snap: Snapshot, qi: QInstance, task: PendingTask) -> str | None:
    """The access and project rules of :func:`_instance_access`; when they
    shut the owner out of every instance of the cluster queue, Grid Engine
    says so once for the cluster queue (its ``cqueue_match_static``)."""
    why = _instance_access(snap, qi, task)
    if why is None or any(_instance_access(snap, q, task) is None for q in _siblings(snap, qi)):
        return why
    if why.startswith("has no permission"):
        return f'has no permission for cluster queue "{qi.cqueue}"'
    # Grid Engine 8.1.9 words every cluster-queue project refusal this way
    return f'(no project) does not have the correct project to run in cluster queue "{qi.cqueue}"'


def _hard_queue_rejects(task: PendingTask, qi: QInstance) -> str | None:
    """-q: named by the cluster queue when no pattern names it at all, else by the instance."""
    if _queue_matches(task.queues, qi):
        return None
    cq_named = any(fnmatch.fnmatchcase(qi.cqueue, p.split("@", 1)[0] or "*") for p in task.queues)
    where = qi.name if cq_named else qi.cqueue
    return f'cannot run in queue "{where}" because it is not contained in its hard queue list (-q)'


def _fits(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int) -> str | None:
    if set(qi.states) & _UNAVAILABLE_STATES:
        return f"queue instance \"{qi.name}\" dropped because it is {'disabled' if 'd' in qi.states else 'unavailable'}"
    if "BATCH" not in qi.qtype:
        return f"queue instance \"{qi.name}\" dropped because it is not of type batch"
    why = _hard_queue_rejects(task, qi) or _access_rejects(snap, qi, task)
    if why:
        return why
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
    return (tuple(sorted(task.requests.items())), task.queues, task.pe, task.owner, task.group, task.project)


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
            unplaceable[cat] = reasons = list(dict.fromkeys(reasons))  # each reason once
            plan.reasons.setdefault(task.job_id, reasons)
        else:
            plan.dispatches.append(placed)
            _quota_book(snap, book, task, placed)
    return plan


def _place_single(snap, book, ranked, task, reasons) -> Dispatch | None:
    for qi in ranked:
        why = _fits(snap, book, qi, task, 1) or _quota_fits(snap, book, qi, task, 1)
        if why is None:
            _book(snap, book, qi, task, 1, True)
            return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, 1)])
        reasons.append(why)
    return None


def _place_pe(snap, book, ranked, task, reasons) -> Dispatch | None:
    """sge_pe(5): the first PE matching the ``-pe`` name (wildcards allowed)
    that the owner may use and that can hold the largest slot count of the
    requested range under its allocation_rule."""
    pattern, ranges = task.pe
    candidates = [pe for name, pe in sorted(snap.pes.items()) if fnmatch.fnmatchcase(name, pattern)]
    if not candidates:
        reasons.append("no matching pe found")
        return None
    for pe in candidates:
        if pe.slots == 0:
            reasons.append(f'cannot run because total slots of pe "{pe.name}" not in range of job')
            continue
        if not _has_access(snap, task, pe.user_lists, pe.xuser_lists):
            reasons.append(f'cannot run because no access to pe "{pe.name}"')
            continue
        hosts = _pe_hosts(snap, book, ranked, task, pe, reasons)
        granted, offered, trial = _assign_pe(snap, book, hosts, task, pe, ranges)
        if granted is None:
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers {offered} slots')
            continue
        book.__dict__.update(trial.__dict__)  # schedule() debits the quotas of the dispatch
        book.pe_used[pe.name] = book.pe_used.get(pe.name, 0) + sum(n for _qi, n in granted)
        return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, n) for qi, n in granted], pe.name)
    return None


def _pe_hosts(snap, book, ranked, task, pe, reasons) -> list[list[QInstance]]:
    """The queue instances that offer PE ``pe`` and a slot to the task,
    grouped by host, hosts in most-suitable-first (queue sort) order."""
    by_host: dict[str, list[QInstance]] = {}
    for qi in ranked:
        if pe.name not in qi.pe_list:
            listed = any(pe.name in q.pe_list for q in _siblings(snap, qi))
            reasons.append(f'cannot run in queue "{qi.name if listed else qi.cqueue}" because PE "{pe.name}" is not in pe list')
            continue
        why = _fits(snap, book, qi, task, 1) or _quota_fits(snap, book, qi, task, 1, pe.name)
        if why:
            reasons.append(why)
            continue
        by_host.setdefault(qi.host, []).append(qi)
    return list(by_host.values())


def _largest_in_ranges(ranges, most: int, step: int = 1) -> int | None:
    """The largest slot count of the ``-pe`` ranges not above ``most`` (and a
    multiple of ``step``, an integer allocation_rule), or None."""
    best = None
    for lo, hi in ranges:
        n = min(hi, most)
        n -= n % step
        if n >= max(lo, 1) and (best is None or n > best):
            best = n
    return best


def _copy_book(book: _Book) -> _Book:
    """A working copy for a trial placement; the quota ledger stays shared
    (a trial's quota debits are undone by :meth:`_Grants.undo_quotas`)."""
    new = copy.copy(book)
    for name, value in vars(book).items():
        if isinstance(value, dict):
            setattr(new, name, copy.deepcopy(value))
    return new


def _slots_fit(snap, book, qi, task, slots: int, pe: str) -> bool:
    """Can ``qi`` take ``slots`` more slots of the task?"""
    return _fits(snap, book, qi, task, slots) is None and _quota_fits(snap, book, qi, task, slots, pe) is None


def _take(snap, book, qi, task, want: int, extra: int, master: bool, pe: str) -> int:
    """Book the most slots, up to ``want``, that ``qi`` can take (plus
    ``extra`` for the master task, job_is_first_task FALSE); return how many
    parallel slots it took (0: none, and nothing booked)."""
    hi = min(want, qi.slots - book.qi_used[qi.name] - extra)
    if hi < 1 or not _slots_fit(snap, book, qi, task, 1 + extra, pe):
        return 0
    lo = 1
    while lo < hi:  # fitting is monotone in the slot count
        mid = (lo + hi + 1) // 2
        if _slots_fit(snap, book, qi, task, mid + extra, pe):
            lo = mid
        else:
            hi = mid - 1
    _book(snap, book, qi, task, lo + extra, master)
    return lo


class _Grants:
    """Slots granted per queue instance, in grant order: the first is the
    master queue, which also holds the master task's extra slot."""

    def __init__(self, extra: int, pe: str):
        self.extra = extra
        self.pe = pe
        self.items: dict[str, list] = {}
        self.debits: list = []  # quota requests debited while placing, undone afterwards

    @property
    def total(self) -> int:
        """The parallel slots granted (without the master task's extra slot)."""
        return sum(n for _qi, n in self.items.values()) - (self.extra if self.items else 0)

    def take(self, snap, book, qi, task, want: int) -> int:
        first = not self.items
        extra = self.extra if first else 0
        k = _take(snap, book, qi, task, want, extra, first, self.pe)
        if k:
            self.items.setdefault(qi.name, [qi, extra])[1] += k
            if snap.quotas is not None:  # later grants of this job see the quota these use
                req = _quota_request(task, qi.cqueue, qi.host, k + extra, self.pe, first)
                _quota_ledger(snap, book).debit(req)
                self.debits.append(req)
        return k

    def undo_quotas(self, snap, book) -> None:
        for req in self.debits:
            _quota_ledger(snap, book).debit(req, -1)
        self.debits = []

    def booked(self) -> list[tuple[QInstance, int]]:
        return [(qi, n) for qi, n in self.items.values()]


def _fill_up(snap, book, task, hosts, limit: int, extra: int, pe: str) -> _Grants:
    """$fill_up: all available slots of the best host, then the next ones."""
    g = _Grants(extra, pe)
    for host_qis in hosts:
        for qi in host_qis:
            if g.total >= limit:
                return g
            g.take(snap, book, qi, task, limit - g.total)
    return g


def _round_robin(snap, book, task, hosts, limit: int, extra: int, pe: str) -> _Grants:
    """$round_robin: one slot per suitable host in turn, again from the first
    host while slots are still wanted."""
    g = _Grants(extra, pe)
    progress = True
    while progress and g.total < limit:
        progress = False
        for host_qis in hosts:
            if g.total >= limit:
                break
            if any(g.take(snap, book, qi, task, 1) for qi in host_qis):
                progress = True
    return g


def _per_host(snap, book, task, hosts, limit: int, extra: int, pe: str, per_host: int) -> _Grants:
    """An integer allocation_rule: exactly ``per_host`` slots on each host used."""
    g = _Grants(extra, pe)
    for host_qis in hosts:
        if limit - g.total < per_host:
            break
        trial, h = _copy_book(book), copy.copy(g)
        h.items, h.debits = {k: list(v) for k, v in g.items.items()}, []
        for qi in host_qis:
            h.take(snap, trial, qi, task, g.total + per_host - h.total)
        if h.total == g.total + per_host:
            book.__dict__.update(trial.__dict__)
            g.items, g.debits = h.items, g.debits + h.debits
        else:
            h.undo_quotas(snap, trial)
    return g


def _assign_pe(snap, book, hosts, task, pe, ranges):
    """(grants, offered, booked copy): the grants for the largest count of
    ``ranges`` that ``pe``'s allocation_rule can place (None if none can),
    the most slots it could place, and the working copy with them booked."""
    extra = 0 if pe.job_is_first_task else 1
    most = min(max(hi for _lo, hi in ranges), pe.slots - book.pe_used.get(pe.name, 0) - extra)
    if most < 1:
        return None, max(most, 0), None
    rule = pe.allocation_rule
    if rule == "$pe_slots":
        return _assign_one_host(snap, book, hosts, task, ranges, most, extra, pe.name)
    if rule == "$fill_up":
        place = lambda b, n: _fill_up(snap, b, task, hosts, n, extra, pe.name)  # noqa: E731
        step = 1
    elif rule == "$round_robin":
        place = lambda b, n: _round_robin(snap, b, task, hosts, n, extra, pe.name)  # noqa: E731
        step = 1
    else:
        step = int(rule)
        place = lambda b, n: _per_host(snap, b, task, hosts, n, extra, pe.name, step)  # noqa: E731
    trial = _copy_book(book)
    g = place(trial, most - most % step)
    g.undo_quotas(snap, trial)
    n = _largest_in_ranges(ranges, g.total, step)
    if n is None:
        return None, g.total, None
    if n != g.total:
        trial = _copy_book(book)
        g = place(trial, n)
        g.undo_quotas(snap, trial)
    return g.booked(), g.total, trial


def _assign_one_host(snap, book, hosts, task, ranges, most: int, extra: int, pe: str):
    """$pe_slots: the whole range on one host; the host that holds the
    largest count of the range, the most suitable one among equals."""
    best = None
    offered = 0
    for host_qis in hosts:
        trial = _copy_book(book)
        g = _fill_up(snap, trial, task, [host_qis], most, extra, pe)
        g.undo_quotas(snap, trial)
        offered = max(offered, g.total)
        n = _largest_in_ranges(ranges, g.total)
        if n is not None and (best is None or n > best[0]):
            best = (n, host_qis)
    if best is None:
        return None, offered, None
    trial = _copy_book(book)
    g = _fill_up(snap, trial, task, [best[1]], best[0], extra, pe)
    g.undo_quotas(snap, trial)
    return g.booked(), g.total, trial


# ---------------------------------------------------------------------------
# resource quota sets (sge_resource_quota(5)), evaluated by minisge.quota


def _quota_ledger(snap: Snapshot, book: _Book):
    """The pass's working copy of quota usage, made on first use."""
    ledger = getattr(book, "quota_ledger", None)
    if ledger is None:
        from minisge import quota

        ledger = book.quota_ledger = quota.QuotaLedger(snap.quotas)
    return ledger


def _quota_request(task: PendingTask, cqueue: str, host: str, slots: int, pe: str | None, master: bool):
    from minisge import quota

    return quota.QuotaRequest(
        user=task.owner, project=task.project, pe=pe, cqueue=cqueue, host=host,
        slots=slots, requests=task.requests, master=master, group=task.group or None,
    )


def _quota_fits(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int,
                pe: str | None = None) -> str | None:
    """sge_resource_quota(5): "if an RQS denies the request the other levels
    are not considered" -- None if ``slots`` of ``task`` in ``qi`` stay within
    every enabled set, counting what this pass already placed; else Grid
    Engine's reason (``cannot run because it exceeds limit ...``)."""
    if snap.quotas is None:
        return None
    refused = _quota_ledger(snap, book).check(_quota_request(task, qi.cqueue, qi.host, slots, pe, True))
    return None if refused is None else str(refused)


def _quota_book(snap: Snapshot, book: _Book, task: PendingTask, placed: Dispatch) -> None:
    """Debit a placed task's queue instances (the first is the master) so
    later tasks of the pass see the quota used."""
    if snap.quotas is None:
        return
    ledger = _quota_ledger(snap, book)
    for i, (cqueue, host, slots) in enumerate(placed.granted):
        ledger.debit(_quota_request(task, cqueue, host, slots, placed.pe, i == 0))
