"""sge_conf(5) max_unheard and reschedule_unknown (minisge.qmaster.unknown_hosts)."""

import signal
from types import SimpleNamespace

import pytest
import trio

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster import unknown_hosts as uh
from minisge.qmaster.job import RESCHEDULING, RUNNING, Grant, Task
from minisge.qmaster.qmaster import Qmaster


def test_unknown_after_the_longer_of_three_load_reports_and_max_unheard():
    assert uh.unheard_timeout(40, 300) == 300
    assert uh.unheard_timeout(2, 3) == 6


def test_reschedule_unknown_zero_never_reschedules():
    assert uh.reschedule_due(uh.LOST, 100.0, 40, 300, 0) is None


def test_due_after_the_host_is_unknown_plus_reschedule_unknown():
    assert uh.reschedule_due(uh.LOST, 100.0, 1, 2, 5) == 100.0 + 3 + 5


def test_at_qmaster_start_the_load_report_time_is_added():
    assert uh.reschedule_due(uh.BOOT, 100.0, 40, 300, 60) == 100.0 + 40 + 60


def _job(restart=None):
    return SimpleNamespace(spec={} if restart is None else {"restart": restart})


def _task(host="h1", state=RUNNING, deleted=False):
    return Task(1, state=state, granted=[Grant("all.q", host, 1)], delete_requested=deleted)


def test_pending_or_rescheduling_tasks_are_not_rescheduled_again():
    assert not uh.reschedulable(_job(True), _task(state=RESCHEDULING), "h1", "TRUE")


def test_rerunnable_running_task_on_the_host_is_rescheduled():
    assert uh.reschedulable(_job(True), _task(), "h1", "FALSE")
    assert uh.reschedulable(_job(), _task(), "h1", "TRUE")  # the queue's rerun


def test_not_rerunnable_stays():
    assert not uh.reschedulable(_job(), _task(), "h1", "FALSE")
    assert not uh.reschedulable(_job(False), _task(), "h1", "TRUE")  # -r n wins


def test_only_the_master_host_counts_and_deleted_tasks_stay():
    t = _task("h2")
    t.granted.insert(0, Grant("all.q", "h1", 1))
    assert uh.reschedulable(_job(True), t, "h1", "FALSE")
    assert not uh.reschedulable(_job(True), t, "h2", "FALSE")  # a slave host only
    assert not uh.reschedulable(_job(True), _task(deleted=True), "h1", "FALSE")


def test_report_of_a_host_the_task_left_is_stale():
    t = _task("h2")
    assert uh.stale_report(t, {"host": "h1"})
    assert not uh.stale_report(t, {"host": "h2"})
    assert not uh.stale_report(t, {})


def test_report_of_an_earlier_run_on_the_same_host_is_stale():
    # a lost run, re-queued and dispatched to the same host again before the
    # execd's repeated report of the old end arrived: that report ends nothing
    t = _task("h2")
    t.start_time = 200.5
    assert uh.stale_report(t, {"host": "h2", "dispatched": 100.25})
    assert not uh.stale_report(t, {"host": "h2", "dispatched": 200.5})
    assert not uh.stale_report(t, {"host": "h2"})  # an execd of before the run identity


# ---------------------------------------------------------------- UnknownHosts on a qmaster
def make_qmaster(tmp_path, clock) -> Qmaster:
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=2, env={})
    q = Qmaster(cell, "h1", clock=clock)
    q.load()
    q.config.cell_owner_only = False
    q.execds["h1"] = object()
    q.config.load_values["h1"] = {"np_load_avg": "0.00", "load_avg": "0.00"}
    conf = q.config.global_conf
    for attr, value in (("load_report_time", "00:00:01"), ("max_unheard", "00:00:02"),
                        ("reschedule_unknown", "00:00:05")):
        conf = conf.with_value(attr, value)
    q.config.global_conf = conf
    return q


@pytest.fixture
def qm(tmp_path):
    return make_qmaster(tmp_path, lambda: 1000.0)


def running_task(qm, **req):
    jid = qm.submit(dict({"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"},
                         **req), 0, 0)["job_id"]
    (job, task), = qm.schedule()
    qm.flush()
    assert job.number == jid
    return job, task


def test_a_lost_host_is_due_after_the_unheard_time_and_reschedule_unknown(qm):
    qm.unknown_hosts.host_lost("h1")
    assert qm.unknown_hosts.unknown_since == {"h1": (uh.LOST, 1000.0)}
    assert qm.unknown_hosts.next_due() == 1000.0 + 3 + 5


def test_a_heard_host_is_known_again(qm):
    qm.unknown_hosts.host_lost("h1")
    qm.unknown_hosts.host_heard("h1")
    assert qm.unknown_hosts.unknown_since == {} and qm.unknown_hosts.next_due() is None


def test_rerunnable_tasks_of_a_host_whose_time_is_up_are_rescheduled_once(qm):
    job, task = running_task(qm, restart=True)
    stays, _ = running_task(qm)  # not rerunnable: stays as it is
    del qm.execds["h1"]
    qm.unknown_hosts.host_lost("h1")
    qm.unknown_hosts.reschedule_due_hosts(1007.0)
    assert 1 in job.tasks  # not yet
    qm.unknown_hosts.reschedule_due_hosts(1008.0)
    assert job.pending == [1] and job.restarted_pending == {1: 1} and not job.tasks
    assert 1 in stays.tasks
    assert qm.unknown_hosts.rescheduled == {"h1": {(job.number, 1)}}
    assert qm.unknown_hosts.unknown_since == {}  # once per loss
    failed = [ln.split(":")[11] for ln in open(qm.cell.accounting) if not ln.startswith("#")]
    assert failed == ["25"]


def test_an_execd_back_with_a_rescheduled_task_is_told_to_kill_it(qm):
    job, _task = running_task(qm, restart=True)
    del qm.execds["h1"]
    qm.unknown_hosts.host_lost("h1")
    qm.unknown_hosts.reschedule_due_hosts(1008.0)
    qm.outbox.take()
    qm.unknown_hosts.host_heard("h1", known=[(job.number, 1)])
    (host, msg), = qm.outbox.take()
    assert host == "h1" and (msg["op"], msg["job_id"], msg["task_id"]) == ("terminate", job.number, 1)
    assert msg["method"] == {"signal": signal.SIGKILL}
    assert qm.unknown_hosts.rescheduled == {}


def test_at_a_qmaster_start_hosts_with_running_tasks_are_unknown(qm):
    running_task(qm)
    del qm.execds["h1"]
    qm.unknown_hosts.hosts_unknown_at_boot()
    assert qm.unknown_hosts.unknown_since == {"h1": (uh.BOOT, qm.boot_time)}
    assert qm.unknown_hosts.next_due() == qm.boot_time + 1 + 5


async def test_the_timer_reschedules_when_the_time_is_up(tmp_path, autojump_clock):
    qm = make_qmaster(tmp_path, trio.current_time)
    job, _task = running_task(qm, restart=True)
    del qm.execds["h1"]
    await qm.wait_changed()  # the submission's
    async with trio.open_nursery() as nursery:
        nursery.start_soon(qm.unknown_hosts.run_timer)
        await trio.sleep(1)
        qm.unknown_hosts.host_lost("h1")
        lost_at = trio.current_time()
        await qm.wait_changed()  # the reschedule's
        nursery.cancel_scope.cancel()
    assert job.pending == [1] and trio.current_time() - lost_at >= 3 + 5
