"""How ``qstat -j`` prints (Grid Engine 8.1.9 byte for byte): a job's details
(``format_job_detail``, also ``qsub -verify`` and ``qrsh -verify``), the
jobs asked for with their scheduling info (``format_job_details``), the
scheduling summary of ``qstat -j`` without ids (``format_scheduling_summary``),
the ids that name no job (``format_unknown_jobs``), and their ``-xml`` forms;
with the date, CPU time and XML text helpers :mod:`minisge.output.qstat_out`
shares.  A module of its own so that ``qsub`` loads none of the listing's
formatting (standard library only).
"""

from __future__ import annotations

import time

from minisge.output.resource_value import format_memory
from minisge.output.text import printable, xml_escape

TYPE_CHECKING = False  # not typing's (nor collections'): qsub and qstat must not pay for importing them
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any


def asctime(epoch: float) -> str:
    """ctime(3) without its newline: ``Sun Nov 22 00:52:09 2026``."""
    return time.asctime(time.localtime(int(epoch)))


def format_cpu_time(seconds: float) -> str:
    """double_print_time_to_dstring: ``HH:MM:SS`` (hours may exceed 99)."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"



# --------------------------------------------------------------------------
# qstat -j


def format_unknown_jobs(ids: Iterable[Any]) -> str:
    """stderr of ``qstat -j`` when none of the requested jobs exists (exit 1)."""
    return "Following jobs do not exist: \n" + ", ".join(str(i) for i in ids) + "\n"


_LABEL = 28  # "job_number:                 5": values start in column 29


def _kv(label: str, value: Any) -> str:
    """One ``label: value`` line of ``qstat -j``; a user's text in the value keeps to its line."""
    return f"{label + ':':<{_LABEL}}{printable(value)}\n"


def _paths(entries: Iterable[Any]) -> str:
    """A path list (``-o``, ``-e``, ``-i``): ``host:file_host:path``, NONE when unset."""
    out = []
    for entry in entries:
        if isinstance(entry, str):
            host, path = None, entry
        else:
            host, path = entry[0], entry[1]
        out.append(f"{host or 'NONE'}:NONE:{path}")
    return ",".join(out)


def _pairs(entries: Iterable[Sequence[Any]]) -> str:
    """``name=value`` pairs joined by ``,``; an empty value prints as NONE."""
    return ",".join(f"{n}={'NONE' if v is None else v}" for n, v in entries)


