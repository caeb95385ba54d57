"""Load control on the qmaster (minisge.qmaster.load_control.LoadControl):
one home for load reports, the decision it keeps, its suspend_interval timer."""

from __future__ import annotations

import attrs
import pytest
import trio

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.load_control import alarms_changed, valid_load_values
from minisge.qmaster.qmaster import Qmaster
from minisge.scheduler.load_alarms import Decision

LOW = {"np_load_avg": "0.10", "load_avg": "0.10"}
HIGH = {"np_load_avg": "9.00", "load_avg": "9.00"}  # over all.q's load_thresholds np_load_avg=1.75


@pytest.fixture
def qm(tmp_path):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=2, env={})
    now = [1000.0]
    q = Qmaster(cell, "h1", clock=lambda: now[0])
    q.load()
    q.execds["h1"] = object()
    return q


def test_load_values_are_names_and_texts():
    assert valid_load_values({"a": "1"}) == {"a": "1"}
    assert valid_load_values({"a": 1}) is None
    assert valid_load_values({1: "a"}) is None
    assert valid_load_values(["a"]) is None
    assert valid_load_values(None) is None


def test_an_alarm_change_is_a_crossing_either_way():
    quiet, alarmed = Decision(), Decision(alarm={"all.q@h1": "x"})
    assert alarms_changed(None, quiet)
    assert alarms_changed(quiet, alarmed) and alarms_changed(alarmed, quiet)
    assert not alarms_changed(alarmed, Decision(alarm={"all.q@h1": "y"}))
    assert alarms_changed(quiet, Decision(suspend_alarm={"all.q@h1": "x"}))


def test_a_bad_report_is_refused_and_changes_nothing(qm):
    assert qm.load_control.store_report("h1", LOW)
    assert not qm.load_control.store_report("h1", {"np_load_avg": 9})
    assert not qm.load_control.store_report("h1", "9")
    assert qm.config.load_values["h1"] == LOW


async def test_a_report_wakes_the_scheduler_only_when_an_alarm_changes(qm):
    qm.load_control.store_report("h1", LOW)
    await qm.wait_changed()  # the first decision: woken
    qm.schedule()  # the pass keeps its decision
    assert qm.load_control.decision is not None and not qm.load_control.decision.alarm
    qm.load_control.store_report("h1", dict(LOW, load_avg="0.20"))
    assert not qm.wake_scheduler.is_set()
    qm.load_control.store_report("h1", HIGH)
    assert qm.wake_scheduler.is_set()
    assert qm.config.load_values["h1"] == HIGH


def test_the_pass_marks_alarmed_instances_and_qstat_sees_them(qm):
    qm.load_control.store_report("h1", HIGH)
    qm.submit({"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}, 0, 0)
    assert qm.schedule() == []  # all.q@h1 is in alarm: nothing starts
    assert "all.q@h1" in qm.load_control.decision.alarm
    conf = qm.config.cqueues["all.q"]
    assert "a" in qm.load_control.qstat_view(conf, "h1")


async def test_the_suspend_interval_timer_wakes_the_scheduler_when_due(qm, autojump_clock):
    qm.load_control.decision = Decision(next_due=qm.clock() + 60)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(qm.load_control.run_timer)
        await qm.wait_changed()
        nursery.cancel_scope.cancel()
    assert trio.current_time() - start >= 60  # the mock clock's time, not the wall's


async def test_the_timer_waits_while_nothing_is_due(qm, autojump_clock):
    async with trio.open_nursery() as nursery:
        nursery.start_soon(qm.load_control.run_timer)
        await trio.sleep(3600)
        assert not qm.wake_scheduler.is_set()
        nursery.cancel_scope.cancel()


def test_load_scaling_scales_the_values_thresholds_and_qstat_see(qm):
    """host_conf(5) load_scaling: np_load_avg 1.00 scaled by 2 crosses all.q's
    np_load_avg=1.75; qstat -f/-F show the scaled values, qconf -se the reported ones."""
    eh = qm.config.exec_hosts["h1"]
    qm.config.exec_hosts["h1"] = attrs.evolve(eh, load_scaling=(("np_load_avg", 2.0), ("load_avg", 0.5)))
    qm.load_control.store_report("h1", {"np_load_avg": "1.000000", "load_avg": "7.438000", "arch": "lx-amd64"})
    assert qm.config.scaled_load("h1") == {"np_load_avg": "2.000000", "load_avg": "3.719000", "arch": "lx-amd64"}
    assert qm.config.load_values["h1"]["np_load_avg"] == "1.000000"  # what was reported stays
    qm.submit({"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}, 0, 0)
    assert qm.schedule() == []
    assert "all.q@h1" in qm.load_control.decision.alarm
    assert "a" in qm.load_control.qstat_view(qm.config.cqueues["all.q"], "h1")
    qm.config.exec_hosts["h1"] = attrs.evolve(eh, load_scaling=(("np_load_avg", 1.0),))
    assert qm.schedule() != []


def test_the_load_sort_reads_each_new_load_report_and_formula(qm):
    """A host's load_formula value is kept between passes (ConfigState._load_of)
    only while its load report and the formula are the same."""
    def value() -> float:
        snap = qm.config.snapshot(qm.jobs, qm.execds)
        assert snap.load_of is not None
        return snap.load_of(snap.hosts["h1"])

    qm.config.load_values["h1"] = dict(LOW)
    assert value() == pytest.approx(0.10)
    assert value() == pytest.approx(0.10)
    qm.config.load_values["h1"] = dict(HIGH)
    assert value() == pytest.approx(9.0)
    qm.config.sched_conf = attrs.evolve(qm.config.sched_conf, load_formula="np_load_avg+load_avg*2")
    assert value() == pytest.approx(27.0)
    qm.config.load_values["h1"] = {"load_avg": "1.00"}  # no np_load_avg: sorts last, as 9999
    assert value() == 9999
