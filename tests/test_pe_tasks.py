"""The pure rules of tight integration (sge_pe(5) control_slaves,
accounting_summary; qrsh(1) -inherit): who may start a slave task where,
how its usage is summed, its record, its environment, qrsh's arguments."""

from __future__ import annotations

from minisge.cli import qrsh
from minisge.execd.pe_tasks import task_config
from minisge.formats import accounting
from minisge.qmaster.job import Grant, Task
from minisge.qmaster.pe_tasks import (
    TaskRequest,
    control_messages,
    didnt_accept,
    host_view,
    merged_master_usage,
    refusal,
    send_failed,
    short_host,
    sum_usage,
    task_record,
    task_slots_on_host,
)


def _req(**kw) -> TaskRequest:
    base = dict(job_id=7, caller_uid=1000, caller="alice", job_uid=1000, owner="alice", running=True,
                deleting=False, control_slaves=True, job_is_first_task=True,
                granted=(("node1", 2), ("node2", 2)), host="node2", running_on_host=0)
    base.update(kw)
    return TaskRequest(**base)


# ------------------------------------------------------------ who may start a task where
def test_the_job_owner_may_start_a_task_on_a_granted_host():
    assert refusal(_req()) is None


def test_another_user_is_refused_even_root():
    assert refusal(_req(caller_uid=0, caller="root")) == \
        'denied request of user "root" to start a pe task in job of user "alice"'


def test_control_slaves_false_refuses():
    assert "not suited for starting tasks" in refusal(_req(control_slaves=False))


def test_a_job_that_is_not_running_or_is_being_deleted_refuses():
    assert refusal(_req(job_uid=None)) is not None
    assert refusal(_req(running=False)) is not None
    assert "in deletion" in refusal(_req(deleting=True))


def test_a_host_without_slots_of_the_job_refuses():
    assert refusal(_req(host="node3")).startswith("no free queue for job 7")


def test_tasks_on_a_host_are_limited_by_its_slots_less_the_masters():
    # job_is_first_task TRUE: 2 slots on the master host leave one for a task (as 8.1.9)
    assert task_slots_on_host([("node1", 2), ("node2", 2)], "node1", "node1") == 1
    assert task_slots_on_host([("node1", 2), ("node2", 2)], "node1", "node2") == 2
    assert task_slots_on_host([("node1", 1)], "node1", "node1") == 0
    # FALSE: the job script holds no slot, all granted ones are for tasks (8.1.9:
    # -pe make 2 is granted 2 slots, and 2 tasks run at once beside the script)
    assert task_slots_on_host([("node1", 2)], "node1", "node1", job_is_first_task=False) == 2
    assert task_slots_on_host([("node1", 1)], "node1", "node1", job_is_first_task=False) == 1
    assert refusal(_req(host="node1", running_on_host=1, job_is_first_task=False)) is None
    assert refusal(_req(host="node1", running_on_host=2, job_is_first_task=False)) is not None
    assert refusal(_req(running_on_host=2)) is not None
    assert refusal(_req(host="node1", running_on_host=1)) is not None
    assert refusal(_req(host="node1", running_on_host=0)) is None


def test_messages_are_qrshs():
    assert didnt_accept(5, "node2") == \
        'error: executing task of job 5 failed: execution daemon on host "node2" didn\'t accept task'
    assert send_failed(5, "x") == (
        "error: executing task of job 5 failed: failed sending task to execd@x: got send error")
    assert short_host("node2.example.com") == "node2"


# ------------------------------------------------------------ usage and records
def test_summed_usage_adds_times_and_counters_and_keeps_maxima():
    total = sum_usage({}, {"ru_utime": "1.5", "ru_stime": "0.5", "ru_maxrss": "100", "maxvmem": "1000",
                           "exit_status": "3", "ru_wallclock": "9", "ru_minflt": "10"})
    total = sum_usage(total, {"ru_utime": "0.5", "ru_maxrss": "50", "maxvmem": "3000", "ru_minflt": "5"})
    assert total == {"ru_utime": 2.0, "ru_stime": 0.5, "ru_maxrss": 100.0, "maxvmem": 3000.0, "ru_minflt": 15.0}


