"""What the qmaster tells ``qstat``: plain dicts in the shape
:mod:`minisge.output.qstat_out` prints (its docstring is the contract)."""

from __future__ import annotations

from minisge.job import ERROR, Job, Task
from minisge.qmaster import Qmaster, user_name


def _prio(job: Job, considered: bool) -> float:
    """Grid Engine's normalized priority with the default weights.

    weight_priority 1.0 × npprior + weight_urgency 0.1 × nurg + weight_ticket
    0.01 × ntckts; with no urgency or ticket differences nurg and ntckts are
    0.5, so an ordinary job shows 0.55500.  A job the scheduler has not yet
    looked at (held) shows 0.00000, as in Grid Engine.
    """
    if not considered:
        return 0.0
    npprior = (job.priority + 1024) / 2048
    return 1.0 * npprior + 0.1 * 0.5 + 0.01 * 0.5


def _task_state(job: Job, task: Task | None) -> str:
    if task is None:
        s = ""
        if job.held:
            s += "h"
        return s + "qw"
    if task.state == ERROR:
        return "E" + ("h" if job.held else "") + "qw"
    s = "d" if task.delete_requested else ""
    if task.restarted:
        s += "R"
    return s + ("s" if task.suspended else "r")


def job_row(job: Job) -> dict:
    d = {
        "job_number": job.number,
        "name": job.name,
        "owner": job.owner,
        "submission_time": int(job.submission_time),
        "slots": job.requested_slots(),
        "array": job.is_array,
        "prio": _prio(job, not job.held),
        "state": "qw",
        "tasks": [],
    }
    tasks = d["tasks"]
    for t in sorted(job.tasks.values(), key=lambda t: t.task_id):
        running = t.state != ERROR
        tasks.append(
            {
                "task_number": t.task_id,
                "state": _task_state(job, t),
                "queue": t.master.qinstance if (running and t.master) else None,
                "start_time": int(t.start_time) if running else None,
                "granted": [(g.qinstance, g.slots) for g in t.granted] if running else [],
                "slots": t.slots if running else job.requested_slots(),
            }
        )
    if job.pending:
        restarted = {tid for tid in job.pending if job.restarted_pending.get(tid)}
        plain = [tid for tid in job.pending if tid not in restarted]
        for ids, prefix in ((plain, ""), (sorted(restarted), "R")):
            if not ids:
                continue
            st = ("h" if job.held else "") + prefix + "qw"
            if job.is_array:
                from minisge.output.qstat_out import compress_task_ids

                tasks.append({"ranges": compress_task_ids(ids), "state": st, "slots": job.requested_slots()})
            else:
                tasks.append({"task_number": ids[0], "state": st, "slots": job.requested_slots()})
    return d


def job_list(qm: Qmaster, req: dict, uid: int) -> dict:
    users = req.get("users")
    if users is None:
        users = [user_name(uid)]
    jobs = []
    for job in sorted(qm.jobs.values(), key=lambda j: j.number):
        if "*" not in users and job.owner not in users:
            continue
        jobs.append(job_row(job))
    queues = [f"{c.qname}@{h}" for c, h in qm.config.queue_instances()]
    return {"jobs": jobs, "queues": queues}


def full_list(qm: Qmaster, req: dict, uid: int) -> dict:
    out = job_list(qm, req, uid)
    used: dict[str, int] = {}
    for job in qm.jobs.values():
        for t in job.tasks.values():
            for g in t.granted:
                used[g.qinstance] = used.get(g.qinstance, 0) + g.slots
    queues = []
    for conf, host in qm.config.queue_instances():
        name = f"{conf.qname}@{host}"
        qtype = qm.config.qvalue(conf, "qtype", host)
        letters = ("B" if "BATCH" in qtype else "") + ("I" if "INTERACTIVE" in qtype else "")
        if qm.config.qvalue(conf, "pe_list", host) not in ("NONE", ""):
            letters += "P"
        load = qm.config.load_values.get(host, {}).get("load_avg")
        states = qm.config.qi_states.get(name, "")
        if host not in qm.execds:
            states = "u" + states
        queues.append(
            {
                "name": name,
                "qtype": letters or "NONE",
                "resv": 0,
                "used": used.get(name, 0),
                "total": int(qm.config.qvalue(conf, "slots", host)),
                "load_avg": float(load) if load is not None else None,
                "arch": qm.config.load_values.get(host, {}).get("arch"),
                "states": _ordered_states(states),
                "messages": list(qm.config.qi_messages.get(name, [])),
            }
        )
    out["queue_info"] = queues
    return out


def _ordered_states(states: str) -> str:
    order = "aACDduESsco"
    return "".join(c for c in order if c in states)


def job_detail(qm: Qmaster, ids: list[str], uid: int) -> dict:
    found, missing = [], []
    for ident in ids:
        jobs = qm.find_jobs(ident)
        if not jobs:
            missing.append(ident)
        for job in jobs:
            found.append(detail_dict(job))
    reasons = {j["job_number"]: qm.pending_reasons.get(j["job_number"], []) for j in found}
    return {"jobs": found, "missing": missing, "reasons": {str(k): v for k, v in reasons.items()}}


def detail_dict(job: Job) -> dict:
    s = job.spec
    o = s.get("o_env") or {}
    d = {
        "job_number": job.number,
        "exec_file": f"job_scripts/{job.number}" if not s.get("binary") else None,
        "submission_time": int(job.submission_time),
        "owner": job.owner,
        "uid": job.uid,
        "group": job.group,
        "gid": job.gid,
        "sge_o_home": o.get("SGE_O_HOME"),
        "sge_o_log_name": o.get("SGE_O_LOGNAME"),
        "sge_o_path": o.get("SGE_O_PATH"),
        "sge_o_shell": o.get("SGE_O_SHELL"),
        "sge_o_workdir": o.get("SGE_O_WORKDIR"),
        "sge_o_host": o.get("SGE_O_HOST"),
        "account": s.get("account") or "sge",
        "cwd": s.get("cwd"),
        "merge": "y" if s.get("merge") else None,
        "hard_resource_list": list((s.get("hard_resources") or {}).items()) or None,
        "soft_resource_list": list((s.get("soft_resources") or {}).items()) or None,
        "mail_list": s.get("mail_list") or None,
        "notify": "TRUE" if s.get("notify") else "FALSE",
        "job_name": job.name,
        "stdout_path_list": s.get("stdout_path") or None,
        "stderr_path_list": s.get("stderr_path") or None,
        "priority": job.priority,
        "hard_queue_list": s.get("hard_queues") or None,
        "soft_queue_list": s.get("soft_queues") or None,
        "restart": s.get("restart"),
        "shell_list": s.get("shell") or None,
        "env_list": list((s.get("env") or {}).items()) or None,
        "job_args": s.get("args") or None,
        "script_file": s.get("script_path") if not s.get("binary") else s.get("command"),
        "pe": (s.get("pe") or {}).get("name"),
        "pe_range": (s.get("pe") or {}).get("range"),
        "jid_predecessor_request": s.get("hold_jid") or None,
        "jid_predecessor_list": job.predecessors or None,
        "project": s.get("project"),
        "array": tuple(s["array"]) if s.get("array") else None,
        "task_concurrency": s.get("tc"),
        "job_type": ["binary"] if s.get("binary") else None,
        "tasks": [
            {
                "task_number": t.task_id,
                "running": t.state != ERROR,
                "messages": [t.error_reason] if t.error_reason else [],
            }
            for t in sorted(job.tasks.values(), key=lambda t: t.task_id)
        ],
    }
    return d
