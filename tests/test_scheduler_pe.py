"""sge_pe(5) allocation rules and the access lists of queue_conf(5) and
sge_pe(5), through the pure scheduler (snapshot in, plan out)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minisge import scheduler
from minisge.config_state import ComplexIndex
from minisge.formats import access_list
from minisge.formats import complex as complex_fmt
from minisge.scheduler import PE, HostInfo, PendingTask, QInstance, Snapshot

CX = ComplexIndex(complex_fmt.default_complex())
INF = 9999999
ACLS = {
    "staff": access_list.AccessList(name="staff", entries=("alice", "@wheel")),
    "banned": access_list.AccessList(name="banned", entries=("mallory",)),
}


def qi(host="h1", slots=4, used=0, cq="all.q", seq=0, pe_list=("mpi", "rr", "fill", "two", "smp"), **kw) -> QInstance:
    values = {"qname": cq, "hostname": host, "h_rt": "INFINITY"}
    return QInstance(cq, host, seq, slots, used, pe_list=tuple(pe_list), values=values, **kw)


def pe(name="mpi", rule="$fill_up", slots=999, used=0, **kw) -> PE:
    return PE(name, slots, used, rule, **kw)


def job(pe_name="mpi", ranges=((4, 4),), job_id=1, owner="u", **kw) -> PendingTask:
    return PendingTask(job_id=job_id, task_id=1, owner=owner, pe=(pe_name, tuple(ranges)), **kw)


def run(qis, tasks, pes, **kw):
    snap = Snapshot(qinstances=tuple(qis), hosts={q.host: HostInfo(q.host) for q in qis},
                    pending=tuple(tasks), complexes=CX, pes={p.name: p for p in pes},
                    queue_sort_method="seqno", acls=ACLS, **kw)
    return scheduler.schedule(snap)


def grants(plan, job_id=1):
    for d in plan.dispatches:
        if d.job_id == job_id:
            return [(host, n) for _cq, host, n in d.granted]
    return None


def three_hosts(free=(2, 3, 1)):
    """Hosts h1..h3 (seq_no order) with 4 slots each and ``free`` of them free."""
    return [qi(f"h{i + 1}", slots=4, used=4 - f, seq=i) for i, f in enumerate(free)]


# --- allocation_rule ---------------------------------------------------------

def test_fill_up_fills_the_best_host_then_the_next():
    plan = run(three_hosts(), [job(ranges=((4, 4),))], [pe(rule="$fill_up")])
    assert grants(plan) == [("h1", 2), ("h2", 2)]


def test_round_robin_takes_one_slot_per_host_in_turn():
    plan = run(three_hosts(), [job(pe_name="rr", ranges=((5, 5),))], [pe("rr", "$round_robin")])
    assert grants(plan) == [("h1", 2), ("h2", 2), ("h3", 1)]


def test_round_robin_starts_again_from_the_first_host():
    plan = run(three_hosts((3, 3, 3)), [job(pe_name="rr", ranges=((7, 7),))], [pe("rr", "$round_robin")])
    assert grants(plan) == [("h1", 3), ("h2", 2), ("h3", 2)]


def test_integer_rule_puts_exactly_that_many_on_each_host():
    plan = run(three_hosts((1, 3, 2)), [job(pe_name="two", ranges=((4, 4),))], [pe("two", "2")])
    assert grants(plan) == [("h2", 2), ("h3", 2)]


def test_integer_rule_one_puts_every_process_on_a_different_host():
    qis = [qi(f"h{i}", slots=3, seq=i, pe_list=("one",)) for i in (1, 2, 3)]
    assert grants(run(qis, [job(pe_name="one", ranges=((1, INF),))], [pe("one", "1")])) == [
        ("h1", 1), ("h2", 1), ("h3", 1)]


def test_integer_rule_takes_the_largest_multiple_in_the_range():
    plan = run(three_hosts((2, 2, 2)), [job(pe_name="two", ranges=((1, 5),))], [pe("two", "2")])
    assert grants(plan) == [("h1", 2), ("h2", 2)]


def test_pe_slots_puts_all_on_one_host():
    plan = run(three_hosts((2, 3, 1)), [job(pe_name="smp", ranges=((3, 3),))], [pe("smp", "$pe_slots")])
    assert grants(plan) == [("h2", 3)]


def test_pe_slots_cannot_spread_over_hosts():
    plan = run(three_hosts((2, 3, 1)), [job(pe_name="smp", ranges=((4, 4),))], [pe("smp", "$pe_slots")])
    assert plan.dispatches == []
    assert 'cannot run in PE "smp" because it only offers 3 slots' in plan.reasons[1]


def test_pe_slots_range_takes_the_host_with_the_most():
    plan = run(three_hosts((2, 3, 1)), [job(pe_name="smp", ranges=((1, INF),))], [pe("smp", "$pe_slots")])
    assert grants(plan) == [("h2", 3)]


def test_grants_of_one_host_span_its_queue_instances():
    qis = [qi("h1", slots=1, cq="a.q", seq=0), qi("h1", slots=2, cq="b.q", seq=1)]
    plan = run(qis, [job(pe_name="smp", ranges=((3, 3),))], [pe("smp", "$pe_slots")])
    assert plan.dispatches[0].granted == [("a.q", "h1", 1), ("b.q", "h1", 2)]


# --- ranges ------------------------------------------------------------------

def test_a_range_gets_its_largest_count_that_fits():
    plan = run(three_hosts(), [job(ranges=((2, 10),))], [pe()])
    assert sum(n for _h, n in grants(plan)) == 6


def test_open_range_up_to_infinity_is_bounded_by_the_pe_slots():
    plan = run(three_hosts(), [job(ranges=((1, INF),))], [pe(slots=5)])
    assert sum(n for _h, n in grants(plan)) == 5


def test_a_list_of_ranges_picks_the_largest_value_that_fits():
    plan = run(three_hosts(), [job(ranges=((1, 2), (5, 5), (8, 9)))], [pe()])
    assert sum(n for _h, n in grants(plan)) == 5


def test_a_range_below_its_minimum_stays_pending():
    plan = run(three_hosts(), [job(ranges=((7, INF),))], [pe()])
    assert plan.dispatches == []
    assert 'cannot run in PE "mpi" because it only offers 6 slots' in plan.reasons[1]


# --- the PE's slots -----------------------------------------------------------

def test_pe_slots_cap_counts_slots_already_used():
    plan = run(three_hosts(), [job(ranges=((4, 4),))], [pe(slots=5, used=2)])
    assert plan.dispatches == []
    assert 'cannot run in PE "mpi" because it only offers 3 slots' in plan.reasons[1]


def test_pe_cap_is_shared_by_the_jobs_of_one_pass():
    plan = run(three_hosts((4, 4, 4)), [job(ranges=((3, 3),), job_id=j) for j in (1, 2)], [pe(slots=4)])
    assert [d.job_id for d in plan.dispatches] == [1]


def test_pe_with_zero_slots_is_never_in_range():
    # 8.1.9's qstat -j for a PE of slots 0 (checked on a real cell)
    plan = run(three_hosts(), [job()], [pe(slots=0)])
    assert plan.reasons[1] == ['cannot run in PE "mpi" because it only offers 0 slots']


# --- job_is_first_task ---------------------------------------------------------

def test_job_is_first_task_false_adds_a_slot_in_the_master_queue():
    plan = run(three_hosts((3, 3, 3)), [job(ranges=((4, 4),))], [pe(job_is_first_task=False)])
    assert grants(plan) == [("h1", 3), ("h2", 2)]  # 2 + 2 parallel tasks, 1 master task slot on h1


def test_job_is_first_task_false_needs_the_extra_slot():
    plan = run([qi("h1", slots=2)], [job(pe_name="smp", ranges=((2, 2),))],
               [pe("smp", "$pe_slots", job_is_first_task=False)])
    assert plan.dispatches == []


def test_the_master_queue_is_the_first_grant():
    plan = run(three_hosts((1, 4, 4)), [job(pe_name="rr", ranges=((3, 3),))], [pe("rr", "$round_robin")])
    assert plan.dispatches[0].granted[0][1] == "h1"


# --- PE names --------------------------------------------------------------------

def test_wildcard_pe_name_takes_the_first_matching_pe_that_fits():
    pes = [pe("mpi-big", slots=999), pe("mpi-a", slots=2)]
    qis = [qi(pe_list=("mpi-a", "mpi-big"))]
    plan = run(qis, [job(pe_name="mpi*", ranges=((4, 4),))], pes)
    assert plan.dispatches[0].pe == "mpi-big"
    plan = run(qis, [job(pe_name="mpi*", ranges=((2, 2),))], pes)
    assert plan.dispatches[0].pe == "mpi-a"  # PEs are tried in name order


def test_no_matching_pe():
    plan = run(three_hosts(), [job(pe_name="nosuch*")], [pe()])
    assert plan.reasons[1] == ["no matching PE found"]


def test_queue_without_the_pe_in_its_pe_list():
    plan = run([qi(pe_list=("make",))], [job()], [pe()])
    assert plan.reasons[1] == ['cannot run in queue "all.q" because PE "mpi" is not in PE list',
                               'cannot run in PE "mpi" because it only offers 0 slots']


# --- access lists ---------------------------------------------------------------

def test_queue_user_lists_admit_members_only():
    qis = [qi(user_lists=("staff",))]
    assert run(qis, [PendingTask(1, 1, "alice")], []).dispatches
    plan = run(qis, [PendingTask(1, 1, "bob")], [])
    assert plan.reasons[1] == ['has no permission for cluster queue "all.q"']


def test_group_entries_admit_members_of_the_group():
    assert run([qi(user_lists=("staff",))], [PendingTask(1, 1, "bob", group="wheel")], []).dispatches


def test_queue_xuser_lists_deny():
    plan = run([qi(xuser_lists=("banned",))], [PendingTask(1, 1, "mallory")], [])
    assert plan.reasons[1] == ['has no permission for cluster queue "all.q"']
    assert run([qi(xuser_lists=("banned",))], [PendingTask(1, 1, "alice")], []).dispatches


def test_a_user_in_both_lists_is_denied():
    both = dict(ACLS, banned=access_list.AccessList(name="banned", entries=("alice",)))
    snap = Snapshot(qinstances=(qi(user_lists=("staff",), xuser_lists=("banned",)),), hosts={"h1": HostInfo("h1")},
                    pending=(PendingTask(1, 1, "alice"),), complexes=CX, acls=both, queue_sort_method="seqno")
    assert scheduler.schedule(snap).dispatches == []


def test_access_refused_on_one_instance_names_the_instance():
    qis = [qi("h1", xuser_lists=("banned",)), qi("h2", slots=1, used=1)]
    plan = run(qis, [PendingTask(1, 1, "mallory")], [])
    assert 'has no permission for queue "all.q@h1"' in plan.reasons[1]


def test_pe_user_lists_and_xuser_lists():
    pes = [pe(user_lists=("staff",))]
    assert run(three_hosts(), [job(owner="alice")], pes).dispatches
    no_access = ['cannot run because no access to PE "mpi"', 'cannot run in PE "mpi" because it only offers 0 slots']
    plan = run(three_hosts(), [job(owner="bob")], pes)
    assert plan.reasons[1] == no_access  # 8.1.9's two lines (checked on a real cell)
    plan = run(three_hosts(), [job(owner="mallory")], [pe(xuser_lists=("banned",))])
    assert plan.reasons[1] == no_access


def test_queue_projects_need_a_listed_project():
    qis = [qi(projects=("p1",)), qi("h2", projects=("p1",))]
    assert run(qis, [PendingTask(1, 1, "u", project="p1")], []).dispatches
    plan = run(qis, [PendingTask(1, 1, "u")], [])
    assert plan.reasons[1] == ['(no project) does not have the correct project to run in cluster queue "all.q"']
    plan = run([qi(projects=("p1",)), qi("h2", slots=1, used=1)], [PendingTask(1, 1, "u", project="p2")], [])
    assert '(project p2) does not have the correct project to run in queue "all.q@h1"' in plan.reasons[1]


def test_queue_xprojects_exclude_a_project():
    qis = [qi(xprojects=("p1",)), qi("h2", slots=1, used=1)]
    plan = run(qis, [PendingTask(1, 1, "u", project="p1")], [])
    assert '(project p1) is not allowed to run in queue "all.q@h1" based on the excluded project list' in plan.reasons[1]
    assert run(qis, [PendingTask(1, 1, "u", project="p2")], []).dispatches


def test_hard_queue_list_reason_names_the_cluster_queue():
    plan = run([qi()], [PendingTask(1, 1, "u", queues=("other.q",))], [])
    assert plan.reasons[1] == ['cannot run in queue "all.q" because it is not contained in its hard queue list (-q)']


# --- properties -------------------------------------------------------------------

RULES = st.sampled_from(["$pe_slots", "$fill_up", "$round_robin", "1", "2", "3"])


@settings(max_examples=150, deadline=None)
@given(
    free=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4)), min_size=1, max_size=4),
    rule=RULES,
    pe_slots=st.integers(0, 12),
    first_task=st.booleans(),
    reqs=st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=4),
)
def test_no_dispatch_exceeds_the_slots_or_the_pe_cap(free, rule, pe_slots, first_task, reqs):
    qis = [qi(f"h{i}", slots=s, used=min(u, s), seq=i) for i, (s, u) in enumerate(free)]
    tasks = [job(pe_name="p", ranges=((lo, lo + extra),), job_id=j + 1) for j, (lo, extra) in enumerate(reqs)]
    the_pe = pe("p", rule, slots=pe_slots, job_is_first_task=first_task)
    qis = [q.__class__(**{**q.__dict__, "pe_list": ("p",)}) for q in qis]
    plan = run(qis, tasks, [the_pe])
    used = {q.name: q.used for q in qis}
    pe_total = 0
    for d in plan.dispatches:
        t = tasks[d.job_id - 1]
        granted = sum(n for *_x, n in d.granted)
        parallel = granted - (0 if first_task else 1)
        lo, hi = t.pe[1][0]
        assert lo <= parallel <= hi
        hosts = [h for _cq, h, _n in d.granted]
        if rule == "$pe_slots":
            assert len(set(hosts)) == 1
        if rule.isdigit():
            per_host = {}
            for _cq, h, n in d.granted:
                per_host[h] = per_host.get(h, 0) + n
            per_host[hosts[0]] -= 0 if first_task else 1
            assert set(per_host.values()) == {int(rule)}
        pe_total += granted
        for cq, h, n in d.granted:
            used[f"{cq}@{h}"] += n
    assert pe_total <= pe_slots
    assert all(used[q.name] <= q.slots for q in qis)
