"""spool.FreeJobFiles: a deleted job's file is kept in jobs/.free/ and a new
job's file is written over one of them and renamed into its place, whole;
what is kept there is never read as a job, and the pool gives way (to a
plain remove, to a new file) whenever it cannot serve."""

from __future__ import annotations

import json
import os
import stat

import pytest

from minisge.cell import Cell
from minisge.qmaster import spool as spool_mod
from minisge.qmaster.spool import FREE_DIR, QmasterSpool, job_relpath


@pytest.fixture
def spool(tmp_path):
    s = QmasterSpool(Cell(str(tmp_path)))
    s.create_dirs()
    return s


def job(number: int, text: str = "") -> dict:
    return {"number": number, "name": f"j{number}", "spec": {"text": text}}


def path_of(spool: QmasterSpool, number: int) -> str:
    return os.path.join(spool.dir, job_relpath(number))


def test_a_new_jobs_file_is_a_deleted_jobs_file_written_again_whole(spool):
    spool.write_job(1, job(1, "x" * 3000), sync=False, new=True)  # longer than what comes after it
    inode = os.stat(path_of(spool, 1)).st_ino
    spool.delete_job(1)
    assert not os.path.exists(path_of(spool, 1))
    assert os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR)) == ["0"]
    spool.write_job(2, job(2), sync=False, new=True)
    st = os.stat(path_of(spool, 2))
    assert st.st_ino == inode  # no new inode
    assert stat.S_IMODE(st.st_mode) == 0o600
    with open(path_of(spool, 2)) as f:
        # the old bytes beyond the new ones cut off; the write's number with the job (job_journal.py)
        assert json.load(f) == {**job(2), "spool_seq": 2}
    assert os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR)) == []
    assert [d["number"] for _, d in spool.load_jobs()] == [2]


def test_what_is_kept_is_no_job_at_the_load_and_a_restart_uses_it(spool):
    for n in (1, 2, 3):
        spool.write_job(n, job(n), sync=False, new=True)
    spool.delete_job(1)
    spool.delete_job(3)
    with open(os.path.join(spool.dir, "jobs", FREE_DIR, "7"), "w") as f:
        f.write('{"number": 99, "half written')  # a crash in the middle of a write there
    again = QmasterSpool(spool.cell)
    assert [d["number"] for _, d in again.load_jobs()] == [2]
    assert sorted(again.free_job_files.names, key=int) == ["0", "1", "7"]
    again.delete_job(2)  # kept under a name after the ones there
    assert sorted(os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR)), key=int) == ["0", "1", "7", "8"]
    for n in (4, 5, 6, 7, 8):
        again.write_job(n, job(n), sync=False, new=True)
    assert [d["number"] for _, d in again.load_jobs()] == [4, 5, 6, 7, 8]


def test_a_full_pool_removes_and_an_empty_one_makes_a_new_file(spool, monkeypatch):
    monkeypatch.setattr(spool_mod, "FREE_FILES", 1)
    for n in (1, 2):
        spool.write_job(n, job(n), sync=False, new=True)
    spool.delete_job(1)
    spool.delete_job(2)  # the pool is full: removed
    assert os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR)) == ["0"]
    spool.write_job(3, job(3), sync=False, new=True)
    spool.write_job(4, job(4), sync=False, new=True)  # none kept any more: a file of its own
    assert [d["number"] for _, d in spool.load_jobs()] == [3, 4]


def test_a_kept_file_gone_or_a_synced_write_makes_a_new_file(spool):
    spool.write_job(1, job(1), sync=False, new=True)
    spool.delete_job(1)
    os.unlink(os.path.join(spool.dir, "jobs", FREE_DIR, "0"))  # someone removed it
    spool.write_job(2, job(2), sync=False, new=True)
    spool.write_job(3, job(3), sync=False, new=True)
    spool.delete_job(3)
    spool.write_job(4, job(4), sync=True, new=True)  # fsynced on its own: atomic_write's file, pool untouched
    assert len(os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR))) == 1
    assert [d["number"] for _, d in spool.load_jobs()] == [2, 4]


