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

# failures the job itself is to blame for: the job goes to error state (Eqw)
_JOB_ERRORS = {26, 27, 28, 29, 30}


class Outcome(NamedTuple):
    failed: int  # the accounting ``failed`` code
    requeue: bool  # the task goes back to pending (Rq)
    job_error: bool  # the task goes into error state (Eqw)
    queue_error: bool  # the queue instance goes into error state (E)
    reason: str  # the error reason shown by qstat -j


def failed_text(code: int) -> str:
    return FAILED_TEXT.get(code, "invalid execution state")


def job_outcome(report: dict, forbid_reschedule: bool, forbid_apperror: bool, deleted: bool = False) -> Outcome:
    """Apply the exit-code rules to an execd's report of a finished task.

    ``report`` carries ``failed`` (the shepherd's state), ``exit_status``,
    ``signal`` and, for failures, ``error``.
    """
    failed = int(report.get("failed", 0))
    status = int(report.get("exit_status", 0))
    sig = int(report.get("signal", 0))
    error = report.get("error", "")
    if failed:
        if failed in _JOB_ERRORS:
            return Outcome(failed, False, True, False, error or failed_text(failed))
        if failed in (8, 10, 15, 7):  # prolog / pestart / epilog failures
            return Outcome(failed, True, False, True, error or failed_text(failed))
        if failed == 13:
            return Outcome(failed, False, False, True, error or failed_text(failed))
        if failed <= 11:
            return Outcome(failed, True, False, False, error or failed_text(failed))
        return Outcome(failed, False, False, False, error or failed_text(failed))
    if report.get("limit") == "h_rt":
        return Outcome(37, False, False, False, "")
    if sig or deleted:
        return Outcome(SSTATE_FAILURE_AFTER_JOB, False, False, False, "")
    if status == RESCHEDULE_EXIT_STATUS and not forbid_reschedule:
        return Outcome(SSTATE_AGAIN, True, False, False, "exit_status of job start = 99")
    if status == APPERROR_EXIT_STATUS and not forbid_apperror:
        return Outcome(SSTATE_APPERROR, False, True, False, "exit_status of job start = 100")
    return Outcome(0, False, False, False, "")
