"""``-fmt json``: the machine-readable views of qstat, qhost, qquota and qacct.

Open Cluster Scheduler 9 spells the option ``-fmt json`` (minisge also takes
``-json``); Grid Engine 8.1.9 has no JSON at all.  Each view is one JSON
document, built from the same rows the text view prints (the job lines of
:func:`minisge.output.qstat_out.running_rows` and friends, qhost's host and
queue dicts, qquota's rows, qacct's records), so the two never disagree on
what is there.  Every document names its schema and version::

    {"schema": "minisge-qstat", "version": 1, ...}

The schemas (JSON Schema draft 2020-12) are installed beside this module,
``json_schemas/minisge-VIEW.v1.schema.json`` (:data:`SCHEMAS`), and
described in minisge_json(5).  Field names follow Open Cluster Scheduler's
where its schemas name the same thing (``jobs_running``, ``jobs_pending``,
``queue_name``, ``slots_used``, ``arch_string``, ``quota_usage``,
``rqs_name``...).  Times are RFC 3339 in UTC (``2026-11-23T16:25:52Z``),
sizes and loads numbers, a value not known ``null``.

:func:`dumps` makes the bytes: one line, UTF-8, valid JSON whatever a job's
name holds (quotes, backslashes, control characters are escaped; a byte that
is no UTF-8 is escaped as ``\\udcXX``).  Standard library only.
"""

from __future__ import annotations

import time
from _collections_abc import Mapping  # collections.abc's own, without importing collections

from minisge.formats.sge_types import SpecifierError, parse_number
from minisge.output import qstat_out
from minisge.output.qacct_out import failed_description
from minisge.output.qhost_out import job_lines
from minisge.protocol.json_text import dumps as json_text

INF = float("inf")  # math.inf, without importing math

TYPE_CHECKING = False  # not typing's: the commands must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

#: The version of every view's schema: raised when a field changes meaning
#: or goes; a new optional field keeps it.
VERSION = 1

#: view name -> schema file (package data of minisge.output)
SCHEMAS = {view: f"json_schemas/minisge-{view}.v{VERSION}.schema.json"
           for view in ("qstat", "qstat-full", "qstat-job", "qhost", "qquota", "qacct")}


def dumps(doc: Mapping[str, Any]) -> bytes:
    """The document as the commands print it: one line of UTF-8 and a newline."""
    text = json_text(doc, ascii=False)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _head(view: str) -> dict[str, Any]:
    return {"schema": f"minisge-{view}", "version": VERSION}


def rfc3339(epoch: float | None) -> str | None:
    """Epoch seconds as RFC 3339 in UTC; None for none (0)."""
    if not epoch:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))


def _number(value: Any) -> float | int | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number != number or number in (INF, -INF):
        return None  # JSON has no infinity: the caller keeps the text where it has one
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


# --------------------------------------------------------------------------
# qstat and qstat -f


def _job_row(row: qstat_out.JobRow, opts: qstat_out.Options, section: str) -> dict[str, Any]:
    """One job line of the listing as an object: the columns the text shows,
    and the -ext, -pri, -urg, -r and -t ones when asked."""
    job = row.job
    out: dict[str, Any] = {
        "job_number": int(job["job_number"]),
        "prio": float(row.get("prio", 0.0)),
        "name": str(job.get("name", "")),
        "owner": str(job.get("owner", "")),
        "state": row.state,
    }
    if section == "running":
        out["start_time"] = rfc3339(row.time)
        if row.queue:
            out["queue_name"] = row.queue
    else:
        out["submission_time"] = rfc3339(row.time)
    out["slots"] = int(row.slots)
    if row.task_id and (job.get("array") or job.get("tasks")):
        out["ja_task_ids"] = row.task_id
    if opts.group_tasks:
        out["master"] = row.master or ""
    if opts.pri or opts.urg:
        out["nurg"] = float(row.get("nurg", 0.0))
    if opts.pri:
        out["nppri"] = float(row.get("nppri", 0.0))
        out["priority"] = int(row.get("priority", 0))
    if opts.pri or opts.ext:
        out["ntix"] = float(row.get("ntckts", 0.0))
    if opts.urg:
        for key in ("urg", "rrcontr", "wtcontr", "dlcontr"):
            out[key] = float(row.get(key, 0))
        out["deadline"] = rfc3339(row.get("deadline", 0))
    if opts.ext:
        out["project"] = row.get("project", None)
        out["department"] = row.get("department", None)
        source = row.task if row.task is not row.job else row.job
        for key, name in (("cpu", "cpu_usage"), ("mem", "mem_usage"), ("io", "io_usage")):
            usage = source.get(key)
            out[name] = None if usage is None else float(usage)
        for key in ("tickets", "override_tickets", "otickets", "ftickets", "stickets"):
            out[key] = int(row.get(key, 0))
        out["share"] = float(row.get("share", 0.0))
    if opts.resources and row.print_jobid:
        out.update(_requests(row))
    return out


