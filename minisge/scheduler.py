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
category found unplaceable is not tried again in the same pass, and the
verdicts that no booking changes (queue state, access, ``-q``, qtype, fixed
values) are found once per category (:mod:`minisge.sched_cache`).
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import gc
import functools
import operator
from dataclasses import dataclass, field, fields
from typing import Callable, Mapping

from minisge import job_order, sched_cache, sched_match, sched_order
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
    complex_names: frozenset | None = None  # the names in complex_values (None: every name in values)

    @functools.cached_property
    def name(self) -> str:
        return f"{self.cqueue}@{self.host}"

    @property
    def complex_value_names(self) -> frozenset:
        """The attributes of the queue's complex_values (not its built-in limits)."""
        return frozenset(self.values) if self.complex_names is None else self.complex_names


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
    urgency_slots: str = "min"  # sge_pe(5): the slots a -pe range counts for in urgency


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
    soft_requests: Mapping[str, str] = field(default_factory=dict)  # -soft -l: preferred, not required
    soft_queues: tuple = ()  # -soft -q
    master_queues: tuple = ()  # -masterq: where the master task of a PE job may go
    submission_time: float = 0.0  # for the waiting time contribution (sge_priority(5))
    deadline: float = 0.0  # -dl in seconds since the epoch (0: none)


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
    now: float = 0.0  # the time of the pass: waiting time and deadline (the scheduler reads no clock)
    weights: job_order.Weights = job_order.Weights()  # sched_conf(5) weight_*
    running: tuple = ()  # job_order.JobFacts of the running jobs: urgency is normalized over them too


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


def _levels(snap: Snapshot, book: _Book, qi: QInstance):
    """complex(5) levels, in the order Grid Engine checks them: (letter,
    where for the reason, complex_values, booked amounts, load values)."""
    host = snap.hosts.get(qi.host)
    return (
        ("g", "globally", snap.global_values, book.global_consumed, None),
        ("h", f'at host "{qi.host}"', host.values if host else {}, book.host_consumed.setdefault(qi.host, {}),
         host.load if host else None),
        ("q", f'in queue "{qi.name}"', qi.values, book.qi_consumed[qi.name], None),
    )


def _resources_reject(snap: Snapshot, book: _Book, qi: QInstance, requests: Mapping[str, str],
                      slots: int, defaults: bool = True) -> tuple[str, str] | None:
    """complex(5): does every ``-l`` request hold on every level (global,
    host, queue) that offers the attribute, counting what is booked, and
    does the EXCL rule let the job in?  Consumables the job does not request
    are checked with their default ("for default request").  None if all
    hold, else (where, reason); an attribute no level offers: "job requests
    unknown resource"."""
    cx = snap.complexes
    attrs = []
    for name, value in requests.items():
        attr = cx.get(name)
        if attr is None:
            return f'in queue "{qi.name}"', f"job requests unknown resource ({name})"
        attrs.append((attr, value, ""))
    asked = {a.name for a, _v, _p in attrs}
    if defaults:
        for attr in cx.consumables():
            if attr.name == "slots" or attr.name in asked or sched_match._relop(attr) == "EXCL":
                continue
            d = attr.default if attr.default not in ("", "NONE") else "0"
            if _numeric(cx, attr.name, d):
                attrs.append((attr, d, "for default request "))
    exclusive = {a.name for a, v, _p in attrs if sched_match._relop(a) == "EXCL" and _numeric(cx, a.name, v)}
    found: set = set()
    for letter, where, config, consumed, load in _levels(snap, book, qi):
        for attr in _excl_attrs(cx):
            why = sched_match.excl_rejects(attr, attr.name in exclusive, config, consumed)
            if why:
                return where, why
            if attr.name in config:
                found.add(attr.name)
        for attr, value, prefix in attrs:
            if sched_match._relop(attr) == "EXCL":
                continue
            offer = sched_match.level_offer(attr, letter, config, consumed, load)
            if offer is None:
                continue
            found.add(attr.name)
            n = 1 if sched_match._consumable(attr) == "JOB" else slots
            if not sched_match.offer_satisfies(attr, value, offer, n):
                return where, prefix + sched_match.reason_offers_only(attr, offer)
    for attr, _value, prefix in attrs:
        if not prefix and attr.name not in found:
            return f'in queue "{qi.name}"', f"job requests unknown resource ({attr.name})"
    return None


