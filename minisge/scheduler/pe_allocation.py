"""Parallel jobs: which PE, how many slots, on which queue instances (sge_pe(5)).

Named for sge_pe(5) ``allocation_rule`` (Grid Engine's sge_pe_schedd.c and
the PE part of sge_select_queue.c).  A ``-pe name n-m`` job takes the first
PE, in name order, whose name matches (wildcards allowed), that the owner
may use (``user_lists``/``xuser_lists``) and that can hold the largest slot
count of the requested ranges under its rule:

- ``$pe_slots``: every slot on one host -- the host that holds the largest
  count of the range, the most suitable one among equals;
- ``$fill_up``: all available slots of the most suitable host, then the next;
- ``$round_robin``: one slot per suitable host in turn, again from the
  first host while slots are still wanted;
- an integer N: exactly N slots on each host used (the count a multiple of N);

never more than the PE's free ``slots``.  The master queue is the first
granted, a ``-masterq`` instance if the job names some.  ``job_is_first_task``
changes no booking: with FALSE the job script runs beside the slots granted
(8.1.9: ``-pe make 2``, $round_robin, FALSE, runs on a 2-slot queue instance
and uses 2 of its slots).  Hosts are taken in queue sort order
(:mod:`.queue_sort`); a host's instances together hold its share.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Sequence

from minisge.scheduler.assignment import Assignment, Discard
from minisge.scheduler.booking import Book, quota_request
from minisge.scheduler.queue_match import fits, fits_within_quotas, has_access, queues_match
from minisge.scheduler.queue_sort import by_soft_violations
from minisge.scheduler.quota import QuotaRequest
from minisge.scheduler.snapshot import PE, Dispatch, QInstance

#: the instances granted with their slot counts, the master queue first
Granted = list[tuple[QInstance, int]]


def place_pe(a: Assignment, book: Book, ranked: Sequence[QInstance], reasons: list[str]) -> Dispatch | None:
    """sge_pe(5): the first PE matching the ``-pe`` name (wildcards allowed)
    that the owner may use and that can hold the largest slot count of the
    requested range under its allocation_rule; booked in ``book``."""
    snap, task = a.snap, a.task
    assert task.pe is not None
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
        if not has_access(snap, task, pe.user_lists, pe.xuser_lists):
            reasons.append(f'cannot run because no access to PE "{pe.name}"')
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers 0 slots')
            continue
        if type(reasons) is Discard and not could_hold(book, ranked, pe, ranges):
            continue  # not enough free slots for the smallest count, and no reason is wanted
        hosts = pe_hosts(a, book, ranked, pe, reasons)
        granted, offered, trial = assign_pe(a, book, hosts, pe, ranges)
        if granted is None or trial is None:
            reasons.append(f'cannot run in PE "{pe.name}" because it only offers {offered} slots')
            continue
        book.commit(trial)  # the pass debits the quotas of the dispatch
        book.pe_used[pe.name] = book.pe_used.get(pe.name, 0) + sum(n for _qi, n in granted)
        return Dispatch(task.job_id, task.task_id, [(qi.cqueue, qi.host, n) for qi, n in granted], pe.name)
    return None


def pe_hosts(a: Assignment, book: Book, ranked: Sequence[QInstance], pe: PE,
             reasons: list[str]) -> Iterable[list[QInstance]]:
    """The queue instances that offer PE ``pe`` and a slot to the task,
    grouped by host, hosts in most-suitable-first (queue sort) order."""
    snap, task = a.snap, a.task
    if type(reasons) is Discard and book.quota_ledger is None and not (
            task.soft_requests or task.soft_queues or task.master_queues):
        # no reason wanted, no sort of all of them: only as many hosts as the allocation takes
        return LazyHosts(ranked, lambda q: pe.name in q.pe_list and fits(a, book, q, 1) is None)
    by_host: dict[str, list[QInstance]] = {}
    fitting: list[QInstance] = []
    for qi in ranked:
        if pe.name not in qi.pe_list:
            where = qi.name if any(pe.name in q.pe_list for q in a.siblings(qi)) else qi.cqueue
            reasons.append(f'cannot run in queue "{where}" because PE "{pe.name}" is not in PE list')
            continue
        why = fits_within_quotas(a, book, qi, 1, pe.name)
        if why:
            reasons.append(why)
            continue
        fitting.append(qi)
    for qi in by_soft_violations(a, book, fitting):
        by_host.setdefault(qi.host, []).append(qi)
    hosts = list(by_host.values())
    if task.master_queues:
        # qsub(1) -masterq: the master task's instance is granted first, so
        # hosts with one come first, and it first on its host
        def not_master(q: QInstance) -> bool:
            return not queues_match(task.master_queues, q, snap)

        hosts = sorted((sorted(h, key=not_master) for h in hosts), key=lambda h: not_master(h[0]))
    return hosts


def could_hold(book: Book, ranked: Sequence[QInstance], pe: PE, ranges: Sequence[tuple[int, int]]) -> bool:
    """Whether the free slots of the instances of ``ranked`` that offer
    ``pe`` (and the PE's own free slots) reach the smallest count of
    ``ranges`` its allocation_rule takes: if not, no placement can (each
    other limit takes slots away, none adds any)."""
    rule = pe.allocation_rule
    least = smallest_in_ranges(ranges, int(rule) if rule.isdigit() else 1)
    if least is None or pe.slots - book.pe_used.get(pe.name, 0) < least:
        return False
    used, name, free = book.qi_used, pe.name, 0
    for qi in ranked:  # until they hold that many
        if name in qi.pe_list:
            n = qi.slots - used[qi.name]
            if n > 0:
                free += n
                if free >= least:
                    return True
    return False


def smallest_in_ranges(ranges: Sequence[tuple[int, int]], step: int = 1) -> int | None:
    """The smallest slot count :func:`largest_in_ranges` takes from ``ranges``
    (when its ``most`` is that or more: it never takes one with less), or None."""
    least = None
    for lo, hi in ranges:
        n = -(-max(lo, 1) // step) * step  # the first multiple of step from lo (and 1) up
        if n <= hi and (least is None or n < least):
            least = n
    return least


def largest_in_ranges(ranges: Sequence[tuple[int, int]], most: int, step: int = 1) -> int | None:
    """The largest slot count of the ``-pe`` ranges not above ``most`` (and a
    multiple of ``step``, an integer allocation_rule), or None."""
    best = None
    for lo, hi in ranges:
        n = min(hi, most)
        n -= n % step
        if n >= max(lo, 1) and (best is None or n > best):
            best = n
    return best


def _take(a: Assignment, book: Book, qi: QInstance, want: int, master: bool, pe: str) -> int:
    """Book the most slots, up to ``want``, that ``qi`` can take; return how
    many it took (0: none, and nothing booked)."""
    hi = min(want, qi.slots - book.qi_used[qi.name])
    if hi < 1:
        return 0
    if fits_within_quotas(a, book, qi, hi, pe) is None:  # all it may take (the usual case)
        lo = hi
    elif hi == 1 or fits_within_quotas(a, book, qi, 1, pe) is not None:
        return 0
    else:
        lo, hi = 1, hi - 1
    while lo < hi:  # fitting is monotone in the slot count
        mid = (lo + hi + 1) // 2
        if fits_within_quotas(a, book, qi, mid, pe) is None:
            lo = mid
        else:
            hi = mid - 1
    book.book(a.snap.complexes, qi, a.task.requests, lo, master)
    return lo


class Grants:
    """Slots granted per queue instance, in grant order: the first is the
    master queue."""

    __slots__ = ("pe", "items", "debits")

    def __init__(self, pe: str) -> None:
        self.pe = pe
        self.items: dict[str, tuple[QInstance, int]] = {}
        self.debits: list[QuotaRequest] = []  # quota requests debited while placing, undone afterwards

    def copy(self) -> Grants:
        """The same grants, without the quota debits (a trial's own)."""
        g = Grants(self.pe)
        g.items = dict(self.items)
        return g

    @property
    def total(self) -> int:
        """The slots granted."""
        return sum(n for _qi, n in self.items.values())

    def take(self, a: Assignment, book: Book, qi: QInstance, want: int) -> int:
        task = a.task
        first = not self.items
        if task.master_queues and qi.name not in self.items:
            # -masterq: the master task only in a matching instance; an
            # instance admitted by -masterq alone holds nothing else
            if first and not queues_match(task.master_queues, qi, a.snap):
                return 0
            if not first and not queues_match(task.queues, qi, a.snap):
                return 0
            if not queues_match(task.queues, qi, a.snap):
                want = 1
        k = _take(a, book, qi, want, first, self.pe)
        if k:
            held = self.items.get(qi.name)
            self.items[qi.name] = (qi, (held[1] if held else 0) + k)
            if book.quota_ledger is not None:  # later grants of this job see the quota these use
                req = quota_request(task, qi.cqueue, qi.host, k, self.pe, first)
                book.quota_ledger.debit(req)
                self.debits.append(req)
        return k

    def undo_quotas(self, book: Book) -> None:
        if book.quota_ledger is not None:
            for req in self.debits:
                book.quota_ledger.debit(req, -1)
        self.debits = []

    def booked(self) -> Granted:
        return list(self.items.values())


def fill_up(a: Assignment, book: Book, hosts: Iterable[list[QInstance]], limit: int, pe: str) -> Grants:
    """$fill_up: all available slots of the best host, then the next ones."""
    g = Grants(pe)
    for host_qis in hosts:
        for qi in host_qis:
            if g.total >= limit:
                return g
            g.take(a, book, qi, limit - g.total)
    return g


def round_robin(a: Assignment, book: Book, hosts: Iterable[list[QInstance]], limit: int, pe: str) -> Grants:
    """$round_robin: one slot per suitable host in turn, again from the first
    host while slots are still wanted."""
    g = Grants(pe)
    progress = True
    while progress and g.total < limit:
        progress = False
        for host_qis in hosts:
            if g.total >= limit:
                break
            if any(g.take(a, book, qi, 1) for qi in host_qis):
                progress = True
    return g


def per_host(a: Assignment, book: Book, hosts: Iterable[list[QInstance]], limit: int, pe: str,
             count: int) -> Grants:
    """An integer allocation_rule: exactly ``count`` slots on each host used."""
    g = Grants(pe)
    for host_qis in hosts:
        if limit - g.total < count:
            break
        trial, h = book.trial(), g.copy()
        for qi in host_qis:
            h.take(a, trial, qi, g.total + count - h.total)
        if h.total == g.total + count:
            book.commit(trial)
            g.items, g.debits = h.items, g.debits + h.debits
        else:
            h.undo_quotas(trial)
    return g


def assign_pe(a: Assignment, book: Book, hosts: Iterable[list[QInstance]], pe: PE,
              ranges: Sequence[tuple[int, int]]) -> tuple[Granted | None, int, Book | None]:
    """(grants, offered, booked copy): the grants for the largest count of
    ``ranges`` that ``pe``'s allocation_rule can place (None if none can),
    the most slots it could place, and the working copy with them booked."""
    most = min(max(hi for _lo, hi in ranges), pe.slots - book.pe_used.get(pe.name, 0))
    if most < 1:
        return None, max(most, 0), None
    rule = pe.allocation_rule
    if rule == "$pe_slots":
        return assign_one_host(a, book, hosts, ranges, most, pe.name)
    place: Callable[[Book, int], Grants]
    step = 1
    if rule == "$fill_up":
        def place(b: Book, n: int) -> Grants:
            return fill_up(a, b, hosts, n, pe.name)
    elif rule == "$round_robin":
        def place(b: Book, n: int) -> Grants:
            return round_robin(a, b, hosts, n, pe.name)
    else:
        step = int(rule)

        def place(b: Book, n: int) -> Grants:
            return per_host(a, b, hosts, n, pe.name, step)
    trial = book.trial()
    g = place(trial, most - most % step)
    g.undo_quotas(trial)
    n = largest_in_ranges(ranges, g.total, step)
    if n is None:
        return None, g.total, None
    if n != g.total:
        trial = book.trial()
        g = place(trial, n)
        g.undo_quotas(trial)
    return g.booked(), g.total, trial


def assign_one_host(a: Assignment, book: Book, hosts: Iterable[list[QInstance]], ranges: Sequence[tuple[int, int]],
                    most: int, pe: str) -> tuple[Granted | None, int, Book | None]:
    """$pe_slots: the whole range on one host; the host that holds the
    largest count of the range, the most suitable one among equals."""
    best: tuple[int, list[QInstance], tuple[Grants, Book] | None] | None = None
    offered = 0
    for host_qis in hosts:
        trial = book.trial()
        g = fill_up(a, trial, [host_qis], most, pe)
        g.undo_quotas(trial)
        offered = max(offered, g.total)
        n = largest_in_ranges(ranges, g.total)
        if n is not None and (best is None or n > best[0]):
            best = (n, host_qis, (g, trial) if n == g.total else None)
            if n >= most:  # no later host can hold more: this one is the most suitable
                break
    if best is None:
        return None, offered, None
    if best[2] is not None:  # that trial booked just the count: filling up again books the same
        g, trial = best[2]
        return g.booked(), g.total, trial
    trial = book.trial()
    g = fill_up(a, trial, [best[1]], best[0], pe)
    g.undo_quotas(trial)
    return g.booked(), g.total, trial


class LazyHosts:
    """The suitable hosts of a PE placement (lists of queue instances, hosts
    in the order of their first suitable instance in ``ranked``), found only
    as far as the allocation rule walks them: ``$pe_slots`` usually stops at
    the first host.  Iterable again and again, like the list it stands for;
    ``fits(qi)`` must not change while it is in use (no quotas: their
    ledger is shared with the trials)."""

    def __init__(self, ranked: Sequence[QInstance], fits: Callable[[QInstance], bool]) -> None:
        self._ranked = ranked
        self._fits = fits
        self._pos = 0
        self._hosts: list[list[QInstance]] = []
        self._seen: set[str] = set()

    def __iter__(self) -> Iterator[list[QInstance]]:
        i = 0
        while i < len(self._hosts) or self._advance():
            yield self._hosts[i]
            i += 1

    def _advance(self) -> bool:
        """Find the next host with a suitable instance; False at the end."""
        ranked, fits_ = self._ranked, self._fits
        while self._pos < len(ranked):
            qi = ranked[self._pos]
            self._pos += 1
            if qi.host in self._seen or not fits_(qi):
                continue
            host = qi.host
            self._seen.add(host)
            # the host's later instances (a scan: the allocation usually stops at the first host)
            self._hosts.append([qi, *(q for q in ranked[self._pos:] if q.host == host and fits_(q))])
            return True
        return False
