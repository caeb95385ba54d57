"""The scheduler as a pure function: snapshot in, plan out (no daemon)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from scheduler_harness import complexes, host, pe, placed, qi, snap, task

from minisge import scheduler
from minisge.formats import sched_conf


def test_a_task_goes_to_a_queue_instance_with_a_free_slot():
    plan = scheduler.schedule(snap([qi(slots=1, used=1), qi(host="h2")], [task()]))
    assert placed(plan) == {(1, 1): [("all.q", "h2", 1)]}


def test_no_more_tasks_start_than_there_are_slots():
    plan = scheduler.schedule(snap([qi(slots=2)], [task(job=j) for j in range(1, 6)]))
    assert len(plan.dispatches) == 2
    assert set(plan.reasons) == {3, 4, 5}


def test_seq_no_orders_queue_instances():
    plan = scheduler.schedule(snap([qi("b.q", seq=2), qi("a.q", seq=1)], [task()]))
    assert plan.dispatches[0].granted[0][0] == "a.q"


def test_hard_queue_request_with_wildcards_and_hosts():
    qis = [qi("all.q", "h1"), qi("fast.q", "h2")]
    assert placed(scheduler.schedule(snap(qis, [task(queues=("fast*",))])))[(1, 1)][0][:2] == ("fast.q", "h2")
    assert placed(scheduler.schedule(snap(qis, [task(queues=("*@h1",))])))[(1, 1)][0][:2] == ("all.q", "h1")
    assert scheduler.schedule(snap(qis, [task(queues=("none.q",))])).dispatches == []


def test_held_tasks_are_not_dispatched():
    assert scheduler.schedule(snap([qi()], [task(held=True)])).dispatches == []


def test_higher_priority_goes_first():
    plan = scheduler.schedule(snap([qi(slots=1)], [task(job=1), task(job=2, priority=10)]))
    assert [d.job_id for d in plan.dispatches] == [2]


def test_disabled_error_and_unknown_instances_take_nothing():
    for state in ("d", "E", "u", "a"):
        assert scheduler.schedule(snap([qi(states=state)], [task()])).dispatches == [], state


def test_request_against_queue_limit_h_rt():
    q = qi(values={"h_rt": "1:0:0"})
    assert scheduler.schedule(snap([q], [task(requests={"h_rt": "0:30:0"})])).dispatches
    assert not scheduler.schedule(snap([q], [task(requests={"h_rt": "2:0:0"})])).dispatches


def test_string_request_matches_host_load_value_with_wildcards():
    hosts = {"h1": host("h1", load={"arch": "lx-amd64"}), "h2": host("h2", load={"arch": "lx-arm64"})}
    qis = [qi(host="h1"), qi(host="h2")]
    plan = scheduler.schedule(snap(qis, [task(requests={"arch": "*arm*"})], hosts=hosts))
    assert placed(plan)[(1, 1)][0][1] == "h2"


def test_consumable_per_slot_is_booked_within_a_pass():
    hosts = {"h1": host("h1", values={"lic": "3"})}
    s = snap([qi(slots=10)], [task(job=j, requests={"lic": "2"}) for j in (1, 2)], hosts=hosts,
             complexes=complexes("lic lic INT <= YES YES 0 0\n"))
    plan = scheduler.schedule(s)
    assert [d.job_id for d in plan.dispatches] == [1]  # 2 of 3 licenses taken, 2 more do not fit


def test_pe_slots_puts_all_slots_on_one_host():
    qis = [qi(host="h1", slots=2, pe_list=("smp",)), qi(host="h2", slots=4, pe_list=("smp",))]
    s = snap(qis, [task(pe=("smp", ((4, 4),)))], pes=[pe("smp", "$pe_slots")])
    plan = scheduler.schedule(s)
    assert placed(plan)[(1, 1)] == [("all.q", "h2", 4)]
    assert plan.dispatches[0].pe == "smp"


def test_pe_slot_cap_and_pe_list():
    qis = [qi(slots=8, pe_list=("smp",))]
    assert not scheduler.schedule(snap(qis, [task(pe=("smp", ((4, 4),)))], pes=[pe("smp", "$pe_slots", 2)])).dispatches
    assert not scheduler.schedule(snap([qi(slots=8)], [task(pe=("smp", ((1, 1),)))],
                                       pes=[pe("smp", "$pe_slots", 9)])).dispatches


@given(
    slots=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    used=st.lists(st.integers(0, 4), min_size=4, max_size=4),
    ntasks=st.integers(0, 20),
)
def test_no_dispatch_ever_exceeds_a_queue_instances_slots(slots, used, ntasks):
    qis = [qi(host=f"h{i}", slots=s, used=min(u, s)) for i, (s, u) in enumerate(zip(slots, used, strict=False))]
    plan = scheduler.schedule(snap(qis, [task(job=j) for j in range(1, ntasks + 1)]))
    booked = {}
    for d in plan.dispatches:
        for _cq, h, n in d.granted:
            booked[h] = booked.get(h, 0) + n
    for q in qis:
        assert q.used + booked.get(q.host, 0) <= q.slots
    assert len(plan.dispatches) == min(ntasks, sum(q.slots - q.used for q in qis))


def test_queue_sort_method_load_prefers_the_least_loaded_host_by_the_load_formula():
    hosts = {"h1": host("h1", load={"np_load_avg": "0.90"}), "h2": host("h2", load={"np_load_avg": "0.10"}),
             "h3": host("h3", load={})}
    qis = [qi(host="h1", slots=2), qi(host="h2", slots=2), qi(host="h3", slots=2)]

    def load_of(h):
        return sched_conf.evaluate_load_formula("np_load_avg", {k: float(v) for k, v in h.load.items()})

    s = snap(qis, [task(), task(job=2), task(job=3)], hosts=hosts, queue_sort_method="load", load_of=load_of)
    order = [d.granted[0][1] for d in scheduler.schedule(s).dispatches]
    assert order == ["h2", "h2", "h1"]  # h3 reported no load: 9999, last


# ---------------------------------------------------------------- global messages (qstat -j "scheduling info:")


def test_the_pass_says_which_instances_it_drops_in_grid_engines_order():
    """sge_sched_thread.c: not available, suspend alarm, overload, calendar
    disabled, disabled, full -- each group in snapshot order."""
    qis = [qi("d.q", states="d"), qi("f.q", slots=2, used=2), qi("a.q", states="a", load_alarm="np_load_avg=2 >= 1.75"),
           qi("u.q", states="u"), qi("s.q", states="aA", load_alarm="x", suspend_alarm="np_load_avg=4 >= 3"),
           qi("D.q", states="D"), qi("e.q", states="Ed"), qi("ok.q")]
    plan = scheduler.schedule(snap(qis, [task()]))
    assert plan.global_messages == [
        'queue instance "u.q@h1" dropped because it is temporarily not available',
        'queue instance "e.q@h1" dropped because it is temporarily not available',
        'queue instance "s.q@h1" is in suspend alarm: np_load_avg=4 >= 3',
        'queue instance "a.q@h1" dropped because it is overloaded: np_load_avg=2 >= 1.75',
        'queue instance "D.q@h1" dropped because it is disabled',
        'queue instance "d.q@h1" dropped because it is disabled',
        'queue instance "f.q@h1" dropped because it is full',
    ]
    assert placed(plan) == {(1, 1): [("ok.q", "h1", 1)]}


def test_all_queues_are_dropped_when_none_is_left():
    plan = scheduler.schedule(snap([qi(slots=1, used=1), qi(host="h2", states="d")], [task()]))
    assert plan.global_messages == ['queue instance "all.q@h2" dropped because it is disabled',
                                    'queue instance "all.q@h1" dropped because it is full',
                                    "All queues dropped because of overload or full"]


def test_an_instance_a_dispatch_fills_up_is_dropped_as_full():
    plan = scheduler.schedule(snap([qi(slots=1), qi(host="h2", slots=2)], [task(job=j) for j in (1, 2, 3, 4)]))
    assert len(plan.dispatches) == 3
    assert plan.global_messages == ['queue instance "all.q@h1" dropped because it is full',
                                    'queue instance "all.q@h2" dropped because it is full']


def test_a_job_is_told_why_an_instance_in_alarm_is_dropped():
    plan = scheduler.schedule(snap([qi(states="a", load_alarm="np_load_avg=2 >= 1.75")], [task()]))
    assert plan.reasons[1] == ['queue instance "all.q@h1" dropped because it is overloaded: np_load_avg=2 >= 1.75']


def test_a_queue_domain_in_the_hard_queue_list():
    qis = [qi(host="h1"), qi(host="h2"), qi("b.q", host="h3")]
    groups = {"@big": frozenset({"h2"}), "@all": frozenset({"h1", "h2", "h3"})}
    for queues, want in ((("all.q@@big",), "all.q@h2"), (("none.q", "*@@all"), "all.q@h1"),
                         (("b*@@a*",), "b.q@h3"), (("b.q@H3",), "b.q@h3")):
        assert scheduler.schedule(snap(qis, [task(queues=queues)], hostgroups=groups)).dispatches[0].granted[0][:2] \
            == tuple(want.split("@")), queues
    plan = scheduler.schedule(snap(qis, [task(queues=("all.q@@none",))], hostgroups=groups))
    assert plan.reasons[1] == ['cannot run in queue "all.q@h1" because it is not contained in its hard queue list (-q)',
                               'cannot run in queue "all.q@h2" because it is not contained in its hard queue list (-q)',
                               'cannot run in queue "b.q" because it is not contained in its hard queue list (-q)']
