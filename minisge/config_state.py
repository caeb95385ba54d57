"""The configuration the qmaster holds: every object of the spool, parsed.

Loading reads the classic spool with the format modules; a file that does
not parse stops the qmaster with ``FILE:LINE: what is wrong`` (the spool is
the truth, and a guess is worse than a clear stop).  This module also turns
configuration and jobs into what the scheduler and the execd need: the
scheduler's snapshot, the checks a submission must pass, and the start
message of a dispatched task.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping

from minisge import job_order, limits, scheduler
from minisge.formats import access_list, host_conf, hostgroup, project, queue_conf, sched_conf, sge_conf, sge_pe
from minisge.formats import complex as complex_fmt
from minisge.formats.complex import Consumable
from minisge.formats import resource_quota
from minisge.formats.lines import read_attributes
from minisge.job import Job, Task
from minisge.spool import QmasterSpool

CENTRY_FIELDS = ("name", "shortcut", "type", "relop", "requestable", "consumable", "default", "urgency")


class RequestError(Exception):
    """A request refused with Grid Engine's message and exit code."""

    def __init__(self, message: str, rc: int = 1):
        super().__init__(message)
        self.rc = rc


class ComplexIndex:
    """The complex list as the scheduler asks it: by name or shortcut."""

    def __init__(self, clist):
        self.clist = clist
        self._by = {}
        for a in clist.attrs:
            self._by.setdefault(a.shortcut, a)
        for a in clist.attrs:
            self._by[a.name] = a

    def get(self, name: str):
        return self._by.get(name)

    def consumables(self):
        """The consumable attributes (computed once: the scheduler asks per queue instance)."""
        cached = self.__dict__.get("_consumables")
        if cached is None:
            cached = self._consumables = [a for a in self.clist.attrs if a.is_consumable]
        return cached

    def compare(self, name: str, requested: str, offered: str) -> bool:
        return complex_fmt.compare(self._by[name], requested, offered)

    def numeric(self, name: str, text: str) -> float:
        from minisge.formats.sge_types import parse_number

        return parse_number(text)


def centry_text_to_line(text: str, path: str) -> str:
    attrs = read_attributes(text, path, known=CENTRY_FIELDS, required=CENTRY_FIELDS)
    return " ".join(attrs[f].value for f in CENTRY_FIELDS)


def _bad_value_kind(attr, value: str) -> str | None:
    """The type word of Grid Engine's "is not a ... value" when ``value`` does
    not fit ``attr``'s type (8.1.9 says "a integer"), else None."""
    from minisge.formats import sge_types

    t = str(attr.type)
    try:
        if t == "TIME":
            sge_types.parse_time(value)
        elif t == "MEMORY":
            sge_types.parse_memory(value)
        elif t in ("INT", "DOUBLE"):
            sge_types.parse_number(value)
        elif t == "BOOL":
            if value.lower() not in ("true", "false", "1", "0", "t", "f", "yes", "no", "y", "n"):
                return "boolean"
    except sge_types.SpecifierError:
        return {"TIME": "time", "MEMORY": "memory", "INT": "integer", "DOUBLE": "double"}[t]
    return None