def format_job_detail(job: Mapping[str, Any], scheduling_info: Sequence[str] = ()) -> str:
    """One job of ``qstat -j``: the 62-``=`` line, the job's attributes (keys
    padded to 28 columns, cull_show_job order), usage and binding of running
    tasks, error reasons, then ``scheduling info:`` lines (global scheduler
    messages first, then the job's own; the caller chooses them).

    Keys (absent or None = line not printed): job_number exec_file
    submission_time deadline owner uid group gid sge_o_home sge_o_log_name
    sge_o_path sge_o_shell sge_o_tz sge_o_workdir sge_o_host execution_time
    account checkpoint_object checkpoint_attr checkpoint_interval cwd
    path_aliases directive_prefix stderr_path_list reserve merge
    hard_resource_list soft_resource_list [(name, value)] mail_options
    mail_list [str] notify job_name stdout_path_list stdin_path_list
    priority jobshare hard_queue_list soft_queue_list [str] restart
    shell_list verify env_list [(name, value|None)] job_args [str] qs_args
    master_hard_queue_list script_size script_file pe pe_range
    jid_predecessor_request [str] jid_predecessor_list jid_successor_list
    ja_ad_predecessor_list ja_ad_successor_list [int] project ar_id
    array (start, end, step) task_concurrency context [(name, value)] binding
    job_type [str] (e.g. ["binary"]) and ``tasks``: [{task_number, running,
    cpu, mem, io, vmem, maxvmem, binding, messages [str], resource_map (str|None)}].
    """
    j = job
    out = ["=" * 62 + "\n"]

    def has(key: str) -> bool:
        return j.get(key) is not None

    out.append(_kv("job_number", j.get("job_number") or "unassigned"))
    if has("exec_file"):
        out.append(_kv("exec_file", j["exec_file"]))
    if j.get("submission_time"):
        out.append(_kv("submission_time", asctime(j["submission_time"])))
    if j.get("deadline"):
        out.append(_kv("deadline", asctime(j["deadline"])))
    out.append(_kv("owner", j.get("owner") or ""))
    if has("uid"):
        out.append(_kv("uid", int(j["uid"])))
    out.append(_kv("group", j.get("group") or ""))
    if has("gid"):
        out.append(_kv("gid", int(j["gid"])))
    for key in ("sge_o_home", "sge_o_log_name", "sge_o_path", "sge_o_shell", "sge_o_tz",
                "sge_o_workdir", "sge_o_host"):
        if has(key):
            out.append(_kv(key, j[key]))
    if j.get("execution_time"):
        out.append(_kv("execution_time", asctime(j["execution_time"])))
    for key, label in (("account", "account"), ("checkpoint_object", "checkpoint_object")):
        if has(key):
            out.append(_kv(label, j[key]))
    if j.get("checkpoint_attr"):
        out.append(_kv("checkpoint_attr", f"{j['checkpoint_attr']}    "))
    if j.get("checkpoint_interval"):
        out.append(_kv("checkpoint_interval", f"{int(j['checkpoint_interval'])} seconds"))
    if has("cwd"):
        out.append(_kv("cwd", j["cwd"]))
    if has("directive_prefix"):
        out.append(_kv("directive_prefix", j["directive_prefix"]))
    if j.get("stderr_path_list"):
        out.append(_kv("stderr_path_list", _paths(j["stderr_path_list"])))
    if j.get("reserve"):
        out.append(_kv("reserve", "y"))
    if j.get("merge"):
        out.append(_kv("merge", "y"))
    if j.get("hard_resource_list"):
        out.append(_kv("hard resource_list", _pairs(j["hard_resource_list"])))
    if j.get("soft_resource_list"):
        out.append(_kv("soft resource_list", _pairs(j["soft_resource_list"])))
    if j.get("mail_options"):
        out.append(_kv("mail_options", j["mail_options"]))
    if j.get("mail_list"):
        out.append(_kv("mail_list", ",".join(j["mail_list"])))
    out.append(_kv("notify", "TRUE" if j.get("notify") else "FALSE"))
    out.append(_kv("job_name", j.get("job_name") or j.get("name") or ""))
    if j.get("stdout_path_list"):
        out.append(_kv("stdout_path_list", _paths(j["stdout_path_list"])))
    if j.get("stdin_path_list"):
        out.append(_kv("stdin_path_list", _paths(j["stdin_path_list"])))
    if j.get("priority"):
        out.append(_kv("priority", int(j["priority"])))
    out.append(_kv("jobshare", int(j.get("jobshare") or 0)))
    if j.get("hard_queue_list"):
        out.append(_kv("hard_queue_list", ",".join(j["hard_queue_list"])))
    if j.get("soft_queue_list"):
        out.append(_kv("soft_queue_list", ",".join(j["soft_queue_list"])))
    if j.get("restart") is not None:  # -r n too ("restart: n"; qrsh's jobs)
        out.append(_kv("restart", "y" if j["restart"] in (1, True, "y") else "n"))
    if j.get("shell_list"):
        out.append(_kv("shell_list", _pairs_colon(j["shell_list"])))
    if j.get("verify"):
        out.append(_kv("verify", "-verify"))
    if j.get("env_list") is not None:
        if j.get("verify"):  # qsub -verify shows the request before the qmaster: "" alone, unset NONE
            out.append(_kv("env_list", ",".join(n if v == "" else f"{n}={'NONE' if v is None else v}"
                                                for n, v in j["env_list"])))
        else:  # an empty value reaches the qmaster as none
            out.append(_kv("env_list", _pairs((n, v or None) for n, v in j["env_list"])))
    if j.get("job_args"):
        out.append(_kv("job_args", ",".join(str(a) for a in j["job_args"])))
    if j.get("qs_args"):
        out.append(_kv("qs_args", ",".join(str(a) for a in j["qs_args"])))
    if j.get("master_hard_queue_list"):
        out.append(_kv("master hard queue_list", ",".join(j["master_hard_queue_list"])))
    if j.get("script_size"):
        out.append(_kv("script_size", int(j["script_size"])))
    if has("script_file"):
        out.append(_kv("script_file", j["script_file"]))
    if j.get("script_ptr") is not None:  # qsub -verify: the script itself
        out.append(f"{'script_ptr:':<23}\n{j['script_ptr']}\n")  # the user's own, as it is
    if j.get("pe"):
        out.append(f"parallel environment:  {printable(j['pe'])} range: {printable(j.get('pe_range', ''))}\n")
    for key, label in (("jid_predecessor_request", "jid_predecessor_list (req)"),
                       ("jid_predecessor_list", "jid_predecessor_list"),
                       ("jid_successor_list", "jid_successor_list"),
                       ("ja_ad_predecessor_list", "ja_ad_predecessor_list"),
                       ("ja_ad_successor_list", "ja_ad_successor_list")):
        if j.get(key):
            out.append(_kv(label, ",".join(str(v) for v in j[key])))
    if j.get("project"):
        out.append(_kv("project", j["project"]))
    if j.get("ar_id"):
        out.append(_kv("ar_id", int(j["ar_id"])))
    if j.get("array"):
        start, end, step = j["array"]
        out.append(_kv("job-array tasks", f"{start}-{end}:{step}"))
    if j.get("task_concurrency"):
        out.append(_kv("maximum concurrency", int(j["task_concurrency"])))
    if j.get("context"):
        out.append(_kv("context", _pairs(j["context"])))
    if j.get("binding") is not None:
        out.append(_kv("binding", j["binding"]))
    out.append(_kv("job_type", ",".join(j.get("job_type") or ()) or "NONE"))
    out.append(_task_usage(j.get("tasks") or ()))
    out.append(_scheduling_lines(scheduling_info))
    return "".join(out)


