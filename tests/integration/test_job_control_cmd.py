"""Job control through the real daemon (qmod(1) -s/-us/-r and their -j/-q
forms, qdel(1), queue_conf(5) suspend_method, resume_method,
terminate_method, notify, starter_method, priority, rerun; submit(1)
-notify, -r).  Messages and state letters are those of Grid Engine 8.1.9,
checked on the real one (see the report of issue 6)."""

from __future__ import annotations

import os
import signal
import time

import pytest
from cellutil import Cell, proc_state, script, set_queue, user_cell_fixtures

pytestmark = pytest.mark.root

USER = "msgeuser1"
user, cell = user_cell_fixtures(USER)


def submit(c: Cell, *args: str, name: str = "t") -> int:
    """A job of USER, stdout and stderr into one file in the work directory."""
    return c.submit("-N", name, "-o", c.work, "-j", "y", *args, user=USER)


def output(c: Cell, job: int, name: str = "t") -> str:
    try:
        with open(os.path.join(c.work, f"{name}.o{job}")) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_state(c: Cell, job: int, state: str | None) -> None:
    c.wait_for(lambda: c.qstat_states().get(job) == state, what=f"job {job} in state {state}")


def job_pid(c: Cell, job: int) -> int:
    """The job's pid (the shepherd's ``job_pid`` file)."""
    path = os.path.join(c.root, "default", "spool", c.host, "active_jobs", f"{job}.1", "job_pid")

    def read():
        try:
            with open(path) as f:
                return int(f.read().strip() or 0)
        except FileNotFoundError:
            return 0

    return c.wait_for(read, what=f"job_pid of job {job}")


def wait_proc_state(c: Cell, pid: int, state: str) -> None:
    c.wait_for(lambda: proc_state(pid) == state, what=f"process {pid} in state {state}")


def queue_states(c: Cell) -> str:
    line = next(ln for ln in c.run("qstat", "-f").out.splitlines() if ln.startswith("all.q@"))
    parts = line.split()
    return parts[5] if len(parts) > 5 else ""


def qmod(c: Cell, *args: str, user: str | None = None):
    return c.run("qmod", *args, user=user)


# ------------------------------------------------------------ suspend / resume
def test_qmod_sj_stops_the_job_and_usj_continues_it(cell):
    job = submit(cell, "-b", "y", "/bin/sleep", "300")
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    r = qmod(cell, "-sj", str(job))
    assert (r.rc, r.out) == (0, f"root - suspended job {job}\n")
    wait_proc_state(cell, pid, "T")
    assert cell.qstat_states()[job] == "s"
    r = qmod(cell, "-s", str(job))
    assert r.out == f"root - job {job} is already suspended\n"
    r = qmod(cell, "-usj", str(job))
    assert (r.rc, r.out) == (0, f"root - unsuspended job {job}\n")
    wait_proc_state(cell, pid, "S")
    assert cell.qstat_states()[job] == "r"
    r = qmod(cell, "-us", str(job))
    assert r.out == f"root - job {job} is already unsuspended\n"


def test_the_owner_may_suspend_his_job_others_may_not(cell, users):
    job = submit(cell, "-b", "y", "/bin/sleep", "300")
    wait_state(cell, job, "r")
    r = qmod(cell, "-sj", str(job), user=USER)
    assert r.out == f"{USER} - suspended job {job}\n"
    other = users[1].pw_name if users[0].pw_name == USER else users[0].pw_name
    r = qmod(cell, "-usj", str(job), user=other)
    assert (r.rc, r.out) == (1, f'{other} - you have no permission to modify job "{job}"\n')


def test_qmod_of_unknown_targets(cell):
    r = qmod(cell, "-sj", "4711")
    assert (r.rc, r.out) == (1, 'invalid queue or job "4711"\n')
    r = qmod(cell, "-sq", "nosuch.q")
    assert (r.rc, r.out) == (1, 'invalid queue "nosuch.q"\n')


