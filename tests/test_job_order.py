"""sge_priority(5): the order of a scheduling pass, and job categories."""

from __future__ import annotations

import functools
import time

import pytest
import scheduler_harness
from qmaster_harness import small_qmaster
from scheduler_harness import CX, dispatched, pe, qi, task

from minisge import scheduler
from minisge.formats import access_list
from minisge.qmaster.config_state import RequestError
from minisge.qmaster.job_facts import deadline_time
from minisge.scheduler import PendingTask, category_cache, dispatch, job_order
from minisge.scheduler.booking import Book
from minisge.scheduler.job_order import Figures, JobFacts, Weights

GE_DEFAULT = Weights(priority=0.0, urgency=0.5, ticket=0.5, waiting_time=0.278, deadline=3600000.0)


# ------------------------------------------------------------ the formula


def test_normalize_maps_a_range_onto_0_1_and_an_empty_range_onto_one_half():
    assert job_order.normalize(5, 0, 10) == 0.5
    assert job_order.normalize(10, 0, 10) == 1.0
    assert job_order.normalize(7, 7, 7) == 0.5


def test_posix_priority_is_normalized_over_0_to_2048():
    assert job_order.normalized_posix_priority(0) == 0.5
    assert job_order.normalized_posix_priority(1024) == 1.0
    assert job_order.normalized_posix_priority(-1023) == 1 / 2048


@pytest.mark.parametrize("setting, ranges, expected", [
    ("min", ((2, 8),), 2),
    ("max", ((2, 8),), 8),
    ("max", ((2, job_order.RANGE_INFINITY),), 16),  # open range: the PE's slots
    ("avg", ((2, 5),), 3),  # 3.5, truncated
    ("avg", ((2, job_order.RANGE_INFINITY),), 9),  # 2..16
    ("AVG", ((1, 2), (6, 6)), 3),
    ("4", ((2, 8),), 4),
])
def test_urgency_slots_decide_the_slots_a_pe_range_counts_for(setting, ranges, expected):
    assert job_order.pe_urgency_slots(setting, ranges, 16) == expected


def test_a_range_of_one_value_counts_that_value_whatever_urgency_slots_says():
    pes = {"mpi": pe(slots=16, urgency_slots="max")}
    assert job_order.job_slot_request(("mpi", ((4, 4),)), pes) == 4
    assert job_order.job_slot_request(("mpi", ((2, 4),)), pes) == 4
    assert job_order.job_slot_request(None, pes) == 1


def test_a_wildcard_pe_request_uses_the_first_matching_pe():
    pes = {"mpi_b": pe(slots=16, urgency_slots="max"), "mpi_a": pe(slots=16, urgency_slots="min")}
    assert job_order.job_slot_request(("mpi*", ((2, 4),)), pes) == 2
    assert job_order.job_slot_request(("none*", ((2, 4),)), pes) == 1


def test_resource_contribution_counts_urgency_times_value_times_slots():
    cx = {"slots": job_order.Urgency("slots", "INT", "1000"),
          "h_vmem": job_order.Urgency("h_vmem", "MEMORY", "0.000001"),
          "arch": job_order.Urgency("arch", "RESTRING", "5")}
    total, per = job_order.resource_contribution((("h_vmem", "1M"), ("arch", "lx*"), ("foo", "1")), 2, cx)
    assert per == (("h_vmem", "1M", pytest.approx(0.000001 * 1048576 * 2)), ("arch", "lx*", 5.0), ("foo", "1", 0.0))
    assert total == pytest.approx(2000 + 0.000001 * 1048576 * 2 + 5)


def test_the_golden_qstat_pri_figures_come_out():
    """The real Grid Engine's qstat -pri/-urg: two running jobs (waited 5 s
    until their start), two pending ones (waiting 4 s): 0.75 and 0.25."""
    facts = [JobFacts(2, 0, 100.0, 105.0), JobFacts(3, 0, 100.0, 105.0),
             JobFacts(4, 0, 105.0), JobFacts(5, 0, 105.0)]
    w = Weights(priority=0.0, urgency=0.5, ticket=0.5, waiting_time=1.0)
    f = job_order.figures(facts, CX, {}, w, now=109.0)
    assert [(f[j].urg, f[j].nurg, f[j].prio) for j in (2, 3, 4, 5)] == [
        (1005, 1.0, 0.75), (1005, 1.0, 0.75), (1004, 0.0, 0.25), (1004, 0.0, 0.25)]
    assert f[4].nppri == 0.5 and f[4].ntckts == 0.5  # no ticket policy: every job 0 tickets


def test_the_deadline_contribution_grows_as_the_deadline_nears_and_stays_once_passed():
    w = Weights(urgency=1.0, deadline=3600000.0)
    f = job_order.figures([JobFacts(1, deadline=8200.0), JobFacts(2)], CX, {}, w, now=1000.0)
    assert f[1].dlcontr == pytest.approx(3600000.0 / 7200) and f[2].dlcontr == 0.0
    f = job_order.figures([JobFacts(1, deadline=500.0)], CX, {}, w, now=1000.0)
    assert f[1].dlcontr == 3600000.0