def _requests(row: qstat_out.JobRow) -> dict[str, Any]:
    """What ``-r`` prints under a job line."""
    job = row.job
    out: dict[str, Any] = {}
    granted = qstat_out.granted_queues(row.task, job)
    if row.running and granted:
        out["master_queue"] = granted[0][0]
    if job.get("pe"):
        out["requested_pe"] = {"pe_name": job["pe"], "pe_range": str(job.get("pe_range", ""))}
    if row.running and job.get("granted_pe"):
        out["granted_pe"] = {"pe_name": job["granted_pe"], "slots": sum(s for _, s in granted)}
    if job.get("checkpoint"):
        out["checkpoint"] = job["checkpoint"]
    out["hard_request"] = [{"name": n, "value": v, "utilization_contribution": float(c)}
                           for n, v, c in job.get("hard_resources") or ()]
    out["default_hard_request"] = [{"name": n, "value": v, "is_default_request": True}
                                   for n, v in job.get("default_requests") or ()]
    out["soft_request"] = [{"name": n, "value": v} for n, v in job.get("soft_resources") or ()]
    for key in ("hard_queues", "soft_queues", "master_queues", "predecessors_requested",
                "ad_predecessors_requested"):
        if job.get(key):
            out[key] = [str(v) for v in job[key]]
    for key in ("predecessors", "ad_predecessors"):
        if job.get(key):
            out[key] = [int(v) for v in job[key]]
    out["binding"] = job.get("binding") or "NONE"
    return out


def _job_rows(rows: Iterable[qstat_out.JobRow], opts: qstat_out.Options, section: str) -> list[dict[str, Any]]:
    """Rows as objects, one per printed line (each slot line of ``-g t`` too)."""
    return [_job_row(r, opts, section) for r in rows]


