"""What a finished task means for the job and the queue (pure).

The rules of sge_shepherd(8), queue_conf(5) and Grid Engine 8.1.9's
``sge_job_exit`` (SGE-FACTS.md §1c, §2): the shepherd's ``failed`` state and
the job's exit status decide whether the job is finished, re-queued, or put
in error state, and whether the queue instance goes into error state.
"""

from __future__ import annotations

from typing import NamedTuple

RESCHEDULE_EXIT_STATUS = 99
APPERROR_EXIT_STATUS = 100

SSTATE_AGAIN = 25
SSTATE_APPERROR = 30
SSTATE_FAILURE_AFTER_JOB = 100

# sge_status(5) / execution_states.c: the text after a ``failed`` code (qacct, qstat -j)
FAILED_TEXT: dict[int, str] = {
    0: "",
    1: "assumedly before job",
    2: "on executing shepherd",
    3: "before writing config",
    4: "before writing pid",
    5: "on reading config file",
    6: "setting processor set",
    7: "before prolog",
    8: "in prolog",
    9: "before pestart",
    10: "in pestart",
    11: "before job",
    12: "before pestop",
    13: "in pestop",
    14: "before epilog",
    15: "in epilog",
    16: "releasing processor set",
    17: "through signal",
    18: "shepherd returned error",
    19: "before writing exit_status",
    20: "found unexpected error file",
    21: "in recognizing job",
    22: "removed manually",
    24: "migrating",
    25: "rescheduling",
    26: "opening input/output file",
    27: "searching requested shell",
    28: "changing into working directory",
    29: "AFS setup",
    30: "application error returned",
    31: "accessing sgepasswd file",
    32: "entry is missing in sgepasswd file",
    33: "wrong password",
    34: "communicating with Grid Engine Helper Service",
    35: "before job in Grid Engine Helper Service",
    36: "checking configured daemons",
    37: "qmaster enforced h_rt, h_cpu, or h_vmem limit",
    38: "adding supplementary group",
    100: "assumedly after job",
}

# The general failure each shepherd state means (reaper_execd.c, SoGE 8.1.9
# as observed): the job is to blame → error state (Eqw); the queue (or the
# host) → re-queue and error state for the queue instance (or all of the
# host's); pe_stop → the queue's error state alone.
_JOB_ERRORS = frozenset({26, 27, 28, 29, 30, 32, 33, 35, 38})
_HOST_ERRORS = frozenset({7, 36})
# 3: the execd could not set the task up (its directory, TMPDIR, the config):
# re-queued, and the queue instance stops taking jobs until it is looked at
_QUEUE_ERRORS_REQUEUE = frozenset({3, 6, 8, 9, 10, 14, 15})
_QUEUE_ERRORS_NO_RERUN = frozenset({12, 13})


class Outcome(NamedTuple):
    failed: int  # the accounting ``failed`` code
    requeue: bool  # the task goes back to pending (Rq)
    job_error: bool  # the task goes into error state (Eqw)
    queue_error: bool  # the queue instance goes into error state (E)
    reason: str  # the error reason shown by qstat -j
    host_error: bool = False  # every queue instance on the host goes into error state


def failed_text(code: int) -> str:
    return FAILED_TEXT.get(code, "invalid execution state")


def queue_error_message(cqueue: str, job_id: int, host: str) -> str:
    """What ``qstat -explain E`` shows for a queue instance a job's failure
    put into error state (msg 33571, as Grid Engine 8.1.9 prints it)."""
    return f"queue {cqueue} marked QERROR as result of job {job_id}'s failure at host {host}"


def job_outcome(report: dict, forbid_reschedule: bool, forbid_apperror: bool, deleted: bool = False) -> Outcome:
    """Apply the exit-code rules to an execd's report of a finished task
    (sge_shepherd(8), queue_conf(5) prolog/epilog, sge_pe(5); qmaster
    sge_job_exit; man/man5/minisge_exit_codes.5).

    ``report`` carries ``failed`` (the shepherd's state), ``exit_status``,
    ``signal`` and, for failures, ``error`` (the first line of the shepherd's
    error file).  The shepherd has already turned job exit 99/100 into
    states 25/30 unless FORBID_RESCHEDULE/FORBID_APPERROR; a report without
    that (an older shepherd) gets the same rule here.
    """
    failed = int(report.get("failed", 0))
    status = int(report.get("exit_status", 0))
    sig = int(report.get("signal", 0))
    error = report.get("error", "")
    if failed:
        reason = error or failed_text(failed)
        if failed in _JOB_ERRORS:
            return Outcome(failed, False, True, False, reason)
        if failed in _HOST_ERRORS:
            return Outcome(failed, True, False, True, reason, host_error=True)
        if failed in _QUEUE_ERRORS_REQUEUE:
            return Outcome(failed, True, False, True, reason)
        if failed in _QUEUE_ERRORS_NO_RERUN:
            return Outcome(failed, False, False, True, reason)
        if failed <= 11 or failed == SSTATE_AGAIN:
            return Outcome(failed, True, False, False, reason)
        return Outcome(failed, False, False, False, reason)
    if report.get("limit") in ("h_rt", "h_cpu", "h_vmem"):  # the execd killed it (queue_conf(5) RESOURCE LIMITS)
        return Outcome(37, False, False, False, "")
    if sig or deleted:
        return Outcome(SSTATE_FAILURE_AFTER_JOB, False, False, False, "")
    if status == RESCHEDULE_EXIT_STATUS and not forbid_reschedule:
        return Outcome(SSTATE_AGAIN, True, False, False, "exit_status of job start = 99")
    if status == APPERROR_EXIT_STATUS and not forbid_apperror:
        return Outcome(SSTATE_APPERROR, False, True, False, "exit_status of job start = 100")
    return Outcome(0, False, False, False, "")
