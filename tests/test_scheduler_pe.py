"""sge_pe(5) allocation rules and the access lists of queue_conf(5) and
sge_pe(5), through the pure scheduler (snapshot in, plan out)."""

from __future__ import annotations

import dataclasses
import functools

import scheduler_harness
from hypothesis import given
from hypothesis import strategies as st
from scheduler_harness import grants, pe, plan, snap, task

from minisge import scheduler
from minisge.formats import access_list
from minisge.scheduler import pe_allocation

INF = 9999999
ACLS = {
    "staff": access_list.AccessList(name="staff", entries=("alice", "@wheel")),
    "banned": access_list.AccessList(name="banned", entries=("mallory",)),
}
qi = functools.partial(scheduler_harness.qi, pe_list=("mpi", "rr", "fill", "two", "smp"))  # every PE of this module


def run(qis, tasks, pes, **kw):
    return plan(qis, tasks, pes=pes, acls=ACLS, **kw)


def three_hosts(free=(2, 3, 1)):
    """Hosts h1..h3 (seq_no order) with 4 slots each and ``free`` of them free."""
    return [qi(host=f"h{i + 1}", slots=4, used=4 - f, seq=i) for i, f in enumerate(free)]


# --- allocation_rule ---------------------------------------------------------

def test_fill_up_fills_the_best_host_then_the_next():
    plan = run(three_hosts(), [task(pe=("mpi", ((4, 4),)))], [pe(rule="$fill_up")])
    assert grants(plan) == [("h1", 2), ("h2", 2)]


def test_round_robin_takes_one_slot_per_host_in_turn():
    plan = run(three_hosts(), [task(pe=("rr", ((5, 5),)))], [pe("rr", "$round_robin")])
    assert grants(plan) == [("h1", 2), ("h2", 2), ("h3", 1)]


def test_round_robin_starts_again_from_the_first_host():
    plan = run(three_hosts((3, 3, 3)), [task(pe=("rr", ((7, 7),)))], [pe("rr", "$round_robin")])
    assert grants(plan) == [("h1", 3), ("h2", 2), ("h3", 2)]


def test_integer_rule_puts_exactly_that_many_on_each_host():
    plan = run(three_hosts((1, 3, 2)), [task(pe=("two", ((4, 4),)))], [pe("two", "2")])
    assert grants(plan) == [("h2", 2), ("h3", 2)]


def test_integer_rule_one_puts_every_process_on_a_different_host():
    qis = [qi(host=f"h{i}", slots=3, seq=i, pe_list=("one",)) for i in (1, 2, 3)]
    assert grants(run(qis, [task(pe=("one", ((1, INF),)))], [pe("one", "1")])) == [
        ("h1", 1), ("h2", 1), ("h3", 1)]


def test_integer_rule_takes_the_largest_multiple_in_the_range():
    plan = run(three_hosts((2, 2, 2)), [task(pe=("two", ((1, 5),)))], [pe("two", "2")])
    assert grants(plan) == [("h1", 2), ("h2", 2)]


def test_pe_slots_puts_all_on_one_host():
    plan = run(three_hosts((2, 3, 1)), [task(pe=("smp", ((3, 3),)))], [pe("smp", "$pe_slots")])
    assert grants(plan) == [("h2", 3)]


def test_pe_slots_cannot_spread_over_hosts():
    plan = run(three_hosts((2, 3, 1)), [task(pe=("smp", ((4, 4),)))], [pe("smp", "$pe_slots")])
    assert plan.dispatches == []
    assert 'cannot run in PE "smp" because it only offers 3 slots' in plan.reasons[1]


def test_pe_slots_range_takes_the_host_with_the_most():
    plan = run(three_hosts((2, 3, 1)), [task(pe=("smp", ((1, INF),)))], [pe("smp", "$pe_slots")])
    assert grants(plan) == [("h2", 3)]


def test_grants_of_one_host_span_its_queue_instances():
    qis = [qi(host="h1", slots=1, cq="a.q", seq=0), qi(host="h1", slots=2, cq="b.q", seq=1)]
    plan = run(qis, [task(pe=("smp", ((3, 3),)))], [pe("smp", "$pe_slots")])
    assert plan.dispatches[0].granted == [("a.q", "h1", 1), ("b.q", "h1", 2)]


# --- ranges ------------------------------------------------------------------

def test_a_range_gets_its_largest_count_that_fits():
    plan = run(three_hosts(), [task(pe=("mpi", ((2, 10),)))], [pe()])
    assert sum(n for _h, n in grants(plan)) == 6


def test_open_range_up_to_infinity_is_bounded_by_the_pe_slots():
    plan = run(three_hosts(), [task(pe=("mpi", ((1, INF),)))], [pe(slots=5)])
    assert sum(n for _h, n in grants(plan)) == 5


def test_a_list_of_ranges_picks_the_largest_value_that_fits():
    plan = run(three_hosts(), [task(pe=("mpi", ((1, 2), (5, 5), (8, 9))))], [pe()])
    assert sum(n for _h, n in grants(plan)) == 5


