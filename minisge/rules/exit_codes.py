"""The exit-code rules: what the exit of a job or procedure means (pure).

Every rule of sge_shepherd(8), queue_conf(5) (prolog, epilog, RESOURCE
LIMITS, rerun), sge_pe(5) (start/stop_proc_args) and accounting(5) about
exit statuses and ``failed`` codes, and what Grid Engine 8.1.9's execd
(``reaper_execd.c``) and qmaster (``sge_job_exit``) make of them
(SGE-FACTS.md §1-2, man/man5/minisge_exit_codes.5):

* the shepherd turns the exit of each child into its state
  (:func:`procedure_state`, :func:`job_state`), the first failure's state
  being the task's ``failed`` code; a wait status is an exit status as
  accounting(5) writes it (:func:`exit_status`);
* the execd notes a shepherd it lost (:func:`lost_shepherd_state`);
* the qmaster decides from the report whether the task is finished,
  re-queued or in error, and whether its queue instance (or every one of
  its host) goes into error state (:func:`job_outcome`,
  :func:`rerun_outcome`, :func:`restarted_after`), and how the run is
  accounted (:func:`usage_valid`, :func:`accounted_without_times`).

The constants are named as in Grid Engine's ``execution_states.h``; their
texts are :data:`minisge.formats.sge_status.FAILED_TEXT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from minisge.formats.sge_status import failed_text

# ---------------------------------------------------------------- execution_states.h
SSTATE_FAILURE_BEFORE_JOB = 1
ESSTATE_NO_SHEPHERD = 2
ESSTATE_NO_CONFIG = 3  # the execd could not set the task up
ESSTATE_NO_PID = 4
SSTATE_READ_CONFIG = 5
SSTATE_PROCSET_NOTSET = 6
SSTATE_BEFORE_PROLOG = 7
SSTATE_PROLOG_FAILED = 8
SSTATE_BEFORE_PESTART = 9
SSTATE_PESTART_FAILED = 10
SSTATE_BEFORE_JOB = 11
SSTATE_BEFORE_PESTOP = 12
SSTATE_PESTOP_FAILED = 13
SSTATE_BEFORE_EPILOG = 14
SSTATE_EPILOG_FAILED = 15
SSTATE_PROCSET_NOTFREED = 16
ESSTATE_DIED_THRU_SIGNAL = 17
ESSTATE_SHEPHERD_EXIT = 18
ESSTATE_NO_EXITSTATUS = 19
ESSTATE_UNEXP_ERRORFILE = 20
ESSTATE_UNKNOWN_JOB = 21
ESSTATE_EXECD_LOST_RUNNING = 22
ESSTATE_PTF_CANT_GET_PIDS = 23
SSTATE_MIGRATE = 24
SSTATE_AGAIN = 25
SSTATE_OPEN_OUTPUT = 26
SSTATE_NO_SHELL = 27
SSTATE_NO_CWD = 28
SSTATE_AFS_PROBLEM = 29
SSTATE_APPERROR = 30
SSTATE_PASSWD_FILE_ERROR = 31
SSTATE_PASSWD_MISSING = 32
SSTATE_PASSWD_WRONG = 33
SSTATE_HELPER_SERVICE_ERROR = 34
SSTATE_HELPER_SERVICE_BEFORE_JOB = 35
SSTATE_CHECK_DAEMON_CONFIG = 36
SSTATE_QMASTER_ENFORCED_LIMIT = 37
SSTATE_ADD_GRP_SET_ERROR = 38
SSTATE_FAILURE_AFTER_JOB = 100

# sge_shepherd(8), shepherd.c: the exit codes that ask for a reschedule and
# for the job error state
RESCHEDULE_EXIT_STATUS = 99
APPERROR_EXIT_STATUS = 100

# ---------------------------------------------------------------- the general failures
# What each state blames (reaper_execd.c general_failure, SoGE 8.1.9 as
# observed): the job → error state (Eqw); its host → re-queue and error state
# for every queue instance of the host; the queue → re-queue and error state
# for the queue instance; pe_stop → the queue's error state alone.
JOB_FAILURES = frozenset({
    SSTATE_OPEN_OUTPUT, SSTATE_NO_SHELL, SSTATE_NO_CWD, SSTATE_AFS_PROBLEM, SSTATE_APPERROR, SSTATE_PASSWD_MISSING,
    SSTATE_PASSWD_WRONG, SSTATE_HELPER_SERVICE_BEFORE_JOB, SSTATE_ADD_GRP_SET_ERROR,
})
HOST_FAILURES = frozenset({SSTATE_BEFORE_PROLOG, SSTATE_CHECK_DAEMON_CONFIG})
# ESSTATE_NO_CONFIG: the execd could not set the task up (its directory,
# TMPDIR, the config): re-queued, and the queue instance stops taking jobs
QUEUE_FAILURES = frozenset({
    ESSTATE_NO_CONFIG, SSTATE_PROCSET_NOTSET, SSTATE_PROLOG_FAILED, SSTATE_BEFORE_PESTART, SSTATE_PESTART_FAILED,
    SSTATE_BEFORE_EPILOG, SSTATE_EPILOG_FAILED,
})
QUEUE_FAILURES_NO_RERUN = frozenset({SSTATE_BEFORE_PESTOP, SSTATE_PESTOP_FAILED})

# sge_job_exit: the shepherd died (17) or left no exit status (19, its host
# went down): a rerunnable job is rescheduled, any other one finishes
SHEPHERD_LOST = frozenset({ESSTATE_DIED_THRU_SIGNAL, ESSTATE_NO_EXITSTATUS})

# the limits whose kill by the execd 8.1.9 accounts as failed 37 (the real
# one writes "qmaster enforced h_rt, h_cpu, or h_vmem limit", as observed)
ENFORCED_LIMITS = frozenset({"h_rt", "h_cpu", "h_vmem"})


# ---------------------------------------------------------------- the shepherd
class ProcedureStates(NamedTuple):
    """The states of a procedure around the job (sge_shepherd(8))."""

    before: int  # it could not be started
    failed: int  # it exited with another code than 0, 99 and 100


PROCEDURE_STATES: Mapping[str, ProcedureStates] = {
    "prolog": ProcedureStates(SSTATE_BEFORE_PROLOG, SSTATE_PROLOG_FAILED),
    "pe_start": ProcedureStates(SSTATE_BEFORE_PESTART, SSTATE_PESTART_FAILED),
    "pe_stop": ProcedureStates(SSTATE_BEFORE_PESTOP, SSTATE_PESTOP_FAILED),
    "epilog": ProcedureStates(SSTATE_BEFORE_EPILOG, SSTATE_EPILOG_FAILED),
}

JOB_START = "job start"  # how the error message names the job itself


def exit_status_message(who: str, status: int) -> str:
    """The shepherd's error message for a child that failed with its exit
    status: ``exit_status of prolog = 1``, ``exit_status of job start = 100``."""
    return f"exit_status of {who} = {status}"


def procedure_state(name: str, status: int) -> int:
    """The state after the procedure ``name`` (prolog, pe_start, pe_stop,
    epilog) exited with ``status`` != 0: 99 reschedule, 100 job error
    (FORBID_RESCHEDULE and FORBID_APPERROR do not apply to procedures), any
    other code the procedure's own failure."""
    if status == RESCHEDULE_EXIT_STATUS:
        return SSTATE_AGAIN
    if status == APPERROR_EXIT_STATUS:
        return SSTATE_APPERROR
    return PROCEDURE_STATES[name].failed


