"""What the qmaster tells ``qstat``: plain dicts in the shape
:mod:`minisge.output.qstat_out` prints (its docstring is the contract)."""

from __future__ import annotations

from minisge.job import ERROR, RESCHEDULING, Job, Task
from minisge.qmaster import Qmaster, user_name


def _considered(job: Job) -> bool:
    """Jobs the scheduler looks at: not held (a held job shows 0.00000 in
    every priority column, as in Grid Engine)."""
    return not job.held


def _pe_objects(qm: Qmaster) -> dict:
    return getattr(qm.config, "pes", None) or {}


def priorities(qm: Qmaster, now: float | None = None, detail: bool = True) -> dict[int, dict]:
    """Each job's priority figures (sge_priority(5)) for qstat -pri/-urg/-ext/-r,
    computed by :mod:`minisge.job_order` exactly as the scheduler orders its
    pass: urgency normalized over the jobs the scheduler considers (not
    held), ntckts 0.5 (no ticket policy), the weights of the scheduler
    configuration.  A held job shows 0 in every column but its per-request
    contributions (``qstat -r``, computed for every job as qstat does; not
    without ``detail``, when only ``prio`` is shown)."""
    from minisge import job_order

    now = qm.clock() if now is None else now
    sconf = getattr(qm.config, "sched_conf", None)
    weights = job_order.Weights.from_sched_conf(sconf) if sconf is not None else job_order.Weights()
    cx = qm.config.complex_index if getattr(qm.config, "complexes", None) is not None else {}
    pes = _pe_objects(qm)
    considered = [job_order.job_facts(job, now) for job in qm.jobs.values() if _considered(job)]
    figs = job_order.figures(considered, cx, pes, weights, now)
    out: dict[int, dict] = {}
    for f in considered:
        g = figs[f.job_id]
        out[f.job_id] = {"prio": g.prio, "nurg": g.nurg, "nppri": g.nppri, "ntckts": g.ntckts, "urg": g.urg,
                         "rrcontr": g.rrcontr, "wtcontr": g.wtcontr, "dlcontr": g.dlcontr,
                         "deadline": int(f.deadline), "hard_resources": list(g.per_request)}
    for job in qm.jobs.values():
        if job.number in out:
            continue
        if not detail:
            out[job.number] = {"prio": 0.0}
            continue
        f = job_order.job_facts(job, now)
        _total, per_request = job_order.resource_contribution(f.requests, job_order.job_slot_request(f.pe, pes), cx)
        out[job.number] = {"prio": 0.0, "nurg": 0.0, "nppri": 0.0, "ntckts": 0.0, "urg": 0.0,
                           "rrcontr": 0.0, "wtcontr": 0.0, "dlcontr": 0.0, "hard_resources": list(per_request)}
    return out


def _task_state(job: Job, task: Task | None) -> str:
    if task is None:
        s = ""
        if job.held:
            s += "h"
        return s + "qw"
    if task.state == ERROR:
        return "E" + ("h" if job.held else "") + "qw"
    if task.state == RESCHEDULING:  # qmod -r: back to pending while its old run is killed
        return ("h" if job.held else "") + "Rq"
    return running_state_letters(task.delete_requested, task.restarted, task.suspended_by)


def running_state_letters(deleted: bool, restarted: int, suspended_by) -> str:
    """The qstat state of a dispatched task (job_get_state_string, SGE-FACTS
    §4, order d E S T h R q r s t w): ``S`` while its queue instance is
    suspended (qmod -sq; 8.1.9 marks the job suspended-on-subordinate, as
    observed) or a subordinate_list suspends it, ``T`` while a
    suspend_threshold does, ``s`` while qmod -sj does; ``r`` only when
    nothing suspends it.  E.g. ``r``, ``Rr``, ``dr``, ``s``, ``S``, ``T``, ``Ss``."""
    causes = set(suspended_by or ())
    s = "d" if deleted else ""
    if causes & {"queue", "subordinate"}:
        s += "S"
    if "threshold" in causes:
        s += "T"
    if restarted:
        s += "R"
    if not causes:
        s += "r"
    if "job" in causes:
        s += "s"
    return s


def _hold_letters(job: Job) -> str:
    """Which holds a job has, as ``qstat -s`` names them: u(ser), o(perator),
    s(ystem), j(ob dependency)."""
    return (("u" if job.user_hold else "") + ("o" if job.operator_hold else "")
            + ("s" if job.system_hold else "") + ("j" if job.predecessors else ""))