def _cqueue_request_rejects(snap: Snapshot, qi: QInstance, task: PendingTask) -> str | None:
    """sge_complex_schedd.c request_cq_rejected: a ``-l`` request that the
    configured value of every instance of the cluster queue refuses (a
    numeric one only for a single slot) rules the whole cluster queue out:
    ``(-l name=value) cannot run in queue "cq" because of cluster queue``."""
    cx = snap.complexes
    siblings = _siblings(snap, qi)
    for name, value in task.requests.items():
        attr = cx.get(name)
        if attr is None or sched_match._relop(attr) == "EXCL":
            continue
        if task.pe is not None and not sched_match._is_string(attr):
            continue
        refused = True
        for q in siblings:
            offered = q.values.get(attr.name)
            if offered is None:
                refused = False
                break
            try:
                if complex_fmt_compare(attr, value, offered):
                    refused = False
                    break
            except Exception:  # an offer Grid Engine cannot read matches nothing
                continue
        if refused:
            return f'(-l {attr.name}={value}) cannot run in queue "{qi.cqueue}" because of cluster queue'
    return None


def complex_fmt_compare(attr, requested: str, offered: str) -> bool:
    from minisge.formats import complex as complex_fmt

    return complex_fmt.compare(attr, requested, offered)


def _excl_attrs(cx) -> list:
    """The complex attributes with relop EXCL (complex(5) exclusive scheduling)."""
    consumables = getattr(cx, "consumables", None)
    if consumables is None:
        return []
    cached = getattr(cx, "_excl_attrs", None)
    if cached is not None and cached[0] is consumables():
        return cached[1]
    out = [a for a in consumables() if sched_match._relop(a) == "EXCL"]
    try:
        cx._excl_attrs = (consumables(), out)  # ComplexIndex.consumables() is computed once
    except AttributeError:
        pass
    return out


def _resource_reason(snap: Snapshot, task: PendingTask, where: str, why: str) -> str:
    """Grid Engine's words: ``(-l REQUESTS) cannot run in queue "q@h" because ...``."""
    return f"(-l {sched_match.request_text(snap.complexes, task.requests)}) cannot run {where} because {why}"


def _forced_rejects(snap: Snapshot, qi: QInstance, task: PendingTask) -> str | None:
    """complex(5) requestable FORCED: a queue instance, host or the cell
    whose complex_values hold a forced attribute takes only jobs whose hard
    ``-l`` requests it (sge_select_queue.c job_is_forced_centry_missing)."""
    cx = snap.complexes
    forced = _pass_memo(snap, "forced", lambda: [a for a in getattr(getattr(cx, "clist", None), "attrs", ())
                                                 if str(a.requestable) == "FORCED"])
    if not forced:
        return None
    requested = {cx.get(n).name for n in task.requests if cx.get(n) is not None}
    host = snap.hosts.get(qi.host)
    for attr in forced:
        if attr.name in requested:
            continue
        if attr.name in snap.global_values:
            return f"does not request globally 'forced' resource \"{attr.name}\""
        if host is not None and attr.name in host.values:
            return f"does not request 'forced' resource \"{attr.name}\" of host {qi.host}"
        if attr.name in qi.complex_value_names:
            return f"does not request 'forced' resource \"{attr.name}\" of queue instance {qi.name}"
    return None


def _soft_violations(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask) -> int:
    """sge_select_queue.c compute_soft_violations: the ``-soft -l`` requests
    that ``qi`` does not meet (for one slot), plus one for every ``-soft -q``
    entry that does not name it."""
    n = 0
    for name, value in task.soft_requests.items():
        if _resources_reject(snap, book, qi, {name: value}, 1, defaults=False) is not None:
            n += 1
    n += sum(1 for p in task.soft_queues if not _queue_matches((p,), qi))
    return n


