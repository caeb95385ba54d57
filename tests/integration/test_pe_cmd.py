"""Parallel jobs and access lists through the real daemons: one qmaster and
two execds posing as hosts node1 and node2 (2 slots each), configured with qconf."""

from __future__ import annotations

import os

import pytest
from cellutil import Cell, ensure_user

pytestmark = pytest.mark.root

SCRIPT = """#!/bin/sh
cat "$PE_HOSTFILE"
echo "NSLOTS=$NSLOTS NHOSTS=$NHOSTS NQUEUES=$NQUEUES PE=$PE"
"""


def _pe_file(cell: Cell, name: str, rule: str, first_task: str = "TRUE") -> str:
    path = os.path.join(cell.dir, name + ".pe")
    with open(path, "w") as f:
        f.write(f"pe_name {name}\nslots 99\nuser_lists NONE\nxuser_lists NONE\n"
                "start_proc_args NONE\nstop_proc_args NONE\n"
                f"allocation_rule {rule}\ncontrol_slaves FALSE\njob_is_first_task {first_task}\n"
                "urgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
    return path


@pytest.fixture
def two_hosts():
    c = Cell(host="master").start_roles(("node1", "node2"), slots=2)
    for name, rule in (("rr", "$round_robin"), ("fill", "$fill_up")):
        r = c.run("qconf", "-Ap", _pe_file(c, name, rule))
        assert r.rc == 0, r
    r = c.run("qconf", "-mattr", "queue", "pe_list", "make smp rr fill", "all.q")
    assert r.rc == 0, r
    try:
        yield c
    finally:
        c.cleanup()


def _run_pe_job(cell: Cell, pe: str, slots: str, *more: str) -> list[str]:
    user = ensure_user("msgeuser1").pw_name
    out = os.path.join(cell.work, f"{pe}.out")
    job = cell.submit("-pe", pe, slots, *more, "-j", "y", "-o", out, user=user, input=SCRIPT)
    cell.wait_records(job)
    cell.wait_for(lambda: os.path.exists(out) and "NSLOTS" in open(out).read(), what="job output")
    return open(out).read().splitlines()


def test_round_robin_job_gets_a_slot_per_host_in_turn(two_hosts):
    lines = _run_pe_job(two_hosts, "rr", "3")
    assert lines == [
        "node1 2 all.q@node1 UNDEFINED",
        "node2 1 all.q@node2 UNDEFINED",
        "NSLOTS=3 NHOSTS=2 NQUEUES=2 PE=rr",
    ]


def test_fill_up_job_fills_the_first_host_then_the_next(two_hosts):
    lines = _run_pe_job(two_hosts, "fill", "3")
    assert lines == [
        "node1 2 all.q@node1 UNDEFINED",
        "node2 1 all.q@node2 UNDEFINED",
        "NSLOTS=3 NHOSTS=2 NQUEUES=2 PE=fill",
    ]


def test_a_range_gets_the_most_slots_there_are(two_hosts):
    lines = _run_pe_job(two_hosts, "fill", "2-")
    assert lines[-1] == "NSLOTS=4 NHOSTS=2 NQUEUES=2 PE=fill"


def test_job_is_first_task_false_books_no_slot_for_the_master_task(two_hosts):
    """8.1.9 on the peer: ``qsub -pe make 2`` (job_is_first_task FALSE) on a
    2-slot queue instance runs with NSLOTS=2 and the pe_hostfile line
    ``vm 2 all.q@vm UNDEFINED``; the job script holds no slot of its own."""
    r = two_hosts.run("qconf", "-Mp", _pe_file(two_hosts, "fill", "$fill_up", first_task="FALSE"))
    assert r.rc == 0, r
    lines = _run_pe_job(two_hosts, "fill", "2")
    assert lines == [
        "node1 2 all.q@node1 UNDEFINED",
        "NSLOTS=2 NHOSTS=1 NQUEUES=1 PE=fill",
    ]


def test_a_user_in_xuser_lists_stays_pending_with_the_reason(two_hosts):
    user = ensure_user("msgeuser1").pw_name
    acl = os.path.join(two_hosts.dir, "hyban.acl")
    with open(acl, "w") as f:
        f.write(f"name hyban\ntype ACL\nfshare 0\noticket 0\nentries {user}\n")
    assert two_hosts.run("qconf", "-Au", acl).rc == 0
    r = two_hosts.run("qconf", "-mattr", "queue", "xuser_lists", "hyban", "all.q")
    assert r.rc == 0, r
    job = two_hosts.submit("-b", "y", "/bin/true", user=user)

    def reason():
        out = two_hosts.run("qstat", "-j", str(job)).out
        return 'has no permission for cluster queue "all.q"' in out and out

    out = two_hosts.wait_for(reason, what="the access reason in qstat -j")
    assert "scheduling info:" in out
    assert two_hosts.qstat_states()[job] == "qw"


def test_binding_pe_writes_the_cores_into_the_pe_hostfile(two_hosts):
    """qsub(1) -binding pe: the host's line names socket,core of the cores
    taken instead of UNDEFINED (nothing else is bound: the first core)."""
    lines = _run_pe_job(two_hosts, "fill", "2", "-binding", "pe linear:1")
    assert lines[0] == "node1 2 all.q@node1 0,0"
