"""The qmaster's submission rules, on a real spool without a daemon."""

from __future__ import annotations

import pytest
import trio
from qmaster_harness import small_qmaster

from minisge.qmaster.config_state import RequestError
from minisge.qmaster.qmaster import Qmaster


@pytest.fixture
def qm(mem_tmp_path):
    return small_qmaster(mem_tmp_path / "root", open_to_all=False)


REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


def test_a_cell_run_by_an_ordinary_user_accepts_that_user_alone(qm):
    qm.config.cell_owner_only = True
    qm.admin_uid = 1234
    with pytest.raises(RequestError, match="accepts its jobs alone"):
        qm.submit(dict(REQ), 4321, 4321)
    assert qm.submit(dict(REQ), 1234, 1234)["job_id"] == 1


def test_min_uid_of_the_global_configuration_decides_who_may_submit(qm):
    qm.config.cell_owner_only = False
    qm.config.global_conf = qm.config.global_conf.with_value("min_uid", "1000")
    with pytest.raises(RequestError) as e:
        qm.submit(dict(REQ), 0, 0)
    assert str(e.value) == ("Unable to run job: job rejected: your user id 0 is lower than minimum user id 1000"
                            " of cluster configuration\nExiting.")


def test_a_submitted_job_is_spooled_before_the_answer_and_survives_a_reload(qm):
    qm.config.cell_owner_only = False
    jid = qm.submit(dict(REQ, hold=True), 0, 0)["job_id"]
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[jid].user_hold and again.last_job_id == jid


def test_job_ids_go_on_after_the_highest_in_the_spool_even_if_jobseqnum_is_behind(qm):
    qm.config.cell_owner_only = False
    for _ in range(3):
        qm.submit(dict(REQ, hold=True), 0, 0)
    qm.spool.write_jobseqnum(1)  # as if its last write had been lost
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.submit(dict(REQ), 0, 0)["job_id"] == 4


def test_a_task_its_execd_does_not_know_goes_back_to_pending_once(qm):
    qm.config.cell_owner_only = False
    qm.execds["h1"] = object()  # a registered execd (the snapshot needs the host up)
    jid = qm.submit(dict(REQ), 0, 0)["job_id"]
    started = qm.schedule()
    assert [(j.number, t.task_id) for j, t in started] == [(jid, 1)]
    qm.flush()
    qm.reconcile_host("h1", known={(jid, 1)})  # the execd runs it: nothing changes
    assert 1 in qm.jobs[jid].tasks
    qm.reconcile_host("h1", known=set())  # the start message was lost with a crash
    assert qm.jobs[jid].pending == [1] and not qm.jobs[jid].tasks
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[jid].pending == [1]


async def test_changes_gather_into_one_wakeup_of_the_scheduler(qm):
    assert not qm.wake_scheduler.is_set()  # the Qmaster's own event, before any daemon runs
    qm.changed()
    qm.changed()
    await qm.wait_changed()
    assert not qm.wake_scheduler.is_set()  # a new one, for the changes after this pass
    qm.changed()
    await qm.wait_changed()


async def test_a_change_during_the_pause_after_a_pass_waits_for_its_end(qm, autojump_clock):
    qm.changed()
    not_before = trio.current_time() + 5.0  # a pass that took 5 s (scheduling.py:PASS_PAUSE)
    await qm.wait_changed(not_before)
    assert trio.current_time() >= not_before
    assert not qm.wake_scheduler.is_set()


async def test_a_change_after_the_pause_is_taken_at_once(qm, autojump_clock):
    qm.changed()
    before = trio.current_time()
    await qm.wait_changed(before - 1.0)  # the pause is over
    assert trio.current_time() == before  # no timer ran
