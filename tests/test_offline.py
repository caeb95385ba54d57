"""minisge.offline: the qmaster's scheduler on a cell's spool, no daemon."""

from __future__ import annotations

import doctest

import attrs
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
    assumed, *lines = capsys.readouterr().out.splitlines()
    assert assumed == ("assumed load values (a stopped cell has no load report): "
                       "node1 at their complex defaults (mem_free=0, np_load_avg=0, ...)")
    assert lines[0] == "2.1 -> all.q@node1 (2)"
    # every pending job explained, as qstat -j would: the held job 3 too
    full = 'queue instance "all.q@node1" dropped because it is full'
    assert f"1: {full}" in lines and f"4: {full}" in lines
    assert "3: Job is in hold state" in lines


MEASURED = {"arch": "lx-amd64", "num_proc": "2", "mem_total": "4096.000000M", "mem_free": "2048.000000M",
            "np_load_avg": "0.100000"}


@pytest.fixture
def memory_cell(mem_tmp_path):
    """host node1 with 4 slots; a job asks for 1G of mem_free, another for 3G."""
    cell = Cell(str(mem_tmp_path / "root"))
    init_cell(cell, "node1", slots=4, env={})
    qm = Qmaster(cell, "node1")
    qm.load()
    qm.config.cell_owner_only = False
    qm.submit(dict(REQ, hard_resources={"mem_free": "1G"}), 0, 0)
    qm.submit(dict(REQ, hard_resources={"mem_free": "3G"}), 0, 0)
    return cell.path


def test_this_host_offers_the_load_values_measured_here(memory_cell):
    qm = offline.load_qmaster(memory_cell)
    line = offline.assume_load_values(qm, ["node1"], here="node1", measured=MEASURED)
    assert line == "assumed load values (a stopped cell has no load report): node1 measured here now"
    p = scheduler.schedule(offline.snapshot_of(qm, now=5.0))
    assert [d.job_id for d in p.dispatches] == [1]
    assert p.reasons[2] == ['(-l mem_free=3G) cannot run at host "node1" because it offers only hl:mem_free=2.000G']


def test_another_host_offers_the_complex_defaults_and_never_an_unknown_resource(memory_cell):
    qm = offline.load_qmaster(memory_cell)
    line = offline.assume_load_values(qm, ["node1"], here="elsewhere", measured=MEASURED)
    assert line.endswith("node1 at their complex defaults (mem_free=0, np_load_avg=0, ...)")
    p = scheduler.schedule(offline.snapshot_of(qm, now=5.0))
    assert p.dispatches == []
    assert p.reasons[1] == ['(-l mem_free=1G) cannot run at host "node1" because it offers only hl:mem_free=0.000']
    assert qm.config.load_values["node1"] == {"num_proc": "0", "mem_total": "0", "mem_free": "0", "np_load_avg": "0"}


def test_a_hosts_complex_values_stand_in_for_the_load_value(memory_cell):
    qm = offline.load_qmaster(memory_cell)
    qm.config.exec_hosts["node1"] = attrs.evolve(qm.config.exec_hosts["node1"], complex_values=(("mem_free", "8G"),))
    offline.assume_load_values(qm, ["node1"], here="elsewhere", measured=MEASURED)
    assert "mem_free" not in qm.config.load_values["node1"]
    p = scheduler.schedule(offline.snapshot_of(qm, now=5.0))
    assert [d.job_id for d in p.dispatches] == [1, 2]


def test_a_cell_whose_queues_are_all_dropped_explains_its_pending_jobs(cell_dir):
    text = offline.report(cell_dir, now=5.0, hosts_up=[])
    # no host up: the queue instance is unknown (u), dropped for every job, and so no task enters the pass
    lines = text.splitlines()
    unavailable = 'queue instance "all.q@node1" dropped because it is temporarily not available'
    for job in (1, 2, 4):
        assert f"{job}: {unavailable}" in lines and f"{job}: All queues dropped because of overload or full" in lines


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