def job_row(job: Job, figures: dict | None = None, detail: bool = True) -> dict:
    """A job in the shape :mod:`minisge.output.qstat_out` documents (listing,
    ``-ext``, ``-pri``, ``-urg`` and ``-r`` keys included; only the listing's
    without ``detail``: what a plain ``qstat`` prints)."""
    figures = figures or {}
    d = {
        "job_number": job.number,
        "name": job.name,
        "owner": job.owner,
        "submission_time": int(job.submission_time),
        "slots": job.requested_slots(),
        "array": job.is_array,
        "prio": figures.get("prio", 0.0),
        "state": "qw",
        "holds": _hold_letters(job),
    }
    if detail:
        d.update(_detail_keys(job, figures))
    d["tasks"] = []
    _add_tasks(job, d)
    return d


def _detail_keys(job: Job, figures: dict) -> dict:
    """The keys of ``qstat -ext``, ``-pri``, ``-urg``, ``-r`` and ``-xml``."""
    s = job.spec
    pe = s.get("pe") or {}
    return {
        # -pri / -urg / -ext
        "nurg": figures.get("nurg", 0.0),
        "nppri": figures.get("nppri", 0.0),
        "ntckts": figures.get("ntckts", 0.0),
        "urg": figures.get("urg", 0.0),
        "rrcontr": figures.get("rrcontr", 0.0),
        "wtcontr": figures.get("wtcontr", 0.0),
        "dlcontr": figures.get("dlcontr", 0.0),
        "deadline": figures.get("deadline", 0),
        "priority": job.priority,
        "project": s.get("project") or None,
        "department": "defaultdepartment",
        # -r
        "pe": pe.get("name"),
        "pe_range": pe.get("range"),
        "checkpoint": s.get("ckpt") or None,
        "hard_resources": [list(r) for r in figures.get("hard_resources", ())],
        "soft_resources": [[k, v] for k, v in (s.get("soft_resources") or {}).items()],
        "hard_queues": list(s.get("hard_queues") or ()),
        "soft_queues": list(s.get("soft_queues") or ()),
        "master_queues": list(s.get("master_queues") or ()),
        "predecessors_requested": [str(x) for x in s.get("hold_jid") or ()],
        "predecessors": list(job.predecessors),
        "binding": "NONE",
    }


def _add_tasks(job: Job, d: dict) -> dict:
    """The job's tasks (running, in error, pending ranges) into row ``d``;
    a job that is no array becomes its own single task."""
    tasks = d["tasks"]
    for t in sorted(job.tasks.values(), key=lambda t: t.task_id):
        running = t.state not in (ERROR, RESCHEDULING)
        if running and t.granted_pe:
            d["granted_pe"] = t.granted_pe
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
        restarted = ({tid for tid in job.pending if job.restarted_pending.get(tid)}
                     if job.restarted_pending else set())
        plain = [tid for tid in job.pending if tid not in restarted]
        for ids, prefix in ((plain, ""), (sorted(restarted), "R")):
            if not ids:
                continue
            # job_get_state_string: R (restarted) clears w: "Rq", "hRq"
            st = ("h" if job.held else "") + (prefix + "q" if prefix else "qw")
            if job.is_array:
                from minisge.output.qstat_out import compress_task_ids

                tasks.append({"ranges": compress_task_ids(ids), "state": st, "slots": job.requested_slots()})
            else:
                tasks.append({"task_number": ids[0], "state": st, "slots": job.requested_slots()})
    if not job.is_array:
        # a job without "tasks" is its own single task (qstat_out): no ja-task-ID
        for task in tasks[:1]:
            d.update({k: v for k, v in task.items() if k not in ("task_number", "ranges")})
        del d["tasks"]
    return d


def _selected(job: Job, users) -> bool:
    return users is None or "*" in users or job.owner in users


