"""The fast path of a scheduling pass (minisge.scheduler.category_cache, dispatch_order)
against the plain reference path (caches off): the same plan -- the same
dispatches in the same order and the same reasons -- on random small
snapshots; and the early exit of a full cluster keeps qstat -j's reasons."""

from __future__ import annotations

import dataclasses
import math
import os
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scheduler_harness import complexes, host, pe, qi, snap, task

from minisge import scheduler
from minisge.formats import access_list
from minisge.formats import resource_quota as rq
from minisge.scheduler import dispatch_order, job_order, quota
from minisge.scheduler.snapshot import ScheduleEntry

EXTRA = """\
lic       lic  INT    <=   YES    YES 0 0
jlic      jlic INT    <=   YES    JOB 0 0
fast      fast BOOL   ==   YES    NO  0 0
color     col  STRING ==   YES    NO  NONE 0
"""
DYNAMIC = """\
dlic      dlic INT    <=   YES    YES 1 0
exclusive excl BOOL   EXCL YES    YES 0 1000
gpu       gpu  INT    <=   FORCED YES 0 0
"""
STATIC_CX = complexes(EXTRA)
DYNAMIC_CX = complexes(EXTRA + DYNAMIC)
ACLS = {"staff": access_list.AccessList(name="staff", entries=("alice", "@wheel"))}
HOSTS = ("h1", "h2", "h3")
CQUEUES = ("a.q", "b.q")


def plain(plan) -> tuple:
    return ([(d.job_id, d.task_id, d.granted, d.pe) for d in plan.dispatches], plan.reasons, plan.reservations)


