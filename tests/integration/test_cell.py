"""A running cell, driven only through its commands (issue: a running cell)."""

from __future__ import annotations

import os
import signal
import socket
import stat
import time

import pytest
from cellutil import process_gone, touch, until_file

pytestmark = pytest.mark.root


def test_start_lays_the_cell_down_in_grid_engines_layout(cell):
    common = cell.common
    for f in ("settings.sh", "bootstrap", "act_qmaster", "configuration", "sched_configuration", "accounting"):
        assert os.path.exists(os.path.join(common, f)), f
    for d in ("cqueues", "exec_hosts", "centry", "pe", "usersets", "hostgroups", "projects", "jobs", "resource_quotas"):
        assert os.path.isdir(os.path.join(cell.qmaster_spool, d)), d
    assert os.path.exists(os.path.join(cell.qmaster_spool, "cqueues", "all.q"))
    assert os.path.exists(os.path.join(cell.qmaster_spool, "pe", "smp"))
    assert os.path.exists(os.path.join(cell.qmaster_spool, "messages"))
    key_mode = stat.S_IMODE(os.stat(os.path.join(common, "cell_key")).st_mode)
    assert key_mode == 0o600
    assert open(os.path.join(common, "act_qmaster")).read().strip() == cell.host
    assert cell.daemon_pid() > 0
    st = cell.minisge("status")
    assert "running" in st.out


def test_start_twice_keeps_the_running_daemon(cell):
    pid = cell.daemon_pid()
    r = cell.minisge("start", "--hostname", cell.host)
    assert "already running" in r.out
    assert cell.daemon_pid() == pid


def test_binary_job_runs_and_is_accounted(cell, users):
    user = users[0].pw_name
    import glob

    for old in glob.glob(os.path.join(users[0].pw_dir, "hello.[oe]*")):
        os.unlink(old)  # left by an earlier run: Grid Engine appends to output files
    r = cell.run("qsub", "-b", "y", "-N", "hello", "/bin/echo", "hi there", user=user)
    assert r.rc == 0
    assert r.out.startswith("Your job ") and r.out.endswith(' ("hello") has been submitted\n')
    job = int(r.out.split()[2])
    rec = cell.wait_records(job)[0]
    assert rec[0] == "all.q" and rec[1] == cell.host and rec[3] == user and rec[4] == "hello"
    assert rec[11] == "0" and rec[12] == "0"  # failed, exit_status
    out = os.path.join(users[0].pw_dir, f"hello.o{job}")
    assert open(out).read() == "hi there\n"
    assert os.stat(out).st_uid == users[0].pw_uid  # written by the job, as its owner


def test_job_runs_as_the_submitting_user_with_grid_engines_environment(cell, users):
    u = users[0]
    script = ("#!/bin/sh\nid -u\necho JOB_ID=$JOB_ID\necho JOB_NAME=$JOB_NAME\necho USER=$USER\n"
              "echo ENVIRONMENT=$ENVIRONMENT\necho QUEUE=$QUEUE\necho NSLOTS=$NSLOTS\necho SGE_TASK_ID=$SGE_TASK_ID\n"
              "echo HOME=$HOME\necho SGE_O_WORKDIR=$SGE_O_WORKDIR\npwd\n")
    r = cell.run("qsub", "-sync", "y", "-cwd", "-N", "envjob", user=u.pw_name, input=script)
    assert r.rc == 0, r
    job = int(r.out.split()[2])
    assert f"Job {job} exited with exit code 0." in r.out
    lines = open(os.path.join(cell.work, f"envjob.o{job}")).read().splitlines()
    assert lines[0] == str(u.pw_uid)
    assert f"JOB_ID={job}" in lines
    assert "JOB_NAME=envjob" in lines and f"USER={u.pw_name}" in lines
    assert "ENVIRONMENT=BATCH" in lines and "QUEUE=all.q" in lines and "NSLOTS=1" in lines
    assert "SGE_TASK_ID=undefined" in lines
    assert f"HOME={u.pw_dir}" in lines and f"SGE_O_WORKDIR={cell.work}" in lines
    assert lines[-1] == cell.work


def test_sync_returns_the_jobs_exit_status(cell, users):
    r = cell.run("qsub", "-sync", "y", "-b", "y", "/bin/sh", "-c", "'exit 3'", user=users[0].pw_name)
    assert r.rc == 3
    job = int(r.out.split()[2])
    assert r.err == f"Job {job} exited with exit code 3.\n"
    assert cell.records_of(job)[0][12] == "3"


def test_h_rt_limit_kills_the_job(cell, users):
    r = cell.run("qsub", "-sync", "y", "-l", "h_rt=0:0:1", "-b", "y", "/bin/sleep", "30", user=users[0].pw_name)
    assert r.rc == 1
    assert "exited because of signal SIGKILL" in r.err
    job = int(r.out.split()[2])
    rec = cell.records_of(job)[0]
    assert rec[12] == "137" and rec[11] == "37"


