"""What the qmaster tells ``qstat``: plain dicts in the shape
:mod:`minisge.output.qstat_out` prints (its docstring is the contract)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from minisge import scheduler
from minisge.formats import queue_conf, sge_types
from minisge.formats.sched_conf import schedd_job_info_lists
from minisge.output.qstat_out import compress_task_ids, compress_task_runs, reservation_message
from minisge.output.resource_value import resource_text
from minisge.qmaster import job_dependencies
from minisge.qmaster.job import ERROR, RESCHEDULING, Job, Task
from minisge.qmaster.job_facts import deadline_time, job_facts
from minisge.qmaster.qmaster import Qmaster, gc_paused
from minisge.qmaster.qstat_select import Selection, UnknownResource, parse_requests
from minisge.qmaster.users import user_name
from minisge.rules import core_binding
from minisge.scheduler import job_order, schedd_message, tickets


def _considered(job: Job) -> bool:
    """Jobs the scheduler looks at: not held (a held job shows 0.00000 in
    every priority column, as in Grid Engine), nor held in part (a hold on
    some of its tasks: 8.1.9 shows 0.00000 for it too)."""
    return not job.held and not job.task_holds


def priorities(qm: Qmaster, now: float | None = None, detail: bool = True) -> dict[int, dict]:
    """Each job's priority figures (sge_priority(5)) for qstat -pri/-urg/-ext/-r,
    computed by :mod:`minisge.scheduler.job_order` exactly as the scheduler orders its
    pass: urgency normalized over the jobs the scheduler considers (not
    held), ntckts from the ticket policies (:mod:`minisge.scheduler.tickets`,
    0.5 when none gives tickets), the weights of the scheduler
    configuration.  A held job shows 0 in every column but its per-request
    contributions (``qstat -r``, computed for every job as qstat does; not
    without ``detail``, when only ``prio`` is shown)."""
    now = qm.clock() if now is None else now
    weights = job_order.Weights.from_sched_conf(qm.config.sched_conf)
    cx = qm.config.complex_index
    pes = qm.config.pes
    considered = [job_facts(job, now) for job in qm.jobs.values() if _considered(job)]
    per_job: dict[int, tickets.Tickets] = {}
    figs: dict[int, job_order.Figures] = {}
    if considered:  # (none: every job is held, nothing to weigh)
        found = qm.ticket_input(now, free_slots(qm))
        figs_t = tickets.tickets(found[1], found[0]) if found is not None else {}
        nt, nt_default = tickets.job_ntckts(figs_t) if found is not None else ({}, 0.5)
        for (job_id, _tid), t in sorted(figs_t.items()):
            per_job.setdefault(job_id, t)
        figs = job_order.figures(considered, cx, pes, weights, now, nt, nt_default)
    out: dict[int, dict] = {}
    for f in considered:
        g = figs[f.job_id]
        tk = per_job.get(f.job_id)
        out[f.job_id] = {"prio": g.prio, "nurg": g.nurg, "nppri": g.nppri, "ntckts": g.ntckts, "urg": g.urg,
                         "rrcontr": g.rrcontr, "wtcontr": g.wtcontr, "dlcontr": g.dlcontr,
                         "deadline": int(f.deadline), "hard_resources": list(g.per_request),
                         **(_ticket_keys(tk) if tk is not None else {})}
    if not detail:  # a job left out shows 0.00000, as a held one does
        return out
    for job in qm.jobs.values():
        if job.number in out:
            continue
        f = job_facts(job, now)
        _total, per_request = job_order.resource_contribution(f.requests, job_order.job_slot_request(f.pe, pes), cx)
        out[job.number] = {"prio": 0.0, "nurg": 0.0, "nppri": 0.0, "ntckts": 0.0, "urg": 0.0,
                           "rrcontr": 0.0, "wtcontr": 0.0, "dlcontr": 0.0, "hard_resources": list(per_request)}
    return out


def free_slots(qm: Qmaster) -> int:
    """The slots no task holds, over every queue instance whatever its state
    (what the ticket policies share out; the scheduler's snapshot counts them
    the same way), without building the snapshot."""
    used: dict[str, int] = {}
    for job in qm.jobs.values():
        for t in job.tasks.values():
            for g in t.granted:
                used[g.qinstance] = used.get(g.qinstance, 0) + g.slots
    return sum(max(0, qi.slots - used.get(qi.name, 0)) for qi in qm.config.static_qinstances())


def _ticket_keys(t: tickets.Tickets) -> dict[str, float]:
    """qstat -ext's tckts otckt ftckt stckt share (8.1.9 prints the counts truncated)."""
    return {"tickets": t.tickets, "otickets": t.otickets, "ftickets": t.ftickets, "stickets": t.stickets,
            "share": t.share}


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


