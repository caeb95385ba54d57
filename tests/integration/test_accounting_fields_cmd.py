"""The accounting file a minisge cell writes, field by field (accounting(5)),
for every kind of job: plain, array, PE, failed, deleted, h_rt exceeded,
-l requests, -P/-A/-p; and, where the real Grid Engine's qacct is
installed (/usr/bin/qacct; CI has none), that it reads minisge's file with
the same figures as minisge's qacct."""

from __future__ import annotations

import os
import subprocess

import pytest
from cellutil import ensure_user, script, touch, until_file

from minisge.formats import accounting

pytestmark = pytest.mark.root

USER = "msgeuser1"
REAL_QACCT = "/usr/bin/qacct"


@pytest.fixture(scope="module")
def user():
    return ensure_user(USER)


def _qsub(cell, *args: str) -> int:
    return cell.submit(*args, user=USER)


def _records(cell, job: int, n: int = 1) -> list[list[str]]:
    return cell.wait_records(job, n)


def _check_types(rec: list[str]) -> None:
    """Every field has accounting(5)'s type: 45 fields, integers, %f
    floats with six decimals, strings without a raw ':'."""
    assert len(rec) == accounting.NFIELDS, rec
    for name, value in zip(accounting.FIELD_NAMES, rec, strict=True):
        if name in accounting.FLOAT_FIELDS:
            whole, dot, frac = value.partition(".")
            assert dot and len(frac) == 6 and whole.lstrip("-").isdigit(), (name, value)
        elif name in accounting.INT_FIELDS:
            assert value.lstrip("-").isdigit(), (name, value)
        else:
            assert value, (name, value)


def _real_qacct(*args: str) -> subprocess.CompletedProcess:
    """The real 8.1.9 qacct, in its own environment (not the test cell's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGE_")}
    return subprocess.run([REAL_QACCT, *args], capture_output=True, text=True, env=env)


def _fields(rec: list[str]) -> dict[str, str]:
    return dict(zip(accounting.FIELD_NAMES, rec, strict=True))


def test_every_kind_of_job_is_accounted_field_by_field(cell, user):
    # a project (referenced by no queue or host: 8.1.9 leaves it out of the category)
    prj = os.path.join(cell.work, "prj")
    with open(prj, "w") as f:
        f.write("name acctprj\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    assert cell.run("qconf", "-Aprj", prj).rc == 0
    plain = _qsub(cell, "-b", "y", "-N", "plain", "-A", "myacct", "-P", "acctprj", "-p", "-100",
                  "/bin/sh", "-c", "'exit 3'")  # -b y joins the words
    array = _qsub(cell, "-b", "y", "-N", "arr", "-t", "1-2", "/bin/true")
    pe = _qsub(cell, "-b", "y", "-N", "pe", "-pe", "smp", "2", "/bin/true")
    requests = _qsub(cell, "-b", "y", "-N", "req", "-l", "h_rt=0:10:0,h_vmem=1G", "-soft", "-l", "s_rt=1:0:0",
                     "-hard", "-q", "all.q", "/bin/true")
    failed = _qsub(cell, "-b", "y", "-N", "failed", "-o", "/nonexistent_dir/out", "/bin/true")
    hrt = _qsub(cell, "-b", "y", "-N", "hrt", "-l", "h_rt=1", "/bin/sleep", "60")
    stop = os.path.join(cell.work, "never")
    deleted = _qsub(cell, "-N", "deleted", until_file(cell, stop))
    cell.wait_for(lambda: cell.qstat_states().get(deleted) == "r", what="job deleted running")
    assert cell.run("qdel", str(deleted), user=USER).rc == 0

    host, owner = cell.host, USER
    for job, n in ((plain, 1), (array, 2), (pe, 1), (requests, 1), (failed, 1), (hrt, 1), (deleted, 1)):
        for rec in _records(cell, job, n):
            _check_types(rec)
            f = _fields(rec)
            assert (f["qname"], f["hostname"], f["owner"], f["job_number"]) == ("all.q", host, owner, str(job))
            assert f["department"] == "defaultdepartment" and f["pe_taskid"] == "NONE"
            assert (f["arid"], f["ar_submission_time"]) == ("0", "0")
            assert f["priority"] == "0"  # the queue's priority (queue_conf(5)), not -p
            sub, start, end = int(f["submission_time"]), int(f["start_time"]), int(f["end_time"])
            assert 0 < sub <= start <= end or (f["failed"] != "0" and start == 0), f
            if f["failed"] == "0":
                assert int(f["ru_wallclock"]) == end - start

    f = _fields(cell.records_of(plain)[0])
    assert (f["job_name"], f["account"], f["project"], f["exit_status"], f["failed"]) == \
        ("plain", "myacct", "acctprj", "3", "0")
    assert (f["granted_pe"], f["slots"], f["task_number"], f["category"]) == ("NONE", "1", "0", "NONE")

    tasks = sorted(_fields(r)["task_number"] for r in cell.records_of(array))
    assert tasks == ["1", "2"]

    f = _fields(cell.records_of(pe)[0])
    assert (f["granted_pe"], f["slots"], f["category"]) == ("smp", "2", "-pe smp 2")

    f = _fields(cell.records_of(requests)[0])
    # TIME requests in seconds, as 8.1.9 keeps them: the category holds no ':'
    assert f["category"] == "-q all.q -l h_rt=600,h_vmem=1G -soft -l s_rt=3600"

    f = _fields(cell.records_of(failed)[0])
    assert f["failed"] == "26" and f["exit_status"] == "0"

    f = _fields(cell.records_of(hrt)[0])
    assert (f["failed"], f["exit_status"], f["category"]) == ("37", "137", "-l h_rt=1")

    f = _fields(cell.records_of(deleted)[0])
    assert f["exit_status"] == "137"
    touch(stop)

    if not os.path.exists(REAL_QACCT):
        return  # no real Grid Engine here (CI): the comparison below needs its qacct
    for job in (plain, array, pe, requests, failed, hrt, deleted):
        ours = cell.run("qacct", "-f", cell.accounting, "-j", str(job))
        theirs = _real_qacct("-f", cell.accounting, "-j", str(job))
        assert ours.rc == theirs.returncode == 0, (ours, theirs.stderr)
        assert ours.out == theirs.stdout, job
    ours = cell.run("qacct", "-f", cell.accounting, "-j")
    theirs = _real_qacct("-f", cell.accounting, "-j")
    assert ours.out == theirs.stdout


def test_qacct_j_without_an_id_ends_with_the_total_system_usage(cell, user):
    job = _qsub(cell, "-b", "y", "-N", "one", "/bin/true")
    _records(cell, job)
    r = cell.run("qacct", "-j")
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0] == "=" * 62
    # the job's lines, then the summary (its data row only when the wall clock total is not 0)
    at = lines.index("Total System Usage")
    assert lines[at - 1].startswith("category ")
    assert lines[at + 1].split() == ["WALLCLOCK", "UTIME", "STIME", "CPU", "MEMORY", "IO", "IOW"]
    assert len(lines) - at in (3, 4)
    # with an id: the job alone, no summary
    r = cell.run("qacct", "-j", str(job))
    assert "Total System Usage" not in r.out


def test_a_job_script_with_S_accounts_like_any_other(cell, user):
    path = script(cell, "withS.sh", "#$ -S /bin/sh\nexit 0")
    job = _qsub(cell, path)
    f = _fields(_records(cell, job)[0])
    assert (f["failed"], f["exit_status"], f["category"]) == ("0", "0", "NONE")