def job_state(status: int, forbid_reschedule: bool, forbid_apperror: bool) -> int:
    """The state after the job exited with ``status``: 99 and 100 are
    failures unless sge_conf(5) qmaster_params FORBID_RESCHEDULE /
    FORBID_APPERROR; every other exit code is just the job's exit status (0)."""
    if status == RESCHEDULE_EXIT_STATUS and not forbid_reschedule:
        return SSTATE_AGAIN
    if status == APPERROR_EXIT_STATUS and not forbid_apperror:
        return SSTATE_APPERROR
    return 0


def exit_status(code: int, signal: int) -> int:
    """A child's exit status as Grid Engine reports it (accounting(5)): its
    exit code, or 128 + the signal number when a signal ended it."""
    return 128 + signal if signal else code


# ---------------------------------------------------------------- the execd
def lost_shepherd_state(died_through_signal: bool) -> int:
    """The state of a task whose shepherd ended without its exit status
    (reaper_execd.c): 17 when it was seen to die by a signal, else 19 (it
    was gone when the execd looked, e.g. after its host went down)."""
    return ESSTATE_DIED_THRU_SIGNAL if died_through_signal else ESSTATE_NO_EXITSTATUS


# ---------------------------------------------------------------- the qmaster
class Outcome(NamedTuple):
    failed: int  # the accounting ``failed`` code
    requeue: bool  # the task goes back to pending (Rq)
    job_error: bool  # the task goes into error state (Eqw)
    queue_error: bool  # the queue instance goes into error state (E)
    reason: str  # the error reason shown by qstat -j
    host_error: bool = False  # every queue instance on the host goes into error state


def queue_error_message(cqueue: str, job_id: int, host: str) -> str:
    """What ``qstat -explain E`` shows for a queue instance a job's failure
    put into error state (msg 33571, as Grid Engine 8.1.9 prints it)."""
    return f"queue {cqueue} marked QERROR as result of job {job_id}'s failure at host {host}"


