"""The qmaster's model of a job and its array tasks.

A job is its submission request (the dict ``qsub`` sends, see
:mod:`minisge.formats.submit_options`) plus what happened since: which tasks are
still pending, which were dispatched, holds and predecessors.  Pending
array tasks are a range list (:class:`minisge.qmaster.range_list.RangeList`,
as Grid Engine keeps them); a task gets a :class:`Task` record only when it
is dispatched (or put in error), and leaves the job when it ends (the
accounting file keeps it), so a 75,000-task array costs one range.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import attrs

from minisge.formats import rsmap
from minisge.qmaster.range_list import RangeList

RUNNING = "running"
ERROR = "error"  # Eqw: waits for qmod -cj
RESCHEDULING = "rescheduling"  # Rq: qmod -r, its run is being killed; pending once it ended


@attrs.define
class Grant:
    """Slots granted in one queue instance, and the instances of each
    resource map (sge_rsmap(5)) granted with them on its host."""

    cqueue: str
    host: str
    slots: int
    resource_map: dict[str, list[str]] = attrs.field(factory=dict)

    @property
    def qinstance(self) -> str:
        return f"{self.cqueue}@{self.host}"


@attrs.define
class Task:
    task_id: int
    state: str = RUNNING
    start_time: float = 0.0
    granted: list[Grant] = attrs.field(factory=list)
    granted_pe: str = ""
    restarted: int = 0
    delete_requested: bool = False
    error_reason: str = ""
    # why the task is stopped: "job" (qmod -sj), "queue" (qmod -sq of its queue
    # instance), "threshold" (suspend_thresholds), "subordinate" (subordinate_list);
    # stopped while non-empty (minisge.qmaster.job_control)
    suspended_by: set[str] = attrs.field(factory=set, converter=set)

    @property
    def suspended(self) -> bool:
        return bool(self.suspended_by)

    def resource_map_text(self) -> str:
        """sge_rsmap(5): the instances the task holds, as Open Cluster Scheduler's
        ``qstat -j`` shows them (``gpu=host1=(0 1),gpu=host2=(0)``); "" if none."""
        hosts = dict.fromkeys(g.host for g in self.granted)
        return ",".join(f"{name}={host}=({rsmap.id_text(ids)})"
                        for host in hosts for name, ids in sorted(self.resource_map_on(host).items()) if ids)

    def resource_map_on(self, host: str) -> dict[str, list[str]]:
        """sge_rsmap(5): the instances of each resource map the task holds on ``host``."""
        out: dict[str, list[str]] = {}
        for g in self.granted:
            if g.host == host:
                for name, ids in g.resource_map.items():
                    out.setdefault(name, []).extend(ids)
        return out

    @property
    def slots(self) -> int:
        return sum(g.slots for g in self.granted)

    @property
    def master(self) -> Grant | None:
        return self.granted[0] if self.granted else None


#: strings longer than this stay as they are (a script, a long -v value: no gain in sharing them)
_INTERN_MAX = 4096


def shared_text(value: str) -> str:
    """A short string as the one copy every job holding it shares (sys.intern):
    the words of a long queue's specs (``SGE_O_HOME``, ``/bin/true``, the
    owner...) repeat from job to job."""
    return sys.intern(value) if type(value) is str and len(value) <= _INTERN_MAX else value


def shared_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The job's request with its keys and short strings shared
    (:func:`shared_text`), at every depth, and without its options that are
    None (qsub sends ~20 of its ~50 so: the spec is read with ``get``, and an
    option that is not there is None all the same); changed in place (the
    same dict, lists and maps), so whoever holds them sees the same values."""
    for key in [k for k, v in spec.items() if v is None]:
        del spec[key]
    _share(spec)
    return spec


def _share(value: Any) -> None:
    if type(value) is dict:
        items = [(shared_text(k), shared_text(v) if type(v) is str else v) for k, v in value.items()]
        value.clear()
        value.update(items)
        for v in value.values():
            if type(v) in (dict, list):
                _share(v)
    elif type(value) is list:
        for i, v in enumerate(value):
            if type(v) is str:
                value[i] = shared_text(v)
            elif type(v) in (dict, list):
                _share(v)


def pending_tasks(value: RangeList | Iterable[int]) -> RangeList:
    """A job's pending tasks from a range list or from ids (tests, old spools)."""
    return value if isinstance(value, RangeList) else RangeList.of_ids(value)


