"""sge_conf(5) max_aj_tasks, max_u_jobs and max_jobs at submission, and big arrays.

8.1.9's qmaster refuses an array of more than ``max_aj_tasks`` tasks (qsub
exits 1) and a job over ``max_jobs`` or the user's ``max_u_jobs`` (qsub exits
25, STATUS_NOTOK_DOAGAIN: try again later), with the messages below (read from
the real sge_qmaster 8.1.9).  An array's pending tasks are ranges: deleting
millions of them, or a task range of them, answers at once.
"""

from __future__ import annotations

import os
import re

import pytest
from cellutil import Cell

pytestmark = pytest.mark.root


def set_global(c: Cell, **values: str) -> None:
    conf = c.run("qconf", "-sconf").out
    for name, value in values.items():
        conf, n = re.subn(rf"(?m)^{name} .*$", f"{name:<28} {value}", conf)
        assert n == 1, name
    path = os.path.join(c.work, "global")
    with open(path, "w") as f:
        f.write(conf)
    r = c.run("qconf", "-Mconf", path)
    assert r.rc == 0, r


def test_an_array_over_max_aj_tasks_is_refused(cell):
    r = cell.run("qsub", "-t", "1-75001", "-b", "y", "/bin/true")
    assert (r.rc, r.out, r.err) == (
        1, "", "Unable to run job: job rejected: you tried to submit a job with more than 75000 tasks\nExiting.\n")
    r = cell.run("qsub", "-t", "1-10000000", "-b", "y", "/bin/true")
    assert r.rc == 1 and "more than 75000 tasks" in r.err
    assert cell.run("qstat").out == ""
    # the limit counts tasks, not ids: 1-150000:2 is 75,000 tasks
    job = cell.submit("-h", "-t", "1-150000:2", "-b", "y", "/bin/true")
    assert cell.run("qdel", str(job)).rc == 0


def test_max_aj_tasks_from_the_configuration(cell):
    set_global(cell, max_aj_tasks="10")
    r = cell.run("qsub", "-t", "1-11", "-b", "y", "/bin/true")
    assert r.rc == 1 and r.err == ("Unable to run job: job rejected: you tried to submit a job with more than 10 "
                                   "tasks\nExiting.\n")
    cell.submit("-h", "-t", "1-10", "-b", "y", "/bin/true")


def test_a_job_over_max_u_jobs_is_refused_with_exit_25(cell, users):
    set_global(cell, max_u_jobs="2")
    user, other = users[0].pw_name, users[1].pw_name
    for _ in range(2):
        cell.submit("-h", "-b", "y", "/bin/true", user=user)
    r = cell.run("qsub", "-h", "-b", "y", "/bin/true", user=user)
    assert (r.rc, r.err) == (25, "Unable to run job: job rejected: only 2 jobs are allowed per user "
                                 "(current job count: 2)\nExiting.\n")
    cell.submit("-h", "-b", "y", "/bin/true", user=other)  # another user's count
    # an array counts once
    r = cell.run("qsub", "-h", "-t", "1-5", "-b", "y", "/bin/true", user=other)
    assert r.rc == 0, r


def test_a_job_over_max_jobs_is_refused_with_exit_25(cell, users):
    set_global(cell, max_jobs="2")
    cell.submit("-h", "-b", "y", "/bin/true")
    cell.submit("-h", "-b", "y", "/bin/true", user=users[0].pw_name)
    r = cell.run("qsub", "-h", "-b", "y", "/bin/true", user=users[1].pw_name)
    assert (r.rc, r.err) == (25, "Unable to run job: job rejected: only 2 jobs are allowed per cluster\nExiting.\n")
    assert len(cell.qstat_states()) == 2


def test_millions_of_pending_tasks_are_deleted_at_once(cell):
    # max_aj_tasks 0: no limit, as sge_conf(5) says; the tasks are ranges, never a list
    set_global(cell, max_aj_tasks="0")
    job = cell.submit("-h", "-t", "1-10000000", "-b", "y", "/bin/true")
    r = cell.run("qstat", "-u", "*")
    assert "1-10000000:1" in r.out, r
    # a range of tasks (O(n^2) in the tasks before), then the job
    r = cell.run("qdel", f"{job}.2-9999999")
    assert r.rc == 0, r
    r = cell.run("qstat", "-u", "*")
    assert r.out.splitlines()[2].endswith(" 1,10000000"), r.out  # the two tasks left
    r = cell.run("qdel", str(job))
    assert r.rc == 0 and "has deleted job" in r.out, r
    assert cell.run("qstat", "-u", "*").out == ""
    # and the cell goes on
    other = cell.submit("-b", "y", "/bin/true")
    cell.wait_records(other)