def test_qmod_s_of_a_pending_job(cell):
    job = submit(cell, "-h", "-b", "y", "/bin/true")
    r = qmod(cell, "-sj", str(job))
    assert r.out == f"Modify operation can not be applied on job-array task {job}.1 in pending/hold state\n"


def test_qmod_sq_suspends_the_queue_instance_and_its_jobs(cell):
    job = submit(cell, "-b", "y", "/bin/sleep", "300")
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    qi = f"all.q@{cell.host}"
    r = qmod(cell, "-sq", qi)
    assert (r.rc, r.out) == (0, f'root@{cell.host} changed state of "{qi}" (suspended)\n')
    assert qmod(cell, "-s", qi).out == f'Queue instance "{qi}" is already in the specified state: suspended\n'
    assert queue_states(cell) == "s"
    wait_proc_state(cell, pid, "T")
    assert cell.qstat_states()[job] == "S"  # 8.1.9: suspended on subordinate
    qmod(cell, "-sj", str(job))
    assert cell.qstat_states()[job] == "Ss"
    # a suspended queue instance takes no jobs
    other = submit(cell, "-b", "y", "/bin/true")
    time.sleep(1)
    assert cell.qstat_states()[other] == "qw"
    r = qmod(cell, "-usq", qi)
    assert r.out == f'root@{cell.host} changed state of "{qi}" (unsuspended)\n'
    assert cell.qstat_states()[job] == "s"
    assert proc_state(pid) == "T"  # still suspended as a job
    qmod(cell, "-usj", str(job))
    wait_proc_state(cell, pid, "S")
    wait_state(cell, other, None)


# ------------------------------------------------------------ methods
def test_suspend_and_resume_method_signals_by_name_and_number(cell):
    set_queue(cell, "suspend_method", "SIGUSR1")
    set_queue(cell, "resume_method", "12")  # SIGUSR2
    body = ('trap "echo got USR1" USR1; trap "echo got USR2" USR2; echo ready; '
            'i=0; while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done')
    job = submit(cell, script(cell, "trap.sh", body))
    wait_state(cell, job, "r")
    cell.wait_for(lambda: "ready" in output(cell, job), what="job ready")
    qmod(cell, "-sj", str(job))
    cell.wait_for(lambda: "got USR1" in output(cell, job), what="suspend_method signal")
    assert cell.qstat_states()[job] == "s"
    qmod(cell, "-usj", str(job))
    cell.wait_for(lambda: "got USR2" in output(cell, job), what="resume_method signal")


def test_method_commands_run_as_the_job_owner_with_variables(cell):
    for action in ("suspend", "resume", "terminate"):
        path = script(cell, f"{action}.sh", f'echo "{action} $(id -un) $@" >> {cell.work}/methods.log')
        set_queue(cell, f"{action}_method", f"{path} $job_pid $job_id $job_owner $queue")
    job = submit(cell, "-b", "y", "/bin/sleep", "300")
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    log = os.path.join(cell.work, "methods.log")

    def lines():
        try:
            with open(log) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    qmod(cell, "-sj", str(job))
    cell.wait_for(lambda: len(lines()) == 1, what="suspend method")
    assert lines()[0] == f"suspend {USER} {pid} {job} {USER} all.q"
    assert proc_state(pid) != "T"  # the method replaces SIGSTOP
    qmod(cell, "-usj", str(job))
    cell.wait_for(lambda: len(lines()) == 2, what="resume method")
    assert lines()[1].startswith("resume ")
    r = cell.run("qdel", str(job))
    assert r.out == f"root has registered the job {job} for deletion\n"
    cell.wait_for(lambda: len(lines()) == 3, what="terminate method")
    assert lines()[2] == f"terminate {USER} {pid} {job} {USER} all.q"
    os.kill(pid, signal.SIGKILL)  # the method only wrote a line: end the job
    wait_state(cell, job, None)