def test_the_summary_record_has_the_masters_status_and_times_plus_the_tasks_usage():
    master = {"exit_status": "0", "ru_wallclock": "8", "ru_utime": "1.0", "maxvmem": "2000", "start_time": "5"}
    out = merged_master_usage(master, {"ru_utime": 2.0, "maxvmem": 3000.0, "ru_stime": 0.25})
    assert out == {"exit_status": "0", "ru_wallclock": "8", "ru_utime": 3.0, "maxvmem": 3000.0,
                   "start_time": "5", "ru_stime": 0.25}


def test_a_task_record_is_the_jobs_with_its_host_queue_submission_time_and_pe_taskid():
    base = accounting.AccountingRecord(
        qname="all.q", hostname="node1", group="g", owner="alice", job_name="job.sh", job_number=7,
        account="sge", priority=0, submission_time=100, start_time=200, end_time=210, failed=0, exit_status=3,
        ru_wallclock=10, ru_utime=0.0, ru_stime=0.0, ru_maxrss=0.0, ru_ixrss=0, ru_ismrss=0, ru_idrss=0,
        ru_isrss=0, ru_minflt=0, ru_majflt=0, ru_nswap=0, ru_inblock=0.0, ru_oublock=0, ru_msgsnd=0,
        ru_msgrcv=0, ru_nsignals=0, ru_nvcsw=0, ru_nivcsw=0, project="NONE", department="defaultdepartment",
        granted_pe="mpi", slots=4, task_number=0, cpu=0.0, mem=0.0, io=0.0, category="-pe mpi 4", iow=0.0,
        pe_taskid="NONE", maxvmem=0.0, arid=0, ar_submission_time=0)
    r = task_record(base, host="node2", cqueue="big.q", pe_task_id="1.node2", submission_time=199.7)
    assert (r.hostname, r.qname, r.submission_time, r.pe_taskid) == ("node2", "big.q", 199, "1.node2")
    assert (r.job_name, r.slots, r.granted_pe, r.exit_status) == ("job.sh", 4, "mpi", 3)
    assert accounting.write_line(r).split(":")[41] == "1.node2"


def test_a_tasks_start_message_is_built_from_its_own_hosts_grant():
    task = Task(task_id=1, granted=[Grant("all.q", "node1", 2), Grant("big.q", "node2", 1)], granted_pe="mpi")
    view = host_view(task, "node2")
    assert [g.host for g in view.granted] == ["node2", "node1"]
    assert view.slots == task.slots and task.master.host == "node1"


# ------------------------------------------------------------ the task's environment
def _job_cfg() -> dict:
    return {"env": {"JOB_ID": "7", "JOB_NAME": "job.sh", "REQUEST": "job.sh", "PE": "mpi",
                    "PE_HOSTFILE": "/spool/node1/active_jobs/7.1/pe_hostfile", "TMPDIR": "/tmp/7.1.all.q"},
            "cwd": "/home/alice", "procedures": {"prolog": {"command": "/bin/true"}}, "pe": "mpi",
            "binary": False, "script_file": "/spool/job_scripts/7"}


def test_a_task_runs_its_command_through_the_shell_without_prolog_or_pe_procedures():
    cfg = task_config(_job_cfg(), {"command": ["echo", "a b", "$HOSTNAME"], "pe_task_id": "1.node2",
                                   "task_env": {"SGE_O_HOST": "vm"}}, "/spool/node2/pe_tasks/7.1/1.node2")
    assert (cfg["binary"], cfg["noshell"], cfg["command"], cfg["args"]) == (True, False, "echo a b $HOSTNAME", [])
    assert cfg["procedures"] == {} and cfg["pe"] is None and cfg["stdin_path"] == "/dev/null"
    env = cfg["env"]
    assert "PE_HOSTFILE" not in env  # 8.1.9 gives it to the master task only
    assert (env["JOB_NAME"], env["REQUEST"], env["JOB_SCRIPT"], env["PE"], env["TMPDIR"], env["SGE_O_HOST"]) == \
        ("petask", "petask", "QRSH", "mpi", "/tmp/7.1.all.q", "vm")
    assert env["SGE_JOB_SPOOL_DIR"] == "/spool/node2/pe_tasks/7.1/1.node2"
    assert cfg["cwd"] == "/home/alice"