def _pairs_colon(entries: Iterable[Any]) -> str:
    """``host:path`` entries (shell_list), NONE for no host."""
    return ",".join(e if isinstance(e, str) else f"{e[0] or 'NONE'}:{e[1]}" for e in entries)


def _task_usage(tasks: Sequence[Mapping[str, Any]]) -> str:
    """usage / binding / error reason lines of the tasks (cull_show_job end)."""
    out = []
    running = [t for t in tasks if t.get("running")]
    for task in running:
        # 8.1.9 labels every task's line "usage" (as "binding" below)
        head = "usage"
        vmem = float(task.get("vmem") or 0.0)
        maxvmem = float(task.get("maxvmem") or 0.0)
        out.append(
            f"{head} {int(task['task_number']):9d}:            "
            f"cpu={format_cpu_time(float(task.get('cpu') or 0.0))}, "
            f"mem={float(task.get('mem') or 0.0):<5.5f} GB s, "
            f"io={float(task.get('io') or 0.0):<5.5f} GB, "
            f"vmem={'N/A' if vmem == 0.0 else format_memory(vmem)}, "
            f"maxvmem={'N/A' if maxvmem == 0.0 else format_memory(maxvmem)}\n")
    for task in running:
        # Grid Engine labels every task "binding" (its first_task flag is
        # reset inside the loop).
        out.append(f"binding {int(task['task_number']):7d}:            "
                   f"{printable(task.get('binding') or 'NONE')}\n")
    for task in running:
        # sge_rsmap(5): Open Cluster Scheduler's "resource_map" line (8.1.9 has no RSMAP)
        if task.get("resource_map"):
            out.append(f"resource_map {int(task['task_number']):2d}:            {printable(task['resource_map'])}\n")
    for task in tasks:
        for k, message in enumerate(task.get("messages") or ()):
            label = "error reason" if k == 0 else " " * 12
            out.append(f"{label} {int(task['task_number']):10d}:      {printable(message)}\n")
    return "".join(out)


