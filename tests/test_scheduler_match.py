"""Request matching of the scheduler (complex(5), queue_conf(5)): soft
requests, FORCED attributes, overrides between global, host and queue,
load values as host attributes, EXCL, -masterq, qtype -- pure, no daemon."""

from __future__ import annotations

import functools

import scheduler_harness
from hypothesis import given
from hypothesis import strategies as st
from scheduler_harness import complexes, host, pe, qi, task, where

from minisge import scheduler
from minisge.formats import complex as complex_fmt
from minisge.scheduler import ComplexIndex
from minisge.scheduler.matching import excl_jobs_key

EXTRA = """\
lic       lic  INT    <=   YES    YES 0 0
jlic      jlic INT    <=   YES    JOB 0 0
dlic      dlic INT    <=   YES    YES 1 0
exclusive excl BOOL   EXCL YES    YES 0 1000
fast      fast BOOL   ==   YES    NO  0 0
color     col  STRING ==   YES    NO  NONE 0
gpu       gpu  INT    <=   FORCED YES 0 0
"""

CX = complexes(EXTRA)
snap = functools.partial(scheduler_harness.snap, complexes=CX)  # every snapshot here knows EXTRA's attributes


# ---------------------------------------------------------------- -soft


def test_a_soft_request_no_queue_meets_does_not_keep_the_job_waiting():
    plan = scheduler.schedule(snap([qi()], [task(soft_requests={"color": "red"})]))
    assert where(plan) == ["all.q@h1"]


def test_the_instance_meeting_the_soft_request_wins_over_a_lower_seq_no():
    qis = [qi("a.q", seq=0, values={"color": "blue"}), qi("b.q", seq=9, values={"color": "red"})]
    plan = scheduler.schedule(snap(qis, [task(soft_requests={"color": "red"})]))
    assert where(plan) == ["b.q@h1"]


def test_soft_queue_request_prefers_the_named_queue():
    qis = [qi("a.q", seq=0), qi("b.q", seq=9)]
    assert where(scheduler.schedule(snap(qis, [task(soft_queues=("b.q",))]))) == ["b.q@h1"]


def test_fewer_soft_violations_win_then_the_queue_sort_decides():
    qis = [qi("a.q", seq=0, values={"color": "red"}),
           qi("b.q", seq=1, values={"color": "red", "fast": "true"}),
           qi("c.q", seq=2, values={"color": "red", "fast": "true"})]
    t = task(soft_requests={"color": "red", "fast": "true"})
    assert where(scheduler.schedule(snap(qis, [t]))) == ["b.q@h1"]


def test_soft_requests_order_the_hosts_of_a_pe_job():
    mpi = pe("mpi", "$pe_slots", 10)
    qis = [qi(host="h1", pe_list=("mpi",)), qi(host="h2", pe_list=("mpi",))]
    hosts = {"h1": host("h1", load={"arch": "lx-amd64"}), "h2": host("h2", load={"arch": "lx-arm64"})}
    t = task(pe=("mpi", ((2, 2),)), soft_requests={"arch": "*arm*"})
    plan = scheduler.schedule(snap(qis, [t], hosts=hosts, pes=[mpi]))
    assert where(plan) == ["all.q@h2"]


# ---------------------------------------------------------------- FORCED


def test_a_queue_with_a_forced_attribute_takes_only_jobs_that_request_it():
    qis = [qi(values={"gpu": "2"})]
    plan = scheduler.schedule(snap(qis, [task(job=1), task(job=2, requests={"gpu": "1"})]))
    assert where(plan, 1) is None and where(plan, 2) == ["all.q@h1"]
    assert plan.reasons[1] == ["does not request 'forced' resource \"gpu\" of queue instance all.q@h1"]


def test_forced_on_a_host_and_globally_in_grid_engines_words():
    hosts = {"h1": host("h1", values={"gpu": "2"})}
    plan = scheduler.schedule(snap([qi()], [task()], hosts=hosts))
    assert plan.reasons[1] == ["does not request 'forced' resource \"gpu\" of host h1"]
    plan = scheduler.schedule(snap([qi()], [task()], global_values={"gpu": "2"}))
    assert plan.reasons[1] == ["does not request globally 'forced' resource \"gpu\""]


def test_a_forced_attribute_nowhere_attached_does_not_matter():
    assert where(scheduler.schedule(snap([qi()], [task()]))) == ["all.q@h1"]


def test_forced_requested_by_its_shortcut_counts():
    plan = scheduler.schedule(snap([qi(values={"gpu": "2"})], [task(requests={"gpu": "1"})]))
    assert where(plan) == ["all.q@h1"]


