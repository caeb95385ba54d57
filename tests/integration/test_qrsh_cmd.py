"""qrsh -inherit: slave tasks of tightly integrated parallel jobs (sge_pe(5)
control_slaves, accounting_summary; qrsh(1) -inherit), through the real
daemons: one qmaster and two execds posing as hosts node1 and node2 (2 slots
each).  The job scripts run as a test user and call qrsh the way a job does:
a program in a path the user may execute (the system Python running the
source tree's cli/qrsh.py, or the single binary's qrsh with
MINISGE_TEST_BINARY)."""

from __future__ import annotations

import os
import time

import pytest
from cellutil import BINARY, Cell, ensure_user, proc_state, process_gone

import minisge

SYSTEM_PYTHON = "/usr/bin/python3"
pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(not BINARY and not os.access(SYSTEM_PYTHON, os.X_OK),
                       reason="needs a Python the test user may run"),
]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(minisge.__file__)))

# qrsh from the source tree, imported as the installed package names it
# (minisge.cli.qrsh: pyproject's package-dir maps minisge.cli to cli/, and the
# commands import their siblings relatively)
QRSH_FROM_SOURCE = """\
#!{python} -P
import importlib.util, sys
sys.path.insert(0, {repo!r})
spec = importlib.util.spec_from_file_location(
    "minisge.cli", {repo!r} + "/cli/__init__.py", submodule_search_locations=[{repo!r} + "/cli"])
sys.modules["minisge.cli"] = cli = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cli)
from minisge.cli.qrsh import main
sys.exit(main(sys.argv[1:]))
"""

# fields of accounting(5)
HOST, JOB_NAME, FAILED, EXIT, GRANTED_PE, SLOTS, CPU, PE_TASKID = 1, 4, 11, 12, 33, 34, 36, 41


def _pe_file(cell: Cell, name: str, control_slaves: str, summary: str) -> str:
    path = os.path.join(cell.dir, name + ".pe")
    with open(path, "w") as f:
        f.write(f"pe_name {name}\nslots 99\nuser_lists NONE\nxuser_lists NONE\n"
                "start_proc_args NONE\nstop_proc_args NONE\n"
                f"allocation_rule $round_robin\ncontrol_slaves {control_slaves}\njob_is_first_task TRUE\n"
                f"urgency_slots min\naccounting_summary {summary}\nqsort_args NONE\n")
    return path


def qrsh_for_jobs(c: Cell) -> str:
    """A qrsh a job of ``c`` may run: the single binary's, or the source tree's."""
    if BINARY:
        return os.path.join(BINARY, "qrsh")
    bindir = os.path.join(c.dir, "bin")
    os.makedirs(bindir, exist_ok=True)
    os.chmod(bindir, 0o755)
    qrsh = os.path.join(bindir, "qrsh")
    with open(qrsh, "w") as f:
        f.write(QRSH_FROM_SOURCE.format(python=SYSTEM_PYTHON, repo=REPO))
    os.chmod(qrsh, 0o755)
    return qrsh


@pytest.fixture
def tight():
    c = Cell(host="master").start_roles(("node1", "node2"), slots=2)
    for name, cs, summary in (("tight", "TRUE", "FALSE"), ("tsum", "TRUE", "TRUE"), ("loose", "FALSE", "FALSE")):
        r = c.run("qconf", "-Ap", _pe_file(c, name, cs, summary))
        assert r.rc == 0, r
    r = c.run("qconf", "-mattr", "queue", "pe_list", "make smp tight tsum loose", "all.q")
    assert r.rc == 0, r
    c.qrsh = qrsh_for_jobs(c)
    try:
        yield c
    finally:
        c.cleanup()


def _job(cell: Cell, pe: str, slots: str, body: str) -> tuple[int, str, str]:
    user = ensure_user("msgeuser1").pw_name
    out = os.path.join(cell.work, f"job-{pe}-{slots}.out")
    err = os.path.join(cell.work, f"job-{pe}-{slots}.err")
    script = f"#!/bin/sh\nQRSH={cell.qrsh}\n{body}"
    job = cell.submit("-pe", pe, slots, "-o", out, "-e", err, user=user, input=script)
    return job, out, err


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


