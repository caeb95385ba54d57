"""qsub -verify, qrsh -verify: a job request as 8.1.9 shows it before it is
sent, in the keys of :func:`minisge.output.job_detail_out.format_job_detail`.

Standard library only (the commands import it).
"""

from __future__ import annotations

import time

from minisge.formats import submit_options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def verify_view(req: dict[str, Any]) -> dict[str, Any]:
    """qsub -verify: the job as 8.1.9's qsub shows it before it is sent
    (no number, owner, account or binding yet), keys of
    :func:`minisge.output.job_detail_out.format_job_detail`."""
    o = req.get("o_env") or {}
    start = req.get("start_time")
    pe = req.get("pe")
    script = None if req.get("binary") else req.get("script")
    return {
        "owner": "", "uid": 0, "group": "", "gid": 0,
        "sge_o_home": o.get("SGE_O_HOME"), "sge_o_log_name": o.get("SGE_O_LOGNAME"),
        "sge_o_path": o.get("SGE_O_PATH"), "sge_o_shell": o.get("SGE_O_SHELL"),
        "sge_o_workdir": o.get("SGE_O_WORKDIR"), "sge_o_host": o.get("SGE_O_HOST"),
        "execution_time": date_time_seconds(start) if start else None,
        "deadline": date_time_seconds(req["deadline"]) if req.get("deadline") else None,
        "account": req.get("account"),
        "cwd": req.get("cwd"),
        "merge": req.get("merge") or None,
        "hard_resource_list": list((req.get("hard_resources") or {}).items()) or None,
        "soft_resource_list": list((req.get("soft_resources") or {}).items()) or None,
        "mail_options": req.get("mail_options") or None,
        "mail_list": req.get("mail_list") or None,
        "notify": bool(req.get("notify")),
        "job_name": req.get("job_name"),
        "stdout_path_list": [(e["host"], e["path"]) for e in req.get("stdout_path") or ()] or None,
        "stderr_path_list": [(e["host"], e["path"]) for e in req.get("stderr_path") or ()] or None,
        "stdin_path_list": [(e["host"], e["path"]) for e in req.get("stdin_path") or ()] or None,
        "priority": req.get("priority") or None,
        "jobshare": req.get("job_share") or 0,
        "hard_queue_list": req.get("hard_queues") or None,
        "soft_queue_list": req.get("soft_queues") or None,
        "restart": req.get("restart"),
        "shell_list": [(e["host"], e["path"]) for e in req.get("shell") or ()] or None,
        "verify": True,
        "env_list": list((req.get("env") or {}).items()),
        "job_args": req.get("args") or None,
        "master_hard_queue_list": req.get("master_queues") or None,
        "script_size": len(script.encode("utf-8", "surrogateescape")) if script is not None else None,
        "script_file": req.get("script_path") if not req.get("binary") else req.get("command"),
        "script_ptr": script,
        "pe": pe["name"] if pe else None,
        "pe_range": submit_options.format_ranges(pe["ranges"]) if pe else None,
        "jid_predecessor_request": req.get("hold_jid") or None,
        "project": req.get("project"),
        "array": tuple(req["array"]) if req.get("array") else None,
        "task_concurrency": req.get("tc"),
        "job_type": ["binary"] if req.get("binary") else None,
    }


def date_time_seconds(text: str) -> float:
    """A date_time (``[[CC]YY]MMDDhhmm[.SS]``) in seconds since the epoch, in
    this host's local time (a missing year is this year's)."""
    year, month, day, hour, minute, second = submit_options.date_time_fields(text, time.localtime().tm_year)
    return time.mktime((year, month, day, hour, minute, second, 0, 0, -1))