# ---------------------------------------------------------------- overrides, types, reasons


def test_a_relop_le_value_must_hold_on_every_level_so_only_a_smaller_one_overrides():
    hosts = {"h1": host("h1", values={"h_vmem": "1G"})}
    q = qi(values={"h_vmem": "4G"})  # the queue cannot raise what the host allows
    plan = scheduler.schedule(snap([q], [task(requests={"h_vmem": "2G"})], hosts=hosts))
    assert where(plan) is None
    assert plan.reasons[1] == ['(-l h_vmem=2G) cannot run at host "h1" because it offers only hf:h_vmem=1.000G']
    assert where(scheduler.schedule(snap([q], [task(requests={"h_vmem": "1G"})], hosts=hosts))) == ["all.q@h1"]


def test_an_eq_value_on_two_levels_must_match_both():
    hosts = {"h1": host("h1", values={"color": "red"})}
    q = qi(values={"color": "blue"})
    plan = scheduler.schedule(snap([q], [task(requests={"color": "blue"})], hosts=hosts))
    assert plan.reasons[1] == ['(-l color=blue) cannot run at host "h1" because it offers only hf:color=red']


def test_bool_requests_compare_as_numbers():
    qis = [qi("a.q", values={"fast": "false"}), qi("b.q", seq=1, values={"fast": "TRUE"})]
    assert where(scheduler.schedule(snap(qis, [task(requests={"fast": "true"})]))) == ["b.q@h1"]
    assert where(scheduler.schedule(snap(qis, [task(requests={"fast": "0"})]))) == ["a.q@h1"]


def test_string_wildcards_and_negation():
    qis = [qi("a.q", values={"color": "red"}), qi("b.q", seq=1, values={"color": "green"})]
    assert where(scheduler.schedule(snap(qis, [task(requests={"color": "g*|blue"})]))) == ["b.q@h1"]
    assert where(scheduler.schedule(snap(qis, [task(requests={"color": "!red"})]))) == ["b.q@h1"]


def test_an_attribute_no_level_offers_is_an_unknown_resource():
    plan = scheduler.schedule(snap([qi()], [task(requests={"color": "red", "h_rt": "1:0:0"})]))
    assert plan.reasons[1] == ['(-l color=red,h_rt=1:0:0) cannot run in queue "all.q@h1" '
                               'because job requests unknown resource (color)']


def test_a_consumable_reason_shows_what_is_left():
    plan = scheduler.schedule(snap([qi(values={"lic": "3"}, consumed={"lic": 2.0})], [task(requests={"lic": "2"})]))
    assert plan.reasons[1] == ['(-l lic=2) cannot run in queue "all.q@h1" because it offers only qc:lic=1.000000']


def test_a_consumable_default_is_checked_for_a_job_that_does_not_request_it():
    hosts = {"h1": host("h1", values={"dlic": "1"}, consumed={"dlic": 1.0})}
    plan = scheduler.schedule(snap([qi()], [task(requests={"h_rt": "10"})], hosts=hosts))
    assert plan.reasons[1] == ['(-l h_rt=10) cannot run at host "h1" because '
                               'for default request it offers only hc:dlic=0.000000']


def test_a_job_consumable_is_booked_once_not_per_slot():
    mpi = pe("mpi", "$pe_slots", 10)
    q = qi(slots=8, pe_list=("mpi",), values={"jlic": "2", "lic": "8"})
    t = task(pe=("mpi", ((4, 4),)), requests={"jlic": "2", "lic": "2"})
    plan = scheduler.schedule(snap([q], [t, task(job=2, pe=("mpi", ((1, 1),)), requests={"lic": "1"})],
                                   pes=[mpi]))
    assert where(plan, 1) == ["all.q@h1"] and where(plan, 2) is None  # lic 2*4 = 8 of 8 taken


# ---------------------------------------------------------------- load values


def test_load_values_are_host_attributes():
    hosts = {"h1": host("h1", load={"mem_free": "1G", "num_proc": "2"}),
             "h2": host("h2", load={"mem_free": "8G", "num_proc": "4"})}
    qis = [qi(host="h1"), qi(host="h2", seq=1)]
    assert where(scheduler.schedule(snap(qis, [task(requests={"mem_free": "2G"})], hosts=hosts))) == ["all.q@h2"]
    assert where(scheduler.schedule(snap(qis, [task(requests={"num_proc": "2"})], hosts=hosts))) == ["all.q@h1"]
    plan = scheduler.schedule(snap(qis[:1], [task(requests={"mem_free": "2G"})], hosts=hosts))
    assert plan.reasons[1] == ['(-l mem_free=2G) cannot run at host "h1" because it offers only hl:mem_free=1.000G']


