"""minisge.offline: the qmaster's scheduler on a cell's spool, no daemon."""

from __future__ import annotations

import doctest

import pytest
from scheduler_harness import qi, snap, task

from minisge import offline, scheduler
from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.qmaster import Qmaster
from minisge.scheduler import job_order

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def cell_dir(mem_tmp_path):
    """A cell made as ``minisge init`` makes it (host node1, 2 slots), with
    jobs spooled through the qmaster object: a plain job, a 2-slot smp job
    (more urgent), a held job and a job for a queue that does not fit."""
    cell = Cell(str(mem_tmp_path / "root"))
    init_cell(cell, "node1", slots=2, env={})
    qm = Qmaster(cell, "node1")
    qm.load()
    qm.config.cell_owner_only = False
    qm.submit(dict(REQ), 0, 0)
    qm.submit(dict(REQ, pe={"name": "smp", "ranges": [[2, 2]]}), 0, 0)
    qm.submit(dict(REQ, hold=True), 0, 0)
    qm.submit(dict(REQ, hard_resources={"arch": "none"}), 0, 0)
    return cell.path


def test_the_plan_of_a_spooled_cell(cell_dir):
    p = offline.plan(cell_dir)
    assert [(d.job_id, d.task_id, d.granted, d.pe) for d in p.dispatches] == [(2, 1, [("all.q", "node1", 2)], "smp")]
    assert sorted(p.reasons) == [1, 4] and 3 not in p.reasons  # a held job is not considered
    text = offline.plan_text(p).splitlines()
    assert text[0] == "2.1 -> all.q@node1 (2)"
    assert all(line.startswith(("1: ", "4: ")) for line in text[1:])


def test_the_snapshot_is_the_one_the_qmaster_builds(cell_dir):
    qm = offline.load_qmaster(cell_dir)
    ours = offline.load_snapshot(cell_dir, now=5.0)
    daemons = qm.config.snapshot(qm.jobs, {"node1": None}, now=5.0)
    assert ours.pending == daemons.pending and ours.qinstances == daemons.qinstances
    assert ours.weights == daemons.weights and ours.now == 5.0


def test_hosts_not_up_get_nothing(cell_dir):
    p = offline.plan(cell_dir, hosts_up=[])
    assert p.dispatches == []  # no free slot anywhere: as the daemon, no task enters the pass


def test_python_m_minisge_offline_prints_the_plan(cell_dir, capsys):
    root, name = cell_dir.rsplit("/", 1)
    assert offline.main([root, name]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2.1 -> all.q@node1 (2)\n") and "\n1: " in out and "\n4: " in out


def test_a_missing_cell_is_an_error(tmp_path, capsys):
    assert offline.main([str(tmp_path), "nocell"]) == 1
    assert "no minisge cell" in capsys.readouterr().err
    assert offline.main(["-x"]) == 2


def test_the_plain_data_examples_run():
    for module in (offline, job_order):
        failed, tried = doctest.testmod(module)
        assert tried and not failed, module.__name__


def test_a_plain_snapshot_plans_without_a_cell():
    s = snap([qi(cq="all.q", host="n1", slots=1)], [task(1), task(2, priority=5)])
    assert offline.plan_text(scheduler.schedule(s)).splitlines()[0] == "2.1 -> all.q@n1 (1)"