def _by_soft_violations(snap: Snapshot, book: _Book, qis: list, task: PendingTask) -> list:
    """Grid Engine sorts the suitable queue instances by soft violations
    first, then by the queue sort (stable: the load/seq_no order among equals)."""
    if not task.soft_requests and not task.soft_queues:
        return qis
    return sorted(qis, key=lambda q: _soft_violations(snap, book, q, task))


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


def _pass_memo(snap: Snapshot, key, compute):
    """What a pass derives from the (immutable) snapshot alone, computed
    once per snapshot: kept in the snapshot's own ``__dict__`` (so a
    ``dataclasses.replace`` copy starts afresh)."""
    memo = snap.__dict__.setdefault("_pass_memo", {})
    try:
        return memo[key]
    except KeyError:
        value = memo[key] = compute()
        return value


def _siblings(snap: Snapshot, qi: QInstance) -> list[QInstance]:
    by_cqueue = _pass_memo(snap, "siblings", lambda: _group_by_cqueue(snap.qinstances))
    return by_cqueue.get(qi.cqueue, [])


def _group_by_cqueue(qinstances) -> dict[str, list[QInstance]]:
    out: dict[str, list[QInstance]] = {}
    for q in qinstances:
        out.setdefault(q.cqueue, []).append(q)
    return out


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
    """-q: named by the cluster queue when no pattern names it at all, else by the instance.
    A PE job's ``-masterq`` instance passes too (it may hold the master task)."""
    if _queue_matches(task.queues, qi):
        return None
    if task.pe is not None and task.master_queues and _queue_matches(task.master_queues, qi):
        return None
    cq_named = any(fnmatch.fnmatchcase(qi.cqueue, p.split("@", 1)[0] or "*") for p in task.queues)
    where = qi.name if cq_named else qi.cqueue
    return f'cannot run in queue "{where}" because it is not contained in its hard queue list (-q)'


def _static_rejects(snap: Snapshot, qi: QInstance, task: PendingTask, cache=None) -> tuple[str | None, str | None]:
    """The checks of :func:`_fits` that no booking in the pass changes:
    (the reason before the free-slot check, the reason after it), each None
    if it passes -- queue state, ``-q``, access lists, qtype, FORCED, and
    the cluster queue's fixed values (sched_cache caches them per category;
    with ``cache`` the access verdicts are shared by the categories of one
    owner, group and project, the cluster queue's by its instances)."""
    if set(qi.states) & _UNAVAILABLE_STATES:
        # 8.1.9: disabled, else (suspended, unknown, error, ...) "temporarily not available"
        why = "disabled" if "d" in qi.states else "temporarily not available"
        return f'queue instance "{qi.name}" dropped because it is {why}', None
    why = _hard_queue_rejects(task, qi)
    if why:
        return why, None
    if cache is None:
        why = _access_rejects(snap, qi, task)
    else:
        try:
            why = cache.access[qi.name]
        except KeyError:
            why = cache.access[qi.name] = _access_rejects(snap, qi, task)
    if why:
        return why, None
    if task.pe is None and "BATCH" not in qi.qtype:
        # queue_conf(5) qtype: a batch job never goes to an INTERACTIVE-only queue
        # (a PE job needs the PE in pe_list instead, as in Grid Engine)
        return f'cannot run in queue instance "{qi.name}" because it is not of type batch', None
    why = _forced_rejects(snap, qi, task)
    if why:
        return why, None
    if cache is None:
        return None, _cqueue_request_rejects(snap, qi, task)
    try:
        return None, cache.cq_request[qi.cqueue]
    except KeyError:
        why = cache.cq_request[qi.cqueue] = _cqueue_request_rejects(snap, qi, task)
        return None, why


def _task_cache(book: _Book, task: PendingTask):
    """The sched_cache.CategoryCache of ``task``'s category, if the pass
    (:func:`schedule`) is placing this very task; else None (no cache)."""
    current = book.__dict__.get("category_cache")
    return current[1] if current is not None and current[0] is task else None