# a task on every host of the PE hostfile: output, environment, exit status
EACH_HOST = """\
while read host n q rest; do
  $QRSH -inherit -nostdin $host 'echo task on $HOSTNAME of job $JOB_ID as $USER name $JOB_NAME pe $PE hostfile=$PE_HOSTFILE; echo oops on $HOSTNAME >&2; exit 3'
  echo "rc=$?"
done < $PE_HOSTFILE
echo master done
"""  # noqa: E501 - the job script, one task command a line


def test_a_task_runs_on_each_granted_host_with_its_output_and_exit_status(tight):
    job, out, err = _job(tight, "tight", "4", EACH_HOST)
    records = tight.wait_records(job, n=3)
    tight.wait_for(lambda: "master done" in _read(out), what="job output")
    assert _read(out).splitlines() == [
        f"task on node1 of job {job} as msgeuser1 name petask pe tight hostfile=",
        "rc=3",
        f"task on node2 of job {job} as msgeuser1 name petask pe tight hostfile=",
        "rc=3",
        "master done",
    ]
    assert _read(err).splitlines() == ["oops on node1", "oops on node2"]
    # accounting_summary FALSE: a record per task, then the master's
    by_task = {r[PE_TASKID]: r for r in records}
    assert sorted(by_task) == ["1.node1", "1.node2", "NONE"]
    for tid, host in (("1.node1", "node1"), ("1.node2", "node2")):
        r = by_task[tid]
        assert (r[HOST], r[FAILED], r[EXIT], r[GRANTED_PE], r[SLOTS], r[JOB_NAME]) == (
            host, "0", "3", "tight", "4", "STDIN")
    assert records[-1][PE_TASKID] == "NONE" and records[-1][EXIT] == "0"
    r = tight.run("qacct", "-j", str(job))
    assert r.rc == 0 and r.out.count("jobnumber") == 3, r


BURN = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"  # ~0.3-0.6 s of CPU on this machine


def test_accounting_summary_gives_one_record_with_the_tasks_usage(tight):
    body = EACH_HOST.replace("exit 3'", f"{BURN}; exit 3'")
    job, out, _ = _job(tight, "tsum", "4", body)
    tight.wait_records(job, n=1)
    tight.wait_for(lambda: "master done" in _read(out), what="job output")
    assert _read(out).count("rc=3") == 2
    time.sleep(1)  # a second record would come at once
    records = tight.records_of(job)
    assert len(records) == 1
    assert (records[0][PE_TASKID], records[0][EXIT], records[0][HOST]) == ("NONE", "0", "node1")
    # the master script itself only waits: the CPU time is the two tasks'
    assert float(records[0][CPU]) >= 0.2, records[0]


def test_without_summary_the_master_record_holds_the_masters_usage_alone(tight):
    body = EACH_HOST.replace("exit 3'", f"{BURN}; exit 3'")
    job, out, _ = _job(tight, "tight", "4", body)
    records = tight.wait_records(job, n=3)
    by_task = {r[PE_TASKID]: float(r[CPU]) for r in records}
    assert by_task["1.node1"] >= 0.1 and by_task["1.node2"] >= 0.1, records
    assert by_task["NONE"] < by_task["1.node1"] + by_task["1.node2"], records


def test_refused_tasks_get_grid_engines_messages(tight):
    # -pe tight 2 over round robin: one slot on each host; the job script is
    # the first task (job_is_first_task TRUE), so node1 has no slot for a task
    body = """\
$QRSH -inherit node2 /bin/echo granted; echo "rc=$?"
$QRSH -inherit node1 /bin/echo master-host-is-full; echo "rc=$?"
$QRSH -inherit node9 /bin/echo no-such-execd; echo "rc=$?"
$QRSH /bin/echo no-inherit; echo "rc=$?"
echo master done
"""
    job, out, err = _job(tight, "tight", "2", body)
    tight.wait_records(job, n=2)
    tight.wait_for(lambda: "master done" in _read(out), what="job output")
    # qrsh without -inherit inside the job: an interactive job of its own (a free slot is left)
    assert _read(out).splitlines() == ["granted", "rc=0", "rc=1", "rc=1", "no-inherit", "rc=0", "master done"]
    assert _read(err).splitlines() == [
        f'error: executing task of job {job} failed: execution daemon on host "node1" didn\'t accept task',
        f"error: executing task of job {job} failed: failed sending task to execd@node9: got send error",
    ]


