"""The qmaster: the cell's state, its requests and its events.

It owns the jobs and the configuration, spools every change before it
answers, wakes the scheduler (coalesced) on every change that could start a
job, sends dispatched tasks to execds and turns their reports into
accounting records and job states.  Requests come from local commands over
the Unix socket (the caller identified by SO_PEERCRED) and from execds, in
process or over TCP; both speak :mod:`minisge.protocol`.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
import time
from typing import Callable

import cattrs
import trio

from minisge import accounting_writer, exit_rules, job_control, load_control, scheduler, unknown_hosts
from minisge.cell import Cell
from minisge.config_state import ConfigState, RequestError
from minisge.job import ERROR, RESCHEDULING, RUNNING, Grant, Job, Task
from minisge.pe_tasks import PeTasks
from minisge.spool import QmasterSpool

log = logging.getLogger("minisge.qmaster")

_conv = cattrs.Converter()
# Task.suspended_by: a JSON list in the spool
_conv.register_unstructure_hook_func(lambda t: t is set or getattr(t, "__origin__", None) is set, sorted)


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


class Qmaster:
    def __init__(self, cell: Cell, host: str, clock: Callable[[], float] = time.time):
        self.cell = cell
        self.host = host
        self.clock = clock
        self.spool = QmasterSpool(cell)
        self.config = ConfigState(self.spool, host)
        self.jobs: dict[int, Job] = {}
        self.last_job_id = 0
        self.execds: dict[str, "ExecdLink"] = {}
        self.wake_scheduler: trio.Event | None = None  # set by the daemon's scheduler loop
        self.job_waiters: dict[int, list[trio.MemorySendChannel]] = {}
        self.pending_reasons: dict[int, list[str]] = {}
        self.admin_uid = os.getuid()
        self.boot_time = clock()
        self.dirty: dict[int, Job] = {}  # changed jobs flush() is to spool
        self.acks: list[tuple[str, dict]] = []  # execd acknowledgements flush() is to send
        self.pe_tasks = PeTasks(self)  # slave tasks started by qrsh -inherit

    # ------------------------------------------------------------ loading
    def load(self) -> None:
        self.config.load()
        self.last_job_id = self.spool.read_jobseqnum()
        for data in self.spool.load_jobs():
            for t in (data.get("tasks") or {}).values():  # spool files of before suspended_by
                if t.pop("suspended", False):
                    t.setdefault("suspended_by", ["job"])
            job = _conv.structure(data, Job)
            self.jobs[job.number] = job
            self.last_job_id = max(self.last_job_id, job.number)

    def save_job(self, job: Job, sync: bool = True) -> None:
        """Spool the job (or remove it once it is done).

        ``sync=False`` for the transitions of running tasks (dispatch, end):
        the write is still atomic, so a killed qmaster finds the old or the
        new state, and either is recovered (the execd reports a task it
        runs or ran; an end already in the accounting file is not written
        twice); only an operating-system crash can lose it.
        """
        if job.is_done():
            self.spool.delete_job(job.number)
            self.jobs.pop(job.number, None)
        else:
            self.spool.write_job(job.number, _conv.unstructure(job), sync=sync)

    def changed(self) -> None:
        """Something happened that may let a job start: wake the scheduler."""
        if self.wake_scheduler is not None:
            self.wake_scheduler.set()

    # ------------------------------------------------------------ rights
    def is_manager(self, uid: int) -> bool:
        return uid == 0 or uid == self.admin_uid or user_name(uid) in self.config.managers

    def is_operator(self, uid: int) -> bool:
        return self.is_manager(uid) or user_name(uid) in self.config.operators

    # ------------------------------------------------------------ submit
    def submit(self, req: dict, uid: int, gid: int) -> dict:
        gconf = self.config.global_conf
        if uid < gconf.min_uid:
            raise RequestError(
                f"Unable to run job: job rejected: your user id {uid} is lower than minimum user id {gconf.min_uid} of cluster configuration\nExiting.",
            )
        if gid < gconf.min_gid:
            raise RequestError(
                f"Unable to run job: job rejected: your group id {gid} is lower than minimum group id {gconf.min_gid} of cluster configuration\nExiting.",
            )
        if self.config.cell_owner_only and uid != self.admin_uid:
            raise RequestError(
                f"Unable to run job: job rejected: this cell runs as user {user_name(self.admin_uid)} and accepts its jobs alone\nExiting."
            )
        self.config.check_request(req)
        self.config.check_submitter(user_name(uid), group_name(gid), req)
        owner = user_name(uid)
        verify = req.get("verify_level") or "n"
        if verify in ("e", "v"):
            self.verify_against_empty_cell(req, owner, uid, gid, verify)
        job_id = self.last_job_id + 1
        if job_id > 9999999:  # Grid Engine wraps its job ids
            job_id = 1
        arr = req.get("array")
        tasks = list(range(arr[0], arr[1] + 1, arr[2])) if arr else [1]
        preds = self.resolve_predecessors(req.get("hold_jid") or [], owner)
        job = Job(
            number=job_id,
            name=req["job_name"],
            owner=owner,
            uid=uid,
            group=group_name(gid),
            gid=gid,
            submission_time=self.clock(),
            spec=req,
            pending=tasks,
            user_hold=bool(req.get("hold")),
            predecessors=preds,
            priority=int(req.get("priority") or 0),
        )
        if req.get("script") is not None and not req.get("binary"):
            self.spool.write_script(job_id, req["script"])
            job.spec = dict(req)
            job.spec["script"] = None  # kept in job_scripts/, not twice
        self.spool.write_job(job_id, _conv.unstructure(job))
        self.spool.write_jobseqnum(job_id)
        self.last_job_id = job_id
        self.jobs[job_id] = job
        log.info("job %d submitted by %s", job_id, owner)
        self.changed()
        return {"job_id": job_id, "name": job.name, "array": arr}

    def verify_against_empty_cell(self, req: dict, owner: str, uid: int, gid: int, level: str) -> None:
        """qsub -w e|v: could the job run if the cell were empty?  (qsub(1):
        resources are assumed free, load and states are not looked at.)
        ``e`` refuses a job that could not; ``v`` only reports and never submits."""
        import dataclasses

        probe = Job(number=0, name=req.get("job_name") or "", owner=owner, uid=uid, group="", gid=gid,
                    submission_time=0.0, spec=req, pending=[1])
        snap = self.config.snapshot({0: probe}, {h: None for h in self.config.exec_hosts})
        snap = dataclasses.replace(snap, qinstances=tuple(dataclasses.replace(q, states="") for q in snap.qinstances))
        plan = scheduler.schedule(snap)
        if plan.dispatches:
            if level == "v":
                raise RequestError("verification: found suitable queue(s)", rc=0)
            return
        if level == "e":
            raise RequestError("Unable to run job: error: no suitable queues\nExiting.")
        reasons = "".join(f"{r}\n" for r in plan.reasons.get(0, [])[:1])
        raise RequestError(f"Unable to run job: {reasons}verification: no suitable queues\nExiting.")

    def resolve_predecessors(self, refs: list[str], owner: str) -> list[int]:
        """``-hold_jid`` ids and names → the ids of jobs that still exist."""
        out: list[int] = []
        for ref in refs:
            if ref.isdigit():
                if int(ref) in self.jobs:
                    out.append(int(ref))
            else:
                import fnmatch

                for j in self.jobs.values():
                    if j.owner == owner and fnmatch.fnmatchcase(j.name, ref):
                        out.append(j.number)
        return sorted(set(out))

    # ------------------------------------------------------------ delete
    def find_jobs(self, target: str) -> list[Job]:
        if target.isdigit():
            j = self.jobs.get(int(target))
            return [j] if j else []
        return [j for j in self.jobs.values() if j.name == target]

    async def delete(self, targets: list[str], uid: int, users: list[str] | None = None) -> tuple[list[str], int]:
        """qdel: returns the lines to print and the exit code."""
        caller = user_name(uid)
        lines: list[str] = []
        rc = 0
        selected: list[tuple[Job, list[int] | None]] = []
        if users:
            for j in list(self.jobs.values()):
                if "*" in users or j.owner in users:
                    selected.append((j, None))
        for t in targets:
            tasks = None
            if "." in t:
                t, rng = t.split(".", 1)
                tasks = _expand_tasks(rng)
                if tasks is None:
                    lines.append(f'denied: job "{t}.{rng}" does not exist')
                    rc = 1
                    continue
            found = self.find_jobs(t)
            if not found:
                lines.append(f'denied: job "{t}" does not exist')
                rc = 1
            for j in found:
                selected.append((j, tasks))
        for job, tasks in selected:
            if job.owner != caller and not self.is_operator(uid):
                lines.append(f"{caller} - you do not have the necessary privileges to delete the job \"{job.number}\"")
                rc = 1
                continue
            lines.extend(await self._delete_job(job, tasks, caller))
        return lines, rc

    async def _delete_job(self, job: Job, tasks: list[int] | None, caller: str) -> list[str]:
        running = [t for t in job.tasks.values() if tasks is None or t.task_id in tasks]
        pend = [t for t in job.pending if tasks is None or t in tasks]
        job.pending = [t for t in job.pending if t not in pend]  # no record: it never ran (as in GE)
        lines = []
        signalled = False
        for task in running:
            if task.state == ERROR:
                job.tasks.pop(task.task_id)
                continue
            if task.state == RESCHEDULING:  # its run is already being killed
                task.delete_requested = True
                continue
            task.delete_requested = True
            signalled = True
            # the queue's terminate_method (default SIGKILL), SIGUSR2 first for -notify
            await self.send_to_execd(task, job_control.control_message(self, job, task, "terminate"))
            await self.pe_tasks.kill(job.number, task.task_id)  # its slave tasks, on every host
        self.save_job(job)
        self.release_dependents(job)
        if signalled:
            lines.append(f"{caller} has registered the job {job.number} for deletion")
        else:
            lines.append(f"{caller} has deleted job {job.number}")
        self.notify_waiters(job)
        self.changed()
        return lines

    def release_dependents(self, finished: Job) -> None:
        """Jobs held by ``-hold_jid`` on ``finished`` go on once it is gone."""
        if not finished.is_done():
            return
        for j in self.jobs.values():
            if finished.number in j.predecessors:
                j.predecessors.remove(finished.number)
                self.save_job(j)
        self.changed()

    # ------------------------------------------------------------ hold
    def hold(self, targets: list[str], uid: int, kind: str = "u", release: bool = False) -> tuple[list[str], int]:
        """qhold / qrls: ``kind`` is a subset of ``uos`` (user, operator, system)."""
        caller = user_name(uid)
        lines: list[str] = []
        rc = 0
        for t in targets:
            found = self.find_jobs(t.split(".", 1)[0])
            if not found:
                lines.append(f'denied: job "{t}" does not exist')
                rc = 3
                continue
            for job in found:
                if job.owner != caller and not self.is_operator(uid):
                    lines.append(f'denied: "{caller}" must be at least owner of job {job.number} to change job attributes')
                    rc = 18
                    continue
                if ("o" in kind or "s" in kind) and not self.is_operator(uid):
                    lines.append(f'denied: "{caller}" must be operator to change operator or system hold of job {job.number}')
                    rc = 18
                    continue
                for letter, attr in (("u", "user_hold"), ("o", "operator_hold"), ("s", "system_hold")):
                    if letter in kind:
                        setattr(job, attr, not release)
                self.save_job(job)
                lines.append(f"modified hold of job {job.number}")
        self.changed()
        return lines, rc

    # ------------------------------------------------------------ qmod
    async def qmod(self, req: dict, uid: int) -> tuple[list[str], int]:
        """qmod -d/-e (disable/enable), -c (clear queue error), -cj (clear job error)."""
        caller = user_name(uid)
        action = req.get("action")
        if action in job_control.QMOD_ACTIONS:  # -s/-us/-r and their -j/-q forms
            return job_control.qmod(self, req, uid)
        lines: list[str] = []
        rc = 0
        if action == "cj":
            for t in req.get("targets") or []:
                found = self.find_jobs(t.split(".", 1)[0])
                if not found:
                    lines.append(f'denied: job "{t}" does not exist')
                    rc = 1
                for job in found:
                    if job.owner != caller and not self.is_operator(uid):
                        lines.append(f'denied: "{caller}" must be at least owner of job {job.number} to change job attributes')
                        rc = 1
                        continue
                    cleared = [t for t in job.tasks.values() if t.state == ERROR]
                    for task in cleared:
                        del job.tasks[task.task_id]
                        job.pending.append(task.task_id)
                    job.pending.sort()
                    self.save_job(job)
                    lines.append(f"{caller}@{self.host} cleared error state of job {job.number}")
            self.changed()
            return lines, rc
        host_of_caller = self.host
        for t in req.get("targets") or []:
            qis = self.config.match_qinstances(t)
            if not qis:
                lines.append(f'invalid queue "{t}"')
                rc = 1
                continue
            for qi in qis:
                if not self.is_operator(uid) and caller not in self.config.owners_of(qi):
                    lines.append(f'{caller} - you have no permission to modify queue "{qi}"')
                    rc = 1
                    continue
                if action == "d":
                    self.config.add_qi_state(qi, "d")
                    lines.append(f'{caller}@{host_of_caller} changed state of "{qi}" (disabled)')
                elif action == "e":
                    self.config.remove_qi_state(qi, "d")
                    lines.append(f'{caller}@{host_of_caller} changed state of "{qi}" (enabled)')
                elif action == "c":
                    self.config.remove_qi_state(qi, "E")
                    self.config.qi_messages.pop(qi, None)
                    lines.append(f'{caller}@{host_of_caller} changed state of "{qi}" (no error)')
                else:
                    lines.append(f"qmod -{action} is not supported yet")
                    rc = 1
        self.changed()
        return lines, rc

    # ------------------------------------------------------------ job control
    def queue_rerun(self, task: Task) -> str:
        """queue_conf(5) ``rerun`` of the task's (master) queue instance."""
        m = task.master
        conf = self.config.cqueues.get(m.cqueue) if m is not None else None
        return self.config.qvalue(conf, "rerun", m.host) if conf is not None else "FALSE"

    def suspend_task(self, job: Job, task: Task, cause: str) -> None:
        """Add a suspension cause (job, queue, threshold, subordinate); the job
        is stopped when it is the first (minisge.job_control)."""
        job_control.suspend_task(self, job, task, cause)

    def resume_task(self, job: Job, task: Task, cause: str) -> None:
        """Remove a suspension cause; the job continues when none is left."""
        job_control.resume_task(self, job, task, cause)

    # ------------------------------------------------------------ scheduling
    def schedule(self) -> list[tuple[Job, Task]]:
        now = self.clock()
        with scheduler.gc_paused():
            snap = self.config.snapshot(self.jobs, self.execds, now=now)
            snap = load_control.apply(self, snap)  # thresholds, subordination: states a A S, suspend/resume
            plan = scheduler.schedule(snap)
        self.pending_reasons = plan.reasons
        started = []
        for d in plan.dispatches:
            job = self.jobs[d.job_id]
            if d.task_id not in job.pending:
                continue
            job.pending.remove(d.task_id)
            task = Task(
                task_id=d.task_id,
                state=RUNNING,
                start_time=now,
                granted=[Grant(q, h, n) for (q, h, n) in d.granted],
                granted_pe=d.pe or "",
                restarted=job.restarted_pending.pop(d.task_id, 0),
            )
            job.tasks[d.task_id] = task
            started.append((job, task))
        for job, _ in started:
            self.dirty[job.number] = job
        if started:
            load_control.dispatched(self)  # a superordinated queue instance may have filled up
        return started

    def ack_task_end(self, host: str, job_id: int, task_id: int) -> None:
        """Acknowledge an end to the execd once it is spooled (flush): only then
        may the execd drop the task's directory."""
        self.acks.append((host, {"op": "ack_end", "job_id": job_id, "task_id": task_id}))

    def flush(self) -> None:
        """Spool the jobs changed since the last flush: one atomic write each,
        however many of its tasks started or ended.  Called by the scheduler
        loop before it sends start messages, so a dispatch is on disk before
        the task runs, and before it sends acks (:meth:`send_acks`)."""
        dirty, self.dirty = self.dirty, {}
        for job in dirty.values():
            if job.number in self.jobs:
                self.save_job(job, sync=False)

    async def send_acks(self) -> None:
        acks, self.acks = self.acks, []
        for host, msg in acks:
            link = self.execds.get(host)
            if link is not None:
                await link.send(msg)

    def reconcile_host(self, host: str, known: set[tuple[int, int]]) -> None:
        """An execd (re)registered knowing the tasks ``known`` (running, or ended
        and not yet acknowledged).  A task this qmaster dispatched to it that it
        does not know never started (the start message was lost with a crash):
        it goes back to pending, to run once."""
        for job in list(self.jobs.values()):
            lost = [t for t in job.tasks.values()
                    if t.state in (RUNNING, RESCHEDULING) and t.master is not None and t.master.host == host
                    and (job.number, t.task_id) not in known]
            for t in lost:
                if t.state == RESCHEDULING:  # qmod -r while its host was away
                    job_control.end_of_rescheduled(self, job, t)
                    continue
                log.warning("task %d.%d was never started on %s: back to pending", job.number, t.task_id, host)
                del job.tasks[t.task_id]
                if not t.delete_requested:
                    job.pending.append(t.task_id)
                    job.pending.sort()
            if lost:
                self.save_job(job)
        self.changed()

    async def send_to_execd(self, task: Task, msg: dict) -> None:
        link = self.execds.get(task.master.host) if task.master else None
        if link is not None:
            await link.send(msg)

    async def start_task(self, job: Job, task: Task) -> None:
        msg = self.config.start_message(job, task, self.spool.script_path(job.number))
        link = self.execds.get(task.master.host)
        if link is None:
            return
        await link.send(msg)

    # ------------------------------------------------------------ execd reports
    def task_finished(self, report: dict) -> None:
        job = self.jobs.get(report["job_id"])
        if job is None:
            return
        task = job.tasks.get(report["task_id"])
        if task is None:
            return
        if unknown_hosts.stale_report(task, report):  # rescheduled while that host was unknown
            return
        if task.state == RESCHEDULING:  # qmod -r: accounted when it was pushed
            job_control.end_of_rescheduled(self, job, task)
            if job.is_done():  # deleted meanwhile
                self.save_job(job)
                self.release_dependents(job)
                self.notify_waiters(job)
            else:
                self.dirty[job.number] = job
            self.changed()
            return
        outcome = exit_rules.job_outcome(report, self.config.forbid_reschedule, self.config.forbid_apperror,
                                         deleted=task.delete_requested)
        outcome = job_control.rerun_outcome(outcome, job, task, self.queue_rerun(task))
        record = accounting_writer.record_for(job, task, report, outcome.failed, self.host)
        if not (task.start_time < self.boot_time and accounting_writer.already_written(self.cell.accounting, record)):
            accounting_writer.append(self.cell.accounting, record)
        del job.tasks[task.task_id]
        if outcome.requeue and not task.delete_requested:
            job.pending.append(task.task_id)
            job.pending.sort()
            # Rq and RESTARTED=1 only for a reschedule (exit 99); a re-queue after a
            # queue or host failure leaves the job as it was (qw), as in 8.1.9
            job.restarted_pending[task.task_id] = job_control.restarted_after(task.restarted, outcome.failed)
        elif outcome.job_error and not task.delete_requested:
            task.state = ERROR
            task.error_reason = outcome.reason
            task.granted = []
            job.tasks[task.task_id] = task
        if outcome.queue_error and task.master is not None:
            m = task.master
            qis = self.config.match_qinstances(f"*@{m.host}") if outcome.host_error else [m.qinstance]
            for qi in qis:
                self.config.set_queue_error(qi, exit_rules.queue_error_message(qi.split("@")[0], job.number, m.host))
        if job.is_done():
            self.save_job(job)  # gone from the spool (an unlink) and from qstat
        else:
            self.dirty[job.number] = job  # spooled by flush(), with the pass's dispatches
        self.release_dependents(job)
        self.notify_waiters(job, dict(report, deleted=task.delete_requested, failed=outcome.failed,
                                      requeued=outcome.requeue and not task.delete_requested))
        self.changed()

    # ------------------------------------------------------------ -sync y
    def add_waiter(self, job_id: int) -> trio.MemoryReceiveChannel:
        send, recv = trio.open_memory_channel(100000)
        self.job_waiters.setdefault(job_id, []).append(send)
        return recv

    def notify_waiters(self, job: Job, report: dict | None = None) -> None:
        for ch in self.job_waiters.get(job.number, []):
            try:
                if report is not None and not report.get("requeued"):
                    ch.send_nowait({"event": "task_end", "task_id": report["task_id"],
                                    "exit_status": report.get("exit_status", 0),
                                    "signal": report.get("signal", 0), "failed": report.get("failed", 0),
                                    "deleted": bool(report.get("deleted"))})
                if job.is_done() or job.number not in self.jobs:
                    ch.send_nowait({"event": "job_end"})
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        if job.is_done():
            self.job_waiters.pop(job.number, None)


class ExecdLink:
    """How the qmaster reaches one execd (in process or over TCP)."""

    host: str

    async def send(self, msg: dict) -> None:  # pragma: no cover - interface
        raise NotImplementedError


def _expand_tasks(rng: str) -> list[int] | None:
    """The task ids of ``n[-m[:s]][,...]`` (sge_types(5) ranges, read by
    qsub's own parser); None for text that is no range."""
    from minisge import submit_options

    out: list[int] = []
    for word in rng.split(","):
        try:
            r = submit_options.parse_range(word, step_allowed=True, inf_allowed=False) if word else None
        except submit_options.ParseError:
            r = None
        if r is None:
            return None
        lo, hi, step = r
        out.extend(range(lo, hi + 1, step))
    return out
