"""Job control in the qmaster: suspend, resume, terminate, reschedule.

A running task is stopped while any *cause* holds it (``Task.suspended_by``):
``job`` (qmod -sj), ``queue`` (qmod -sq of its queue instance), ``threshold``
(queue_conf(5) suspend_thresholds) and ``subordinate`` (subordinate_list).
It is stopped when the first cause comes and continued when the last one
goes (:func:`suspend_task`, :func:`resume_task`).  How it is stopped,
continued or killed is the queue's ``suspend_method``, ``resume_method``
and ``terminate_method`` (queue_conf(5)), applied by the execd
(:mod:`minisge.execd_control`); a job submitted with ``-notify`` gets
SIGUSR1 (suspend) or SIGUSR2 (kill) the queue's ``notify`` time before.

The pure helpers come first; the functions taking the qmaster change its
model, spool the job and queue the message to the execd (sent by the
scheduler loop with the acknowledgements, so they are usable from sync code).
"""

from __future__ import annotations

import signal as _signal

from minisge.job import RESCHEDULING, RUNNING, Job, Task

CAUSES = ("job", "queue", "threshold", "subordinate")

# queue_conf(5): the methods' defaults
DEFAULT_METHOD = {"suspend": "SIGSTOP", "resume": "SIGCONT", "terminate": "SIGKILL"}
# sge_shepherd(8) / submit(1) -notify: the warning before the real signal
NOTIFY_SIGNAL = {"suspend": "SIGUSR1", "terminate": "SIGUSR2"}


def signal_number(text: str) -> int | None:
    """A signal name (``SIGSTOP``, ``STOP``, case-insensitive) or number as
    queue_conf(5) allows for the methods; None when it is neither."""
    t = text.strip()
    if t.isdigit():
        n = int(t)
        return n if 0 < n < _signal.NSIG else None
    name = t.upper()
    if not name.startswith("SIG"):
        name = "SIG" + name
    sig = getattr(_signal, name, None)
    return int(sig) if isinstance(sig, _signal.Signals) else None


def parse_method(text: str | None, action: str) -> dict:
    """queue_conf(5) suspend_method / resume_method / terminate_method:
    ``NONE`` (the default signal), a signal name or number, or the absolute
    path of a command (with shepherd variables).  ``{"signal": n}`` or
    ``{"command": line}``."""
    t = (text or "").strip()
    if not t or t.upper() == "NONE":
        t = DEFAULT_METHOD[action]
    if t.startswith("/"):
        return {"command": t}
    n = signal_number(t)
    if n is None:
        n = signal_number(DEFAULT_METHOD[action])
    return {"signal": n}


def stop_changes(before: set[str], after: set[str]) -> str | None:
    """``"suspend"`` when the causes become non-empty, ``"resume"`` when they
    become empty, None when the task's run state stays as it is."""
    if not before and after:
        return "suspend"
    if before and not after:
        return "resume"
    return None


def is_rerunnable(spec: dict, queue_rerun: str | bool | None) -> bool:
    """qsub -r y|n decides; without it the queue's ``rerun`` (queue_conf(5))."""
    r = spec.get("restart")
    if r is not None:
        return bool(r)
    if isinstance(queue_rerun, bool):
        return queue_rerun
    return str(queue_rerun or "").strip().upper() in ("TRUE", "1", "YES", "Y")


# ================================================================ qmaster side
def control_message(qm, job: Job, task: Task, action: str) -> dict:
    """The execd message for ``action`` (suspend, resume, terminate) of a task,
    with its queue's method and, for a ``-notify`` job, the notify time."""
    from minisge.formats.sge_types import parse_time

    msg = {"op": action, "job_id": job.number, "task_id": task.task_id}
    m = task.master
    conf = qm.config.cqueues.get(m.cqueue) if m is not None else None
    method_text = qm.config.qvalue(conf, f"{action}_method", m.host) if conf is not None else None
    msg["method"] = parse_method(method_text, action)
    notify = 0.0
    if action in NOTIFY_SIGNAL and job.spec.get("notify") and conf is not None:
        try:
            notify = parse_time(qm.config.qvalue(conf, "notify", m.host))
        except Exception:
            notify = 0.0
        if notify == float("inf"):
            notify = 0.0
        msg["notify_signal"] = signal_number(NOTIFY_SIGNAL[action])
    msg["notify"] = notify
    return msg