def test_pending_jobs_go_by_priority_then_job_number_then_task_number():
    figs = {1: Figures(prio=0.2), 2: Figures(prio=0.9), 3: Figures(prio=0.2)}
    tasks = [task(3), task(1, 2), task(2), task(1)]
    assert [(t.job_id, t.task_id) for t in job_order.dispatch_order(tasks, figs)] == [(2, 1), (1, 1), (1, 2), (3, 1)]


def test_a_deadline_date_time_is_read_in_local_time():
    now = time.mktime((2026, 6, 1, 12, 0, 0, 0, 0, -1))
    assert deadline_time("06011300", now) == now + 3600
    assert deadline_time("2606011300.30", now) == now + 3630
    assert deadline_time("202606011300", now) == now + 3600
    assert deadline_time(None, now) == 0.0


# ------------------------------------------------------------ the pass


# a cell of one queue instance with one slot, the weights of a new cell, the pass at 1000 s
snap = functools.partial(scheduler_harness.snap, weights=GE_DEFAULT, now=1000.0)
ONE_SLOT = [qi(slots=1)]


def test_a_job_asking_for_more_slots_is_more_urgent_and_goes_first():
    pending = [task(1), task(2, pe=("smp", ((2, 2),)))]
    assert dispatched(scheduler.schedule(snap([qi(slots=2, pe_list=("smp",))], pending,
                                              pes=[pe("smp", "$pe_slots", 10)])))[0] == 2


def test_posix_priority_counts_only_with_weight_priority():
    pending = [task(1), task(2, priority=100)]
    assert dispatched(scheduler.schedule(snap(ONE_SLOT, pending)))[0] == 1  # weight_priority 0 (the default cell)
    assert dispatched(scheduler.schedule(snap(ONE_SLOT, pending, weights=Weights(priority=1.0))))[0] == 2


def test_a_job_that_waited_longer_goes_first():
    pending = [task(1, submission_time=900.0), task(2, submission_time=100.0)]
    assert dispatched(scheduler.schedule(snap(ONE_SLOT, pending)))[0] == 2


def test_a_deadline_job_goes_first():
    pending = [task(1), task(2, deadline=5000.0)]
    assert dispatched(scheduler.schedule(snap(ONE_SLOT, pending)))[0] == 2


def test_running_jobs_widen_the_urgency_range():
    pending = [task(1)]
    figs = scheduler.dispatch_figures(snap(ONE_SLOT, pending, running=(JobFacts(9, pe=("smp", ((4, 4),))),)))
    assert figs[1].nurg == 0.0 and figs[9].nurg == 1.0


def test_equal_priorities_go_by_job_number_and_tasks_in_order():
    pending = [task(2), task(1, 2), task(1)]
    plan = scheduler.schedule(snap([qi(slots=3)], pending))
    assert [(d.job_id, d.task_id) for d in plan.dispatches] == [(1, 1), (1, 2), (2, 1)]


# ------------------------------------------------------------ categories


def test_every_request_field_is_part_of_the_category_and_identity_fields_are_not():
    base = task(1)
    assert category_cache.job_category(base) == category_cache.job_category(
        task(7, 3, priority=5, submission_time=9.0, deadline=99.0))
    for change in (dict(owner="v"), dict(requests={"arch": "x"}), dict(queues=("a.q",)), dict(group="g"),
                   dict(project="p"), dict(pe=("smp", ((2, 2),)))):
        changed = PendingTask(1, 1, **dict(dict(owner="u"), **change))
        assert category_cache.job_category(base) != category_cache.job_category(changed), change
    assert category_cache.job_category(task(1, requests={"a": "1", "b": "2"})) == \
        category_cache.job_category(task(2, requests={"b": "2", "a": "1"}))


def test_an_unplaceable_category_is_tried_once_and_its_jobs_share_the_reasons(monkeypatch):
    tried = []
    real = dispatch.place_single

    def spy(a, book, ranked, reasons):
        tried.append(a.task.job_id)
        return real(a, book, ranked, reasons)

    monkeypatch.setattr(dispatch, "place_single", spy)
    pending = [task(j, queues=("none.q",)) for j in range(1, 101)] + [task(101)]
    plan = scheduler.schedule(snap(ONE_SLOT, pending))
    assert [d.job_id for d in plan.dispatches] == [101]
    assert tried.count(1) == 2 and set(tried) == {1, 101}  # the fast try, then once for the reasons
    assert plan.reasons[50] == plan.reasons[1] and plan.reasons[1]


