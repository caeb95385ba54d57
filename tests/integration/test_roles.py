"""The separate roles: one qmaster and two execds posing as two hosts, over real TCP."""

from __future__ import annotations

import glob
import os
import socket
import time

import pytest
from cellutil import WAIT, Cell, ensure_user, touch, until_file
from golden import read_golden

pytestmark = pytest.mark.root


@pytest.fixture
def multi():
    c = Cell(host="master").start_roles(("node1", "node2"), slots=1)
    try:
        yield c
    finally:
        c.cleanup()


def _port(c: Cell) -> int:
    for line in open(os.path.join(c.common, "settings.sh")):
        if "SGE_QMASTER_PORT=" in line:
            return int(line.split("=")[1])
    raise AssertionError("no port")


def test_jobs_spread_over_two_execd_hosts(multi):
    user = ensure_user("msgeuser1").pw_name
    go = os.path.join(multi.work, "go")
    waiter = until_file(multi, go)  # written once: rewriting it under a running job is ETXTBSY
    jobs = [multi.submit("-b", "y", waiter, user=user) for _ in range(2)]
    multi.wait_for(lambda: [multi.qstat_states().get(j) for j in jobs] == ["r", "r"], what="both running")
    touch(go)
    hosts = sorted(multi.wait_records(j)[0][1] for j in jobs)
    assert hosts == ["node1", "node2"]


def test_a_connection_without_the_cell_key_is_refused_and_logged(multi):
    port = _port(multi)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"MSGE\x01\x00\x00\x00\x02{}")
        s.settimeout(5)
        data = b""
        try:
            while chunk := s.recv(4096):
                data += chunk
        except OSError:
            pass
    messages = os.path.join(multi.qmaster_spool, "messages")
    multi.wait_for(lambda: "refused connection" in open(messages).read(), what="the refusal in the messages file")
    # and the cell still works
    job = multi.submit("-b", "y", "/bin/true")
    multi.wait_records(job)


def test_a_command_on_an_execd_only_host_goes_through_the_execd(multi):
    # with the qmaster's socket out of reach the command finds the local execd's
    os.rename(os.path.join(multi.qmaster_spool, "qmaster.sock"), os.path.join(multi.qmaster_spool, "hidden.sock"))
    try:
        import socket as s

        env_host = s.gethostname().split(".")[0]
        # the command looks for the execd of this host's name: pose as node1
        spool = os.path.join(multi.root, "default", "spool")
        if not os.path.exists(os.path.join(spool, env_host)):
            os.symlink(os.path.join(spool, "node1"), os.path.join(spool, env_host))
        r = multi.run("qsub", "-b", "y", "/bin/true")
        assert r.rc == 0, r
        job = int(r.out.split()[2])
        multi.wait_records(job)
    finally:
        os.rename(os.path.join(multi.qmaster_spool, "hidden.sock"), os.path.join(multi.qmaster_spool, "qmaster.sock"))


def test_an_execd_that_lost_its_qmaster_reports_what_ended_meanwhile(multi):
    user = ensure_user("msgeuser1").pw_name
    go = os.path.join(multi.work, "go")
    job = multi.submit("-b", "y", until_file(multi, go), user=user)
    multi.wait_for(lambda: multi.qstat_states().get(job) == "r", what="running")
    qm = multi.procs[0]
    qm.terminate()
    qm.wait(WAIT)
    touch(go)
    # the job ends while there is no qmaster: its shepherd writes exit_status last
    ended = os.path.join(multi.root, "default", "spool", "*", "active_jobs", f"{job}.1", "exit_status")
    multi.wait_for(lambda: glob.glob(ended), what="the job's end on its execd")
    multi.procs[0] = multi.spawn("qmaster", "--hostname", "master", log="qmaster2.log")
    multi.procs.pop()
    recs = multi.wait_records(job)
    time.sleep(0.5)
    assert len(multi.records_of(job)) == 1
    assert recs[0][11] == "0"


@pytest.mark.parametrize("golden", ["qstat_-f_-q_-s_r.exec_host_without_execd",
                                    "qstat_-f_-q_-s_r_-explain_a.exec_host_without_execd"])
def test_an_execution_host_whose_execd_never_ran_is_au_as_in_8_1_9(golden):
    # 8.1.9 (the peer, tests/golden): a host in a queue's hostlist with no execd shows "au"
    # and -explain a says why; a cell made by minisge init (not --split) has its qmaster's
    # host as execution host, so run as the qmaster role alone it shows the same. The
    # probe's host and queue (f3ghost, f3probe.q) are used here too: nothing to normalise.
    c = Cell(host="f3ghost", environ={"MINISGE_LOAD_OVERRIDE": ""})
    try:
        c.minisge("init", "--hostname", "f3ghost", "--slots", "1")
        c.spawn("qmaster", "--hostname", "f3ghost", log="qmaster.log")
        c.wait_for(lambda: os.path.exists(os.path.join(c.qmaster_spool, "qmaster.pid")), what="qmaster")
        conf = c.run("qconf", "-sq", "all.q").out
        conf = "".join(("qname f3probe.q\n" if ln.startswith("qname ") else ln + "\n") for ln in conf.splitlines())
        path = os.path.join(c.dir, "f3probe.q")
        with open(path, "w") as f:
            f.write(conf)  # all.q's hostlist: @allhosts, which holds f3ghost
        assert c.run("qconf", "-Aq", path).rc == 0
        want = read_golden(golden)
        r = c.run(*want.command.split())
        assert (r.rc, r.out) == (want.exit, want.text)
    finally:
        c.cleanup()
