"""The qmaster's job index (minisge.qmaster.job_index): after any sequence of
submissions, holds, releases, deletions, dispatches, ends, suspensions and
changes made through the qmaster's own requests, the jobs a pass considers,
the immediate jobs and the next execution time are those a full scan of the
jobs finds; and a pass's count of the jobs, which looks only at the jobs the
index filed since the pass before (minisge.qmaster.running_jobs), is what a
count from scratch finds, and so is what the pass's snapshot takes of each
job (RunningJob.snapshot_entry, kept between passes too)."""

from __future__ import annotations

import os
import shutil
import tempfile

import trio
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.config_state import job_duration
from minisge.qmaster.job import Job
from minisge.qmaster.job_index import JobIndex, considered
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.running_jobs import CountedSums, RunningJobs

NOW = 1_000_000.0
REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}

# each step: (what, a job among those there, a number)
STEP = st.tuples(st.sampled_from(["submit", "submit_held", "submit_after", "submit_later", "submit_now",
                                  "submit_array", "hold", "hold_task", "release", "release_task", "delete",
                                  "force_delete", "pass", "end", "end_requeue", "tick", "alter_later",
                                  "suspend", "unsuspend", "suspend_queue", "unsuspend_queue", "alter_priority",
                                  "alter_resources", "reschedule", "submit_after_ad", "alter_after"]),
                 st.integers(0, 5), st.integers(1, 3))


class Execd:
    """A registered execd that takes every message (a deletion's kill)."""

    async def send(self, msg: dict) -> None:
        pass


def full_scan(qm: Qmaster) -> tuple:
    """What the index is to say, from every job."""
    now = qm.clock()
    times = [j.execution_time for j in qm.jobs.values() if j.execution_time > now and j.pending]
    return ({n for n, j in qm.jobs.items() if j.tasks or not j.held},
            {n for n, j in qm.jobs.items() if j.spec.get("now")},
            min(times, default=None),
            {n for n, j in qm.jobs.items() if j.predecessors or j.ad_predecessors})


def indexed(qm: Qmaster) -> tuple:
    """What the index says at a pass's start (the jobs changed and not yet written filed again)."""
    considered_now = {n for n, j in qm.jobs.items() if j.tasks or not j.held}
    assert considered_now <= set(qm.index.considered)  # between passes too: no job a pass needs is missing
    jobs = qm.indexed_jobs()
    assert all(jobs[n] is qm.jobs[n] for n in jobs)
    return (set(jobs), set(qm.index.immediate), qm.index.next_execution_time(qm.jobs, qm.clock()),
            set(qm.index.dependents))  # the jobs a task's end looks at for the successors it releases


def counted_as_from_scratch(qm: Qmaster) -> None:
    """A pass's count (:meth:`RunningJobs.count` with the jobs the index
    filed since the last) is made of each job's present parts, and counts
    the jobs a count from scratch counts."""
    jobs = qm.indexed_jobs()
    counted = qm.config.running_jobs_of(jobs, qm.index.take_changed())
    cfg = qm.config
    durations = (cfg.sched_conf.default_duration_seconds, cfg.sched_conf.duration_offset)
    fresh = RunningJobs(job_duration).count(jobs, cfg.complex_index, durations)
    assert set(counted) == set(fresh)
    for n, rj in counted.items():
        assert rj.key == fresh[n].key, n  # counted from what the job is now
        assert (rj.used, rj.debits, rj.running_tasks) == (fresh[n].used, fresh[n].debits, fresh[n].running_tasks)
    kept, scratch = cfg.running_jobs.sums(counted), CountedSums().update(fresh)  # kept: the changed jobs' part redone
    assert (kept.used, kept.pe_used, kept.booked()) == (scratch.used, scratch.pe_used, scratch.booked())
    # what the snapshot takes of each job, kept in the count between passes, is what a new count takes
    now = qm.clock()
    for free in (0, 1, 3, 100):
        for n, rj in counted.items():
            assert rj.snapshot_entry(jobs[n], free, now, durations[0]) == \
                fresh[n].snapshot_entry(jobs[n], free, now, durations[0]), (n, free)


