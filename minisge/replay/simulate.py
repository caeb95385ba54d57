"""The replay: a trace through the qmaster's own code, in simulated time.

A :class:`minisge.qmaster.qmaster.Qmaster` is built on the configuration
(:mod:`minisge.replay.config`) with a clock the replay sets; every job of
the trace is submitted through ``Qmaster.submit`` (its qsub options parsed by
:func:`minisge.formats.submit_options.parse_submission`, as ``qsub`` parses
them) at its submit time, every task that starts ends through
``Qmaster.task_finished`` after its recorded run time, and a scheduling pass
(``Qmaster.schedule``: snapshot, tickets, :func:`minisge.scheduler.schedule`,
dispatch) runs after each burst of events, as the daemon's scheduler loop
(:mod:`minisge.qmaster.scheduling`) runs one after the events that woke it:
all events of one simulated second are one burst, ends first.  So quotas,
parallel environments, consumables, tickets, urgency and reservation act as
in the daemon.

When the passes run (``passes``):

- ``interval`` (the default): as Grid Engine 8.1.9's scheduler, every
  sched_conf(5) ``schedule_interval`` (a pass at each multiple of it, from
  the trace's epoch), and ``flush_submit_sec``/``flush_finish_sec`` seconds
  after a submission or an end when they are set;
- ``events``: as minisge's daemon, a pass right after every second that had
  a submission or an end (more passes, shorter waits, slower).

In both, a pass is run only when something happened since the last one,
some task is pending and some slot is free: any other pass would start
nothing (nothing else changes what can start: there are no calendars,
``qsub -a`` times or load reports in a replay).  With ``--why`` the passes
of a full cell are run too, for their reasons; they start nothing.

Nothing is written to the cell: the qmaster's spool is :class:`ReplaySpool`
(reads only; a job is not written, an accounting record not appended), and
every execution host of the configuration is up, without load reports
(``queue_sort_method load`` sees equal loads; load thresholds and
subordination do not act).

How a trace's job becomes a submission (documented in docs/teaching.md):

- its owner and group are the trace's (``user7``); they need not exist on
  this machine: the job is submitted by this process's user and then carries
  the trace's owner (RQS ``users``, share tree and the metrics see it);
- a job of more than one slot asks for the configuration's PE (``[replay] pe``,
  else the first PE by name) with exactly that many slots;
- its queue, when the configuration has a queue of that name, is asked with
  ``-q``; otherwise the job goes to any queue (the replay's notes count them);
  a project that the configuration does not have is dropped likewise;
- the trace's requested time, when known, is ``-l h_rt``;
- ``[replay] qsub`` options (e.g. ``-R y``) are added to every job;
- an array job of an accounting file is one job with its tasks (``-t``).
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from minisge.cell import Cell
from minisge.formats import submit_options
from minisge.formats.swf import Trace, TraceJob
from minisge.qmaster import views
from minisge.qmaster.config_state import ConfigState, RequestError
from minisge.qmaster.job import Job, Task, share_words
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.spool import QmasterSpool
from minisge.replay.config import ReplayConfig
from minisge.replay.result import ReplayResult, TaskRun

END, SUBMIT = 0, 1  # the order of events of the same second: ends free slots first
EVENTS, INTERVAL = "events", "interval"  # when passes run (see the module docstring)


class ReplaySpool(QmasterSpool):
    """The replay's spool: in a scratch directory, and no job is written
    (a replay of 10,000 jobs would otherwise write and sync 20,000 files)."""

    def write_job(self, job_id: int, data: dict[str, Any], sync: bool = True, new: bool = False) -> str:
        return self.dir

    def delete_job(self, job_id: int) -> None:
        pass

    def write_jobseqnum(self, n: int) -> None:
        pass

    def write_script(self, job_id: int, text: str, owner: int | None = None, sync: bool = True) -> str:
        return self.script_path(job_id)


class ReplayQmaster(Qmaster):
    """The qmaster of a replay: its own code, with a simulated clock; no
    accounting record or schedule file is written."""

    def append_record(self, record: Any, sync: bool = True) -> None:
        pass

    explain = False  # the pending reasons of a pass are looked for only when --why keeps them

    def write_schedule(self, snap: Any, plan: Any) -> None:
        pass

    def explains_pending(self) -> bool:
        return self.explain and super().explains_pending()

    def new_job_writes(self, job: Job, sync: bool) -> list[Callable[[], str]]:
        return []  # nothing of a replay's job is written (nor turned into its file's data)

    def flush(self, started: Iterable[tuple[Job, Task]] = ()) -> list[tuple[Job, Task]]:
        """Nothing is spooled: the jobs changed since the last flush are filed
        in the job index again, as their writes would file them, and the
        users' usage is not written."""
        self.indexed_jobs()
        self.dirty.clear()
        self.share_usage.unspooled.clear()
        return list(started)


