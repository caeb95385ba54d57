"""qstat(1) against a running cell: the command as a process, the real daemon."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.dom.minidom

import pytest
from conftest import submit
from golden import without_fmt_usage

pytestmark = pytest.mark.root

HEADER = ("job-ID  prior   name       user         state submit/start at     "
          "queue                          slots ja-task-ID \n")


def _lines(out: str) -> dict[int, str]:
    """Job lines of a listing by job id (the first line of each job)."""
    jobs: dict[int, str] = {}
    for line in out.splitlines()[2:]:
        jobs.setdefault(int(line.split()[0]), line)
    return jobs


def _wait_running(cell, job_id: int) -> None:
    cell.wait_for(lambda: cell.qstat_states().get(job_id) == "r", what=f"job {job_id} running")


def test_qstat_prints_nothing_when_there_are_no_jobs(cell):
    r = cell.run("qstat")
    assert (r.rc, r.out, r.err) == (0, "", "")
    # and loads no module to print nothing with (issue 14: qstat_out and what it imports were
    # a tenth of an empty qstat's instructions), nor the formats package (no queue pattern)
    probe = ("import sys\nfrom minisge.cli import qstat\nrc = qstat.main([])\n"
             "print(rc, sorted(m for m in sys.modules if m.startswith(('minisge.output', 'minisge.formats'))))")
    p = subprocess.run([sys.executable, "-c", probe], env=cell.env(), capture_output=True, text=True, cwd=cell.work)
    assert (p.stdout, p.stderr) == ("0 []\n", "")


def test_running_and_pending_jobs_show_with_grid_engines_columns(cell):
    running = [submit(cell, job_name=f"run{i}") for i in (1, 2)]
    pending = submit(cell, job_name="pend1")
    for j in running:
        _wait_running(cell, j)
    r = cell.run("qstat")
    assert r.rc == 0
    assert r.out.startswith(HEADER + "-" * 113 + "\n")
    lines = _lines(r.out)
    run_line = lines[running[0]]
    assert run_line[:8] == f"{running[0]:7d} "
    assert run_line[16:27] == "run1       "
    assert run_line[40:46] == "r     "
    assert run_line[66:97] == f"{'all.q@' + cell.host:<30} "
    assert run_line[97:] == "    1        "
    pend_line = lines[pending]
    assert pend_line[40:46] == "qw    "
    assert pend_line[66:] == " " * 31 + "    1        "
    # running lines come first, then the pending ones
    assert list(lines) == running + [pending]


def test_qstat_j_of_an_unknown_job_says_so_on_stderr_and_exits_1(cell):
    r = cell.run("qstat", "-j", "999999")
    assert (r.rc, r.out, r.err) == (1, "", "Following jobs do not exist: \n999999\n")


def test_qstat_j_shows_the_job_and_why_it_pends(cell):
    held = submit(cell, job_name="held", hold=True)
    r = cell.run("qstat", "-j", str(held))
    assert r.rc == 0
    assert r.out.startswith("=" * 62 + f"\njob_number:                 {held}\n")
    assert "job_name:                   held\n" in r.out
    assert "scheduling info:" in r.out and "Job is in hold state\n" in r.out


def test_qstat_shows_only_the_callers_jobs_unless_u(cell):
    job = submit(cell, job_name="mine")
    assert job in _lines(cell.run("qstat").out)
    assert cell.run("qstat", "-u", "nobody").out == ""
    assert job in _lines(cell.run("qstat", "-u", "*").out)
    assert job in _lines(cell.run("qstat", "-u", "root").out)


def test_s_selects_jobs_by_state(cell):
    running = submit(cell, job_name="run")
    _wait_running(cell, running)
    held = submit(cell, job_name="held", hold=True)
    assert list(_lines(cell.run("qstat", "-s", "r").out)) == [running]
    assert list(_lines(cell.run("qstat", "-s", "p").out)) == [held]
    assert list(_lines(cell.run("qstat", "-s", "h").out)) == [held]
    assert cell.run("qstat", "-s", "z").out == ""


def test_bad_s_argument_prints_the_usage_and_exits_1(cell):
    r = cell.run("qstat", "-s", "x")
    assert r.rc == 1
    assert r.err.startswith("SGE 8.1.9\nusage: qstat [options]\n")
    assert r.err.endswith("ERROR! wrong argument to -s option\n")


def test_unknown_option_prints_grid_engines_usage_and_exits_1(cell):
    r = cell.run("qstat", "-foo")
    with open(os.path.join(os.path.dirname(__file__), "..", "golden", "qstat.unknown_option.stderr")) as f:
        golden = f.read()
    assert (r.rc, r.out, without_fmt_usage(r.err)) == (1, "", golden)


def test_xml_output_parses_and_lists_the_jobs(cell):
    running = submit(cell, job_name="run")
    _wait_running(cell, running)
    pending = submit(cell, job_name="held", hold=True)
    for args in (("-xml",), ("-f", "-xml")):
        r = cell.run("qstat", *args)
        doc = xml.dom.minidom.parseString(r.out)
        numbers = [int(e.firstChild.data) for e in doc.getElementsByTagName("JB_job_number")]
        assert numbers == [running, pending], args
        states = [e.getAttribute("state") for e in doc.getElementsByTagName("job_list")]
        assert states == ["running", "pending"]


def test_f_lists_queue_instances_then_pending_jobs(cell):
    pending = submit(cell, job_name="held", hold=True)
    out = cell.run("qstat", "-f").out
    lines = out.splitlines()
    assert lines[0] == "queuename                      qtype resv/used/tot. load_avg arch          states"
    assert lines[2].startswith(f"{'all.q@' + cell.host:<30} BIP   0/0/2 ")
    assert " - PENDING JOBS - PENDING JOBS" in out
    assert lines[-1].startswith(f"{pending:7d} ")


def test_g_c_summarises_the_cluster_queue(cell):
    out = cell.run("qstat", "-g", "c").out.splitlines()
    assert out[0].startswith("CLUSTER QUEUE                   CQLOAD   USED    RES  AVAIL  TOTAL")
    assert out[2].split()[0] == "all.q"
    assert out[2].split()[2:] == ["0", "0", "2", "2", "0", "0"]


def test_q_of_an_unknown_queue_prints_nothing_and_exits_1(cell):
    submit(cell, job_name="held", hold=True)
    r = cell.run("qstat", "-q", "nosuch.q")
    assert (r.rc, r.out, r.err) == (1, "", "")
    assert cell.run("qstat", "-q", "all.q").out != ""
