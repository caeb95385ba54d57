"""sched_conf(5) schedd_job_info against what the real 8.1.9 printed
(tests/golden/qstat_-j*.schedd_job_info_*): with ``false`` qstat -j shows
only that collecting is turned off; with ``job_list N`` the listed job and
the jobs of its category keep their reasons, the others none, under a note."""

from __future__ import annotations

import os
import re

import pytest
from cellutil import ensure_user
from golden import read_golden

pytestmark = pytest.mark.root

USER = "msgeuser1"


@pytest.fixture(scope="module")
def user():
    return ensure_user(USER)


def _set_schedd_job_info(cell, value: str) -> None:
    conf = cell.run("qconf", "-ssconf").out
    path = os.path.join(cell.dir, "sconf")
    with open(path, "w") as f:
        f.write(re.sub(r"(?m)^schedd_job_info .*$", f"{'schedd_job_info':<34}{value}", conf))
    r = cell.run("qconf", "-Msconf", path)
    assert r.rc == 0, r
    assert f"schedd_job_info                   {value}\n" in cell.run("qconf", "-ssconf").out


def _info(text: str) -> str:
    """qstat -j's scheduling info lines, a PE's slot count made neutral (the
    peer's all.q offered 0 smp slots, this cell's host its cores)."""
    return re.sub(r"only offers \d+ slots", "only offers N slots", text[text.index("scheduling info:"):])


def _pending_pe_job(cell, slots: str) -> int:
    # as the peer's 493-495: qsub -b y -pe smp 4|3 /bin/sleep 1, more slots than the cell has
    return cell.submit("-b", "y", "-pe", "smp", slots, "/bin/sleep", "1", user=USER, cwd="/tmp")


def test_schedd_job_info_false_turns_the_job_messages_off(cell, user):
    job = _pending_pe_job(cell, "400")
    cell.wait_for(lambda: "cannot run" in cell.run("qstat", "-j", str(job), user=USER).out, what="a reason")
    _set_schedd_job_info(cell, "false")
    want = _info(read_golden("qstat_-j_JOBID.schedd_job_info_false").text)
    cell.wait_for(lambda: _info(cell.run("qstat", "-j", str(job), user=USER).out) == want,
                  what="qstat -j as 8.1.9's with schedd_job_info false")
    r = cell.run("qstat", "-j", user=USER)
    assert (r.rc, r.out) == (0, read_golden("qstat_-j.schedd_job_info_false").text)
    xml = cell.run("qstat", "-j", str(job), "-xml", user=USER).out
    gold = read_golden("qstat_-j_JOBID_-xml.schedd_job_info_false").text
    assert xml[xml.index("<messages>"):] == gold[gold.index("<messages>"):]


def test_schedd_job_info_job_list_keeps_the_listed_jobs_category(cell, user):
    listed, same, other = _pending_pe_job(cell, "400"), _pending_pe_job(cell, "400"), _pending_pe_job(cell, "300")
    _set_schedd_job_info(cell, f"job_list {listed}")
    note = "scheduling info:            (Scheduler job information not available for every job)\n"
    gold = read_golden("qstat_-j_JOBID.schedd_job_info_job_list_493").text
    assert _info(gold).startswith(note) and "cannot run in PE" in _info(gold)
    # 493 listed, 494 of its category: its reason (the peer's 494 -xml), 495 none
    cell.wait_for(lambda: _info(cell.run("qstat", "-j", str(other), user=USER).out)
                  == _info(read_golden("qstat_-j_JOBID.schedd_job_info_job_list_495").text),
                  what="job 3 without its reason")
    for job in (listed, same):
        text = _info(cell.run("qstat", "-j", str(job), user=USER).out)
        assert text.startswith(note) and 'cannot run in PE "smp"' in text, text
    assert _info(cell.run("qstat", "-j", str(listed), user=USER).out) == _info(gold)
    xml = cell.run("qstat", "-j", str(same), "-xml", user=USER).out
    theirs = read_golden("qstat_-j_JOBID_-xml.schedd_job_info_job_list_494").text
    assert (re.sub(r"<ULNG_value>\d+<", "<ULNG_value>J<", _info_xml(xml))
            == re.sub(r"<ULNG_value>\d+<", "<ULNG_value>J<", _info_xml(theirs)))
    # qstat -j alone: the note first, as the peer's; minisge lists no per-reason job
    # lists ("Jobs can not run because available slots combined under PE ..."), only
    # holds and dependencies, so only the note and its blank line are compared
    r = cell.run("qstat", "-j", user=USER)
    summary = read_golden("qstat_-j.schedd_job_info_job_list").text
    assert r.out == summary[:summary.index("\n\n") + 2]


def _info_xml(text: str) -> str:
    return re.sub(r"only offers \d+ slots", "only offers N slots", text[text.index("<messages>"):])