def test_a_host_not_granted_to_the_job_is_refused(tight):
    job, out, err = _job(tight, "tight", "1", '$QRSH -inherit node2 /bin/true; echo "rc=$?"\n')
    tight.wait_records(job)
    tight.wait_for(lambda: "rc=" in _read(out), what="job output")
    assert _read(out) == "rc=1\n"
    assert _read(err) == (
        f'error: executing task of job {job} failed: execution daemon on host "node2" didn\'t accept task\n')


def test_control_slaves_false_refuses_tasks(tight):
    job, out, err = _job(tight, "loose", "4", '$QRSH -inherit node2 /bin/true; echo "rc=$?"\n')
    tight.wait_records(job)
    tight.wait_for(lambda: "rc=" in _read(out), what="job output")
    assert _read(out) == "rc=1\n"
    assert "didn't accept task" in _read(err)
    assert "not suited for starting tasks" in _read(os.path.join(tight.qmaster_spool, "messages"))


def _slave_pid(cell: Cell, name: str) -> int:
    path = os.path.join(cell.work, name)
    cell.wait_for(lambda: _read(path).strip().isdigit(), what="the slave task's pid")
    return int(_read(path))


def _task_pids(cell: Cell, host: str, job: int) -> set[int]:
    """The pids of the PE tasks of ``job`` on ``host``, from its execd's spool
    (``pe_tasks/JOB.1/TASK/job_pid``, written before the task runs a line)."""
    base = os.path.join(cell.root, "default", "spool", host, "pe_tasks", f"{job}.1")
    try:
        tasks = os.listdir(base)
    except FileNotFoundError:
        return set()
    pids = (_read(os.path.join(base, t, "job_pid")).strip() for t in tasks)
    return {int(p) for p in pids if p.isdigit()}


def test_qdel_ends_the_slave_tasks(tight):
    pidfile = os.path.join(tight.work, "qdel.pid")
    body = f"$QRSH -inherit node2 'echo $$ > {pidfile}; exec sleep 300' &\nsleep 300\n"
    job, _, _ = _job(tight, "tight", "4", body)
    pid = _slave_pid(tight, "qdel.pid")
    assert not process_gone(pid)
    r = tight.run("qdel", str(job), user="msgeuser1")
    assert r.rc == 0, r
    records = tight.wait_records(job, n=2)
    tight.wait_for(lambda: process_gone(pid), what="the slave task's end")
    by_task = {r[PE_TASKID]: r for r in records}
    assert (by_task["1.node2"][FAILED], by_task["1.node2"][EXIT]) == ("100", "137")


def test_a_slave_task_still_running_when_the_master_ends_is_killed(tight):
    pidfile = os.path.join(tight.work, "orphan.pid")
    body = (f"$QRSH -inherit node2 'echo $$ > {pidfile}; exec sleep 300' &\n"
            f"while [ ! -s {pidfile} ]; do sleep 0.2; done\n")
    job, _, _ = _job(tight, "tight", "4", body)
    pid = _slave_pid(tight, "orphan.pid")
    records = tight.wait_records(job, n=2)
    tight.wait_for(lambda: process_gone(pid), what="the slave task's end")
    by_task = {r[PE_TASKID]: r for r in records}
    assert (by_task["1.node2"][FAILED], by_task["1.node2"][EXIT]) == ("100", "137")
    assert (by_task["NONE"][FAILED], by_task["NONE"][EXIT]) == ("0", "0")
    job2, out2, _ = _job(tight, "tight", "4", '$QRSH -inherit node2 /bin/echo again\n')
    tight.wait_records(job2, n=2)
    assert _read(out2) == "again\n"


