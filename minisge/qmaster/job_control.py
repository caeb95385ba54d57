"""Job control on the qmaster: suspend, resume, terminate, reschedule.

The rules (suspension causes, methods, qmod's words) are
:mod:`minisge.rules.job_control`; :class:`JobControl` applies them to the
qmaster's jobs: it changes the model, spools the job and posts the message
to the execd in the qmaster's outbox (delivered by the scheduler loop after
its flush, so the calls are usable from synchronous code).
"""

from __future__ import annotations

import logging
from typing import Any

from minisge.formats.sge_types import SpecifierError, parse_time
from minisge.qmaster import accounting_writer
from minisge.qmaster.job import RESCHEDULING, RUNNING, Job, Task
from minisge.qmaster.range_list import TaskSelection
from minisge.qmaster.spool import SpoolError
from minisge.rules import exit_codes
from minisge.rules import job_control as rules

log = logging.getLogger("minisge.qmaster")


class JobControl:
    """Suspend, resume, terminate and reschedule the qmaster's running tasks."""

    def __init__(self, qm: Any):  # minisge.qmaster.qmaster.Qmaster, which creates it
        self.qm = qm

    # ------------------------------------------------------------ messages
    def control_message(self, job: Job, task: Task, action: str) -> dict[str, Any]:
        """The execd message for ``action`` (suspend, resume, terminate) of a task,
        with its queue's method and, for a ``-notify`` job, the notify time."""
        config = self.qm.config
        msg: dict[str, Any] = {"op": action, "job_id": job.number, "task_id": task.task_id}
        m = task.master
        conf = config.cqueues.get(m.cqueue) if m is not None else None
        method_text = config.qvalue(conf, f"{action}_method", m.host) if conf is not None and m else None
        msg["method"] = rules.parse_method(method_text, action)
        notify = 0.0
        if action in rules.NOTIFY_SIGNAL and job.spec.get("notify") and conf is not None and m is not None:
            try:
                notify = parse_time(config.qvalue(conf, "notify", m.host))
            except SpecifierError:
                notify = 0.0
            if notify == float("inf"):
                notify = 0.0
            msg["notify_signal"] = rules.signal_number(rules.NOTIFY_SIGNAL[action])
        msg["notify"] = notify
        return msg

    def post(self, task: Task, msg: dict[str, Any]) -> None:
        """Post a message for the task's execd; the scheduler loop sends it
        after the next flush (so a change is spooled before the execd acts)."""
        if task.master is None:
            return
        self.qm.outbox.post(task.master.host, msg)
        self.qm.changed()

    # ------------------------------------------------------------ suspension causes
    def suspend_task(self, job: Job, task: Task, cause: str) -> None:
        """Add ``cause`` to the task's suspension causes; stop the job when it is
        the first one."""
        if cause not in rules.CAUSES:
            raise ValueError(f"unknown suspension cause {cause!r}")
        if task.state != RUNNING:
            return
        before = set(task.suspended_by)
        task.suspended_by.add(cause)
        if before == task.suspended_by:
            return
        self.qm.save_job(job, sync=False)
        if rules.stop_changes(before, task.suspended_by) == "suspend":
            self.post(task, self.control_message(job, task, "suspend"))
            self.qm.pe_tasks.control(job, task, "suspend")  # its slave tasks, on every host

    def resume_task(self, job: Job, task: Task, cause: str) -> None:
        """Remove ``cause``; continue the job when no cause is left."""
        if cause not in rules.CAUSES:
            raise ValueError(f"unknown suspension cause {cause!r}")
        if cause not in task.suspended_by:
            return
        before = set(task.suspended_by)
        task.suspended_by.discard(cause)
        self.qm.save_job(job, sync=False)
        if task.state == RUNNING and rules.stop_changes(before, task.suspended_by) == "resume":
            self.post(task, self.control_message(job, task, "resume"))
            self.qm.pe_tasks.control(job, task, "resume")

    # ------------------------------------------------------------ qmod
    def qmod_job(self, job: Job, task_ids: TaskSelection | None, action: str, caller: str,
                 force: bool) -> list[str]:
        """qmod -sj/-usj/-rj of a job's tasks (all, or those ``task_ids`` names)."""
        lines = []
        if task_ids is None:
            ids = sorted({*job.tasks, *job.pending})
        else:
            ids = sorted({*(t for t in job.tasks if t in task_ids), *job.pending.select(task_ids)})
        for tid in ids:
            task = job.tasks.get(tid)
            if action == "reschedule":
                lines.append(self.qmod_reschedule(job, tid, task, force))
                continue
            ref = rules.TaskRef(job.number, tid, job.is_array)
            running = task is not None and task.state == RUNNING
            line, change = rules.suspend_message(caller, ref, running, task.suspended_by if task else set(), action)
            lines.append(line)
            if change and task is not None:
                if action == "suspend":
                    self.suspend_task(job, task, "job")
                else:
                    self.resume_task(job, task, "job")
        return lines

    def qmod_queue(self, qi: str, action: str, caller: str, force: bool) -> list[str]:
        """qmod -sq/-usq/-rq of one queue instance: its state ``s`` and the
        ``queue`` cause of every task granted slots in it."""
        qm = self.qm
        if action == "reschedule":
            out = []
            for job in list(qm.jobs.values()):
                for task in list(job.tasks.values()):
                    if task.state == RUNNING and task.master is not None and task.master.qinstance == qi:
                        out.append(self.qmod_reschedule(job, task.task_id, task, force))
            return out
        states = qm.config.qi_states.get(qi, "")
        try:
            if action == "suspend":
                if "s" in states:
                    return [f'Queue instance "{qi}" is already in the specified state: suspended']
                qm.config.add_qi_state(qi, "s")
            else:
                if "s" not in states:
                    return [f'Queue instance "{qi}" is already in the specified state: unsuspended']
                qm.config.remove_qi_state(qi, "s")
        except SpoolError:  # 8.1.9's words; nothing changed
            return [f'Queue instance state of "{qi}" not modified: Spooling framework failed']
        for job in list(qm.jobs.values()):
            for task in list(job.tasks.values()):
                if any(g.qinstance == qi for g in task.granted):
                    if action == "suspend":
                        self.suspend_task(job, task, "queue")
                    else:
                        self.resume_task(job, task, "queue")
        word = "suspended" if action == "suspend" else "unsuspended"
        return [f'{caller}@{qm.host} changed state of "{qi}" ({word})']

    def qmod_reschedule(self, job: Job, task_id: int, task: Task | None, force: bool) -> str:
        """qmod -r of one task: a running, restartable task is killed (the
        queue's terminate_method) and goes back to pending as restarted (Rq)."""
        ref = rules.TaskRef(job.number, task_id, job.is_array)
        if task is None or task.state != RUNNING or task.master is None:
            return rules.not_applicable(ref)
        if task.delete_requested:
            return rules.already_deleted(ref)
        refusal = rules.reschedule_refusal(ref, job.spec, self.qm.queue_rerun(task), force)
        if refusal:
            return refusal
        self.reschedule_task(job, task)
        return rules.rescheduled_message(ref, task.master.host, force)

    # ------------------------------------------------------------ rescheduling
    def reschedule_task(self, job: Job, task: Task) -> None:
        """Push the rescheduling of a running task (reschedule.c): 8.1.9 writes
        the accounting record of the run at once, ``failed`` 25 (rescheduling)
        with zero times, status and usage; the run is killed with the queue's
        terminate_method and, once its end is reported (and not accounted
        again), the task is pending again as restarted (``Rq``, RESTARTED=1)."""
        qm = self.qm
        record = accounting_writer.record_for(job, task, {}, exit_codes.SSTATE_AGAIN, qm.host,
            *qm.config.accounting_facts(job, task))
        record = record._replace(submission_time=0, start_time=0, end_time=0, exit_status=0, ru_wallclock=0,
                                 ru_utime=0.0, ru_stime=0.0, cpu=0.0)
        qm.account(record)
        task.state = RESCHEDULING
        task.suspended_by.clear()
        qm.save_job(job)
        self.post(task, self.control_message(job, task, "terminate"))


def end_of_rescheduled(job: Job, task: Task) -> None:
    """The killed run of a rescheduled task has ended: pending again (unless
    it was deleted meanwhile), restarted."""
    del job.tasks[task.task_id]
    if not task.delete_requested:
        job.requeue(task.task_id, max(task.restarted, 1))


def rerun_outcome(outcome: exit_codes.Outcome, job: Job, task: Task,
                  queue_rerun: str | bool | None) -> exit_codes.Outcome:
    """The exit-rule outcome of a task's run (:func:`minisge.rules.exit_codes.rerun_outcome`)
    for this job in a queue whose ``rerun`` is ``queue_rerun``."""
    return exit_codes.rerun_outcome(outcome, rules.is_rerunnable(job.spec, queue_rerun), task.delete_requested)