def _fits(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int) -> str | None:
    cache = _task_cache(book, task)
    if cache is None:
        before, after = _static_rejects(snap, qi, task)
    else:
        static = cache.static.get(qi.name)
        if static is None:
            static = cache.static[qi.name] = _static_rejects(snap, qi, task, cache)
        before, after = static
    if before:
        return before
    if qi.slots - book.qi_used[qi.name] < slots:
        return f"queue instance \"{qi.name}\" dropped because it is full"  # 8.1.9's words (msg 47078)
    if after:
        return after
    if cache is not None and cache.resources_static:  # the -l check needs no booked amount
        key = (qi.name, slots)
        try:
            return cache.resources[key]
        except KeyError:
            rejected = _resources_reject(snap, book, qi, task.requests, slots)
            why = cache.resources[key] = _resource_reason(snap, task, *rejected) if rejected else None
            return why
    rejected = _resources_reject(snap, book, qi, task.requests, slots)
    if rejected:
        return _resource_reason(snap, task, *rejected)
    return None


def consumption(cx, requests: Mapping[str, str]) -> dict[str, tuple[float, str]]:
    """complex(5) consumables a job books: ``{name: (amount, YES|JOB)}`` of
    its ``-l`` requests and, for those it does not request, the complex
    default ("assumed implicitly to be consumed"); slots are booked apart."""
    out: dict[str, tuple[float, str]] = {}
    for attr in cx.consumables():
        if attr.name == "slots":
            continue
        mode = sched_match._consumable(attr)
        if attr.name in requests or attr.shortcut in requests:
            val = requests.get(attr.name, requests.get(attr.shortcut))
            out[attr.name] = (_numeric(cx, attr.name, val), mode)
        else:
            d = _numeric(cx, attr.name, attr.default) if attr.default not in ("", "NONE") else 0.0
            if d:
                out[attr.name] = (d, mode)
    return out


def debit(cx, requests: Mapping[str, str], slots: int, master: bool, levels) -> None:
    """Book a job's consumables for ``slots`` slots of one queue instance
    into each of ``levels`` (the queue instance's, its host's and the
    global booked amounts): per slot (YES) times the slots, per job (JOB)
    once, in the master queue only; and, for EXCL attributes, one more job
    on the object (complex(5) exclusive scheduling)."""
    for name, (amount, mode) in consumption(cx, requests).items():
        if mode == "JOB" and not master:
            continue
        total = amount if mode == "JOB" else amount * slots
        for consumed in levels:
            consumed[name] = consumed.get(name, 0.0) + total
    for attr in _excl_attrs(cx):
        key = sched_match.excl_jobs_key(attr.name)
        for consumed in levels:
            consumed[key] = consumed.get(key, 0.0) + 1


def _default_consumption(snap: Snapshot, task: PendingTask) -> dict[str, tuple[float, str]]:
    """Consumables a task books: its requests and the complex defaults."""
    return consumption(snap.complexes, task.requests)


def _book(snap: Snapshot, book: _Book, qi: QInstance, task: PendingTask, slots: int, master: bool) -> None:
    book.qi_used[qi.name] += slots
    levels = (book.qi_consumed[qi.name], book.host_consumed.setdefault(qi.host, {}), book.global_consumed)
    debit(snap.complexes, task.requests, slots, master, levels)


def _ranked(snap: Snapshot, qis: list[QInstance]) -> list[QInstance]:
    if snap.queue_sort_method == "seqno" or snap.load_of is None:
        return sorted(qis, key=lambda q: (q.seq_no, q.name))

    def key(q: QInstance):
        host = snap.hosts.get(q.host)
        return (snap.load_of(host) if host else 0.0, q.seq_no, q.name)

    return sorted(qis, key=key)


# PendingTask fields that say who the task is or when it goes, not what it needs
_NOT_CATEGORY = frozenset({"job_id", "task_id", "priority", "submission_time", "deadline", "held"})
_CATEGORY_FIELDS = tuple(f.name for f in fields(PendingTask) if f.name not in _NOT_CATEGORY)


_PLAIN = (str, int, float, bool, type(None), tuple, frozenset)
_category_values = operator.attrgetter(*_CATEGORY_FIELDS)
# the category fields that hold mappings (hard and soft -l requests)
_DICT_AT = tuple(i for i, f in enumerate(f for f in fields(PendingTask) if f.name in _CATEGORY_FIELDS)
                 if f.default_factory is dict or str(f.type).startswith(("Mapping", "dict")))


