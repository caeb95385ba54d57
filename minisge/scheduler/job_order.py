"""The order in which a scheduling pass considers pending jobs: sge_priority(5).

Pure: no I/O and no clock (``now`` is an argument).  The scheduler sorts
its pending tasks with :func:`dispatch_order`; ``qstat -pri``/``-urg``/``-r``
print the :class:`Figures` of :func:`figures`, so what qstat shows is what
the scheduler uses.

sge_priority(5)::

    prio    = weight_priority * npprior + weight_urgency * nurg + weight_ticket * ntckts
    urg     = rrcontr + wtcontr + dlcontr
    rrcontr = sum over the hard requests (the implicit ``slots`` one included) of
              urgency * assumed_slot_allocation * request   (numeric complexes)
              urgency                                       (string complexes)
    wtcontr = weight_waiting_time * seconds waited
    dlcontr = weight_deadline / seconds left until the -dl deadline (at least 1)

As Grid Engine computes them (sge_urgency.c, sgeee.c, sge_support.c):

- ``npprior`` is the POSIX priority (``-p``, kept offset by 1024) normalized
  over the fixed range 0..2048;
- ``nurg`` is the urgency normalized over the jobs the scheduler considers
  (pending and running, not held): (urg - min) / (max - min), 0.5 when the
  range is empty (``sge_normalize_value``);
- ``ntckts`` is the job's tickets (:mod:`minisge.scheduler.tickets`: share
  tree, functional, override) normalized over 0..the most any job has; 0.5
  for every job when no job has tickets (the range is empty);
- the assumed slot allocation of a ``-pe`` range is its only value when it has
  one, else what the PE's ``urgency_slots`` says (min, max, avg, or a number;
  the first matching PE for a wildcard);
- jobs are taken by decreasing ``prio``, then increasing job number
  (``sgeee_sort_jobs``), the tasks of an array in task order.

One deliberate simplification: Grid Engine's scheduler recomputes a running
job's waiting time up to *now* for the normalization range, while qstat
shows the value the job had when it was dispatched.  Here a running job
waited until its start, for both, so qstat and the scheduler agree.

Plain data, as a test or a teacher writes it:

>>> w = Weights(priority=0.0, urgency=0.5, ticket=0.5, waiting_time=0.278)
>>> cx = {"slots": Urgency("slots", "INT", "1000")}
>>> jobs = [JobFacts(1, submission_time=100.0), JobFacts(2, submission_time=90.0),
...         JobFacts(3, submission_time=100.0, pe=("smp", ((4, 4),)))]
>>> f = figures(jobs, cx, {}, w, now=110.0)
>>> [round(f[j].urg, 2) for j in (1, 2, 3)]
[1002.78, 1005.56, 4002.78]
>>> from minisge.scheduler.snapshot import PendingTask
>>> [t.job_id for t in dispatch_order([PendingTask(j, 1, "alice") for j in (1, 2, 3)], f)]
[3, 2, 1]
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

from minisge.formats.sched_conf import SchedConf
from minisge.formats.sge_types import SpecifierError, parse_number

PRIORITY_OFFSET = 1024  # JB_priority = -p + 1024
PRIORITY_RANGE = 2048.0  # sge_do_priority normalizes over 0..2048
EPSILON = 1e-11  # SGE_EPSILON
RANGE_INFINITY = 9999999
_NUMERIC = ("INT", "DOUBLE", "MEMORY", "TIME", "BOOL", "RSMAP")


@dataclass(frozen=True)
class Weights:
    """The sched_conf(5) weights of the priority formula.  The defaults
    order plain snapshots by ``-p`` alone, then by job number (the daemon
    always passes its cell's :meth:`from_sched_conf`)."""

    priority: float = 1.0
    urgency: float = 0.0
    ticket: float = 0.0
    waiting_time: float = 0.0
    deadline: float = 3600000.0

    @classmethod
    def from_sched_conf(cls, sconf: SchedConf) -> Weights:
        """``weight_priority``, ``weight_urgency``, ``weight_ticket``,
        ``weight_waiting_time`` and ``weight_deadline`` of a sched_conf model."""
        return cls(
            priority=float(sconf.weight_priority), urgency=float(sconf.weight_urgency),
            ticket=float(sconf.weight_ticket), waiting_time=float(sconf.weight_waiting_time),
            deadline=float(sconf.weight_deadline),
        )


@dataclass(frozen=True)
class Urgency:
    """What urgency needs of a complex: its name, type and urgency (a
    complex(5) attribute has these; plain data may use this class)."""

    name: str
    type: str
    urgency: str


class UrgencyAttr(Protocol):
    """A complex attribute as urgency reads it (complex(5) ``type``, ``urgency``)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def urgency(self) -> str: ...


class UrgencyComplexes(Protocol):
    """The complex list by name or shortcut (a ComplexIndex, or a dict of :class:`Urgency`)."""

    def get(self, name: str, /) -> UrgencyAttr | None: ...


class UrgencySlots(Protocol):
    """A parallel environment as urgency reads it (sge_pe(5) ``slots``, ``urgency_slots``)."""

    @property
    def slots(self) -> int: ...
    @property
    def urgency_slots(self) -> str: ...


#: a ``-pe`` request: the PE name (wildcards allowed) and its slot ranges
PeRanges = tuple[str, tuple[tuple[int, int], ...]]


class JobFacts(NamedTuple):
    """What a job's priority depends on (a named tuple: one per job per pass)."""

    job_id: int
    posix_priority: int = 0  # -p, -1023..1024
    submission_time: float = 0.0
    waited_until: float | None = None  # a running job's start; None: still waiting (now)
    deadline: float = 0.0  # -dl as seconds since the epoch; 0: none
    requests: tuple[tuple[str, str], ...] = ()  # hard -l as (name, value) pairs, in request order
    pe: PeRanges | None = None  # (name or pattern, ((lo, hi), ...))


class Figures:
    """One job's figures, named as qstat -pri/-urg/-ext print them."""

    __slots__ = ("prio", "nurg", "nppri", "ntckts", "urg", "rrcontr", "wtcontr", "dlcontr", "per_request")

    def __init__(self, prio: float = 0.0, nurg: float = 0.0, nppri: float = 0.0, ntckts: float = 0.0,
                 urg: float = 0.0, rrcontr: float = 0.0, wtcontr: float = 0.0, dlcontr: float = 0.0,
                 per_request: tuple[tuple[str, str, float], ...] = ()) -> None:
        self.prio, self.nurg, self.nppri, self.ntckts, self.urg = prio, nurg, nppri, ntckts, urg
        self.rrcontr, self.wtcontr, self.dlcontr = rrcontr, wtcontr, dlcontr
        self.per_request = per_request  # ((complex name, requested value, contribution), ...)

    def __repr__(self) -> str:
        return "Figures(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


def normalize(value: float, low: float, high: float) -> float:
    """sge_normalize_value: ``value`` mapped onto 0..1 by the range, 0.5 when
    the range is (nearly) empty."""
    if high - low < EPSILON:
        return 0.5
    return (value - low) / (high - low)


def normalized_posix_priority(posix_priority: int) -> float:
    """sge_do_priority: (-p + 1024) normalized over 0..2048."""
    return normalize(posix_priority + PRIORITY_OFFSET, 0.0, PRIORITY_RANGE)


def pe_urgency_slots(setting: str, ranges: Sequence[tuple[int, int]], pe_slots: int) -> int:
    """sge_pe(5) urgency_slots: the slot count assumed for a ``-pe`` range:
    ``min`` its lowest value, ``max`` its highest (the PE's slots for an
    open range), ``avg`` the (truncated) mean of all its values up to the
    PE's slots, a number that number."""
    word = str(setting).strip().lower()
    if word == "min":
        return min(lo for lo, _hi in ranges)
    if word == "max":
        hi = max(hi for _lo, hi in ranges)
        return pe_slots if hi >= RANGE_INFINITY else hi
    if word == "avg":
        total = 0.0
        n = 0
        for lo, hi in ranges:
            top = min(hi, pe_slots) if pe_slots else hi
            if top >= lo:
                count = top - lo + 1
                total += (lo + top) * count / 2
                n += count
        return int(total / n) if n else 0
    if word[:1].isdigit():
        digits = ""
        for ch in word:
            if not ch.isdigit():
                break
            digits += ch
        return int(digits)
    return 1


def _first_matching_pe(pattern: str, pes: Mapping[str, UrgencySlots]) -> UrgencySlots | None:
    if pattern in pes:
        return pes[pattern]
    for name in sorted(pes):
        if fnmatch.fnmatchcase(name, pattern):
            return pes[name]
    return None


def job_slot_request(pe: PeRanges | None, pes: Mapping[str, UrgencySlots]) -> int:
    """sge_job_slot_request: 1 for a sequential job; the one value of a
    ``-pe`` range that has one; else the PE's ``urgency_slots`` rule (the
    first matching PE of a wildcard request; 1 if none matches).  ``pes``
    maps names to objects with ``slots`` and ``urgency_slots``."""
    if not pe:
        return 1
    name, ranges = pe
    if sum(hi - lo + 1 for lo, hi in ranges) == 1:
        return ranges[0][0]
    found = _first_matching_pe(name, pes)
    if found is None:
        return 1
    return pe_urgency_slots(found.urgency_slots, ranges, int(found.slots))


def _number(text: str) -> float:
    """A request's value as Grid Engine holds it (CE_doubleval): memory and
    time specifiers, TRUE/FALSE, numbers; 0 for anything else."""
    try:
        return float(parse_number(str(text).strip()))
    except SpecifierError:
        return 0.0


def _weight(attr: UrgencyAttr) -> float:
    try:
        return float(attr.urgency)
    except (TypeError, ValueError, AttributeError):
        return 0.0


def resource_contribution(requests: Iterable[tuple[str, str]], slots: int,
                          complexes: UrgencyComplexes) -> tuple[float, tuple[tuple[str, str, float], ...]]:
    """rrcontr (centry_urgency_contribution): the implicit ``slots`` request
    (its urgency × slots) plus every hard request: urgency × value × slots for
    a numeric complex, the urgency alone for a string one, nothing for an
    unknown name.  ``complexes`` has ``get(name)`` (or is a dict).  Returns
    the sum and the per-request contributions ``qstat -r`` prints."""
    get = complexes.get
    slots_attr = get("slots")
    if slots_attr is None:  # sge_urgency skips a job when slots is no complex
        return 0.0, tuple((name, value, 0.0) for name, value in requests)
    total = _weight(slots_attr) * slots
    per_request = []
    for name, value in requests:
        attr = get(name)
        if attr is None:
            per_request.append((name, value, 0.0))
            continue
        if str(attr.type) in _NUMERIC:
            c = _weight(attr) * _number(value) * slots
        else:
            c = _weight(attr)
        total += c
        per_request.append((attr.name, value, c))
    return total, tuple(per_request)


def figures(facts: Iterable[JobFacts], complexes: UrgencyComplexes, pes: Mapping[str, UrgencySlots],
            weights: Weights, now: float, ntckts: Mapping[int, float] | None = None,
            ntckts_default: float = 0.5) -> dict[int, Figures]:
    """Every job's :class:`Figures` (sge_do_urgency, sge_do_priority,
    sge_do_sgeee_priority).  ``facts`` are the jobs the scheduler considers
    (pending and running, not held); urgency is normalized over them all.
    The resource contribution is cached per (requests, PE) category.
    ``ntckts``: each job's normalized tickets (:func:`minisge.scheduler.tickets.job_ntckts`),
    ``ntckts_default`` for a job it does not name."""
    nt = ntckts or {}
    out: dict[int, Figures] = {}
    cache: dict[tuple[object, ...], tuple[float, tuple[tuple[str, str, float], ...]]] = {}
    nppri_of: dict[int, float] = {}
    w_wait, w_dead = weights.waiting_time, weights.deadline
    urgs = []
    for f in facts:
        job_id, posix, submitted, until, deadline, requests, pe = f
        key = (requests, pe)
        rr = cache.get(key)
        if rr is None:
            rr = cache[key] = resource_contribution(requests, job_slot_request(pe, pes), complexes)
        wtc = w_wait * max(0.0, (now if until is None else until) - submitted) if w_wait else 0.0
        dtc = w_dead / max(deadline - now, 1.0) if deadline else 0.0
        urg = rr[0] + wtc + dtc
        urgs.append(urg)
        nppri = nppri_of.get(posix)
        if nppri is None:
            nppri = nppri_of[posix] = normalized_posix_priority(posix)
        out[job_id] = Figures(0.0, 0.0, nppri, nt.get(job_id, ntckts_default), urg, rr[0], wtc, dtc, rr[1])
    if not out:
        return out
    low, high = min(urgs), max(urgs)
    wp, wu, wt = weights.priority, weights.urgency, weights.ticket
    span = high - low
    for fig in out.values():
        fig.nurg = 0.5 if span < EPSILON else (fig.urg - low) / span
        fig.prio = wu * fig.nurg + wp * fig.nppri + wt * fig.ntckts
    return out


class Ordered(Protocol):
    """What the order reads of a pending task: its job's number and its own."""

    @property
    def job_id(self) -> int: ...
    @property
    def task_id(self) -> int: ...


OrderedT = TypeVar("OrderedT", bound=Ordered)


def dispatch_order(tasks: Iterable[OrderedT], figs: Mapping[int, Figures]) -> list[OrderedT]:
    """``tasks`` (anything with ``job_id`` and ``task_id``) sorted as the
    scheduler takes them: decreasing priority, then increasing job number,
    then task number (sgeee_sort_jobs)."""
    prio = {job_id: -f.prio for job_id, f in figs.items()}

    def key(t: OrderedT) -> tuple[float, int, int]:
        return (prio.get(t.job_id, 0.0), t.job_id, t.task_id)

    return sorted(tasks, key=key)
