"""The JSON views (minisge/output/json_views.py) without a cell: built from the
same dicts as the golden text tests (tests/test_qstat_out.py), they carry the
same lines as the text, validate against their installed schemas with every
switch, and stay valid JSON whatever a user's text holds.  The real cell's
output is validated in tests/integration/test_json_views_cmd.py."""

from __future__ import annotations

import json
import os
import re
from importlib import resources

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_qstat_out import HO_Q, array_jobs, first_jobs, pe_array_jobs

from minisge.cli import qacct as qacct_cli
from minisge.cli import qhost as qhost_cli
from minisge.cli import qquota as qquota_cli
from minisge.cli import qstat as qstat_cli
from minisge.output import json_views, qstat_out

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def schema(view: str) -> dict:
    doc = json.loads(resources.files("minisge.output").joinpath(json_views.SCHEMAS[view]).read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def printed(doc: dict, view: str) -> dict:
    """The document as a command prints it, read back and validated."""
    out = json_views.dumps(doc)
    assert out.endswith(b"\n") and out.count(b"\n") == 1
    back = json.loads(out)
    jsonschema.validate(back, schema(view), cls=jsonschema.Draft202012Validator)
    return back


SWITCHES = [{}, {"ext": True}, {"pri": True}, {"urg": True}, {"resources": True}, {"tasks": True},
            {"group_tasks": True}, {"expand_arrays": True},
            {"ext": True, "pri": True, "urg": True, "resources": True, "tasks": True}]


def job_lines(text: str) -> list[str]:
    """The job lines of a listing: not its header, not the -r lines under a job
    (7 spaces and a label, or 25 spaces and a further resource)."""
    return [ln for ln in text.splitlines()[2:] if not re.match(r"^( {7}| {25})\S", ln)]


@pytest.mark.parametrize("switches", SWITCHES)
def test_the_listing_has_the_texts_lines_and_fits_its_schema(switches):
    jobs = pe_array_jobs(ext=True) + first_jobs() + array_jobs()
    text = qstat_out.format_job_list(jobs, None, qstat_out.Options(**switches))
    doc = printed(json_views.qstat_view(jobs, None, qstat_out.Options(**switches)), "qstat")
    lines = doc["jobs_running"] + doc["jobs_pending"]
    assert len(lines) == len(job_lines(text)) > 5
    # the lines that show their job number show the same one, in the same order
    shown = [ln.split()[0] for ln in job_lines(text) if re.match(r"^ *\d+ ", ln)]
    assert shown == [str(j["job_number"]) for j in lines][:len(shown)] or switches.get("group_tasks") or \
        switches.get("tasks")
    assert set(shown) == {str(j["job_number"]) for j in lines}


@pytest.mark.parametrize("switches", SWITCHES)
def test_the_full_view_fits_its_schema(switches):
    jobs = pe_array_jobs(ext=True)
    doc = printed(json_views.qstat_full_view([HO_Q], jobs, qstat_out.Options(**switches)), "qstat-full")
    assert [q["name"] for q in doc["queues"]] == [HO_Q["name"]]
    assert all(j["queue_name"] == HO_Q["name"] for j in doc["queues"][0]["jobs"])


def test_a_line_the_text_prints_is_a_line_of_the_json():
    jobs = first_jobs() + array_jobs()
    text = qstat_out.format_job_list(jobs)
    doc = json_views.qstat_view(jobs, None, qstat_out.Options())
    lines = doc["jobs_running"] + doc["jobs_pending"]
    assert [(str(j["job_number"]), j["state"]) for j in lines] == [
        (ln.split()[0], ln.split()[4]) for ln in text.splitlines()[2:]]
    assert [j.get("ja_task_ids") for j in lines if j["job_number"] in (7, 8)] == ["1-5:1", "1-3:1"]


def test_no_job_is_a_document_with_empty_lists():
    assert qstat_out.format_job_list([]) == ""
    doc = printed(json_views.qstat_view([], None, qstat_out.Options()), "qstat")
    assert (doc["jobs_running"], doc["jobs_pending"], doc["jobs_finished"]) == ([], [], [])
    assert printed(json_views.qstat_full_view([], [], qstat_out.Options()), "qstat-full")["queues"] == []
    assert printed(json_views.qhost_view([], False, False, False), "qhost")["hosts"] == []
    assert printed(json_views.qquota_view([]), "qquota")["quota_usage"] == []
    assert printed(json_views.qacct_view([]), "qacct")["jobs"] == []
    assert printed(json_views.qstat_job_view([], unknown=["4711"]), "qstat-job")["unknown_jobs"] == ["4711"]


# a user's text: anything but what the qmaster refuses, and bytes that are no UTF-8
# (surrogateescape'd, as a name read from a file would be)
user_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30) | st.sampled_from(
    ["\udcff\udcfe", 'q"u\\o\x01\x1b\x7f\u2028\u2029\ufeff', "ünïcödé ☃ 𝄞", "\x00"])


