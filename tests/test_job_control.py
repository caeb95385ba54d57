"""Job control rules: suspension causes, methods, qmod messages, state
letters, reschedule (queue_conf(5), qmod(1), sge_shepherd(8); 8.1.9's
messages as observed on the real one)."""

from __future__ import annotations

import json
import signal

import pytest
from qmaster_harness import small_qmaster

from minisge.execd import shepherd
from minisge.execd.job_control import method_argv
from minisge.qmaster.job import Grant, Job, Task
from minisge.qmaster.job_control import rerun_outcome
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.views import running_state_letters
from minisge.rules import exit_codes, job_control

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def qm(mem_tmp_path):
    return small_qmaster(mem_tmp_path / "root", execd_up=True,
                         load={"np_load_avg": "0.00", "load_avg": "0.00"})  # a host that reports load


def running(qm, **req) -> tuple[Job, Task]:
    jid = qm.submit(dict(REQ, **req), 0, 0)["job_id"]
    started = qm.schedule()
    qm.flush()
    job, task = started[0]
    assert job.number == jid
    return job, task


def messages(qm) -> list[dict]:
    return [m for _h, m in qm.outbox.take()]


# ------------------------------------------------------------ pure rules
@pytest.mark.parametrize("text,num", [("SIGSTOP", signal.SIGSTOP), ("stop", signal.SIGSTOP),
                                      ("SIGUSR1", signal.SIGUSR1), ("15", 15), ("SIGNOPE", None), ("0", None),
                                      ("999", None)])
def test_signal_names_and_numbers(text, num):
    assert job_control.signal_number(text) == num


def test_methods_default_to_stop_cont_kill():
    assert job_control.parse_method("NONE", "suspend") == {"signal": signal.SIGSTOP}
    assert job_control.parse_method(None, "resume") == {"signal": signal.SIGCONT}
    assert job_control.parse_method("none", "terminate") == {"signal": signal.SIGKILL}


def test_a_method_is_a_signal_or_an_absolute_command():
    assert job_control.parse_method("SIGTERM", "terminate") == {"signal": signal.SIGTERM}
    assert job_control.parse_method("/bin/stop $job_pid", "suspend") == {"command": "/bin/stop $job_pid"}


def test_stopped_when_the_first_cause_comes_continued_when_the_last_goes():
    assert job_control.stop_changes(set(), {"job"}) == "suspend"
    assert job_control.stop_changes({"job"}, {"job", "queue"}) is None
    assert job_control.stop_changes({"job", "queue"}, {"queue"}) is None
    assert job_control.stop_changes({"queue"}, set()) == "resume"


@pytest.mark.parametrize("restart,rerun,expected", [(True, "FALSE", True), (False, "TRUE", False),
                                                     (None, "TRUE", True), (None, "FALSE", False)])
def test_rerunnable_by_qsub_r_else_by_the_queue(restart, rerun, expected):
    assert job_control.is_rerunnable({"restart": restart}, rerun) is expected


@pytest.mark.parametrize("causes,restarted,deleted,letters", [
    ((), 0, False, "r"), ((), 1, False, "Rr"), ((), 0, True, "dr"), (("job",), 0, False, "s"),
    (("queue",), 0, False, "S"), (("subordinate",), 0, False, "S"), (("threshold",), 0, False, "T"),
    (("queue", "job"), 0, False, "Ss"), (("job",), 0, True, "ds"), (("threshold", "job"), 1, False, "TRs"),
])
def test_state_letters_of_a_dispatched_task(causes, restarted, deleted, letters):
    assert running_state_letters(deleted, restarted, set(causes)) == letters


def test_method_command_variables():
    values = {"host": "h1", "job_owner": "bob", "job_id": "5", "job_name": "n", "queue": "all.q"}
    argv = method_argv("/bin/m $job_pid $job_id $job_owner $queue $host", values, 4242)
    assert argv == ["/bin/m", "4242", "5", "bob", "all.q", "h1"]
    with pytest.raises(shepherd.VariableError):
        method_argv("/bin/m $nosuch", values, 1)