# the order of qstat's groups of pending tasks by their holds (job_create_hold_id_lists)
HOLD_GROUPS = ["", "u", "o", "s", "a", "uo", "us", "ua", "os", "oa", "sa", "uos", "uoa", "usa", "osa", "uosa"]


def _hold_letters(job: Job) -> str:
    """Which holds a job has, as ``qstat -s`` names them: u(ser), o(perator),
    s(ystem), j(ob dependency); a pending task waiting for tasks of its
    -hold_jid_ad predecessors adds a (array dependency)."""
    return job.hold_letters + ("j" if job.predecessors else "")


def job_row(job: Job, figures: dict | None = None, detail: bool = True,
            usage: Mapping[int, Mapping[str, float]] | None = None) -> dict:
    """A job in the shape :mod:`minisge.output.qstat_out` documents (listing,
    ``-ext``, ``-pri``, ``-urg`` and ``-r`` keys included; only the listing's
    without ``detail``: what a plain ``qstat`` prints); ``usage``: the
    online usage of its running tasks by task id (``-ext``'s cpu, mem, io)."""
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
    _add_tasks(job, d, usage or {})
    return d


def _plain_pending(job: Job) -> bool:
    """A job that is no array, has no task record and whose one pending task
    has nothing of its own (no hold of its own, no -hold_jid_ad wait, no
    restart): its listing line is the job's, :func:`brief_row` says it all."""
    return not (job.tasks or job.is_array or job.task_holds or job.ad_held or job.restarted_pending)


def brief_shape(job: Job, figures: dict | None = None) -> tuple[str, str, int, float, str, str]:
    """A :func:`_plain_pending` job's listing line but its number and date:
    (name, owner, slots, prio, state, holds), what like jobs share
    (qstat_out.BriefJobs)."""
    holds = job.hold_letters
    return (job.name, job.owner, job.requested_slots() if job.spec.get("pe") else 1,
            figures.get("prio", 0.0) if figures else 0.0,
            "hqw" if holds or job.predecessors else "qw", holds + "j" if job.predecessors else holds)


def brief_row(job: Job, figures: dict | None = None) -> list:
    """A :func:`_plain_pending` job's :func:`job_row` (without ``detail``)
    as the values of ``qstat_out.BRIEF_KEYS``."""
    name, owner, slots, prio, state, holds = brief_shape(job, figures)
    return [job.number, name, owner, int(job.submission_time), slots, prio, state, holds]


def brief_listing(jobs: Iterable[Job], figures: Mapping[int, dict]) -> dict[str, list]:
    """:func:`_plain_pending` jobs (in job number order) as the listing sends
    them (catalogue BRIEF_JOBS, qstat_out.BriefJobs): the shapes of their
    lines (:func:`brief_shape`) and, three ints a job, its number, its
    submission time and its shape's index."""
    shapes: dict[tuple[str, str, int, float, str, str], int] = {}
    columns: list[int] = []
    for job in jobs:
        shape = brief_shape(job, figures.get(job.number))
        kind = shapes.get(shape)
        if kind is None:
            kind = shapes[shape] = len(shapes)
        columns += (job.number, int(job.submission_time), kind)
    return {"shapes": [list(shape) for shape in shapes], "columns": columns}


