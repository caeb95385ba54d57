"""The scheduler's global messages ("scheduling info:" of qstat -j) come from
the pass's plan, stored on the qmaster beside the pending reasons: on a real
spool, the qmaster object without a daemon."""

from __future__ import annotations

import logging
import os
import re

import attrs
import pytest
from qmaster_harness import small_qmaster

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats.sched_conf import schedd_job_info_lists
from minisge.qmaster import views
from minisge.qmaster.qmaster import Qmaster
from minisge.scheduler import schedd_message
from minisge.scheduler.queue_filter import ALL_DROPPED

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def qm(tmp_path):
    """A cell on h1 (all.q, 2 slots) whose execd is up."""
    return small_qmaster(tmp_path / "root", clock=lambda: 1_800_000_000.0, execd_up=True)


def detail(qm, job: int) -> tuple[list[str], list[str]]:
    reply = views.job_detail(qm, [str(job)], 0)
    return reply["global"], reply["reasons"][str(job)]


def test_the_view_shows_the_messages_of_the_last_pass(qm):
    jobs = [qm.submit(dict(REQ), 0, 0)["job_id"] for _ in range(3)]
    assert len(qm.schedule()) == 2
    assert qm.global_messages == ['queue instance "all.q@h1" dropped because it is full']  # filled by the pass
    assert detail(qm, jobs[2]) == (qm.global_messages, [])  # the job's own reason is the global one
    qm.schedule()  # the next pass finds it full from the start
    assert detail(qm, jobs[2])[0] == ['queue instance "all.q@h1" dropped because it is full', ALL_DROPPED]


def test_an_instance_in_error_and_disabled_is_temporarily_not_available(qm):
    """8.1.9 drops the instances in error (and suspended, unknown ...) before
    it looks for disabled ones: the view says what the pass says."""
    qm.config.add_qi_state("all.q@h1", "E")
    qm.config.add_qi_state("all.q@h1", "d")
    job = qm.submit(dict(REQ), 0, 0)["job_id"]
    assert qm.schedule() == []
    assert detail(qm, job) == (['queue instance "all.q@h1" dropped because it is temporarily not available',
                                ALL_DROPPED], [])


def test_no_message_while_no_job_is_pending(qm):
    qm.config.add_qi_state("all.q@h1", "d")
    job = qm.submit(dict(REQ, hold=True), 0, 0)["job_id"]
    qm.schedule()
    assert qm.global_messages  # the pass said it
    qm.jobs[job].pending = []
    # the pass's queue messages are not shown; with no message at all 8.1.9 says so
    # (conformance case qstat/j_running, captured from the peer)
    assert views.job_detail(qm, [str(job)], 0)["global"] == [views.NO_MESSAGES]


def test_a_pass_without_any_message_says_there_are_none(qm):
    """schedd_mes_obtain_package: no global and no job message -> "There are
    no messages available" (qstat -j of a running job, as 8.1.9 on the peer)."""
    job = qm.submit(dict(REQ), 0, 0)["job_id"]
    assert len(qm.schedule()) == 1
    assert detail(qm, job) == ([views.NO_MESSAGES], [])
    assert views.job_detail(qm, [], 0)["global"] == [views.NO_MESSAGES]  # qstat -j alone too


def test_a_job_message_of_any_job_is_a_message(qm):
    """A held job's "Job is in hold state" is one of the pass's messages: no
    "There are no messages available" for another job then."""
    running = qm.submit(dict(REQ), 0, 0)["job_id"]
    qm.submit(dict(REQ, hold=True), 0, 0)
    qm.schedule()
    assert detail(qm, running) == ([], [])


def _schedd_job_info(qm, value: str) -> None:
    qm.config.sched_conf = attrs.evolve(qm.config.sched_conf, schedd_job_info=value)


def _unplaceable(qm, arch: str) -> int:
    """A job that stays pending with a reason of its own (its -l arch is unknown)."""
    return qm.submit(dict(REQ, hard_resources={"arch": arch}), 0, 0)["job_id"]


