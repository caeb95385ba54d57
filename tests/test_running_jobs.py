"""What the passes count of each job, kept between passes
(minisge.qmaster.running_jobs): after any change of the jobs, the snapshot and
load control see what a count from scratch sees."""

from __future__ import annotations

from types import SimpleNamespace

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats import resource_quota
from minisge.formats.complex import Consumable
from minisge.qmaster.config_state import job_duration
from minisge.qmaster.job import ERROR, RUNNING, Grant, Job, Task
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.running_jobs import CountedSums, RunningJobs

HOSTS = ("h1", "h2")


def make_qmaster(root: str) -> Qmaster:
    cell = Cell(root)
    init_cell(cell, "h1", slots=4, env={})
    qm = Qmaster(cell, "h1")
    qm.load()
    cfg = qm.config
    # a consumable with a default (booked by every job), reservation and a quota:
    # every part of the snapshot that counts running jobs is in use
    cfg.complexes = attrs.evolve(cfg.complexes, attrs=tuple(
        attrs.evolve(a, consumable=Consumable.YES, default="1G") if a.name == "virtual_free" else a
        for a in cfg.complexes.attrs))
    cfg.sched_conf = attrs.evolve(cfg.sched_conf, max_reservation=2)
    cfg.rqs["q"] = resource_quota.parse("{\n   name q\n   enabled TRUE\n   limit users {*} to slots=100\n}\n")
    for h in HOSTS:
        qm.execds[h] = object()  # type: ignore[assignment]
    return qm


def job(n: int) -> Job:
    return Job(number=n, name=f"j{n}", owner="alice", uid=1000, group="users", gid=100, submission_time=float(n),
               spec={"hard_resources": {"h_rt": "100"}}, pending=[1, 2])


# each step: (what, job index, a number)
STEP = st.tuples(st.sampled_from(["dispatch", "end", "suspend", "resume", "alter", "priority", "pe", "error",
                                  "rsmap", "leave", "queues", "soft", "reserve", "exec_time", "hold"]),
                 st.integers(0, 2), st.integers(1, 3))


def apply(jobs: dict[int, Job], what: str, i: int, k: int) -> None:
    """One change of the kinds the qmaster makes (new objects where it makes new ones)."""
    n = i + 1
    if n not in jobs:
        jobs[n] = job(n)
    j = jobs[n]
    tasks = list(j.tasks.values())
    if what == "dispatch" and j.pending:
        tid = min(j.pending)
        j.pending.discard(tid)
        j.add_task(Task(task_id=tid, state=RUNNING, start_time=float(k),
                            granted=[Grant("all.q", HOSTS[k % 2], k)] + ([Grant("all.q", HOSTS[(k + 1) % 2], 1)]
                                                                          if k > 1 else []),
                            granted_pe="" if k == 1 else "make"))
    elif what == "end" and tasks:
        t = tasks[0]
        t.granted = []
        del j.tasks[t.task_id]
    elif what == "suspend" and tasks:
        tasks[0].suspended_by.add("job")
    elif what == "resume" and tasks:
        tasks[0].suspended_by.discard("job")
    elif what == "alter":
        # (k == 3: an amount that is not a whole number, which the kept sums cannot take away exactly)
        j.spec["hard_resources"] = {"h_rt": str(100 * k), "virtual_free": f"{k}G" if k != 3 else "0.1"}
    elif what == "priority":
        j.priority = -k
    elif what == "pe":
        j.spec["pe"] = {"name": "make", "ranges": [[1, k]]}
    elif what == "error" and tasks:
        tasks[0].state = ERROR
    elif what == "rsmap" and tasks:
        tasks[0].granted = [attrs.evolve(g, resource_map={"gpu": [str(k)]}) for g in tasks[0].granted]
    elif what == "leave":
        del jobs[n]
    elif what == "queues":
        j.spec["hard_queues"] = [f"q{k}.q"]
    elif what == "soft":
        j.spec["soft_resources"] = {"arch": f"a{k}"}
    elif what == "reserve":
        j.spec["reserve"] = not j.spec.get("reserve")
    elif what == "exec_time":
        j.execution_time = float(k)
    elif what == "hold":
        j.set_hold_letters(None, "" if j.hold_letters else "u")


def counted_parts(qm: Qmaster) -> tuple:
    snap = qm.config.snapshot(qm.jobs, qm.execds, now=50.0)
    return (
        [(q.name, q.used, dict(q.consumed)) for q in snap.qinstances],
        {h: (dict(i.consumed), dict(i.rsmap_used)) for h, i in snap.hosts.items()},
        dict(snap.global_consumed),
        {n: p.used for n, p in snap.pes.items()},
        snap.running, snap.running_tasks, snap.pending,
        snap.quotas.running if snap.quotas else None,
        qm.load_control.running_tasks(),
    )


@pytest.fixture(scope="module")
def qm(tmp_path_factory) -> Qmaster:
    return make_qmaster(str(tmp_path_factory.mktemp("root")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, max_size=25))
def test_what_is_kept_is_what_a_count_from_scratch_finds(qm, steps):
    qm.jobs.clear()
    for what, i, k in steps:
        apply(qm.jobs, what, i, k)
        kept = counted_parts(qm)  # the memo of the passes before
        qm.config.running_jobs = RunningJobs(job_duration)
        assert kept == counted_parts(qm), (what, i, k)


def held(*amounts: float) -> SimpleNamespace:
    """What a pass counts of a job holding one slot of all.q@h1 with these amounts of a consumable."""
    return SimpleNamespace(used=(("all.q@h1", 1),), pe_used=(), resource_maps=(),
                           debits=tuple(("all.q@h1", "h1", (("lic", a),)) for a in amounts))


def test_kept_sums_take_away_what_is_not_a_whole_number_exactly():
    """(0.1 + 0.2) - 0.1 is not 0.2 in floats: the kept sums of jobs with such
    amounts are those of a count from scratch all the same."""
    sums = CountedSums()
    a, b = held(0.1), held(0.2)
    sums.update({1: a, 2: b})  # type: ignore[dict-item]
    assert sums.update({2: b}).booked() == CountedSums().update({2: b}).booked() == (  # type: ignore[dict-item]
        {"all.q@h1": {"lic": 0.2}}, {"h1": {"lic": 0.2}}, {"lic": 0.2})
    assert sums.update({}).booked() == ({}, {}, {}) and sums.used == {}