def _hashable(value):
    """A field's value as part of a dict key (dicts as sorted item tuples)."""
    if type(value) in _PLAIN:
        return value
    if type(value) is dict or isinstance(value, Mapping):
        return tuple(sorted(value.items())) if value else ()
    if isinstance(value, (list, set)):
        return tuple(_hashable(v) for v in value)
    return value


def _category(task: PendingTask) -> tuple:
    """The job category (Grid Engine's sge_category): every request that
    decides where a task may run -- resources, queues, PE, and owner, group
    and project for access lists and quotas -- so every PendingTask field but
    its identity and its place in the order.  Tasks of one category fit or
    fail alike; a category found unplaceable is not tried again in the pass."""
    values = _category_values(task)
    if _DICT_AT:
        values = list(values)
        for i in _DICT_AT:
            v = values[i]
            values[i] = tuple(sorted(v.items())) if v else ()
    try:
        hash(values := tuple(values))
    except TypeError:  # some other unhashable value: the general way
        values = tuple(_hashable(v) for v in values)
    return values


def pending_tasks(common: dict, task_ids) -> list[PendingTask]:
    """``PendingTask(task_id=t, **common)`` for every ``t`` of ``task_ids``,
    made without the frozen dataclass's field-by-field ``__init__`` (the
    snapshot makes one per pending task: 10,000s per pass); the fields left
    out get their defaults, and the tasks are as immutable as any."""
    plain, factories = _pending_defaults()
    values = {**plain, **common}
    for name, factory in factories.items():
        if name not in values:
            values[name] = factory()
    if len(values) != len(plain) + len(factories):
        unknown = set(common) - plain.keys() - factories.keys()
        raise TypeError(f"PendingTask has no field {sorted(unknown)[0]!r}")
    if values["job_id"] is None or values["owner"] is None:
        raise TypeError("PendingTask needs job_id and owner")
    new = object.__new__
    out = []
    for tid in task_ids:
        task = new(PendingTask)
        attrs = task.__dict__
        attrs.update(values)
        attrs["task_id"] = tid
        out.append(task)
    return out


def _pending_defaults() -> tuple[dict, dict]:
    """PendingTask's field defaults: (plain values, factories); None for
    the fields without a default."""
    cached = _PENDING_DEFAULTS
    if cached is None:
        import dataclasses

        plain, factories = {}, {}
        for f in fields(PendingTask):
            if f.default_factory is not dataclasses.MISSING:
                factories[f.name] = f.default_factory
            else:
                plain[f.name] = None if f.default is dataclasses.MISSING else f.default
        cached = globals()["_PENDING_DEFAULTS"] = (plain, factories)
    return cached


_PENDING_DEFAULTS = None  # (plain values, factories), made on first use


def pending_facts(snap: Snapshot) -> list:
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


def dispatch_figures(snap: Snapshot) -> dict[int, job_order.Figures]:
    """sge_priority(5) figures of the pending jobs (normalized together with
    the running ones), as the pass orders them."""
    return job_order.figures(pending_facts(snap), snap.complexes, snap.pes, snap.weights, snap.now)


