"""Tight integration: the slave tasks ("PE tasks") of a parallel job, qmaster side.

sge_pe(5) ``control_slaves TRUE``: Grid Engine starts the tasks of a
parallel application itself, through the execd and shepherd of each host,
when the job calls ``qrsh -inherit HOST COMMAND`` (qrsh(1)).  Each task gets
an id ``N.HOST`` (N counts the job's tasks on that host, execd
handle_task), runs as the job owner in the job's environment, and is
accounted: one accounting(5) record per task (``pe_taskid`` field) when the
PE has ``accounting_summary FALSE``, else its usage is added to the job's
single record.

minisge routes the request through the qmaster (it knows the job, the
grant and the caller, identified by SO_PEERCRED), which checks it with the
pure rules below and forwards it to the execd of HOST; the execd's side is
:mod:`minisge.execd.pe_tasks`.  The task's output comes back the same way,
streamed, and the command's exit status is the final reply.

A master task that ends while slave tasks still run has them killed (as
8.1.9's execd does); its own end is recorded once they are gone, so the
summary record holds their usage.  qdel kills the slave tasks on every host;
suspending or resuming the job (any cause) stops or continues them there too,
and a task started while its job is suspended starts stopped.
The registry is not spooled: a qmaster restart forgets running slave tasks
(their ends are then not accounted).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import attrs
import trio

from minisge.formats.accounting import AccountingRecord
from minisge.protocol import ok_reply
from minisge.qmaster import accounting_writer
from minisge.qmaster.config_state import RequestError
from minisge.qmaster.job import RUNNING, Task
from minisge.qmaster.users import user_name
from minisge.rules import exit_codes
from minisge.rules.job_control import parse_method

log = logging.getLogger("minisge.pe_tasks")

# usage values that are maxima, not sums, when slave tasks are summed up
MAX_USAGE = frozenset({"ru_maxrss", "maxvmem"})
# usage keys that describe the master task only
MASTER_ONLY = frozenset({"exit_status", "signal", "start_time", "end_time", "ru_wallclock"})


# ================================================================ pure rules


def short_host(name: str) -> str:
    """Host names are compared without their domain (the cell's host names are short)."""
    return name.split(".", 1)[0]


def didnt_accept(job_id: int, host: str) -> str:
    """qrsh's message for a task the execd refused (qsh.c MSG_QSH_EXECUTINGTASKOFJOBFAILED_IS
    with sge_qexec.c MSG_GDI_EXECDONHOSTDIDNTACCEPTTASK_S): 8.1.9 gives it
    whatever the reason (wrong user, control_slaves FALSE, no free slot,
    a host the job has no slots on); the reason goes to the log."""
    return f'error: executing task of job {job_id} failed: execution daemon on host "{host}" didn\'t accept task'


def send_failed(job_id: int, host: str) -> str:
    """qrsh's message when no execd of HOST can be reached (MSG_GDI_SENDTASKTOEXECDFAILED_SS)."""
    return f"error: executing task of job {job_id} failed: failed sending task to execd@{host}: got send error"


def task_slots_on_host(granted: list[tuple[str, int]], master_host: str, host: str,
                       job_is_first_task: bool = True) -> int:
    """How many slave tasks may run at once on ``host``: the slots granted to
    the job there, less the one the master task (the job script) occupies
    on the master host with ``job_is_first_task TRUE`` (execd
    job_get_queue_for_task: a task needs a free slot of the job's queue on
    the host); with FALSE the job script holds no slot (sge_pe(5)), so all
    granted slots are left for tasks.  Checked on 8.1.9: 2 slots on one
    host allow one concurrent task with job_is_first_task TRUE, two with FALSE."""
    slots = sum(n for h, n in granted if h == host)
    if host == master_host and job_is_first_task:
        slots -= 1
    return max(0, slots)


class TaskRequest(NamedTuple):
    """What the qmaster knows when a ``qrsh -inherit`` request comes."""

    job_id: int
    caller_uid: int
    caller: str
    job_uid: int | None  # None: no such job
    owner: str
    running: bool  # the job's task is running (not pending, not in error)
    deleting: bool
    control_slaves: bool  # False also for a job without a PE
    job_is_first_task: bool  # its PE's (True for a job without a PE)
    granted: tuple  # ((host, slots), ...), master first
    host: str
    running_on_host: int  # slave tasks of the job running on host now


def refusal(r: TaskRequest) -> str | None:
    """Why the task is not started, in the words of 8.1.9's execd log
    (handle_task, execd_job_exec.c), or None when it may start."""
    if r.job_uid is None or not r.running:
        return f"received task belongs to job {r.job_id} but this job is not running"
    if r.caller_uid != r.job_uid:
        return f'denied request of user "{r.caller}" to start a pe task in job of user "{r.owner}"'
    if not r.control_slaves:
        return f"received task belongs to job {r.job_id} but this job is not suited for starting tasks"
    if r.deleting:
        return f"received task exec request for job {r.job_id} while job is in deletion or exiting"
    master_host = r.granted[0][0] if r.granted else ""
    if r.running_on_host >= task_slots_on_host(list(r.granted), master_host, r.host, r.job_is_first_task):
        return f'no free queue for job {r.job_id} of user "{r.owner}"@{r.host} (localhost = {r.host})'
    return None


def sum_usage(total: dict[str, float], usage: dict[str, Any]) -> dict[str, float]:
    """Add a slave task's usage to ``total`` (accounting_summary TRUE): counters
    and times are summed, ``ru_maxrss``/``maxvmem`` are maxima; the master's
    exit status, start/end and wallclock are not touched."""
    out = dict(total)
    for key, value in (usage or {}).items():
        if key in MASTER_ONLY:
            continue
        try:
            v = float(value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(v):
            continue
        old = float(out.get(key, 0) or 0)
        out[key] = max(old, v) if key in MAX_USAGE else old + v
    return out


def merged_master_usage(master: dict[str, Any], slaves: dict[str, float]) -> dict[str, Any]:
    """The usage of the single summary record: the master's plus the summed slaves'."""
    out = dict(master or {})
    for key, value in slaves.items():
        try:
            old = float(out.get(key, 0) or 0)
        except (TypeError, ValueError):
            old = 0.0
        out[key] = max(old, value) if key in MAX_USAGE else old + value
    return out


def host_view(task: Task, host: str) -> Task:
    """The job's task as the start message of a slave task on ``host`` is
    built from: its grant on that host first, so the queue, shell, tmpdir
    and limits (h_rt and the others of queue_conf(5) RESOURCE LIMITS) are
    those of the task's own queue instance, as its execd applies them."""
    first = [g for g in task.granted if g.host == host][:1]
    return attrs.evolve(task, granted=first + [g for g in task.granted if g not in first])


def task_record(base: AccountingRecord, *, host: str, cqueue: str, pe_task_id: str,
                submission_time: float) -> AccountingRecord:
    """A slave task's accounting(5) record, from the record the master's rules
    give its report: its own host, queue, submission time (when qrsh sent
    it) and ``pe_taskid``; job name, slots and category stay the job's
    (as 8.1.9 writes them)."""
    return base._replace(hostname=host, qname=cqueue, submission_time=int(submission_time), pe_taskid=pe_task_id)


def control_messages(job_id: int, task_id: int, hosts: Iterable[str], method_of: Callable[[str], dict[str, Any]],
                     action: str) -> list[tuple[str, dict[str, Any]]]:
    """The messages that stop (``suspend``) or continue (``resume``) a job's
    slave tasks with it: one per host running any of them, with the
    suspend_method/resume_method of the job's queue instance on that host
    (``method_of(host)``).  sge_shepherd(8), qmod(1): Grid Engine suspends
    and resumes every task of a job, on every host."""
    if action not in ("suspend", "resume"):
        return []
    return [(h, {"op": f"pe_task_{action}", "job_id": job_id, "task_id": task_id, "method": method_of(h)})
            for h in sorted(set(hosts))]


# ================================================================ qmaster registry


@attrs.define
class PeTask:
    job_id: int
    task_id: int
    pe_task_id: str
    host: str
    submission_time: float
    channel: trio.MemorySendChannel[tuple[str, Any]] | None = None  # to the waiting qrsh request
    killed: bool = False


class PeTasks:
    """The slave tasks the qmaster has started, and the master ends it holds back."""

    def __init__(self, qm: Any):  # minisge.qmaster.qmaster.Qmaster, which creates it
        self.qm = qm
        self.running: dict[tuple[int, int], dict[str, PeTask]] = {}
        self.next_ids: dict[tuple[int, int, str], int] = {}
        self.summed: dict[tuple[int, int], dict[str, float]] = {}
        self.held: dict[tuple[int, int], dict[str, Any]] = {}  # master ends waiting for their slave tasks

    # ------------------------------------------------------------ qrsh -inherit
    async def run(self, req: dict[str, Any], peer: Any,
                  send_more: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
        """The ``pe_task`` request of ``qrsh -inherit``: check, start, stream, end."""
        qm = self.qm
        try:
            job_id = int(req["job_id"])
            task_id = int(req.get("task_id") or 1)
        except (KeyError, TypeError, ValueError) as e:
            raise RequestError("error: executing task of job 0 failed: bad job id") from e
        host = short_host(str(req.get("host") or ""))
        argv = req.get("command")
        env = req.get("env") or {}
        if not host or not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv) \
                or not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise RequestError(f"error: executing task of job {job_id} failed: bad request")
        if host not in qm.execds:
            raise RequestError(send_failed(job_id, host))
        job = qm.jobs.get(job_id)
        task = job.tasks.get(task_id) if job else None
        pe = qm.config.pes.get(task.granted_pe) if task and task.granted_pe else None
        key = (job_id, task_id)
        request = TaskRequest(
            job_id=job_id, caller_uid=peer.uid, caller=user_name(peer.uid),
            job_uid=job.uid if task else None, owner=job.owner if job else "",
            running=bool(task and task.state == RUNNING and key not in self.held),
            deleting=bool(task and task.delete_requested),
            control_slaves=bool(pe and pe.control_slaves),
            job_is_first_task=pe is None or pe.job_is_first_task,
            granted=tuple((g.host, g.slots) for g in task.granted) if task else (),
            host=host,
            running_on_host=sum(1 for t in self.running.get(key, {}).values() if t.host == host),
        )
        why = refusal(request)
        if why or job is None or task is None:
            log.warning("pe task of job %d.%d for %s refused: %s", job_id, task_id, host, why)
            raise RequestError(didnt_accept(job_id, host))
        n = self.next_ids.get((job_id, task_id, host), 1)
        self.next_ids[(job_id, task_id, host)] = n + 1
        pe_task_id = f"{n}.{host}"
        send, recv = trio.open_memory_channel[tuple[str, Any]](math.inf)
        pt = PeTask(job_id, task_id, pe_task_id, host, qm.clock(), send)
        self.running.setdefault(key, {})[pe_task_id] = pt
        msg = qm.config.start_message(job, host_view(task, host), qm.spool.script_path(job.number))
        msg.update(op="pe_task_start", pe_task_id=pe_task_id, command=argv, task_env=env, host_slots=1)
        if task.suspended_by:  # the job is stopped: the task starts stopped
            msg.update(suspended=True, suspend_method=self.method(task, host, "suspend"))
        log.info("starting pe task %s of job %d.%d for %s", pe_task_id, job_id, task_id, request.caller)
        await qm.outbox.send(host, msg)
        listening = True
        async with recv:
            async for kind, payload in recv:
                if kind == "end":
                    return ok_reply(pe_task_id=pe_task_id, exit_status=int(payload.get("exit_status", 0)),
                                    failed=int(payload.get("failed", 0)), error=payload.get("error", ""))
                if listening:
                    try:
                        await send_more(ok_reply(stream=kind, data=payload))
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        listening = False  # qrsh went away; the task runs on
        return ok_reply(pe_task_id=pe_task_id, exit_status=1, failed=1, error="lost")

    # ------------------------------------------------------------ execd messages
    async def from_execd(self, msg: dict[str, Any]) -> None:
        """``pe_task_output`` and ``pe_task_end`` from the execd of a task's host."""
        key = (int(msg["job_id"]), int(msg["task_id"]))
        pt = self.running.get(key, {}).get(str(msg.get("pe_task_id")))
        if pt is None:
            log.warning("execd %s reports unknown pe task %s of job %d.%d", msg.get("host"),
                        msg.get("pe_task_id"), *key)
            return
        if msg["op"] == "pe_task_output":
            self._tell(pt, (msg.get("stream") or "out", str(msg.get("data") or "")))
            return
        del self.running[key][pt.pe_task_id]
        if not self.running[key]:
            del self.running[key]
        self._account(pt, msg)
        self._tell(pt, ("end", msg))
        if pt.channel is not None:
            pt.channel.close()
        if key in self.held and key not in self.running:
            self._finish_master(self.held.pop(key))

    def _tell(self, pt: PeTask, item: tuple[str, Any]) -> None:
        if pt.channel is None:
            return
        try:
            pt.channel.send_nowait(item)
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.WouldBlock):  # the request is gone
            pt.channel = None

    def _account(self, pt: PeTask, report: dict[str, Any]) -> None:
        """accounting_summary FALSE: the task's own record; TRUE: its usage
        waits in the sum for the job's single record."""
        qm = self.qm
        job = qm.jobs.get(pt.job_id)
        task = job.tasks.get(pt.task_id) if job else None
        if task is None:
            return
        pe = qm.config.pes.get(task.granted_pe)
        key = (pt.job_id, pt.task_id)
        if pe is not None and pe.accounting_summary:
            self.summed[key] = sum_usage(self.summed.get(key, {}), report.get("usage") or {})
            return
        outcome = exit_codes.job_outcome(report, True, True, deleted=pt.killed or task.delete_requested)
        base = accounting_writer.record_for(job, task, report, outcome.failed, qm.host,
            *qm.config.accounting_facts(job, task))
        cqueue = next((g.cqueue for g in task.granted if g.host == pt.host), base.qname)
        record = task_record(base, host=pt.host, cqueue=cqueue, pe_task_id=pt.pe_task_id,
                             submission_time=pt.submission_time)
        qm.account(record)

    # ------------------------------------------------------------ the master's end
    async def master_end(self, report: dict[str, Any]) -> dict[str, Any] | None:
        """A master task ended.  Slave tasks still running are killed and the
        end is held (None) until they have ended; otherwise the report to
        record, with the summed slave usage when accounting_summary is TRUE."""
        key = (int(report["job_id"]), int(report["task_id"]))
        running = self.running.get(key)
        if running:
            for pt in list(running.values()):
                if pt.host not in self.qm.execds:  # its execd is gone: it cannot report
                    log.warning("pe task %s of job %d.%d: execd %s is gone", pt.pe_task_id, *key, pt.host)
                    del running[pt.pe_task_id]
            if running:
                self.held[key] = report
                await self.kill(key[0], key[1])
                return None
            del self.running[key]
        return self._merge(report)

    def _merge(self, report: dict[str, Any]) -> dict[str, Any]:
        key = (int(report["job_id"]), int(report["task_id"]))
        for k in [k for k in self.next_ids if k[:2] == key]:
            del self.next_ids[k]
        summed = self.summed.pop(key, None)
        if summed:
            report = dict(report, usage=merged_master_usage(report.get("usage") or {}, summed))
        return report

    def _finish_master(self, report: dict[str, Any]) -> None:
        qm = self.qm
        report = self._merge(report)
        qm.task_finished(report)
        qm.ack_task_end(str(report.get("host")), report["job_id"], report["task_id"])
        qm.changed()

    # ------------------------------------------------------------ suspend, resume
    def method(self, task: Task, host: str, action: str) -> dict[str, Any]:
        """queue_conf(5) suspend_method/resume_method of the job's queue
        instance on ``host`` (the master's when it has none there)."""
        qm = self.qm
        g = next((g for g in task.granted if short_host(g.host) == host), task.master)
        conf = qm.config.cqueues.get(g.cqueue) if g is not None else None
        text = qm.config.qvalue(conf, f"{action}_method", g.host) if conf is not None and g is not None else None
        return parse_method(text, action)

    def control(self, job, task, action: str) -> None:
        """The job's task is stopped or continued: post the same for its
        slave tasks on every host in the qmaster's outbox (delivered by the
        scheduler loop after its next flush, after the master's own message)."""
        running = self.running.get((job.number, task.task_id))
        if not running:
            return
        hosts = [pt.host for pt in running.values()]
        for host, msg in control_messages(job.number, task.task_id, hosts,
                                          lambda h: self.method(task, h, action), action):
            self.qm.outbox.post(host, msg)

    async def kill(self, job_id: int, task_id: int, signal: str = "KILL") -> None:
        """Kill the job's slave tasks on every host (qdel, the master's end)."""
        tasks = self.running.get((job_id, task_id), {})
        for pt in tasks.values():
            pt.killed = True
        for host in sorted({pt.host for pt in tasks.values()}):
            await self.qm.outbox.send(host, {"op": "pe_task_kill", "job_id": job_id, "task_id": task_id,
                                             "signal": signal})
