"""The separate roles: one qmaster and two execds posing as two hosts, over real TCP."""

from __future__ import annotations

import os
import socket
import time

import pytest

from cellutil import Cell, ensure_user

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="root only (jobs run as test users)")


def _allhosts(cell: Cell, hosts: list[str], slots: int = 1) -> None:
    hg = os.path.join(cell.qmaster_spool, "hostgroups", "@allhosts")
    with open(hg, "w") as f:
        f.write("group_name @allhosts\nhostlist " + " ".join(hosts) + "\n")
    q = os.path.join(cell.qmaster_spool, "cqueues", "all.q")
    text = open(q).read().replace("\nslots                 2\n", f"\nslots                 {slots}\n")
    with open(q, "w") as f:
        f.write(text)


@pytest.fixture
def multi():
    c = Cell(host="master")
    c.minisge("init", "--hostname", "master", "--slots", "1")
    _allhosts(c, ["node1", "node2"])
    c.spawn("qmaster", "--hostname", "master", log="qmaster.log")
    c.wait_for(lambda: os.path.exists(os.path.join(c.qmaster_spool, "qmaster.pid")), what="qmaster")
    for h in ("node1", "node2"):
        c.spawn("execd", "--hostname", h, "--qmaster", "127.0.0.1", log=f"execd-{h}.log")
    messages = os.path.join(c.qmaster_spool, "messages")
    for h in ("node1", "node2"):
        c.wait_for(lambda: f"execd {h} connected" in open(messages).read(), what=f"execd {h}")
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
    jobs = [multi.submit("-b", "y", "/bin/sleep", "1", user=user) for _ in range(2)]
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
    log = open(os.path.join(multi.qmaster_spool, "messages")).read()
    assert "refused connection" in log
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
        os.symlink(os.path.join(multi.root, "default", "spool", "node1"), os.path.join(multi.root, "default", "spool", env_host)) \
            if not os.path.exists(os.path.join(multi.root, "default", "spool", env_host)) else None
        r = multi.run("qsub", "-b", "y", "/bin/true")
        assert r.rc == 0, r
        job = int(r.out.split()[2])
        multi.wait_records(job)
    finally:
        os.rename(os.path.join(multi.qmaster_spool, "hidden.sock"), os.path.join(multi.qmaster_spool, "qmaster.sock"))


def test_an_execd_that_lost_its_qmaster_reports_what_ended_meanwhile(multi):
    user = ensure_user("msgeuser1").pw_name
    job = multi.submit("-b", "y", "/bin/sleep", "2", user=user)
    multi.wait_for(lambda: multi.qstat_states().get(job) == "r", what="running")
    qm = multi.procs[0]
    qm.terminate()
    qm.wait(10)
    time.sleep(3)  # the job ends while there is no qmaster
    multi.procs[0] = multi.spawn("qmaster", "--hostname", "master", log="qmaster2.log")
    multi.procs.pop()
    recs = multi.wait_records(job, timeout=30)
    time.sleep(0.5)
    assert len(multi.records_of(job)) == 1
    assert recs[0][11] == "0"