def _scheduling_lines(lines: Sequence[str]) -> str:
    out = []
    for i, line in enumerate(lines):
        out.append(("scheduling info:            " if i == 0 else " " * 28) + f"{printable(line)}\n")
    return "".join(out)


def format_job_details(jobs: Sequence[Mapping[str, Any]], global_info: Sequence[str] = (),
                       job_info: Mapping[int, Sequence[str]] | None = None) -> str:
    """``qstat -j ID[,ID...]``: every found job, each with the global scheduler
    messages then its own (``job_info`` maps job number → messages)."""
    job_info = job_info or {}
    return "".join(
        format_job_detail(job, list(global_info) + list(job_info.get(int(job["job_number"]), ())))
        for job in jobs)


_MAX_IDS_PER_LINE = 8
_MAX_LINE_LEN = 70


def format_scheduling_summary(global_info: Sequence[str],
                              reasons: Sequence[tuple[str, Sequence[int]]]) -> str:
    """``qstat -j`` without ids: the global scheduler messages, a blank line,
    then each reason ("Jobs dropped because of hold state") with its job ids,
    tab-indented, up to eight ids per line (qstat_show_job_info).  ``reasons``
    come in message-number order; each job id is listed once per reason."""
    out = []
    for i, line in enumerate(global_info):
        out.append(("scheduling info:            " if i == 0 else " " * 28) + f"{printable(line)}\n")
    if global_info:
        out.append("\n")
    for n, (text, ids) in enumerate(reasons):
        if n:
            out.append("\n\n")
        out.append(printable(text) + "\n")
        lines: list[str] = []
        current = ""
        count = 0
        for jid in sorted(set(int(i) for i in ids)):
            if count >= _MAX_IDS_PER_LINE or len(current) >= _MAX_LINE_LEN:
                lines.append(current)
                current, count = "", 0
            if count == 0:
                current += "\t" if not lines else ",\n\t"
            else:
                current += ",\t"
            current += str(jid)
            count += 1
        out.append("".join(lines) + current)
    if reasons:
        out.append("\n")
    return "".join(out)


# --------------------------------------------------------------------------
# qstat -j -xml

#: Scheduler message numbers (msg_schedd.h id - 47041) for ``-j -xml``.
_MESSAGE_NUMBERS = (
    ("dropped because it is overloaded", 27), ("All queues dropped", 28),
    ("Job is in hold state", 33), ("dropped because it is full", 37),
    ("dropped because it is suspended", 38), ("dropped because it is disabled", 39),
    ("dropped because it is temporarily not available", 40),
    ("because it only offers", 24),
    ("(Collecting of scheduler job information is turned off)", 83),  # schedd_job_info false
    ("(Scheduler job information not available for every job)", 84),  # schedd_job_info job_list
    ("There are no messages available", 90),  # as the peer numbers it (SCHEDD_INFO_NOMESSAGE)
)

_XML_DETAIL_HEAD = ("<?xml version='1.0'?>\n<detailed_job_info  xmlns:xsd=\"http://arc.liv.ac.uk/repos/"
                    "darcs/sge/source/dist/util/resources/schemas/qstat/detailed_job_info.xsd\">\n")


def message_number(text: str) -> int:
    """The number 8.1.9 gives a scheduler message (MES_message_number); 0 when unknown."""
    for fragment, number in _MESSAGE_NUMBERS:
        if fragment in text:
            return number
    return 0


def _x(indent: int, tag: str, value: Any) -> str:
    return f"{' ' * indent}<{tag}>{xml_escape(value)}</{tag}>\n"


