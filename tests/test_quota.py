"""Resource quota sets as the scheduler applies them, and qquota's lines
(sge_resource_quota(5), qquota(1)); pure, no daemon."""

from __future__ import annotations

import functools
import os

import attrs
import scheduler_harness
from hypothesis import given
from hypothesis import strategies as st
from scheduler_harness import pe, snap, task

from minisge import scheduler
from minisge.cli import qquota as qquota_cli
from minisge.formats import complex as complex_fmt
from minisge.formats import resource_quota as rq
from minisge.scheduler import ComplexIndex, quota
from minisge.scheduler.quota import QquotaQuery, QuotaContext, QuotaLedger, QuotaRequest

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _complexes() -> ComplexIndex:
    """The default complex list, with virtual_free made a consumable and a
    per-job consumable ``lic`` added (as sites do)."""
    cl = complex_fmt.default_complex()
    attrs_ = [attrs.evolve(a, consumable=complex_fmt.Consumable.YES) if a.name == "virtual_free" else a
              for a in cl.attrs]
    lic = attrs.evolve(next(a for a in cl.attrs if a.name == "slots"), name="lic", shortcut="lic",
                       consumable=complex_fmt.Consumable.JOB, default="0", urgency="0")
    return ComplexIndex(attrs.evolve(cl, attrs=tuple(attrs_) + (lic,)))


CX = _complexes()


def sets(*texts: str) -> tuple:
    return tuple(rq.parse(t) for t in texts)


def rqs(name: str, *limits: str, enabled: bool = True) -> rq.ResourceQuotaSet:
    body = "".join(f"   limit        {lim}\n" for lim in limits)
    return rq.parse(f"{{\n   name         {name}\n   enabled      {str(enabled).upper()}\n{body}}}\n")


def req(user="alice", host="h1", slots=1, project=None, pe=None, cqueue="all.q", **requests) -> QuotaRequest:
    return QuotaRequest(user, project, pe, cqueue, host, slots, requests)


def ctx(rule_sets, running=(), **kw) -> QuotaContext:
    return QuotaContext(sets=tuple(rule_sets), complexes=CX, running=tuple(running), **kw)


def fits(rule_sets, candidate, running=(), **kw) -> bool:
    return QuotaLedger(ctx(rule_sets, running, **kw)).check(candidate) is None


# --------------------------------------------------------------------------- the page's examples

MAX_U_SLOTS = """{
   name         max_u_slots
   description  "All users max use of 100 slots"
   enabled      true
   limit        to slots=100
}
"""

LX_HOSTS = """{
   name         max_virtual_free_on_lx_hosts
   description  "resource quota for virtual_free restriction"
   enabled      true
   limit        users {user1,user2} hosts {@lx_host} to virtual_free=6g
   limit        users {*} hosts {@lx_host} to virtual_free=4g
}
"""

EVERY_HOST = """{
   name         max_slots_on_every_host
   enabled      true
   limit        hosts {*} to slots=$num_proc*2
}
"""


def test_max_u_slots_restricts_all_users_together_to_100_slots():
    running = [req("alice", slots=60), req("bob", host="h2", slots=39)]
    assert fits(sets(MAX_U_SLOTS), req("carol"), running)
    assert not fits(sets(MAX_U_SLOTS), req("carol", slots=2), running)
    assert not fits(sets(MAX_U_SLOTS), req("carol"), running + [req("dave")])


def test_the_reason_names_the_limit_and_the_rule_as_grid_engine_does():
    ledger = QuotaLedger(ctx(sets(MAX_U_SLOTS), [req(slots=100)]))
    assert str(ledger.check(req())) == 'cannot run because it exceeds limit "/////" in rule "max_u_slots/1"'


def test_slots_0_drains_the_system():
    assert not fits([rqs("drain", "to slots=0")], req())


def test_lx_hosts_user1_and_user2_may_have_6g_each_on_each_host():
    groups = {"@lx_host": ("lx1", "lx2")}
    s = sets(LX_HOSTS)
    used = [req("user1", "lx1", virtual_free="5g")]
    assert fits(s, req("user1", "lx1", virtual_free="1g"), used, hostgroups=groups)
    assert not fits(s, req("user1", "lx1", virtual_free="2g"), used, hostgroups=groups)
    # each of user1, user2 alone; each host alone
    assert fits(s, req("user2", "lx1", virtual_free="6g"), used, hostgroups=groups)
    assert fits(s, req("user1", "lx2", virtual_free="6g"), used, hostgroups=groups)


