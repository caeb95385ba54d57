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

import json
import sys
from collections.abc import Iterable, MutableMapping
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
    share_words(spec)
    return spec


def share_words(value: Any) -> None:
    """The keys and short strings of a request's maps and lists, at every
    depth, made the shared copies (:func:`shared_text`), in place."""
    container = type(value)
    if container is dict:
        members = value.items()
    elif container is list:
        members = enumerate(value)
    else:
        return
    renamed = False
    for k, v in members:  # a value replaced under its key or index: the container keeps its size and order
        kind = type(v)
        if kind is str:
            if len(v) <= _INTERN_MAX and (s := sys.intern(v)) is not v:
                value[k] = s
        elif (kind is dict or kind is list) and v:
            share_words(v)
        if container is dict and not renamed and type(k) is str and sys.intern(k) is not k:
            renamed = True
    if renamed:  # a key that is not the shared copy: the dict made again, in its order
        items = [(shared_text(k), v) for k, v in value.items()]
        value.clear()
        value.update(items)


class _Unchanging:
    """A container shared by many jobs and never changed in place: its
    changing methods raise TypeError (``_REFUSAL`` says what to do instead),
    and a copy of it, shallow or deep, is itself."""

    __slots__ = ()
    _REFUSAL = "a shared container is not changed in place"

    def _refuse(self, *_args: Any, **_kw: Any) -> Any:
        raise TypeError(self._REFUSAL)

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self


class SharedSpec(_Unchanging, dict[str, Any]):
    """A job's request shared by every job that asked the very same
    (:func:`share_equal_spec`: a queue of 100,000 like jobs holds one); never
    changed in place (TypeError): a change to one job's request is made to
    its own copy (:meth:`Job.own_spec`).  A copy of a job holds the same one.
    Held weakly by the table that finds it (``Qmaster.request_shapes``): it
    lives as long as a job holds it."""

    __slots__ = ("__weakref__",)

    _REFUSAL = "a shared job request is not changed in place: Job.own_spec() first"
    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = __ior__ = _Unchanging._refuse


def share_equal_spec(spec: dict[str, Any], shapes: MutableMapping[str, SharedSpec]) -> SharedSpec:
    """The :class:`SharedSpec` equal to ``spec`` from ``shapes`` (the
    qmaster's table of them, by the request's JSON text), or ``spec`` shared
    (:func:`shared_spec`) and added to it."""
    key = json.dumps(spec, separators=(",", ":"))
    found = shapes.get(key)
    if found is None:
        found = shapes[key] = SharedSpec(shared_spec(spec))
    return found


class _NoIds(_Unchanging, list[int]):
    """The empty list of job ids most jobs have (``predecessors``,
    ``ad_predecessors``): one for all of them, never added to (TypeError:
    a job that gets one gets its own list, by assignment)."""

    __slots__ = ()

    _REFUSAL = "an empty shared id list: assign the job a list of its own"
    __setitem__ = append = extend = insert = __iadd__ = __imul__ = _Unchanging._refuse


class _NoTasks(_Unchanging, dict[int, Any]):
    """The empty task map most jobs have (``restarted_pending``,
    ``task_holds``): one for all of them, never added to (TypeError: the
    job's methods give it a map of its own first)."""

    __slots__ = ()

    _REFUSAL = "an empty shared task map: give the job a map of its own"
    __setitem__ = setdefault = update = __ior__ = _Unchanging._refuse


class _NoTaskIds(_Unchanging, set[int]):
    """The empty set of task ids most jobs have (``ad_held``), as :class:`_NoIds`."""

    __slots__ = ()

    _REFUSAL = "an empty shared task id set: assign the job a set of its own"
    add = update = __ior__ = __ixor__ = symmetric_difference_update = _Unchanging._refuse


#: the empty containers every job without such ids shares (:class:`Job`'s memory:
#: five empty containers a job cost ~450 bytes)
NO_IDS: list[int] = _NoIds()
NO_TASKS: dict[int, Any] = _NoTasks()
NO_TASK_IDS: set[int] = _NoTaskIds()


#: the execution time of a job without qsub -a, one float object for all of them
NO_TIME = 0.0


def a_time(value: float) -> float:
    """A job's execution time (0: none, the shared :data:`NO_TIME`)."""
    return float(value) if value else NO_TIME


def id_list(value: Iterable[int]) -> list[int]:
    """A job's list of job ids: its own, or the shared empty one."""
    return value if type(value) is list and value else (list(value) if value else NO_IDS)


def task_map(value: dict[int, Any]) -> dict[int, Any]:
    """A job's map by task id: its own, or the shared empty one."""
    return value if value or isinstance(value, _NoTasks) else NO_TASKS


def task_ids(value: Iterable[int]) -> set[int]:
    """A job's set of task ids: its own copy, or the shared empty one."""
    return set(value) if value else NO_TASK_IDS