def test_a_consumable_with_a_load_value_the_more_restrictive_wins():
    mem = ComplexIndex(complex_fmt.ComplexList(tuple(
        complex_fmt.ComplexAttr("mem_free", "mf", "MEMORY", "<=", "YES", "YES", "0", "0") if a.name == "mem_free" else a
        for a in CX.clist.attrs)))
    # capacity 8G, 1G booked: 7G left, but the host reports only 3G free
    hosts = {"h1": host("h1", values={"mem_free": "8G"}, consumed={"mem_free": 1024.0**3},
                            load={"mem_free": "3G"})}
    plan = scheduler.schedule(snap([qi()], [task(requests={"mem_free": "4G"})], hosts=hosts, complexes=mem))
    assert plan.reasons[1] == ['(-l mem_free=4G) cannot run at host "h1" because it offers only hl:mem_free=3.000G']
    # the load says 7.5G free, the bookkeeping 7G: the bookkeeping wins
    hosts["h1"] = host("h1", values={"mem_free": "8G"}, consumed={"mem_free": 1024.0**3},
                           load={"mem_free": "7.5G"})
    plan = scheduler.schedule(snap([qi()], [task(requests={"mem_free": "7.2G"})], hosts=hosts, complexes=mem))
    assert plan.reasons[1] == ['(-l mem_free=7.2G) cannot run at host "h1" because it offers only hc:mem_free=7.000G']
    plan = scheduler.schedule(snap([qi()], [task(requests={"mem_free": "6G"})], hosts=hosts, complexes=mem))
    assert where(plan) == ["all.q@h1"]


def test_a_configured_eq_value_overrides_the_load_value():
    hosts = {"h1": host("h1", values={"arch": "special"}, load={"arch": "lx-amd64"})}
    assert where(scheduler.schedule(snap([qi()], [task(requests={"arch": "special"})], hosts=hosts))) == ["all.q@h1"]


# ---------------------------------------------------------------- EXCL


def test_an_exclusive_job_needs_a_host_without_jobs_and_keeps_it_alone():
    hosts = {"h1": host("h1", values={"exclusive": "true"}), "h2": host("h2", values={"exclusive": "true"})}
    qis = [qi(host="h1"), qi(host="h2", seq=1)]
    jobs = [task(job=1), task(job=2, requests={"exclusive": "true"}), task(job=3)]
    plan = scheduler.schedule(snap(qis, jobs, hosts=hosts))
    assert where(plan, 1) == ["all.q@h1"] and where(plan, 2) == ["all.q@h2"] and where(plan, 3) == ["all.q@h1"]


def test_exclusive_reasons_in_grid_engines_words():
    used = {"exclusive": 1.0, excl_jobs_key("exclusive"): 1.0}
    hosts = {"h1": host("h1", values={"exclusive": "true"}, consumed=used)}
    plan = scheduler.schedule(snap([qi()], [task(requests={"h_rt": "10"})], hosts=hosts))
    assert plan.reasons[1] == ['(-l h_rt=10) cannot run at host "h1" because '
                               'for default request exclusive resource (exclusive) is already in use']
    hosts = {"h1": host("h1", values={"exclusive": "true"}, consumed={excl_jobs_key("exclusive"): 1.0})}
    plan = scheduler.schedule(snap([qi()], [task(requests={"excl": "1"})], hosts=hosts))
    assert plan.reasons[1] == ['(-l exclusive=1) cannot run at host "h1" because '
                               'exclusive resource (exclusive) is already in use']


def test_exclusive_on_a_queue_instance_only():
    qis = [qi("a.q", values={"exclusive": "true"}), qi("b.q", seq=1)]
    jobs = [task(job=1, requests={"exclusive": "true"}), task(job=2, queues=("a.q",))]
    plan = scheduler.schedule(snap(qis, jobs))
    assert where(plan, 1) == ["a.q@h1"] and where(plan, 2) is None


# ---------------------------------------------------------------- -masterq, qtype


def test_masterq_puts_the_master_task_in_the_named_queue():
    mpi = pe("mpi", "$round_robin", 10)
    qis = [qi("a.q", host="h1", pe_list=("mpi",)), qi("b.q", host="h2", seq=1, pe_list=("mpi",))]
    t = task(pe=("mpi", ((2, 2),)), master_queues=("b.q",))
    assert where(scheduler.schedule(snap(qis, [t], pes=[mpi])))[0] == "b.q@h2"


