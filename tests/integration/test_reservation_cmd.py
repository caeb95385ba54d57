"""Resource reservation and backfilling through the real daemons (sched_conf(5)
max_reservation, default_duration, params MONITOR=1; qsub -R y): a qmaster and
two execds posing as hosts node1 and node2 (2 slots each), three users.

As 8.1.9 did beside the peer (a -R y PE job reserved at the end of the
running job whose h_rt frees its slots, a short job backfilled, a long one
held back; the schedule file's RUNNING/RESERVING/STARTING lines)."""

from __future__ import annotations

import os
import re
import time

import pytest
from cellutil import Cell, ensure_user, touch, until_file

pytestmark = pytest.mark.root

BLOCKER, RESERVER, SMALL = "msgeuser1", "msgeuser2", "msgeuser3"


@pytest.fixture(scope="module")
def cell():
    for u in (BLOCKER, RESERVER, SMALL):
        ensure_user(u)
    c = Cell(host="master").start_roles(("node1", "node2"), slots=2)
    try:
        pe = os.path.join(c.dir, "fill.pe")
        with open(pe, "w") as f:
            f.write("pe_name fill\nslots 99\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
                    "stop_proc_args NONE\nallocation_rule $fill_up\ncontrol_slaves FALSE\n"
                    "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
        assert c.run("qconf", "-Ap", pe).rc == 0
        assert c.run("qconf", "-mattr", "queue", "pe_list", "fill", "all.q").rc == 0
        conf = c.run("qconf", "-ssconf").out
        for name, value in (("max_reservation", "5"), ("default_duration", "0:10:0"), ("params", "MONITOR=1")):
            conf = re.sub(rf"(?m)^{name} .*$", f"{name:<34}{value}", conf)
        path = os.path.join(c.dir, "sconf")
        with open(path, "w") as f:
            f.write(conf)
        r = c.run("qconf", "-Msconf", path)
        assert r.rc == 0, r
        yield c
    finally:
        c.cleanup()


def _epoch(text: str) -> float:
    return time.mktime(time.strptime(text, "%m/%d/%Y %H:%M:%S"))


def _start_time(c: Cell, job: int) -> float:
    for line in c.run("qstat", "-u", "*").out.splitlines()[2:]:
        parts = line.split()
        if parts[0] == str(job) and parts[4] == "r":
            return _epoch(f"{parts[5]} {parts[6]}")
    raise AssertionError(f"job {job} is not running")


def test_a_reserved_pe_job_starts_by_its_reservation_while_a_short_job_backfills(cell: Cell) -> None:
    c = cell
    end_first, end_rest = os.path.join(c.work, "end-first"), os.path.join(c.work, "end-rest")
    first = c.submit("-l", "h_rt=100", until_file(c, end_first), user=BLOCKER)
    rest = [c.submit("-l", "h_rt=3000", until_file(c, end_rest), user=BLOCKER) for _ in range(2)]
    c.wait_for(lambda: all(c.qstat_states().get(j) == "r" for j in [first, *rest]), what="the blockers running")
    started_first = _start_time(c, first)
    try:
        # 1 slot free, the -R y job wants 2: reserved where the h_rt=100 job ends
        reserved = c.submit("-R", "y", "-pe", "fill", "2", "-l", "h_rt=100", "-b", "y", "/bin/true", user=RESERVER)
        detail = c.wait_for(lambda: (out := c.run("qstat", "-j", str(reserved)).out)
                            and "resources reserved" in out and out, what="the reservation")
        m = re.search(r"resources reserved for the job from (\S+ \S+) in (\S+)", detail)
        assert m, detail
        promised = _epoch(m.group(1))
        # h_rt 100 + DURATION_OFFSET 60 after the first blocker started (to the second, as qstat prints)
        assert promised == started_first + 160
        # a short job ends before the reservation: it backfills; a long one would delay it: it waits
        short = c.submit("-l", "h_rt=10", "-b", "y", "/bin/true", user=SMALL)
        c.wait_records(short)
        long_ = c.submit("-l", "h_rt=5000", "-b", "y", "/bin/true", user=SMALL)
        c.wait_for(lambda: "scheduling info" in c.run("qstat", "-j", str(long_)).out, what="the long job's reasons")
        states = c.qstat_states()
        assert states.get(reserved) == "qw" and states.get(long_) == "qw", states
        schedule = open(os.path.join(c.common, "schedule")).read()
        assert re.search(rf"(?m)^{reserved}:1:RESERVING:{int(promised)}:160:P:fill:slots:2\.000000$", schedule)
        assert re.search(rf"(?m)^{first}:1:RUNNING:{int(started_first)}:160:Q:all\.q@node\d:slots:1\.000000$",
                         schedule)
        assert re.search(rf"(?m)^{short}:1:STARTING:\d+:70:Q:all\.q@node\d:slots:1\.000000$", schedule)
        # the first blocker ends: the reserved job starts, no later than promised
        touch(end_first)
        c.wait_for(lambda: c.qstat_states().get(reserved) in ("r", None), what="the reserved job started")
        c.wait_records(reserved)
        start = int(c.records_of(reserved)[0][9])  # accounting(5) start_time
        assert start <= promised, (start, promised)
        print(f"reservation promised {promised - started_first:.0f} s after the blocker's start; "
              f"the job started {start - started_first:.0f} s after it")
    finally:
        touch(end_first)
        touch(end_rest)
