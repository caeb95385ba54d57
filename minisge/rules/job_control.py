"""Job control rules: suspension causes, the methods, qmod's words, restarts.

A running task is stopped while any *cause* holds it: ``job`` (qmod -sj),
``queue`` (qmod -sq of its queue instance), ``threshold`` (queue_conf(5)
suspend_thresholds) and ``subordinate`` (subordinate_list).  It is stopped
when the first cause comes and continued when the last one goes
(:func:`stop_changes`).  How it is stopped, continued or killed is the
queue's ``suspend_method``, ``resume_method`` and ``terminate_method``
(queue_conf(5), :func:`parse_method`); a job submitted with ``-notify``
gets SIGUSR1 (suspend) or SIGUSR2 (kill) the queue's ``notify`` time before.

These are the pure rules; the qmaster applies them
(:mod:`minisge.qmaster.job_control`) and the execd carries the methods out
(:mod:`minisge.execd.job_control`).
"""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping, Set
from typing import Any, NamedTuple

CAUSES = ("job", "queue", "threshold", "subordinate")

# queue_conf(5): the methods' defaults
DEFAULT_METHOD = {"suspend": "SIGSTOP", "resume": "SIGCONT", "terminate": "SIGKILL"}
# sge_shepherd(8) / submit(1) -notify: the warning before the real signal
NOTIFY_SIGNAL = {"suspend": "SIGUSR1", "terminate": "SIGUSR2"}

# qmod(1) of 8.1.9: the job and queue actions of job control
JOB_ACTIONS = {"s": "suspend", "us": "resume", "sj": "suspend", "usj": "resume",
               "r": "reschedule", "rj": "reschedule"}
QUEUE_ACTIONS = {"s": "suspend", "us": "resume", "sq": "suspend", "usq": "resume",
                 "r": "reschedule", "rq": "reschedule"}
QMOD_ACTIONS = frozenset(JOB_ACTIONS) | frozenset(QUEUE_ACTIONS)


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
    try:
        return int(_signal.Signals[name])
    except KeyError:
        return None


def parse_method(text: str | None, action: str) -> dict[str, Any]:
    """queue_conf(5) suspend_method / resume_method / terminate_method:
    ``NONE`` (the default signal), a signal name or number, or the absolute
    path of a command (with shepherd variables).  ``{"signal": n}`` or
    ``{"command": line}``; a word that is neither gets the default signal."""
    t = (text or "").strip()
    if not t or t.upper() == "NONE":
        t = DEFAULT_METHOD[action]
    if t.startswith("/"):
        return {"command": t}
    n = signal_number(t)
    if n is None:
        n = signal_number(DEFAULT_METHOD[action])
    return {"signal": n}


def stop_changes(before: Set[str], after: Set[str]) -> str | None:
    """``"suspend"`` when the causes become non-empty, ``"resume"`` when they
    become empty, None when the task's run state stays as it is."""
    if not before and after:
        return "suspend"
    if before and not after:
        return "resume"
    return None


def is_rerunnable(spec: Mapping[str, Any], queue_rerun: str | bool | None) -> bool:
    """qsub -r y|n decides; without it the queue's ``rerun`` (queue_conf(5))."""
    r = spec.get("restart")
    if r is not None:
        return bool(r)
    if isinstance(queue_rerun, bool):
        return queue_rerun
    return str(queue_rerun or "").strip().upper() in ("TRUE", "1", "YES", "Y")


class TaskRef(NamedTuple):
    """A task as qmod's messages name it."""

    job: int
    task: int
    array: bool

    @property
    def label(self) -> str:
        """``job 5`` or ``job-array task 5.3`` as qmaster messages name them."""
        return f"job-array task {self.job}.{self.task}" if self.array else f"job {self.job}"


def not_applicable(ref: TaskRef) -> str:
    """qmod's answer for a task that does not run (8.1.9 says job-array task
    even for a job that is no array)."""
    return f"Modify operation can not be applied on job-array task {ref.job}.{ref.task} in pending/hold state"


def suspend_message(caller: str, ref: TaskRef, running: bool, suspended_by: Set[str],
                    action: str) -> tuple[str, bool]:
    """qmod -sj/-usj of one task (sge_qmod_qmaster.c, msgs 33413-33429, 33684):
    (the line, whether the task's causes change)."""
    if not running:
        return not_applicable(ref), False
    what = ref.label
    if action == "suspend":
        if "job" in suspended_by:
            return f"{caller} - {what} is already suspended", False
        return f"{caller} - suspended {what}", True
    if "job" not in suspended_by:
        if "threshold" in suspended_by:
            return (f"{caller} - {what} is not suspended by administrator - modify suspend threshold list of "
                    "queue to remove suspend state"), False
        return f"{caller} - {what} is already unsuspended", False
    return f"{caller} - unsuspended {what}", True


def reschedule_refusal(ref: TaskRef, spec: Mapping[str, Any], queue_rerun: str | bool | None,
                       force: bool) -> str | None:
    """Why qmod -r does not reschedule a running task (reschedule.c), or None:
    ``-r n`` jobs are not restartable, other jobs without ``-r y`` only in a
    queue with ``rerun TRUE``; ``-f`` overrides both.  8.1.9 prints ``queue
    none`` where it means the queue's name (its own bug, kept)."""
    if force:
        return None
    r = spec.get("restart")
    if r is False:
        return f"The {ref.label} is not restartable"
    if r is None and not is_rerunnable(spec, queue_rerun):
        return f"The {ref.label} is running in queue none where jobs are not rerunable."
    return None


def rescheduled_message(ref: TaskRef, host: str, force: bool) -> str:
    """qmod -r's line for a task whose rescheduling was pushed."""
    word = "Forced" if force else "Pushed"
    return f"{word} rescheduling of {ref.label} on host {host}"


def already_deleted(ref: TaskRef) -> str:
    """qmod -r of a task that is being deleted."""
    return f"The {ref.label} is already in deleted state. No rescheduling!"


def clear_error_message(caller: str, host: str, ref: TaskRef, in_error: bool) -> str:
    """qmod -cj of one dispatched or failed task (sge_change_job_state)."""
    if in_error:
        return f"{caller}@{host} cleared error state of {ref.label}"
    if ref.array:
        return f"Job-array task {ref.job}.{ref.task} is not in error state"
    return f"Job {ref.job} is not in error state"