@st.composite
def qinstances(draw):
    out = []
    for seq, cq in enumerate(CQUEUES):
        for h in HOSTS:
            slots = draw(st.sampled_from([0, 1, 2, 3, 4, 4, 6]))
            values = {"qname": cq, "hostname": h,
                      "h_rt": draw(st.sampled_from(["INFINITY", "INFINITY", "1:0:0"]))}
            for name, choices in (("lic", ["1", "3"]), ("fast", ["TRUE", "FALSE"]), ("color", ["red", "blue"]),
                                  ("gpu", ["2"]), ("exclusive", ["TRUE"])):
                if draw(st.integers(0, 3)) == 0:
                    values[name] = draw(st.sampled_from(choices))
            out.append(qi(
                cq, h, slots, draw(st.sampled_from([0, 0, slots // 2, slots])), seq,
                qtype=draw(st.sampled_from([frozenset({"BATCH", "INTERACTIVE"})] * 3 + [frozenset({"INTERACTIVE"})])),
                pe_list=tuple(draw(st.lists(st.sampled_from(["smp", "mpi", "two"]), unique=True, max_size=3))),
                states=draw(st.sampled_from(["", "", "", "", "", "", "", "d", "u", "a"])),
                values=values,
                consumed=draw(st.sampled_from([{}, {}, {"lic": 1.0}])),
                user_lists=draw(st.sampled_from([(), (), (), (), (), ("staff",)])),
                xprojects=draw(st.sampled_from([(), (), ("p2",)])),
                projects=draw(st.sampled_from([(), (), (), (), (), ("p1",)])),
            ))
    return out


@st.composite
def pending(draw):
    tasks = []
    for job in range(1, draw(st.integers(1, 14)) + 1):
        requests = {}
        for name, choices in (("h_rt", ["0:30:0", "2:0:0"]), ("arch", ["lx-amd64", "lx-arm*"]),
                              ("lic", ["1", "2"]), ("fast", ["true"]), ("col", ["red"]), ("gpu", ["1"]),
                              ("dlic", ["1"]), ("excl", ["true"]), ("h_vmem", ["1G"]),
                              # load values: compared with the request times the slots
                              ("np_load_avg", ["0.3", "0.6"]), ("mem_free", ["1G", "2G"])):
            if draw(st.integers(0, 9)) == 0:
                requests[name] = draw(st.sampled_from(choices))
        pe = draw(st.sampled_from([None, None, None, ("smp", ((1, 4),)), ("mpi", ((2, 6),)), ("t*", ((2, 4),)),
                                   ("smp", ((2, 2), (4, 4)))]))
        common = dict(
            owner=draw(st.sampled_from(["alice", "bob", "carol"])),
            group=draw(st.sampled_from(["users", "wheel"])),
            project=draw(st.sampled_from([None, None, "p1", "p2"])),
            priority=draw(st.sampled_from([0, 0, -100, 100])),
            requests=requests,
            queues=draw(st.sampled_from([(), (), (), ("b.q",), ("a.q@h2",), ("*@h1", "b.q")])),
            pe=pe,
            soft_requests=draw(st.sampled_from([{}, {}, {}, {"col": "red"}, {"arch": "lx-arm*"}])),
            soft_queues=draw(st.sampled_from([(), (), (), ("b.q",)])),
            master_queues=draw(st.sampled_from([(), (), (), ("a.q",)])) if pe else (),
            submission_time=float(draw(st.integers(0, 5))),
            deadline=draw(st.sampled_from([0.0, 0.0, 200.0])),
            reserve=draw(st.sampled_from([False, False, True])),  # -R y
            duration=draw(st.sampled_from([math.inf, 100.0, 1000.0])),
        )
        ntasks = draw(st.integers(1, 3))
        for tid in range(1, ntasks + 1):
            tasks.append(task(job, tid, held=draw(st.integers(0, 9)) == 0, **common))
    return tasks


@st.composite
def snapshots(draw):
    cx = draw(st.sampled_from([STATIC_CX, DYNAMIC_CX]))
    hosts = {h: host(h, load={"arch": draw(st.sampled_from(["lx-amd64", "lx-arm64"])),
                                  "np_load_avg": draw(st.sampled_from(["0.10", "0.50", "0.90"])),
                                  "mem_free": draw(st.sampled_from(["3G", "5G"]))},
                         values=draw(st.sampled_from([{}, {}, {"lic": "2"}, {"color": "red"}])),
                         consumed=draw(st.sampled_from([{}, {}, {"lic": 1.0}])),
                         user_lists=draw(st.sampled_from([(), (), (), (), ("staff",)])),
                         xuser_lists=draw(st.sampled_from([(), (), (), ("staff",)])),
                         projects=draw(st.sampled_from([(), (), (), (), ("p1",)])),
                         xprojects=draw(st.sampled_from([(), (), (), ("p2",)])))
             for h in HOSTS}
    pes = [pe("smp", "$pe_slots", draw(st.sampled_from([0, 4, 99]))),
           pe("mpi", draw(st.sampled_from(["$round_robin", "$fill_up", "2"])), 99, draw(st.integers(0, 3)),
              job_is_first_task=draw(st.booleans())),
           pe("two", "$fill_up", 8, user_lists=draw(st.sampled_from([(), ("staff",)])))]
    quotas = None
    if draw(st.integers(0, 3)) == 0:
        limit = draw(st.sampled_from(["users {*} to slots=3", "hosts {*} to slots=2", "to lic=2",
                                      "projects p1 to slots=1"]))
        quotas = quota.QuotaContext(sets=(rq.parse(f"{{\n   name         q\n   enabled      TRUE\n"
                                                   f"   limit        {limit}\n}}\n"),), complexes=cx, running=())
    running = tuple(job_order.JobFacts(100 + i, 0, 0.0, 3.0) for i in range(draw(st.integers(0, 2))))
    qis = draw(qinstances())
    # what the used slots free when (resource reservation: sched_conf max_reservation)
    ends = tuple(ScheduleEntry(200 + i, 1, "RUNNING", 50.0, draw(st.sampled_from([30.0, 100.0, 1000.0])),
                               ((q.cqueue, q.host, q.used),)) for i, q in enumerate(qis) if q.used)
    return snap(
        qis, draw(pending()), hosts=hosts, complexes=cx, pes=pes,
        global_values=draw(st.sampled_from([{}, {}, {"lic": "4"}])), global_consumed={},
        queue_sort_method=draw(st.sampled_from(["seqno", "load"])),
        load_of=lambda h: float(h.load.get("np_load_avg", 9999)), acls=ACLS, quotas=quotas, now=100.0,
        weights=job_order.Weights(priority=draw(st.sampled_from([0.0, 1.0])), urgency=0.1, ticket=0.01,
                                  waiting_time=draw(st.sampled_from([0.0, 0.278])), deadline=3600000.0),
        running=running, max_reservation=draw(st.sampled_from([0, 0, 2])), running_tasks=ends,
        global_host=host("global", user_lists=draw(st.sampled_from([(), (), (), ("staff",)])),
                         xprojects=draw(st.sampled_from([(), (), (), ("p1",)]))),
    )


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_the_fast_pass_makes_the_plan_of_the_plain_pass(snap):
    reference = plain(scheduler.schedule(snap, caches=False))
    fast = plain(scheduler.schedule(snap))
    assert fast == reference


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(), st.data())
def test_the_one_sweep_dispatch_order_is_the_order_of_the_figures(snap, data):
    if data.draw(st.booleans()):  # the tasks out of job and task number order (a job back in the index, qrls)
        snap = dataclasses.replace(snap, pending=tuple(data.draw(st.permutations(snap.pending))))
    reference = job_order.dispatch_order([t for t in snap.pending if not t.held], scheduler.dispatch_figures(snap))
    assert dispatch_order.dispatch_order(snap) == reference
    figs = scheduler.dispatch_figures(snap)
    assert dispatch_order.priorities(snap) == {j: figs[j].prio for j in dispatch_order.priorities(snap)}


def test_a_full_cluster_gives_every_waiting_job_the_reasons_of_the_plain_pass():
    """The bench's cell (100 hosts, 2 queues, half busy) with 2,000 pending
    jobs: the first 100 start, the others wait with qstat -j's reasons."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))
    import tempfile

    import bench_scheduler as bench

    with tempfile.TemporaryDirectory() as tmp:
        config, execds = bench.make_config(os.path.join(tmp, "root"))
        snap = config.snapshot(bench.make_jobs(2000), execds, now=1_700_100_000.0)
    reference = plain(scheduler.schedule(snap, caches=False))
    fast = plain(scheduler.schedule(snap))
    assert len(fast[0]) == 100 and len(fast[1]) == 1900
    assert fast == reference
    reasons = fast[1][max(fast[1])]
    assert 'queue instance "all.q@host099" dropped because it is full' in reasons


def test_the_lazy_host_walk_of_a_pe_job_takes_every_instance_of_a_host():
    """$pe_slots and $fill_up with caches on and off: the best host's two
    queue instances together hold the job (not the next host alone)."""
    qis = [qi(cq, h, slots, seq=seq, pe_list=("smp", "fill"))
           for cq, h, slots, seq in (("a.q", "h1", 2, 0), ("a.q", "h2", 4, 0), ("b.q", "h1", 2, 1))]
    for rule, want in (("$pe_slots", 4), ("$fill_up", 6)):
        s = snap(qis, [task(pe=("smp", ((want, want),)))], complexes=STATIC_CX, pes=[pe("smp", rule, 99)])
        for on in (True, False):
            plan = scheduler.schedule(s, caches=on)
            granted = plan.dispatches[0].granted
            assert granted[:2] == [("a.q", "h1", 2), ("b.q", "h1", 2)], (rule, on, granted)


def test_a_request_of_a_load_value_counts_the_slots_in_the_fast_pass_too():
    """complex(5): a load value is compared with the request times the slots,
    so the category's kept -l verdict of an instance holds for one slot
    count only there (a fixed value's holds for all)."""
    s = snap([qi("all.q", "h1", 4, 0, 0, pe_list=("mpi",))],
             [task(1, 1, requests={"mem_free": "2G", "h_rt": "100"}, pe=("mpi", ((1, 4),)))],
             hosts={"h1": host("h1", load={"mem_free": "5G"})}, complexes=complexes(), pes=[pe("mpi", "$fill_up")])
    for caches in (False, True):
        plan = scheduler.schedule(s, caches=caches)
        assert [d.granted for d in plan.dispatches] == [[("all.q", "h1", 2)]], caches  # 2 x 2G <= 5G < 3 x 2G
