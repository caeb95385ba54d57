"""qstat -l / -U selection on the qmaster (minisge.qmaster.qstat_select),
on a real cell's configuration: Grid Engine 8.1.9's select_by_resource_list,
select_by_queue_user_list and filter_jobs."""

from __future__ import annotations

import attrs
import pytest
from qmaster_harness import small_qmaster

from minisge.formats import access_list, project
from minisge.qmaster.job import Job
from minisge.qmaster.qstat_select import Selection, UnknownResource, parse_requests


@pytest.fixture
def qm(tmp_path):
    q = small_qmaster(tmp_path / "root", clock=lambda: 1000.0, open_to_all=False)
    q.config.set_load_values("h1", {"arch": "lx-amd64", "num_proc": "2", "mem_free": "20G", "np_load_avg": "0.1"})
    return q


def names(sel: Selection) -> list[str]:
    return [n for _c, _h, n in sel.instances]


def job(**spec) -> Job:
    return Job(number=7, name="x", owner="u", uid=1000, group="g", gid=1000, submission_time=0.0,
               spec={"job_name": "x", **spec}, pending=[1])


def test_requests_are_name_value_pairs():
    assert parse_requests(["arch=lx-amd64", "slots=2", "fast"]) == {"arch": "lx-amd64", "slots": "2",
                                                                   "fast": "TRUE"}


def test_l_reads_fixed_values_and_static_load_values_only(qm):
    assert names(Selection(qm.config, {"arch": "lx-amd64"}, [])) == ["all.q@h1"]
    assert names(Selection(qm.config, {"arch": "foo"}, [])) == []
    assert names(Selection(qm.config, {"hostname": "h1", "qname": "all.q"}, [])) == ["all.q@h1"]
    assert names(Selection(qm.config, {"slots": "2"}, [])) == ["all.q@h1"]
    assert names(Selection(qm.config, {"slots": "3"}, [])) == []
    assert names(Selection(qm.config, {"mem_free": "1G"}, [])) == []  # a changing load value: 8.1.9 too
    with pytest.raises(UnknownResource):
        Selection(qm.config, {"nosuch": "1"}, [])


def test_U_needs_every_user_named_to_have_access(qm):
    cfg = qm.config
    cfg.usersets["banned"] = access_list.AccessList(name="banned", entries=("mallory", "@evil"))
    cfg.exec_hosts["h1"] = attrs.evolve(cfg.exec_hosts["h1"], xuser_lists=("banned",))
    assert names(Selection(cfg, {}, ["alice"])) == ["all.q@h1"]
    assert names(Selection(cfg, {}, ["alice", "mallory"])) == []
    assert names(Selection(cfg, {}, ["@evil"])) == []
    assert names(Selection(cfg, {}, ["@good"])) == ["all.q@h1"]


def test_U_counts_a_hosts_project_acl_against_users_it_does_not_admit(qm):
    cfg = qm.config
    cfg.usersets["staff"] = access_list.AccessList(name="staff", entries=("alice",))
    cfg.projects["p"] = project.Project(name="p", acl=("staff",))
    cfg.exec_hosts["h1"] = attrs.evolve(cfg.exec_hosts["h1"], projects=("p",))
    assert names(Selection(cfg, {}, ["alice"])) == ["all.q@h1"]
    assert names(Selection(cfg, {}, ["bob"])) == []
    cfg.exec_hosts["h1"] = attrs.evolve(cfg.exec_hosts["h1"], projects=(), xprojects=("p",))
    assert names(Selection(cfg, {}, ["alice"])) == []  # 8.1.9: an excluded project it admits counts against
    assert names(Selection(cfg, {}, ["bob"])) == ["all.q@h1"]


def test_a_pending_job_is_shown_when_it_could_run_in_an_instance_shown(qm):
    sel = Selection(qm.config, {"arch": "lx-amd64"}, [])
    assert sel.shows_pending(job())
    assert not sel.shows_pending(job(hard_resources={"arch": "foo"}))
    assert sel.shows_pending(job(hard_queues=["all.q"]))
    assert not sel.shows_pending(job(hard_queues=["other.q"]))
    assert not sel.shows_pending(job(project="p"))  # all.q names no project
