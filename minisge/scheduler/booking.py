"""The pass's book: what is used where, updated as the pass places tasks.

Named for Grid Engine's debiting (sge_select_queue.c ``debit_scheduled_job``,
``debit_job_from_queues``/``hosts``): once a task is placed, its slots and
consumables are booked on its queue instances, their hosts and the cell
(complex(5): per slot for ``YES``, once per job in the master queue for
``JOB``, the complex default for a consumable not requested, one more job
on an EXCL object), so that the next task sees them taken; the quota
ledger (sge_resource_quota(5)) counts the same way.  A placement being
tried (a parallel job over several hosts) books into a :meth:`Book.trial`
and is kept with :meth:`Book.commit` or dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar, overload

from minisge.formats import rsmap
from minisge.formats.complex import Consumable
from minisge.formats.sge_types import SpecifierError
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.matching import Level, excl_jobs_key
from minisge.scheduler.quota import QuotaLedger, QuotaRequest
from minisge.scheduler.snapshot import Dispatch, PendingTask, QInstance, Snapshot

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class Layer(dict[K, V]):
    """A trial's copy of one of the book's dicts, made on write: it holds
    what the trial changed and reads the rest through to the dict below, so
    a trial costs what it touches, not the size of the cell.  It answers
    lookups (``[]``, ``in``, ``get``, ``setdefault``); its own items are the
    changes :meth:`Book.commit` writes down."""

    __slots__ = ("base",)

    def __init__(self, base: dict[K, V]) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, key: K) -> V:
        return self.base[key]

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self.base

    @overload
    def get(self, key: K, default: None = None, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V, /) -> V: ...
    @overload
    def get(self, key: K, default: T, /) -> V | T: ...

    def get(self, key: K, default: object = None, /) -> object:
        return self[key] if key in self else default

    def setdefault(self, key: K, default: V, /) -> V:
        if key not in self:
            dict.__setitem__(self, key, default)
        return self[key]


class NestedLayer(Layer[K, dict[str, float]]):
    """A :class:`Layer` over a dict of dicts: a nested dict is copied into
    the layer when first touched (read or written)."""

    __slots__ = ()

    def __missing__(self, key: K) -> dict[str, float]:
        value = dict(self.base[key])
        dict.__setitem__(self, key, value)
        return value


def _write_down(mine: dict[K, V], theirs: dict[K, V]) -> None:
    """The changes of a trial's layer, written into the dict it lies over."""
    assert isinstance(theirs, Layer) and theirs.base is mine, "a trial of this book"
    mine.update(dict.items(theirs))