def test_a_range_below_its_minimum_stays_pending():
    plan = run(three_hosts(), [task(pe=("mpi", ((7, INF),)))], [pe()])
    assert plan.dispatches == []
    assert 'cannot run in PE "mpi" because it only offers 6 slots' in plan.reasons[1]


# --- the PE's slots -----------------------------------------------------------

def test_pe_slots_cap_counts_slots_already_used():
    plan = run(three_hosts(), [task(pe=("mpi", ((4, 4),)))], [pe(slots=5, used=2)])
    assert plan.dispatches == []
    assert 'cannot run in PE "mpi" because it only offers 3 slots' in plan.reasons[1]


def test_pe_cap_is_shared_by_the_jobs_of_one_pass():
    plan = run(three_hosts((4, 4, 4)), [task(job=j, pe=("mpi", ((3, 3),))) for j in (1, 2)], [pe(slots=4)])
    assert [d.job_id for d in plan.dispatches] == [1]


def test_pe_with_zero_slots_is_never_in_range():
    # 8.1.9's qstat -j for a PE of slots 0 (checked on a real cell)
    plan = run(three_hosts(), [task(pe=("mpi", ((4, 4),)))], [pe(slots=0)])
    assert plan.reasons[1] == ['cannot run in PE "mpi" because it only offers 0 slots']


# --- job_is_first_task ---------------------------------------------------------

# 8.1.9 on the peer: `qsub -pe make 2` (make: $round_robin, job_is_first_task
# FALSE) runs on a 2-slot queue instance, qstat -f shows it used 2/2, NSLOTS=2,
# the pe_hostfile says "vm 2 all.q@vm UNDEFINED", accounting slots 2; -pe make 1
# uses 1 slot.  The job script takes no slot of its own: FALSE books as TRUE.

def test_job_is_first_task_false_books_no_slot_for_the_master_task():
    plan = run(three_hosts((3, 3, 3)), [task(pe=("mpi", ((4, 4),)))], [pe(job_is_first_task=False)])
    assert grants(plan) == [("h1", 3), ("h2", 1)]  # $fill_up: 4 slots, as with TRUE


def test_job_is_first_task_false_fits_in_just_the_slots_it_asks_for():
    plan = run([qi(host="h1", slots=2)], [task(pe=("smp", ((2, 2),)))],
               [pe("smp", "$pe_slots", job_is_first_task=False)])
    assert grants(plan) == [("h1", 2)]
    plan = run([qi(host="h1", slots=2)], [task(pe=("rr", ((1, 3),)))],
               [pe("rr", "$round_robin", job_is_first_task=False)])
    assert grants(plan) == [("h1", 2)]  # a range: the most the host holds


def test_the_master_queue_is_the_first_grant():
    plan = run(three_hosts((1, 4, 4)), [task(pe=("rr", ((3, 3),)))], [pe("rr", "$round_robin")])
    assert plan.dispatches[0].granted[0][1] == "h1"


# --- PE names --------------------------------------------------------------------

def test_wildcard_pe_name_takes_the_first_matching_pe_that_fits():
    pes = [pe("mpi-big", slots=999), pe("mpi-a", slots=2)]
    qis = [qi(pe_list=("mpi-a", "mpi-big"))]
    plan = run(qis, [task(pe=("mpi*", ((4, 4),)))], pes)
    assert plan.dispatches[0].pe == "mpi-big"
    plan = run(qis, [task(pe=("mpi*", ((2, 2),)))], pes)
    assert plan.dispatches[0].pe == "mpi-a"  # PEs are tried in name order


def test_no_matching_pe():
    plan = run(three_hosts(), [task(pe=("nosuch*", ((4, 4),)))], [pe()])
    assert plan.reasons[1] == ["no matching PE found"]


def test_queue_without_the_pe_in_its_pe_list():
    plan = run([qi(pe_list=("make",))], [task(pe=("mpi", ((4, 4),)))], [pe()])
    assert plan.reasons[1] == ['cannot run in queue "all.q" because PE "mpi" is not in PE list',
                               'cannot run in PE "mpi" because it only offers 0 slots']


# --- access lists ---------------------------------------------------------------

def test_queue_user_lists_admit_members_only():
    qis = [qi(user_lists=("staff",))]
    assert run(qis, [task(owner="alice")], []).dispatches
    plan = run(qis, [task(owner="bob")], [])
    assert plan.reasons[1] == ['has no permission for cluster queue "all.q"']


def test_group_entries_admit_members_of_the_group():
    assert run([qi(user_lists=("staff",))], [task(owner="bob", group="wheel")], []).dispatches


def test_queue_xuser_lists_deny():
    plan = run([qi(xuser_lists=("banned",))], [task(owner="mallory")], [])
    assert plan.reasons[1] == ['has no permission for cluster queue "all.q"']
    assert run([qi(xuser_lists=("banned",))], [task(owner="alice")], []).dispatches