def test_pending_tasks_are_the_same_as_made_by_their_constructor():
    made = scheduler.pending_tasks(dict(job_id=4, owner="u", requests={"a": "1"}, pe=("smp", ((2, 2),))), [1, 2])
    assert made == [PendingTask(4, t, "u", requests={"a": "1"}, pe=("smp", ((2, 2),))) for t in (1, 2)]
    with pytest.raises(TypeError):
        scheduler.pending_tasks(dict(job_id=4, owner="u", no_such_field=1), [1])


def test_a_trial_placement_changes_nothing_until_it_is_committed():
    book = Book(snap([qi(host="h1", slots=4), qi(host="h2", slots=4)], [task()]))
    trial = book.trial()
    trial.qi_used["all.q@h1"] += 2
    trial.host_consumed.setdefault("h1", {})["mem"] = 5.0
    trial.global_consumed["lic"] = trial.global_consumed.get("lic", 0.0) + 1
    assert book.qi_used["all.q@h1"] == 0 and "lic" not in book.global_consumed
    assert trial.qi_used["all.q@h2"] == 0 and trial.global_consumed["lic"] == 1
    book.commit(trial)
    assert book.qi_used == {"all.q@h1": 2, "all.q@h2": 0}
    assert book.host_consumed["h1"] == {"mem": 5.0} and book.global_consumed == {"lic": 1.0}


# ------------------------------------------------------------ -dl and deadlineusers


@pytest.fixture
def qm(mem_tmp_path):
    return small_qmaster(mem_tmp_path / "root", clock=lambda: 1_800_000_000.0)


REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


def test_only_deadline_users_may_submit_deadline_jobs(qm):
    with pytest.raises(RequestError) as e:
        qm.submit(dict(REQ, deadline="12312359"), 0, 0)
    assert str(e.value) == ('Unable to run job: job rejected: the user "root" is not a deadline initiation user'
                            "\nExiting.")
    assert not qm.jobs
    acl = qm.config.usersets["deadlineusers"]
    qm.config.usersets["deadlineusers"] = access_list.AccessList(acl.name, acl.type, acl.fshare, acl.oticket, ("root",))
    assert qm.submit(dict(REQ, deadline="12312359"), 0, 0)["job_id"] == 1


def test_the_snapshot_carries_the_time_the_weights_and_the_jobs_dates(qm):
    acl = qm.config.usersets["deadlineusers"]
    qm.config.usersets["deadlineusers"] = access_list.AccessList(acl.name, acl.type, acl.fshare, acl.oticket, ("root",))
    qm.submit(dict(REQ, deadline="203101010000"), 0, 0)
    s = qm.config.snapshot(qm.jobs, {"h1": None}, now=1_800_000_100.0)
    assert s.now == 1_800_000_100.0
    assert s.weights == Weights(priority=0.0, urgency=0.5, ticket=0.5, waiting_time=0.278, deadline=3600000.0)
    (t,) = s.pending
    assert t.submission_time == 1_800_000_000.0
    assert t.deadline == time.mktime((2031, 1, 1, 0, 0, 0, 0, 0, -1))


def test_qstat_shows_the_figures_the_scheduler_orders_by(qm):
    from minisge.qmaster import views

    qm.submit(dict(REQ), 0, 0)
    qm.submit(dict(REQ, pe={"name": "smp", "ranges": [[2, 2]]}, hard_resources={"h_vmem": "1G"}), 0, 0)
    qm.submit(dict(REQ, hold=True), 0, 0)
    now = 1_800_000_010.0
    shown = views.priorities(qm, now)
    used = scheduler.dispatch_figures(qm.config.snapshot(qm.jobs, {"h1": None}, now=now))
    for j in (1, 2):
        assert (shown[j]["prio"], shown[j]["urg"], shown[j]["nurg"]) == (used[j].prio, used[j].urg, used[j].nurg)
    assert shown[2]["prio"] > shown[1]["prio"]
    assert shown[3]["prio"] == 0.0 and 3 not in used  # held: not considered


def test_a_plain_qstat_listing_is_the_same_from_the_lean_reply(qm):
    from minisge.output import qstat_out
    from minisge.qmaster import views
    from minisge.qmaster.job import Grant, Task

    qm.submit(dict(REQ), 0, 0)
    qm.submit(dict(REQ, pe={"name": "smp", "ranges": [[2, 2]]}), 0, 0)
    qm.submit(dict(REQ, hold=True, array=[1, 5, 1]), 0, 0)
    qm.submit(dict(REQ, priority=-5), 0, 0)
    job = qm.jobs[1]
    job.pending = []
    job.add_task(Task(1, start_time=1_800_000_001.0, granted=[Grant("all.q", "h1", 1)]))
    full = views.job_list(qm, {"users": ["*"]}, 0)
    lean = views.job_list(qm, {"users": ["*"], "detail": False}, 0)
    assert "urg" in full["jobs"][1] and "urg" not in lean["jobs"][1]
    for opts in ({}, {"tasks": True}):
        assert qstat_out.format_job_list(lean["jobs"], lean["queues"], **opts) == \
            qstat_out.format_job_list(full["jobs"], full["queues"], **opts)
