"""sge_conf(5) reschedule_unknown with the separate roles: a qmaster and three
execds posing as hosts; one execd is killed (SIGKILL, with its shepherd and job)."""

from __future__ import annotations

import glob
import os
import re
import signal

import pytest
from cellutil import WAIT, Cell, ensure_user

pytestmark = pytest.mark.root

HOSTS = ("node1", "node2", "node3")


def _set_global(cell: Cell, **values: str) -> None:
    path = os.path.join(cell.common, "configuration")
    text = open(path).read()
    for name, value in values.items():
        text, n = re.subn(rf"(?m)^{name}\s.*$", f"{name:<28} {value}", text)
        assert n == 1, name
    with open(path, "w") as f:
        f.write(text)


def _allhosts(cell: Cell) -> None:
    with open(os.path.join(cell.qmaster_spool, "hostgroups", "@allhosts"), "w") as f:
        f.write("group_name @allhosts\nhostlist " + " ".join(HOSTS) + "\n")
    q = os.path.join(cell.qmaster_spool, "cqueues", "all.q")
    text = re.sub(r"(?m)^slots\s.*$", "slots                 1", open(q).read())
    with open(q, "w") as f:
        f.write(text)


@pytest.fixture
def three():
    c = Cell(host="master")
    c.minisge("init", "--hostname", "master", "--slots", "1")
    _allhosts(c)
    _set_global(c, load_report_time="00:00:01", max_unheard="00:00:02", reschedule_unknown="00:00:02")
    c.spawn("qmaster", "--hostname", "master", log="qmaster.log")
    c.wait_for(lambda: os.path.exists(os.path.join(c.qmaster_spool, "qmaster.pid")), what="qmaster")
    c.execds = {}
    for h in HOSTS:
        c.execds[h] = c.spawn("execd", "--hostname", h, "--qmaster", "127.0.0.1", log=f"execd-{h}.log")
    messages = os.path.join(c.qmaster_spool, "messages")
    for h in HOSTS:
        c.wait_for(lambda h=h: f"execd {h} connected" in open(messages).read(), what=f"execd {h}")
    try:
        yield c
    finally:
        c.cleanup()


def _qstat_f(cell: Cell) -> dict[str, tuple[str, list[str]]]:
    """queue instance -> (its states, the jobs listed under it)."""
    out: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in cell.run("qstat", "-f", "-u", "*").out.splitlines():
        parts = line.split()
        if parts and "@" in parts[0]:
            current = parts[0]
            out[current] = (parts[5] if len(parts) > 5 else "", [])
        elif parts and parts[0].isdigit() and current:
            out[current][1].append(parts[0])
    return out


def _host_of(cell: Cell, job: int) -> str | None:
    for qi, (_states, jobs) in _qstat_f(cell).items():
        if str(job) in jobs:
            return qi.split("@")[1]
    return None


def _running_on(cell: Cell, job: int) -> str | None:
    return cell.qstat_states().get(job) == "r" and _host_of(cell, job)


def _kill_host(cell: Cell, host: str) -> None:
    """SIGKILL the execd of ``host``, its shepherds and their jobs."""
    execd = cell.execds[host]
    execd.kill()
    execd.wait(WAIT)
    for job_dir in glob.glob(os.path.join(cell.root, "default", "spool", host, "active_jobs", "*")):
        for name in ("pid", "job_pid"):
            try:
                pid = int(open(os.path.join(job_dir, name)).read())
            except (OSError, ValueError):
                continue
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def test_rerunnable_job_of_an_unknown_host_is_rescheduled_the_other_stays(three):
    user = ensure_user("msgeuser1").pw_name
    rerun = three.submit("-r", "y", "-b", "y", "/bin/sleep", "600", user=user)
    x = three.wait_for(lambda: _running_on(three, rerun), what="the rerunnable job running")
    stays = three.submit("-b", "y", "/bin/sleep", "600", user=user)  # all.q has rerun FALSE
    y = three.wait_for(lambda: _running_on(three, stays), what="the other job running")
    (z,) = set(HOSTS) - {x, y}

    _kill_host(three, y)  # first: its time is up before x's
    three.wait_for(lambda: "u" in _qstat_f(three)[f"all.q@{y}"][0], what=f"all.q@{y} unknown")
    _kill_host(three, x)
    three.wait_for(lambda: "u" in _qstat_f(three)[f"all.q@{x}"][0], what=f"all.q@{x} unknown")

    # re-queued after reschedule_unknown (Rq), and run (Rr) on the host that is left
    three.wait_for(lambda: three.qstat_states().get(rerun) == "Rr" and _host_of(three, rerun) == z,
                   timeout=60, what="the rerun on the host left")
    rec = three.records_of(rerun)
    assert len(rec) == 1 and rec[0][1] == x and rec[0][11] == "25"  # failed: accounted as rescheduled
    # the job that is not rerunnable stays on its unknown host, not accounted
    assert three.qstat_states()[stays] == "r" and _host_of(three, stays) == y
    assert three.records_of(stays) == []

    # x's execd comes back and reports the lost run (failed 19): not the end of the rerun on z
    three.execds[x] = three.spawn("execd", "--hostname", x, "--qmaster", "127.0.0.1", log=f"execd-{x}-2.log")
    old_run = os.path.join(three.root, "default", "spool", x, "active_jobs", f"{rerun}.1")
    three.wait_for(lambda: not os.path.exists(old_run), what="the old run's report acknowledged")
    assert three.qstat_states()[rerun] == "Rr" and _host_of(three, rerun) == z
    assert len(three.records_of(rerun)) == 1


def _connected(cell: Cell, host: str) -> int:
    return open(os.path.join(cell.qmaster_spool, "messages")).read().count(f"execd {host} connected")


def test_initial_state_applies_when_an_execd_starts_not_when_it_reconnects(three):
    # queue_conf(5) initial_state: "on start-up of the sge_execd(8) on the host"
    r = three.run("qconf", "-mattr", "queue", "initial_state", "disabled", "all.q")
    assert r.rc == 0, r
    assert _qstat_f(three)["all.q@node1"][0] == ""  # existing instances keep their state
    # a qmaster restart: the execds reconnect, nothing is disabled again
    qm = three.procs[0]
    qm.terminate()
    qm.wait(WAIT)
    three.procs[0] = three.spawn("qmaster", "--hostname", "master", log="qmaster2.log")
    three.procs.pop()
    three.wait_for(lambda: all(_connected(three, h) == 2 for h in HOSTS), what="the execds reconnected")
    assert {qi: st for qi, (st, _jobs) in _qstat_f(three).items()} == {f"all.q@{h}": "" for h in HOSTS}
    # an execd (re)started: its instances get the initial state
    three.execds["node1"].terminate()
    three.execds["node1"].wait(WAIT)
    three.execds["node1"] = three.spawn("execd", "--hostname", "node1", "--qmaster", "127.0.0.1",
                                        log="execd-node1-2.log")
    three.wait_for(lambda: _connected(three, "node1") == 3, what="execd node1 started again")
    states = {qi: st for qi, (st, _jobs) in _qstat_f(three).items()}
    assert states == {"all.q@node1": "d", "all.q@node2": "", "all.q@node3": ""}
