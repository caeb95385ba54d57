"""A pending job's memory (issue 14: 100,000 pending jobs in 100 MB): like
jobs read from the spool share one request (job.SharedSpec), empty
containers are shared, and none of that shows: a change to one job is its own."""

from __future__ import annotations

import copy
import gc
import tracemalloc

import pytest
from qmaster_harness import small_qmaster

from minisge.formats.submit_options import parse_alteration
from minisge.qmaster import job as job_model
from minisge.qmaster.job import Grant, Job, SharedSpec, Task
from minisge.qmaster.qmaster import Qmaster

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp", "hold": True}


@pytest.fixture
def qm(mem_tmp_path):
    return small_qmaster(mem_tmp_path / "root")


def qalter_args(argv: list[str]) -> dict:
    return parse_alteration(argv, cwd="/tmp", env={"HOME": "/h"})


def restarted(qm: Qmaster) -> Qmaster:
    again = Qmaster(qm.cell, "h1")
    again.load()
    again.config.cell_owner_only = False
    return again


def test_like_jobs_read_from_the_spool_share_one_request_and_a_change_is_one_jobs(qm):
    ids = [int(qm.submit(dict(REQ), 0, 0)["job_id"]) for _ in range(3)]
    other = int(qm.submit(dict(REQ, job_name="y"), 0, 0)["job_id"])
    again = restarted(qm)
    specs = [again.jobs[n].spec for n in ids]
    assert type(specs[0]) is SharedSpec and specs[0] is specs[1] is specs[2]
    assert again.jobs[other].spec is not specs[0] and again.jobs[other].name == "y"
    with pytest.raises(TypeError):
        specs[0]["job_name"] = "z"  # shared: never changed in place
    lines, rc = again.qalter(qalter_args(["-N", "renamed", str(ids[1])]), 0)
    assert rc == 0, lines
    assert again.jobs[ids[1]].name == "renamed" and again.jobs[ids[1]].spec["job_name"] == "renamed"
    assert [again.jobs[n].spec["job_name"] for n in (ids[0], ids[2])] == ["x", "x"]
    assert again.jobs[ids[0]].spec is again.jobs[ids[2]].spec
    # and so it stays after another restart: each job as it was changed
    third = restarted(again)
    assert [third.jobs[n].name for n in ids] == ["x", "renamed", "x"]


def test_a_refused_change_leaves_the_shared_request_as_it_was(qm):
    ids = [int(qm.submit(dict(REQ), 0, 0)["job_id"]) for _ in range(2)]
    again = restarted(qm)
    shared = again.jobs[ids[0]].spec
    lines, rc = again.qalter(qalter_args(["-pe", "no_such_pe", "2", str(ids[0])]), 0)
    assert rc != 0, lines
    assert again.jobs[ids[0]].spec is shared and "pe" not in shared


def test_jobs_of_every_shape_read_back_as_they_were_written(qm):
    """The spool's quick reading of a plain job and its full reading of any
    other give the jobs that were written."""
    plain = Job(number=1, name="a", owner="u", uid=1000, group="g", gid=1000, submission_time=5.5,
                spec={"job_name": "a", "binary": True}, pending=[1])
    held = Job(number=2, name="b", owner="u", uid=1000, group="g", gid=1000, submission_time=6,
               spec={"job_name": "b", "pe": {"name": "smp", "ranges": [[2, 4]]}}, pending=[1],
               user_hold=True, predecessors=[1], execution_time=99.0)
    array = Job(number=3, name="c", owner="u", uid=1000, group="g", gid=1000, submission_time=7.0,
                spec={"job_name": "c", "array": [1, 9, 2]}, pending=job_model.RangeList.of_array(1, 9, 2))
    array.set_hold_letters(7, "o")
    array.requeue(9, restarted=2)
    running = Job(number=4, name="d", owner="u", uid=1000, group="g", gid=1000, submission_time=8.0,
                  spec={"job_name": "d"}, pending=[])
    running.add_task(Task(task_id=1, start_time=10.0, granted=[Grant("all.q", "h1", 1)], suspended_by={"job"}))
    for job in (plain, held, array, running):
        qm.jobs[job.number] = job
        qm.write_job(job)
    again = restarted(qm)
    for job in (plain, held, array, running):
        assert again.jobs[job.number] == job


def test_the_shared_empty_containers_refuse_to_grow_and_a_job_gets_its_own():
    job = Job(number=1, name="a", owner="u", uid=1, group="g", gid=1, submission_time=0.0, spec={}, pending=[1])
    other = Job(number=2, name="a", owner="u", uid=1, group="g", gid=1, submission_time=0.0, spec={}, pending=[1])
    assert job.tasks is other.tasks and job.predecessors is other.predecessors and job.ad_held is other.ad_held
    for grow in (lambda: job.tasks.__setitem__(1, None), lambda: job.predecessors.append(3),
                 lambda: job.ad_held.add(1), lambda: job.task_holds.setdefault(1, "u")):
        with pytest.raises(TypeError):
            grow()
    job.add_task(Task(task_id=1))
    job.requeue(1, restarted=1)
    job.set_hold_letters(1, "u")
    job.predecessors = [5]
    assert (list(job.tasks), job.restarted_pending, job.task_holds, job.predecessors) == ([1], {1: 1}, {1: "u"}, [5])
    assert (other.tasks, other.restarted_pending, other.task_holds, other.predecessors) == ({}, {}, {}, [])
    clone = copy.deepcopy(other)
    assert clone.tasks is other.tasks and clone == other


def test_a_plain_pending_job_read_from_the_spool_costs_under_a_kilobyte(qm):
    """100,000 like jobs in 100 MB: the request is shared, so a job is its own
    record, its pending range, its number and dates (about 0.5 kB; it was 3 kB)."""
    for _ in range(1000):
        qm.submit(dict(REQ), 0, 0)
    again = Qmaster(qm.cell, "h1")
    again.config.load()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        again.load()
        gc.collect()
        per_job = (tracemalloc.get_traced_memory()[0] - before) / len(again.jobs)
    finally:
        tracemalloc.stop()
    assert len(again.jobs) == 1000
    assert per_job < 1000, per_job


def test_range_lists_share_the_bounds_of_their_first_range_until_one_changes():
    RangeList = job_model.RangeList
    a, b, c = RangeList([(1, 1, 1)]), RangeList([(1, 1, 1)]), RangeList.of_array(1, 9, 2)
    c2 = c.copy()
    a.add(2)
    b.discard(1)
    c.discard(5)
    c2.add_range(11, 13)
    assert (list(a), list(b), list(c), list(c2)) == ([1, 2], [], [1, 3, 7, 9], [1, 3, 5, 7, 9, 11, 13])
    assert list(job_model.RangeList([(1, 1, 1)])) == [1]
    assert list(job_model.RangeList.of_array(1, 9, 2)) == [1, 3, 5, 7, 9]
    d = job_model.RangeList([(1, 1, 1)])
    d.clear()
    d.add(4)
    assert list(d) == [4] and list(job_model.RangeList([(1, 1, 1)])) == [1]