def queue_message(qm, task: Task, msg: dict) -> None:
    """Queue a message for the task's execd; the scheduler loop sends it
    after the next flush (so a change is spooled before the execd acts)."""
    if task.master is None:
        return
    qm.acks.append((task.master.host, msg))
    qm.changed()


def suspend_task(qm, job: Job, task: Task, cause: str) -> None:
    """Add ``cause`` to the task's suspension causes; stop the job when it is
    the first one."""
    if cause not in CAUSES:
        raise ValueError(f"unknown suspension cause {cause!r}")
    if task.state != RUNNING:
        return
    before = set(task.suspended_by)
    task.suspended_by.add(cause)
    if before == task.suspended_by:
        return
    qm.save_job(job, sync=False)
    if stop_changes(before, task.suspended_by) == "suspend":
        queue_message(qm, task, control_message(qm, job, task, "suspend"))
        _pe_tasks_follow(qm, job, task, "suspend")


def resume_task(qm, job: Job, task: Task, cause: str) -> None:
    """Remove ``cause``; continue the job when no cause is left."""
    if cause not in CAUSES:
        raise ValueError(f"unknown suspension cause {cause!r}")
    if cause not in task.suspended_by:
        return
    before = set(task.suspended_by)
    task.suspended_by.discard(cause)
    qm.save_job(job, sync=False)
    if task.state == RUNNING and stop_changes(before, task.suspended_by) == "resume":
        queue_message(qm, task, control_message(qm, job, task, "resume"))
        _pe_tasks_follow(qm, job, task, "resume")


def _pe_tasks_follow(qm, job: Job, task: Task, action: str) -> None:
    """The job's slave tasks (qrsh -inherit) on every host follow its
    master task (:meth:`minisge.pe_tasks.PeTasks.control`)."""
    pe_tasks = getattr(qm, "pe_tasks", None)
    if pe_tasks is not None:
        pe_tasks.control(job, task, action)


# ================================================================ qmod
# qmod(1) of 8.1.9: the job and queue actions of this module
JOB_ACTIONS = {"s": "suspend", "us": "resume", "sj": "suspend", "usj": "resume", "r": "reschedule", "rj": "reschedule"}
QUEUE_ACTIONS = {"s": "suspend", "us": "resume", "sq": "suspend", "usq": "resume", "r": "reschedule", "rq": "reschedule"}
QMOD_ACTIONS = frozenset(JOB_ACTIONS) | frozenset(QUEUE_ACTIONS)


def task_label(job: Job, task_id: int) -> str:
    """``job 5`` or ``job-array task 5.3`` as qmaster messages name them."""
    return f"job-array task {job.number}.{task_id}" if job.is_array else f"job {job.number}"


def suspend_message(caller: str, job: Job, task: Task | None, task_id: int, action: str) -> tuple[str, bool]:
    """qmod -sj/-usj of one task (sge_qmod_qmaster.c, msgs 33413-33429, 33684):
    (the line, whether the task's causes change)."""
    what = task_label(job, task_id)
    if task is None or task.state != RUNNING:
        return f"Modify operation can not be applied on job-array task {job.number}.{task_id} in pending/hold state", False
    if action == "suspend":
        if "job" in task.suspended_by:
            return f"{caller} - {what} is already suspended", False
        return f"{caller} - suspended {what}", True
    if "job" not in task.suspended_by:
        if "threshold" in task.suspended_by:
            return (f"{caller} - {what} is not suspended by administrator - modify suspend threshold list of "
                    "queue to remove suspend state"), False
        return f"{caller} - {what} is already unsuspended", False
    return f"{caller} - unsuspended {what}", True


