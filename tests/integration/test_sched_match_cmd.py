"""Request matching through the real daemons (qsub, qconf, qstat -j): soft
requests, requestable NO and FORCED, consumables booked across passes,
EXCL exclusive scheduling, -masterq -- with Grid Engine 8.1.9's messages."""

from __future__ import annotations

import os

import pytest
from cellutil import Cell

pytestmark = pytest.mark.root

EXTRA = """\
hm_forced hmf INT  <=   FORCED YES 0 0
hm_noreq  hmn INT  <=   NO     NO  0 0
hm_excl   hmx BOOL EXCL YES    YES 0 1000
hm_lic    hml INT  <=   YES    YES 0 0
hm_color  hmc STRING == YES    NO  NONE 0
"""


def _add_complexes(c: Cell) -> None:
    r = c.run("qconf", "-sc")
    assert r.rc == 0, r
    path = os.path.join(c.work, "complex.txt")
    with open(path, "w") as f:
        f.write(r.out + EXTRA)
    r = c.run("qconf", "-Mc", path)
    assert r.rc == 0, r


def _add_queue(c: Cell, name: str, **attrs: str) -> None:
    r = c.run("qconf", "-sq", "all.q")
    lines = []
    for ln in r.out.splitlines():
        key = ln.split()[0] if ln.split() else ""
        if key == "qname":
            ln = f"qname {name}"
        elif key in attrs:
            ln = f"{key} {attrs[key]}"
        lines.append(ln)
    path = os.path.join(c.work, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    r = c.run("qconf", "-Aq", path)
    assert r.rc == 0, r


def _scheduling_info(c: Cell, job: int) -> str:
    r = c.run("qstat", "-j", str(job))
    return r.out.split("scheduling info:", 1)[1] if "scheduling info:" in r.out else ""


def _wait_info(c: Cell, job: int, text: str) -> str:
    return c.wait_for(lambda: text in (s := _scheduling_info(c, job)) and s, what=text)


def _running_in(c: Cell, job: int) -> str:
    def queue():
        for line in c.run("qstat", "-u", "*").out.splitlines()[2:]:
            parts = line.split()
            if parts[0] == str(job) and parts[4] == "r":
                return parts[7]
        return None
    return c.wait_for(queue, what=f"job {job} running")


def test_requestable_no_and_masterq_without_pe_are_refused_at_submit(cell, users):
    _add_complexes(cell)
    r = cell.run("qsub", "-l", "hmn=1", "-b", "y", "/bin/true", user=users[0].pw_name)
    assert (r.rc, r.err) == (1, 'Unable to run job: resource "hmn" configured as non requestable\nExiting.\n')
    r = cell.run("qsub", "-masterq", "all.q", "-b", "y", "/bin/true", user=users[0].pw_name)
    assert (r.rc, r.err) == (1, "Unable to run job: job rejected: specification of master queue is not "
                                "allowed for non-parallel jobs\nExiting.\n")


def test_forced_soft_consumable_and_exclusive_through_qsub(cell, users):
    user = users[0].pw_name
    _add_complexes(cell)
    _add_queue(cell, "hm.q", slots="4", seq_no="10",
               complex_values="hm_forced=5,hm_lic=3,hm_excl=true,hm_color=red")
    r = cell.run("qconf", "-mattr", "queue", "slots", "4", "all.q")
    assert r.rc == 0, r

    # FORCED: accepted at submit (as 8.1.9 does), never placed in hm.q
    j = cell.submit("-q", "hm.q", "-b", "y", "/bin/true", user=user)
    _wait_info(cell, j, "does not request 'forced' resource \"hm_forced\" of queue instance hm.q@testhost")
    assert cell.run("qdel", str(j)).rc == 0

    # -soft: all.q (seq_no 0) comes first, but only hm.q meets the soft request
    j = cell.submit("-l", "hmf=1", "-soft", "-l", "hm_color=red", "-b", "y", "/bin/sleep", "60", user=user)
    assert _running_in(cell, j) == "hm.q@testhost"
    j2 = cell.submit("-soft", "-l", "hm_color=blue", "-b", "y", "/bin/sleep", "60", user=user)
    assert _running_in(cell, j2) == "all.q@testhost"  # no queue meets it: the job runs anyway
    assert cell.run("qdel", str(j), str(j2)).rc == 0

    # consumables are booked across passes: 2 of 3 licenses held, 2 more wait
    a = cell.submit("-q", "hm.q", "-l", "hmf=1,hm_lic=2", "-b", "y", "/bin/sleep", "60", user=user)
    _running_in(cell, a)
    b = cell.submit("-q", "hm.q", "-l", "hmf=1,hm_lic=2", "-b", "y", "/bin/true", user=user)
    _wait_info(cell, b, '(-l hm_forced=1,hm_lic=2) cannot run in queue "hm.q@testhost" '
                        "because it offers only qc:hm_lic=1.000000")
    # EXCL: an exclusive job waits while another job holds the queue instance
    x = cell.submit("-q", "hm.q", "-l", "hmf=1,hmx=true", "-b", "y", "/bin/sleep", "60", user=user)
    _wait_info(cell, x, '(-l hm_excl=true,hm_forced=1) cannot run in queue "hm.q@testhost" '
                        "because exclusive resource (hm_excl) is already in use")
    assert cell.run("qdel", str(a), str(b)).rc == 0
    _running_in(cell, x)
    # ... and while it runs, nothing else goes there
    y = cell.submit("-q", "hm.q", "-l", "hmf=1", "-b", "y", "/bin/true", user=user)
    _wait_info(cell, y, '(-l hm_forced=1) cannot run in queue "hm.q@testhost" '
                        "because for default request exclusive resource (hm_excl) is already in use")
    assert cell.run("qdel", str(x), str(y)).rc == 0