def test_lx_hosts_all_other_users_get_4g_each():
    groups = {"@lx_host": ("lx1", "lx2")}
    s = sets(LX_HOSTS)
    assert fits(s, req("user3", "lx1", virtual_free="4g"), hostgroups=groups)
    assert not fits(s, req("user3", "lx1", virtual_free="5g"), hostgroups=groups)
    used = [req("user3", "lx1", virtual_free="3g")]
    assert not fits(s, req("user3", "lx1", virtual_free="2g"), used, hostgroups=groups)
    assert fits(s, req("user4", "lx1", virtual_free="4g"), used, hostgroups=groups)


def test_lx_hosts_hosts_outside_the_group_are_not_limited():
    assert fits(sets(LX_HOSTS), req("user3", "other", virtual_free="64g"), hostgroups={"@lx_host": ("lx1",)})


def test_every_host_dynamic_limit_is_twice_num_proc_of_each_host():
    values = {"h1": {"num_proc": 2.0}, "h2": {"num_proc": 1.0}}
    s = sets(EVERY_HOST)
    assert fits(s, req(host="h1", slots=4), host_values=values)
    assert not fits(s, req(host="h1", slots=5), host_values=values)
    assert not fits(s, req(host="h2", slots=3), host_values=values)
    used = [req("bob", host="h1", slots=3)]
    assert fits(s, req(host="h1"), used, host_values=values)
    assert not fits(s, req(host="h1", slots=2), used, host_values=values)


def test_a_dynamic_limit_without_the_value_counts_as_a_large_limit():
    assert fits(sets(EVERY_HOST), req(host="nowhere", slots=100))


# --------------------------------------------------------------------------- filters


def test_braces_limit_each_consumer_alone():
    s = [rqs("each", "users {alice,bob} to slots=2")]
    used = [req("alice", slots=2)]
    assert not fits(s, req("alice"), used)
    assert fits(s, req("bob", slots=2), used)


def test_a_plain_list_limits_its_consumers_together():
    s = [rqs("together", "users alice,bob to slots=2")]
    used = [req("alice", slots=2)]
    assert not fits(s, req("bob"), used)
    assert fits(s, req("carol", slots=5), used)  # not in the list: not limited


def test_star_in_braces_is_per_user_and_plain_star_is_for_all():
    used = [req("alice", slots=1)]
    assert fits([rqs("per_user", "users {*} to slots=1")], req("bob"), used)
    assert not fits([rqs("per_user", "users {*} to slots=1")], req("alice"), used)
    assert not fits([rqs("total", "users * to slots=1")], req("bob"), used)


def test_an_excluded_user_is_not_limited():
    s = [rqs("not_bob", "users !bob to slots=1")]
    used = [req("alice"), req("bob", slots=5)]
    assert fits(s, req("bob"), used)
    assert not fits(s, req("carol"), used)


def test_an_acl_limits_its_members_together_and_braced_each_alone():
    acls = {"staff": ("alice", "bob")}
    used = [req("alice")]
    assert not fits([rqs("acl", "users @staff to slots=1")], req("bob"), used, acls=acls)
    assert fits([rqs("acl", "users {@staff} to slots=1")], req("bob"), used, acls=acls)
    assert fits([rqs("acl", "users @staff to slots=1")], req("carol"), used, acls=acls)


def test_an_excluded_acl_excludes_each_member():
    acls = {"staff": ("alice", "bob")}
    s = [rqs("acl", "users {!@staff} to slots=0")]
    assert fits(s, req("alice"), acls=acls)
    assert not fits(s, req("carol"), acls=acls)


def test_an_excluded_hostgroup_excludes_its_hosts():
    s = [rqs("hg", "hosts !@big to slots=1")]
    groups = {"@big": ("h9",)}
    assert fits(s, req(host="h9", slots=8), hostgroups=groups)
    assert not fits(s, req(host="h1", slots=2), hostgroups=groups)


def test_projects_star_means_jobs_with_a_project_and_not_star_those_without():
    with_prj = [rqs("p", "projects * to slots=0")]
    without = [rqs("p", "projects !* to slots=0")]
    assert fits(with_prj, req(project=None))
    assert not fits(with_prj, req(project="big"))
    assert not fits(without, req(project=None))
    assert fits(without, req(project="big"))