def _x_list(indent: int, tag: str, item: str, rows: Iterable[Sequence[tuple[str, Any]]]) -> str:
    """A sublist element: ``<tag><item><field>..</field>..</item>..</tag>``;
    a field whose value is None is left out (an unset CULL string)."""
    pad = " " * indent
    body = []
    for row in rows:
        fields = "".join(_x(indent + 4, name, value) for name, value in row if value is not None)
        body.append(f"{pad}  <{item}>\n{fields}{pad}  </{item}>\n")
    return f"{pad}<{tag}>\n{''.join(body)}{pad}</{tag}>\n" if body else ""


def _x_requests(indent: int, tag: str, requests: Iterable[Sequence[Any]]) -> str:
    rows = [[("CE_name", name), ("CE_valtype", valtype), ("CE_stringval", value),
             ("CE_doubleval", f"{float(number):.6f}"), ("CE_relop", 0), ("CE_consumable", 0),
             ("CE_dominant", 0), ("CE_pj_doubleval", "0.000000"), ("CE_pj_dominant", 0),
             ("CE_requestable", 0), ("CE_tagged", 0)] for name, valtype, value, number in requests]
    return _x_list(indent, tag, "qstat_l_requests", rows)


def _x_paths(indent: int, tag: str, entries: Iterable[Any] | None) -> str:
    rows = []
    for entry in entries or ():
        host, path = (None, entry) if isinstance(entry, str) else (entry[0], entry[1])
        rows.append([("PN_path", path), ("PN_host", host or ""), ("PN_file_host", ""),
                     ("PN_file_staging", "false")])
    return _x_list(indent, tag, "path_list", rows)


def _x_queues(indent: int, tag: str, names: Iterable[str] | None) -> str:
    return _x_list(indent, tag, "destin_ident_list", [[("QR_name", n)] for n in names or ()])


def _x_ja_tasks(indent: int, tasks: Iterable[Mapping[str, Any]]) -> str:
    """``JB_ja_tasks``: each running task's status (JRUNNING), number, online
    usage once its execd reported it, start time and share of tickets."""
    pad = " " * indent
    body = []
    for t in tasks:
        usage = ""
        if t.get("usage"):
            usage = _x_list(indent + 4, "JAT_scaled_usage_list", "scaled",
                            [[("UA_name", k), ("UA_value", f"{float(t['usage'].get(k, 0.0)):.6f}")]
                             for k in ("cpu", "mem", "io", "iow", "vmem", "maxvmem")])
        body.append(f"{pad}  <ulong_sublist>\n" + _x(indent + 4, "JAT_status", 128)
                    + _x(indent + 4, "JAT_task_number", t["task_number"]) + usage
                    + _x(indent + 4, "JAT_start_time", int(t.get("start_time") or 0))
                    + _x(indent + 4, "JAT_ntix", f"{float(t.get('ntix', 0.5)):.6f}") + f"{pad}  </ulong_sublist>\n")
    return f"{pad}<JB_ja_tasks>\n{''.join(body)}{pad}</JB_ja_tasks>\n" if body else ""