@dataclass
class Replay:
    """One replay's state and what it found out."""

    trace: Trace
    setup: ReplayConfig
    why: int | None = None  # the trace job whose pending reasons are kept per pass
    passes_mode: str = INTERVAL
    now: float = 0.0
    runs: dict[tuple[int, int], TaskRun] = field(default_factory=dict)
    why_passes: list[tuple[float, list[str]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    passes: int = 0


def qsub_argv(job: TraceJob, setup: ReplayConfig, notes: dict[str, int]) -> list[str]:
    cfg = setup.config
    argv = ["-b", "y", "-N", f"trace{job.job_id}", *setup.qsub]
    if job.slots > 1:
        pe = setup.pe or min(cfg.pes, default=None)
        if pe is None:
            key = "jobs of more than one slot, and the configuration has no parallel environment: run on one slot"
            notes[key] = notes.get(key, 0) + 1
        else:
            argv += ["-pe", pe, str(job.slots)]
    if job.queue is not None:
        if job.queue in cfg.cqueues:
            argv += ["-q", job.queue]
        else:
            key = f"jobs of queue {job.queue}, which the configuration does not have: submitted without -q"
            notes[key] = notes.get(key, 0) + 1
    if job.project is not None:
        if job.project in cfg.projects:
            argv += ["-P", job.project]
    if job.requested_time is not None:
        argv += ["-l", f"h_rt={math.ceil(job.requested_time)}"]
    if job.is_array:
        ids = [t for t, _ in job.tasks]
        step = ids[1] - ids[0] if len(ids) > 1 else 1
        if ids == list(range(ids[0], ids[-1] + 1, step)):
            argv += ["-t", f"{ids[0]}-{ids[-1]}:{step}"]
        else:
            argv += ["-t", f"1-{len(ids)}"]
    return [*argv, "/bin/true"]


def qsub_request(tj: TraceJob, setup: ReplayConfig, notes: dict[str, int],
                 parsed: dict[tuple[Any, ...], tuple[dict[str, Any], tuple[tuple[str, int], ...]]]) -> dict[str, Any]:
    """qsub's request of ``tj`` (:func:`qsub_argv` read by qsub's parser), a
    fresh copy: parsed once per owner and shape of job (what its argv is made
    of but the name and run time, which are then set as the parser sets them:
    the last ``-N`` and the last ``-l h_rt`` win, and goes last), with the
    notes its argv makes counted for each job.  The parse is kept with its
    words shared as the qmaster shares a job's (``share_words``), so that
    the copies' words are the shared ones already."""
    key = (tj.owner, tj.slots, tj.queue, tj.project, tuple(t for t, _ in tj.tasks) if tj.is_array else None)
    found = parsed.get(key)
    if found is None:
        made: dict[str, int] = {}
        argv = qsub_argv(dataclasses.replace(tj, job_id=0, requested_time=None), setup, made)
        request = submit_options.parse_submission(
            argv, cwd="/", env={}, home="/", user=tj.owner, hostname="replay", read_file=_no_file)
        template = json.loads(json.dumps(request))  # as the wire carries it
        share_words(template)
        found = parsed[key] = (template, tuple(made.items()))
    template, made_notes = found
    for note, count in made_notes:
        notes[note] = notes.get(note, 0) + count
    req: dict[str, Any] = _fresh(template)
    if "-N" not in setup.qsub:
        req["job_name"] = f"trace{tj.job_id}"
    if tj.requested_time is not None:
        hard = dict(req.get("hard_resources") or {})
        hard.pop("h_rt", None)  # a resource requested again moves last
        hard["h_rt"] = str(math.ceil(tj.requested_time))
        req["hard_resources"] = hard
    return req


def _fresh(value: Any) -> Any:
    """A copy of a request's maps and lists at every depth (its words and
    numbers are not changed in place: shared)."""
    if type(value) is dict:
        return {k: _fresh(v) if type(v) is dict or type(v) is list else v for k, v in value.items()}
    if type(value) is list:
        return [_fresh(v) if type(v) is dict or type(v) is list else v for v in value]
    return value


def _no_file(path: str) -> str:
    raise OSError(2, "not read by a replay", path)


def build_qmaster(setup: ReplayConfig, scratch: str, clock: Callable[[], float]) -> ReplayQmaster:
    """A qmaster on ``setup``'s configuration, its spool in ``scratch``."""
    cell = Cell(scratch, "replay")
    qm = ReplayQmaster(cell, "replay", clock)
    spool = ReplaySpool(cell)
    spool.create_dirs()
    cfg: ConfigState = setup.config
    cfg.spool = spool
    qm.spool, qm.config = spool, cfg
    qm.share_usage.spool, qm.share_usage.config = spool, cfg
    qm.share_usage.tree = setup.share_tree
    qm.config.cell_owner_only = False
    qm.execds.update({h: None for h in sorted(cfg.exec_hosts) if h != "global"})  # type: ignore[misc]
    return qm


def run(trace: Trace, setup: ReplayConfig, why: int | None = None,
        passes: str = INTERVAL) -> tuple[ReplayResult, Replay]:
    """Replay ``trace`` under ``setup`` with passes as ``passes`` says; the
    result, and the replay (notes, the pending reasons of job ``why`` at each
    pass it waited through).  ``setup`` is used up (its configuration holds
    the users' usage at the end): load it again for another replay."""
    r = Replay(trace, setup, why, passes_mode=passes)
    with tempfile.TemporaryDirectory(prefix="minisge-replay-") as scratch:
        qm = build_qmaster(setup, scratch, lambda: r.now)
        qm.explain = why is not None
        _simulate(r, qm)
        result = ReplayResult(
            label=setup.label,
            tasks=tuple(sorted(r.runs.values(), key=lambda t: (t.submit_time, t.job_id, t.task_id))),
            host_slots=_host_slots(qm),
            queue_slots=tuple(sorted((qi.cqueue, qi.host, qi.slots) for qi in qm.config.snapshot(
                {}, qm.execds, now=r.now).qinstances)))
    return result, r


def _host_slots(qm: Qmaster) -> tuple[tuple[str, int], ...]:
    """Each execution host and its slots: its ``slots`` complex value, else
    the sum of its queue instances' slots."""
    snap = qm.config.snapshot({}, qm.execds, now=0.0)
    by_host: dict[str, int] = {}
    for qi in snap.qinstances:
        by_host[qi.host] = by_host.get(qi.host, 0) + qi.slots
    for h, info in snap.hosts.items():
        if "slots" in info.values:
            by_host[h] = min(by_host.get(h, 0), int(float(info.values["slots"])))
    return tuple(sorted(by_host.items()))


def _pass_time(r: Replay, qm: Qmaster, first: float) -> float:
    """When the pass for an event at ``first`` runs: at once (``events``),
    else at the next multiple of schedule_interval (``interval``)."""
    if r.passes_mode == EVENTS:
        return first
    iv = qm.config.sched_conf.schedule_interval_seconds or 1.0
    return math.ceil(first / iv) * iv


def _simulate(r: Replay, qm: ReplayQmaster) -> None:
    events: list[tuple[float, int, int, Any]] = []
    seq = 0
    for tjob in r.trace.jobs:
        heapq.heappush(events, (tjob.submit_time, SUBMIT, seq, tjob))
        seq += 1
    by_number: dict[int, TraceJob] = {}
    number_of: dict[int, int] = {}
    notes: dict[str, int] = {}
    # qsub's request of each shape of job
    requests: dict[tuple[Any, ...], tuple[dict[str, Any], tuple[tuple[str, int], ...]]] = {}
    uid, gid = os.getuid(), os.getgid()
    sc = qm.config.sched_conf
    capacity = sum(qi.slots for qi in qm.config.snapshot({}, qm.execds, now=r.now).qinstances)
    busy = 0  # the slots the running tasks hold
    fewest_slots: dict[int, int] = {}  # job with pending tasks -> the fewest slots a task of it starts on
    while events:
        at = _pass_time(r, qm, events[0][0])
        while events and events[0][0] <= at:
            r.now, kind, _s, payload = heapq.heappop(events)
            if kind == END:
                job_id, task_id = payload
                busy -= r.runs[(by_number[job_id].job_id, task_id)].slots
                qm.task_finished({"job_id": job_id, "task_id": task_id, "exit_status": 0, "failed": 0,
                                  "usage": _usage(r.runs[(by_number[job_id].job_id, task_id)])})
                if r.passes_mode == INTERVAL and sc.flush_finish_sec > 0:  # sched_conf(5): a pass soon after
                    at = min(at, r.now + sc.flush_finish_sec)
                continue
            tj: TraceJob = payload
            if r.passes_mode == INTERVAL and sc.flush_submit_sec > 0:
                at = min(at, r.now + sc.flush_submit_sec)
            try:
                reply = qm.submit(qsub_request(tj, r.setup, notes, requests), uid, gid)
            except RequestError as e:
                r.notes.append(f"job {tj.job_id} rejected: {e}".replace("\nExiting.", ""))
                continue
            number = int(reply["job_id"])
            job = qm.jobs[number]
            if job.pending:
                fewest_slots[number] = _fewest_slots(job)
            job.owner, job.group = tj.owner, tj.group
            by_number[number], number_of[tj.job_id] = tj, number
            run_times = dict(zip(sorted(job.pending), [t for _, t in tj.tasks], strict=False))
            for task_id, run_time in sorted(run_times.items()):
                r.runs[(tj.job_id, task_id)] = TaskRun(
                    job_id=tj.job_id, task_id=task_id, owner=tj.owner, project=tj.project,
                    submit_time=tj.submit_time, start_time=None, end_time=None, run_time=run_time,
                    slots=tj.slots, placement=(), requested_time=tj.requested_time)
        r.now = max(r.now, at)
        fewest = min(fewest_slots.values(), default=None)
        if fewest is None:
            continue  # a pass with no pending task starts nothing
        if capacity - busy < fewest and r.why is None:
            continue  # nor one with fewer free slots than any pending task needs (--why shows those passes)
        started = qm.schedule()
        r.passes += 1
        for job, task in started:
            tj = by_number[job.number]
            key2 = (tj.job_id, task.task_id)
            old = r.runs[key2]
            end = r.now + old.run_time
            r.runs[key2] = TaskRun(
                job_id=old.job_id, task_id=old.task_id, owner=old.owner, project=old.project,
                submit_time=old.submit_time, start_time=r.now, end_time=end, run_time=old.run_time,
                slots=sum(g.slots for g in task.granted) or old.slots,
                placement=tuple((g.cqueue, g.host, g.slots) for g in task.granted),
                requested_time=old.requested_time)
            busy += r.runs[key2].slots
            heapq.heappush(events, (end, END, seq, (job.number, task.task_id)))
            seq += 1
            if not job.pending:
                fewest_slots.pop(job.number, None)
        qm.flush()
        if r.why is not None and r.why in number_of:
            _keep_reasons(r, qm, number_of[r.why])
    r.notes.extend(f"{n} {text}" for text, n in sorted(notes.items()))


def _fewest_slots(job: Job) -> int:
    """The fewest slots a task of ``job`` can start on: the lowest count of
    its ``-pe`` ranges, else one."""
    if not job.spec.get("pe"):
        return 1
    return max(1, min((lo for lo, _hi in job.pe_ranges), default=1))


def _keep_reasons(r: Replay, qm: Qmaster, number: int) -> None:
    job: Job | None = qm.jobs.get(number)
    if job is None or not job.pending:
        return
    detail = views.job_detail(qm, [str(number)], qm.admin_uid)
    r.why_passes.append((r.now, list(detail["global"]) + list(detail["reasons"].get(str(number), []))))


def _usage(run: TaskRun) -> dict[str, Any]:
    """What the execd would report of a task that ran its recorded time:
    its times, and the CPU of its slots busy all along (the share tree's usage)."""
    start = run.start_time or 0.0
    return {"start_time": start, "end_time": start + run.run_time, "ru_wallclock": run.run_time,
            "ru_utime": run.run_time * run.slots}