def test_no_pe_filter_matches_jobs_with_and_without_pe_and_pes_star_only_pe_jobs():
    assert not fits([rqs("x", "to slots=1")], req(pe="mpi", slots=2))
    assert fits([rqs("x", "pes * to slots=1")], req(slots=2))
    assert not fits([rqs("x", "pes * to slots=1")], req(pe="mpi", slots=2))


def test_queues_filter_counts_per_cluster_queue_in_braces():
    s = [rqs("q", "queues {*} to slots=1")]
    used = [req(cqueue="a.q")]
    assert fits(s, req(cqueue="b.q"), used)
    assert not fits(s, req(cqueue="a.q"), used)


# --------------------------------------------------------------------------- rules and sets


def test_inside_a_set_the_first_matching_rule_counts():
    s = [rqs("first", "users alice to slots=5", "users {*} to slots=1")]
    used = [req("alice", slots=4)]
    assert fits(s, req("alice"), used)
    assert not fits(s, req("bob", slots=2))


def test_every_enabled_set_applies_and_the_most_restrictive_wins():
    s = [rqs("wide", "to slots=10"), rqs("narrow", "users {*} to slots=2")]
    ledger = QuotaLedger(ctx(s, [req(slots=2)]))
    assert str(ledger.check(req())) == 'cannot run because it exceeds limit "alice/////" in rule "narrow/1"'
    assert ledger.check(req("bob", slots=2)) is None


def test_a_disabled_set_limits_nothing():
    assert fits([rqs("off", "to slots=0", enabled=False)], req())


def test_a_named_rule_is_reported_by_its_name():
    ledger = QuotaLedger(ctx([rqs("s", "name cap to slots=0")]))
    assert 'in rule "s/cap"' in str(ledger.check(req()))


def test_a_per_job_consumable_counts_once_per_job():
    s = [rqs("lic", "users {*} to lic=2")]
    assert fits(s, req(slots=8, lic="2"))
    assert not fits(s, req(slots=1, lic="3"))
    assert fits(s, QuotaRequest("alice", None, "mpi", "all.q", "h2", 4, {"lic": "2"}, master=False),
                [req(lic="2")])


def test_a_consumable_not_requested_counts_its_default():
    cl = CX.clist
    with_default = ComplexIndex(attrs.evolve(cl, attrs=tuple(
        attrs.evolve(a, default="1G") if a.name == "virtual_free" else a for a in cl.attrs)))
    c = QuotaContext(sets=(rqs("vf", "to virtual_free=2G"),), complexes=with_default,
                     running=(req(), req()))
    assert QuotaLedger(c).check(req()) is not None


def test_a_non_consumable_limit_caps_the_request():
    s = [rqs("vmem", "users {*} to h_vmem=2G")]
    assert fits(s, req(h_vmem="2G"))
    assert not fits(s, req(h_vmem="3G"))
    assert fits(s, req())  # not requested: not limited


# --------------------------------------------------------------------------- the scheduler


qi = functools.partial(scheduler_harness.qi, pe_list=("mpi", "fill"))  # the PEs of this module's cell
MPI = pe("mpi", "$pe_slots", 99)
FILL = pe("fill", "$fill_up", 99)


def snapshot(qis, pending, rule_sets, running=(), **kw):
    """A snapshot with PE mpi and the resource quota sets ``rule_sets``."""
    return snap(qis, pending, pes=[MPI], quotas=ctx(rule_sets, running), **kw)


def test_two_jobs_that_fit_alone_but_not_together_do_not_both_start():
    pending = [task(1, owner="alice"), task(2, owner="alice")]
    plan = scheduler.schedule(snapshot([qi()], pending, [rqs("cap", "users {*} to slots=1")]))
    assert [d.job_id for d in plan.dispatches] == [1]
    assert 'cannot run because it exceeds limit "alice/////" in rule "cap/1"' in plan.reasons[2]


def test_one_users_limit_leaves_other_users_jobs_running():
    pending = [task(1, owner="alice"), task(2, owner="alice"), task(3, owner="bob")]
    plan = scheduler.schedule(snapshot([qi()], pending, [rqs("cap", "users {*} to slots=1")]))
    assert sorted(d.job_id for d in plan.dispatches) == [1, 3]


