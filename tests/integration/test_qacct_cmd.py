"""qacct(1) on the accounting file a running cell writes."""

from __future__ import annotations

import os

import pytest
from conftest import submit
from golden import without_fmt_usage

pytestmark = pytest.mark.root


def _finished(cell, **request) -> int:
    job = submit(cell, **request)
    cell.wait_records(job)
    return job


def _value(out: str, key: str) -> str:
    for line in out.splitlines():
        if line[:13].rstrip() == key:
            return line[13:].rstrip()
    raise AssertionError(f"no {key} line in {out!r}")


def test_qacct_j_shows_exit_status_and_failed_of_a_finished_job(cell):
    job = _finished(cell, job_name="exit3", command="/bin/sh", args=["-c", "'exit 3'"])  # joined as -b y does
    r = cell.run("qacct", "-j", str(job))
    assert r.rc == 0, r
    assert r.out.startswith("=" * 62 + "\n")
    assert _value(r.out, "jobname") == "exit3"
    assert _value(r.out, "jobnumber") == str(job)
    assert _value(r.out, "exit_status") == "3"
    assert _value(r.out, "failed") == "0"
    assert _value(r.out, "owner") == "root"
    assert _value(r.out, "qname") == "all.q"
    assert _value(r.out, "hostname") == cell.host


def test_qacct_j_by_name_pattern(cell):
    job = _finished(cell, job_name="named", command="/bin/true", args=[])
    r = cell.run("qacct", "-j", "nam*")
    assert r.rc == 0 and _value(r.out, "jobnumber") == str(job)


def test_qacct_of_an_unknown_job_exits_1(cell):
    _finished(cell, command="/bin/true", args=[])
    r = cell.run("qacct", "-j", "999999")
    assert (r.rc, r.out, r.err) == (1, "", "error: job id 999999 not found\n")
    r = cell.run("qacct", "-j", "nosuchname")
    assert (r.rc, r.err) == (1, "error: job name nosuchname not found\n")


def test_qacct_summary_totals_the_usage(cell):
    _finished(cell, command="/bin/true", args=[])
    r = cell.run("qacct")
    lines = r.out.splitlines()
    assert r.rc == 0
    assert lines[0] == "Total System Usage"
    assert lines[1].split() == ["WALLCLOCK", "UTIME", "STIME", "CPU", "MEMORY", "IO", "IOW"]
    assert lines[2] == "=" * 112


def test_qacct_o_lists_usage_per_owner(cell):
    _finished(cell, command="/bin/sleep", args=["1"])
    lines = cell.run("qacct", "-o").out.splitlines()
    # the OWNER column is one wider than its longest entry ("OWNER" + 1 here)
    assert lines[0].startswith("OWNER " + "    WALLCLOCK")
    assert lines[2].startswith("root  " + " " * 12)
    lines = cell.run("qacct", "-o", "nobody").out.splitlines()
    assert len(lines) == 2  # header only: no usage of that owner


def test_qacct_t_requires_j(cell):
    r = cell.run("qacct", "-t", "1")
    assert r.rc == 1
    assert r.err.startswith("error: -t option requires -j option with an argument\nSGE 8.1.9\n")


def test_qacct_unknown_option_prints_the_usage_and_exits_1(cell):
    r = cell.run("qacct", "-foo")
    with open(os.path.join(os.path.dirname(__file__), "..", "golden", "qacct.unknown_option.stderr")) as f:
        assert (r.rc, r.out, without_fmt_usage(r.err)) == (1, "", f.read())


def test_qacct_without_an_accounting_file(cell, tmp_path):
    r = cell.run("qacct", "-f", str(tmp_path / "none"))
    assert r.rc == 1
    assert r.out == "no jobs running since startup\n"
    assert r.err == f"{tmp_path / 'none'}: No such file or directory\n"