def _xml_job_detail(j: Mapping[str, Any]) -> str:
    """One ``<element>`` of ``qstat -j -xml``: the JB_ elements in 8.1.9's
    order (as captured; a list element only when the list is not empty)."""
    x = j.get("xml") or {}
    i = 6
    out = ["    <element>\n", _x(i, "JB_job_number", j["job_number"]), _x(i, "JB_ar", int(j.get("ar_id") or 0))]
    if j.get("exec_file"):
        out.append(_x(i, "JB_exec_file", j["exec_file"]))
    out.append(_x(i, "JB_submission_time", int(j.get("submission_time") or 0)))
    for tag, key in (("JB_owner", "owner"), ("JB_uid", "uid"), ("JB_group", "group"), ("JB_gid", "gid"),
                     ("JB_account", "account")):
        if j.get(key) is not None:
            out.append(_x(i, tag, j[key]))
    out.append(_x(i, "JB_merge_stderr", "true" if j.get("merge") else "false"))
    mails = [str(m).partition("@") for m in j.get("mail_list") or ()]
    # a mail list the job gave (-M) is a "mail_list"; qsub's default one an unnamed list
    out.append(_x_list(i, "JB_mail_list", "mail_list" if x.get("mail_list_given") else "element",
                       [[("MR_user", u), ("MR_host", h or None)] for u, _, h in mails]))
    if j.get("project"):
        out.append(_x(i, "JB_project", j["project"]))
    out.append(_x(i, "JB_notify", "true" if j.get("notify") else "false"))
    out.append(_x(i, "JB_job_name", j.get("job_name") or ""))
    out.append(_x_paths(i, "JB_stdout_path_list", j.get("stdout_path_list")))
    out.append(_x(i, "JB_jobshare", int(j.get("jobshare") or 0)))
    out.append(_x_requests(i, "JB_hard_resource_list", x.get("hard_requests") or ()))
    out.append(_x_requests(i, "JB_soft_resource_list", x.get("soft_requests") or ()))
    out.append(_x_queues(i, "JB_hard_queue_list", j.get("hard_queue_list")))
    out.append(_x_queues(i, "JB_soft_queue_list", j.get("soft_queue_list")))
    out.append(_x_paths(i, "JB_shell_list", j.get("shell_list")))
    out.append(_x_list(i, "JB_env_list", "job_sublist",
                       [[("VA_variable", k), ("VA_value", v)] for k, v in x.get("env") or ()]))
    out.append(_x_list(i, "JB_job_args", "element", [[("ST_name", a)] for a in j.get("job_args") or ()]))
    if j.get("script_file"):
        out.append(_x(i, "JB_script_file", j["script_file"]))
    out.append(_x_ja_tasks(i, x.get("ja_tasks") or ()))
    out.append(_x_list(i, "JB_context", "context_list",
                       [[("VA_variable", k), ("VA_value", v)] for k, v in j.get("context") or ()]))
    if j.get("cwd"):
        out.append(_x(i, "JB_cwd", j["cwd"]))
    out.append(_x_paths(i, "JB_stderr_path_list", j.get("stderr_path_list")))
    out.append(_x_paths(i, "JB_stdin_path_list", j.get("stdin_path_list")))
    out.append(_x_list(i, "JB_jid_predecessor_list", "job_predecessors",
                       [[("JRE_job_number", n)] for n in j.get("jid_predecessor_list") or ()]))
    out.append(_x_list(i, "JB_jid_successor_list", "job_successors",
                       [[("JRE_job_number", n)] for n in j.get("jid_successor_list") or ()]))
    requested = _x_list(i, "JB_jid_request_list", "element",
                        [[("JRE_job_number", 0), ("JRE_job_name", n)] for n in j.get("jid_predecessor_request") or ()])
    out.append(requested)
    out.append(_x(i, "JB_deadline", int(j.get("deadline") or 0)))
    out.append(_x(i, "JB_execution_time", int(j.get("execution_time") or 0)))
    out.append(_x(i, "JB_checkpoint_attr", 0))
    out.append(_x(i, "JB_checkpoint_interval", int(j.get("checkpoint_interval") or 0)))
    out.append(_x(i, "JB_reserve", "true" if j.get("reserve") else "false"))
    out.append(_x(i, "JB_mail_options", int(x.get("mail_options") or 0)))
    out.append(_x(i, "JB_priority", int(j.get("priority") or 0) + 1024))
    out.append(_x(i, "JB_restart", int(x.get("restart") or 0)))
    out.append(_x(i, "JB_verify", 0))
    out.append(_x_queues(i, "JB_master_hard_queue_list", j.get("master_hard_queue_list")))
    out.append(_x(i, "JB_script_size", 0))
    if j.get("pe"):
        out.append(_x(i, "JB_pe", j["pe"]))
        out.append(_x_list(i, "JB_pe_range", "ranges",
                           [[("RN_min", lo), ("RN_max", hi), ("RN_step", 1)] for lo, hi in x.get("pe_ranges") or ()]))
    out.append(requested)  # 8.1.9 shows the -hold_jid request list twice
    for tag in ("JB_verify_suitable_queues", "JB_soft_wallclock_gmt", "JB_hard_wallclock_gmt",
                "JB_override_tickets", "JB_version"):
        out.append(_x(i, tag, 0))
    start, end, step = j.get("array") or (1, 1, 1)
    out.append(_x_list(i, "JB_ja_structure", "task_id_range",
                       [[("RN_min", start), ("RN_max", end), ("RN_step", step)]]))
    out.append(_x(i, "JB_type", int(x.get("type") or 0)))
    if x.get("binding"):  # -binding: its BN_* fields under <binding> (8.1.9)
        out.append(_x_list(i, "JB_binding", "binding", [[(str(t), v) for t, v in x["binding"]]]))
    else:
        out.append(_x_list(i, "JB_binding", "element", [[
            ("BN_strategy", "no_job_binding"), ("BN_type", 0), ("BN_parameter_n", 0),
            ("BN_parameter_socket_offset", 0), ("BN_parameter_core_offset", 0),
            ("BN_parameter_striding_step_size", 0), ("BN_parameter_explicit", "no_explicit_binding")]]))
    out.append(_x(i, "JB_ja_task_concurrency", int(j.get("task_concurrency") or 0)))
    out.append(_x(i, "JB_nurg", f"{float(x.get('nurg') or 0.0):.6f}"))
    out.append("    </element>\n")
    return "".join(out)


