"""``-fmt json`` of qstat, qstat -f, qstat -j, qhost, qquota and qacct -j on a
real cell: every document is valid JSON, validates against the schema it
names (the installed files, minisge/output/json_schemas/, with the
``jsonschema`` package), and says what the text view says -- with no job at
all, and with user text that needs escaping (quotes, backslashes, unicode,
control characters in a job's name, arguments, environment and account)."""

from __future__ import annotations

import json
import os
from importlib import resources

import jsonschema
import pytest
from cellutil import Cell, ensure_user

from minisge.output import json_views

pytestmark = pytest.mark.root

USER = "sgetest"
ODD_NAME = "q\"u'o{t}e<&>"  # what a job name may hold (no \\ / : @ * ? blank or non-ASCII: sge_types(5))
ODD_ARGS = ["back\\slash", "ünïcödé ☃", "ctl\x01\x1b\x7f", 'say "hi"', "\u2028sep"]
ODD_ENV = 'ODD=a"b\\c\x02é'
ODD_ACCOUNT = "acc\"t,=[x"

QUOTA = """{
   name         json_quota
   description  "a quota for the json views"
   enabled      true
   limit        users {*} to slots=7
}
"""


def schema(view: str) -> dict:
    """A view's schema, as installed (package data of minisge.output)."""
    text = resources.files("minisge.output").joinpath(json_views.SCHEMAS[view]).read_text(encoding="utf-8")
    doc = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def valid(out: str, view: str) -> dict:
    """The document one command printed: one line, valid JSON, of its schema and version."""
    assert out.endswith("\n") and out.count("\n") == 1, out[:200]
    doc = json.loads(out)
    assert (doc["schema"], doc["version"]) == (f"minisge-{view}", json_views.VERSION)
    jsonschema.validate(doc, schema(view), cls=jsonschema.Draft202012Validator)
    return doc


def run_json(cell: Cell, view: str, cmd: str, *args: str, rc: int = 0, user: str | None = None) -> dict:
    r = cell.run(cmd, *args, user=user)
    assert r.rc == rc, (cmd, args, r)
    return valid(r.out, view)


@pytest.fixture(scope="module")
def cell():
    ensure_user(USER)
    c = Cell(slots=2).start()
    try:
        yield c
    finally:
        c.cleanup()


def test_every_view_is_valid_with_no_job(cell):
    for opt in (["-fmt", "json"], ["-json"]):
        doc = run_json(cell, "qstat", "qstat", *opt)
        assert doc["jobs_running"] == doc["jobs_pending"] == doc["jobs_finished"] == []
        full = run_json(cell, "qstat-full", "qstat", "-f", *opt)
        assert [q["name"] for q in full["queues"]] == [f"all.q@{cell.host}"]
        assert full["queues"][0]["slots_total"] == 2 and full["queues"][0]["jobs"] == []
        hosts = run_json(cell, "qhost", "qhost", *opt)
        assert [h["name"] for h in hosts["hosts"]] == ["global", cell.host]
        assert run_json(cell, "qquota", "qquota", *opt)["quota_usage"] == []
    # a selection that keeps nothing still prints a document, with the text's exit code
    assert run_json(cell, "qstat", "qstat", "-q", "nosuch.q", "-fmt", "json", rc=1)["jobs_pending"] == []
    # an unknown job: the names asked for, exit 1 as the text
    assert run_json(cell, "qstat-job", "qstat", "-j", "4711", "-fmt", "json", rc=1)["unknown_jobs"] == ["4711"]
    assert run_json(cell, "qstat-job", "qstat", "-j", "-fmt", "json")["jobs"] == []


