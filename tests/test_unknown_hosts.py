"""sge_conf(5) max_unheard and reschedule_unknown (minisge.unknown_hosts)."""

from types import SimpleNamespace

from minisge import unknown_hosts as uh
from minisge.job import RESCHEDULING, RUNNING, Grant, Task


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