class ConfigState:
    def __init__(self, spool: QmasterSpool, host: str):
        self.spool = spool
        self.host = host
        self.cqueues: dict[str, queue_conf.QueueConf] = {}
        self.pes: dict[str, sge_pe.ParallelEnvironment] = {}
        self.exec_hosts: dict[str, host_conf.ExecHost] = {}
        self.hostgroups: dict[str, hostgroup.HostGroup] = {}
        self.usersets: dict[str, access_list.AccessList] = {}
        self.projects: dict[str, project.Project] = {}
        self.rqs: dict[str, object] = {}
        self.complexes = None
        self.global_conf = None
        self.sched_conf = None
        self.managers: list[str] = []
        self.operators: list[str] = []
        self.submit_hosts: list[str] = []
        self.admin_hosts: list[str] = []
        self.qi_states: dict[str, str] = {}  # qinstance -> extra state letters (E, d)
        self.qi_messages: dict[str, list[str]] = {}
        self.load_values: dict[str, dict[str, str]] = {}
        self.cell_owner_only = os.getuid() != 0

    # ------------------------------------------------------------ loading
    def load(self) -> None:
        sp = self.spool
        self.cqueues = {n: queue_conf.parse(t, p) for n, (p, t) in sp.load_objects("cqueues").items()}
        self.pes = {n: sge_pe.parse(t, p) for n, (p, t) in sp.load_objects("pe").items()}
        self.exec_hosts = {n: host_conf.parse(t, p) for n, (p, t) in sp.load_objects("exec_hosts").items()}
        self.hostgroups = {n: hostgroup.parse(t, p) for n, (p, t) in sp.load_objects("hostgroups").items()}
        self.usersets = {n: access_list.parse(t, p) for n, (p, t) in sp.load_objects("usersets").items()}
        self.projects = {n: project.parse(t, p) for n, (p, t) in sp.load_objects("projects").items()}
        self.rqs = {n: resource_quota.parse(t, p) for n, (p, t) in sp.load_objects("resource_quotas").items()}
        lines = [centry_text_to_line(t, p) for n, (p, t) in sp.load_objects("centry").items()]
        self.complexes = complex_fmt.parse("\n".join(lines) + "\n", os.path.join(sp.dir, "centry"))
        p, t = sp.read_common("configuration")
        self.global_conf = sge_conf.parse(t, p, name="global")
        p, t = sp.read_common("sched_configuration")
        self.sched_conf = sched_conf.parse(t, p)
        self.managers = sp.read_list("managers")
        self.operators = sp.read_list("operators")
        self.submit_hosts = sorted(os.listdir(os.path.join(sp.dir, "submit_hosts")))
        self.admin_hosts = sorted(os.listdir(os.path.join(sp.dir, "admin_hosts")))
        self.load_qi_states()

    def register_execd(self, host: str) -> None:
        if host not in self.exec_hosts:
            self.exec_hosts[host] = host_conf.template(host)
            self.spool.write_object("exec_hosts", host, host_conf.write(self.exec_hosts[host]))

    # ------------------------------------------------------------ derived
    @property
    def forbid_reschedule(self) -> bool:
        return bool(self.global_conf.forbid_reschedule)

    @property
    def forbid_apperror(self) -> bool:
        return bool(self.global_conf.forbid_apperror)

    def _config_key(self) -> tuple:
        """Changes whenever a queue, host group or exec host is replaced
        (the models are immutable: qconf replaces them), for the caches below."""
        return (
            tuple(map(id, self.cqueues.values())), tuple(self.cqueues),
            tuple(map(id, self.hostgroups.values())), tuple(self.hostgroups),
            tuple(map(id, self.exec_hosts.values())), tuple(self.exec_hosts),
        )

    def group_members(self) -> dict[str, frozenset]:
        key = (tuple(map(id, self.hostgroups.values())), tuple(self.hostgroups))
        cached = getattr(self, "_groups_cache", None)
        if cached is None or cached[0] != key:
            groups = {n: hostgroup.resolve(self.hostgroups, n) for n in self.hostgroups}
            self._groups_cache = cached = (key, groups)
        return cached[1]

    def queue_instances(self) -> list[tuple[queue_conf.QueueConf, str]]:
        groups = self.group_members()
        out = []
        for name in sorted(self.cqueues):
            conf = self.cqueues[name]
            try:
                hosts = queue_conf.hosts_of(conf, groups)
            except KeyError:
                hosts = ()
            for h in hosts:
                out.append((conf, h))
        return out

    def qvalue(self, conf, attr: str, host: str) -> str:
        return queue_conf.value_for(conf, attr, host, self.group_members(), strict=False)

    # ------------------------------------------------------------ submission checks
    @property
    def complex_index(self) -> ComplexIndex:
        if getattr(self, "_cx_for", None) is not self.complexes:
            self._cx = ComplexIndex(self.complexes)
            self._cx_for = self.complexes
        return self._cx

    def check_request(self, req: dict) -> None:
        """What the qmaster refuses at submission, with Grid Engine's messages."""
        cx = self.complex_index
        if req.get("master_queues") and not req.get("pe"):
            raise RequestError("Unable to run job: job rejected: specification of master queue is not allowed "
                               "for non-parallel jobs\nExiting.")
        for kind in ("hard_resources", "soft_resources"):
            for name in (req.get(kind) or {}):
                attr = cx.get(name)
                if attr is None:
                    raise RequestError(f'Unable to run job: unknown resource "{name}"\nExiting.')
                if attr.requestable == "NO":
                    # 8.1.9 names the resource as the job wrote it (a shortcut stays a shortcut)
                    raise RequestError(f'Unable to run job: resource "{name}" configured as non requestable\nExiting.')
                what = _bad_value_kind(attr, (req.get(kind) or {})[name])
                if what:
                    raise RequestError(f'Unable to run job: attribute "{attr.name}" is not a {what} value\nExiting.')
        pe = req.get("pe")
        if pe:
            import fnmatch

            if not any(fnmatch.fnmatchcase(n, pe["name"]) for n in self.pes):
                raise RequestError(
                    f'Unable to run job: job rejected: the requested parallel environment "{pe["name"]}" does not exist\nExiting.'
                )
        prj = req.get("project")
        if prj and prj not in self.projects:
            raise RequestError(f'Unable to run job: job rejected: the requested project "{prj}" does not exist\nExiting.')
        for q in req.get("hard_queues") or []:
            if not self._queue_pattern_exists(q):
                raise RequestError(
                    f'Unable to run job: Job was rejected because job requests unknown queue "{q}"\nExiting.'
                )

    def check_submitter(self, user: str, group: str, req: dict) -> None:
        """sge_conf(5) user_lists/xuser_lists of the global configuration: who
        may use the cluster at all; Grid Engine refuses the others at submission."""
        gconf = self.global_conf
        if not access_list.has_access(user, (group,), gconf.user_lists, gconf.xuser_lists, self.usersets):
            host = (req.get("o_env") or {}).get("SGE_O_HOST") or self.host
            raise RequestError(f"Unable to run job: job rejected: {user}@{host} is not allowed to submit jobs\nExiting.")
        if req.get("deadline") and not self.is_deadline_user(user):
            raise RequestError(f'Unable to run job: job rejected: the user "{user}" is not a deadline initiation user'
                               "\nExiting.")

    def is_deadline_user(self, user: str) -> bool:
        """sge_priority(5), qsub(1) -dl: only the users named in the access
        list ``deadlineusers`` may submit deadline jobs (by user name: Grid
        Engine's userset_is_deadline_user looks at no @group entry)."""
        acl = self.usersets.get("deadlineusers")
        return acl is not None and user in acl.entries

    def _queue_pattern_exists(self, pattern: str) -> bool:
        import fnmatch

        qp = pattern.split("@", 1)[0] or "*"
        return any(fnmatch.fnmatchcase(n, qp) for n in self.cqueues)

    # ------------------------------------------------------------ scheduler snapshot
    def snapshot(self, jobs: Mapping[int, Job], execds, now: float = 0.0) -> scheduler.Snapshot:
        """The scheduler's view of the cell at ``now`` (the time of the pass,
        for waiting times and deadlines: the scheduler reads no clock)."""
        used: dict[str, int] = {}
        pe_used: dict[str, int] = {}
        for job in jobs.values():
            for t in job.tasks.values():
                for g in t.granted:
                    used[g.qinstance] = used.get(g.qinstance, 0) + g.slots
                if t.granted_pe:
                    pe_used[t.granted_pe] = pe_used.get(t.granted_pe, 0) + t.slots
        qi_booked, host_booked, global_booked = self.booked_consumables(jobs)
        qis = []
        for static in self._static_qinstances():
            name = static.name
            states = self.qi_states.get(name, "")
            if static.host not in execds:
                states += "u"
            qis.append(dataclasses.replace(static, used=used.get(name, 0), states=states,
                                           consumed=qi_booked.get(name, {})))
        hosts = {}
        for h, eh in self.exec_hosts.items():
            if h == "global":
                continue
            hosts[h] = scheduler.HostInfo(name=h, load=self.load_values.get(h, {}), values=dict(eh.complex_values),
                                          consumed=host_booked.get(h, {}))
        pes = {
            n: scheduler.PE(n, pe.slots, pe_used.get(n, 0), pe.allocation_rule, tuple(pe.user_lists),
                            tuple(pe.xuser_lists), pe.job_is_first_task, pe.urgency_slots)
            for n, pe in self.pes.items()
        }
        # No pass can start more tasks of one job than there are free slots
        # (nor more than its -tc allows): only that many of a job's pending
        # tasks enter the snapshot, so a 100,000-task array costs little.
        free = sum(max(0, q.slots - q.used) for q in qis if not q.states)
        pending = []
        others = []  # jobs considered for the urgency range with no task in ``pending``
        for job in jobs.values():
            if job.held:
                continue
            spec = job.spec
            cap = free if job.pending else 0
            if cap and spec.get("tc"):
                cap = min(cap, max(0, int(spec["tc"]) - len(job.tasks)))
            if not cap:
                others.append(job_order.job_facts(job, now))
                continue
            pe = spec.get("pe")
            requests = dict(spec.get("hard_resources") or {})
            queues = tuple(spec.get("hard_queues") or ())
            pe = (pe["name"], tuple(job.pe_ranges)) if pe else None
            project = spec.get("project") or None
            deadline = job_order.deadline_time(spec.get("deadline"), now)
            soft_requests = dict(spec.get("soft_resources") or {})
            soft_queues = tuple(spec.get("soft_queues") or ())
            master_queues = tuple(spec.get("master_queues") or ())
            # scheduler.pending_tasks: PendingTask(task_id=tid, **fields) for each tid, made fast
            pending += scheduler.pending_tasks(dict(
                job_id=job.number, owner=job.owner, priority=job.priority, requests=requests,
                queues=queues, pe=pe, group=job.group, project=project,
                soft_requests=soft_requests, soft_queues=soft_queues, master_queues=master_queues,
                submission_time=job.submission_time, deadline=deadline), job.pending[:cap])
        g = self.exec_hosts.get("global")
        return scheduler.Snapshot(
            qinstances=tuple(qis),
            hosts=hosts,
            pending=tuple(pending),
            complexes=self.complex_index,
            pes=pes,
            global_values=dict(g.complex_values) if g else {},
            global_consumed=global_booked,
            queue_sort_method=self.sched_conf.queue_sort_method,
            load_of=self._load_of(),
            acls=self.usersets,
            quotas=self.quota_context(jobs) if any(r.enabled for r in self.rqs.values()) else None,
            now=now,
            weights=job_order.Weights.from_sched_conf(self.sched_conf),
            running=tuple(others),
        )

    def booked_consumables(self, jobs: Mapping[int, Job]) -> tuple[dict, dict, dict]:
        """complex(5) "the internal bookkeeping will subtract from this total
        the assumed resource consumption by all running jobs": what the tasks
        that hold queue instances book, per queue instance, host and globally
        (per-slot requests times the slots, JOB requests in the master queue,
        complex defaults for the consumables not requested)."""
        cx = self.complex_index
        per_qi: dict[str, dict] = {}
        per_host: dict[str, dict] = {}
        per_cell: dict[str, float] = {}
        for job in jobs.values():
            requests = dict(job.spec.get("hard_resources") or {})
            for t in job.tasks.values():
                for i, g in enumerate(t.granted):
                    levels = (per_qi.setdefault(g.qinstance, {}), per_host.setdefault(g.host, {}), per_cell)
                    scheduler.debit(cx, requests, g.slots, i == 0, levels)
        return per_qi, per_host, per_cell

    def quota_context(self, jobs: Mapping[int, Job]):
        """What resource quota evaluation needs (minisge.quota.QuotaContext):
        the sets, access lists, host groups, the numbers ``$complex`` in a
        dynamic limit reads on each host (load, host and global complex
        values), and the queue instances every running task holds."""
        from minisge import quota
        from minisge.formats.sge_types import SpecifierError, parse_number

        def numbers(*layers) -> dict[str, float]:
            out: dict[str, float] = {}
            for layer in layers:
                for k, v in layer.items():
                    try:
                        out[k] = parse_number(str(v))
                    except SpecifierError:
                        pass
            return out

        g = self.exec_hosts.get("global")
        gvalues = dict(g.complex_values) if g else {}
        host_values = {
            h: numbers(gvalues, dict(eh.complex_values), self.load_values.get(h, {}))
            for h, eh in self.exec_hosts.items() if h != "global"
        }
        running = []
        for job in jobs.values():
            requests = dict(job.spec.get("hard_resources") or {})
            for t in job.tasks.values():
                for i, gr in enumerate(t.granted):
                    running.append(quota.QuotaRequest(
                        user=job.owner, project=job.spec.get("project") or None,
                        pe=t.granted_pe or None, cqueue=gr.cqueue, host=gr.host, slots=gr.slots,
                        requests=requests, master=i == 0, group=job.group or None,
                    ))
        return quota.QuotaContext(
            sets=tuple(self.rqs[n] for n in sorted(self.rqs)),
            complexes=self.complex_index,
            acls={n: tuple(a.entries) for n, a in self.usersets.items()},
            hostgroups={n: tuple(sorted(m)) for n, m in self.group_members().items()},
            host_values=host_values,
            running=tuple(running),
        )

    def _load_of(self):
        """sched_conf(5): with ``queue_sort_method load`` queue instances are
        ordered by the ``load_formula`` of their host's load values (a host
        that reported no value of the formula sorts last, as 9999)."""
        from minisge.formats import sched_conf as sc
        from minisge.formats.sge_types import SpecifierError, parse_number

        formula = self.sched_conf.load_formula

        def load_of(host: scheduler.HostInfo) -> float:
            values = {}
            for k, v in host.load.items():
                try:
                    values[k] = parse_number(v)
                except SpecifierError:
                    pass
            try:
                return sc.evaluate_load_formula(formula, values)
            except SpecifierError:
                return sc.ERROR_LOAD_VAL

        return load_of

    def _static_qinstances(self) -> list[scheduler.QInstance]:
        """The configured part of every queue instance, cached until the
        configuration changes (the scheduler pass runs on every event)."""
        key = self._config_key()
        cached = getattr(self, "_qi_cache", None)
        if cached is not None and cached[0] == key:
            return cached[1]
        out = []
        for conf, host in self.queue_instances():
            complex_values = dict(queue_conf.decode("complex_values", self.qvalue(conf, "complex_values", host)))
            values = dict(complex_values)
            values["qname"] = conf.qname
            values["hostname"] = host
            values["seq_no"] = self.qvalue(conf, "seq_no", host)
            for lim in ("h_rt", "s_rt", "h_cpu", "s_cpu", "h_vmem", "s_vmem", "h_fsize", "s_fsize",
                        "h_data", "s_data", "h_stack", "s_stack", "h_core", "s_core", "h_rss", "s_rss"):
                # a consumable limit in complex_values is booked there, the limit stays a limit
                values.setdefault(lim, self.qvalue(conf, lim, host))
            out.append(
                scheduler.QInstance(
                    cqueue=conf.qname,
                    host=host,
                    seq_no=int(self.qvalue(conf, "seq_no", host)),
                    slots=int(self.qvalue(conf, "slots", host)),
                    used=0,
                    qtype=frozenset(queue_conf.decode("qtype", self.qvalue(conf, "qtype", host))),
                    pe_list=tuple(queue_conf.decode("pe_list", self.qvalue(conf, "pe_list", host))),
                    **{attr: tuple(queue_conf.decode(attr, self.qvalue(conf, attr, host)))
                       for attr in ("user_lists", "xuser_lists", "projects", "xprojects")},
                    values=values,
                    complex_names=frozenset(complex_values),
                )
            )
        self._qi_cache = (key, out)
        return out

    # ------------------------------------------------------------ dispatch
    def start_message(self, job: Job, task: Task, script_path: str) -> dict:
        m = task.master
        conf = self.cqueues[m.cqueue]
        spec = job.spec
        h_rt = self.qvalue(conf, "h_rt", m.host)
        from minisge.formats.sge_types import parse_time

        limit = parse_time(h_rt)
        req_rt = (spec.get("hard_resources") or {}).get("h_rt")
        if req_rt:
            limit = min(limit, parse_time(req_rt))
        hostfile = self.pe_hostfile(task)
        return {
            "op": "start",
            "job_id": job.number,
            "task_id": task.task_id,
            "owner": job.owner,
            "uid": job.uid,
            "gid": job.gid,
            "spec": spec,
            "queue": m.cqueue,
            "slots": task.slots - self.master_task_slot(task),
            "nhosts": len({g.host for g in task.granted}),
            "nqueues": len(task.granted),
            "pe": task.granted_pe or None,
            "pe_hostfile": hostfile if task.granted_pe else None,
            "queue_shell": self.qvalue(conf, "shell", m.host),
            "shell_start_mode": self.qvalue(conf, "shell_start_mode", m.host),
            "tmpdir": self.qvalue(conf, "tmpdir", m.host),
            "script_file": script_path,
            "restarted": task.restarted,
            "h_rt": None if limit == float("inf") else limit,
            **self.task_limits(job, task),
            "processors": self.qvalue(conf, "processors", m.host),
            "procedures": self.procedures(conf, m.host, task.granted_pe),
            "forbid_reschedule": self.forbid_reschedule,
            "forbid_apperror": self.forbid_apperror,
            # queue_conf(5) starter_method and priority (the job's nice value); sge_conf(5) login_shells
            "starter_method": self.qvalue(conf, "starter_method", m.host),
            "priority": self.qvalue(conf, "priority", m.host),
            "login_shells": list(self.global_conf.login_shells),
        }

    def task_limits(self, job: Job, task: Task) -> dict:
        """What the execd needs of a task's resource limits (queue_conf(5)
        RESOURCE LIMITS, :mod:`minisge.limits`): ``limits``, the master
        queue's values lowered by the job's hard ``-l`` requests; ``host_slots``,
        the slots the task holds on the master host, which the per-slot
        limits are multiplied by; ``consumable_job``, the requested limits
        that are consumables of type JOB, which are not."""
        m = task.master
        conf = self.cqueues[m.cqueue]
        cx = self.complex_index
        requests = {}
        for name, value in (job.spec.get("hard_resources") or {}).items():
            attr = cx.get(name)
            requests[attr.name if attr is not None else name] = value
        queue_values = {n: self.qvalue(conf, n, m.host) for n in limits.LIMIT_NAMES}
        task_limits = limits.job_limits(queue_values, requests)
        if "s_rt" in task_limits:
            task_limits[limits.S_RT_NOTIFY] = limits.value_of(self.qvalue(conf, "notify", m.host))
        return {
            "limits": task_limits,
            "host_slots": sum(g.slots for g in task.granted if g.host == m.host) or 1,
            "consumable_job": sorted(n for n in requests if n in limits.LIMIT_NAMES and cx.get(n) is not None
                                     and cx.get(n).consumable is Consumable.JOB),
        }

    def procedures(self, conf, host: str, pe_name: str | None) -> dict:
        """The prolog, epilog and PE procedures of a task: ``{step: {"command",
        "user"}}`` for those configured.  queue_conf(5): the queue's prolog
        and epilog override the execution host's local configuration, which
        overrides the global one (sge_conf(5)); sge_pe(5) start_proc_args and
        stop_proc_args of the granted PE."""
        out: dict = {}
        for step in ("prolog", "epilog"):
            method = sge_conf.parse_method(self.qvalue(conf, step, host))
            if method is None:
                for layer in (self.host_conf_of(host), self.global_conf):
                    method = getattr(layer, step, None) if layer is not None else None
                    if method is not None:
                        break
            if method is not None:
                out[step] = {"command": method.command, "user": method.user}
        pe = self.pes.get(pe_name) if pe_name else None
        if pe is not None:
            for step, args in (("pe_start", pe.start_proc_args), ("pe_stop", pe.stop_proc_args)):
                if args is not None:
                    out[step] = {"command": args.command, "user": args.user}
        return out

    def host_conf_of(self, host: str):
        """The host-local configuration (sge_conf(5), ``common/local_conf/<host>``
        as qconf -mconf writes it) of ``host``, or None."""
        path = os.path.join(self.spool.cell.common, "local_conf", host)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
        from minisge.spool import strip_header

        return sge_conf.parse(strip_header(text), path, name=host)

    def master_task_slot(self, task: Task) -> int:
        """sge_pe(5) job_is_first_task FALSE: the job script is no parallel
        task, and the scheduler reserved one more slot in the master queue
        for it; 1 then, else 0."""
        pe = self.pes.get(task.granted_pe) if task.granted_pe else None
        return 1 if pe is not None and not pe.job_is_first_task else 0

    def pe_hostfile(self, task: Task) -> str:
        """sge_pe(5) $pe_hostfile: a line per granted queue instance, master
        first: ``host slots queue@host UNDEFINED``; the slots are the parallel
        tasks' (the master task's extra slot is not one), so they add up to NSLOTS."""
        extra = self.master_task_slot(task)
        lines = []
        for i, g in enumerate(task.granted):
            n = g.slots - (extra if i == 0 else 0)
            if n > 0:
                lines.append(f"{g.host} {n} {g.qinstance} UNDEFINED\n")
        return "".join(lines)

    def set_queue_error(self, qinstance: str, reason: str) -> None:
        self.add_qi_state(qinstance, "E")
        self.qi_messages.setdefault(qinstance, []).append(reason)
        self.save_qi_states()

    # ------------------------------------------------------------ queue instance states
    def match_qinstances(self, pattern: str) -> list[str]:
        """Queue instances named by ``cq``, ``cq@host``, ``*@host`` or wildcards."""
        import fnmatch

        qp, _, hp = pattern.partition("@")
        out = []
        for conf, host in self.queue_instances():
            if fnmatch.fnmatchcase(conf.qname, qp or "*") and fnmatch.fnmatchcase(host, hp or "*"):
                out.append(f"{conf.qname}@{host}")
        return out

    def owners_of(self, qinstance: str) -> tuple[str, ...]:
        cq, _, host = qinstance.partition("@")
        conf = self.cqueues.get(cq)
        if conf is None:
            return ()
        return tuple(queue_conf.decode("owner_list", self.qvalue(conf, "owner_list", host)))

    def add_qi_state(self, qi: str, letter: str) -> None:
        if letter not in self.qi_states.get(qi, ""):
            self.qi_states[qi] = self.qi_states.get(qi, "") + letter
        self.save_qi_states()

    def remove_qi_state(self, qi: str, letter: str) -> None:
        self.qi_states[qi] = self.qi_states.get(qi, "").replace(letter, "")
        if not self.qi_states[qi]:
            del self.qi_states[qi]
        self.save_qi_states()

    def save_qi_states(self) -> None:
        import json

        from minisge.spool import atomic_write

        atomic_write(os.path.join(self.spool.dir, "qinstance_states"),
                     json.dumps({"states": self.qi_states, "messages": self.qi_messages}, indent=1, sort_keys=True))

    def load_qi_states(self) -> None:
        import json

        try:
            with open(os.path.join(self.spool.dir, "qinstance_states"), encoding="utf-8") as f:
                data = json.load(f)
            self.qi_states = dict(data.get("states", {}))
            self.qi_messages = {k: list(v) for k, v in data.get("messages", {}).items()}
        except FileNotFoundError:
            pass