def test_array_job_runs_every_task_with_its_own_output(cell, users):
    u = users[0]
    r = cell.run("qsub", "-sync", "y", "-t", "1-3", "-cwd", "-N", "arr", user=u.pw_name,
                 input="echo task $SGE_TASK_ID of $SGE_TASK_FIRST-$SGE_TASK_LAST\n")
    assert r.rc == 0, r
    assert r.out.startswith("Your job-array ") and '.1-3:1 ("arr") has been submitted' in r.out
    job = int(r.out.split()[2].split(".")[0])
    for t in (1, 2, 3):
        assert f"Job {job}.{t} exited with exit code 0." in r.out
        assert open(os.path.join(cell.work, f"arr.o{job}.{t}")).read() == f"task {t} of 1-3\n"
    tasks = sorted(int(rec[35]) for rec in cell.records_of(job))
    assert tasks == [1, 2, 3]


def test_hold_jid_waits_for_the_predecessor(cell, users):
    user = users[0].pw_name
    go = os.path.join(cell.work, "go")
    first = cell.submit("-N", "first", "-b", "y", until_file(cell, go), user=user)
    second = cell.submit("-N", "second", "-hold_jid", "first", "-b", "y", "/bin/true", user=user)
    states = cell.qstat_states()
    assert states[second] == "hqw"
    touch(go)
    rec2 = cell.wait_records(second)[0]
    rec1 = cell.records_of(first)[0]
    assert int(rec2[9]) >= int(rec1[10])  # started after the first ended


def test_qhold_and_qrls(cell, users):
    user = users[0].pw_name
    job = cell.submit("-h", "-b", "y", "/bin/true", user=user)
    assert cell.qstat_states()[job] == "hqw"
    time.sleep(0.3)
    assert cell.records_of(job) == []
    r = cell.run("qrls", str(job), user=user)
    assert r.out == f"modified hold of job {job}\n" and r.rc == 0
    cell.wait_records(job)


def test_qdel_pending_and_running(cell, users):
    user = users[0].pw_name
    cell.run("qmod", "-d", "all.q")
    pending = cell.submit("-b", "y", "/bin/true", user=user)
    r = cell.run("qdel", str(pending), user=user)
    assert r.out == f"{user} has deleted job {pending}\n" and r.rc == 0
    cell.run("qmod", "-e", "all.q")
    running = cell.submit("-b", "y", "/bin/sleep", "60", user=user)
    cell.wait_for(lambda: cell.qstat_states().get(running) == "r", what="job running")
    r = cell.run("qdel", str(running), user=user)
    assert r.out == f"{user} has registered the job {running} for deletion\n"
    rec = cell.wait_records(running)[0]
    assert rec[11] == "100" and rec[12] == "137"  # assumedly after job, killed
    assert cell.records_of(pending) == []
    assert running not in cell.qstat_states()


def test_a_user_cannot_delete_anothers_job(cell, users):
    a, b = users[0].pw_name, users[1].pw_name
    job = cell.submit("-h", "-b", "y", "/bin/true", user=a)
    r = cell.run("qdel", str(job), user=b)
    assert r.rc == 1
    assert r.out == f'{b} - you do not have the necessary privileges to delete the job "{job}"\n'
    assert job in cell.qstat_states()


def test_qdel_of_unknown_job(cell):
    r = cell.run("qdel", "999999")
    assert r.rc == 1 and r.out == 'denied: job "999999" does not exist\n'


def test_disabled_queue_takes_no_jobs_until_enabled(cell, users):
    r = cell.run("qmod", "-d", "all.q")
    assert r.out == f'root@{cell.host} changed state of "all.q@{cell.host}" (disabled)\n'
    job = cell.submit("-b", "y", "/bin/true", user=users[0].pw_name)
    time.sleep(0.3)
    assert cell.qstat_states()[job] == "qw"
    cell.run("qmod", "-e", "all.q")
    cell.wait_records(job)


def test_kill_9_of_the_daemon_loses_no_job_and_runs_none_twice(cell, users):
    user = users[0].pw_name
    go = os.path.join(cell.work, "go")
    waiter = until_file(cell, go)  # written once: rewriting it under a running job is ETXTBSY
    jobs = [cell.submit("-b", "y", waiter, user=user) for _ in range(4)]
    cell.wait_for(lambda: list(cell.qstat_states().values()).count("r") == 2, what="two running")
    running = [j for j, state in cell.qstat_states().items() if state == "r"]
    pid = cell.daemon_pid()
    os.kill(pid, signal.SIGKILL)
    cell.wait_for(lambda: process_gone(pid), what="the daemon's end")
    # the two running jobs end while there is no daemon (their shepherds write exit_status last)
    touch(go)
    active = os.path.join(cell.root, "default", "spool", cell.host, "active_jobs")
    cell.wait_for(lambda: all(os.path.exists(os.path.join(active, f"{j}.1", "exit_status")) for j in running),
                  what="the running jobs' end")
    cell.wait_for(lambda: all(process_gone(shepherd_pid(cell, j)) for j in running), what="their shepherds' end")
    cell.start()
    for j in jobs:
        cell.wait_records(j)
    time.sleep(0.5)
    for j in jobs:
        assert len(cell.records_of(j)) == 1, cell.records_of(j)
    # the next job id goes on
    nxt = cell.submit("-b", "y", "/bin/true", user=user)
    assert nxt == max(jobs) + 1