def _detail_keys(job: Job, figures: dict) -> dict:
    """The keys of ``qstat -ext``, ``-pri``, ``-urg``, ``-r`` and ``-xml``."""
    s = job.spec
    pe = s.get("pe") or {}
    return {
        # -pri / -urg / -ext
        "nurg": figures.get("nurg", 0.0),
        "nppri": figures.get("nppri", 0.0),
        "ntckts": figures.get("ntckts", 0.0),
        "tickets": figures.get("tickets", 0.0),
        "override_tickets": int(s.get("override_tickets") or 0),
        "otickets": figures.get("otickets", 0.0),
        "ftickets": figures.get("ftickets", 0.0),
        "stickets": figures.get("stickets", 0.0),
        "share": figures.get("share", 0.0),
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
        "pe_range": _pe_range_text(s),
        "checkpoint": s.get("checkpoint") or None,
        "hard_resources": [list(r) for r in figures.get("hard_resources", ())],
        "soft_resources": [[k, v] for k, v in (s.get("soft_resources") or {}).items()],
        "hard_queues": list(s.get("hard_queues") or ()),
        "soft_queues": list(s.get("soft_queues") or ()),
        "master_queues": list(s.get("master_queues") or ()),
        "predecessors_requested": [str(x) for x in s.get("hold_jid") or ()],
        "predecessors": list(job.predecessors),
        "ad_predecessors_requested": [str(x) for x in s.get("hold_jid_ad") or ()],
        "ad_predecessors": list(job.ad_predecessors),
        "binding": binding_text(s.get("binding")),
    }


def _add_tasks(job: Job, d: dict, usage: Mapping[int, Mapping[str, float]]) -> dict:
    """The job's tasks (running, in error, pending ranges) into row ``d``,
    a running task with its online ``usage`` if its execd reported any;
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
                **({k: u[k] for k in ("cpu", "mem", "io")} if running and (u := usage.get(t.task_id)) else {}),
            }
        )
    if job.pending:
        restarted = {tid for tid, n in job.restarted_pending.items() if n and tid in job.pending}
        waiting = job.held_tasks()  # -hold_jid_ad
        groups: dict[str, list[int] | None]
        if restarted or waiting or job.task_holds:
            by_holds: dict[str, list[int]] = {}
            for tid in job.pending:
                if tid not in restarted:
                    by_holds.setdefault(job.task_hold_letters(tid) + ("a" if tid in waiting else ""), []).append(tid)
            groups = dict(by_holds)
        else:
            groups = {job.hold_letters: None}  # all of them: their ranges as they are, however many tasks
        rows: list[tuple[list[int] | None, str, str]] = [
            (groups[key], "", key) for key in sorted(groups, key=HOLD_GROUPS.index)]
        if restarted:
            rows.append((sorted(restarted), "R", job.hold_letters))
        # qstat's groups of pending tasks (job_create_hold_id_lists): not held
        # first, then by the holds they have (u, o, s, a(rray dependency), uo...)
        for ids, prefix, holds in rows:
            # job_get_state_string: R (restarted) clears w: "Rq", "hRq"
            st = ("h" if holds or job.predecessors else "") + (prefix + "q" if prefix else "qw")
            row: dict[str, Any]
            if not job.is_array:
                row = {"task_number": ids[0] if ids is not None else next(iter(job.pending))}
            else:
                row = {"ranges": compress_task_ids(ids) if ids is not None
                       else compress_task_runs(job.pending.runs())}
            row.update(state=st, slots=job.requested_slots())
            if holds != job.hold_letters:
                row["holds"] = holds.replace("a", "") + ("j" if job.predecessors else "") + \
                    ("a" if "a" in holds else "")
            tasks.append(row)
    if not job.is_array:
        # a job without "tasks" is its own single task (qstat_out): no ja-task-ID
        for task in tasks[:1]:
            d.update({k: v for k, v in task.items() if k not in ("task_number", "ranges")})
        del d["tasks"]
    return d


def _usage(qm: Qmaster, job: Job) -> dict[int, dict[str, float]]:
    """The online usage of the job's running tasks, by task id."""
    return {t.task_id: u for t in job.tasks.values() if (u := qm.usage_of(job, t)) is not None}