def qstat_view(jobs: Sequence[Mapping[str, Any]], queues: Sequence[str] | None,
               opts: qstat_out.Options, finished: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``qstat -fmt json``: the job lines of :func:`qstat_out.format_job_list`."""
    opts.full = False
    names = qstat_out.listing_queue_order(jobs, queues)
    doc = _head("qstat")
    doc["jobs_running"] = _job_rows((r for _, r in qstat_out.running_rows(jobs, names, opts)), opts, "running")
    doc["jobs_pending"] = _job_rows(qstat_out.pending_rows(jobs, opts), opts, "pending")
    doc["jobs_finished"] = _job_rows(qstat_out.finished_rows(finished), opts, "finished")
    return doc


def _queue(queue: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": str(queue["name"]), "qtype": str(queue.get("qtype", "")),
        "slots_resv": int(queue.get("resv", 0)), "slots_used": int(queue.get("used", 0)),
        "slots_total": int(queue.get("total", 0)),
        "load_avg": _number(queue.get("load_avg")), "arch": queue.get("arch"),
        "state": queue.get("states") or "",
        "messages": [str(m) for m in queue.get("messages") or ()],
    }
    if queue.get("resources") is not None:
        out["resources"] = [{"name": n, "value": v, "dominance": d} for d, n, v in queue["resources"]]
    return out


def qstat_full_view(queues: Sequence[Mapping[str, Any]], jobs: Sequence[Mapping[str, Any]],
                    opts: qstat_out.Options, finished: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``qstat -f -fmt json`` (and ``-F``, ``-explain``): the queue instances
    of :func:`qstat_out.format_full` with their job lines, then the pending
    and finished ones."""
    opts.full = True
    running = qstat_out.running_rows(jobs, [str(q["name"]) for q in queues], opts)
    by_queue: dict[str, list[qstat_out.JobRow]] = {}
    for qname, row in running:
        by_queue.setdefault(qname, []).append(row)
    doc = _head("qstat-full")
    doc["queues"] = []
    for queue in queues:
        q = _queue(queue)
        q["jobs"] = _job_rows(by_queue.get(str(queue["name"]), ()), opts, "running")
        doc["queues"].append(q)
    doc["jobs_pending"] = _job_rows(qstat_out.pending_rows(jobs, opts), opts, "pending")
    doc["jobs_finished"] = _job_rows(qstat_out.finished_rows(finished), opts, "finished")
    return doc


# --------------------------------------------------------------------------
# qstat -j

_TIMES = ("submission_time", "deadline", "execution_time")
_PAIRS = ("hard_resource_list", "soft_resource_list", "env_list", "context")
_PATHS = ("stderr_path_list", "stdout_path_list", "stdin_path_list")
_PLAIN = ("exec_file", "owner", "uid", "group", "gid", "sge_o_home", "sge_o_log_name",
          "sge_o_path", "sge_o_shell", "sge_o_tz", "sge_o_workdir", "sge_o_host", "account",
          "checkpoint_object", "checkpoint_attr", "checkpoint_interval", "cwd",
          "directive_prefix", "mail_options", "priority", "jobshare", "script_size",
          "script_file", "project", "ar_id", "task_concurrency", "binding")
_LISTS = ("mail_list", "hard_queue_list", "soft_queue_list", "master_hard_queue_list",
          "job_args", "jid_predecessor_request", "jid_predecessor_list", "jid_successor_list",
          "ja_ad_predecessor_list", "ja_ad_successor_list", "job_type")


def _path_entry(entry: Any) -> dict[str, Any]:
    if isinstance(entry, str):
        return {"host": None, "path": entry}
    return {"host": entry[0] or None, "path": entry[1]}


def _job_detail(j: Mapping[str, Any], scheduling_info: Sequence[str]) -> dict[str, Any]:
    """One job of ``qstat -j``: the attributes :func:`minisge.output.job_detail_out.format_job_detail` prints."""
    out: dict[str, Any] = {"job_number": int(j["job_number"]),
                           "job_name": str(j.get("job_name") or j.get("name") or "")}
    for key in _TIMES:
        if j.get(key):
            out[key] = rfc3339(j[key])
    for key in _PLAIN:
        if j.get(key) is not None:
            out[key] = j[key]
    for key in _LISTS:
        if j.get(key):
            out[key] = list(j[key])
    for key in _PAIRS:
        if j.get(key) is not None:
            out[key] = [{"name": str(n), "value": None if v is None else str(v)} for n, v in j[key]]
    for key in _PATHS:
        if j.get(key):
            out[key] = [_path_entry(e) for e in j[key]]
    if j.get("shell_list"):
        out["shell_list"] = [_path_entry(e) for e in j["shell_list"]]
    out["notify"] = bool(j.get("notify"))
    out["reserve"] = bool(j.get("reserve"))
    out["merge_stderr"] = bool(j.get("merge"))
    if j.get("restart") is not None:
        out["restart"] = j["restart"] in (1, True, "y")
    if j.get("pe"):
        out["pe"] = {"name": str(j["pe"]), "range": str(j.get("pe_range", ""))}
    if j.get("array"):
        start, end, step = j["array"]
        out["job_array_tasks"] = {"start": int(start), "end": int(end), "step": int(step)}
    tasks = []
    for task in j.get("tasks") or ():
        entry: dict[str, Any] = {"task_id": int(task["task_number"]), "running": bool(task.get("running"))}
        if task.get("running"):
            entry["usage"] = {k: float(task.get(k) or 0.0) for k in ("cpu", "mem", "io", "vmem", "maxvmem")}
            entry["binding"] = task.get("binding") or "NONE"
        entry["error_reason"] = [str(m) for m in task.get("messages") or ()]
        tasks.append(entry)
    out["tasks"] = tasks
    out["scheduling_info"] = [str(line) for line in scheduling_info]
    return out


def qstat_job_view(jobs: Sequence[Mapping[str, Any]], global_info: Sequence[str] = (),
                   job_info: Mapping[int, Sequence[str]] | None = None,
                   unknown: Sequence[Any] = (),
                   summary: Sequence[tuple[str, Sequence[int]]] = ()) -> dict[str, Any]:
    """``qstat -j [jobs] -fmt json``: the jobs found, each with its scheduling
    info (global messages first, as the text), the names not found, and for
    ``-j`` without a list the scheduler's messages and which jobs they concern."""
    job_info = job_info or {}
    doc = _head("qstat-job")
    doc["jobs"] = [_job_detail(j, list(global_info) + list(job_info.get(int(j["job_number"]), ())))
                   for j in jobs]
    doc["unknown_jobs"] = [str(u) for u in unknown]
    doc["global_messages"] = [str(m) for m in global_info]
    doc["messages"] = [{"message": str(text), "jobs": [int(i) for i in ids]} for text, ids in summary]
    return doc


# --------------------------------------------------------------------------
# qhost


_HOST_NUMBERS = ("num_proc", "m_socket", "m_core", "m_thread", "load_avg",
                 "mem_total", "mem_used", "swap_total", "swap_used")


def _load_number(raw: Any) -> float | int | None:
    """A reported load value as a number (memory in bytes); None for none."""
    if raw is None or raw == "":
        return None
    try:
        return _number(parse_number(str(raw)))
    except (SpecifierError, ValueError):
        return None


def qhost_view(hosts: Sequence[Mapping[str, Any]], show_queues: bool, show_jobs: bool,
               with_resources: bool) -> dict[str, Any]:
    """``qhost -fmt json``: the hosts of :func:`minisge.output.qhost_out.format_text`."""
    doc = _head("qhost")
    out_hosts = []
    for host in hosts:
        values = host.get("values") or {}
        h: dict[str, Any] = {"name": str(host["name"]), "arch_string": values.get("arch")}
        for key in _HOST_NUMBERS:
            number = _load_number(values.get(key))
            h[key] = round(number) if number is not None and key.startswith(("mem_", "swap_")) else number
        if with_resources:
            h["resources"] = [{"name": n, "value": v, "dominance": d}
                              for d, n, v in host.get("resources") or ()]
        if show_queues:
            h["queues"] = [{"name": str(q["name"]), "qinstance": str(q["qinstance"]),
                            "qtype": str(q.get("qtype", "")), "slots_resv": int(q.get("resv", 0)),
                            "slots_used": int(q.get("used", 0)), "slots_total": int(q.get("total", 0)),
                            "state": str(q.get("states", "") or "")}
                           for q in host.get("queues") or ()]
        if show_jobs:
            h["jobs"] = [_qhost_job(job, master, q)
                         for q in host.get("queues") or ()
                         for job, master, first in job_lines(q.get("jobs") or ()) if first]
        out_hosts.append(h)
    doc["hosts"] = out_hosts
    return doc


def _qhost_job(job: Mapping[str, Any], master: str, q: Mapping[str, Any]) -> dict[str, Any]:
    """A job of ``qhost -j`` in one queue instance (its MASTER/SLAVE lines as ``slots``)."""
    return {"job_number": int(job["job_number"]),
            "task_id": None if job.get("task_number") is None else int(job["task_number"]),
            "prio": float(job.get("prio", 0.0)), "name": str(job["name"]), "owner": str(job["owner"]),
            "state": str(job.get("state", "")),
            "start_time": rfc3339(job.get("start_time")),
            "submission_time": rfc3339(job.get("submission_time")),
            "queue_name": str(q["qinstance"]), "master": master == "MASTER",
            "slots": int(job.get("slots", 1))}


# --------------------------------------------------------------------------
# qquota


def _amount(text: Any) -> int | float | str | None:
    """A limit or usage as qquota prints it: a number when it is one, else the text (``4.000G``)."""
    if text is None:
        return None
    number = _number(text)
    return str(text) if number is None else number


def qquota_view(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``qquota -fmt json``: a ``quota_usage`` entry per line of the table."""
    doc = _head("qquota")
    usage = []
    for r in rows:
        rqs_name, _, rule_name = str(r["rule"]).partition("/")
        entry: dict[str, Any] = {"rqs_name": rqs_name, "rule_name": rule_name,
                                 "resource": str(r["resource"]), "max": _amount(r["limit"])}
        if r.get("value") is not None:
            entry["used"] = _amount(r["value"])
        for kind, entries in r.get("filters") or ():
            entry[str(kind)] = [{"name": str(n), "exclude": bool(x)} for n, x in entries]
        entry["filter"] = str(r.get("filter", ""))
        usage.append(entry)
    doc["quota_usage"] = usage
    return doc


# --------------------------------------------------------------------------
# qacct -j

_ACCT_STRINGS = ("qname", "hostname", "group", "owner", "project", "department", "job_name",
                 "account", "granted_pe", "category", "pe_taskid")
_ACCT_INTS = ("job_number", "priority", "slots", "failed", "exit_status", "arid",
              "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd",
              "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw")
_ACCT_FLOATS = ("ru_wallclock", "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss", "ru_ismrss",
                "ru_idrss", "ru_isrss", "cpu", "mem", "io", "iow", "maxvmem")
_ACCT_TIMES = ("submission_time", "start_time", "end_time", "ar_submission_time")


def _field(record: Any, name: str) -> Any:
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def qacct_record(record: Any) -> dict[str, Any]:
    """One accounting record of ``qacct -j`` (accounting(5) field names)."""
    out: dict[str, Any] = {}
    for name in _ACCT_STRINGS:
        value = _field(record, name)
        out[name] = None if value in (None, "") else str(value)
    for name in _ACCT_INTS:
        out[name] = int(float(_field(record, name) or 0))
    out["task_number"] = int(float(_field(record, "task_number") or 0)) or None
    if not out["arid"]:
        out["arid"] = None
    out["failed_text"] = failed_description(out["failed"])
    for name in _ACCT_FLOATS:
        out[name] = float(_field(record, name) or 0.0)
    for name in _ACCT_TIMES:
        out[name] = rfc3339(float(_field(record, name) or 0))
    return out


def qacct_view(records: Iterable[Any]) -> dict[str, Any]:
    """``qacct -j [job] -fmt json``: every record the text prints a block for."""
    doc = _head("qacct")
    doc["jobs"] = [qacct_record(r) for r in records]
    return doc
