"""What a scheduling pass takes and gives: the snapshot of the cell, and the plan.

Named for what it holds: the immutable picture of the cell a pass works on
(queue instances with their free slots and values, hosts with load and
consumables, the complex list, parallel environments, access lists, quotas,
the pending tasks) and the plan it returns (the dispatches, each job's
reasons and the global messages, as ``qstat -j`` prints them under
"scheduling info:").  Plain data: a test, a teacher or the qmaster builds a
:class:`Snapshot` the same way.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from minisge.formats.access_list import AccessList
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.job_order import JobFacts, Weights
from minisge.scheduler.quota import QuotaContext
from minisge.scheduler.tickets import TicketInput, TicketTask

#: a ``-pe`` request: the PE name (wildcards allowed) and its slot ranges ``((lo, hi), ...)``
PeRequest = tuple[str, tuple[tuple[int, int], ...]]


@dataclass(frozen=True)
class QInstance:
    """A queue instance (queue_conf(5)): where it is, its slots and what it offers."""

    cqueue: str
    host: str
    seq_no: int
    slots: int
    used: int
    qtype: frozenset[str] = frozenset({"BATCH", "INTERACTIVE"})
    pe_list: tuple[str, ...] = ()
    states: str = ""
    values: Mapping[str, str] = field(default_factory=dict)  # complex_values + queue attributes
    consumed: Mapping[str, float] = field(default_factory=dict)  # consumables used in the instance
    user_lists: tuple[str, ...] = ()  # queue_conf(5) access: userset names (empty = NONE)
    xuser_lists: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    xprojects: tuple[str, ...] = ()
    complex_names: frozenset[str] | None = None  # the names in complex_values (None: every name in values)
    load_alarm: str = ""  # state a: the crossed load threshold, in the scheduler's words
    suspend_alarm: str = ""  # state A: the crossed suspend threshold
    name: str = field(init=False, repr=False, compare=False)  # cqueue@host

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", f"{self.cqueue}@{self.host}")

    def in_use(self, used: int, states: str, consumed: Mapping[str, float]) -> QInstance:
        """This queue instance with a pass's use and states: dataclasses.replace
        without its per-field work (a pass makes one of each instance)."""
        new = object.__new__(QInstance)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields["used"], fields["states"], fields["consumed"] = used, states, consumed
        return new

    @property
    def complex_value_names(self) -> frozenset[str]:
        """The attributes of the queue's complex_values (not its built-in limits)."""
        return frozenset(self.values) if self.complex_names is None else self.complex_names


@dataclass(frozen=True)
class HostInfo:
    """An execution host: its load report and complex_values, what is booked
    there, and who may run there (host_conf(5) user_lists, projects)."""

    name: str
    load: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)  # complex_values
    consumed: Mapping[str, float] = field(default_factory=dict)
    user_lists: tuple[str, ...] = ()  # host_conf(5) access: userset names (empty = NONE)
    xuser_lists: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    xprojects: tuple[str, ...] = ()
    # sge_rsmap(5): the instances of each resource map the running jobs hold here
    rsmap_used: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def in_use(self, load: Mapping[str, str], consumed: Mapping[str, float],
               rsmap_used: Mapping[str, tuple[str, ...]]) -> HostInfo:
        """This host with a pass's load, bookings and resource map instances
        (as :meth:`QInstance.in_use`: a pass makes one of each host)."""
        new = object.__new__(HostInfo)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields["load"], fields["consumed"], fields["rsmap_used"] = load, consumed, rsmap_used
        return new


@dataclass(frozen=True)
class PE:
    """A parallel environment (sge_pe(5))."""

    name: str
    slots: int
    used: int
    allocation_rule: str = "$pe_slots"
    user_lists: tuple[str, ...] = ()  # sge_pe(5) access: userset names (empty = NONE)
    xuser_lists: tuple[str, ...] = ()
    job_is_first_task: bool = True
    urgency_slots: str = "min"  # sge_pe(5): the slots a -pe range counts for in urgency


@dataclass(frozen=True)
class Reservation:
    """An advance reservation granted (qrsub(1)): its window, the slots it
    holds per queue instance, the consumables it holds per slot, and the
    slots its running jobs use there now."""

    ar_id: int
    start: float
    end: float
    granted: tuple[tuple[str, int], ...]  # (queue instance name, slots)
    requests: Mapping[str, str] = field(default_factory=dict)  # its -l
    used: Mapping[str, int] = field(default_factory=dict)  # queue instance -> slots of its running jobs
    in_error: bool = False  # state E with qrsub -he y: its jobs do not start (hard error handling)

    def overlaps(self, start: float, end: float) -> bool:
        """Does the window ``[start, end)`` meet the reservation's?"""
        return start < self.end and self.start < end