#: the letters of the holds user, operator, system (Job.hold_letters), by whether each is on
_HOLD_LETTERS = tuple(tuple(tuple(("u" if u else "") + ("o" if o else "") + ("s" if s else "")
                                  for s in (False, True)) for o in (False, True)) for u in (False, True))


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
    tasks: dict[int, Task] = attrs.field(default=NO_TASKS, converter=task_map)  # add_task() puts one in
    user_hold: bool = attrs.field(default=False, converter=bool)
    operator_hold: bool = attrs.field(default=False, converter=bool)
    system_hold: bool = attrs.field(default=False, converter=bool)
    # the containers below are shared empty ones until the job has such ids
    # (NO_IDS, NO_TASKS, NO_TASK_IDS: assigned, never changed in place)
    predecessors: list[int] = attrs.field(default=NO_IDS, converter=id_list)  # -hold_jid: JB_jid_predecessor_list
    restarted_pending: dict[int, int] = attrs.field(default=NO_TASKS, converter=task_map)  # task -> restart count
    priority: int = 0
    # qsub -a in seconds since the epoch (JB_execution_time; 0: none, one 0.0 for all)
    execution_time: float = attrs.field(default=NO_TIME, converter=a_time)
    # -hold_jid_ad: the array jobs whose tasks this one's wait for (JB_ja_ad_predecessor_list),
    # and the pending tasks that wait now (JB_ja_a_h_ids; minisge.qmaster.job_dependencies)
    ad_predecessors: list[int] = attrs.field(default=NO_IDS, converter=id_list)
    ad_held: set[int] = attrs.field(default=NO_TASK_IDS, converter=task_ids)
    # qhold/qrls JOB.TASK: the holds (letters of "uos") of pending tasks that
    # differ from the job's own (user_hold, operator_hold, system_hold, which
    # every other task has), as 8.1.9 keeps a hold per task (JB_ja_u_h_ids...)
    task_holds: dict[int, str] = attrs.field(default=NO_TASKS, converter=task_map)

    @classmethod
    def plain_from_spool(cls, data: dict[str, Any], shapes: MutableMapping[str, SharedSpec]) -> Job | None:
        """A job of its spool file's data when it is the plain shape of a long
        queue (no task record, no hold or restart of a task of its own, the
        fields of their JSON types), its request shared with the equal ones
        of ``shapes`` (:func:`share_equal_spec`); None for any other (the
        spool's full reading, which says what is wrong with a bad file)."""
        d = data.get
        spec, pending, held = d("spec"), d("pending"), d("ad_held") or []
        if (d("tasks") or d("restarted_pending") or d("task_holds") or type(spec) is not dict
                or type(pending) is not list or not all(type(r) is list and len(r) == 3 for r in pending)):
            return None
        ints = (d("number"), d("uid"), d("gid"), d("priority", 0), *(d("predecessors") or ()),
                *(d("ad_predecessors") or ()), *held, *(x for r in pending for x in r))
        texts = (d("name"), d("owner"), d("group"))
        flags = (d("user_hold", False), d("operator_hold", False), d("system_hold", False))
        times = (d("submission_time"), d("execution_time", 0.0))
        if (not all(type(x) is int for x in ints) or not all(type(x) is str for x in texts)
                or not all(type(x) is bool for x in flags) or not all(type(x) in (int, float) for x in times)
                or not all(type(x) is list for x in (d("predecessors") or [], d("ad_predecessors") or [], held))):
            return None
        return cls(number=data["number"], name=data["name"], owner=data["owner"], uid=data["uid"],
                   group=data["group"], gid=data["gid"], submission_time=float(data["submission_time"]),
                   spec=share_equal_spec(spec, shapes),
                   pending=RangeList([(lo, hi, step) for lo, hi, step in pending],
                                     step=pending[0][2] if pending else 1),
                   user_hold=flags[0], operator_hold=flags[1], system_hold=flags[2],
                   predecessors=d("predecessors") or NO_IDS, priority=d("priority", 0),
                   execution_time=times[1], ad_predecessors=d("ad_predecessors") or NO_IDS,
                   ad_held=held)

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
        return _HOLD_LETTERS[self.user_hold][self.operator_hold][self.system_hold]

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
            self.task_holds = NO_TASKS
        elif letters == self.hold_letters:
            self.task_holds.pop(task_id, None)
        elif not self.task_holds:  # (the shared empty map: a map of its own)
            self.task_holds = {task_id: letters}
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

    def own_spec(self) -> dict[str, Any]:
        """The job's request as its own to change (a :class:`SharedSpec` is
        copied first: the other jobs that share it keep theirs)."""
        if type(self.spec) is SharedSpec:
            self.spec = dict(self.spec)
        return self.spec

    def add_task(self, task: Task) -> None:
        """A task record (dispatched, in error) into the job's map of them
        (a map of its own at the first: until then the shared empty one)."""
        if not self.tasks:
            self.tasks = {task.task_id: task}
        else:
            self.tasks[task.task_id] = task

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
        if restarted and not self.restarted_pending:  # (the shared empty map: a map of its own)
            self.restarted_pending = {task_id: restarted}
        elif restarted:
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