def step(qm: Qmaster, clock: list[float], what: str, i: int, k: int) -> None:
    numbers = sorted(qm.jobs)
    n = numbers[i % len(numbers)] if numbers else 0
    target = [str(n)]
    if what.startswith("submit"):
        req = dict(REQ)
        if what == "submit_held":
            req["hold"] = True
        elif what == "submit_after" and n:
            req["hold_jid"] = [str(n)]
        elif what == "submit_later":
            req["start_time"] = f"{int(clock[0] + 60 * k)}"
        elif what == "submit_now":
            req["now"] = True
        elif what == "submit_array":
            req["array"] = [1, k + 1, 1]
        elif what == "submit_after_ad" and n and qm.jobs[n].is_array:
            req["array"] = list(qm.jobs[n].spec["array"])
            req["hold_jid_ad"] = [str(n)]
        qm.submit(req, 0, 0)
    elif not n:
        return
    elif what == "hold":
        qm.hold(target, 0, "u")
    elif what == "hold_task":
        qm.hold([f"{n}.{k}"], 0, "o")
    elif what == "release":
        qm.hold(target, 0, "uo", release=True)
    elif what == "release_task":
        qm.hold([f"{n}.{k}"], 0, "uo", release=True)
    elif what in ("delete", "force_delete"):
        trio.run(qm.delete, target, 0, None, what == "force_delete")
    elif what == "pass":
        qm.flush(qm.schedule())
    elif what in ("end", "end_requeue"):
        job = qm.jobs[n]
        for tid in sorted(job.tasks)[:1]:
            qm.task_finished({"job_id": n, "task_id": tid, "exit_status": 99 if what == "end_requeue" else 0,
                              "failed": 0, "usage": {}})
    elif what == "tick":
        clock[0] += 60 * k
    elif what == "alter_after":
        others = [str(m) for m in numbers if m != n][:k]
        qm.qalter({"targets": target, "changes": {"hold_jid": others}}, 0)
    elif what in ("suspend", "unsuspend", "reschedule"):
        qm.qmod_job_control({"action": {"suspend": "sj", "unsuspend": "usj", "reschedule": "rj"}[what],
                             "targets": target}, 0)
    elif what in ("suspend_queue", "unsuspend_queue"):
        qm.qmod_job_control({"action": "sq" if what == "suspend_queue" else "usq", "targets": ["all.q@h1"]}, 0)
    elif what == "alter_priority":
        qm.qalter({"targets": target, "changes": {"priority": -10 * k}}, 0)
    elif what == "alter_resources":
        qm.qalter({"targets": target, "changes": {"hard_resources": {"h_rt": str(100 * k)}}}, 0)
    elif what == "alter_later":
        lines, _rc = qm.qalter({"targets": target, "changes": {"start_time": f"{int(clock[0] + 30 * k)}"}}, 0)
        assert "modified" in "".join(lines), lines


@settings(max_examples=80, deadline=None)
@given(steps=st.lists(STEP, max_size=30))
@example(steps=[("submit_array", 0, 2), ("pass", 0, 1), ("hold", 0, 1), ("end", 0, 1)])  # held, its last task ends
@example(steps=[("submit_held", 0, 1), ("submit_after", 0, 1), ("release", 0, 1), ("pass", 0, 1), ("end", 0, 1)])
@example(steps=[("submit_array", 0, 2), ("submit_after_ad", 0, 1), ("submit", 0, 1), ("alter_after", 2, 1),
                ("pass", 0, 1), ("end", 0, 1), ("pass", 0, 1), ("end", 0, 1), ("pass", 0, 1), ("end", 1, 1)])
@example(steps=[("submit_later", 0, 2), ("submit_later", 0, 1), ("alter_later", 0, 3), ("tick", 0, 1),
                ("pass", 0, 1), ("delete", 1, 1)])
def test_the_index_is_what_a_full_scan_finds(steps):
    root = tempfile.mkdtemp(prefix="minisge-job-index-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
    try:
        cell = Cell(root)
        init_cell(cell, "h1", slots=1, env={})
        clock = [NOW]
        qm = Qmaster(cell, "h1", clock=lambda: clock[0])
        qm.load()
        qm.config.cell_owner_only = False
        qm.execds["h1"] = Execd()  # type: ignore[assignment]  # a registered execd: the host is up
        for what, i, k in steps:
            step(qm, clock, what, i, k)
            assert indexed(qm) == full_scan(qm), (what, i, k)
            counted_as_from_scratch(qm)
        again = Qmaster(cell, "h1", clock=lambda: clock[0])  # and as a restart files the spool's jobs
        again.load()
        assert indexed(again) == full_scan(again)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_held_job_is_not_considered_and_its_release_makes_it_so():
    job = Job(number=1, name="j", owner="u", uid=1, group="g", gid=1, submission_time=0.0, spec={},
              pending=[1], user_hold=True)
    index = JobIndex()
    index.add(job)
    assert not considered(job) and index.considered == {}
    job.user_hold = False
    index.update(job)
    assert index.considered == {1: job}
    index.remove(job)
    assert index.considered == {}