def test_starter_method_replaces_the_shell_and_gets_the_job_arguments():
    cfg = {"starter_method": "/s", "shell": "/bin/bash", "shell_start_mode": "unix_behavior",
           "script_file": "/spool/5", "args": ["a"], "login_shells": ["bash", "sh"]}
    assert shepherd.job_argv(cfg) == ["/s", "/spool/5", "a"]
    assert shepherd.job_argv(dict(cfg, binary=True, command="echo")) == ["/s", "echo", "a"]
    assert shepherd.starter_environment(cfg) == {"SGE_STARTER_SHELL_PATH": "/bin/bash",
                                                 "SGE_STARTER_SHELL_START_MODE": "unix_behavior",
                                                 "SGE_STARTER_USE_LOGIN_SHELL": "true"}
    assert "SGE_STARTER_USE_LOGIN_SHELL" not in shepherd.starter_environment(dict(cfg, login_shells=["sh"]))
    assert shepherd.starter_environment(dict(cfg, starter_method="NONE")) == {}
    assert shepherd.job_argv(dict(cfg, starter_method="NONE"))[0] == "/spool/5"


@pytest.mark.parametrize("prio,nice", [("0", None), ("7", 7), ("-3", -3), ("x", None), (None, None)])
def test_queue_priority_is_the_nice_value(prio, nice):
    assert shepherd.nice_value({"priority": prio}) == nice


def test_rerun_after_a_lost_shepherd_only_for_rerunnable_jobs():
    job = Job(1, "j", "u", 0, "g", 0, 0.0, {"restart": None})
    task = Task(1, granted=[Grant("all.q", "h1", 1)])
    lost = exit_codes.job_outcome({"failed": 19}, False, False)
    assert not rerun_outcome(lost, job, task, "FALSE").requeue
    assert rerun_outcome(lost, job, task, "TRUE").requeue
    job.spec["restart"] = True
    assert rerun_outcome(lost, job, task, "FALSE").requeue
    assert exit_codes.restarted_after(0, 19) == 1
    assert exit_codes.restarted_after(1, 25) == 1
    assert exit_codes.restarted_after(0, 8) == 0


def test_qmod_words_of_a_task():
    job, task = job_control.TaskRef(5, 1, False), job_control.TaskRef(5, 3, True)
    assert (job.label, task.label) == ("job 5", "job-array task 5.3")
    assert job_control.not_applicable(job) == (
        "Modify operation can not be applied on job-array task 5.1 in pending/hold state")
    assert job_control.suspend_message("bob", task, False, set(), "suspend") == (
        "Modify operation can not be applied on job-array task 5.3 in pending/hold state", False)
    assert job_control.suspend_message("bob", task, True, {"threshold"}, "resume") == (
        "bob - job-array task 5.3 is not suspended by administrator - modify suspend threshold list of queue "
        "to remove suspend state", False)
    assert job_control.rescheduled_message(task, "h1", False) == "Pushed rescheduling of job-array task 5.3 on host h1"
    assert job_control.already_deleted(job) == "The job 5 is already in deleted state. No rescheduling!"


@pytest.mark.parametrize("restart,rerun,force,refusal", [
    (False, "TRUE", False, "The job 5 is not restartable"),
    (None, "FALSE", False, "The job 5 is running in queue none where jobs are not rerunable."),
    (None, "TRUE", False, None), (True, "FALSE", False, None), (False, "FALSE", True, None),
])
def test_reschedule_refusals(restart, rerun, force, refusal):
    ref = job_control.TaskRef(5, 1, False)
    assert job_control.reschedule_refusal(ref, {"restart": restart}, rerun, force) == refusal


def test_job_control_posts_its_messages_for_after_the_flush(qm):
    job, task = running(qm)
    messages(qm)
    qm.job_control.suspend_task(job, task, "job")
    assert qm.wake_scheduler.is_set()  # the scheduler loop delivers the outbox
    (msg,) = messages(qm)
    assert (msg["op"], msg["job_id"], msg["method"]) == ("suspend", job.number, {"signal": signal.SIGSTOP})
    again = Qmaster(qm.cell, "h1")  # spooled before the message leaves
    again.load()
    assert again.jobs[job.number].tasks[1].suspended_by == {"job"}


# ------------------------------------------------------------ the qmaster
def test_suspend_task_stops_once_and_resumes_when_no_cause_is_left(qm):
    job, task = running(qm)
    messages(qm)
    qm.suspend_task(job, task, "threshold")
    assert [m["op"] for m in messages(qm)] == ["suspend"]
    qm.suspend_task(job, task, "subordinate")
    qm.suspend_task(job, task, "threshold")
    assert messages(qm) == []
    qm.resume_task(job, task, "threshold")
    assert messages(qm) == []
    qm.resume_task(job, task, "subordinate")
    msgs = messages(qm)
    assert [m["op"] for m in msgs] == ["resume"]
    assert msgs[0]["method"] == {"signal": signal.SIGCONT} and msgs[0]["notify"] == 0
    with pytest.raises(ValueError):
        qm.suspend_task(job, task, "whim")