def job_list(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qstat``: the caller's jobs (``users`` None) or those of ``users``
    (``*`` for all), and the queue instances in Grid Engine's order; with
    the garbage collector paused, as a pass (a row or two per job: with a
    long queue it would otherwise walk the whole job table again and again)."""
    with gc_paused():
        return _job_list(qm, req, uid)


def _job_list(qm: Qmaster, req: dict, uid: int) -> dict:
    users = req.get("users")
    if users is None:
        users = [user_name(uid)]
    detail = req.get("detail", True)  # False: a plain listing (qstat without -ext/-pri/-urg/-r/-xml)
    brief = not detail and bool(req.get("brief"))
    figures = priorities(qm, detail=detail)
    jobs, plain = [], []
    everyone = users is None or "*" in users
    table = qm.jobs
    for number in sorted(table):
        job = table[number]
        if not everyone and job.owner not in users:
            continue
        if brief and _plain_pending(job):
            plain.append(job)
        else:
            jobs.append(job_row(job, figures.get(job.number), detail, _usage(qm, job) if detail else None))
    for row in jobs:  # qstat -g t: the MASTER line of a job_is_first_task FALSE job is one more
        pe = qm.config.pes.get(row.get("granted_pe") or "")
        if pe is not None and not pe.job_is_first_task:
            row["job_is_first_task"] = False
    queues = [f"{c.qname}@{h}" for c, h in qm.config.queue_instances()]
    out: dict[str, Any] = {"jobs": jobs, "queues": queues}
    if brief:
        out["brief_jobs"] = brief_listing(plain, figures)
    if req.get("finished"):
        out["finished"] = qm.finished.listing(users)
    return out


def used_slots(qm: Qmaster) -> dict[str, int]:
    """The slots running tasks hold per queue instance."""
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


def load_resources(qm: Qmaster, host: str, *, int_as_double: bool = False) -> list[list[str]]:
    """The host's load values as ``-F`` shows them (``hl``), in the order
    the host reported them: those of a complex attribute only, each printed
    by its type (:func:`minisge.output.resource_value.resource_text`;
    ``int_as_double`` as qhost prints INT values)."""
    cx = qm.config.complex_index
    out = []
    for name, value in qm.config.scaled_load(host).items():  # host_conf(5) load_scaling applied
        attr = cx.get(name)
        if attr is None or attr.name != name:
            continue
        out.append(["hl", name, resource_text(attr.type.value, str(value), int_as_double=int_as_double)])
    return out


def _queue_resources(qm: Qmaster, conf, host: str, free: int) -> list[list[str]]:
    """``qstat -F``: the host's load values (``hl``), then the queue's fixed
    values (``qf``) with the free slots (``qc``), in qstat's order."""
    out = load_resources(qm, host)
    out += [["qf", "qname", conf.qname], ["qf", "hostname", host], ["qc", "slots", str(free)]]

    def value(attr: str) -> str:
        try:
            return str(qm.config.qvalue(conf, attr, host))
        except (KeyError, queue_conf.AmbiguousSetting):
            return "NONE"

    out.append(["qf", "tmpdir", value("tmpdir")])
    out.append(["qf", "seq_no", value("seq_no")])
    rerun = value("rerun").upper() in ("TRUE", "1", "YES", "Y")
    out.append(["qf", "rerun", "1.000000" if rerun else "0.000000"])
    out.append(["qf", "calendar", value("calendar")])
    g = qm.config.exec_hosts.get("global")
    eh = qm.config.exec_hosts.get(host)
    fixed = (("gf", dict(g.complex_values) if g else {}), ("hf", dict(eh.complex_values) if eh else {}))
    for limit in _LIMITS:
        v = value(limit)
        out.append(_most_restrictive(qm, limit, fixed, ["qf", limit, "infinity" if v.upper() == "INFINITY" else v]))
    out.append(["qf", "min_cpu_interval", value("min_cpu_interval")])
    return out


def _most_restrictive(qm: Qmaster, name: str, fixed: tuple[tuple[str, dict[str, str]], ...],
                      queue_row: list[str]) -> list[str]:
    """A queue limit as ``qstat -F`` shows it: the lowest of the global,
    host and queue values of the attribute, with its level's prefix (8.1.9 on the peer: a host's h_vmem=2T beside the
    queue's INFINITY shows ``hf:h_vmem=2.000T``)."""
    attr = qm.config.complex_index.get(name)
    kind = str(attr.type) if attr is not None else "MEMORY"

    def number(text: str) -> float:
        try:
            return sge_types.parse_value(kind, text)
        except sge_types.SpecifierError:
            return float("inf")

    rows = [[prefix, name, resource_text(kind, str(values[name]))] for prefix, values in fixed if name in values]
    return min([*rows, queue_row], key=lambda row: number(row[2]))  # the first of equals: global, host, queue


def full_list(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qstat -f``: :func:`job_list` plus one dict per queue instance
    (``queue_info``); ``resources`` (``-F``) when the request asks for them."""
    out = job_list(qm, req, uid)
    selected: set[str] | None = None
    if req.get("requests") or req.get("queue_users"):  # -l, -U
        try:
            sel = Selection(qm.config, parse_requests(req.get("requests") or ()), req.get("queue_users") or ())
        except UnknownResource as e:
            return {"jobs": [], "queues": [], "queue_info": [], "unknown_resource": str(e)}
        selected = {name for _cq, _h, name in sel.instances}
        out["hide_pending"] = [job.number for job in sorted(qm.jobs.values(), key=lambda j: j.number)
                               if job.pending and not sel.shows_pending(job)]
    used = used_slots(qm)
    reserved = qm.reservations.held_now()  # qstat -f's resv: the slots of the running advance reservations
    queues = []
    for conf, host in qm.config.queue_instances():
        name = f"{conf.qname}@{host}"
        if selected is not None and name not in selected:
            continue
        qtype = qm.config.qvalue(conf, "qtype", host)
        letters = ("B" if "BATCH" in qtype else "") + ("I" if "INTERACTIVE" in qtype else "")
        pe_list = str(qm.config.qvalue(conf, "pe_list", host))
        if pe_list not in ("NONE", ""):
            letters += "P"
        load = qm.config.scaled_load(host).get("load_avg")
        states = qm.config.qi_states.get(name, "")
        if host not in qm.execds:
            states = "u" + states
        alarms = qm.load_control.qstat_view(conf, host)  # a, A (qstat computes them), S
        states += "".join(alarms)
        total = int(qm.config.qvalue(conf, "slots", host))
        np_load = qm.config.scaled_load(host).get("np_load_avg")
        q = {
            "name": name,
            "cqueue": conf.qname,
            "host": host,
            "qtype": letters or "NONE",
            "resv": reserved.get(name, 0),
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


#: the one global message of a scheduler pass that had none (SCHEDD_INFO_NOMESSAGE)
NO_MESSAGES = "There are no messages available"


def global_messages(qm: Qmaster) -> list[str]:
    """The scheduler's cell-wide messages as ``qstat -j`` shows them: those
    of the last pass (queue instances it dropped for every job, and "All
    queues dropped because of overload or full" when none was left); only
    while some job is pending."""
    if not any(job.pending for job in qm.jobs.values()):
        return []
    return list(qm.global_messages)


def job_messages(job: Job, reasons: list[str], dropped: list[str]) -> list[str]:
    """A job's own scheduling messages: the scheduler's reasons, less those
    about queue instances already dropped for the whole cell, then "Job is
    in error state" for a job with a task in error (Eqw), "Job is in hold
    state" for a job under a user, operator or system hold, else
    "job dropped because of job dependencies" for one whose -hold_jid
    predecessors have not finished (8.1.9's words, lower case)."""
    gone = [m.split('"')[1] for m in dropped if m.startswith('queue instance "')]
    out = [r for r in reasons if not any(f'queue instance "{q}"' in r for q in gone)]
    if any("All queues dropped" in m for m in dropped):
        out = [r for r in out if "queue instance" not in r]
    if any(t.state == ERROR for t in job.tasks.values()):
        out.append("Job is in error state")
    if job.user_hold or job.operator_hold or job.system_hold:
        out.append("Job is in hold state")
    elif job.predecessors:
        out.append("job dropped because of job dependencies")
    return out


def reservation_lines(job: Job, reserved: scheduler.ScheduleEntry | None) -> list[str]:
    """sched_conf(5) max_reservation, qsub -R y: the line of the reservation
    a pass made for ``job``, while it is pending (none without one)."""
    if reserved is None or not job.pending:
        return []
    return [reservation_message(reserved.start, reserved.granted)]


def job_detail(qm: Qmaster, ids: list[str], uid: int, xml: bool = False) -> dict:
    """``qstat -j``: the detail dicts of the jobs named by number or name,
    the names that matched nothing, the cell-wide scheduler messages
    (``global``) and each job's own (``reasons``); with ``xml``, each job's
    :func:`xml_facts` too.  Without ids: the
    ``summary`` of ``qstat -j`` alone, [reason, [job ids]] pairs."""
    setting = qm.config.sched_conf.schedd_job_info
    note = schedd_message.global_message(setting)

    def informed(job: Job) -> bool:
        # sched_conf(5) schedd_job_info: a job whose messages are kept (listed,
        # or of a listed job's category: its reasons were kept by the pass)
        return note is None or schedd_job_info_lists(setting, job.number) or job.number in qm.pending_reasons

    def messages(job: Job) -> list[str]:
        own = job_messages(job, list(qm.pending_reasons.get(job.number, [])), dropped) if informed(job) else []
        return own + reservation_lines(job, qm.job_reservations.get(job.number))

    # schedd_mes_obtain_package: false keeps no other global message, job_list
    # adds its note after them, and a pass with no message at all says so
    dropped = [] if note == schedd_message.TURNED_OFF else global_messages(qm)
    if note is not None:
        dropped.append(note)
    elif not dropped and not any(messages(j) for j in qm.jobs.values()
                                 if j.pending or any(t.state == ERROR for t in j.tasks.values())):
        dropped = [NO_MESSAGES]
    found, missing, seen = [], [], set()
    for ident in ids:
        jobs = qm.find_jobs(ident)
        if not jobs:
            missing.append(ident)
        for job in jobs:
            if job.number not in seen:
                seen.add(job.number)
                found.append(job)
    reasons = {str(j.number): messages(j) for j in found}
    figures = priorities(qm, detail=False) if xml else {}
    reply = {"jobs": [dict(detail_dict(j, *job_dependencies.successors(j, qm.jobs), usage=_usage(qm, j)),
                           **({"xml": xml_facts(qm, j, figures.get(j.number))} if xml else {}))
                      for j in found],
             "missing": missing,
             "global": dropped, "reasons": reasons}
    if not ids:
        held = sorted(j.number for j in qm.jobs.values()
                      if j.pending and (j.user_hold or j.operator_hold or j.system_hold) and informed(j))
        # a held job is listed under its hold alone (as 8.1.9)
        dependent = sorted(j.number for j in qm.jobs.values() if j.pending and j.predecessors
                           and not (j.user_hold or j.operator_hold or j.system_hold) and informed(j))
        summary = []
        if held:
            summary.append(["Jobs dropped because of hold state", held])
        if dependent:
            summary.append(["Job dropped because of job dependencies", dependent])
        reply["summary"] = summary
    return reply


# complex(5) types as CE_valtype numbers (TYPE_INT ... TYPE_DOUBLE of 8.1.9)
_VALTYPES = {"INT": 1, "STRING": 2, "TIME": 3, "MEMORY": 4, "BOOL": 5, "CSTRING": 6, "HOST": 7, "DOUBLE": 8,
             "RESTRING": 9}
# qsub -m letters as JB_mail_options bits (MAIL_AT_ABORT ... MAIL_AT_SUSPENSION)
_MAIL_BITS = {"a": 0x40000, "b": 0x80000, "e": 0x100000, "n": 0x200000, "s": 0x400000}


def _typed_requests(qm: Qmaster, requests: Mapping[str, str] | None) -> list[list[Any]]:
    """-l requests as ``qstat -j -xml`` shows them: [name, CE_valtype, value, CE_doubleval]."""
    out: list[list[Any]] = []
    for name, value in (requests or {}).items():
        attr = qm.config.complex_index.get(name)
        kind = str(attr.type) if attr is not None else "STRING"
        number = 0.0
        if kind == "BOOL":
            number = 1.0 if str(value).lower() in ("true", "1", "t", "yes", "y") else 0.0
        elif kind in sge_types.NUMERIC_TYPES:
            try:
                number = sge_types.parse_value(kind, str(value))
            except sge_types.SpecifierError:
                number = 0.0
        out.append([name, _VALTYPES.get(kind, 2), value, number])
    return out


def binding_text(spec: str | None) -> str:
    """qsub -binding as ``qstat -j`` shows it: with its mode, ``set`` when
    none was given (8.1.9 on the peer: ``-binding linear:1`` shows
    ``set linear:1``, ``-binding env linear:2`` ``env linear:2``); NONE."""
    if not spec:
        return "NONE"
    return spec if spec.split(" ", 1)[0] in ("set", "env", "pe") else f"set {spec}"


def _prefixed(name: str) -> str:
    """An SGE_O_* variable under the name 8.1.9 keeps it (``__SGE_PREFIX__O_HOME``)."""
    return "__SGE_PREFIX__" + name[4:] if name.startswith("SGE_O_") else name


def xml_facts(qm: Qmaster, job: Job, figures: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``qstat -j -xml`` shows beyond qstat -j's lines (JB_* elements,
    minisge.output.qstat_out.format_job_details_xml): the raw values 8.1.9
    keeps (bits, codes, epochs), the typed -l requests, the environment with
    the SGE_O_* variables under their ``__SGE_PREFIX__`` names."""
    s = job.spec
    o = s.get("o_env") or {}
    # 8.1.9's order (job_initialize_env): SGE_O_HOME ... SGE_O_MAIL, TERM (a
    # value qsub did not give is unset: no VA_value), SGE_O_HOST, SGE_O_WORKDIR,
    # then the -v/-V variables
    own = dict(s.get("env") or {})
    env: list[list[Any]] = [[_prefixed(k), v] for k, v in o.items() if k not in ("SGE_O_HOST", "SGE_O_WORKDIR")]
    if "TERM" in own:
        env.append(["TERM", own.pop("TERM") or None])
    env += [[_prefixed(k), o[k]] for k in ("SGE_O_HOST", "SGE_O_WORKDIR") if k in o]
    env += [[k, v] for k, v in own.items()]
    restart = s.get("restart")
    binding = core_binding.parse(s.get("binding"))
    job_type = ((0x01 if s.get("now") else 0) | (0x40 if s.get("binary") else 0)
                | (0x80 if job.is_array else 0) | (0x100 if s.get("no_shell") else 0))
    return {
        "hard_requests": _typed_requests(qm, s.get("hard_resources")),
        "soft_requests": _typed_requests(qm, s.get("soft_resources")),
        "env": env,
        "mail_options": sum(_MAIL_BITS.get(c, 0) for c in s.get("mail_options") or ""),
        "restart": 0 if restart is None else (1 if restart in (True, 1, "y") else 2),
        "type": job_type,
        "pe_ranges": [list(r) for r in (s.get("pe") or {}).get("ranges") or ()],
        "ja_tasks": [{"task_number": t.task_id, "start_time": int(t.start_time), "usage": qm.usage_of(job, t),
                      "ntix": float((figures or {}).get("ntckts", 0.0))}
                     for t in sorted(job.tasks.values(), key=lambda t: t.task_id)
                     if t.state not in (ERROR, RESCHEDULING)],
        "nurg": float((figures or {}).get("nurg", 0.0)),
        # JB_binding's BN_* fields (None: no -binding, 8.1.9's no_job_binding element)
        "binding": core_binding.bn_fields(binding) if binding else None,
        # qsub's default recipient is the owner at the submit host; another list came with -M
        # (the request does not say: -M of that very address shows as the default)
        "mail_list_given": list(s.get("mail_list") or ()) != [f"{job.owner}@{o.get('SGE_O_HOST')}"],
    }


def _pe_range_text(spec: dict) -> str | None:
    """A -pe range as qstat -j and -r print it (range_list_print_to_string
    without steps): ``2``, ``1,2`` (two slot counts), ``2-8``, ``1,2,4-8``."""
    pe = spec.get("pe")
    if not pe:
        return None
    return ",".join(str(lo) if lo == hi else f"{lo},{hi}" if lo + 1 == hi else f"{lo}-{hi}"
                    for lo, hi in pe["ranges"])


def _path_list(entries) -> list | None:
    """qsub's -o/-e entries (``{"host", "path"}``) as qstat_out's (host, path) pairs."""
    if not entries:
        return None
    return [(e["host"], e["path"]) if isinstance(e, dict) else e for e in entries]


def detail_dict(job: Job, successors: Collection[int] = (), ad_successors: Collection[int] = (),
                usage: Mapping[int, Mapping[str, float]] | None = None) -> dict[str, Any]:
    """A job for ``qstat -j`` (keys of qstat_out.format_job_detail); the
    jobs that wait for it by -hold_jid and -hold_jid_ad, if any; the
    online ``usage`` of its running tasks by task id (0 until reported)."""
    usage = usage or {}
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
        "execution_time": int(job.execution_time) or None,
        "deadline": int(deadline_time(s.get("deadline"), job.submission_time)) or None,
        "account": s.get("account") or "sge",
        "cwd": s.get("cwd"),
        "reserve": bool(s.get("reserve")) or None,
        "merge": True if s.get("merge") else None,
        "jobshare": int(s.get("job_share") or 0),
        "ar_id": s.get("ar") or None,
        "hard_resource_list": list((s.get("hard_resources") or {}).items()) or None,
        "soft_resource_list": list((s.get("soft_resources") or {}).items()) or None,
        "mail_options": s.get("mail_options") or None,
        "mail_list": s.get("mail_list") or None,
        "notify": bool(s.get("notify")),
        "job_name": job.name,
        "stdout_path_list": _path_list(s.get("stdout_path")),
        "stderr_path_list": _path_list(s.get("stderr_path")),
        "priority": job.priority,
        "hard_queue_list": s.get("hard_queues") or None,
        "soft_queue_list": s.get("soft_queues") or None,
        "restart": s.get("restart"),
        "shell_list": _path_list(s.get("shell")),
        "env_list": list((s.get("env") or {}).items()) or None,
        "job_args": s.get("args") or None,
        "master_hard_queue_list": s.get("master_queues") or None,
        "script_file": s.get("script_path") if not s.get("binary") else s.get("command"),
        "pe": (s.get("pe") or {}).get("name"),
        "pe_range": _pe_range_text(s),
        "jid_predecessor_request": s.get("hold_jid") or None,
        "jid_predecessor_list": job.predecessors or None,
        "jid_successor_list": sorted(successors) or None,
        # 8.1.9 prints no "ja_ad_predecessor_list (req)" line (show_job.c has it #if 0)
        "ja_ad_predecessor_list": job.ad_predecessors or None,
        "ja_ad_successor_list": sorted(ad_successors) or None,
        "project": s.get("project"),
        "array": tuple(s["array"]) if s.get("array") else None,
        "task_concurrency": s.get("tc"),
        "context": list((s.get("context") or {}).items()) or None,
        "stdin_path_list": _path_list(s.get("stdin_path")),
        "binding": binding_text(s.get("binding")),
        # 8.1.9's names of the job_type bits, in its order (qrsh: "binary,immediate")
        "job_type": [n for n, on in (("binary", s.get("binary")), ("immediate", s.get("now"))) if on] or None,
        "tasks": [
            {
                "task_number": t.task_id,
                "running": t.state not in (ERROR, RESCHEDULING),
                "cpu": 0.0,
                "mem": 0.0,
                "io": 0.0,
                **usage.get(t.task_id, {}),
                "messages": [t.error_reason] if t.error_reason else [],
                "resource_map": t.resource_map_text() or None,
            }
            for t in sorted(job.tasks.values(), key=lambda t: t.task_id)
        ],
    }
    return d