def test_running_jobs_count_against_the_quota():
    plan = scheduler.schedule(snapshot([qi(used=1)], [task(1, owner="alice")], [rqs("cap", "users {*} to slots=1")],
                                       running=[req("alice")]))
    assert plan.dispatches == []


def test_a_quota_on_one_host_sends_the_job_to_another():
    plan = scheduler.schedule(snapshot([qi(host="h1"), qi(host="h2")], [task(1, owner="alice")],
                                       [rqs("h1cap", "hosts h1 to slots=0")]))
    assert plan.dispatches[0].granted == [("all.q", "h2", 1)]


def test_a_parallel_job_counts_all_its_slots_and_its_pe():
    s = [rqs("pecap", "pes mpi to slots=3")]
    big = task(1, owner="alice", pe=("mpi", ((4, 4),)))
    small = task(2, owner="alice", pe=("mpi", ((2, 3),)))
    plan = scheduler.schedule(snapshot([qi(slots=8)], [big, small], s))
    assert [(d.job_id, d.granted) for d in plan.dispatches] == [(2, [("all.q", "h1", 3)])]


def test_a_parallel_job_over_several_hosts_counts_its_slots_together():
    qis = [qi(host="h1", slots=2), qi(host="h2", slots=2)]
    job = task(1, owner="alice", pe=("fill", ((2, 6),)))
    s = snap(qis, [job], pes=[FILL], quotas=ctx([rqs("cap", "to slots=3")]))
    plan = scheduler.schedule(s)
    assert sum(n for _cq, _h, n in plan.dispatches[0].granted) == 3


def test_a_project_limit_does_not_block_the_same_users_other_project():
    s = [rqs("prj", "projects {a} to slots=1")]
    pending = [task(j, owner="alice", project=p) for j, p in ((1, "a"), (2, "a"), (3, "b"))]
    plan = scheduler.schedule(snapshot([qi()], pending, s))
    assert sorted(d.job_id for d in plan.dispatches) == [1, 3]


def test_without_quotas_the_snapshot_schedules_as_before():
    s = snap([qi()], [task(1, owner="alice")], complexes=CX)
    assert len(scheduler.schedule(s).dispatches) == 1


RULE_POOL = [
    "to slots=3",
    "users {*} to slots=1",
    "users {*} to slots=2",
    "users alice,bob to slots=2",
    "users {alice,carol} hosts {*} to slots=1",
    "users !bob to slots=2",
    "hosts {*} to slots=$num_proc",
    "hosts h1 to slots=1",
    "projects {*} to slots=1",
    "projects !* to slots=2",
    "users @staff to slots=2",
    "queues b.q to slots=1",
    "pes mpi to slots=3",
    "users {*} to virtual_free=3G",
]


@st.composite
def scenarios(draw):
    rule_sets = []
    for i in range(draw(st.integers(1, 3))):
        rules = draw(st.lists(st.sampled_from(RULE_POOL), min_size=1, max_size=3, unique=True))
        rule_sets.append(rqs(f"s{i}", *rules))
    users = st.sampled_from(["alice", "bob", "carol"])
    projects = st.sampled_from([None, "p1", "p2"])
    pending = []
    for j in range(1, draw(st.integers(1, 8)) + 1):
        pe = draw(st.sampled_from([None, None, ("mpi", ((1, 3),)), ("fill", ((2, 6),))]))
        requests = draw(st.sampled_from([{}, {"virtual_free": "1G"}, {"vf": "2G"}]))
        pending.append(task(j, owner=draw(users), project=draw(projects), pe=pe, requests=requests))
    running = [req(draw(users), draw(st.sampled_from(["h1", "h2"])), draw(st.integers(1, 2)),
                   draw(projects)) for _ in range(draw(st.integers(0, 3)))]
    return rule_sets, pending, running


@given(scenarios())
def test_no_plan_ever_exceeds_a_quota(scenario):
    rule_sets, pending, running = scenario
    qis = [qi("all.q", "h1", 4), qi("all.q", "h2", 4), qi("b.q", "h1", 2)]
    hv = {"h1": {"num_proc": 2.0}, "h2": {"num_proc": 3.0}}
    c = QuotaContext(sets=tuple(rule_sets), complexes=CX, running=tuple(running),
                     acls={"staff": ("alice", "carol")}, host_values=hv)
    plan = scheduler.schedule(snap(qis, pending, pes=[MPI, FILL], quotas=c))
    by_job = {t.job_id: t for t in pending}
    placed = []
    for d in plan.dispatches:
        t = by_job[d.job_id]
        for i, (cq, host, n) in enumerate(d.granted):
            placed.append(QuotaRequest(t.owner, t.project, d.pe, cq, host, n, t.requests, i == 0))
    # what running jobs already exceed may stay so, but grow no further; nothing else may be exceeded
    assert set(quota.exceeded_anywhere(c, placed)) <= set(quota.exceeded_anywhere(c, []))


