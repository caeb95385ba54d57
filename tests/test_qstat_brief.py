"""A long queue's plain pending jobs as brief jobs (catalogue BRIEF_JOBS,
qstat_out.BriefJobs): the qmaster's brief row is the job's listing dict, and
qstat prints brief jobs byte for byte as it prints those dicts, merged in
pending order, after their trip through the wire's columns."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from cli import qstat as qstat_cmd
from minisge.output import qstat_out
from minisge.protocol import catalogue
from minisge.qmaster import views
from minisge.qmaster.job import Grant, Job, Task

NAMES = ["x", "a-very-long-job-name", "sleep", "\u00e9t\u00e9"]
OWNERS = ["u", "someone-with-a-long-name", "root"]


@st.composite
def jobs(draw) -> list[Job]:
    out = []
    for number in range(1, draw(st.integers(1, 30)) + 1):
        spec: dict = {"job_name": "x"}
        if draw(st.booleans()):
            spec["pe"] = {"name": "smp", "ranges": [[draw(st.integers(1, 4)), 8]]}
        array = draw(st.integers(0, 5))
        if array:
            spec["array"] = [1, 10, 1]
        job = Job(number=number, name=draw(st.sampled_from(NAMES)), owner=draw(st.sampled_from(OWNERS)),
                  uid=1000, group="g", gid=1000,
                  submission_time=1_700_000_000 + draw(st.integers(0, 3)) * 3600.5, spec=spec,
                  pending=range(1, 11) if array else [1])
        job.user_hold, job.operator_hold, job.system_hold = (draw(st.booleans()) for _ in range(3))
        if draw(st.integers(0, 4)) == 0:
            job.predecessors = [number + 100]
        if draw(st.integers(0, 4)) == 0:  # a running task beside the pending ones
            tid = 1 if not array else 10
            job.pending.discard(tid)
            job.add_task(Task(task_id=tid, start_time=1_700_000_100.0, granted=[Grant("all.q", "h", 1)]))
        if array and draw(st.integers(0, 3)) == 0:
            job.set_hold_letters(2, "o")
        out.append(job)
    return out


def both_ways(job_list: list[Job], prios: dict[int, float], states: str = "",
              opts: qstat_out.Options | None = None, full: bool = False) -> tuple[str, str]:
    """The listing from job dicts alone, and from dicts plus brief rows."""
    figures = {j.number: {"prio": prios.get(j.number, 0.0)} for j in job_list}
    dicts = [views.job_row(j, figures[j.number], detail=False) for j in job_list]
    plain = [j for j in job_list if views._plain_pending(j)]
    rest = [views.job_row(j, figures[j.number], detail=False) for j in job_list if j not in plain]
    sent = qstat_out.BriefJobs.of_rows(views.brief_row(j, figures[j.number]) for j in plain).wire()
    catalogue.BRIEF_JOBS.check(sent, "brief_jobs")
    brief = qstat_cmd.reply_brief({"brief_jobs": sent})
    opts = opts or qstat_out.Options()
    queues = ["all.q@h"]
    a_jobs = qstat_cmd.select_jobs(dicts, states, None)
    b_jobs = qstat_cmd.select_jobs(rest, states, None)
    b_brief = qstat_cmd.select_brief(brief, states, set())
    if full:
        q = [{"name": "all.q@h", "qtype": "BIP", "resv": 0, "used": 1, "total": 4, "load_avg": 0.5,
              "arch": "lx-amd64", "states": ""}]
        return (qstat_out.format_full(q, a_jobs, opts),
                qstat_out.format_full(q, b_jobs, opts, brief=b_brief))
    return (qstat_out.format_job_list(a_jobs, queues, opts),
            qstat_out.format_job_list(b_jobs, queues, opts, brief=b_brief))


@settings(max_examples=60, deadline=None)
@given(jobs(), st.dictionaries(st.integers(1, 30), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
       st.sampled_from(["", "p", "hu", "ho", "hj", "r", "hs"]), st.booleans(), st.booleans())
def test_brief_rows_print_as_the_job_dicts_they_stand_for(job_list, prios, states, group, full):
    opts = qstat_out.Options(group_tasks=group)
    a, b = both_ways(job_list, prios, states, opts, full)
    assert a == b


def test_a_brief_row_is_the_dict_of_its_job():
    job = Job(number=7, name="n", owner="o", uid=1, group="g", gid=1, submission_time=5.5,
              spec={"job_name": "n", "pe": {"name": "smp", "ranges": [[2, 4]]}}, pending=[1])
    job.operator_hold = True
    job.predecessors = [3]
    d = views.job_row(job, {"prio": 0.5}, detail=False)
    assert qstat_out.brief_job(views.brief_row(job, {"prio": 0.5})) == d
    assert d["state"] == "hqw" and d["holds"] == "oj" and d["slots"] == 2


def test_reply_jobs_gives_every_job_in_number_order():
    reply = {"jobs": [{"job_number": 4, "tasks": []}],
             "brief_jobs": {"shapes": [["a", "u", 1, 0.0, "qw", ""], ["b", "u", 1, 0.0, "hqw", "u"]],
                            "columns": [2, 0, 0, 9, 0, 1]}}
    assert [j["job_number"] for j in qstat_cmd.reply_jobs(reply)] == [2, 4, 9]
    assert qstat_cmd.reply_jobs(reply)[2] == {"job_number": 9, "name": "b", "owner": "u", "submission_time": 0,
                                              "slots": 1, "prio": 0.0, "state": "hqw", "holds": "u",
                                              "array": False}


def test_the_qmaster_sends_a_long_queue_as_few_shapes_and_a_column_of_ints():
    jobs = {n: Job(number=n, name="sleep", owner="u", uid=1, group="g", gid=1, submission_time=100.0 + n % 2,
                   spec={"job_name": "sleep"}, pending=[1], user_hold=n > 3) for n in range(1, 7)}
    reply = views.brief_listing(jobs.values(), {})
    assert reply == {"shapes": [["sleep", "u", 1, 0.0, "qw", ""], ["sleep", "u", 1, 0.0, "hqw", "u"]],
                     "columns": [1, 101, 0, 2, 100, 0, 3, 101, 0, 4, 100, 1, 5, 101, 1, 6, 100, 1]}
