"""queue_conf(5) initial_state, with a real cell: qconf -Aq, qstat -f, qmod -e."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.root


def _queue_file(cell, name: str, initial_state: str, hostlist: str = "testhost") -> str:
    text = cell.run("qconf", "-sq", "all.q").out
    lines = []
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        if key == "qname":
            line = f"qname                 {name}"
        elif key == "hostlist":
            line = f"hostlist              {hostlist}"
        elif key == "initial_state":
            line = f"initial_state         {initial_state}"
        lines.append(line)
    path = os.path.join(cell.dir, f"{name}.conf")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _qi_states(cell, qi: str) -> str | None:
    for line in cell.run("qstat", "-f").out.splitlines():
        parts = line.split()
        if parts and parts[0] == qi:
            return parts[5] if len(parts) > 5 else ""
    return None


def test_a_queue_added_disabled_shows_d_gets_no_job_until_enabled(cell, users):
    user = users[0].pw_name
    r = cell.run("qconf", "-Aq", _queue_file(cell, "init.q", "disabled"))
    assert r.rc == 0, r
    assert _qi_states(cell, "init.q@testhost") == "d"
    assert _qi_states(cell, "all.q@testhost") == ""
    job = cell.submit("-q", "init.q", "-b", "y", "/bin/true", user=user)
    cell.wait_for(lambda: 'queue instance "init.q@testhost" dropped because it is disabled'
                  in cell.run("qstat", "-j", str(job)).out, what="the pending reason")
    assert cell.qstat_states()[job] == "qw"
    r = cell.run("qmod", "-e", "init.q")
    assert r.rc == 0, r
    assert _qi_states(cell, "init.q@testhost") == ""
    rec = cell.wait_records(job)
    assert rec[0][0] == "init.q"


def test_an_enabled_instance_stays_enabled_across_a_restart(cell):
    cell.run("qconf", "-Aq", _queue_file(cell, "init.q", "disabled"))
    assert cell.run("qmod", "-e", "init.q@testhost").rc == 0
    cell.stop()
    cell.start()
    assert _qi_states(cell, "init.q@testhost") == ""


def test_enabled_and_default_leave_a_new_instance_enabled(cell):
    cell.run("qconf", "-Aq", _queue_file(cell, "on.q", "enabled"))
    cell.run("qconf", "-Aq", _queue_file(cell, "dflt.q", "default"))
    assert _qi_states(cell, "on.q@testhost") == ""
    assert _qi_states(cell, "dflt.q@testhost") == ""


def test_a_host_added_to_the_hostlist_gets_the_initial_state(cell):
    cell.run("qconf", "-Aq", _queue_file(cell, "init.q", "disabled", hostlist="NONE"))
    assert _qi_states(cell, "init.q@testhost") is None
    r = cell.run("qconf", "-aattr", "queue", "hostlist", "testhost", "init.q")
    assert r.rc == 0, r
    assert _qi_states(cell, "init.q@testhost") == "d"
    # taken out and added again: a new instance, starting from initial_state, not from the old one's d
    assert cell.run("qconf", "-dattr", "queue", "hostlist", "testhost", "init.q").rc == 0
    assert cell.run("qconf", "-mattr", "queue", "initial_state", "default", "init.q").rc == 0
    assert cell.run("qconf", "-aattr", "queue", "hostlist", "testhost", "init.q").rc == 0
    assert _qi_states(cell, "init.q@testhost") == ""