# --------------------------------------------------------------------------- qquota


def golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name)) as f:
        return f.read()


def qquota_rows(rule_sets, running, caller="alice", **query):
    return quota.rows_to_wire(quota.report(ctx(rule_sets, running), QquotaQuery(**query), caller))


def test_qquota_prints_the_usage_of_max_u_slots_as_grid_engine():
    rows = qquota_rows(sets(MAX_U_SLOTS), [req("sgetest"), req("sgetest", host="h2")], caller="sgetest")
    assert qquota_cli.format_text(rows) == golden("qquota.2_running")
    assert qquota_cli.format_xml(rows) == golden("qquota.2_running.xml")


def test_qquota_prints_nothing_without_usage():
    assert qquota_cli.format_text(qquota_rows(sets(MAX_U_SLOTS), [])) == golden("qquota.no_jobs") == ""


def test_qquota_shows_the_callers_own_usage_of_a_per_user_rule():
    s = [rqs("max_u", "users {*} to slots=4")]
    running = [req("alice", slots=2), req("bob", slots=3)]
    rows = qquota_rows(s, running)
    assert [(r["rule"], r["value"], r["limit"], r["filter"]) for r in rows] == [("max_u/1", "2", "4", "users alice")]
    everyone = qquota_rows(s, running, users=("*",))
    assert [r["filter"] for r in everyone] == ["users alice", "users bob"]


def test_qquota_shows_a_plain_filter_as_configured():
    s = [rqs("grp", "users alice,!bob hosts {h1} to slots=9")]
    rows = qquota_rows(s, [req("alice", "h1", 2)])
    line = "grp/1              slots=2/9            users alice,!bob hosts h1"
    assert qquota_cli.format_text(rows).splitlines()[2] == line
    xml = qquota_cli.format_xml(rows)
    assert "   <users>alice</users>\n   <xusers>bob</xusers>\n   <hosts>h1</hosts>\n" in xml


def test_qquota_shows_a_static_limit_without_usage():
    rows = qquota_rows([rqs("vm", "to h_vmem=2G")], [])
    assert qquota_cli.format_text(rows).splitlines()[2] == "vm/1               h_vmem=2G            -"
    assert "<limit resource='h_vmem' limit='2G'/>" in qquota_cli.format_xml(rows)


def test_qquota_l_selects_resources_by_name_or_shortcut():
    s = [rqs("two", "to slots=10,h_vmem=2G")]
    assert [r["resource"] for r in qquota_rows(s, [req()], resources=("s",))] == ["slots"]
    assert [r["resource"] for r in qquota_rows(s, [req()], resources=("h_vmem",))] == ["h_vmem"]


def test_qquota_h_and_q_select_usage_by_host_and_queue():
    s = [rqs("per", "hosts {*} queues {*} to slots=10")]
    running = [req(host="h1"), req(host="h2", cqueue="b.q")]
    assert [r["filter"] for r in qquota_rows(s, running, hosts=("h2",))] == ["queues b.q hosts h2"]
    assert [r["filter"] for r in qquota_rows(s, running, queues=("all*",))] == ["queues all.q hosts h1"]


def test_qquota_dynamic_limit_is_printed_as_an_integer_per_host():
    c = ctx(sets(EVERY_HOST), [req(host="h1", slots=3)], host_values={"h1": {"num_proc": 2.0}})
    rows = quota.rows_to_wire(quota.report(c, QquotaQuery(), "alice"))
    assert [(r["value"], r["limit"], r["filter"]) for r in rows] == [("3", "4", "hosts h1")]


def test_qquota_memory_usage_is_printed_as_memory():
    rows = qquota_rows([rqs("vf", "users {*} to virtual_free=4G")], [req(virtual_free="1536M")])
    assert (rows[0]["value"], rows[0]["limit"]) == ("1.500G", "4.000G")
