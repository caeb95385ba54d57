"""The submit rules of 8.1.9 the qmaster applies (qmaster/submit_checks.py),
the -a execution time in the scheduler, the submitter's environment and
the job environment rules (words from the real 8.1.9, tests/golden/qsub/)."""

from __future__ import annotations

from scheduler_harness import qi, snap, task

from minisge import scheduler
from minisge.formats import submit_options
from minisge.qmaster import submit_checks
from minisge.qmaster.job_facts import execution_time
from minisge.rules import job_environment


def test_a_positive_priority_needs_an_operator():
    assert submit_checks.priority_refusal(5, is_operator=False) == (
        "job rejected: positive submission priority requires operator privileges")
    assert submit_checks.priority_refusal(5, is_operator=True) is None
    assert submit_checks.priority_refusal(0, is_operator=False) is None
    assert submit_checks.priority_refusal(-100, is_operator=False) is None


def test_unknown_checkpoint_and_advance_reservation():
    assert submit_checks.checkpoint_refusal("foo") == (
        'job rejected: the requested checkpointing environment "foo" does not exist')
    assert submit_checks.checkpoint_refusal("foo", {"foo"}) is None
    assert submit_checks.checkpoint_refusal(None) is None


def test_c_without_a_checkpointing_environment_is_denied_as_8_1_9():
    # the peer: qsub -c s / qsub -c 10 alone: "Unable to run job: checkpointing denied"; -c n alone runs
    assert submit_checks.checkpoint_refusal(None, when="s") == "checkpointing denied"
    assert submit_checks.checkpoint_refusal(None, interval=10) == "checkpointing denied"
    assert submit_checks.checkpoint_refusal(None, when="n") is None
    assert submit_checks.checkpoint_refusal(None, when="ns") == 'job rejected: checkpointing with "-c n" requested'
    assert submit_checks.checkpoint_refusal("ck", {"ck"}, when="n") == \
        'job rejected: checkpointing with "-c n" requested'
    assert submit_checks.checkpoint_refusal("ck", {"ck"}, when="s") is None
    assert submit_checks.advance_reservation_refusal(77) == "the advance reservation id 77 is invalid"
    assert submit_checks.advance_reservation_refusal(0) is None  # 8.1.9 takes -ar 0 (no reservation)
    assert submit_checks.advance_reservation_refusal(None) is None


def test_slots_are_asked_for_with_a_pe():
    names = {"slots": "slots", "s": "slots", "h_rt": "h_rt"}.get
    refusal = '"job" denied: use parallel environments instead of requesting slots explicitly'
    assert submit_checks.slots_request_refusal(["h_rt", "s"], names) == refusal
    assert submit_checks.slots_request_refusal(["slots"], names) == refusal
    assert submit_checks.slots_request_refusal(["h_rt", "nosuch"], names) is None


def test_a_job_waits_for_its_execution_time():
    now = 1_000_000.0
    pending = [task(1, execution_time=now + 60), task(2, execution_time=now - 60), task(3)]
    plan = scheduler.schedule(snap([qi(slots=4)], pending, now=now))
    assert sorted(d.job_id for d in plan.dispatches) == [2, 3]
    assert plan.reasons[1] == ["execution time not reached"]
    plan = scheduler.schedule(snap([qi(slots=4)], pending, now=now + 60))
    assert sorted(d.job_id for d in plan.dispatches) == [1, 2, 3]


def test_execution_time_is_read_in_local_time_with_this_year():
    now = 1_800_000_000.0  # 2027
    assert execution_time(None, now) == 0.0
    t = execution_time("12312359", now)
    assert t > now and execution_time("202712312359", now) == t
    assert execution_time("2712312359.30", now) == t + 30


def test_date_time_fields():
    assert submit_options.date_time_fields("12312359", 2026) == (2026, 12, 31, 23, 59, 0)
    assert submit_options.date_time_fields("6912312359.05", 2026) == (2069, 12, 31, 23, 59, 5)
    assert submit_options.date_time_fields("7012312359", 2026) == (1970, 12, 31, 23, 59, 0)
    assert submit_options.date_time_fields("202701020304.59", 2026) == (2027, 1, 2, 3, 4, 59)


def test_the_submitter_environment_has_no_locale_python_set_for_itself():
    coerced = {"LANG": "C", "LC_CTYPE": "C.UTF-8", "HOME": "/h"}
    assert submit_options.submitter_environment(coerced) == {"LANG": "C", "HOME": "/h"}
    assert submit_options.submitter_environment({"LC_CTYPE": "C.UTF-8"}) == {}
    chosen = {"LANG": "de_DE.UTF-8", "LC_CTYPE": "C.UTF-8"}  # the user's own choice
    assert submit_options.submitter_environment(chosen) == chosen
    assert submit_options.submitter_environment({"LC_ALL": "C", "LC_CTYPE": "C.UTF-8"}) == {
        "LC_ALL": "C", "LC_CTYPE": "C.UTF-8"}


def test_the_job_gets_lang_alone_of_the_execds_environment():
    daemon = {"LANG": "C", "LC_CTYPE": "C.UTF-8", "PYTHONPATH": "/x", "PATH": "/sbin", "SGE_ROOT": "/r"}
    assert job_environment.from_execd(daemon) == {"LANG": "C"}
    assert job_environment.from_execd({}) == {}


def test_sge_rsh_command():
    assert job_environment.rsh_command("builtin", "/r", "lx-amd64") == "builtin"
    assert job_environment.rsh_command("/usr/bin/ssh -x", "/r", "lx-amd64") == "/usr/bin/ssh -x"
    assert job_environment.rsh_command("none", "/r", "lx-amd64") == "/r/utilbin/lx-amd64/rsh"