@attrs.define
class Job:
    """A job (see the module); its texts shared with other jobs' where equal
    (:func:`shared_spec`: a long queue of like jobs costs one copy of them)."""

    number: int
    name: str = attrs.field(converter=shared_text)
    owner: str = attrs.field(converter=shared_text)
    uid: int
    group: str = attrs.field(converter=shared_text)
    gid: int
    submission_time: float
    spec: dict[str, Any] = attrs.field(converter=shared_spec)
    pending: RangeList = attrs.field(factory=RangeList, converter=pending_tasks)
    tasks: dict[int, Task] = attrs.field(factory=dict)
    user_hold: bool = False
    operator_hold: bool = False
    system_hold: bool = False
    predecessors: list[int] = attrs.field(factory=list)  # -hold_jid: JB_jid_predecessor_list
    restarted_pending: dict[int, int] = attrs.field(factory=dict)  # task -> restart count
    priority: int = 0
    execution_time: float = 0.0  # qsub -a in seconds since the epoch (JB_execution_time; 0: none)
    # -hold_jid_ad: the array jobs whose tasks this one's wait for (JB_ja_ad_predecessor_list),
    # and the pending tasks that wait now (JB_ja_a_h_ids; minisge.qmaster.job_dependencies)
    ad_predecessors: list[int] = attrs.field(factory=list)
    ad_held: set[int] = attrs.field(factory=set, converter=set)
    # qhold/qrls JOB.TASK: the holds (letters of "uos") of pending tasks that
    # differ from the job's own (user_hold, operator_hold, system_hold, which
    # every other task has), as 8.1.9 keeps a hold per task (JB_ja_u_h_ids...)
    task_holds: dict[int, str] = attrs.field(factory=dict)

    @property
    def is_array(self) -> bool:
        return self.spec.get("array") is not None

    @property
    def array(self) -> tuple[int, int, int]:
        """qsub -t as submitted (first, last, step); (1, 1, 1) for a job that is no array."""
        a = self.spec.get("array")
        return (int(a[0]), int(a[1]), int(a[2])) if a else (1, 1, 1)

    @property
    def held(self) -> bool:
        """The job as a whole waits: a hold on it (and on every task of it,
        none released alone) or a -hold_jid predecessor."""
        return bool(self.predecessors) or (bool(self.hold_letters) and not self.task_holds)

    @property
    def hold_letters(self) -> str:
        """The job's own holds (its tasks' without a hold of their own), of ``uos``."""
        return ("u" if self.user_hold else "") + ("o" if self.operator_hold else "") + ("s" if self.system_hold else "")

    def task_hold_letters(self, task_id: int) -> str:
        """The holds of one task, of ``uos``."""
        return self.task_holds.get(task_id, self.hold_letters)

    def task_held(self, task_id: int) -> bool:
        """The task may not be dispatched: a hold on it, or a -hold_jid predecessor."""
        return bool(self.predecessors) or bool(self.task_hold_letters(task_id))

    def held_pending(self) -> set[int] | None:
        """The pending tasks a hold of their own keeps back while the job is
        not held as a whole (None: all of them, the job is held)."""
        if not (self.predecessors or self.task_holds or self.user_hold or self.operator_hold or self.system_hold):
            return set()  # (the usual case, asked of every job by every pass)
        if self.predecessors:
            return None
        if not self.task_holds:
            return None if self.hold_letters else set()
        return {t for t in self.pending if self.task_hold_letters(t)} if self.hold_letters else \
            {t for t, h in self.task_holds.items() if h and t in self.pending}

    def set_hold_letters(self, task_id: int | None, letters: str) -> None:
        """qhold / qrls: the holds (of ``uos``) of one pending task of an
        array, or (``task_id`` None) of the job and all its tasks."""
        letters = "".join(k for k in "uos" if k in letters)
        if task_id is None:
            self.user_hold, self.operator_hold, self.system_hold = ("u" in letters, "o" in letters,
                                                                    "s" in letters)
            self.task_holds.clear()
        elif letters == self.hold_letters:
            self.task_holds.pop(task_id, None)
        else:
            self.task_holds[task_id] = letters

    def normalise_holds(self) -> None:
        """Pending tasks that all have the same holds: those are the job's again."""
        if self.task_holds:
            letters = {self.task_hold_letters(t) for t in self.pending}
            if len(letters) <= 1:
                self.set_hold_letters(None, letters.pop() if letters else self.hold_letters)

    def forget_task_hold(self, task_id: int) -> None:
        """The task left the pending list (dispatched, deleted): its own hold goes."""
        self.task_holds.pop(task_id, None)

    def restore(self, before: Job) -> None:
        """Take back every field of ``before`` (a copy of this job taken before
        a change the spool did not take)."""
        for field in attrs.fields(Job):
            object.__setattr__(self, field.name, getattr(before, field.name))

    def is_done(self) -> bool:
        return not self.pending and not self.tasks

    def unfinished(self, task_id: int) -> bool:
        """The task still has to run or end: pending, running, or in error."""
        return task_id in self.tasks or task_id in self.pending

    def requeue(self, task_id: int, restarted: int = 0) -> None:
        """The task is pending again (``restarted``: its restart count, qstat's R)."""
        self.pending.add(task_id)
        if restarted:
            self.restarted_pending[task_id] = restarted

    def held_tasks(self) -> set[int]:
        """Pending tasks that wait for tasks of their -hold_jid_ad predecessors."""
        return {t for t in self.ad_held if t in self.pending}

    def requested_slots(self) -> int:
        """The least number of slots the job's ``-pe`` range allows (1 without a PE)."""
        pe = self.spec.get("pe")
        if not pe:
            return 1
        return int(min(lo for lo, _hi in pe["ranges"]))

    @property
    def pe_ranges(self) -> list[tuple[int, int]]:
        pe = self.spec.get("pe")
        return [(int(lo), int(hi)) for lo, hi in pe["ranges"]] if pe else []