def test_a_user_in_both_lists_is_denied():
    both = dict(ACLS, banned=access_list.AccessList(name="banned", entries=("alice",)))
    s = snap([qi(user_lists=("staff",), xuser_lists=("banned",))], [task(owner="alice")], acls=both)
    assert scheduler.schedule(s).dispatches == []


def test_access_refused_on_one_instance_names_the_instance():
    qis = [qi(host="h1", xuser_lists=("banned",)), qi(host="h2", slots=1, used=1)]
    plan = run(qis, [task(owner="mallory")], [])
    assert 'has no permission for queue "all.q@h1"' in plan.reasons[1]


def test_pe_user_lists_and_xuser_lists():
    pes = [pe(user_lists=("staff",))]
    assert run(three_hosts(), [task(owner="alice", pe=("mpi", ((4, 4),)))], pes).dispatches
    no_access = ['cannot run because no access to PE "mpi"', 'cannot run in PE "mpi" because it only offers 0 slots']
    plan = run(three_hosts(), [task(owner="bob", pe=("mpi", ((4, 4),)))], pes)
    assert plan.reasons[1] == no_access  # 8.1.9's two lines (checked on a real cell)
    plan = run(three_hosts(), [task(owner="mallory", pe=("mpi", ((4, 4),)))], [pe(xuser_lists=("banned",))])
    assert plan.reasons[1] == no_access


def test_queue_projects_need_a_listed_project():
    qis = [qi(projects=("p1",)), qi(host="h2", projects=("p1",))]
    assert run(qis, [task(project="p1")], []).dispatches
    plan = run(qis, [task()], [])
    assert plan.reasons[1] == ['(no project) does not have the correct project to run in cluster queue "all.q"']
    plan = run([qi(projects=("p1",)), qi(host="h2", slots=1, used=1)], [task(project="p2")], [])
    assert '(project p2) does not have the correct project to run in queue "all.q@h1"' in plan.reasons[1]


def test_queue_xprojects_exclude_a_project():
    qis = [qi(xprojects=("p1",)), qi(host="h2", slots=1, used=1)]
    plan = run(qis, [task(project="p1")], [])
    why = '(project p1) is not allowed to run in queue "all.q@h1" based on the excluded project list'
    assert why in plan.reasons[1]
    assert run(qis, [task(project="p2")], []).dispatches


def test_hard_queue_list_reason_names_the_cluster_queue():
    plan = run([qi()], [task(queues=("other.q",))], [])
    assert plan.reasons[1] == ['cannot run in queue "all.q" because it is not contained in its hard queue list (-q)']


# --- properties -------------------------------------------------------------------

RULES = st.sampled_from(["$pe_slots", "$fill_up", "$round_robin", "1", "2", "3"])


@given(
    free=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4)), min_size=1, max_size=4),
    rule=RULES,
    pe_slots=st.integers(0, 12),
    first_task=st.booleans(),
    reqs=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=4),
)
def test_no_dispatch_exceeds_the_slots_or_the_pe_cap(free, rule, pe_slots, first_task, reqs):
    qis = [qi(host=f"h{i}", slots=s, used=min(u, s), seq=i) for i, (s, u) in enumerate(free)]
    tasks = [task(job=j + 1, pe=("p", ((lo, lo + extra),))) for j, (lo, extra) in enumerate(reqs)]
    the_pe = pe("p", rule, slots=pe_slots, job_is_first_task=first_task)
    qis = [dataclasses.replace(q, pe_list=("p",)) for q in qis]
    plan = run(qis, tasks, [the_pe])
    used = {q.name: q.used for q in qis}
    pe_total = 0
    for d in plan.dispatches:
        t = tasks[d.job_id - 1]
        granted = sum(n for *_x, n in d.granted)
        lo, hi = t.pe[1][0]
        assert lo <= granted <= hi  # job_is_first_task adds no slot (8.1.9)
        hosts = [h for _cq, h, _n in d.granted]
        if rule == "$pe_slots":
            assert len(set(hosts)) == 1
        if rule.isdigit():
            per_host = {}
            for _cq, h, n in d.granted:
                per_host[h] = per_host.get(h, 0) + n
            assert set(per_host.values()) == {int(rule)}
        pe_total += granted
        for cq, h, n in d.granted:
            used[f"{cq}@{h}"] += n
    assert pe_total <= pe_slots
    assert all(used[q.name] <= q.slots for q in qis)


@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=3),
       st.integers(1, 4), st.integers(0, 30))
def test_the_smallest_count_a_range_takes_is_where_the_largest_starts(ranges, step, most):
    """could_hold's threshold: largest_in_ranges finds a count for ``most``
    exactly when ``most`` reaches smallest_in_ranges."""
    least = pe_allocation.smallest_in_ranges(ranges, step)
    found = pe_allocation.largest_in_ranges(ranges, most, step)
    assert (found is not None) == (least is not None and most >= least)