# each example validates two documents against their schemas (jsonschema: ~0.2 s), so CI's
# 400 examples would take minutes; 60 keep the odd texts above and a spread of random ones
@settings(max_examples=60)
@given(name=user_text, arg=user_text, account=user_text)
def test_whatever_a_user_writes_the_document_is_valid_json_and_keeps_it(name, arg, account):
    jobs = [dict(first_jobs()[0], name=name), dict(first_jobs()[2], name=name)]
    doc = printed(json_views.qstat_view(jobs, None, qstat_out.Options()), "qstat")
    if not any("\udc80" <= c <= "\udcff" for c in name):
        assert doc["jobs_running"][0]["name"] == doc["jobs_pending"][0]["name"] == name
    detail = {"job_number": 1, "job_name": name, "job_args": [arg], "account": account,
              "env_list": [("V", arg)], "tasks": []}
    back = printed(json_views.qstat_job_view([detail]), "qstat-job")
    if not any("\udc80" <= c <= "\udcff" for c in name + arg + account):
        assert (back["jobs"][0]["job_name"], back["jobs"][0]["job_args"], back["jobs"][0]["account"]) == (
            name, [arg], account)


def test_infinite_values_stay_valid_json():
    rows = [{"rule": "q/1", "resource": "h_vmem", "limit": "INFINITY", "value": None, "filter": "", "filters": []}]
    assert printed(json_views.qquota_view(rows), "qquota")["quota_usage"][0]["max"] == "INFINITY"
    host = {"name": "vm", "values": {"arch": "lx-amd64", "mem_total": "infinity", "load_avg": "inf"}}
    (h,) = printed(json_views.qhost_view([host], False, False, False), "qhost")["hosts"]
    assert (h["mem_total"], h["load_avg"]) == (None, None)


def test_an_accounting_record_fits_its_schema():
    record = {"qname": "all.q", "hostname": "vm", "group": "sgetest", "owner": "sgetest", "job_name": 'a"b',
              "job_number": 12, "account": "sge", "priority": 0, "submission_time": 1795308728,
              "start_time": 1795308729, "end_time": 1795308730, "failed": 100, "exit_status": 137,
              "ru_wallclock": 1.0, "project": "NONE", "department": "defaultdepartment", "granted_pe": "NONE",
              "slots": 1, "task_number": 3, "cpu": 0.5, "mem": 0.001, "io": 0.0, "maxvmem": 1024.0, "arid": 0}
    (rec,) = printed(json_views.qacct_view([record]), "qacct")["jobs"]
    assert (rec["task_number"], rec["arid"], rec["failed"], rec["start_time"]) == (3, None, 100, "2026-11-22T00:52:09Z")
    assert rec["failed_text"] == "assumedly after job"


def test_every_schema_is_in_minisge_json_5():
    with open(os.path.join(TOP, "man", "man5", "minisge_json.5"), encoding="utf-8") as f:
        page = f.read().replace("\\-", "-")
    for path in json_views.SCHEMAS.values():
        assert os.path.basename(path) in page, path


def test_fmt_and_its_synonyms_on_each_command_line_the_last_counts():
    assert (qstat_cli.parse_args(["-fmt", "json"]).json, qstat_cli.parse_args(["-json", "-xml"]).json) == (True, False)
    assert "-xml" in qstat_cli.parse_args(["-json", "-fmt", "xml"]).flags
    assert "-xml" not in qstat_cli.parse_args(["-xml", "-fmt", "plain"]).flags
    # an option of the command line replaces the default files' (sge_qstat(5)): -xml, -json and -fmt are one
    assert qstat_cli.with_defaults(["-xml"], ["-fmt", "json", "-u", "x"]) == ["-xml", "-u", "x"]
    assert qstat_cli.parse_args(qstat_cli.with_defaults([], ["-json"])).json
    assert [qhost_cli.parse_args(a).fmt for a in (["-fmt", "json"], ["-json", "-xml"], [])] == ["json", "xml", "plain"]
    assert qquota_cli.parse_args(["-fmt", "json"])["json"] and qquota_cli.parse_args(["-json", "-xml"])["xml"]
    assert qacct_cli.parse_args(["-j", "3", "-fmt", "json"]).json and qacct_cli.parse_args(["-json"]).json
    for bad in (qstat_cli.CommandLineError, qhost_cli.CommandLineError):
        with pytest.raises(bad):
            (qstat_cli if bad is qstat_cli.CommandLineError else qhost_cli).parse_args(["-fmt", "yaml"])
    with pytest.raises(qquota_cli.Usage):
        qquota_cli.parse_args(["-fmt", "yaml"])
    with pytest.raises(qacct_cli.Usage):
        qacct_cli.parse_args(["-fmt", "xml"])  # qacct has no XML
