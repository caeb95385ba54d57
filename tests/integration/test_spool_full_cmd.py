"""A full or read-only spool: requests refused whole, ends and accounting kept until written.

The cell's qmaster spool is a small tmpfs (mounted over ``spool/qmaster``
before the daemon starts), then filled up or remounted read-only; the
accounting file is made immutable with ``chattr +i``.  A request the spool
cannot take is answered with the error and changes nothing (qsub in 8.1.9's
words: ``job N was rejected because it couldn't be written``); a task's end
and its accounting record are kept and written once the writes work again,
so a finished job never stays ``r``, never loses its record, never gets two,
and keeps its exit status.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from cellutil import Cell, script, touch, until_file

pytestmark = pytest.mark.root


def tmpfs_cell(size: str = "4m") -> Cell:
    """A started all-in-one cell whose qmaster spool is a tmpfs of ``size``."""
    c = Cell()
    c.minisge("init", "--hostname", c.host, "--slots", str(c.slots))
    saved = os.path.join(c.dir, "qmaster.saved")
    shutil.copytree(c.qmaster_spool, saved, symlinks=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=755", "tmpfs", c.qmaster_spool], check=True)
    shutil.copytree(saved, c.qmaster_spool, symlinks=True, dirs_exist_ok=True)
    return c.start()


@pytest.fixture
def spool_cell():
    c = tmpfs_cell()
    try:
        yield c
    finally:
        subprocess.run(["mount", "-o", "remount,rw", c.qmaster_spool], capture_output=True)
        c.stop()
        subprocess.run(["umount", "-l", c.qmaster_spool], capture_output=True)
        c.cleanup()


def fill(c: Cell, name: str = "filler") -> str:
    """Fill the spool's file system to the last byte; the filler's path."""
    path = os.path.join(c.qmaster_spool, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return path


def fill_journal_page(c: Cell) -> None:
    """Make the job journal (minisge/qmaster/job_journal.py) end at a page's
    end, with a line of a job that never is (job 0, sequence number 0: passed
    over), so that once the file system is full no line of the daemon's fits
    in its last page: an append the full disk still takes is written, as a
    job file the spool keeps is (jobs/.free/), and this test is about those
    it refuses."""
    path = os.path.join(c.qmaster_spool, "jobs", ".journal")
    with open(path, "ab") as f:
        head, tail = b'0 0 {"number":0,"pad":"', b'"}\n'
        pad = -(f.tell() + len(head) + len(tail)) % os.statvfs(path).f_bsize
        f.write(head + b"x" * pad + tail)
        assert f.tell() % os.statvfs(path).f_bsize == 0


def states(c: Cell) -> dict[int, list[str]]:
    """qstat's states by job, a row each (running tasks, then pending ranges)."""
    out: dict[int, list[str]] = {}
    for line in c.run("qstat", "-u", "*").out.splitlines()[2:]:
        parts = line.split()
        out.setdefault(int(parts[0]), []).append(parts[4])
    return out


def test_a_full_spool_refuses_requests_whole_and_keeps_the_ends(spool_cell, users):
    c = spool_cell
    user = users[0].pw_name
    go = os.path.join(c.work, "go")
    array = c.submit("-t", "1-3", "-b", "y", until_file(c, go), user=user)
    c.wait_for(lambda: states(c) == {array: ["r", "r", "qw"]}, what="two tasks running")
    before = c.run("qstat", "-u", "*").out
    fill_journal_page(c)  # (the dispatch of two tasks made it)
    filler = fill(c)

    r = c.run("qsub", "-b", "y", "/bin/true", user=user)
    assert r.rc == 1 and r.out == "", r
    assert r.err.startswith('Unable to run job: error writing to file "') and "No space left on device" in r.err, r
    assert r.err.endswith(f"job {array + 1} was rejected because it couldn't be written\nExiting.\n"), r
    r = c.run("qdel", str(array), user=user)
    assert r.rc == 1 and f"deletion of job {array} was rejected because it couldn't be written" in r.out, r
    r = c.run("qhold", str(array), user=user)
    assert r.rc != 0 and f"alteration of job {array} was rejected because it couldn't be written" in r.out, r
    r = c.run("qmod", "-d", "all.q")
    assert r.rc == 1 and r.out == f'Queue instance state of "all.q@{c.host}" not modified: Spooling framework failed\n'
    assert c.run("qstat", "-u", "*").out == before  # nothing of it happened

    # the running tasks end: the job's file cannot be rewritten (the deleted jobs' files the
    # spool keeps to write a running job's changes over, jobs/.free/, removed: a change that
    # fits in one of them is written even on a full disk); the ends are kept, the tasks no
    # longer run, their records are written, the next task is not started
    free = os.path.join(c.qmaster_spool, "jobs", ".free")
    for name in os.listdir(free):
        os.unlink(os.path.join(free, name))
    refiller = fill(c, "refiller")  # what they held
    touch(go)
    c.wait_for(lambda: states(c) == {array: ["qw"]}, what="the ends taken, nothing running")
    assert sorted(rec[35] for rec in c.wait_records(array, 2)) == ["1", "2"]
    assert states(c) == {array: ["qw"]}

    os.unlink(filler)  # the writes work again: the job's file, then its last task
    os.unlink(refiller)
    recs = c.wait_records(array, 3)
    assert sorted(rec[35] for rec in recs) == ["1", "2", "3"] and {rec[11] for rec in recs} == {"0"}
    c.wait_for(lambda: states(c) == {}, what="an idle cell")
    job = c.submit("-b", "y", "/bin/true", user=user)
    c.wait_records(job)
    # the spool is what memory said: a restart brings nothing back, writes nothing twice
    c.stop()
    c.start()
    assert states(c) == {}
    assert len(c.records_of(array)) == 3