class Book:
    """The working copy of what is used, updated as the pass places tasks."""

    __slots__ = ("qi_used", "qi_consumed", "host_consumed", "global_consumed", "pe_used", "quota_ledger",
                 "rsmap_taken")

    qi_used: dict[str, int]  # queue instance -> slots in use
    qi_consumed: dict[str, dict[str, float]]  # queue instance -> consumable -> booked
    host_consumed: dict[str, dict[str, float]]
    global_consumed: dict[str, float]
    pe_used: dict[str, int]  # PE -> slots in use
    quota_ledger: QuotaLedger | None  # the usage of the resource quota sets (None: no quotas)
    rsmap_taken: dict[str, dict[str, list[str]]]  # host -> resource map -> instances taken (sge_rsmap(5))

    def __init__(self, snap: Snapshot) -> None:
        self.qi_used = {qi.name: qi.used for qi in snap.qinstances}
        self.qi_consumed = {qi.name: dict(qi.consumed) for qi in snap.qinstances}
        self.host_consumed = {h: dict(info.consumed) for h, info in snap.hosts.items()}
        for qi in snap.qinstances:
            self.host_consumed.setdefault(qi.host, {})
        self.global_consumed = dict(snap.global_consumed)
        self.pe_used = {n: pe.used for n, pe in snap.pes.items()}
        self.quota_ledger = QuotaLedger(snap.quotas) if snap.quotas is not None else None
        self.rsmap_taken = {h: {n: list(ids) for n, ids in info.rsmap_used.items()}
                            for h, info in snap.hosts.items() if info.rsmap_used}

    def trial(self) -> Book:
        """A working copy for a trial placement (copy-on-write layers over
        this book's dicts); the quota ledger stays shared (a trial's quota
        debits are undone by whoever made them).  Keep it with :meth:`commit`."""
        t = Book.__new__(Book)
        t.qi_used = Layer(self.qi_used)
        t.qi_consumed = NestedLayer(self.qi_consumed)
        t.host_consumed = NestedLayer(self.host_consumed)
        t.global_consumed = Layer(self.global_consumed)
        t.pe_used = Layer(self.pe_used)
        t.quota_ledger = self.quota_ledger
        t.rsmap_taken = self.rsmap_taken  # written only once a placement is final (grant_resource_maps)
        return t

    def commit(self, trial: Book) -> None:
        """Make a trial placement (a :meth:`trial` of this book) the book's own."""
        _write_down(self.qi_used, trial.qi_used)
        _write_down(self.qi_consumed, trial.qi_consumed)
        _write_down(self.host_consumed, trial.host_consumed)
        _write_down(self.global_consumed, trial.global_consumed)
        _write_down(self.pe_used, trial.pe_used)

    def levels(self, snap: Snapshot, qi: QInstance) -> tuple[Level, Level, Level]:
        """complex(5) levels of ``qi``, in the order Grid Engine checks them."""
        host = snap.hosts.get(qi.host)
        return (
            Level("g", "globally", snap.global_values, self.global_consumed, None),
            Level("h", f'at host "{qi.host}"', host.values if host else {}, self.host_consumed[qi.host],
                  host.load if host else None),
            Level("q", f'in queue "{qi.name}"', qi.values, self.qi_consumed[qi.name], None),
        )

    def book(self, cx: ComplexIndex, qi: QInstance, requests: Mapping[str, str], slots: int, master: bool) -> None:
        """Book ``slots`` slots of a task in ``qi`` with its consumables."""
        self.qi_used[qi.name] += slots
        debit(cx, requests, slots, master,
              (self.qi_consumed[qi.name], self.host_consumed[qi.host], self.global_consumed))

    def quota_refuses(self, task: PendingTask, qi: QInstance, slots: int, pe: str | None = None) -> str | None:
        """sge_resource_quota(5): "if an RQS denies the request the other levels
        are not considered" -- None if ``slots`` of ``task`` in ``qi`` stay within
        every enabled set, counting what this pass already placed; else Grid
        Engine's reason (``cannot run because it exceeds limit ...``)."""
        if self.quota_ledger is None:
            return None
        refused = self.quota_ledger.check(quota_request(task, qi.cqueue, qi.host, slots, pe, True))
        return None if refused is None else str(refused)

    def debit_quotas(self, task: PendingTask, placed: Dispatch) -> None:
        """Debit a placed task's queue instances (the first is the master) so
        later tasks of the pass see the quota used."""
        if self.quota_ledger is None:
            return
        for i, (cqueue, host, slots) in enumerate(placed.granted):
            self.quota_ledger.debit(quota_request(task, cqueue, host, slots, placed.pe, i == 0))

    def grant_resource_maps(self, snap: Snapshot, requests: Mapping[str, str], placed: Dispatch) -> None:
        """sge_rsmap(5): which instances of each resource map a placed task
        gets on each of its queue instances' hosts -- as many as it books
        there (per slot for YES, once in the master queue for JOB), the first
        free ones in the host's configured order -- taken so that no later
        task of the pass gets them; kept in ``placed.resource_maps``.  The
        count was checked as for any consumable, so enough are free."""
        cx = snap.complexes
        if not cx.resource_maps:
            return
        wanted = consumption(cx, requests)
        out: list[dict[str, list[str]]] = []
        for i, (_cqueue, host, slots) in enumerate(placed.granted):
            here: dict[str, list[str]] = {}
            info = snap.hosts.get(host)
            for attr in cx.resource_maps:
                if attr.name not in wanted or info is None or attr.name not in info.values:
                    continue
                amount, mode = wanted[attr.name]
                if mode is Consumable.JOB and i:
                    continue
                n = int(amount if mode is Consumable.JOB else amount * slots)
                try:
                    offered = rsmap.parse(info.values[attr.name])
                except SpecifierError:
                    continue
                taken = self.rsmap_taken.setdefault(host, {}).setdefault(attr.name, [])
                ids = offered.free(taken)[:n]
                if ids:
                    taken.extend(ids)
                    here[attr.name] = ids
            out.append(here)
        if any(out):
            placed.resource_maps = out


def quota_request(task: PendingTask, cqueue: str, host: str, slots: int, pe: str | None,
                  master: bool) -> QuotaRequest:
    """What ``slots`` of ``task`` in ``cqueue@host`` ask of the resource quota sets."""
    return QuotaRequest(
        user=task.owner, project=task.project, pe=pe, cqueue=cqueue, host=host,
        slots=slots, requests=task.requests, master=master, group=task.group or None,
    )


def consumption(cx: ComplexIndex, requests: Mapping[str, str]) -> dict[str, tuple[float, Consumable]]:
    """complex(5) consumables a job books: ``{name: (amount, YES|JOB)}`` of
    its ``-l`` requests and, for those it does not request, the complex
    default ("assumed implicitly to be consumed"); slots are booked apart."""
    out: dict[str, tuple[float, Consumable]] = {}
    for attr in cx.consumables():
        if attr.name == "slots":
            continue
        mode = attr.consumable
        if attr.name in requests or attr.shortcut in requests:
            val = requests.get(attr.name, requests.get(attr.shortcut))
            assert val is not None
            out[attr.name] = (cx.numeric(attr.name, val), mode)
        else:
            d = cx.numeric(attr.name, attr.default) if attr.default not in ("", "NONE") else 0.0
            if d:
                out[attr.name] = (d, mode)
    return out


def debits(cx: ComplexIndex, requests: Mapping[str, str], slots: int,
           master: bool) -> tuple[tuple[str, float], ...]:
    """What a job's ``slots`` slots of one queue instance book into each
    level, in booking order: ``(name, amount)`` of each consumable, per slot
    (YES) times the slots, per job (JOB) once, in the master queue only; and,
    for EXCL attributes, one more job on the object (complex(5) exclusive
    scheduling)."""
    out: list[tuple[str, float]] = []
    for name, (amount, mode) in consumption(cx, requests).items():
        if mode is Consumable.JOB and not master:
            continue
        out.append((name, amount if mode is Consumable.JOB else amount * slots))
    for attr in cx.exclusive:
        out.append((excl_jobs_key(attr.name), 1))
    return tuple(out)


def debit(cx: ComplexIndex, requests: Mapping[str, str], slots: int, master: bool,
          levels: Sequence[dict[str, float]]) -> None:
    """Book :func:`debits` into each of ``levels`` (the queue instance's, its
    host's and the global booked amounts)."""
    for name, total in debits(cx, requests, slots, master):
        for consumed in levels:
            consumed[name] = consumed.get(name, 0.0) + total