def reschedule_refusal(job: Job, task_id: int, queue_rerun, force: bool) -> str | None:
    """Why qmod -r does not reschedule a running task (reschedule.c), or None:
    ``-r n`` jobs are not restartable, other jobs without ``-r y`` only in a
    queue with ``rerun TRUE``; ``-f`` overrides both.  8.1.9 prints ``queue
    none`` where it means the queue's name (its own bug, kept)."""
    if force:
        return None
    what = task_label(job, task_id)
    r = job.spec.get("restart")
    if r is False:
        return f"The {what} is not restartable"
    if r is None and not is_rerunnable(job.spec, queue_rerun):
        return f"The {what} is running in queue none where jobs are not rerunable."
    return None


def _split_task_target(target: str) -> tuple[str, list[int] | None] | None:
    """``5``, ``5.3``, ``5.1-4:2``, ``name`` → (job ref, task ids or None)."""
    ref, dot, rng = target.partition(".")
    if not dot or not ref.isdigit():
        return target, None
    from minisge.qmaster import _expand_tasks

    tasks = _expand_tasks(rng)
    return (ref, tasks) if tasks is not None else None


def qmod(qm, req: dict, uid: int) -> tuple[list[str], int]:
    """qmod -s/-us/-r (jobs or queues), -sj/-usj/-rj (jobs), -sq/-usq/-rq (queues)."""
    from minisge.qmaster import user_name

    caller = user_name(uid)
    action = req["action"]
    force = bool(req.get("force"))
    lines: list[str] = []
    rc = 0
    for target in req.get("targets") or []:
        jobs: list[tuple[Job, list[int] | None]] = []
        if action in JOB_ACTIONS:
            split = _split_task_target(target)
            if split is not None:
                jobs = [(j, split[1]) for j in qm.find_jobs(split[0])]
        qis = qm.config.match_qinstances(target) if action in QUEUE_ACTIONS and not jobs else []
        if not jobs and not qis:
            lines.append(f'invalid queue "{target}"' if action not in JOB_ACTIONS else f'invalid queue or job "{target}"')
            rc = 1
            continue
        for job, task_ids in jobs:
            if job.owner != caller and not qm.is_operator(uid):
                lines.append(f'{caller} - you have no permission to modify job "{job.number}"')
                rc = 1
                continue
            lines.extend(_qmod_job(qm, job, task_ids, JOB_ACTIONS[action], caller, force))
        for qi in qis:
            if not qm.is_operator(uid) and caller not in qm.config.owners_of(qi):
                lines.append(f'{caller} - you have no permission to modify queue "{qi}"')
                rc = 1
                continue
            lines.extend(_qmod_queue(qm, qi, QUEUE_ACTIONS[action], caller, force))
    qm.changed()
    return lines, rc


def _job_task_ids(job: Job, task_ids: list[int] | None) -> list[int]:
    ids = sorted(set(job.tasks) | set(job.pending))
    return ids if task_ids is None else [t for t in ids if t in task_ids]


def _qmod_job(qm, job: Job, task_ids, action: str, caller: str, force: bool) -> list[str]:
    lines = []
    for tid in _job_task_ids(job, task_ids):
        task = job.tasks.get(tid)
        if action == "reschedule":
            lines.append(_reschedule(qm, job, tid, task, force))
            continue
        line, change = suspend_message(caller, job, task, tid, action)
        lines.append(line)
        if change and action == "suspend":
            qm.suspend_task(job, task, "job")
        elif change:
            qm.resume_task(job, task, "job")
    return lines


