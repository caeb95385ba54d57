"""qsub -hold_jid and -hold_jid_ad (submit(1); 8.1.9's sge_task_depend.c and
job_verify_predecessors_ad): the pure rules, then the qmaster on a real spool."""

from __future__ import annotations

import pytest
import trio

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.output import job_detail_out
from minisge.qmaster import job_dependencies as jd
from minisge.qmaster import views
from minisge.qmaster.config_state import RequestError
from minisge.qmaster.qmaster import Qmaster


# ---------------------------------------------------------------- pure rules
def test_the_same_range_is_the_same_first_and_last_task():
    assert jd.same_range((1, 10, 1), (1, 10, 2))
    assert not jd.same_range((1, 10, 1), (1, 9, 1))
    assert not jd.same_range((2, 10, 1), (1, 10, 1))


def test_equal_steps_task_i_waits_for_task_i():
    assert list(jd.waited_for((1, 4, 1), (1, 4, 1), 3)) == [3]
    assert list(jd.waited_for((1, 9, 2), (1, 9, 2), 5)) == [5]


def test_a_bigger_dependent_step_waits_for_a_chunk():
    # B 1-10:2 on A 1-10:1: B.3 waits for A.3 and A.4
    assert list(jd.waited_for((1, 10, 1), (1, 10, 2), 3)) == [3, 4]


def test_a_smaller_dependent_step_shares_a_predecessor_task():
    # B 1-10:1 on A 1-10:2: B.3 and B.4 both wait for A.3
    assert list(jd.waited_for((1, 10, 2), (1, 10, 1), 3)) == [3]
    assert list(jd.waited_for((1, 10, 2), (1, 10, 1), 4)) == [3]


def test_a_range_past_the_predecessor_or_off_the_grid_waits_for_all():
    assert jd.waited_for((1, 10, 1), (1, 10, 4), 9) is None  # 9..12 leaves A
    assert jd.waited_for((1, 10, 1), (1, 10, 2), 2) is None  # B has no task 2
    assert jd.waited_for((1, 10, 1), (1, 9, 1), 2) is None  # not the same range


def test_swapped_the_rule_names_the_dependents_a_task_may_release():
    # A 1-10:1 task 4 ended: of B 1-10:2 it may release B.3
    assert list(jd.waited_for((1, 10, 2), (1, 10, 1), 4)) == [3]
    # A 1-10:2 task 3 ended: of B 1-10:1 it may release B.3 and B.4
    assert list(jd.waited_for((1, 10, 1), (1, 10, 2), 3)) == [3, 4]


def test_a_job_id_starting_with_digits_is_read_as_atoi_does():
    assert jd.leading_number("12") == 12
    assert jd.leading_number("12abc") == 12


# ---------------------------------------------------------------- on the qmaster
REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def qm(tmp_path):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=4, env={})
    q = Qmaster(cell, "h1")
    q.load()
    q.config.cell_owner_only = False
    q.execds["h1"] = object()  # a registered execd (the snapshot needs the host up)
    q.config.load_values["h1"] = {"np_load_avg": "0.00", "load_avg": "0.00"}
    return q


def submit(qm, name="x", array=None, **req) -> int:
    spec = dict(REQ, job_name=name, array=list(array) if array else None, **req)
    return qm.submit(spec, 0, 0)["job_id"]


def end(qm, job_id, task_id, exit_status=0):
    qm.task_finished({"job_id": job_id, "task_id": task_id, "failed": 0, "exit_status": exit_status,
                      "signal": 0, "usage": {}})


def started(qm) -> set[tuple[int, int]]:
    out = {(j.number, t.task_id) for j, t in qm.schedule()}
    qm.flush()
    return out


def refusal(qm, **req) -> str:
    with pytest.raises(RequestError) as e:
        submit(qm, **req)
    return str(e.value)


def test_hold_jid_ad_needs_an_array_job(qm):
    a = submit(qm, "a", (1, 3, 1))
    assert refusal(qm, hold_jid_ad=[str(a)]) == (
        'Unable to run job: Can only specify "-hold_jid_ad" option with an array job (using "-t" option)\nExiting.')
    # refused even when the reference names no job now
    assert refusal(qm, hold_jid_ad=["nosuchname"]).startswith('Unable to run job: Can only specify "-hold_jid_ad"')


def test_hold_jid_ad_on_a_job_that_is_no_array_is_refused(qm):
    plain = submit(qm, "plain")
    assert refusal(qm, array=(1, 3, 1), hold_jid_ad=[str(plain)]).startswith(
        'Unable to run job: Can only specify "-hold_jid_ad"')


