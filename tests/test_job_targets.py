"""The job_task_list of qdel, qhold, qrls and qmod (minisge.qmaster.job_targets,
minisge.formats.submit_options.is_job_task), per-task holds of a job
(minisge.qmaster.job) and 8.1.9's way of changing them task by task
(minisge.qmaster.qmaster._hold_changes is private: exercised through
Qmaster.hold in the integration tests; here the model it relies on)."""

from __future__ import annotations

import io
import sys

import pytest

from cli import qdel
from minisge.formats.submit_options import is_job_task
from minisge.qmaster import job_targets
from minisge.qmaster.job import Job
from minisge.qmaster.range_list import RangeList


def job(number: int = 5, name: str = "run-1", owner: str = "alice", array: tuple[int, int, int] | None = None,
        **kw) -> Job:
    spec = {"array": list(array)} if array else {}
    pending = RangeList.of_array(*array) if array else RangeList.of_array(1, 1, 1)
    return Job(number=number, name=name, owner=owner, uid=1000, group="g", gid=1000, submission_time=0.0,
               spec=spec, pending=pending, **kw)


@pytest.mark.parametrize("word,ok", [
    ("5", True), ("5.3", True), ("5.1-4:2", True), ("5.0", True), ("run-*", True), ("-bogus", True),
    ("73abc", False), ("73.x", False), ("73.1-x", False), ("99999.1:2", True),
])
def test_a_job_task_is_an_id_with_a_range_or_a_name(word, ok):
    assert is_job_task(word) is ok


def test_parse_gives_the_job_and_its_one_task_range():
    t = job_targets.parse("5.1-4:2")
    assert (t.ref, t.first, t.last, t.step, t.is_id) == ("5", 1, 4, 2, True)
    assert [i for i in range(1, 7) if i in t.tasks] == [1, 3]
    assert job_targets.parse("5.0").tasks is None  # every task, as 8.1.9 reads .0
    assert job_targets.parse("run-*").is_id is False
    assert job_targets.parse("5.x") is None


@pytest.mark.parametrize("word", ["²", "1²", "٣", "²⁵.1", "1.²"])
def test_digits_other_than_0_to_9_are_a_name_not_an_id(word):
    # str.isdigit takes them and int() refused '²': qresub '²' was an internal error (found by the fuzz)
    jobs = [job(1, "run-1")]
    t = job_targets.parse(word)
    if t is not None:
        assert job_targets.jobs_named(jobs, t) == []


def test_names_are_patterns_and_users_narrow_them():
    jobs = [job(1, "run-1"), job(2, "run-2", owner="bob"), job(3, "other")]
    assert [j.number for j in job_targets.jobs_named(jobs, job_targets.parse("run-*"))] == [1, 2]
    assert [j.number for j in job_targets.jobs_named(jobs, job_targets.parse("run-*"), ["alice"])] == [1]
    assert [j.number for j in job_targets.jobs_named(jobs, job_targets.parse("2"), ["*"])] == [2]
    assert [j.number for j in job_targets.jobs_named(jobs, job_targets.parse("2"), ["a*"])] == []


@pytest.mark.parametrize("target,users,text", [
    ("999", None, 'denied: job "999" does not exist'),
    ("5.4", None, 'job "5" task "4" does not exist'),
    ("5.1-3", None, 'job "5" task id range "1-3:1" comprises no tasks'),
    ("nosuch", None, "The job nosuch of user(s) alice does not exist"),
    ("5", ["bob"], "The job 5 of user(s) bob does not exist"),
    ("5.4", ["bob"], 'job "5" task "4" does not exist for user(s) bob'),
    (None, ["nobody", "x"], "There is no job registered for the following users: nobody,x"),
    (None, ["*"], "There are no jobs registered"),
])
def test_what_qdel_says_when_nothing_is_named(target, users, text):
    parsed = job_targets.parse(target) if target else None
    assert job_targets.nothing_named(parsed, users, "alice") == text


@pytest.mark.parametrize("ids,text", [
    ([1, 2, 3], "1-3:1"), ([5, 7], "5,7"), ([1, 3, 5, 7], "1-7:2"), ([1, 2, 3, 5], "1-3:1,5"), ([4], "4"),
])
def test_task_ids_print_as_8_1_9s_range_lists(ids, text):
    assert job_targets.task_ids_text(ids) == text


def test_a_task_of_an_array_has_holds_of_its_own():
    j = job(array=(1, 6, 1), user_hold=True)
    assert j.held and j.held_pending() is None  # the whole job waits
    j.set_hold_letters(2, "")
    assert not j.held and j.held_pending() == {1, 3, 4, 5, 6}
    j.set_hold_letters(5, "uo")
    assert (j.task_hold_letters(5), j.task_hold_letters(1), j.task_hold_letters(2)) == ("uo", "u", "")
    for tid in (1, 3, 4, 5, 6):
        j.set_hold_letters(tid, "")
    j.normalise_holds()  # all alike again: the job's own holds, no task's
    assert (j.hold_letters, j.task_holds, j.held_pending()) == ("", {}, set())


def test_a_task_that_leaves_forgets_its_hold():
    j = job(array=(1, 3, 1))
    j.set_hold_letters(2, "u")
    j.pending.discard(2)
    j.forget_task_hold(2)
    assert j.task_holds == {} and j.held_pending() == set()


def test_qdel_reads_the_job_task_list_as_8_1_9():
    assert qdel.job_task_list(["5,6.2", "7", "-t", "1-3"], "qdel") == (["5", "6.2", "7.1-3"], None)
    assert qdel.job_task_list(["-t", "1-3"], "qdel")[1] == ("found lonely '-t 1-3' option "
                                                            "(The -t option needs a leading job name).")
    assert qdel.job_task_list(["73.x"], "qdel")[1] == 'ERROR! "73.x" is an invalid job-task identifier'


def test_qdel_f_of_a_user_who_may_not_force_waits_a_minute(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    slept = []
    qdel.wait_before_forcing(sleep=slept.append)
    assert (out.getvalue(), slept) == ("." * 12 + "\n", [5] * 12)