@dataclass(frozen=True)
class ScheduleEntry:
    """A job's use of resources over time, as a line group of the schedule
    file (sched_conf(5) ``params MONITOR=1``): a running task (``RUNNING``,
    ``SUSPENDED``: from its start to start + ``h_rt`` or ``default_duration``),
    one a pass starts (``STARTING``) or one it reserves for (``RESERVING``,
    qsub -R y).  ``granted`` is ``(cqueue, host, slots)``, the master queue first."""

    job_id: int
    task_id: int
    state: str
    start: float
    duration: float
    granted: tuple[tuple[str, str, int], ...]
    requests: Mapping[str, str] = field(default_factory=dict)  # hard -l: the consumables it books
    pe: str | None = None

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass(frozen=True)
class PendingTask:
    """A pending task of a job, with every request that decides where it may run."""

    job_id: int
    task_id: int
    owner: str
    priority: int = 0
    requests: Mapping[str, str] = field(default_factory=dict)  # hard -l
    queues: tuple[str, ...] = ()  # hard -q (sge_types(5) wc_queue_list)
    pe: PeRequest | None = None
    held: bool = False
    group: str = ""  # the owner's primary group, for @group access list entries
    project: str | None = None  # -P
    soft_requests: Mapping[str, str] = field(default_factory=dict)  # -soft -l: preferred, not required
    soft_queues: tuple[str, ...] = ()  # -soft -q
    master_queues: tuple[str, ...] = ()  # -masterq: where the master task of a PE job may go
    submission_time: float = 0.0  # for the waiting time contribution (sge_priority(5))
    deadline: float = 0.0  # -dl in seconds since the epoch (0: none)
    execution_time: float = 0.0  # -a in seconds since the epoch: not started before (0: none)
    ar: int = 0  # -ar: the advance reservation the job runs in (0: none)
    duration: float = math.inf  # h_rt, or sched_conf(5) default_duration: how long it may hold its slots
    interactive: bool = False  # qrsh, qlogin: a queue of qtype INTERACTIVE (queue_conf(5))
    reserve: bool = False  # qsub -R y: reserve resources while it cannot start (sched_conf(5) max_reservation)


@dataclass(frozen=True)
class Snapshot:
    """The cell as one pass sees it (the scheduler reads no clock: ``now`` is the time of the pass)."""

    qinstances: tuple[QInstance, ...]
    hosts: Mapping[str, HostInfo]
    pending: tuple[PendingTask, ...]  # in submission order
    complexes: ComplexIndex
    pes: Mapping[str, PE] = field(default_factory=dict)
    global_values: Mapping[str, str] = field(default_factory=dict)
    global_consumed: Mapping[str, float] = field(default_factory=dict)
    queue_sort_method: str = "load"
    load_of: Callable[[HostInfo], float] | None = None  # sched_conf(5) load_formula of a host
    acls: Mapping[str, AccessList] = field(default_factory=dict)  # userset name -> access list
    quotas: QuotaContext | None = None  # resource quota sets and their usage (None: no quotas)
    now: float = 0.0  # the time of the pass: waiting time and deadline
    weights: Weights = Weights()  # sched_conf(5) weight_*
    running: tuple[JobFacts, ...] = ()  # the running jobs: urgency is normalized over them too
    hostgroups: Mapping[str, frozenset[str]] = field(default_factory=dict)  # "@name" -> its hosts, resolved
    global_host: HostInfo = HostInfo("global")  # host_conf(5) of the global host: its access lists
    reservations: tuple[Reservation, ...] = ()  # the advance reservations granted (qrsub(1))
    max_reservation: int = 0  # sched_conf(5): how many -R y jobs a pass reserves for
    duration_offset: float = 60.0  # sched_conf(5) params DURATION_OFFSET: added to every job's duration
    running_tasks: tuple[ScheduleEntry, ...] = ()  # when the running tasks free what they hold (reservation)
    tickets: TicketInput | None = None  # the ticket policies' input (None: no tickets, ntckts 0.5)
    ticket_tasks: tuple[TicketTask, ...] = ()  # running tasks, then pending ones in submission order
    # sched_conf(5) schedd_job_info: the pass finds why a job cannot start (False: it only tries to start it)
    explain: bool = True


@dataclass
class Dispatch:
    """A task to start: the queue instances granted, ``(cqueue, host, slots)``, the master queue first."""

    job_id: int
    task_id: int
    granted: list[tuple[str, str, int]]
    pe: str | None = None
    # sge_rsmap(5): per entry of ``granted``, the instances of each resource map granted there
    resource_maps: list[dict[str, list[str]]] = field(default_factory=list)


@dataclass
class Plan:
    """What a pass decided: the dispatches in order, each waiting job's
    reasons, and the pass's global messages (queue instances it dropped for
    every job, in Grid Engine's words and order)."""

    dispatches: list[Dispatch] = field(default_factory=list)
    reasons: dict[int, list[str]] = field(default_factory=dict)  # job_id -> [text]
    global_messages: list[str] = field(default_factory=list)
    reservations: list[ScheduleEntry] = field(default_factory=list)  # -R y jobs reserved for (RESERVING)
    reserved_after: list[int] = field(default_factory=list)  # per reservation: how many dispatches came before it


def _field_defaults() -> tuple[dict[str, Any], dict[str, Callable[[], Any]]]:
    """PendingTask's field defaults: (plain values, factories); None for
    the fields without a default."""
    plain: dict[str, Any] = {}
    factories: dict[str, Callable[[], Any]] = {}
    for f in dataclasses.fields(PendingTask):
        if f.default_factory is not dataclasses.MISSING:
            factories[f.name] = f.default_factory
        else:
            plain[f.name] = None if f.default is dataclasses.MISSING else f.default
    return plain, factories


_PLAIN_DEFAULTS, _FACTORY_DEFAULTS = _field_defaults()


def pending_tasks(common: Mapping[str, Any], task_ids: Iterable[int]) -> list[PendingTask]:
    """``PendingTask(task_id=t, **common)`` for every ``t`` of ``task_ids``,
    made without the frozen dataclass's field-by-field ``__init__`` (the
    snapshot makes one per pending task: 10,000s per pass); the fields left
    out get their defaults, and the tasks are as immutable as any."""
    values = {**_PLAIN_DEFAULTS, **common}
    for name, factory in _FACTORY_DEFAULTS.items():
        if name not in values:
            values[name] = factory()
    if len(values) != len(_PLAIN_DEFAULTS) + len(_FACTORY_DEFAULTS):
        unknown = set(common) - _PLAIN_DEFAULTS.keys() - _FACTORY_DEFAULTS.keys()
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