def failure_outcome(failed: int, reason: str) -> Outcome:
    """What a failure (``failed`` != 0) means for the job and its queue
    (sge_job_exit): the job's fault → Eqw; the host's or the queue's →
    re-queued and the queue instance(s) in error; pe_stop's → the queue
    instance in error, the job finished; any other failure before the job
    (<= 11) or a reschedule (25) → re-queued; the rest → finished."""
    if failed in JOB_FAILURES:
        return Outcome(failed, False, True, False, reason)
    if failed in HOST_FAILURES:
        return Outcome(failed, True, False, True, reason, host_error=True)
    if failed in QUEUE_FAILURES:
        return Outcome(failed, True, False, True, reason)
    if failed in QUEUE_FAILURES_NO_RERUN:
        return Outcome(failed, False, False, True, reason)
    if failed <= SSTATE_BEFORE_JOB or failed == SSTATE_AGAIN:
        return Outcome(failed, True, False, False, reason)
    return Outcome(failed, False, False, False, reason)


def job_outcome(report: Mapping[str, Any], forbid_reschedule: bool, forbid_apperror: bool,
                deleted: bool = False) -> Outcome:
    """Apply the exit-code rules to an execd's report of a finished task
    (sge_shepherd(8), queue_conf(5) prolog/epilog, sge_pe(5); qmaster
    sge_job_exit; man/man5/minisge_exit_codes.5).

    ``report`` carries ``failed`` (the shepherd's state), ``exit_status``,
    ``signal``, ``limit`` (the limit the execd killed the job for) and, for
    failures, ``error`` (the first line of the shepherd's error file).  A
    job killed by a signal (qdel, a limit) is failed 100, or 37 for the
    limits 8.1.9 accounts so.  The shepherd has already turned job exit
    99/100 into states 25/30 unless FORBID_RESCHEDULE/FORBID_APPERROR; a
    report without that gets the same rule (:func:`job_state`) here.
    """
    failed = int(report.get("failed", 0))
    reason = str(report.get("error", ""))
    if not failed:
        if report.get("limit") in ENFORCED_LIMITS:  # the execd killed it (queue_conf(5) RESOURCE LIMITS)
            return Outcome(SSTATE_QMASTER_ENFORCED_LIMIT, False, False, False, "")
        if int(report.get("signal", 0)) or deleted:
            return Outcome(SSTATE_FAILURE_AFTER_JOB, False, False, False, "")
        status = int(report.get("exit_status", 0))
        failed = job_state(status, forbid_reschedule, forbid_apperror)
        if not failed:
            return Outcome(0, False, False, False, "")
        reason = exit_status_message(JOB_START, status)
    return failure_outcome(failed, reason or failed_text(failed))


def rerun_outcome(outcome: Outcome, rerunnable: bool, deleted: bool) -> Outcome:
    """The outcome, turned into a re-queue for a rerunnable job (qsub -r y,
    queue_conf(5) rerun TRUE) whose run was lost with its shepherd
    (sge_job_exit); a deleted job is never re-queued."""
    if outcome.failed in SHEPHERD_LOST and not outcome.requeue and not deleted and rerunnable:
        return outcome._replace(requeue=True)
    return outcome


def restarted_after(restarted: int, failed: int) -> int:
    """JAT_job_restarted after a re-queue (job_exit.c): at least 1 (the
    execd's ckpt_arena) for a reschedule (25) and a lost run (17, 19), as it
    was for a re-queue after a queue or host failure (8.1.9 keeps ``qw``)."""
    if failed == SSTATE_AGAIN or failed in SHEPHERD_LOST:
        return max(restarted, 1)
    return restarted


def usage_valid(failed: int) -> bool:
    """Does the run's usage (and its exit status) count (reaper_execd.c,
    sge_status(5))? Not when it failed before the job (1-11)."""
    return failed == 0 or failed > SSTATE_BEFORE_JOB


def accounted_as_never_started(failed: int) -> bool:
    """8.1.9 accounts a job whose output file could not be opened (26), whose
    shell was not found (27) or whose working directory was not there (28)
    as one that never started: its submission time, but zero start and end
    times, exit status and usage (as observed)."""
    return failed in (SSTATE_OPEN_OUTPUT, SSTATE_NO_SHELL, SSTATE_NO_CWD)


def accounted_without_times(failed: int) -> bool:
    """8.1.9 accounts a run re-queued after its prolog, PE start or epilog
    failed, or its prolog or epilog could not start, with zero times, exit
    status and usage (as observed)."""
    return failed in (SSTATE_BEFORE_PROLOG, SSTATE_PROLOG_FAILED, SSTATE_PESTART_FAILED, SSTATE_BEFORE_EPILOG,
                      SSTATE_EPILOG_FAILED)