def test_stop_and_start_keep_pending_jobs_and_holds(cell, users):
    user = users[0].pw_name
    held = cell.submit("-h", "-b", "y", "/bin/true", user=user)
    cell.minisge("stop")
    cell.start()
    assert cell.qstat_states()[held] == "hqw"


def shepherd_pid(c, job: int) -> int:
    with open(os.path.join(c.root, "default", "spool", c.host, "active_jobs", f"{job}.1", "pid")) as f:
        return int(f.read())


def test_a_daemon_killed_while_jobs_run_starts_again_at_once(cell, users):
    go = os.path.join(cell.work, "go")
    job = cell.submit("-b", "y", until_file(cell, go), user=users[0].pw_name)
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the job running")
    pid = cell.daemon_pid()
    os.kill(pid, signal.SIGKILL)
    cell.wait_for(lambda: process_gone(pid), what="the daemon's end")
    try:
        r = cell.minisge("start", "--hostname", cell.host, "--slots", str(cell.slots), check=False)
        assert r.rc == 0, r
        assert cell.qstat_states().get(job) == "r"  # the execd found its job again
    finally:
        touch(go)
    assert cell.wait_records(job)[0][11] == "0"


def test_root_jobs_are_accepted_with_the_template_min_uid(cell):
    job = cell.submit("-b", "y", "/bin/true")
    assert cell.wait_records(job)[0][3] == "root"


def test_garbage_frame_leaves_the_daemon_serving(cell):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(cell.qmaster_spool, "qmaster.sock"))
    s.sendall(b"GARBAGE that is not a frame\n" * 10)
    s.settimeout(5)
    try:
        s.recv(1000)
    except OSError:
        pass
    s.close()
    job = cell.submit("-b", "y", "/bin/true")
    cell.wait_records(job)


def test_qsub_errors_are_grid_engines(cell):
    r = cell.run("qsub", "-q", "nosuchq", "-b", "y", "/bin/true")
    assert r.rc == 1
    assert r.err == 'Unable to run job: Job was rejected because job requests unknown queue "nosuchq"\nExiting.\n'
    r = cell.run("qsub", "-pe", "nosuchpe", "1", "-b", "y", "/bin/true")
    assert r.err == (
        'Unable to run job: job rejected: the requested parallel environment "nosuchpe" does not exist\nExiting.\n')
    r = cell.run("qsub", "-l", "nosuchres=1", "-b", "y", "/bin/true")
    assert r.err == 'Unable to run job: unknown resource "nosuchres"\nExiting.\n'
    r = cell.run("qsub", "-l", "h_rt=abc", "-b", "y", "/bin/true")
    assert r.err == 'Unable to run job: attribute "h_rt" is not a time value\nExiting.\n' and r.rc == 1
    r = cell.run("qsub", "-l", "num_proc=abc", "-b", "y", "/bin/true")
    assert r.err == 'Unable to run job: attribute "num_proc" is not a integer value\nExiting.\n'
    r = cell.run("qsub", "-P", "nosuchproject", "-b", "y", "/bin/true")
    assert r.err == 'Unable to run job: job rejected: the requested project "nosuchproject" does not exist\nExiting.\n'
    r = cell.run("qsub", "-w", "e", "-pe", "smp", str(cell.slots + 2), "-b", "y", "/bin/true")
    assert (r.rc, r.err) == (1, "Unable to run job: error: no suitable queues\nExiting.\n")
    r = cell.run("qsub", "-w", "v", "-b", "y", "/bin/true")
    assert (r.rc, r.out) == (0, "verification: found suitable queue(s)\n")
    r = cell.run("qsub", "/nonexistent/script.sh")
    assert r.rc != 0 and "script.sh" in r.err


def test_commands_without_a_daemon_fail_like_grid_engine(cell):
    cell.minisge("stop")
    r = cell.run("qsub", "-b", "y", "/bin/true")
    assert r.rc == 1
    assert "unable to send message to qmaster" in r.err


def test_a_task_that_cannot_be_set_up_is_requeued_and_the_queue_put_in_error(cell):
    r = cell.run("qconf", "-mattr", "queue", "tmpdir", "/proc/no/such/dir", "all.q")
    assert r.rc == 0, r
    job = cell.submit("-b", "y", "/bin/true")
    cell.wait_for(lambda: "E" in cell.run("qstat", "-f").out.splitlines()[2].split()[-1], what="queue in error")
    assert cell.qstat_states()[job] == "qw"  # back to pending, waiting
    assert cell.daemon_pid() > 0 and cell.minisge("status").rc == 0  # the daemon lives on
