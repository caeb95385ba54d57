"""What each scheduling pass counts of a job's dispatched tasks, kept between passes.

A pass (``ConfigState.snapshot``, ``LoadControl``) needs, of every job, the
slots its tasks hold in each queue instance and parallel environment, the
consumables they book (complex(5)), the resource map instances they hold
(sge_rsmap(5)), their entries of the schedule (sched_conf(5)), the resource
quota requests they hold (sge_resource_quota(5)), the running tasks load
control looks at, the job's sge_priority(5) facts, and its pending tasks as
the scheduler takes them.  None of that
changes unless the job does: :class:`RunningJobs` keeps it per job, with
the parts of the job it was counted from, and counts a job again only when
one of those parts is another object or has another value.

The parts are compared by identity where the qmaster replaces an object
to change it (a task's ``granted`` list, the job's ``hard_resources`` or
``pe`` request: the entry keeps the old object alive, so its identity
cannot be taken by a new one) and by value where it changes one in place
(a task's state, start time and suspension causes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from minisge import scheduler
from minisge.qmaster.job import RUNNING, Job
from minisge.qmaster.job_facts import deadline_time, job_facts
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.job_order import JobFacts
from minisge.scheduler.load_alarms import RunningTask
from minisge.scheduler.quota import QuotaRequest

#: what a pass's snapshot takes of a job (RunningJob.snapshot_entry)
SnapshotEntry = list[scheduler.PendingTask] | JobFacts | None

#: the parts of a job's request that what a pass counts of it comes from
_SPEC_PARTS = ("hard_resources", "pe", "project", "deadline", "hard_queues", "soft_resources", "soft_queues",
               "master_queues", "ar", "interactive", "reserve")


def _key(job: Job) -> tuple[Any, ...]:
    """The parts of ``job`` what a pass counts of it comes from (the
    configuration's, :class:`RunningJobs` compares once for all jobs).  A
    task's suspension causes are a set: two equal sets may list their
    causes in another order, which only counts the job again."""
    spec = job.spec
    key = (job.owner, job.group, job.priority, job.submission_time, job.execution_time, not job.pending,
           *map(spec.get, _SPEC_PARTS))
    for t in job.tasks.values():
        key += (t, t.state, t.start_time, t.granted, t.granted_pe, tuple(t.suspended_by) if t.suspended_by else ())
    return key


class RunningJob:
    """One job as the passes count it (see the module)."""

    __slots__ = ("_job_duration", "key", "used", "pe_used", "debits", "resource_maps", "schedule_entries",
                 "quota_requests", "running_tasks", "_facts", "_pending", "_entry")

    def __init__(self, job: Job, key: tuple[Any, ...], cx: ComplexIndex, durations: tuple[float, float],
                 job_duration: Callable[[Any, float], float]) -> None:
        self.key = key
        self._job_duration = job_duration
        spec = job.spec
        requests = dict(spec.get("hard_resources") or {})
        project = spec.get("project") or None
        default_duration, offset = durations
        used: list[tuple[str, int]] = []
        pe_used: list[tuple[str, int]] = []
        debits: list[tuple[str, str, tuple[tuple[str, float], ...]]] = []
        maps: list[tuple[str, str, list[str]]] = []
        entries: list[scheduler.ScheduleEntry] = []
        quota_requests: list[QuotaRequest] = []
        running: list[RunningTask] = []
        duration = None
        for t in job.tasks.values():
            if not t.granted:
                continue
            slots = 0
            for i, g in enumerate(t.granted):
                qi = g.qinstance
                used.append((qi, g.slots))
                slots += g.slots
                debits.append((qi, g.host, scheduler.debits(cx, requests, g.slots, i == 0)))
                for name, ids in g.resource_map.items():
                    maps.append((g.host, name, ids))
                quota_requests.append(QuotaRequest(
                    user=job.owner, project=project, pe=t.granted_pe or None, cqueue=g.cqueue, host=g.host,
                    slots=g.slots, requests=requests, master=i == 0, group=job.group or None))
            if t.granted_pe:
                pe_used.append((t.granted_pe, slots))
            if duration is None:
                duration = job_duration(requests.get("h_rt"), default_duration) + offset
            entries.append(scheduler.ScheduleEntry(
                job.number, t.task_id, "SUSPENDED" if t.suspended else "RUNNING", t.start_time, duration,
                tuple((g.cqueue, g.host, g.slots) for g in t.granted), requests, t.granted_pe or None))
            if t.state == RUNNING:
                running.append(RunningTask(job.number, t.task_id, t.start_time,
                                           tuple((g.qinstance, g.slots) for g in t.granted),
                                           frozenset(t.suspended_by)))
        self.used = tuple(used)
        self.pe_used = tuple(pe_used)
        self.debits = tuple(debits)
        self.resource_maps = tuple(maps)
        self.schedule_entries = tuple(entries)
        self.quota_requests = tuple(quota_requests)
        self.running_tasks = tuple(running)
        self._facts: JobFacts | None = None
        self._pending: tuple[tuple[int, ...], list[scheduler.PendingTask]] | None = None
        # (free slots, tasks taken, whether they were cut by the cap, the entry) of snapshot_entry
        self._entry: tuple[int, int, bool, SnapshotEntry] | None = None

    def facts(self, job: Job, now: float) -> JobFacts:
        """sge_priority(5)'s facts of the job (a ``-dl`` deadline without a
        year is read in the year of ``now``: such a job's are not kept)."""
        if self._facts is not None:
            return self._facts
        f = job_facts(job, now)
        if not job.spec.get("deadline"):
            self._facts = f
        return f


    def snapshot_entry(self, job: Job, free: int, now: float, default_duration: float) -> SnapshotEntry:
        """What a pass's snapshot takes of the job when the cell has ``free``
        slots: None if it is held as a whole; its pending tasks that may
        start, no more than ``free`` (nor than its ``-tc`` allows; tasks
        with a hold of their own or waiting for ``-hold_jid_ad``
        predecessors left out), if there are some; else its sge_priority(5)
        facts, for the urgency range.  Kept until :class:`RunningJobs`
        looks at the job again (:meth:`RunningJobs.count`: every change of
        the job), for the passes whose free slots take the same tasks (not
        for a ``-dl`` job: its deadline is read in the year of ``now``)."""
        kept = self._entry
        if kept is not None and (free == kept[0] or (not kept[2] and free >= kept[1])):
            return kept[3]
        held = job.held_pending()  # qhold of the job (None) or of some of its tasks
        entry: SnapshotEntry
        taken, cut = 0, False
        if held is None:
            entry = None
        elif not job.pending:  # nothing to start: it counts for the urgency range
            entry = self.facts(job, now)
        else:
            spec = job.spec
            cap = free
            if cap and spec.get("tc"):
                cap = min(cap, max(0, int(spec["tc"]) - len(job.tasks)))
            # -hold_jid_ad: tasks waiting for their predecessor tasks are not considered
            skip = job.ad_held | held if held else job.ad_held
            eligible = job.pending.first(cap, skip=skip) if cap else []
            taken, cut = len(eligible), len(eligible) >= cap
            entry = self.pending_tasks(job, eligible, now, default_duration) if eligible else self.facts(job, now)
        if not job.spec.get("deadline"):
            self._entry = (free, taken, cut, entry)
        return entry

    def pending_tasks(self, job: Job, eligible: list[int], now: float,
                      default_duration: float) -> list[scheduler.PendingTask]:
        """The scheduler's pending tasks of ``eligible`` (task ids of the job):
        the same objects pass after pass while they are the same tasks (not
        for a ``-dl`` job: its deadline is read in the year of ``now``)."""
        ids = tuple(eligible)
        kept = self._pending
        if kept is not None and kept[0] == ids:
            return kept[1]
        spec = job.spec
        pe_request = spec.get("pe")
        requests = dict(spec.get("hard_resources") or {})
        tasks = scheduler.pending_tasks(dict(
            job_id=job.number, owner=job.owner, priority=job.priority, requests=requests,
            queues=tuple(spec.get("hard_queues") or ()),
            pe=(pe_request["name"], tuple(job.pe_ranges)) if pe_request else None, group=job.group,
            project=spec.get("project") or None, soft_requests=dict(spec.get("soft_resources") or {}),
            soft_queues=tuple(spec.get("soft_queues") or ()), master_queues=tuple(spec.get("master_queues") or ()),
            submission_time=job.submission_time, deadline=deadline_time(spec.get("deadline"), now),
            execution_time=job.execution_time, ar=int(spec.get("ar") or 0),
            duration=self._job_duration(requests.get("h_rt"), default_duration),
            interactive=bool(spec.get("interactive")), reserve=bool(spec.get("reserve"))), eligible)
        if not spec.get("deadline"):
            self._pending = (ids, tasks)
        return tasks


#: the largest amount added and taken away again as it is (many such still sum exactly in a float)
_EXACT = float(2 ** 40)


class CountedSums:
    """The sums a pass takes of what its counted jobs hold: slots per queue
    instance and parallel environment, and complex(5) consumables booked per
    queue instance, host and cell ("the internal bookkeeping will subtract
    from this total the assumed resource consumption by all running jobs":
    per-slot requests times the slots, JOB requests in the master queue,
    complex defaults for the consumables not requested).

    Kept between passes (:meth:`RunningJobs.sums`): a pass adds only the jobs
    counted anew and takes away those counted no longer, so a cell of many
    running jobs costs a pass the jobs that changed.  A sum holds a name only
    while a job holds it, as a count from scratch would.  An amount that is
    not a whole number (or is huge) could leave a rounding error behind when
    taken away again: then every pass sums from scratch, in the jobs' order."""

    __slots__ = ("_members", "used", "pe_used", "per_qi", "per_host", "per_cell", "_holders", "exact",
                 "with_maps")

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._members: dict[int, RunningJob] = {}
        self.used: dict[str, int] = {}  # queue instance -> slots
        self.pe_used: dict[str, int] = {}  # PE -> slots
        self.per_qi: dict[str, dict[str, float]] = {}  # queue instance -> consumable -> booked
        self.per_host: dict[str, dict[str, float]] = {}
        self.per_cell: dict[str, float] = {}
        self._holders: dict[tuple[str, ...], int] = {}  # each key of the sums -> how many grants hold it
        self.exact = True  # every amount added was a whole number
        self.with_maps = 0  # members holding resource map instances

    def update(self, counted: Mapping[int, RunningJob], changed: Collection[int] | None = None) -> CountedSums:
        """The sums of ``counted`` (a pass's count of the jobs); ``self``.
        ``changed``: the only jobs whose count may differ from that of the
        last update (none other was counted anew, added or let go)."""
        if changed is not None and self.exact:
            members = self._members
            for n in changed:
                old, new = members.get(n), counted.get(n)
                if old is new:
                    continue
                if old is not None:
                    self._add(old, -1)
                    del members[n]
                if new is not None:
                    self._add(new, 1)
                    members[n] = new
            if self.exact:
                return self
            changed = None
        if self.exact:
            members = self._members
            known = 0
            for n, rj in counted.items():
                old = members.get(n)
                if old is rj:
                    known += 1
                    continue
                if old is not None:
                    known += 1
                    self._add(old, -1)
                self._add(rj, 1)
            if known < len(members):
                for n, old in members.items():
                    if n not in counted:
                        self._add(old, -1)
            if self.exact:
                self._members = dict(counted)
                return self
        self._reset()  # a fraction was added or taken away: from scratch, in the jobs' order
        for rj in counted.values():
            self._add(rj, 1)
        self._members = dict(counted)
        return self

    def _hold(self, key: tuple[str, ...], sign: int) -> bool:
        """One more (or fewer) grant holds ``key``; whether none does any more."""
        left = self._holders.get(key, 0) + sign
        if left:
            self._holders[key] = left
            return False
        del self._holders[key]
        return True

    def _add(self, rj: RunningJob, sign: int) -> None:
        used, pe_used = self.used, self.pe_used
        for qi, n in rj.used:
            used[qi] = used.get(qi, 0) + sign * n
            if self._hold(("u", qi), sign):
                del used[qi]
        for pe, n in rj.pe_used:
            pe_used[pe] = pe_used.get(pe, 0) + sign * n
            if self._hold(("p", pe), sign):
                del pe_used[pe]
        if rj.resource_maps:
            self.with_maps += sign
        per_cell = self.per_cell
        for qi, host, amounts in rj.debits:
            on_qi = self.per_qi.setdefault(qi, {})
            on_host = self.per_host.setdefault(host, {})
            for name, total in amounts:
                if not (float(total).is_integer() and -_EXACT < total < _EXACT):
                    self.exact = False
                amount = sign * total
                for where, sums, key in (("q", on_qi, qi), ("h", on_host, host), ("c", per_cell, "")):
                    sums[name] = sums.get(name, 0.0) + amount
                    if self._hold((where, key, name), sign):
                        del sums[name]
            if self._hold(("q", qi), sign):
                del self.per_qi[qi]
            if self._hold(("h", host), sign):
                del self.per_host[host]

    def booked(self) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], dict[str, float]]:
        """The consumables booked per queue instance, host and in the cell, as copies."""
        return ({qi: dict(v) for qi, v in self.per_qi.items()},
                {h: dict(v) for h, v in self.per_host.items()}, dict(self.per_cell))


