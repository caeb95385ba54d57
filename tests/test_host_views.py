"""What the qmaster tells qhost and qselect (minisge.qmaster.host_views), without a daemon."""

from __future__ import annotations

import attrs
import pytest
from qmaster_harness import small_qmaster

from minisge.execd.load import Topology, load_values
from minisge.qmaster import host_views
from minisge.qmaster.config_state import RequestError

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}
MEMINFO = "MemTotal: 24684084 kB\nMemAvailable: 24379344 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"


@pytest.fixture
def qm(mem_tmp_path):
    values = load_values("0.5 0.25 0.125 1/1 1", MEMINFO, 2, "lx-amd64", Topology([(0, 0), (0, 1)]), 3.0)
    return small_qmaster(mem_tmp_path / "root", execd_up=True, load=dict(values, np_load_avg="0.000000"))


def test_the_global_host_comes_first_and_reports_nothing(qm):
    hosts = host_views.qhost(qm, {}, 0)["hosts"]
    assert [h["name"] for h in hosts] == ["global", "h1"]
    assert set(hosts[0]["values"].values()) == {None}
    assert hosts[1]["values"]["mem_total"] == "24105.550781M"
    assert "resources" not in hosts[1] and "queues" not in hosts[1]


def test_an_unresolvable_host_is_named_back(qm):
    assert host_views.qhost(qm, {"hosts": ["no.such.host.invalid"]}, 0)["unknown_host"] == \
        'can\'t resolve hostname "no.such.host.invalid"'


def test_l_with_an_unknown_resource_is_refused_in_8_1_9s_words(qm):
    with pytest.raises(RequestError, match='error: unknown resource "nosuch"'):
        host_views.qhost(qm, {"requests": ["nosuch=1"]}, 0)


def test_l_keeps_the_hosts_whose_load_satisfies_the_request(qm):
    names = [h["name"] for h in host_views.qhost(qm, {"requests": ["mem_total=20G"]}, 0)["hosts"]]
    assert names == ["h1"]
    assert host_views.qhost(qm, {"requests": ["mem_total=40G"]}, 0)["hosts"] == []


def test_F_prints_load_values_by_type_and_a_host_consumable_less_what_jobs_hold(qm):
    eh = qm.config.exec_hosts["h1"]
    qm.config.exec_hosts["h1"] = attrs.evolve(eh, complex_values=(("slots", "4"),))
    qm.submit(dict(REQ), 0, 0)
    qm.schedule()
    rows = host_views.qhost(qm, {"resources": []}, 0)["hosts"][1]["resources"]
    assert ["hl", "mem_total", "23.541G"] in rows
    assert ["hl", "num_proc", "2.000000"] in rows  # qhost prints INT with %f
    assert ["hl", "cpu", "3.000000"] in rows
    assert ["hc", "slots", "3.000000"] in rows
    named = host_views.qhost(qm, {"resources": ["mt", "cpu"]}, 0)["hosts"][1]["resources"]
    assert [r[1] for r in named] == ["mem_total", "cpu"]  # by name or shortcut


def test_j_gives_the_running_task_under_its_queue_instance(qm):
    jid = qm.submit(dict(REQ), 0, 0)["job_id"]
    qm.schedule()
    host = host_views.qhost(qm, {"jobs": True, "queues": True}, 0)["hosts"][1]
    (queue,) = host["queues"]
    assert (queue["name"], queue["qinstance"], queue["used"], queue["total"]) == ("all.q", "all.q@h1", 1, 2)
    (job,) = queue["jobs"]
    assert (job["job_number"], job["state"], job["master"], job["slots"]) == (jid, "r", True, 1)
    assert job["task_number"] is None  # no array job
    assert host_views.qhost(qm, {"jobs": True, "users": ["nobody*"]}, 0)["hosts"][1]["queues"][0]["jobs"] == []


def test_qselect_selects_by_queue_state_pe_and_request(qm):
    assert host_views.qselect(qm, {}, 0) == {"queues": ["all.q@h1"]}
    assert host_views.qselect(qm, {"queues": ["other.q"]}, 0) == {"queues": []}
    assert host_views.qselect(qm, {"states": "d"}, 0) == {"queues": []}
    assert host_views.qselect(qm, {"pes": ["smp"]}, 0) == {"queues": ["all.q@h1"]}
    assert host_views.qselect(qm, {"requests": ["slots=2"]}, 0) == {"queues": ["all.q@h1"]}
    assert host_views.qselect(qm, {"requests": ["slots=3"]}, 0) == {"queues": []}
    assert host_views.qselect(qm, {"requests": ["nosuch=1"]}, 0) == {"queues": []}
    assert host_views.qselect(qm, {"users": ["root"]}, 0) == {"queues": ["all.q@h1"]}
    with pytest.raises(RequestError, match="no such parallel environment"):
        host_views.qselect(qm, {"pes": ["nosuchpe"]}, 0)