def test_the_views_say_what_the_text_says_and_escape_what_needs_it(cell):
    path = os.path.join(cell.dir, "quota.rqs")
    with open(path, "w") as f:
        f.write(QUOTA)
    assert cell.run("qconf", "-Arqs", path).rc == 0
    held = cell.submit("-h", "-N", ODD_NAME, "-A", ODD_ACCOUNT, "-v", ODD_ENV, "-b", "y", "/bin/echo",
                       *ODD_ARGS, user=USER)
    array = cell.submit("-h", "-t", "1-5:2", "-N", "arr", "-b", "y", "/bin/true", user=USER)
    rich = cell.submit("-h", "-pe", "smp", "1-2", "-l", "h_rt=100", "-hold_jid", str(held), "-ac", "k=v,e",
                       "-t", "1-3", "-tc", "2", "-p", "-5", "-o", "/tmp/out", "-r", "y", "-m", "e", "-M", "a@b",
                       "-notify", "-R", "y", "-j", "y", "-S", "/bin/sh", "-b", "y", "/bin/true", user=USER)
    done = cell.submit("-N", ODD_NAME, "-A", ODD_ACCOUNT, "-b", "y", "/bin/true", user=USER)
    running = cell.submit("-N", "sleeper", "-b", "y", "/bin/sleep", "60", user=USER)
    cell.wait_records(done)
    cell.wait_for(lambda: cell.qstat_states().get(running) == "r", what="the sleeper running")

    doc = run_json(cell, "qstat", "qstat", "-u", "*", "-fmt", "json")
    text = cell.run("qstat", "-u", "*").out.splitlines()[2:]
    lines = doc["jobs_running"] + doc["jobs_pending"]
    assert [str(j["job_number"]) for j in lines] == [ln.split()[0] for ln in text]  # the same lines, in order
    by_number = {j["job_number"]: j for j in lines}
    assert by_number[held]["name"] == ODD_NAME and by_number[held]["state"] == "hqw"
    assert by_number[array]["ja_task_ids"] == "1-5:2"
    assert by_number[running]["queue_name"] == f"all.q@{cell.host}" and by_number[running]["state"] == "r"
    assert by_number[running]["start_time"].endswith("Z")

    ext = run_json(cell, "qstat", "qstat", "-u", "*", "-ext", "-urg", "-pri", "-r", "-json")
    assert {j["job_number"] for j in ext["jobs_pending"]} == {held, array, rich}
    assert all("ntix" in j and "urg" in j and "hard_request" in j for j in ext["jobs_pending"])
    expanded = run_json(cell, "qstat", "qstat", "-u", "*", "-g", "d", "-fmt", "json")
    assert [j["ja_task_ids"] for j in expanded["jobs_pending"] if j["job_number"] == array] == ["1", "3", "5"]

    full = run_json(cell, "qstat-full", "qstat", "-f", "-F", "-explain", "a", "-u", "*", "-fmt", "json")
    (queue,) = full["queues"]
    assert queue["slots_used"] == 1 and [j["job_number"] for j in queue["jobs"]] == [running]
    assert any(r["name"] == "slots" and r["dominance"] == "qc" for r in queue["resources"])

    job = run_json(cell, "qstat-job", "qstat", "-j", f"{held},{running}", "-fmt", "json")
    details = {j["job_number"]: j for j in job["jobs"]}
    assert details[held]["job_name"] == ODD_NAME and details[held]["job_args"] == ODD_ARGS
    assert details[held]["account"] == ODD_ACCOUNT
    assert {"name": "ODD", "value": ODD_ENV.split("=", 1)[1]} in details[held]["env_list"]
    assert [t["running"] for t in details[running]["tasks"]] == [True]
    (r,) = run_json(cell, "qstat-job", "qstat", "-j", str(rich), "-fmt", "json")["jobs"]
    pe_line = [ln for ln in cell.run("qstat", "-j", str(rich)).out.splitlines() if ln.startswith("parallel env")]
    assert pe_line == [f"parallel environment:  smp range: {r['pe']['range']}"] and r["pe"]["name"] == "smp"
    assert (r["job_array_tasks"], r["task_concurrency"], r["priority"]) == ({"start": 1, "end": 3, "step": 1}, 2, -5)
    assert (r["jid_predecessor_list"], r["notify"], r["reserve"], r["merge_stderr"], r["restart"]) == (
        [held], True, True, True, True)
    assert {"name": "k", "value": "v"} in r["context"] and r["stdout_path_list"] == [{"host": None, "path": "/tmp/out"}]

    hosts = run_json(cell, "qhost", "qhost", "-q", "-j", "-F", "-fmt", "json")
    (host,) = [h for h in hosts["hosts"] if h["name"] == cell.host]
    assert host["num_proc"] >= 1 and host["mem_total"] > 0 and host["arch_string"]
    assert isinstance(host["mem_total"], int)  # bytes
    assert [q["slots_used"] for q in host["queues"]] == [1]
    assert [(j["job_number"], j["master"]) for j in host["jobs"]] == [(running, True)]

    quota = run_json(cell, "qquota", "qquota", "-u", USER, "-fmt", "json", user=USER)["quota_usage"]
    assert [(q["rqs_name"], q["rule_name"], q["resource"], q["used"], q["max"]) for q in quota] == [
        ("json_quota", "1", "slots", 1, 7)]
    assert quota[0]["users"] == [{"name": USER, "exclude": False}] and quota[0]["filter"] == f"users {USER}"

    acct = run_json(cell, "qacct", "qacct", "-j", str(done), "-fmt", "json")
    (record,) = acct["jobs"]
    assert (record["job_name"], record["account"], record["owner"]) == (ODD_NAME, ODD_ACCOUNT, USER)
    assert (record["failed"], record["exit_status"], record["task_number"]) == (0, 0, None)
    assert run_json(cell, "qacct", "qacct", "-j", "4711", "-json", rc=1)["jobs"] == []
    cell.run("qdel", str(held), str(array), str(running), str(rich))


def test_help_lists_fmt_and_a_bad_format_is_refused(cell):
    for cmd in ("qstat", "qhost", "qquota", "qacct"):
        r = cell.run(cmd, "-help")
        assert r.rc == 0 and "[-fmt plain|json" in r.out, cmd
        bad = cell.run(cmd, "-fmt", "yaml")
        assert bad.rc == 1 and 'invalid option argument "yaml"' in bad.err and bad.out == "", (cmd, bad)
    r = cell.run("qacct", "-fmt", "json")
    assert r.rc == 1 and r.err.startswith("error: -fmt json option requires -j option")
    r = cell.run("qstat", "-g", "c", "-fmt", "json")
    assert (r.rc, r.out, r.err) == (1, "", "error: -fmt json is not supported with -g c\n")