def _qmod_queue(qm, qi: str, action: str, caller: str, force: bool) -> list[str]:
    """qmod -sq/-usq/-rq of one queue instance: its state ``s`` and the
    ``queue`` cause of every task granted slots in it."""
    if action == "reschedule":
        out = []
        for job in list(qm.jobs.values()):
            for task in list(job.tasks.values()):
                if task.state == RUNNING and task.master is not None and task.master.qinstance == qi:
                    out.append(_reschedule(qm, job, task.task_id, task, force))
        return out
    states = qm.config.qi_states.get(qi, "")
    if action == "suspend":
        if "s" in states:
            return [f'Queue instance "{qi}" is already in the specified state: suspended']
        qm.config.add_qi_state(qi, "s")
    else:
        if "s" not in states:
            return [f'Queue instance "{qi}" is already in the specified state: unsuspended']
        qm.config.remove_qi_state(qi, "s")
    for job in list(qm.jobs.values()):
        for task in list(job.tasks.values()):
            if any(g.qinstance == qi for g in task.granted):
                if action == "suspend":
                    qm.suspend_task(job, task, "queue")
                else:
                    qm.resume_task(job, task, "queue")
    word = "suspended" if action == "suspend" else "unsuspended"
    return [f'{caller}@{qm.host} changed state of "{qi}" ({word})']


def _reschedule(qm, job: Job, task_id: int, task: Task | None, force: bool) -> str:
    """qmod -r of one task: a running, restartable task is killed (the
    queue's terminate_method) and goes back to pending as restarted (Rq)."""
    if task is None or task.state != RUNNING:
        return f"Modify operation can not be applied on job-array task {job.number}.{task_id} in pending/hold state"
    if task.delete_requested:
        return f"The {task_label(job, task_id)} is already in deleted state. No rescheduling!"
    m = task.master
    conf = qm.config.cqueues.get(m.cqueue) if m is not None else None
    rerun = qm.config.qvalue(conf, "rerun", m.host) if conf is not None else "FALSE"
    refusal = reschedule_refusal(job, task_id, rerun, force)
    if refusal:
        return refusal
    reschedule_task(qm, job, task)
    word = "Forced" if force else "Pushed"
    return f"{word} rescheduling of {task_label(job, task_id)} on host {m.host if m else ''}"


def reschedule_task(qm, job: Job, task: Task) -> None:
    """Push the rescheduling of a running task (reschedule.c): 8.1.9 writes
    the accounting record of the run at once, ``failed`` 25 (rescheduling)
    with zero times, status and usage; the run is killed with the queue's
    terminate_method and, once its end is reported (and not accounted
    again), the task is pending again as restarted (``Rq``, RESTARTED=1)."""
    from minisge import accounting_writer

    record = accounting_writer.record_for(job, task, {}, 25, qm.host)
    record = record._replace(submission_time=0, start_time=0, end_time=0, exit_status=0, ru_wallclock=0,
                          ru_utime=0.0, ru_stime=0.0, cpu=0.0)
    accounting_writer.append(qm.cell.accounting, record)
    task.state = RESCHEDULING
    task.suspended_by.clear()
    qm.save_job(job)
    queue_message(qm, task, control_message(qm, job, task, "terminate"))


def end_of_rescheduled(qm, job: Job, task: Task) -> None:
    """The killed run of a rescheduled task has ended: pending again (unless
    it was deleted meanwhile), restarted."""
    del job.tasks[task.task_id]
    if not task.delete_requested:
        job.pending.append(task.task_id)
        job.pending.sort()
        job.restarted_pending[task.task_id] = max(task.restarted, 1)


# sge_job_exit case 4: the shepherd died (17) or left no exit status (19, the
# host went down): a rerunnable job is rescheduled, any other one finishes
SHEPHERD_LOST = frozenset({17, 19})


def rerun_outcome(outcome, job: Job, task: Task, queue_rerun):
    """The exit-rule outcome, turned into a re-queue for a rerunnable job
    whose run was lost with its shepherd (qsub -r y, queue rerun TRUE)."""
    if (outcome.failed in SHEPHERD_LOST and not outcome.requeue and not task.delete_requested
            and is_rerunnable(job.spec, queue_rerun)):
        return outcome._replace(requeue=True)
    return outcome


def restarted_after(restarted: int, failed: int) -> int:
    """JAT_job_restarted after a re-queue (job_exit.c): at least 1 (the
    execd's ckpt_arena) for a reschedule (25) and a lost run (17, 19), as it
    was for a re-queue after a queue or host failure (8.1.9 keeps ``qw``)."""
    if failed == 25 or failed in SHEPHERD_LOST:
        return max(restarted, 1)
    return restarted