def test_qmod_suspends_and_resumes_the_slave_tasks_on_every_host(tight):
    # sge_shepherd(8)/qmod(1): every task of the job is stopped and continued
    import subprocess

    pidfile = os.path.join(tight.work, "susp.pid")
    body = f"$QRSH -inherit node2 'echo $$ > {pidfile}; exec sleep 300' &\nsleep 300\n"
    job, _, _ = _job(tight, "tight", "4", body)
    pid = _slave_pid(tight, "susp.pid")
    tight.wait_for(lambda: proc_state(pid) == "S", what="the slave task sleeping")  # past its echo and exec
    r = tight.run("qmod", "-sj", str(job))
    assert r.rc == 0, r
    tight.wait_for(lambda: proc_state(pid) == "T", what="the slave task stopped")
    # a task started while its job is suspended starts stopped (its job
    # script is stopped: the job owner's qrsh is run from here)
    user = ensure_user("msgeuser1")
    late = os.path.join(tight.work, "late.pid")
    before = _task_pids(tight, "node2", job)
    qrsh = subprocess.Popen([tight.qrsh, "-inherit", "node2", f"echo $$ > {late}; exec sleep 300"],
                            env=tight.env(JOB_ID=str(job)), cwd=tight.work, user=user.pw_uid, group=user.pw_gid,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the late task may be stopped before it runs its first line: its pid
        # comes from its execd, not from the task
        late_pid = tight.wait_for(lambda: (new := _task_pids(tight, "node2", job) - before) and new.pop(),
                                  what="the late slave task's pid")
        tight.wait_for(lambda: proc_state(late_pid) == "T", what="the late slave task stopped")
        r = tight.run("qmod", "-usj", str(job))
        assert r.rc == 0, r
        tight.wait_for(lambda: proc_state(pid) == "S" and proc_state(late_pid) == "S",
                       what="the slave tasks running again")
        assert _slave_pid(tight, "late.pid") == late_pid  # it ran on, in its own process
        r = tight.run("qdel", str(job))
        assert r.rc == 0, r
        tight.wait_records(job, n=3)
    finally:
        qrsh.kill()
        qrsh.wait()


def test_h_rt_applies_to_each_task_on_its_own_host(tight):
    # queue_conf(5) host-specific h_rt: 3 s on node2, none on node1 (the master's host)
    r = tight.run("qconf", "-mattr", "queue", "h_rt", "0:0:3", "all.q@node2")
    assert r.rc == 0, r
    body = '$QRSH -inherit node2 /bin/sleep 120; echo "rc=$?"\n'
    job, out, _ = _job(tight, "tight", "4", body)
    records = tight.wait_records(job, n=2)
    assert _read(out) == "rc=137\n"
    by_task = {r[PE_TASKID]: r for r in records}
    assert (by_task["1.node2"][FAILED], by_task["1.node2"][EXIT]) == ("37", "137")
    assert (by_task["NONE"][FAILED], by_task["NONE"][EXIT]) == ("0", "0")


def test_on_an_execd_only_host_qrsh_goes_through_the_local_execds_relay(tight):
    from minisge.cell import short_hostname

    go = os.path.join(tight.work, "go")
    body = f"while [ ! -e {go} ]; do sleep 0.2; done\n" \
           "$QRSH -inherit node2 'echo relayed from $HOSTNAME; echo err-relayed >&2; exit 5'; echo \"rc=$?\"\n"
    job, out, err = _job(tight, "tight", "4", body)
    tight.wait_for(lambda: tight.qstat_states().get(job) == "r", what="running")
    sock = os.path.join(tight.qmaster_spool, "qmaster.sock")
    hidden = os.path.join(tight.qmaster_spool, "hidden.sock")
    spool = os.path.join(tight.root, "default", "spool")
    here = os.path.join(spool, short_hostname())
    os.rename(sock, hidden)  # this host runs no qmaster now: only node1's execd (posing as this host)
    try:
        if not os.path.exists(here):
            os.symlink(os.path.join(spool, "node1"), here)
        open(go, "w").close()
        tight.wait_for(lambda: "rc=" in _read(out), what="job output")
    finally:
        os.rename(hidden, sock)
    assert _read(out) == "relayed from node2\nrc=5\n"
    assert _read(err) == "err-relayed\n"
