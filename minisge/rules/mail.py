"""The mails of qsub(1) ``-m b|e|a`` and ``-M``: who gets them, their
subjects and bodies, in Grid Engine 8.1.9's words (the execd's start mail,
exec_job.c; its end mails, reaper_execd.c, msg_daemons_common.h).

Pure: times come in as seconds since the epoch and are shown in local time
(``MM/DD/YYYY hh:mm:ss``, as the real 8.1.9 sent them; tests/golden/mail/); the caller (:mod:`minisge.execd.mail`) runs
the sge_conf(5) ``mailer`` as ``mailer -s SUBJECT RECIPIENT`` with the body
on its standard input, as 8.1.9 does, once per recipient.

- ``b``: when the job starts (the master task): ``Job 7 (name) Started``.
- ``e``: when it ends and did not fail: ``Job 7 (name) Complete`` with the
  user, queue, host, times, CPU, maximum vmem and exit status.
- ``a`` (or ``e``) when it failed (accounting(5) ``failed`` not 0):
  ``Job 7 (name) Aborted`` (``Rescheduled`` for a re-queue, ``Set in error
  state`` for a failure that puts the job in its error state) with the exit status, signal, the
  failure and its reason.
- ``s`` (suspend, resume) is not sent by minisge.

An array task is ``Job-array task 7.3 (name) ...``.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Mapping, Sequence
from typing import Any

from minisge.formats import sge_status
from minisge.rules import exit_codes

UNKNOWN = "<unknown>"


def recipients(mail_list: Sequence[str], owner: str, host: str) -> list[str]:
    """The addresses of ``-M`` (``user`` or ``user@host``); without any, the
    job owner at the submit host, as qsub sets it."""
    return list(mail_list) or [f"{owner}@{host}" if host else owner]


def mailer_argv(mailer: str, subject: str, recipient: str) -> list[str]:
    """How 8.1.9 runs the mailer (argv[0] ``mail``; the program is ``mailer``)."""
    return ["mail", "-s", subject, recipient]


def _who(job_id: int, task_id: int | None, name: str) -> str:
    if task_id is None:
        return f"Job {job_id} ({name})"
    return f"Job-array task {job_id}.{task_id} ({name})"


def ctime(epoch: float | None) -> str:
    """A time as 8.1.9's mails show it (measured): ``11/23/2026 07:00:52``; ``<unknown>`` for none."""
    if not epoch:
        return UNKNOWN
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(int(epoch)))