def freeze(c: Cell, on: bool) -> None:
    """``chattr +i`` on every directory of the qmaster spool: no file is made,
    replaced or removed there (what a read-only spool refuses; a read-only
    remount is refused itself while the daemon's log is open there)."""
    dirs = [dirpath for dirpath, _, _ in os.walk(c.qmaster_spool)]
    subprocess.run(["chattr", "+i" if on else "-i", *dirs], check=True)


def test_a_read_only_spool_refuses_qdel_and_frees_the_slots_of_ends(cell, users):
    c = cell
    user = users[0].pw_name
    go = os.path.join(c.work, "go")
    job = c.submit("-b", "y", until_file(c, go), user=user)
    c.wait_for(lambda: states(c) == {job: ["r"]}, what="the job running")
    freeze(c, True)
    try:
        r = c.run("qdel", str(job), user=user)
        assert r.rc == 1 and "Operation not permitted" in r.out, r
        assert states(c) == {job: ["r"]}  # not half deleted: not dr, not killed
        r = c.run("qsub", "-b", "y", "/bin/true", user=user)
        assert r.rc == 1 and "Operation not permitted" in r.err, r
        touch(go)  # it ends while its file cannot even be removed
        c.wait_for(lambda: states(c) == {}, what="the end taken, the slot free")
        recs = c.wait_records(job)
        assert len(recs) == 1 and (recs[0][11], recs[0][12]) == ("0", "0")  # failed 0, exit 0
    finally:
        freeze(c, False)
    nxt = c.submit("-b", "y", "/bin/true", user=user)  # writes work again
    c.wait_records(nxt)
    c.wait_for(lambda: not os.path.exists(os.path.join(c.qmaster_spool, "jobs", "00", "0000", f"{job:04d}")),
               what="the ended job's file removed")
    c.stop()
    c.start()
    assert states(c) == {}
    assert len(c.records_of(job)) == 1


def test_an_accounting_file_that_cannot_be_written_loses_no_record(cell, users):
    user = users[0].pw_name
    go = os.path.join(cell.work, "go")
    job = cell.submit("-b", "y", until_file(cell, go), user=user)
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the job running")
    subprocess.run(["chattr", "+i", cell.accounting], check=True)
    try:
        touch(go)
        cell.wait_for(lambda: job not in cell.qstat_states(), what="the end taken")
        assert cell.records_of(job) == []
        r = cell.run("qsub", "-b", "y", script(cell, "exit3.sh", "exit 3"), user=user)
        assert r.rc == 0, r
        other = int(r.out.split()[2])
        cell.wait_for(lambda: other not in cell.qstat_states(), what="another end taken")
    finally:
        subprocess.run(["chattr", "-i", cell.accounting], check=True)
    rec = cell.wait_records(job)
    assert len(rec) == 1 and (rec[0][11], rec[0][12]) == ("0", "0")
    rec = cell.wait_records(other)
    assert len(rec) == 1 and (rec[0][11], rec[0][12]) == ("0", "3")  # its exit status, never failed 19
    # in the order they ended
    assert [int(r[5]) for r in cell.accounting_records()][-2:] == [job, other]
    cell.stop()
    cell.start()
    assert len(cell.records_of(job)) == 1 and len(cell.records_of(other)) == 1