def test_masterq_outside_the_hard_queue_list_holds_only_the_master():
    mpi = pe("mpi", "$fill_up", 10)
    qis = [qi("a.q", host="h1", pe_list=("mpi",)), qi("m.q", host="h1", seq=1, pe_list=("mpi",))]
    t = task(pe=("mpi", ((3, 3),)), queues=("a.q",), master_queues=("m.q",))
    plan = scheduler.schedule(snap(qis, [t], pes=[mpi]))
    d = plan.dispatches[0]
    assert d.granted == [("m.q", "h1", 1), ("a.q", "h1", 2)]


def test_a_batch_job_never_lands_in_an_interactive_only_queue():
    qis = [qi("i.q", qtype=frozenset({"INTERACTIVE"})), qi("b.q", seq=1)]
    assert where(scheduler.schedule(snap(qis, [task()]))) == ["b.q@h1"]
    plan = scheduler.schedule(snap(qis[:1], [task()]))
    assert plan.reasons[1] == ['cannot run in queue instance "i.q@h1" because it is not of type batch']


def test_disabled_and_error_instances_are_skipped():
    qis = [qi("d.q", states="d"), qi("e.q", states="E", seq=1), qi("ok.q", seq=2)]
    assert where(scheduler.schedule(snap(qis, [task()]))) == ["ok.q@h1"]


# ---------------------------------------------------------------- no plan exceeds a consumable


@given(
    caps=st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)),
    jcap=st.integers(0, 4),
    jobs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans(), st.integers(1, 3),
                            st.booleans()), max_size=8),
)
def test_no_plan_exceeds_a_consumable_on_any_level(caps, jcap, jobs):
    """Per-slot, per-job and EXCL consumables on the global, host and queue
    levels: what the plan books never exceeds any capacity, and an exclusive
    job never shares its object."""
    gcap, hcap, qcap = caps
    mpi = pe("mpi", "$round_robin", 100)
    hosts = {h: host(h, values={"lic": str(hcap), "exclusive": "true"}) for h in ("h1", "h2")}
    qis = [qi(c, host=h, slots=3, seq=i, pe_list=("mpi",), values={"lic": str(qcap), "jlic": str(jcap)})
           for i, (c, h) in enumerate((c, h) for c in ("a.q", "b.q") for h in ("h1", "h2"))]
    pending = []
    for n, (lic, jlic, excl, slots, parallel) in enumerate(jobs, 1):
        req = {"lic": str(lic), "jlic": str(jlic)}
        if excl:
            req["exclusive"] = "true"
        pending.append(task(job=n, requests=req, pe=("mpi", ((slots, slots),)) if parallel else None))
    plan = scheduler.schedule(snap(qis, pending, hosts=hosts, global_values={"lic": str(gcap)}, pes=[mpi]))
    by_job = {t.job_id: t for t in pending}
    g_lic, h_lic, q_lic, q_jlic, host_jobs, host_excl = 0, {}, {}, {}, {}, {}
    for d in plan.dispatches:
        t = by_job[d.job_id]
        for i, (c, h, n) in enumerate(d.granted):
            lic = int(t.requests["lic"]) * n
            g_lic += lic
            h_lic[h] = h_lic.get(h, 0) + lic
            q_lic[(c, h)] = q_lic.get((c, h), 0) + lic
            if i == 0:
                q_jlic[(c, h)] = q_jlic.get((c, h), 0) + int(t.requests["jlic"])
            host_jobs.setdefault(h, set()).add(d.job_id)
            if "exclusive" in t.requests:
                host_excl.setdefault(h, set()).add(d.job_id)
    assert g_lic <= gcap
    assert all(v <= hcap for v in h_lic.values())
    assert all(v <= qcap for v in q_lic.values())
    assert all(v <= jcap for v in q_jlic.values())
    for h, excl in host_excl.items():
        assert host_jobs[h] == excl and len(excl) == 1


def test_a_request_every_instance_of_the_cluster_queue_refuses_names_the_cluster_queue():
    qis = [qi("a.q", host="h1", values={"lic": "3"}), qi("a.q", host="h2", values={"lic": "3"})]
    plan = scheduler.schedule(snap(qis, [task(requests={"lic": "5"})]))
    assert plan.reasons[1] == ['(-l lic=5) cannot run in queue "a.q" because of cluster queue']