def test_suspension_causes_are_spooled_and_old_spool_files_load(qm):
    job, task = running(qm)
    qm.suspend_task(job, task, "subordinate")
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[job.number].tasks[1].suspended_by == {"subordinate"}
    path = qm.spool.dir + "/jobs/00/0000/0001"
    data = json.load(open(path))
    t = data["tasks"]["1"]
    del t["suspended_by"]
    t["suspended"] = True
    json.dump(data, open(path, "w"))
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[job.number].tasks[1].suspended_by == {"job"}


def test_notify_job_gets_the_queue_notify_time(qm):
    job, task = running(qm, notify=True)
    msg = qm.job_control.control_message(job, task, "suspend")
    assert (msg["notify_signal"], msg["notify"]) == (signal.SIGUSR1, 60)  # queue_conf(5) default 00:00:60
    msg = qm.job_control.control_message(job, task, "terminate")
    assert (msg["notify_signal"], msg["notify"]) == (signal.SIGUSR2, 60)
    assert "notify_signal" not in qm.job_control.control_message(job, task, "resume")


async def _qmod(qm, action, *targets, uid=0, force=False):
    return await qm.qmod({"action": action, "targets": list(targets), "force": force}, uid)


def test_qmod_messages_of_8_1_9(qm):
    import trio

    job, task = running(qm)
    n = job.number
    assert trio.run(_qmod, qm, "sj", str(n)) == ([f"root - suspended job {n}"], 0)
    assert trio.run(_qmod, qm, "s", str(n)) == ([f"root - job {n} is already suspended"], 0)
    assert trio.run(_qmod, qm, "usj", str(n)) == ([f"root - unsuspended job {n}"], 0)
    assert trio.run(_qmod, qm, "us", str(n)) == ([f"root - job {n} is already unsuspended"], 0)
    assert trio.run(_qmod, qm, "sj", "99") == (['invalid queue or job "99"'], 1)
    assert trio.run(_qmod, qm, "sq", "no.q") == (['invalid queue "no.q"'], 1)
    assert trio.run(_qmod, qm, "sq", "all.q@h1") == (['root@h1 changed state of "all.q@h1" (suspended)'], 0)
    assert task.suspended_by == {"queue"}
    assert trio.run(_qmod, qm, "s", "all.q") == (
        ['Queue instance "all.q@h1" is already in the specified state: suspended'], 0)
    assert trio.run(_qmod, qm, "usq", "all.q@h1")[0] == ['root@h1 changed state of "all.q@h1" (unsuspended)']
    assert task.suspended_by == set()
    assert trio.run(_qmod, qm, "r", str(n)) == (
        [f"The job {n} is running in queue none where jobs are not rerunable."], 0)
    assert trio.run(lambda: _qmod(qm, "r", str(n), force=True)) == ([f"Forced rescheduling of job {n} on host h1"], 0)


def test_qmod_r_writes_the_record_at_once_and_requeues_at_the_end(qm):
    import trio

    job, task = running(qm, restart=True)
    n = job.number
    assert trio.run(_qmod, qm, "rj", str(n)) == ([f"Pushed rescheduling of job {n} on host h1"], 0)
    assert task.state == "rescheduling"
    assert [m["op"] for m in messages(qm)] == ["terminate"]
    lines = [ln for ln in open(qm.cell.accounting) if not ln.startswith("#")]
    fields = lines[-1].split(":")
    assert (fields[8], fields[9], fields[10], fields[11], fields[12]) == ("0", "0", "0", "25", "0")
    qm.task_finished({"job_id": n, "task_id": 1, "failed": 0, "exit_status": 137, "signal": 9, "usage": {}})
    assert job.pending == [1] and job.restarted_pending == {1: 1}
    assert len([ln for ln in open(qm.cell.accounting) if not ln.startswith("#")]) == len(lines)
    assert trio.run(_qmod, qm, "rj", str(n)) == (
        [f"Modify operation can not be applied on job-array task {n}.1 in pending/hold state"], 0)
