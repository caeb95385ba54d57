"""qstat -s z: the finished jobs the qmaster keeps (sge_conf(5)
finished_jobs) and how qstat prints them, against 8.1.9's captures
(tests/golden/qstat_-s_z.finished and its -f and -xml forms)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from minisge.output import qstat_out as q
from minisge.qmaster.finished_jobs import FinishedJobs
from minisge.qmaster.job import Job

GOLDEN = Path(__file__).parent / "golden"
T = 1795416924  # Mon Nov 23 06:55:24 2026 UTC


@pytest.fixture(autouse=True)
def utc():
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def golden(name: str) -> str:
    """A capture's text, after its ``# ----`` header."""
    head, sep, text = (GOLDEN / name).read_text().partition("# ----\n")
    assert sep, name
    return text


def zombie(number, name, prio, submitted, ranges=None):
    d = {"job_number": number, "name": name, "owner": "d5ctl", "prio": prio, "state": "z",
         "submission_time": submitted, "slots": 1, "array": bool(ranges)}
    if ranges:
        d["tasks"] = [{"ranges": ranges, "state": "z"}]
    return d


# the peer's finished jobs of user d5ctl (their prio is what its scheduler last
# gave them; minisge keeps 0: see FinishedJobs)
PEER = [zombie(103, "d5run", 0.25729, T + 109), zombie(104, "d5runarr", 0.25729, T + 109, [(1, 2, 1)]),
        zombie(126, "d5h", 0.0, T + 187, [(1, 6, 1)]), zombie(141, "d5force", 0.37342, T + 277),
        zombie(142, "d5regdel", 0.50157, T + 277, [(1, 1, 1)])]
ALL_Q = {"name": "all.q@vm", "qtype": "BIP", "used": 0, "resv": 0, "total": 2, "load_avg": 6.66,
         "arch": "lx-amd64", "states": "a"}


def test_s_z_lists_each_finished_job_with_state_z_and_its_task_ranges():
    assert q.format_job_list([], [], finished=PEER) == golden("qstat_-s_z.finished")


def test_f_s_z_lists_them_under_the_finished_jobs_banner():
    assert q.format_full([ALL_Q], [], finished=PEER) == golden("qstat_-f_-s_z.finished")


def test_s_z_xml_lists_them_as_zombie_job_lists():
    assert q.format_xml([], [], finished=PEER) == golden("qstat_-s_z_-xml.finished")


def _job(number: int, array: list[int] | None = None, pe: int = 0) -> Job:
    spec: dict = {"array": array} if array else {}
    if pe:
        spec["pe"] = {"name": "smp", "ranges": [[pe, pe]]}
    return Job(number=number, name=f"j{number}", owner="alice", uid=1000, group="users", gid=100,
               submission_time=float(T + number), spec=spec)


def test_a_job_that_left_is_the_newest_finished_job():
    fj = FinishedJobs(lambda: 100)
    fj.job_left(_job(7, array=[2, 8, 3]))
    fj.job_left(_job(5, pe=2))
    rows = fj.listing(None)
    assert [r["job_number"] for r in rows] == [7, 5]
    assert rows[0]["tasks"] == [{"ranges": [(2, 8, 3)], "state": "z"}] and rows[0]["array"]
    assert (rows[1]["slots"], rows[1]["state"], rows[1]["submission_time"]) == (2, "z", T + 5)
    assert "tasks" not in rows[1]
    assert q.format_job_list([], [], finished=rows).splitlines()[2].endswith("    1 2-8:3")


def test_finished_jobs_keeps_the_newest_of_them_only():
    limit = [2]
    fj = FinishedJobs(lambda: limit[0])
    for n in (1, 2, 3):
        fj.job_left(_job(n))
    assert [r["job_number"] for r in fj.listing(["*"])] == [2, 3]
    limit[0] = 0
    fj.job_left(_job(4))
    assert fj.listing(None) == []


def test_finished_jobs_of_the_users_asked_for():
    fj = FinishedJobs(lambda: 10)
    fj.job_left(_job(1))
    assert fj.listing(["alice"]) and not fj.listing(["bob"]) and fj.listing(["*"])