def test_jobseqnum_is_replaced_by_a_kept_file_and_its_old_one_kept_for_a_job(spool):
    spool.write_jobseqnum(7)  # none kept yet: a file of its own
    old = os.stat(spool.jobseqnum_path).st_ino
    for n in (1, 2):
        spool.write_job(n, job(n), sync=False, new=True)
    for n in (1, 2):
        spool.delete_job(n)
    spool.write_jobseqnum(8)
    st = os.stat(spool.jobseqnum_path)
    assert spool.read_jobseqnum() == 8 and stat.S_IMODE(st.st_mode) == 0o644 and st.st_ino != old
    kept = {os.stat(os.path.join(spool.dir, "jobs", FREE_DIR, n)).st_ino: n
            for n in os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR))}
    assert old in kept and len(kept) == 2  # the old jobseqnum kept, not freed
    for n in (3, 4):  # written over the kept ones: a job file again, the daemon's alone
        spool.write_job(n, job(n), sync=False, new=True)
        assert stat.S_IMODE(os.stat(path_of(spool, n)).st_mode) == 0o600
    assert [d["number"] for _, d in spool.load_jobs()] == [3, 4]


def test_with_nothing_kept_jobseqnum_is_a_new_file_and_the_old_one_still_kept(spool):
    spool.write_jobseqnum(1)
    first = os.stat(spool.jobseqnum_path).st_ino
    spool.write_jobseqnum(2)  # nothing kept: atomic_write's new file; the first kept, not freed
    assert spool.read_jobseqnum() == 2 and os.stat(spool.jobseqnum_path).st_ino != first
    free = os.path.join(spool.dir, "jobs", FREE_DIR)
    assert [os.stat(os.path.join(free, n)).st_ino for n in os.listdir(free)] == [first]
    spool.write_jobseqnum(3)  # written over the first, the second kept
    assert os.stat(spool.jobseqnum_path).st_ino == first and spool.read_jobseqnum() == 3
    assert len(os.listdir(free)) == 1


def test_a_kept_file_with_a_second_name_is_not_kept_after_a_restart(spool):
    """A crash between replace's link of the old jobseqnum and its rename
    leaves jobseqnum with a second name in jobs/.free/: never written over."""
    spool.write_jobseqnum(5)
    os.link(spool.jobseqnum_path, os.path.join(spool.dir, "jobs", FREE_DIR, "3"))
    again = QmasterSpool(spool.cell)
    list(again.load_jobs())
    assert again.free_job_files.names == [] and os.listdir(os.path.join(spool.dir, "jobs", FREE_DIR)) == []
    again.write_job(1, job(1), sync=False, new=True)
    assert again.read_jobseqnum() == 5


def test_a_jobs_change_is_written_over_a_kept_file_and_its_old_file_is_kept(spool):
    """A running job's every change (a dispatch, an end: not synced) rewrites
    its file: the old one is kept for the next change instead of freed, so
    two inodes take turns and none is found or freed; the file read is the
    last one.  A request's change (synced) is a new file, as before."""
    free = os.path.join(spool.dir, "jobs", FREE_DIR)
    spool.write_job(1, job(1, "a" * 2000), sync=False, new=True)
    first = os.stat(path_of(spool, 1)).st_ino
    spool.write_job(1, job(1, "b"), sync=False)
    assert json.load(open(path_of(spool, 1)))["spec"]["text"] == "b"
    assert len(os.listdir(free)) == 1  # the first file, kept
    second = os.stat(path_of(spool, 1)).st_ino
    spool.write_job(1, job(1, "c" * 100), sync=False)
    assert json.load(open(path_of(spool, 1)))["spec"]["text"] == "c" * 100
    assert os.stat(path_of(spool, 1)).st_ino == first  # written over the kept one
    [kept] = os.listdir(free)
    assert os.stat(os.path.join(free, kept)).st_ino == second
    assert os.stat(os.path.join(free, kept)).st_nlink == 1
    assert stat.S_IMODE(os.stat(path_of(spool, 1)).st_mode) == spool_mod.JOB_FILE_MODE
    spool.write_job(1, job(1, "d"), sync=True)
    assert os.stat(path_of(spool, 1)).st_ino not in (first, second)
    assert json.load(open(path_of(spool, 1)))["spec"]["text"] == "d"