def _xml_message_lists(global_info: Sequence[str], job_info: Mapping[int, Sequence[str]], indent: str) -> str:
    """``SME_message_list`` (each job's own messages, with its number) and
    ``SME_global_message_list``, each only when it has a message."""
    out = []
    own = [(jid, m) for jid, messages in job_info.items() for m in messages]
    if own:
        out.append(f"{indent}<SME_message_list>\n")
        for jid, m in own:
            out.append(f"{indent}  <element>\n{indent}    <MES_job_number_list>\n"
                       f"{indent}      <ulong_sublist>\n{indent}        <ULNG_value>{int(jid)}</ULNG_value>\n"
                       f"{indent}      </ulong_sublist>\n{indent}    </MES_job_number_list>\n"
                       f"{indent}    <MES_message_number>{message_number(m)}</MES_message_number>\n"
                       f"{indent}    <MES_message>{xml_escape(m)}</MES_message>\n{indent}  </element>\n")
        out.append(f"{indent}</SME_message_list>\n")
    if global_info:
        out.append(f"{indent}<SME_global_message_list>\n")
        for m in global_info:
            out.append(f"{indent}  <element>\n"
                       f"{indent}    <MES_message_number>{message_number(m)}</MES_message_number>\n"
                       f"{indent}    <MES_message>{xml_escape(m)}</MES_message>\n{indent}  </element>\n")
        out.append(f"{indent}</SME_global_message_list>\n")
    return "".join(out)


def format_job_details_xml(jobs: Sequence[Mapping[str, Any]], global_info: Sequence[str] = (),
                           job_info: Mapping[int, Sequence[str]] | None = None) -> str:
    """``qstat -j ID[,ID...] -xml``: each job's JB_ elements (the keys of
    :func:`format_job_detail` and its ``xml`` dict: the raw values), then
    the scheduler's messages, the jobs' own first, then the global ones."""
    job_info = {int(k): v for k, v in (job_info or {}).items()
                if int(k) in {int(j["job_number"]) for j in jobs}}
    return (_XML_DETAIL_HEAD + "  <djob_info>\n" + "".join(_xml_job_detail(j) for j in jobs) + "  </djob_info>\n"
            "  <messages>\n    <element>\n" + _xml_message_lists(global_info, job_info, "      ")
            + "    </element>\n  </messages>\n</detailed_job_info>\n")


def format_scheduling_summary_xml(global_info: Sequence[str]) -> str:
    """``qstat -j -xml`` without ids: the global scheduler messages."""
    return ("<?xml version='1.0'?>\n<message  xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/"
            "sge/source/dist/util/resources/schemas/qstat/message.xsd\">\n  <element>\n"
            + _xml_message_lists(global_info, {}, "    ") + "  </element>\n</message>\n")