@contextlib.contextmanager
def gc_paused():
    """Run a pass (snapshot and schedule) with the cyclic garbage collector
    paused: a pass makes an object or two per pending task and holds them
    all, so with 100,000 pending jobs the collector would otherwise walk
    them (and the qmaster's job table) again and again, for half the time.
    The pass makes no garbage cycles worth collecting on the spot."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def schedule(snap: Snapshot) -> Plan:
    """One scheduling pass: the pending tasks in sge_priority(5) order
    (:mod:`minisge.job_order`), each placed on the best queue instances that
    fit, booked so later tasks see them taken; held tasks are skipped."""
    plan = Plan()
    book = _Book(snap)
    if sched_cache.ENABLED:  # the same order, without a Figures object per job
        order = sched_order.dispatch_order(snap)
    else:
        order = job_order.dispatch_order([t for t in snap.pending if not t.held], dispatch_figures(snap))
    ranked = _ranked(snap, list(snap.qinstances))
    unplaceable: dict[tuple, list[str]] = {}
    categories: dict[int, tuple] = {}  # job id -> category: tasks of a job share it
    caches: dict[tuple, sched_cache.CategoryCache] = {}
    access: dict[tuple, dict] = {}  # (owner, group, project) -> access verdicts by queue instance
    for task in order:
        cat = categories.get(task.job_id)
        if cat is None:
            cat = categories[task.job_id] = _category(task)
        if cat in unplaceable:
            plan.reasons.setdefault(task.job_id, unplaceable[cat])
            continue
        place = _place_pe if task.pe else _place_single
        if sched_cache.ENABLED:  # the category's booking-independent verdicts (sched_cache)
            cache = caches.get(cat)
            if cache is None:
                cache = caches[cat] = sched_cache.CategoryCache(sched_cache.resources_are_static(
                    snap.complexes, task.requests, _excl_attrs(snap.complexes)),
                    access.setdefault((task.owner, task.group, task.project), {}))
            book.category_cache = (task, cache)
        # A queue instance without a free slot takes no task: try the others
        # first (the same choice, found faster); only a task that fits
        # nowhere needs the full scan, for Grid Engine's reason per instance.
        placed = place(snap, book, [qi for qi in ranked if qi.slots > book.qi_used[qi.name]], task,
                       sched_cache.Discard() if sched_cache.ENABLED else [])
        reasons: list[str] = []
        if placed is None:
            placed = place(snap, book, ranked, task, reasons)
        if placed is None:
            unplaceable[cat] = reasons = list(dict.fromkeys(reasons))  # each reason once
            plan.reasons.setdefault(task.job_id, reasons)
        else:
            plan.dispatches.append(placed)
            _quota_book(snap, book, task, placed)
    return plan


def _place_single(snap, book, ranked, task, reasons) -> Dispatch | None:
    """The first queue instance (in queue sort order) that fits; with soft
    requests the one that fits and meets the most of them, as Grid Engine
    goes on looking until it finds one without soft violations."""
    soft = bool(task.soft_requests or task.soft_queues)
    best = None
    for qi in ranked:
        why = _fits(snap, book, qi, task, 1) or _quota_fits(snap, book, qi, task, 1)
        if why is not None:
            reasons.append(why)
            continue
        violations = _soft_violations(snap, book, qi, task) if soft else 0
        if best is None or violations < best[0]:
            best = (violations, qi)
        if violations == 0:
            break
    if best is None:
        return None
    qi = best[1]
    _book(snap, book, qi, task, 1, True)
    return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, 1)])


def _place_pe(snap, book, ranked, task, reasons) -> Dispatch | None:
    """sge_pe(5): the first PE matching the ``-pe`` name (wildcards allowed)
    that the owner may use and that can hold the largest slot count of the
    requested range under its allocation_rule."""
    pattern, ranges = task.pe
    candidates = [pe for name, pe in sorted(snap.pes.items()) if fnmatch.fnmatchcase(name, pattern)]
    if not candidates:
        reasons.append("no matching PE found")
        return None
    for pe in candidates:
        # 8.1.9 (qstat -j on a real cell): a PE of 0 slots "only offers 0 slots";
        # no access to the PE is said, and then that it offers 0 slots
        if pe.slots == 0:
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers 0 slots')
            continue
        if not _has_access(snap, task, pe.user_lists, pe.xuser_lists):
            reasons.append(f'cannot run because no access to PE "{pe.name}"')
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers 0 slots')
            continue
        hosts = _pe_hosts(snap, book, ranked, task, pe, reasons)
        granted, offered, trial = _assign_pe(snap, book, hosts, task, pe, ranges)
        if granted is None:
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers {offered} slots')
            continue
        _commit(book, trial)  # schedule() debits the quotas of the dispatch
        book.pe_used[pe.name] = book.pe_used.get(pe.name, 0) + sum(n for _qi, n in granted)
        return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, n) for qi, n in granted], pe.name)
    return None


def _pe_hosts(snap, book, ranked, task, pe, reasons) -> list[list[QInstance]]:
    """The queue instances that offer PE ``pe`` and a slot to the task,
    grouped by host, hosts in most-suitable-first (queue sort) order."""
    if type(reasons) is sched_cache.Discard and snap.quotas is None and not (
            task.soft_requests or task.soft_queues or task.master_queues):
        # no reason wanted, no sort of all of them: only as many hosts as the allocation takes
        return sched_cache.LazyHosts(
            ranked, lambda q: pe.name in q.pe_list and _fits(snap, book, q, task, 1) is None)
    by_host: dict[str, list[QInstance]] = {}
    fitting: list[QInstance] = []
    for qi in ranked:
        if pe.name not in qi.pe_list:
            listed = any(pe.name in q.pe_list for q in _siblings(snap, qi))
            reasons.append(f'cannot run in queue "{qi.name if listed else qi.cqueue}" because PE "{pe.name}" is not in PE list')
            continue
        why = _fits(snap, book, qi, task, 1) or _quota_fits(snap, book, qi, task, 1, pe.name)
        if why:
            reasons.append(why)
            continue
        fitting.append(qi)
    for qi in _by_soft_violations(snap, book, fitting, task):
        by_host.setdefault(qi.host, []).append(qi)
    hosts = list(by_host.values())
    if task.master_queues:
        # qsub(1) -masterq: the master task's instance is granted first, so
        # hosts with one come first, and it first on its host
        def not_master(q):
            return not _queue_matches(task.master_queues, q)
        hosts = sorted((sorted(h, key=not_master) for h in hosts), key=lambda h: not_master(h[0]))
    return hosts


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


class _Layer(dict):
    """A trial's copy of one of the book's dicts, made on write: it holds
    what the trial changed and reads the rest through to the dict below
    (a nested dict is copied into the layer when first touched), so a trial
    costs what it touches, not the size of the cell."""

    __slots__ = ("base",)

    def __init__(self, base: dict):
        super().__init__()
        self.base = base

    def __missing__(self, key):
        value = self.base[key]
        if isinstance(value, dict):
            value = dict(value)
            dict.__setitem__(self, key, value)
        return value

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or key in self.base

    def get(self, key, default=None):
        return self[key] if key in self else default

    def setdefault(self, key, default=None):
        if key not in self:
            dict.__setitem__(self, key, default)
        return self[key]

    def keys(self):
        return {k: None for k in (*self.base.keys(), *dict.keys(self))}.keys()

    def __iter__(self):
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def values(self):
        return [self[k] for k in self.keys()]


def _copy_book(book: _Book) -> _Book:
    """A working copy for a trial placement (copy-on-write layers over the
    book's dicts: :class:`_Layer`); the quota ledger stays shared (a trial's
    quota debits are undone by :meth:`_Grants.undo_quotas`).  Keep it with
    :func:`_commit`."""
    new = copy.copy(book)
    for name, value in vars(book).items():
        if isinstance(value, dict):
            setattr(new, name, _Layer(value))
    return new


def _commit(book: _Book, trial: _Book) -> None:
    """Make a trial placement (:func:`_copy_book` of ``book``) the book's
    own: its changed entries are written down into the book's dicts."""
    for name, value in vars(trial).items():
        if isinstance(value, _Layer) and value.base is getattr(book, name, None):
            value.base.update(dict.items(value))
        else:
            setattr(book, name, value)


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
        if task.master_queues and qi.name not in self.items:
            # -masterq: the master task only in a matching instance; an
            # instance admitted by -masterq alone holds nothing else
            if first and not _queue_matches(task.master_queues, qi):
                return 0
            if not first and not _queue_matches(task.queues, qi):
                return 0
            if not _queue_matches(task.queues, qi):
                want = 1
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
            _commit(book, trial)
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
            best = (n, host_qis, (g, trial) if n == g.total else None)
            if n >= most:  # no later host can hold more: this one is the most suitable
                break
    if best is None:
        return None, offered, None
    if best[2] is not None:  # that trial booked just the count: filling up again books the same
        g, trial = best[2]
        return g.booked(), g.total, trial
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