def test_hold_jid_ad_on_another_range_is_refused(qm):
    a = submit(qm, "a", (1, 3, 1))
    assert refusal(qm, array=(1, 4, 1), hold_jid_ad=[str(a)]) == (
        "Unable to run job: This array job must have the same range of sub-tasks as the dependent array job "
        "specified with -hold_jid_ad\nExiting.")
    assert len(qm.jobs) == 1  # nothing submitted


def test_a_task_reference_and_the_own_job_id_are_refused(qm):
    a = submit(qm, "a", (1, 3, 1))
    assert refusal(qm, array=(1, 3, 1), hold_jid_ad=[f"{a}.1"]) == (
        f'Unable to run job: denied: job "{a}.1" not found\nExiting.')
    assert refusal(qm, hold_jid=[str(a + 1)]) == (
        f'Unable to run job: denied: job "{a + 1}" may not be its own jobnet predecessor\nExiting.')


def test_references_to_jobs_that_are_gone_are_dropped(qm):
    b = submit(qm, "b", (1, 3, 1), hold_jid_ad=["999", "nosuch*"])
    assert qm.jobs[b].ad_predecessors == [] and qm.jobs[b].ad_held == set()
    assert {t for j, t in started(qm) if j == b} == {1, 2, 3}


def test_task_n_waits_for_task_n_of_the_predecessor(qm):
    a = submit(qm, "a", (1, 3, 1), hold=True)  # A waits, so every B task waits for A's
    b = submit(qm, "b", (1, 3, 1), hold_jid_ad=["a"])
    assert qm.jobs[b].ad_predecessors == [a] and qm.jobs[b].ad_held == {1, 2, 3}
    assert started(qm) == set()
    qm.hold([str(a)], 0, "u", release=True)
    assert started(qm) == {(a, 1), (a, 2), (a, 3)}
    end(qm, a, 2)
    assert qm.jobs[b].ad_held == {1, 3}
    assert started(qm) == {(b, 2)}
    end(qm, a, 1)
    end(qm, a, 3)
    assert a not in qm.jobs and qm.jobs[b].ad_predecessors == [] and not qm.jobs[b].ad_held
    assert started(qm) == {(b, 1), (b, 3)}


def test_a_predecessor_task_in_error_keeps_its_dependent_waiting(qm):
    a = submit(qm, "a", (1, 2, 1))
    b = submit(qm, "b", (1, 2, 1), hold_jid_ad=[str(a)])
    started(qm)
    end(qm, a, 1, exit_status=100)  # submit(1): "exits with exit code 100 ... remain ineligible"
    assert qm.jobs[a].tasks[1].state == "error"
    assert qm.jobs[b].ad_held == {1, 2}


def test_deleting_pending_predecessor_tasks_releases_their_dependents(qm):
    a = submit(qm, "a", (1, 3, 1), hold=True)
    b = submit(qm, "b", (1, 3, 1), hold_jid_ad=[str(a)])
    trio.run(qm.delete, [f"{a}.2"], 0)
    assert qm.jobs[b].ad_held == {1, 3}
    trio.run(qm.delete, [str(a)], 0)
    assert a not in qm.jobs and not qm.jobs[b].ad_held


def test_qstat_shows_the_waiting_tasks_held_and_the_lists_of_qstat_j(qm):
    a = submit(qm, "a", (1, 3, 1), hold=True)
    b = submit(qm, "b", (1, 3, 1), hold_jid_ad=[str(a)])
    qm.hold([str(a)], 0, "u", release=True)
    started(qm)
    end(qm, a, 2)
    row = next(j for j in views.job_list(qm, {"users": ["*"]}, 0)["jobs"] if j["job_number"] == b)
    assert [(t["ranges"], t["state"], t.get("holds")) for t in row["tasks"]] == [
        ([(2, 2, 1)], "qw", None), ([(1, 3, 2)], "hqw", "a")]
    detail = views.job_detail(qm, [str(b), str(a)], 0)["jobs"]
    text = job_detail_out.format_job_detail(detail[0])
    assert f"ja_ad_predecessor_list:     {a}\n" in text
    assert "ja_ad_predecessor_list (req)" not in text  # 8.1.9 does not print it
    assert f"ja_ad_successor_list:       {b}\n" in job_detail_out.format_job_detail(detail[1])


def test_a_qmaster_restart_keeps_the_holds(qm):
    a = submit(qm, "a", (1, 2, 1), hold=True)
    b = submit(qm, "b", (1, 2, 1), hold_jid_ad=[str(a)])
    trio.run(qm.delete, [f"{a}.1"], 0)
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[b].ad_predecessors == [a] and again.jobs[b].ad_held == {2}