def test_schedd_job_info_false_keeps_no_job_message(qm):
    """sched_conf(5) schedd_job_info false: the pass keeps no reason, no job
    gets its hold message, and the one global message says collecting is off
    (the peer: tests/golden/qstat_-j_JOBID.schedd_job_info_false)."""
    job = _unplaceable(qm, "nope")
    held = qm.submit(dict(REQ, hold=True), 0, 0)["job_id"]
    qm.config.add_qi_state("all.q@h1", "d")  # a global message the pass would give
    _schedd_job_info(qm, "false")
    qm.schedule()
    assert qm.pending_reasons == {}
    assert detail(qm, job) == ([schedd_message.TURNED_OFF], [])
    assert detail(qm, held) == ([schedd_message.TURNED_OFF], [])
    whole = views.job_detail(qm, [], 0)
    assert (whole["global"], whole["summary"]) == ([schedd_message.TURNED_OFF], [])
    _schedd_job_info(qm, "true")
    qm.schedule()
    assert detail(qm, held)[1] == ["Job is in hold state"]
    assert ALL_DROPPED in detail(qm, job)[0]  # the pass's global messages again


def test_schedd_job_info_job_list_keeps_the_listed_jobs_and_their_category(qm):
    """job_list N: N's reasons and those of the jobs of N's category (the peer:
    job_list 493 kept 494's reason, of the same requests, not 495's)."""
    listed, same, other = _unplaceable(qm, "nope"), _unplaceable(qm, "nope"), _unplaceable(qm, "other")
    held = qm.submit(dict(REQ, hold=True), 0, 0)["job_id"]
    _schedd_job_info(qm, f"job_list {listed}")
    qm.schedule()
    assert sorted(qm.pending_reasons) == [listed, same]
    note = schedd_message.NOT_EVERY_JOB
    reason = '(-l arch=nope) cannot run in queue "all.q@h1" because job requests unknown resource (arch)'
    assert detail(qm, listed) == ([note], [reason])
    assert detail(qm, same) == ([note], [reason])
    assert detail(qm, other) == ([note], [])
    assert detail(qm, held) == ([note], [])  # not listed: no hold message either
    assert views.job_detail(qm, [], 0)["summary"] == []
    _schedd_job_info(qm, f"job_list {other},{held}")
    qm.schedule()
    assert detail(qm, held) == ([note], ["Job is in hold state"])
    assert sorted(qm.pending_reasons) == [other]


def test_schedd_job_info_job_list_reads_ranges():
    lists = schedd_job_info_lists
    assert lists("true", 7) and not lists("false", 7)
    assert [j for j in range(1, 12) if lists("job_list 1,5-9:2 11", j)] == [1, 5, 7, 9, 11]
    assert schedd_message.global_message("true") is None
    assert schedd_message.global_message("job_list 3") == schedd_message.NOT_EVERY_JOB


def test_a_queue_domain_names_the_instances_on_the_hosts_of_a_host_group(qm):
    """qmod and the other queue commands read sge_types(5) wc_queue_list the scheduler's way."""
    assert qm.config.match_qinstances("all.q@@allhosts") == ["all.q@h1"]
    assert qm.config.match_qinstances("*@@none") == []
    assert qm.config.match_qinstances("all.q@H1") == ["all.q@h1"]


def test_the_qmaster_names_configuration_values_it_does_not_act_on(tmp_path, caplog):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=2, env={})
    conf = os.path.join(cell.common, "configuration")
    with open(conf, encoding="utf-8") as f:
        text = f.read()
    with open(conf, "w", encoding="utf-8") as f:
        f.write(re.sub(r"(?m)^gid_range .*$", "gid_range 65400-65500", text))
    caplog.set_level(logging.WARNING, logger="minisge.qmaster")
    Qmaster(cell, "h1", clock=lambda: 1_800_000_000.0).load()
    assert "configuration global: gid_range 65400-65500 is kept without effect by minisge (sge_conf(5))" \
        in caplog.text