def hms(seconds: float) -> str:
    """double_print_time_to_dstring: ``HH:MM:SS``."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def memory(value: float) -> str:
    """double_print_memory_to_dstring: ``%.3f`` with K, M, G, T in steps of 1024."""
    for unit in ("", "K", "M", "G"):
        if abs(value) < 1024:
            return f"{value:.3f}{unit}"
        value /= 1024
    return f"{value:.3f}T"


def start_mail(job_id: int, task_id: int | None, name: str, owner: str, queue: str, host: str,
               start_time: float | None) -> tuple[str, str]:
    """``-m b``: (subject, body) when the job starts."""
    subject = f"{_who(job_id, task_id, name)} Started"
    body = (f"{subject}\n User       = {owner}\n Queue      = {queue}\n Host       = {host}\n"
            f" Start Time = {ctime(start_time)}")
    return subject, body


def _signal_name(number: int) -> str:
    """sge_sig2str: ``KILL``; ``unknown signal`` for none."""
    try:
        return signal.Signals(number).name.removeprefix("SIG") if number > 0 else "unknown signal"
    except ValueError:
        return "unknown signal"


def end_mails(options: str, job_id: int, task_id: int | None, name: str, owner: str, queue: str, host: str,
              failed: int, usage: Mapping[str, Any], reason: str = "") -> list[tuple[str, str]]:
    """``-m e`` / ``-m a``: the (subject, body) pairs for a task that ended
    with accounting(5) ``failed`` and ``usage`` (``exit_status``, ``signal``,
    ``start_time``, ``end_time``, ``ru_utime``, ``ru_stime``, ``ru_wallclock``,
    ``cpu``, ``maxvmem``); ``reason`` is the failure's message."""
    def number(key: str) -> float:
        try:
            return float(usage.get(key) or 0)
        except (TypeError, ValueError):
            return 0.0

    ran = number("start_time") > 0  # a job that never started: -1, <unknown>, NA (measured)
    cpu, maxvmem = number("cpu") or number("ru_utime") + number("ru_stime"), number("maxvmem")
    cpu_text = hms(cpu) if ran else "NA"  # 8.1.9 printed 00:00:00 for /bin/true (measured)
    vmem_text = "NA" if maxvmem == 0.0 else memory(maxvmem)
    exit_status = int(number("exit_status")) if ran and "exit_status" in usage else -1
    start, end = ctime(number("start_time")), ctime(number("end_time"))
    who = _who(job_id, task_id, name)
    out = []
    if "e" in options and not failed:
        subject = f"{who} Complete"
        out.append((subject, f"{subject}\n User             = {owner}\n Queue            = {queue}\n"
                             f" Host             = {host}\n Start Time       = {start}\n"
                             f" End Time         = {end}\n User Time        = {hms(number('ru_utime'))}\n"
                             f" System Time      = {hms(number('ru_stime'))}\n"
                             f" Wallclock Time   = {hms(number('ru_wallclock'))}\n"
                             f" CPU              = {cpu_text}\n Max vmem         = {vmem_text}\n"
                             f" Exit Status      = {exit_status}"))
    if ("a" in options or "e" in options) and failed:
        comment = ""
        if failed == exit_codes.SSTATE_MIGRATE:
            action = "Migrates"
        elif failed == exit_codes.SSTATE_AGAIN:
            action = "Rescheduled"
        elif failed == exit_codes.SSTATE_APPERROR:  # 8.1.9's word, though the job goes to its error state
            action = "Rescheduled due to application error"
        elif failed in exit_codes.JOB_FAILURES:  # reaper_execd.c: a general failure of the job
            action = "Set in error state"
            comment = '\nUse "qmod -c <jobid>" to clear job error state\nonce the problem is fixed.'
        else:
            action = "Aborted"
        subject = f"{who} {action}"
        signo = int(number("signal")) if ran and "signal" in usage else -1
        out.append((subject, f"{subject}\n Exit Status      = {exit_status}\n"
                             f" Signal           = {_signal_name(signo)}\n User             = {owner}\n"
                             f" Queue            = {queue}\n Host             = {host}\n"
                             f" Start Time       = {start}\n End Time         = {end}\n"
                             f" CPU              = {cpu_text}\n Max vmem         = {vmem_text}\n"
                             f"failed {sge_status.failed_text(failed)} because:\n"
                             f"{reason or '<unknown reason>'}{comment}"))
    return out


#: The mails of qrsub(1) ``-m`` (sge_advance_reservation_qmaster.c, msg_qmaster.h):
#: event -> (the -m letter that asks for it, the word of its subject, the label of its time)
AR_EVENTS = {
    "started": ("b", "Started", "Start Time"),  # its start time came
    "finished": ("e", "Finished", "End Time"),  # its end time came
    "deleted": ("e", "Deleted", "Delete Time"),  # qrdel
    "error": ("a", "Error", "Error Time"),  # a reserved queue instance went into an error state (r to E)
    "resolved": ("a", "Error resolved", "Error resolved Time"),  # none is any more (E to r)
}


def ar_mail(event: str, ar_id: int, name: str, owner: str, when: float | None) -> tuple[str, str]:
    """qrsub ``-m``: (subject, body) of an advance reservation's ``event``
    (:data:`AR_EVENTS`); a reservation without a name is ``none``, as 8.1.9 says."""
    _letter, word, label = AR_EVENTS[event]
    subject = f"Advance Reservation {ar_id} ({name or 'none'}) {word}"
    return subject, f"{subject}\n User       = {owner}\n {label} = {ctime(when)}"


def ar_mail_wanted(event: str, options: str) -> bool:
    """Does an advance reservation with qrsub ``-m options`` send ``event``'s mail?"""
    return AR_EVENTS[event][0] in options
