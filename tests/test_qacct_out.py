"""qacct output against the real Grid Engine 8.1.9 (tests/golden/).

The records are the raw accounting lines the real Grid Engine wrote
(``accounting_raw_lines`` for the first session, ``accounting.ho_session``
for a second one, taken together with the ``*.ho_session`` outputs), turned
into dicts by the small reader below: accounting(5) field names, 45 fields.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from minisge.output import qacct_out as qa

GOLDEN = Path(__file__).parent / "golden"

FIELDS = (
    "qname hostname group owner job_name job_number account priority submission_time "
    "start_time end_time failed exit_status ru_wallclock ru_utime ru_stime ru_maxrss "
    "ru_ixrss ru_ismrss ru_idrss ru_isrss ru_minflt ru_majflt ru_nswap ru_inblock "
    "ru_oublock ru_msgsnd ru_msgrcv ru_nsignals ru_nvcsw ru_nivcsw project department "
    "granted_pe slots task_number cpu mem io category iow pe_taskid maxvmem arid "
    "ar_submission_time"
).split()
INTEGERS = {"job_number", "priority", "submission_time", "start_time", "end_time", "failed",
            "exit_status", "slots", "task_number", "arid", "ar_submission_time"}
STRINGS = {"qname", "hostname", "group", "owner", "job_name", "account", "project",
           "department", "granted_pe", "category", "pe_taskid"}


@pytest.fixture(autouse=True)
def utc():
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def record(line: str) -> dict:
    values = line.rstrip("\n").split(":")
    assert len(values) == len(FIELDS)
    out = {}
    for name, value in zip(FIELDS, values, strict=True):
        if name in STRINGS:
            out[name] = value
        elif name in INTEGERS:
            out[name] = int(value)
        else:
            out[name] = float(value)
    return out


def records(name: str) -> list[dict]:
    return [record(ln) for ln in golden(name).splitlines() if ln and not ln.startswith("#")]


FIRST = records("accounting_raw_lines")
SESSION = records("accounting.ho_session")


def of_job(recs, number):
    return [r for r in recs if r["job_number"] == number]


# ---------------------------------------------------------------- qacct -j

@pytest.mark.parametrize("label,number", [
    ("exit0", 11), ("exit3", 10), ("qdel_running", 2), ("h_rt", 12), ("syncdel", 13),
    ("arr", 7),
])
def test_j_prints_every_record_of_the_job(label, number):
    assert qa.format_qacct_jobs(of_job(FIRST, number)) == golden(f"qacct_-j_JOBID.{label}")


def test_j_failed_26_opening_output_file():
    assert qa.format_qacct_jobs(of_job(SESSION, 39)) == golden("qacct_-j_39.ho_session")


def test_j_pe_job_shows_granted_pe_and_slots():
    assert qa.format_qacct_jobs(of_job(SESSION, 36)) == golden("qacct_-j_36.ho_session")


def test_j_failed_zero_has_no_text():
    assert "failed       0    \n" in qa.format_qacct_job(FIRST[0])


def test_j_qdel_of_running_job_reads_assumedly_after_job_and_killed():
    out = qa.format_qacct_job(of_job(FIRST, 2)[0])
    assert "failed       100 : assumedly after job\n" in out
    assert "exit_status  137                  (Killed)\n" in out


def test_j_never_started_job_prints_dashes_for_times():
    r = dict(FIRST[0], start_time=0, end_time=0)
    out = qa.format_qacct_job(r)
    assert "start_time   -/-\n" in out and "end_time     -/-\n" in out


def test_j_advance_reservation_and_task_number():
    r = dict(FIRST[0], arid=17, ar_submission_time=1795308700, task_number=3)
    out = qa.format_qacct_job(r)
    assert "arid         17                  \n" in out
    assert "ar_sub_time  Sun Nov 22 00:51:40 2026\n" in out
    assert "taskid       3                   \n" in out


def test_j_unknown_failed_code():
    assert qa.failed_description(23) == "invalid execution state"
    assert qa.failed_description(99) == "invalid execution state"
    assert "failed       23  : invalid execution state\n" in qa.format_qacct_job(
        dict(FIRST[0], failed=23))


def test_j_missing_string_prints_null():
    r = dict(FIRST[0], account="")
    assert "account      (NULL)              \n" in qa.format_qacct_job(r)


def test_j_not_found_messages():
    assert qa.format_job_not_found(999999) == golden("qacct_-j_JOBID.nonexistent.stderr")
    assert qa.format_job_not_found(4) == golden("qacct_-j_JOBID.qdel_pending.stderr")
    assert qa.format_job_name_not_found("foo") == "error: job name foo not found\n"
    assert qa.format_tasks_not_found(7, 1, 5, 1) == "error: Job-array tasks 7.1-5:1 not found\n"


def test_memory_format():
    assert qa.format_memory(0) == "0.000B"
    assert qa.format_memory(4964) == "4.848KB"
    assert qa.format_memory(3313664) == "3.160MB"
    assert qa.format_memory(3 * 1024**3) == "3.000GB"
    assert qa.format_memory(5 * 1024**4) == "5.000TB"


# ---------------------------------------------------------------- summaries

def totals_like_golden():
    """The first session's accounting file held other jobs too; one record
    carrying its sums stands for them."""
    return [dict(FIRST[0], ru_wallclock=59, ru_utime=0.1, ru_stime=0.089, cpu=0.189,
                 mem=0.0, io=0.0, iow=0.0)]


def test_summary_total_system_usage():
    assert qa.format_qacct_summary(totals_like_golden()) == golden("qacct.summary")


@pytest.mark.parametrize("by,name", [(("owner",), "qacct_-o"), (("qname",), "qacct_-q"),
                                     (("hostname",), "qacct_-h")])
def test_summary_by_one_column(by, name):
    assert qa.format_qacct_summary(totals_like_golden(), by=by) == golden(name)


def test_summary_for_a_given_owner():
    out = qa.format_qacct_summary(totals_like_golden(), fixed={"owner": "sgetest"})
    assert out == golden("qacct_-o_sgetest")


def test_summary_of_a_whole_accounting_file():
    assert qa.format_qacct_summary(SESSION) == golden("qacct.ho_session")


@pytest.mark.parametrize("by,name", [
    (("group",), "qacct_-g"), (("department",), "qacct_-D"), (("project",), "qacct_-P"),
    (("granted_pe",), "qacct_-pe"), (("slots",), "qacct_-slots"), (("arid",), "qacct_-ar"),
    (("account",), "qacct_-A"), (("owner", "hostname"), "qacct_-o_-h"),
])
def test_summary_columns_widen_to_the_longest_value_and_sort(by, name):
    assert qa.format_qacct_summary(SESSION, by=by) == golden(f"{name}.ho_session")


def test_summary_with_owner_value_and_queue_rows():
    mine = [r for r in SESSION if r["owner"] == "sgetest"]
    out = qa.format_qacct_summary(mine, by=("qname",), fixed={"owner": "sgetest"})
    assert out == golden("qacct_-o_sgetest_-q.ho_session")


@pytest.mark.parametrize("owner", ["nobody", "bob"])
def test_summary_without_matching_records_prints_the_header_only(owner):
    out = qa.format_qacct_summary([], fixed={"owner": owner})
    assert out == golden(f"qacct_-o_{owner}.ho_session")


def test_summary_for_given_slots_keeps_the_five_column_width():
    two = [r for r in SESSION if r["slots"] == 2]
    out = qa.format_qacct_summary(two, fixed={"slots": 2})
    assert out == golden("qacct_-slots_2.ho_session")


def test_summary_without_wallclock_prints_no_row():
    out = qa.format_qacct_summary([dict(FIRST[0], ru_wallclock=0)], by=("owner",))
    assert out.count("\n") == 2


def test_summary_rejects_unknown_columns():
    with pytest.raises(ValueError):
        qa.format_qacct_summary([], by=("colour",))