def running_tasks(counted: Mapping[int, RunningJob]) -> list[RunningTask]:
    """The running tasks of ``counted`` (a pass's count of the jobs), as load control sees them."""
    return [rt for rj in counted.values() for rt in rj.running_tasks]


class RunningJobs:
    """The passes' counts of every job, kept between passes (see the module)."""

    def __init__(self, job_duration: Callable[[Any, float], float]) -> None:
        self._job_duration = job_duration
        self._jobs: dict[int, RunningJob] = {}
        self._config: tuple[Any, ...] = ()  # the complexes and durations of what is kept
        self._sums = CountedSums()
        # the last count given ``changed`` (the passes'), the one before it and the jobs that may differ between them
        self._delta: tuple[Mapping[int, RunningJob] | None, dict[int, RunningJob], Collection[int]] | None = None
        self._summed: Mapping[int, RunningJob] | None = None  # the count the sums are of

    def _counter(self, cx: ComplexIndex, durations: tuple[float, float]) -> Callable[[Job], RunningJob]:
        """What a pass counts of a job under the complexes ``cx`` and the
        ``durations`` (sched_conf default_duration, duration_offset): kept, or
        counted again if the job changed.  The configuration is compared once
        a pass, here: another one counts every job again."""
        config = (cx, durations)
        if config != self._config:
            self._jobs.clear()
            self._sums = CountedSums()
            self._delta = self._summed = None
            self._config = config
        kept, make = self._jobs, self._job_duration

        def of(job: Job) -> RunningJob:
            key = _key(job)
            found = kept.get(job.number)
            if found is None or found.key != key:
                found = kept[job.number] = RunningJob(job, key, cx, durations, make)
            else:  # the job may have changed in what the key leaves out (its pending tasks, its holds)
                found._entry = None
            return found

        return of

    def count(self, jobs: Mapping[int, Job], cx: ComplexIndex, durations: tuple[float, float],
              changed: Collection[int] | None = None) -> dict[int, RunningJob]:
        """What a pass counts of each of ``jobs`` that has a task or is not
        held as a whole (a held job with no task counts for nothing).

        ``changed``: the passes' jobs are ``jobs`` (the qmaster's
        :class:`minisge.qmaster.job_index.JobIndex`), and these are the
        numbers of those it filed again since the last count given
        ``changed`` (taken, added, changed, let go: the index hears of every
        change of a job, as the qmaster spools each).  The other jobs are
        then counted as they were then, without a look at them: a pass costs
        the jobs that changed, not all that run.  None: every job is looked
        at (its parts compared with those it was counted from)."""
        of = self._counter(cx, durations)
        last = self._delta[1] if self._delta is not None else None
        if changed is None or last is None:
            counted = {n: of(job) for n, job in jobs.items() if job.tasks or job.held_pending() is not None}
        else:
            counted = dict(last)
            for n in changed:
                job = jobs.get(n)
                if job is not None and (job.tasks or job.held_pending() is not None):
                    counted[n] = of(job)
                else:
                    counted.pop(n, None)
        if changed is not None:
            self._delta = (last, counted, changed)
        self.forget_others(counted)
        return counted

    def forget_others(self, numbers: Any) -> None:
        """Drop what was kept of jobs not in ``numbers`` (the jobs of the pass)."""
        if len(self._jobs) > 2 * len(numbers) + 64:  # now and then, not each pass
            for n in [n for n in self._jobs if n not in numbers]:
                del self._jobs[n]

    def sums(self, counted: Mapping[int, RunningJob]) -> CountedSums:
        """The sums of ``counted`` (a pass's count of the jobs), kept from the
        pass before: read them before the next call.  When ``counted`` is the
        last :meth:`count` given ``changed`` and the sums are of the count
        before it, only the jobs changed in between are added and taken away."""
        delta = self._delta
        if delta is not None and counted is delta[1] and delta[0] is not None and self._summed is delta[0]:
            self._sums.update(counted, delta[2])
        else:
            self._sums.update(counted)
        self._summed = counted
        return self._sums
