"""The scheduler as a pure function: snapshot in, plan out (no daemon)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minisge import scheduler
from minisge.config_state import ComplexIndex
from minisge.formats import complex as complex_fmt
from minisge.scheduler import PE, HostInfo, PendingTask, QInstance, Snapshot

CX = ComplexIndex(complex_fmt.default_complex())


def qi(cq="all.q", host="h1", slots=2, used=0, seq=0, **kw) -> QInstance:
    values = {"qname": cq, "hostname": host, "h_rt": "INFINITY"}
    values.update(kw.pop("values", {}))
    return QInstance(cq, host, seq, slots, used, values=values, **kw)


def task(job=1, tid=1, **kw) -> PendingTask:
    return PendingTask(job_id=job, task_id=tid, owner="u", **kw)


def snap(qis, pending, hosts=None, **kw) -> Snapshot:
    hosts = hosts or {q.host: HostInfo(q.host) for q in qis}
    return Snapshot(qinstances=tuple(qis), hosts=hosts, pending=tuple(pending), complexes=CX,
                    queue_sort_method="seqno", **kw)


def placed(plan):
    return {(d.job_id, d.task_id): d.granted for d in plan.dispatches}


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
    hosts = {"h1": HostInfo("h1", load={"arch": "lx-amd64"}), "h2": HostInfo("h2", load={"arch": "lx-arm64"})}
    qis = [qi(host="h1"), qi(host="h2")]
    plan = scheduler.schedule(snap(qis, [task(requests={"arch": "*arm*"})], hosts=hosts))
    assert placed(plan)[(1, 1)][0][1] == "h2"


def test_consumable_per_slot_is_booked_within_a_pass():
    cx = complex_fmt.parse(complex_fmt.DEFAULT_COMPLEX_TEXT + "lic lic INT <= YES YES 0 0\n")
    hosts = {"h1": HostInfo("h1", values={"lic": "3"})}
    s = Snapshot(qinstances=(qi(slots=10),), hosts=hosts, complexes=ComplexIndex(cx), queue_sort_method="seqno",
                 pending=tuple(task(job=j, requests={"lic": "2"}) for j in (1, 2)))
    plan = scheduler.schedule(s)
    assert [d.job_id for d in plan.dispatches] == [1]  # 2 of 3 licenses taken, 2 more do not fit


def test_pe_slots_puts_all_slots_on_one_host():
    qis = [qi(host="h1", slots=2, pe_list=("smp",)), qi(host="h2", slots=4, pe_list=("smp",))]
    s = snap(qis, [task(pe=("smp", ((4, 4),)))], pes={"smp": PE("smp", 999, 0)})
    plan = scheduler.schedule(s)
    assert placed(plan)[(1, 1)] == [("all.q", "h2", 4)]
    assert plan.dispatches[0].pe == "smp"


def test_pe_slot_cap_and_pe_list():
    qis = [qi(slots=8, pe_list=("smp",))]
    assert not scheduler.schedule(snap(qis, [task(pe=("smp", ((4, 4),)))], pes={"smp": PE("smp", 2, 0)})).dispatches
    assert not scheduler.schedule(snap([qi(slots=8)], [task(pe=("smp", ((1, 1),)))], pes={"smp": PE("smp", 9, 0)})).dispatches


@settings(max_examples=100, deadline=None)
@given(
    slots=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    used=st.lists(st.integers(0, 4), min_size=4, max_size=4),
    ntasks=st.integers(0, 20),
)
def test_no_dispatch_ever_exceeds_a_queue_instances_slots(slots, used, ntasks):
    qis = [qi(host=f"h{i}", slots=s, used=min(u, s)) for i, (s, u) in enumerate(zip(slots, used))]
    plan = scheduler.schedule(snap(qis, [task(job=j) for j in range(1, ntasks + 1)]))
    booked = {}
    for d in plan.dispatches:
        for cq, host, n in d.granted:
            booked[host] = booked.get(host, 0) + n
    for q in qis:
        assert q.used + booked.get(q.host, 0) <= q.slots
    assert len(plan.dispatches) == min(ntasks, sum(q.slots - q.used for q in qis))


def test_queue_sort_method_load_prefers_the_least_loaded_host_by_the_load_formula():
    from minisge.formats import sched_conf

    hosts = {"h1": HostInfo("h1", load={"np_load_avg": "0.90"}), "h2": HostInfo("h2", load={"np_load_avg": "0.10"}),
             "h3": HostInfo("h3", load={})}
    qis = [qi(host="h1"), qi(host="h2"), qi(host="h3")]

    def load_of(h):
        return sched_conf.evaluate_load_formula("np_load_avg", {k: float(v) for k, v in h.load.items()})

    s = Snapshot(qinstances=tuple(qis), hosts=hosts, pending=(task(), task(job=2), task(job=3)), complexes=CX,
                 queue_sort_method="load", load_of=load_of)
    order = [d.granted[0][1] for d in scheduler.schedule(s).dispatches]
    assert order == ["h2", "h2", "h1"]  # h3 reported no load: 9999, last
