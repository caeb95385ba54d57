"""qsub -sync r (Open Cluster Scheduler's: return once the job runs) and
qacct -efficiency (minisge's: how well jobs used what they asked for), through
one real cell: real daemons, real jobs, the accounting file they write."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from cellutil import WAIT, Cell, command_line, script, touch, until_file

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def cell():
    c = Cell().start()
    try:
        yield c
    finally:
        c.cleanup()


def _job_id(out: str) -> int:
    return int(re.search(r"Your job(?:-array)? (\d+)", out).group(1))


# ---------------------------------------------------------------- qsub -sync r

def test_sync_r_returns_while_the_job_still_runs(cell):
    go = os.path.join(cell.work, "go-r")
    r = cell.run("qsub", "-sync", "r", until_file(cell, go))
    assert r.rc == 0 and r.err == "", r
    job = _job_id(r.out)
    assert r.out.endswith(f"has been submitted\nJob {job} has started.\n"), r
    assert cell.qstat_states()[job] == "r"  # still running: qsub did not wait for its end
    assert not cell.records_of(job)
    touch(go)
    cell.wait_records(job)


def test_sync_r_of_an_array_names_a_task_that_started(cell):
    go = os.path.join(cell.work, "go-array")
    r = cell.run("qsub", "-sync", "r", "-t", "1-2", until_file(cell, go))
    assert r.rc == 0, r
    job = _job_id(r.out)
    assert re.search(rf"\nJob {job}\.[12] has started\.\n$", r.out), r
    touch(go)
    cell.wait_records(job, 2)


def test_sync_rx_tells_the_start_then_the_end_with_its_exit_code(cell):
    r = cell.run("qsub", "-sync", "rx", "-b", "y", "/bin/sh", "-c", "'exit 3'")
    job = _job_id(r.out)
    assert (r.rc, r.err) == (3, f"Job {job} exited with exit code 3.\n"), r
    assert r.out.endswith(f"Job {job} has started.\n")


def test_sync_r_of_a_job_deleted_before_it_ran_exits_1(cell):
    qsub = subprocess.Popen(command_line("qsub", "-sync", "r", "-h", "-b", "y", "/bin/true"), env=cell.env(),
                            cwd=cell.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        job = _job_id(qsub.stdout.readline())
        assert cell.qstat_states()[job] == "hqw"
        assert cell.run("qdel", str(job)).rc == 0
        out, err = qsub.communicate(timeout=WAIT)
    finally:
        qsub.kill()
        qsub.wait()
    assert (qsub.returncode, out, err) == (1, "", f"Unable to run job {job}\n")


# ---------------------------------------------------------------- qacct -efficiency

def _value(out: str, key: str) -> str:
    return next(line[13:] for line in out.splitlines() if line[:13].rstrip() == key)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def test_efficiency_of_an_array_job_from_its_accounting_records(cell):
    burn = script(cell, "burn.sh", 'end=$(( $(date +%s) + 2 )); while [ "$(date +%s)" -lt "$end" ]; do :; done')
    r = cell.run("qsub", "-sync", "y", "-t", "1-2", "-l", "h_rt=600,h_vmem=2G", burn)
    assert r.rc == 0, r
    job = _job_id(r.out)
    records = cell.wait_records(job, 2)
    # accounting(5): ru_wallclock 13, slots 34, cpu 36, maxvmem 42
    cpu = sum(float(rec[36]) for rec in records)
    slot_time = sum(float(rec[13]) * int(rec[34]) for rec in records)
    peak = max(float(rec[42]) for rec in records)
    longest = max(float(rec[13]) for rec in records)
    assert cpu > 0 and slot_time > 0 and peak > 0

    e = cell.run("qacct", "-j", str(job), "-efficiency")
    assert e.rc == 0 and e.err == "", e
    assert e.out.count("=" * 62) == 1  # one block for the job, both tasks in it
    assert _value(e.out, "jobnumber") == str(job)
    assert _value(e.out, "tasks") == "2"
    assert _value(e.out, "cpu") == f"{cpu:.3f}s"
    assert _value(e.out, "cpu_eff").split()[0] == _percent(cpu / slot_time)
    assert _value(e.out, "h_vmem").split() == ["2.000GB", "per", "slot", "peak",
                                               _percent(peak / 2**31), "of", "the", "request"]
    assert _value(e.out, "h_rt").split()[:4] == ["600s", "longest", "run", f"{longest:.3f}s:"]
    assert _value(e.out, "h_rt").split()[4] == _percent(longest / 600)

    # a user's jobs: one block each, then the total (a second job of its own: under
    # pytest -n this module's other tests may run in another worker's cell)
    assert cell.run("qsub", "-sync", "y", "-b", "y", "/bin/true").rc == 0
    e = cell.run("qacct", "-o", "root", "-efficiency")
    assert e.rc == 0, e
    jobs = {rec[5] for rec in cell.accounting_records()}
    assert e.out.count("=" * 62) == len(jobs) + 1
    assert _value(e.out, "total") == f"{len(jobs)} jobs of root"

    e = cell.run("qacct", "-j", "999999", "-efficiency")
    assert (e.rc, e.out, e.err) == (1, "", "error: job id 999999 not found\n")