def job_list(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qstat``: the caller's jobs (``users`` None) or those of ``users``
    (``*`` for all), and the queue instances in Grid Engine's order."""
    users = req.get("users")
    if users is None:
        users = [user_name(uid)]
    detail = req.get("detail", True)  # False: a plain listing (qstat without -ext/-pri/-urg/-r/-xml)
    figures = priorities(qm, detail=detail)
    jobs = [job_row(job, figures.get(job.number), detail)
            for job in sorted(qm.jobs.values(), key=lambda j: j.number) if _selected(job, users)]
    queues = [f"{c.qname}@{h}" for c, h in qm.config.queue_instances()]
    return {"jobs": jobs, "queues": queues}


def _used_slots(qm: Qmaster) -> dict[str, int]:
    used: dict[str, int] = {}
    for job in qm.jobs.values():
        for t in job.tasks.values():
            if t.state == ERROR:
                continue
            for g in t.granted:
                used[g.qinstance] = used.get(g.qinstance, 0) + g.slots
    return used


_LIMITS = ("s_rt", "h_rt", "s_cpu", "h_cpu", "s_fsize", "h_fsize", "s_data", "h_data",
           "s_stack", "h_stack", "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")


def _queue_resources(qm: Qmaster, conf, host: str, free: int) -> list[list[str]]:
    """``qstat -F``: the host's load values (``hl``), then the queue's fixed
    values (``qf``) with the free slots (``qc``), in qstat's order."""
    out = [["hl", k, str(v)] for k, v in qm.config.load_values.get(host, {}).items()]
    out += [["qf", "qname", conf.qname], ["qf", "hostname", host], ["qc", "slots", str(free)]]

    def value(attr: str) -> str:
        try:
            return str(qm.config.qvalue(conf, attr, host))
        except Exception:
            return "NONE"

    out.append(["qf", "tmpdir", value("tmpdir")])
    out.append(["qf", "seq_no", value("seq_no")])
    rerun = value("rerun").upper() in ("TRUE", "1", "YES", "Y")
    out.append(["qf", "rerun", "1.000000" if rerun else "0.000000"])
    out.append(["qf", "calendar", value("calendar")])
    for limit in _LIMITS:
        v = value(limit)
        out.append(["qf", limit, "infinity" if v.upper() == "INFINITY" else v])
    out.append(["qf", "min_cpu_interval", value("min_cpu_interval")])
    return out


def full_list(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qstat -f``: :func:`job_list` plus one dict per queue instance
    (``queue_info``); ``resources`` (``-F``) when the request asks for them."""
    out = job_list(qm, req, uid)
    used = _used_slots(qm)
    queues = []
    for conf, host in qm.config.queue_instances():
        name = f"{conf.qname}@{host}"
        qtype = qm.config.qvalue(conf, "qtype", host)
        letters = ("B" if "BATCH" in qtype else "") + ("I" if "INTERACTIVE" in qtype else "")
        pe_list = str(qm.config.qvalue(conf, "pe_list", host))
        if pe_list not in ("NONE", ""):
            letters += "P"
        load = qm.config.load_values.get(host, {}).get("load_avg")
        states = qm.config.qi_states.get(name, "")
        if host not in qm.execds:
            states = "u" + states
        from minisge import load_control

        alarms = load_control.qstat_view(qm, conf, host)  # a, A (qstat computes them), S
        states += "".join(alarms)
        total = int(qm.config.qvalue(conf, "slots", host))
        np_load = qm.config.load_values.get(host, {}).get("np_load_avg")
        q = {
            "name": name,
            "cqueue": conf.qname,
            "host": host,
            "qtype": letters or "NONE",
            "resv": 0,
            "used": used.get(name, 0),
            "total": total,
            "load_avg": float(load) if load is not None else None,
            "np_load_avg": float(np_load) if np_load is not None else None,
            "arch": qm.config.load_values.get(host, {}).get("arch"),
            "states": _ordered_states(states),
            "messages": list(qm.config.qi_messages.get(name, [])),
            # -explain: the lines per state letter, in qstat's order (a, A, then c/E messages)
            "explain": {**{k: v for k, v in alarms.items() if v},
                        "E": list(qm.config.qi_messages.get(name, []))},
            "pe_list": [p for p in pe_list.replace(",", " ").split() if p != "NONE"],
        }
        if req.get("resources"):
            q["resources"] = _queue_resources(qm, conf, host, max(0, total - used.get(name, 0)))
        queues.append(q)
    out["queue_info"] = queues
    return out


def _ordered_states(states: str) -> str:
    order = "aACDduESsco"
    return "".join(c for c in order if c in states)


def global_messages(qm: Qmaster) -> list[str]:
    """The scheduler's cell-wide messages as ``qstat -j`` shows them: each
    queue instance dropped (disabled, unavailable, suspended, full), and
    "All queues dropped because of overload or full" when none is left.
    Only while some job is pending, as the scheduler reports them per run."""
    if not any(job.pending for job in qm.jobs.values()):
        return []
    used = _used_slots(qm)
    out = []
    instances = qm.config.queue_instances()
    dropped = 0
    from minisge import load_control

    decision = getattr(qm, "load_decision", None)
    alarmed = load_control.scheduler_messages(decision) if decision is not None else []
    out.extend(alarmed)  # suspend alarm and overload come first, as the scheduler checks them first
    for conf, host in instances:
        name = f"{conf.qname}@{host}"
        states = qm.config.qi_states.get(name, "")
        if decision is not None:
            states += decision.states(name).replace("a", "").replace("A", "")  # S, c
        if any(f'"{name}"' in m for m in alarmed):
            pass
        elif "d" in states or "D" in states:
            out.append(f'queue instance "{name}" dropped because it is disabled')
        elif host not in qm.execds or "S" in states or "c" in states:  # 8.1.9 words S and c so
            out.append(f'queue instance "{name}" dropped because it is temporarily not available')
        elif "s" in states or "S" in states:
            out.append(f'queue instance "{name}" dropped because it is suspended')
        elif used.get(name, 0) >= int(qm.config.qvalue(conf, "slots", host)):
            out.append(f'queue instance "{name}" dropped because it is full')
        else:
            continue
        dropped += 1
    if instances and dropped == len(instances) and (alarmed or any("full" in m for m in out)):
        out.append("All queues dropped because of overload or full")
    return out


def _job_messages(job: Job, reasons: list[str], dropped: list[str]) -> list[str]:
    """A job's own scheduling messages: the scheduler's reasons, less those
    about queue instances already dropped for the whole cell, then "Job is
    in hold state" for a job under a user, operator or system hold."""
    gone = [m.split('"')[1] for m in dropped if m.startswith('queue instance "')]
    out = [r for r in reasons if not any(f'queue instance "{q}"' in r for q in gone)]
    if any("All queues dropped" in m for m in dropped):
        out = [r for r in out if "queue instance" not in r]
    if job.user_hold or job.operator_hold or job.system_hold:
        out.append("Job is in hold state")
    return out


def job_detail(qm: Qmaster, ids: list[str], uid: int) -> dict:
    """``qstat -j``: the detail dicts of the jobs named by number or name,
    the names that matched nothing, the cell-wide scheduler messages
    (``global``) and each job's own (``reasons``).  Without ids: the
    ``summary`` of ``qstat -j`` alone, [reason, [job ids]] pairs."""
    dropped = global_messages(qm)
    found, missing, seen = [], [], set()
    for ident in ids:
        jobs = qm.find_jobs(ident)
        if not jobs:
            missing.append(ident)
        for job in jobs:
            if job.number not in seen:
                seen.add(job.number)
                found.append(job)
    reasons = {str(j.number): _job_messages(j, list(qm.pending_reasons.get(j.number, [])), dropped)
               for j in found}
    reply = {"jobs": [detail_dict(j) for j in found], "missing": missing,
             "global": dropped, "reasons": reasons}
    if not ids:
        held = sorted(j.number for j in qm.jobs.values()
                      if j.pending and (j.user_hold or j.operator_hold or j.system_hold))
        dependent = sorted(j.number for j in qm.jobs.values() if j.pending and j.predecessors)
        summary = []
        if held:
            summary.append(["Jobs dropped because of hold state", held])
        if dependent:
            summary.append(["Job dropped because of job dependencies", dependent])
        reply["summary"] = summary
    return reply


def _pe_range_text(spec: dict) -> str | None:
    pe = spec.get("pe")
    if not pe:
        return None
    from minisge.submit_options import format_ranges

    return format_ranges(pe["ranges"])


def _path_list(entries) -> list | None:
    """qsub's -o/-e entries (``{"host", "path"}``) as qstat_out's (host, path) pairs."""
    if not entries:
        return None
    return [(e["host"], e["path"]) if isinstance(e, dict) else e for e in entries]


def detail_dict(job: Job) -> dict:
    """A job for ``qstat -j`` (keys of qstat_out.format_job_detail)."""
    s = job.spec
    o = s.get("o_env") or {}
    d = {
        "job_number": job.number,
        "exec_file": f"job_scripts/{job.number}",
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
        "merge": True if s.get("merge") else None,
        "hard_resource_list": list((s.get("hard_resources") or {}).items()) or None,
        "soft_resource_list": list((s.get("soft_resources") or {}).items()) or None,
        "mail_list": s.get("mail_list") or None,
        "notify": bool(s.get("notify")),
        "job_name": job.name,
        "stdout_path_list": _path_list(s.get("stdout_path")),
        "stderr_path_list": _path_list(s.get("stderr_path")),
        "priority": job.priority,
        "hard_queue_list": s.get("hard_queues") or None,
        "soft_queue_list": s.get("soft_queues") or None,
        "restart": s.get("restart"),
        "shell_list": s.get("shell") or None,
        "env_list": list((s.get("env") or {}).items()) or None,
        "job_args": s.get("args") or None,
        "script_file": s.get("script_path") if not s.get("binary") else s.get("command"),
        "pe": (s.get("pe") or {}).get("name"),
        "pe_range": _pe_range_text(s),
        "jid_predecessor_request": s.get("hold_jid") or None,
        "jid_predecessor_list": job.predecessors or None,
        "project": s.get("project"),
        "array": tuple(s["array"]) if s.get("array") else None,
        "task_concurrency": s.get("tc"),
        "binding": "NONE",
        "job_type": ["binary"] if s.get("binary") else None,
        "tasks": [
            {
                "task_number": t.task_id,
                "running": t.state not in (ERROR, RESCHEDULING),
                "cpu": 0.0,
                "mem": 0.0,
                "io": 0.0,
                "messages": [t.error_reason] if t.error_reason else [],
            }
            for t in sorted(job.tasks.values(), key=lambda t: t.task_id)
        ],
    }
    return d