def test_dash_v_pwd_sets_the_tasks_working_directory():
    cfg = task_config(_job_cfg(), {"command": ["pwd"], "pe_task_id": "1.n", "task_env": {"PWD": "/data"}}, "/d")
    assert cfg["cwd"] == "/data" and cfg["env"]["SGE_CWD_PATH"] == "/data"


# ------------------------------------------------------------ qrsh's arguments
ENV = {"JOB_ID": "12", "SGE_TASK_ID": "undefined", "HOME": "/home/alice", "PATH": "/bin", "FOO": "bar"}


def test_qrsh_inherit_asks_for_a_task_of_the_job_in_job_id():
    req, err, rc = qrsh.parse(["-inherit", "-nostdin", "node2", "hostname", "-f"], ENV)
    assert (err, rc) == ("", 0)
    assert (req["op"], req["job_id"], req["task_id"], req["host"], req["command"]) == \
        ("pe_task", 12, 1, "node2", ["hostname", "-f"])
    assert req["env"]["SGE_O_HOME"] == "/home/alice" and "FOO" not in req["env"]


def test_qrsh_passes_dash_v_variables_and_ignores_other_options():
    req, _, _ = qrsh.parse(["-inherit", "-v", "FOO,X=1", "-l", "h_rt=10", "-verbose", "n1", "cmd"], ENV)
    assert req["env"]["FOO"] == "bar" and req["env"]["X"] == "1" and req["verbose"]
    req, _, _ = qrsh.parse(["-V", "-inherit", "n1", "cmd"], ENV)
    assert req["env"]["FOO"] == "bar"


def test_qrsh_errors_are_grid_engines():
    assert qrsh.parse(["-inherit", "node2"], ENV)[1:] == (qrsh.INHERIT_USAGE, 1)
    assert qrsh.parse(["-inherit", "n", "c"], {})[1:] == \
        ('error: "qrsh" called with option "-inherit", but "JOB_ID" not set in environment\n', 1)
    assert qrsh.parse(["-inherit", "n", "c"], {"JOB_ID": "x1"})[1:] == ('error: invalid "JOB_ID" x1\n', 1)
    # 8.1.9's qrsh says it without "ERROR!" (checked against the peer, tests/golden/qrsh.unknown_option.stderr)
    assert qrsh.parse(["-bogus"], ENV)[1:] == ('error: invalid option argument "-bogus"\n', 1)


def test_qrsh_without_inherit_is_no_pe_task_but_an_interactive_job():
    # the -inherit parser refuses it; main runs it as an interactive job (tests/test_interactive.py)
    req, err, rc = qrsh.parse(["node2", "hostname"], ENV)
    assert req is None and rc == 1 and "interactive job" in err
    assert qrsh.parse([], ENV)[2] == 1
    assert qrsh.split_command(["-now", "n", "-nostdin", "node2", "hostname"]) == (["-now", "n", "-nostdin"],
                                                                                  ["node2", "hostname"])


def test_suspend_and_resume_go_to_each_host_running_slave_tasks_once_with_its_method():
    methods = {"node1": {"signal": 19}, "node2": {"command": "/bin/stopper $job_pid"}}
    msgs = control_messages(7, 1, ["node2", "node1", "node2"], methods.get, "suspend")
    assert msgs == [("node1", {"op": "pe_task_suspend", "job_id": 7, "task_id": 1, "method": {"signal": 19}}),
                    ("node2", {"op": "pe_task_suspend", "job_id": 7, "task_id": 1,
                               "method": {"command": "/bin/stopper $job_pid"}})]
    assert [m["op"] for _, m in control_messages(7, 1, ["node2"], methods.get, "resume")] == ["pe_task_resume"]
    assert control_messages(7, 1, [], methods.get, "suspend") == []
    assert control_messages(7, 1, ["node2"], methods.get, "terminate") == []
