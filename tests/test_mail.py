"""qsub -m mails (minisge.rules.mail) against the mails the real 8.1.9 sent (tests/golden/mail/)."""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

from minisge.rules import mail

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))
from golden import read_golden


def _epoch(text: str) -> float:
    return time.mktime(time.strptime(text, "%m/%d/%Y %H:%M:%S"))


def _golden(case: str) -> tuple[str, str]:
    text = read_golden(f"mail/{case}").text
    head, _, body = text.partition("\n\n")
    return head.removeprefix("Subject: "), body


def _field(body: str, name: str) -> str:
    m = re.search(rf"^ {name} *= (.*)$", body, re.M)
    assert m, name
    return m.group(1)


@pytest.mark.parametrize("case,job,task", [("job.started", 124, None), ("array_task1.started", 125, 1),
                                           ("array_task2.started", 125, 2)])
def test_start_mail_is_8_1_9s(case, job, task):
    subject, body = _golden(case)
    name = subject.split("(")[1].split(")")[0]
    got = mail.start_mail(job, task, name, "sgetest", "all.q", "vm", _epoch(_field(body, "Start Time")))
    assert got == (subject, body.removesuffix("\n"))  # the mailer's stdin gets the body and a new line


@pytest.mark.parametrize("case,job,task,exit_status", [("job.complete", 124, None, 0),
                                                       ("array_task1.complete", 125, 1, 1)])
def test_complete_mail_is_8_1_9s_and_a_non_zero_exit_is_no_failure(case, job, task, exit_status):
    subject, body = _golden(case)
    name = subject.split("(")[1].split(")")[0]
    usage = {"exit_status": exit_status, "signal": 0, "start_time": _epoch(_field(body, "Start Time")),
             "end_time": _epoch(_field(body, "End Time")), "ru_utime": 0.01, "ru_stime": 0.0,
             "ru_wallclock": 0.2, "cpu": 0.01, "maxvmem": 0}
    got = mail.end_mails("be", job, task, name, "sgetest", "all.q@vm", "vm", 0, usage)
    assert got == [(subject, body.removesuffix("\n"))]


def test_no_end_mail_without_e_or_a():
    usage = {"exit_status": 0, "start_time": 1.0, "end_time": 2.0}
    assert mail.end_mails("b", 1, None, "x", "u", "q@h", "h", 0, usage) == []
    assert mail.end_mails("a", 1, None, "x", "u", "q@h", "h", 0, usage) == []


def test_a_failed_task_gets_the_abort_mail_with_its_reason():
    usage = {"exit_status": 0, "signal": 0, "start_time": 0, "end_time": 0}
    [(subject, body)] = mail.end_mails("a", 7, None, "x", "u", "all.q@h", "h", 8, usage, "exit_status of prolog = 1")
    assert subject == "Job 7 (x) Aborted"
    # a job that never started (a failed prolog): exit status -1, as 8.1.9 (golden job.set_in_error_state)
    assert body.startswith("Job 7 (x) Aborted\n Exit Status      = -1\n Signal           = unknown signal\n")
    assert body.endswith("\nfailed in prolog because:\nexit_status of prolog = 1")
    [(subject, body)] = mail.end_mails("a", 7, None, "x", "u", "all.q@h", "h", 26, usage, "cannot open")
    assert subject == "Job 7 (x) Set in error state"
    assert body.endswith('\nfailed opening input/output file because:\ncannot open\n'
                         'Use "qmod -c <jobid>" to clear job error state\nonce the problem is fixed.')
    [(subject, _)] = mail.end_mails("e", 7, 3, "x", "u", "all.q@h", "h", 25, usage)
    assert subject == "Job-array task 7.3 (x) Rescheduled"


def test_recipients_default_to_the_owner_at_the_submit_host():
    assert mail.recipients([], "bob", "vm") == ["bob@vm"]
    assert mail.recipients(["a@b", "c"], "bob", "vm") == ["a@b", "c"]
    assert mail.mailer_argv("/usr/bin/mail", "S", "a@b") == ["mail", "-s", "S", "a@b"]


def test_the_error_state_mail_of_a_job_that_never_started_is_8_1_9s():
    subject, body = _golden("job.set_in_error_state")
    reason = body.split("because:\n")[1].split("\nUse ")[0]
    usage = {"exit_status": 0, "signal": 0, "start_time": "0", "end_time": "0", "ru_wallclock": "0"}  # never ran
    got = mail.end_mails("a", 231, None, "mailabort", "sgetest", "all.q@vm", "vm", 26, usage, reason)
    assert got == [(subject, body.removesuffix("\n"))]


# ---------------------------------------------------------------- qrsub -m (msg_qmaster.h of 8.1.9)

@pytest.mark.parametrize("event,subject,label", [
    ("started", "Advance Reservation 7 (night) Started", "Start Time"),
    ("finished", "Advance Reservation 7 (night) Finished", "End Time"),
    ("deleted", "Advance Reservation 7 (night) Deleted", "Delete Time"),
    ("error", "Advance Reservation 7 (night) Error", "Error Time"),
    ("resolved", "Advance Reservation 7 (night) Error resolved", "Error resolved Time"),
])
def test_the_reservation_mails_are_8_1_9s(event, subject, label):
    when = _epoch("11/23/2026 07:00:52")
    got_subject, body = mail.ar_mail(event, 7, "night", "sgetest", when)
    assert got_subject == subject
    assert body == f"{subject}\n User       = sgetest\n {label} = 11/23/2026 07:00:52"


def test_a_reservation_without_a_name_is_none_in_its_mails():
    assert mail.ar_mail("started", 3, "", "u", None)[0] == "Advance Reservation 3 (none) Started"


@pytest.mark.parametrize("options,sent", [("b", {"started"}), ("e", {"finished", "deleted"}),
                                          ("a", {"error", "resolved"}), ("", set()),
                                          ("bea", set(mail.AR_EVENTS))])
def test_the_mail_options_choose_the_reservation_mails(options, sent):
    assert {e for e in mail.AR_EVENTS if mail.ar_mail_wanted(e, options)} == sent


@pytest.mark.parametrize("case,event,ar_id,name", [("ar.started", "started", 16, "armail"),
                                                   ("ar.finished", "finished", 16, "armail"),
                                                   ("ar.deleted", "deleted", 17, ""),
                                                   ("ar.error", "error", 18, "arerr"),
                                                   ("ar.resolved", "resolved", 18, "arerr")])
def test_the_reservation_mails_are_those_8_1_9_sent(case, event, ar_id, name):
    subject, body = _golden(case)  # sent by the peer's qmaster to /var/mail/sgetest
    when = _epoch(re.search(r"= (\d\d/\d\d/\d{4} \d\d:\d\d:\d\d)$", body, re.M).group(1))
    assert mail.ar_mail(event, ar_id, name, "root", when) == (subject, body.rstrip("\n"))
