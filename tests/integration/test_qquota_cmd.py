"""Resource quota sets with the real daemon: the scheduler keeps to them and
qquota(1) shows their usage."""

from __future__ import annotations

import os
import time

import pytest
from cellutil import Cell

pytestmark = pytest.mark.root

PER_USER_ONE_SLOT = """{
   name         max_u_slots
   description  "each user at most one slot"
   enabled      true
   limit        users {*} to slots=1
}
"""


@pytest.fixture
def cell4():
    c = Cell(slots=4).start()
    try:
        yield c
    finally:
        c.cleanup()


def _add_rqs(cell: Cell, text: str) -> None:
    path = os.path.join(cell.dir, "quota.rqs")
    with open(path, "w") as f:
        f.write(text)
    r = cell.run("qconf", "-Arqs", path)
    assert r.rc == 0, r


def _sleeper(cell: Cell, user: str) -> int:
    return cell.submit("-b", "y", "/bin/sleep", "30", user=user)


def test_a_per_user_slot_quota_leaves_the_users_second_job_pending(cell4):
    _add_rqs(cell4, PER_USER_ONE_SLOT)
    first = _sleeper(cell4, "msgeuser1")
    cell4.wait_for(lambda: cell4.qstat_states().get(first) == "r", what="first job running")
    second = _sleeper(cell4, "msgeuser1")
    other = _sleeper(cell4, "msgeuser2")
    cell4.wait_for(lambda: cell4.qstat_states().get(other) == "r", what="other user's job running")
    time.sleep(0.5)  # a few scheduler passes more
    states = cell4.qstat_states()
    assert states[first] == "r" and states[other] == "r"
    assert states[second] == "qw"  # 2 of 4 slots are free, but not for msgeuser1


def test_two_jobs_submitted_together_do_not_both_start_past_the_quota(cell4):
    _add_rqs(cell4, PER_USER_ONE_SLOT)
    jobs = [_sleeper(cell4, "msgeuser1") for _ in range(3)]
    cell4.wait_for(lambda: "r" in cell4.qstat_states().values(), what="a job running")
    time.sleep(0.5)
    states = cell4.qstat_states()
    assert sorted(states[j] for j in jobs) == ["qw", "qw", "r"]


def test_qquota_shows_the_callers_usage(cell4):
    _add_rqs(cell4, PER_USER_ONE_SLOT)
    job = _sleeper(cell4, "msgeuser1")
    cell4.wait_for(lambda: cell4.qstat_states().get(job) == "r", what="job running")
    r = cell4.run("qquota", user="msgeuser1")
    assert (r.rc, r.err) == (0, "")
    assert r.out == (
        "resource quota rule limit                filter\n"
        + "-" * 80 + "\n"
        + "max_u_slots/1      slots=1/1            users msgeuser1\n"
    )
    # another user sees no usage of their own ...
    assert cell4.run("qquota", user="msgeuser2").out == ""
    # ... unless asking for everyone's
    assert "users msgeuser1" in cell4.run("qquota", "-u", "*", user="msgeuser2").out
    xml = cell4.run("qquota", "-xml", user="msgeuser1").out
    assert "<qquota_rule name='max_u_slots/1'>\n   <users>msgeuser1</users>\n" in xml
    assert "<limit resource='slots' limit='1' value='1'/>" in xml


def test_qquota_without_quota_sets_prints_nothing(cell4):
    r = cell4.run("qquota")
    assert (r.rc, r.out, r.err) == (0, "", "")


def test_qquota_rejects_an_unknown_option_with_the_usage(cell4):
    r = cell4.run("qquota", "-x")
    assert r.rc == 1
    assert r.err.startswith("SGE 8.1.9\nusage: qquota [options]\n")
    assert r.err.endswith('error: invalid option argument "-x"\n')
