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

from collections.abc import Callable, Mapping
from typing import Any

from minisge import scheduler
from minisge.qmaster.job import RUNNING, Job
from minisge.qmaster.job_facts import deadline_time, job_facts
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.job_order import JobFacts
from minisge.scheduler.load_alarms import RunningTask
from minisge.scheduler.quota import QuotaRequest

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
                 "quota_requests", "running_tasks", "_facts", "_pending")

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

    def facts(self, job: Job, now: float) -> JobFacts:
        """sge_priority(5)'s facts of the job (a ``-dl`` deadline without a
        year is read in the year of ``now``: such a job's are not kept)."""
        if self._facts is not None:
            return self._facts
        f = job_facts(job, now)
        if not job.spec.get("deadline"):
            self._facts = f
        return f


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


def running_tasks(counted: Mapping[int, RunningJob]) -> list[RunningTask]:
    """The running tasks of ``counted`` (a pass's count of the jobs), as load control sees them."""
    return [rt for rj in counted.values() for rt in rj.running_tasks]


class RunningJobs:
    """The passes' counts of every job, kept between passes (see the module)."""

    def __init__(self, job_duration: Callable[[Any, float], float]) -> None:
        self._job_duration = job_duration
        self._jobs: dict[int, RunningJob] = {}
        self._config: tuple[Any, ...] = ()  # the complexes and durations of what is kept

    def of(self, job: Job, cx: ComplexIndex, durations: tuple[float, float]) -> RunningJob:
        """What a pass counts of ``job``: kept, or counted again if it changed."""
        config = (cx, durations)
        if config != self._config:  # another configuration: every job is counted again
            self._jobs.clear()
            self._config = config
        key = _key(job)
        found = self._jobs.get(job.number)
        if found is not None and found.key == key:
            return found
        found = self._jobs[job.number] = RunningJob(job, key, cx, durations, self._job_duration)
        return found

    def forget_others(self, numbers: Any) -> None:
        """Drop what was kept of jobs not in ``numbers`` (the jobs of the pass)."""
        if len(self._jobs) > 2 * len(numbers) + 64:  # now and then, not each pass
            for n in [n for n in self._jobs if n not in numbers]:
                del self._jobs[n]
