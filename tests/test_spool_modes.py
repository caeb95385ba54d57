"""What a job holds (its -v values, its script) is its owner's and the
daemon's alone: the modes of the qmaster's job spool and of the execd's task
directories, also for a spool written before them."""

from __future__ import annotations

import json
import os
import stat

import pytest

from minisge.cell import Cell
from minisge.execd import task_dir
from minisge.qmaster.spool import QmasterSpool, job_relpath


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def spool(tmp_path):
    s = QmasterSpool(Cell(str(tmp_path)))
    s.create_dirs()
    return s


def test_a_new_spool_keeps_jobs_to_the_daemon_and_lets_owners_reach_their_scripts(spool):
    assert mode(os.path.join(spool.dir, "jobs")) == 0o700
    assert mode(os.path.join(spool.dir, "job_scripts")) == 0o711


def test_a_job_file_is_0600_and_a_script_its_owners_0700(spool):
    old_umask = os.umask(0)
    try:
        spool.write_job(5, {"number": 5, "uid": 4321, "spec": {"env": {"SECRET": "x"}}})
        path = spool.write_script(5, "echo hi\n", owner=4321)
    finally:
        os.umask(old_umask)
    job = os.path.join(spool.dir, job_relpath(5))
    assert mode(job) == 0o600
    assert mode(os.path.dirname(job)) == 0o700
    assert mode(path) == 0o700
    if os.getuid() == 0:
        assert os.stat(path).st_uid == 4321


def test_loading_an_older_spool_gives_it_the_modes(spool):
    jobs, scripts = os.path.join(spool.dir, "jobs"), os.path.join(spool.dir, "job_scripts")
    shard = os.path.dirname(os.path.join(spool.dir, job_relpath(9)))
    os.makedirs(shard)
    with open(os.path.join(shard, "0009"), "w") as f:
        json.dump({"number": 9, "uid": 4321}, f)
    with open(os.path.join(scripts, "9"), "w") as f:
        f.write("echo\n")
    for path, old in ((jobs, 0o755), (scripts, 0o755), (shard, 0o755), (os.path.join(shard, "0009"), 0o644),
                      (os.path.join(scripts, "9"), 0o755)):
        os.chmod(path, old)
    assert [d["number"] for _path, d in spool.load_jobs()] == [9]
    assert (mode(jobs), mode(scripts), mode(shard)) == (0o700, 0o711, 0o700)
    assert mode(os.path.join(shard, "0009")) == 0o600
    assert mode(os.path.join(scripts, "9")) == 0o700
    if os.getuid() == 0:
        assert os.stat(os.path.join(scripts, "9")).st_uid == 4321


def test_a_task_config_is_0600_and_an_older_execd_spool_gets_the_modes(tmp_path):
    active = tmp_path / "active_jobs" / "3.1"
    pe = tmp_path / "pe_tasks" / "4.1" / "1.node1"
    for d in (active, pe):
        d.mkdir(parents=True)
        (d / "config").write_text("{}")
        os.chmod(d / "config", 0o644)
        os.chmod(d, 0o755)
    task_dir.secure_spool(str(tmp_path))
    for d in (active, pe):
        assert (mode(str(d)), mode(str(d / "config"))) == (0o711, 0o600)
    task_dir.write_config(str(active), {"env": {"SECRET": "x"}})
    assert mode(str(active / "config")) == 0o600