def test_qdel_uses_the_terminate_method_signal(cell):
    set_queue(cell, "terminate_method", "SIGTERM")
    body = 'trap "echo got TERM; exit 3" TERM; echo ready; i=0; while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
    job = submit(cell, script(cell, "term.sh", body))
    wait_state(cell, job, "r")
    cell.wait_for(lambda: "ready" in output(cell, job), what="job ready")
    cell.run("qdel", str(job))
    rec = cell.wait_records(job)[0]
    assert "got TERM" in output(cell, job)
    assert (rec[11], rec[12]) == ("100", "3")  # deleted: failed 100 "assumedly after job"


def test_qdel_of_a_running_job_kills_its_process_group_by_default(cell):
    job = submit(cell, script(cell, "grp.sh", "sleep 300 & sleep 300; wait"))
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    cell.run("qdel", str(job))
    rec = cell.wait_records(job)[0]
    assert (rec[11], rec[12]) == ("100", "137")
    cell.wait_for(lambda: not any(_pgrp(p) == pid for p in _pids()), 30, "the job's process group gone")


def _pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _pgrp(pid: int) -> int:
    """The process group of a live (not zombie) process, -1 if none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return -1 if fields[0] == "Z" else int(fields[2])
    except (OSError, ValueError, IndexError):
        return -1


# ------------------------------------------------------------ -notify
def test_notify_sends_usr1_before_suspend_and_usr2_before_kill(cell):
    set_queue(cell, "notify", "00:00:02")
    body = ('trap "echo got USR1" USR1; trap "echo got USR2" USR2; echo ready; '
            'i=0; while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done')
    job = submit(cell, "-notify", script(cell, "notify.sh", body))
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    cell.wait_for(lambda: "ready" in output(cell, job), what="job ready")
    qmod(cell, "-sj", str(job))
    cell.wait_for(lambda: "got USR1" in output(cell, job), what="SIGUSR1")
    wait_proc_state(cell, pid, "T")  # SIGSTOP after the notify time
    qmod(cell, "-usj", str(job))
    wait_proc_state(cell, pid, "S")
    cell.run("qdel", str(job))
    cell.wait_for(lambda: "got USR2" in output(cell, job), what="SIGUSR2")
    rec = cell.wait_records(job)[0]
    assert (rec[11], rec[12]) == ("100", "137")  # SIGKILL after the notify time


def test_without_notify_no_warning_signal(cell):
    set_queue(cell, "notify", "00:00:30")
    body = 'trap "echo got USR1" USR1; echo ready; i=0; while [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done'
    job = submit(cell, script(cell, "nonotify.sh", body))
    wait_state(cell, job, "r")
    pid = job_pid(cell, job)
    cell.wait_for(lambda: "ready" in output(cell, job), what="job ready")
    qmod(cell, "-sj", str(job))
    wait_proc_state(cell, pid, "T")
    assert "got USR1" not in output(cell, job)
    qmod(cell, "-usj", str(job))


# ------------------------------------------------------------ starter_method, priority
def test_starter_method_starts_the_job_with_its_arguments(cell):
    starter = script(cell, "starter.sh",
                     'echo "STARTER $# $*"\n'
                     'echo "SHELL=$SGE_STARTER_SHELL_PATH MODE=$SGE_STARTER_SHELL_START_MODE '
                     'LOGIN=$SGE_STARTER_USE_LOGIN_SHELL"\n'
                     'exec "$@"')
    set_queue(cell, "starter_method", starter)
    job = submit(cell, script(cell, "st.sh", 'echo "SCRIPT $*"'), "a", "b")
    bjob = submit(cell, "-b", "y", "echo", "hello", "world", name="b")
    wait_state(cell, job, None)
    wait_state(cell, bjob, None)
    spool_script = os.path.join(cell.root, "default", "spool", "qmaster", "job_scripts", str(job))
    lines = output(cell, job).splitlines()
    assert lines[0] == f"STARTER 3 {spool_script} a b"  # the job script, not the shell
    assert lines[1] == "SHELL=/bin/sh MODE=posix_compliant LOGIN=true"
    assert lines[2] == "SCRIPT a b"
    assert output(cell, bjob, "b").splitlines() == ["STARTER 3 echo hello world",
                                                    "SHELL=/bin/sh MODE=posix_compliant LOGIN=true", "hello world"]


def test_queue_priority_is_the_jobs_nice_value(cell):
    set_queue(cell, "priority", "7")
    job = submit(cell, script(cell, "nice.sh", 'echo "NICE=$(cut -d" " -f19 /proc/$$/stat)"'))
    wait_state(cell, job, None)
    cell.wait_records(job)
    assert output(cell, job) == "NICE=7\n"


# ------------------------------------------------------------ qdel during the prolog
def test_qdel_during_the_prolog_kills_it_and_the_job_never_starts(cell):
    prolog = script(cell, "prolog.sh", f"echo $$ > {cell.work}/prolog.pid; sleep 300; echo prolog-end")
    set_queue(cell, "prolog", prolog)
    job = submit(cell, "-b", "y", "echo", "job-ran")
    pidfile = os.path.join(cell.work, "prolog.pid")
    cell.wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), what="prolog started")
    ppid = int(open(pidfile).read())
    r = cell.run("qdel", str(job))
    assert r.out == f"root has registered the job {job} for deletion\n"
    rec = cell.wait_records(job)[0]
    assert not os.path.exists(f"/proc/{ppid}") or proc_state(ppid) == "Z"
    assert "job-ran" not in output(cell, job) and "prolog-end" not in output(cell, job)
    # as 8.1.9 records a job deleted before it started: failed 100, no times, exit 0
    assert (rec[9], rec[10], rec[11], rec[12]) == ("0", "0", "100", "0")
    assert queue_states(cell) == ""  # not the queue's fault


# ------------------------------------------------------------ qmod -r
RESTART_SCRIPT = 'echo "RESTARTED=$RESTARTED"; i=0; while [ $i -lt 1500 ]; do sleep 0.2; i=$((i+1)); done'


def test_qmod_r_of_a_job_that_is_not_rerunnable(cell):
    job = submit(cell, "-b", "y", "/bin/sleep", "300")
    wait_state(cell, job, "r")
    r = qmod(cell, "-r", str(job))
    assert (r.rc, r.out) == (0, f"The job {job} is running in queue none where jobs are not rerunable.\n")
    r = qmod(cell, "-rj", str(job))
    assert r.out == f"The job {job} is running in queue none where jobs are not rerunable.\n"
    njob = submit(cell, "-r", "n", "-b", "y", "/bin/sleep", "300")
    wait_state(cell, njob, "r")
    assert qmod(cell, "-rj", str(njob)).out == f"The job {njob} is not restartable\n"
    assert cell.qstat_states()[job] == "r"
    assert cell.records_of(job) == []


def test_qmod_rj_reschedules_a_rerunnable_job(cell):
    job = submit(cell, "-r", "y", script(cell, "rr.sh", RESTART_SCRIPT))
    wait_state(cell, job, "r")
    cell.wait_for(lambda: "RESTARTED=0" in output(cell, job), what="first run")
    r = qmod(cell, "-rj", str(job))
    assert (r.rc, r.out) == (0, f"Pushed rescheduling of job {job} on host {cell.host}\n")
    assert cell.qstat_states()[job] in ("Rq", "Rr")
    wait_state(cell, job, "Rr")
    cell.wait_for(lambda: "RESTARTED=1" in output(cell, job), what="second run")
    assert output(cell, job) == "RESTARTED=0\nRESTARTED=1\n"
    # 8.1.9's record of the pushed run: failed 25 (rescheduling), zero times and status
    rec = cell.records_of(job)
    assert len(rec) == 1
    assert (rec[0][8], rec[0][9], rec[0][10], rec[0][11], rec[0][12], rec[0][13]) == ("0", "0", "0", "25", "0", "0")
    cell.run("qdel", str(job))
    cell.wait_records(job, 2)


def test_qmod_rq_reschedules_the_jobs_of_a_rerun_queue(cell):
    set_queue(cell, "rerun", "TRUE")
    job = submit(cell, script(cell, "rq.sh", RESTART_SCRIPT))
    wait_state(cell, job, "r")
    cell.wait_for(lambda: "RESTARTED=0" in output(cell, job), what="first run")
    r = qmod(cell, "-rq", f"all.q@{cell.host}")
    assert r.out == f"Pushed rescheduling of job {job} on host {cell.host}\n"
    cell.wait_for(lambda: "RESTARTED=1" in output(cell, job), what="second run")
    assert cell.qstat_states()[job] == "Rr"
    cell.run("qdel", str(job))


# ------------------------------------------------------------ a host that died
@pytest.fixture
def roles(user):
    """A qmaster and one execd posing as host ``node1`` (2 slots), over TCP."""
    c = Cell(host="master")
    c.minisge("init", "--hostname", "master", "--slots", "2")
    with open(os.path.join(c.qmaster_spool, "hostgroups", "@allhosts"), "w") as f:
        f.write("group_name @allhosts\nhostlist node1\n")
    c.spawn("qmaster", "--hostname", "master", log="qmaster.log")
    c.wait_for(lambda: os.path.exists(os.path.join(c.qmaster_spool, "qmaster.pid")), what="qmaster")
    try:
        yield c
    finally:
        c.cleanup()


def start_execd(c: Cell, n: int):
    messages = os.path.join(c.qmaster_spool, "messages")
    p = c.spawn("execd", "--hostname", "node1", "--qmaster", "127.0.0.1", log="execd-node1.log")
    c.wait_for(lambda: open(messages).read().count("execd node1 connected") >= n, what="execd node1")
    return p


def test_jobs_of_a_host_that_died_rerun_if_rerunnable_else_fail(roles):
    c = roles
    execd = start_execd(c, 1)
    rerun = c.submit("-r", "y", "-N", "rr", "-o", c.work, "-j", "y", script(c, "rr.sh", RESTART_SCRIPT), user=USER)
    plain = c.submit("-N", "pl", "-o", c.work, "-j", "y", script(c, "pl.sh", RESTART_SCRIPT), user=USER)
    for job in (rerun, plain):
        wait_state(c, job, "r")
    for job, name in ((rerun, "rr"), (plain, "pl")):
        c.wait_for(lambda job=job, name=name: "RESTARTED=0" in output(c, job, name), what=f"job {job} running")
    active = os.path.join(c.root, "default", "spool", "node1", "active_jobs")
    # the host dies: its execd, the shepherds and the jobs are gone at once
    execd.send_signal(signal.SIGKILL)
    execd.wait()
    for job in (rerun, plain):
        d = os.path.join(active, f"{job}.1")
        # the shepherd first: were the job to die first, the shepherd could
        # still write its exit status, which a dead host never does
        for f, kill in (("pid", os.kill), ("job_pid", os.killpg)):
            with open(os.path.join(d, f)) as fh:
                try:
                    kill(int(fh.read()), signal.SIGKILL)
                except ProcessLookupError:
                    pass
    start_execd(c, 2)
    # the rerunnable job runs again, restarted; the other one ends as failed
    c.wait_for(lambda: "RESTARTED=1" in output(c, rerun, "rr"), what="the rerun")
    wait_state(c, rerun, "Rr")
    rec = c.wait_records(plain)
    assert plain not in c.qstat_states()
    assert [(r[11], r[12]) for r in rec] == [("19", "0")]  # "before writing exit_status"
    rec = c.records_of(rerun)
    assert [r[11] for r in rec] == ["19"]
    c.run("qdel", str(rerun))
    c.wait_records(rerun, 2)
