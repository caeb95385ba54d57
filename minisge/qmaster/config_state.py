"""The configuration the qmaster holds: every object of the spool, parsed.

Loading reads the classic spool with the format modules; a file that does
not parse stops the qmaster with ``FILE:LINE: what is wrong`` (the spool is
the truth, and a guess is worse than a clear stop).  This module also turns
configuration and jobs into what the scheduler and the execd need: the
scheduler's snapshot, the checks a submission must pass, and the start
message of a dispatched task.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import logging
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from minisge import scheduler
from minisge.formats import (
    access_list,
    host_conf,
    hostgroup,
    project,
    queue_conf,
    resource_quota,
    rsmap,
    sched_conf,
    sge_conf,
    sge_pe,
    sge_types,
    user,
    wc_queue,
)
from minisge.formats import complex as complex_fmt
from minisge.formats.complex import Consumable
from minisge.formats.errors import FormatError
from minisge.formats.lines import SPOOL_HEADER, read_attributes, strip_header
from minisge.formats.sge_types import SpecifierError, parse_number, parse_time
from minisge.qmaster import accounting_writer, submit_checks
from minisge.qmaster.job import Grant, Job, Task
from minisge.qmaster.running_jobs import CountedSums, RunningJob, RunningJobs
from minisge.qmaster.spool import QmasterSpool, SpoolError, atomic_write, list_text, parse_list
from minisge.rules import limits
from minisge.rules.initial_state import appeared, apply_initial_state, vanished
from minisge.scheduler import advance_reservation, job_order, quota
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.load_scaling import scaled_load

log = logging.getLogger("minisge.qmaster")

CENTRY_FIELDS = ("name", "shortcut", "type", "relop", "requestable", "consumable", "default", "urgency")
# queue_conf(5) initial_state: the kinds whose change can add or remove queue instances
QINSTANCE_KINDS = ("cqueues", "hostgroups")
#: the load_formula values kept between passes (:meth:`ConfigState._load_of`): a few for each host
MAX_FORMULA_VALUES = 1024


class RequestError(Exception):
    """A request refused with Grid Engine's message and exit code."""

    def __init__(self, message: str, rc: int = 1):
        super().__init__(message)
        self.rc = rc


def granted_master(task: Task) -> Grant:
    """The master queue instance of a dispatched task (its first grant)."""
    m = task.master
    if m is None:
        raise ValueError(f"task {task.task_id} holds no queue instance")
    return m


def _consumable_kind(attr: complex_fmt.ComplexAttr | None) -> Consumable | None:
    return attr.consumable if attr is not None else None


def centry_text_to_line(text: str, path: str) -> str:
    attrs = read_attributes(text, path, known=CENTRY_FIELDS, required=CENTRY_FIELDS)
    return " ".join(attrs[f].value for f in CENTRY_FIELDS)


def complex_list(lines: list[str], path: str) -> complex_fmt.ComplexList:
    """The complex list of the centry files' lines (one attribute each)."""
    return complex_fmt.parse("\n".join(lines) + "\n", path)


#: how load() reads each kind of configuration object (its spool directory → parser)
OBJECT_PARSERS: dict[str, Callable[[str, str], Any]] = {
    "cqueues": queue_conf.parse, "pe": sge_pe.parse, "exec_hosts": host_conf.parse,
    "hostgroups": hostgroup.parse, "usersets": access_list.parse, "projects": project.parse,
    "resource_quotas": resource_quota.parse, "centry": centry_text_to_line, "users": user.parse,
}


def _bad_value_kind(attr: complex_fmt.ComplexAttr, value: str) -> str | None:
    """The type word of Grid Engine's "is not a ... value" when ``value`` does
    not fit ``attr``'s type (8.1.9 says "a integer"), else None."""
    t = str(attr.type)
    try:
        if t == "TIME":
            sge_types.parse_time(value)
        elif t == "MEMORY":
            sge_types.parse_memory(value)
        elif t in ("INT", "DOUBLE", "RSMAP"):  # sge_rsmap(5): a request asks for a number of instances
            sge_types.parse_number(value)
        elif t == "BOOL":
            if value.lower() not in ("true", "false", "1", "0", "t", "f", "yes", "no", "y", "n"):
                return "boolean"
    except sge_types.SpecifierError:
        return {"TIME": "time", "MEMORY": "memory", "INT": "integer", "DOUBLE": "double", "RSMAP": "integer"}[t]
    return None


def _host_values_names(hv: queue_conf.HostValues) -> tuple[str, ...]:
    """The names a name-list attribute of a cluster queue gives any host (NONE: none)."""
    return tuple(n for text in (hv.default, *(v for _, v in hv.overrides))
                 for n in text.replace(",", " ").split() if n != "NONE")


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
        self.users: dict[str, user.User] = {}  # user objects (qconf -Auser), with their share tree usage
        self.rqs: dict[str, resource_quota.ResourceQuotaSet] = {}
        self.complexes: complex_fmt.ComplexList = complex_fmt.ComplexList(())
        self.global_conf: sge_conf.Configuration = sge_conf.Configuration()
        # the global configuration's user_lists and xuser_lists, as of that configuration (check_submitter)
        self.submitter_lists: tuple[sge_conf.Configuration | None, tuple[str, ...], tuple[str, ...]] = (None, (), ())
        self.sched_conf: sched_conf.SchedConf = sched_conf.SchedConf()
        self.managers: list[str] = []
        self.operators: list[str] = []
        self.submit_hosts: list[str] = []
        self.admin_hosts: list[str] = []
        self.qi_states: dict[str, str] = {}  # qinstance -> extra state letters (E, d)
        self.qi_messages: dict[str, list[str]] = {}
        self.qi_states_unsaved = False  # the file is behind (a full spool): the backlog writes it
        self.load_values: dict[str, dict[str, str]] = {}  # host -> its last load report
        self.cell_owner_only = os.getuid() != 0
        # caches of what the configuration derives, keyed by what they derive from
        self._groups_cache: tuple[tuple[Any, ...], dict[str, frozenset[str]]] | None = None
        self._cx: ComplexIndex | None = None
        self._cx_for: complex_fmt.ComplexList | None = None
        self._qi_cache: tuple[tuple[Any, ...], list[scheduler.QInstance]] | None = None
        self._host_cache: tuple[tuple[Any, ...], dict[str, scheduler.HostInfo]] | None = None
        self._references_cache: tuple[tuple[Any, ...], tuple[list[str], bool]] | None = None
        self._start_facts: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # start_facts: the last one
        self._flags: tuple[sge_conf.Configuration, tuple[bool, bool, bool]] | None = None  # _global_flags: the last
        # _load_of: a host's load_formula value by the formula and the load values it was computed from
        self._formula_values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self.running_jobs = RunningJobs(job_duration)  # what the passes count of each job

    # ------------------------------------------------------------ loading
    def load(self) -> None:
        """Read the whole configuration; a file that does not load stops the
        qmaster with a FormatError ``FILE:LINE: what is wrong``."""
        sp = self.spool
        objects = {kind: {n: parse(t, p) for n, (p, t) in sp.load_objects(kind).items()}
                   for kind, parse in OBJECT_PARSERS.items()}
        self.cqueues = objects["cqueues"]
        self.pes = objects["pe"]
        self.exec_hosts = objects["exec_hosts"]
        self.hostgroups = objects["hostgroups"]
        self.usersets = objects["usersets"]
        self.projects = objects["projects"]
        self.users = objects["users"]
        self.rqs = objects["resource_quotas"]
        self.complexes = complex_list(list(objects["centry"].values()), os.path.join(sp.dir, "centry"))
        p, t = sp.read_common("configuration")
        self.global_conf = self.parse_common("configuration", t, p)
        self.name_without_effect(self.global_conf)
        p, t = sp.read_common("sched_configuration")
        self.sched_conf = self.parse_common("sched_configuration", t, p)
        self.managers = sp.read_list("managers")
        self.operators = sp.read_list("operators")
        self.submit_hosts = sorted(os.listdir(os.path.join(sp.dir, "submit_hosts")))
        self.admin_hosts = sorted(os.listdir(os.path.join(sp.dir, "admin_hosts")))
        self.load_qi_states()

    # ------------------------------------------------------------ checks before a change is written
    # Every configuration change is read back, before it is written, by the code
    # load() reads the spool with: what a qconf writes, the next start reads.
    def check_object(self, kind: str, name: str, text: str) -> Any:
        """The model load() makes of spool file ``kind/name`` holding ``text``
        (as written, with the spool header); FormatError if it would not load."""
        try:
            path = self.spool.object_path(kind, name)
        except ValueError as e:
            raise FormatError(str(e)) from None
        return OBJECT_PARSERS[kind](SPOOL_HEADER + text, path)

    def check_complexes(self, texts: Mapping[str, str]) -> complex_fmt.ComplexList:
        """The complex list load() makes of the centry files ``name → text``."""
        lines = [self.check_object("centry", n, t) for n, t in texts.items()]
        return complex_list(lines, os.path.join(self.spool.dir, "centry"))

    def parse_common(self, name: str, text: str, path: str | None = None) -> Any:
        """``common/configuration``, ``common/sched_configuration`` or
        ``common/local_conf/HOST`` (``name`` ``local_conf/HOST``) as load() and
        the dispatch read them."""
        path = path or self.spool.cell.common_file(name)
        if name == "sched_configuration":
            return sched_conf.parse(text, path)
        if name == "configuration":
            return sge_conf.parse(text, path, name="global")
        kind, _, host = name.partition("/")
        if kind != "local_conf" or not host or "/" in host or host in (".", ".."):
            raise FormatError(f"no configuration {name!r}", path)
        return sge_conf.parse(strip_header(text), path, name=host)

    @staticmethod
    def name_without_effect(conf: sge_conf.Configuration) -> None:
        """Say in the messages file which attributes of ``conf`` minisge keeps
        without acting on them (at start and at each change)."""
        for name, value in sge_conf.without_effect(conf):
            log.warning("configuration %s: %s %s is kept without effect by minisge (sge_conf(5))",
                        conf.name, name, value)

    @staticmethod
    def check_names(names: list[str]) -> str | None:
        """A name of ``managers``/``operators`` that would not read back as
        itself from the list's file (white space, a comment), else None."""
        if parse_list(list_text(names)) == names:
            return None
        return next((n for n in names if parse_list(list_text([n])) != [n]), names[0] if names else "")

    def register_execd(self, host: str) -> bool:
        """An execd of ``host`` registered: an execution host from now on.
        Whether it is a new one."""
        if host in self.exec_hosts:
            return False
        self.exec_hosts[host] = host_conf.template(host)
        try:
            self.spool.write_object("exec_hosts", host, host_conf.write(self.exec_hosts[host]))
        except SpoolError as err:  # the host's template: written again at its next registration
            log.error("cannot write the execution host %s: %s", host, err)
        return True

    def join_hostgroup(self, name: str, host: str) -> bool:
        """Add ``host`` to host group ``name`` (spooled first, as ``qconf
        -aattr hostgroup hostlist HOST NAME``); whether it was added (not if
        the group is missing or already holds it, or the spool refused)."""
        group = self.hostgroups.get(name)
        if group is None or host in group.hostlist:
            return False
        joined = hostgroup.HostGroup(name, (*group.hostlist, host))
        try:
            self.spool.write_object("hostgroups", name, hostgroup.write(joined))
        except SpoolError as err:
            log.error("cannot add %s to host group %s: %s", host, name, err)
            return False
        self.put_object("hostgroups", name, joined)
        return True

    def in_a_queue(self, host: str) -> bool:
        """Whether some cluster queue's hostlist holds ``host``."""
        return any(h == host for _, h in self.queue_instances())

    def set_load_values(self, host: str, values: dict[str, str]) -> None:
        """The load values ``host``'s execd reported last (checked by
        :meth:`minisge.qmaster.load_control.LoadControl.store_report`)."""
        self.load_values[host] = values

    def scaled_load(self, host: str) -> Mapping[str, str]:
        """``host``'s load values scaled by its host_conf(5) ``load_scaling``:
        what thresholds, the load sort, ``-l`` and ``qstat -f``/``-F`` see."""
        load = self.load_values.get(host, {})
        eh = self.exec_hosts.get(host)
        if eh is None or not eh.load_scaling:
            return load
        return scaled_load(load, dict(eh.load_scaling), self.complex_index)

    def scaled_loads(self) -> dict[str, Mapping[str, str]]:
        """:meth:`scaled_load` of every host that reported."""
        return {h: self.scaled_load(h) for h in self.load_values}

    # ------------------------------------------------------------ objects by kind (qconf)
    def objects(self, store: str) -> Mapping[str, Any]:
        """The objects of one kind by name: ``store`` is ``cqueues``, ``pes``,
        ``exec_hosts``, ``hostgroups``, ``usersets``, ``projects`` or ``rqs``."""
        tables: dict[str, Mapping[str, Any]] = {
            "cqueues": self.cqueues, "pes": self.pes, "exec_hosts": self.exec_hosts,
            "hostgroups": self.hostgroups, "usersets": self.usersets, "projects": self.projects,
            "rqs": self.rqs, "users": self.users,
        }
        return tables[store]

    def _replace_objects(self, store: str, table: dict[str, Any]) -> None:
        # the models are immutable and each table is replaced whole, so the caches
        # keyed by config_key() see every change
        match store:
            case "cqueues":
                self.cqueues = table
            case "pes":
                self.pes = table
            case "exec_hosts":
                self.exec_hosts = table
            case "hostgroups":
                self.hostgroups = table
            case "usersets":
                self.usersets = table
            case "projects":
                self.projects = table
            case "rqs":
                self.rqs = table
            case "users":
                self.users = table
            case _:
                raise KeyError(store)

    def put_object(self, store: str, name: str, model: Any) -> None:
        """Add or replace object ``name`` (already spooled); a new queue
        instance gets its queue_conf(5) initial_state."""
        before = self.qinstance_names() if store in QINSTANCE_KINDS else None
        table = dict(self.objects(store))
        known = name in table  # replaced where it is: the table stays in the order of the names
        table[name] = model
        self._replace_objects(store, table if known else dict(sorted(table.items())))
        if before is not None:
            self.qinstances_changed(before)

    def remove_object(self, store: str, name: str) -> None:
        """Remove object ``name`` (already unspooled); its queue instances
        take their states with them."""
        before = self.qinstance_names() if store in QINSTANCE_KINDS else None
        table = dict(self.objects(store))
        table.pop(name, None)
        self._replace_objects(store, table)
        if before is not None:
            self.qinstances_changed(before)

    def names(self, kind: str) -> list[str]:
        """``managers``, ``operators``, ``submit_hosts`` or ``admin_hosts``."""
        lists = {"managers": self.managers, "operators": self.operators,
                 "submit_hosts": self.submit_hosts, "admin_hosts": self.admin_hosts}
        return list(lists[kind])

    def set_names(self, kind: str, names: list[str]) -> None:
        """Replace one of the lists of :meth:`names` (already spooled)."""
        match kind:
            case "managers":
                self.managers = list(names)
            case "operators":
                self.operators = list(names)
            case "submit_hosts":
                self.submit_hosts = list(names)
            case "admin_hosts":
                self.admin_hosts = list(names)
            case _:
                raise KeyError(kind)

    # ------------------------------------------------------------ derived
    @property
    def forbid_reschedule(self) -> bool:
        """qmaster_params FORBID_RESCHEDULE of the global configuration."""
        return self._global_flags()[0]

    @property
    def forbid_apperror(self) -> bool:
        """qmaster_params FORBID_APPERROR of the global configuration."""
        return self._global_flags()[1]

    @property
    def accounting(self) -> bool:
        """reporting_params accounting of the global configuration: are records written."""
        return self._global_flags()[2]

    def _global_flags(self) -> tuple[bool, bool, bool]:
        """What every task's end asks of the global configuration, read once
        a configuration (each reading parses its parameter list; the model
        is immutable: qconf replaces it)."""
        conf = self.global_conf
        kept = self._flags
        if kept is None or kept[0] is not conf:
            kept = self._flags = (conf, (bool(conf.forbid_reschedule), bool(conf.forbid_apperror),
                                         bool(conf.accounting)))
        return kept[1]

    def config_key(self) -> tuple[Any, ...]:
        """Changes whenever a queue, host group or exec host is replaced
        (the models are immutable: qconf replaces them), for the caches below."""
        return (
            tuple(map(id, self.cqueues.values())), tuple(self.cqueues),
            tuple(map(id, self.hostgroups.values())), tuple(self.hostgroups),
            tuple(map(id, self.exec_hosts.values())), tuple(self.exec_hosts),
        )

    def group_members_key(self) -> tuple[Any, ...]:
        """The host groups as objects (immutable: qconf replaces them)."""
        return tuple(self.hostgroups.values())

    def group_members(self) -> dict[str, frozenset[str]]:
        key = (tuple(map(id, self.hostgroups.values())), tuple(self.hostgroups))
        cached = self._groups_cache
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
        if self._cx is None or self._cx_for is not self.complexes:
            self._cx = ComplexIndex(self.complexes)
            self._cx_for = self.complexes
        return self._cx

    def check_request(self, req: dict) -> None:
        """What the qmaster refuses at submission, with Grid Engine's messages."""
        if req.get("master_queues") and not req.get("pe"):
            raise RequestError("Unable to run job: job rejected: specification of master queue is not allowed "
                               "for non-parallel jobs\nExiting.")
        for kind in ("hard_resources", "soft_resources"):
            reason = self.resource_error(req.get(kind) or {})
            if reason:
                raise RequestError(f"Unable to run job: {reason}\nExiting.")
        pe = req.get("pe")
        if pe:
            if not self.pe_exists(pe["name"]):
                raise RequestError(
                    "Unable to run job: job rejected: the requested parallel environment "
                    f'"{pe["name"]}" does not exist\nExiting.'
                )
        reason = self.project_error(req.get("project"))
        if reason:
            raise RequestError(f"Unable to run job: {reason}\nExiting.")
        reason = self.queue_error(req.get("hard_queues") or [])
        if reason:
            raise RequestError(f"Unable to run job: {reason}\nExiting.")

    def resource_error(self, resources: Mapping[str, str]) -> str | None:
        """Why the qmaster refuses a job's -l list (unknown, not requestable,
        a value of the wrong type), in 8.1.9's words; None when it takes it."""
        cx = self.complex_index
        for name, value in resources.items():
            attr = cx.get(name)
            if attr is None:
                return f'unknown resource "{name}"'
            if attr.requestable == "NO":
                # 8.1.9 names the resource as the job wrote it (a shortcut stays a shortcut)
                return f'resource "{name}" configured as non requestable'
            what = _bad_value_kind(attr, value)
            if what:
                return f'attribute "{attr.name}" is not a {what} value'
        # after every name is known (8.1.9's order): slots are asked for with -pe
        return submit_checks.slots_request_refusal(
            resources, lambda n: a.name if (a := cx.get(n)) is not None else None)

    def pe_exists(self, pattern: str) -> bool:
        """A parallel environment matches the job's -pe name (a wildcard)."""
        return any(fnmatch.fnmatchcase(n, pattern) for n in self.pes)

    def project_error(self, project: str | None) -> str | None:
        """Why the qmaster refuses a job's -P project, or None."""
        if project and project not in self.projects:
            return f'job rejected: the requested project "{project}" does not exist'
        return None

    def queue_error(self, queues: Iterable[str]) -> str | None:
        """Why the qmaster refuses a job's -q list (a queue no cluster queue matches), or None."""
        for q in queues:
            if not self._queue_pattern_exists(q):
                return f'Job was rejected because job requests unknown queue "{q}"'
        return None

    def normalise_request(self, req: dict) -> None:
        """A checked request's ``-l`` lists as 8.1.9 keeps them
        (:meth:`normalised_resources`)."""
        for kind in ("hard_resources", "soft_resources"):
            if req.get(kind):
                req[kind] = self.normalised_resources(req[kind])

    def normalised_resources(self, requests: Mapping[str, str]) -> dict[str, str]:
        """A checked ``-l`` list as 8.1.9 keeps it, for qsub and qalter alike:
        each name by its complex's full name (``mf=10M`` is ``mem_free=10M`` in
        qstat -j and the accounting category), in the order written; TIME
        values in whole seconds (``h_rt=1:00:00`` is ``h_rt=3600``: the
        category's ``:`` separates fields); other values as written."""
        cx = self.complex_index
        out: dict[str, str] = {}
        for name, value in requests.items():
            attr = cx.get(name)
            if attr is None:
                out[name] = value
                continue
            out.pop(attr.name, None)  # the last of two spellings wins, where it was written
            out[attr.name] = sge_types.time_request_text(value) if str(attr.type) == "TIME" else value
        return out

    def accounting_facts(self, job: Job, task: Task) -> tuple[str, int]:
        """What a task's accounting record takes from the configuration:
        the job's category (accounting_writer.category: the owner's access
        lists that queues, hosts or PEs refer to, its project if they refer
        to projects) and the queue_conf(5) ``priority`` of its master queue."""
        referenced, projects_used = self._category_references()
        acls = [name for name in referenced if name in self.usersets
                and access_list.contains(self.usersets[name], job.owner, (job.group,))]
        text = accounting_writer.category(job, acls, projects_used)
        m = task.master
        priority = 0
        master_conf = self.cqueues.get(m.cqueue) if m else None
        if m and master_conf is not None:
            try:
                priority = int(self.qvalue(master_conf, "priority", m.host))
            except ValueError:
                priority = 0
        return text, priority

    def _category_references(self) -> tuple[list[str], bool]:
        """The access lists queues, hosts and PEs refer to (sorted), and
        whether they refer to projects: cached until one of them is replaced."""
        key = (tuple(map(id, self.cqueues.values())), tuple(map(id, self.exec_hosts.values())),
               tuple(map(id, self.pes.values())))
        cached = self._references_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        referenced: set[str] = set()
        projects_used = False
        for conf in self.cqueues.values():
            referenced.update(_host_values_names(conf.user_lists) + _host_values_names(conf.xuser_lists))
            projects_used = projects_used or bool(_host_values_names(conf.projects)
                                                  or _host_values_names(conf.xprojects))
        for eh in self.exec_hosts.values():
            referenced.update(eh.user_lists + eh.xuser_lists)
            projects_used = projects_used or bool(eh.projects or eh.xprojects)
        for pe in self.pes.values():
            referenced.update(pe.user_lists + pe.xuser_lists)
        found = (sorted(referenced), projects_used)
        self._references_cache = (key, found)
        return found

    def check_submitter(self, user: str, group: str, req: dict) -> None:
        """sge_conf(5) user_lists/xuser_lists of the global configuration: who
        may use the cluster at all; Grid Engine refuses the others at submission."""
        gconf = self.global_conf
        if self.submitter_lists[0] is not gconf:  # read once a configuration, not at each submission
            self.submitter_lists = (gconf, gconf.user_lists, gconf.xuser_lists)
        _, user_lists, xuser_lists = self.submitter_lists
        if (user_lists or xuser_lists) and not access_list.has_access(user, (group,), user_lists, xuser_lists,
                                                                      self.usersets):
            host = (req.get("o_env") or {}).get("SGE_O_HOST") or self.host
            raise RequestError(f"Unable to run job: job rejected: {user}@{host} is not allowed to submit jobs"
                               "\nExiting.")
        self.check_project_access(user, group, req.get("project") or None)
        if req.get("deadline") and not self.is_deadline_user(user):
            raise RequestError(f'Unable to run job: job rejected: the user "{user}" is not a deadline initiation user'
                               "\nExiting.")

    def check_project_access(self, user: str, group: str, project_name: str | None) -> None:
        """project(5) ``acl``/``xacl``: a job submitted to a project (``-P``)
        whose owner is in one of its ``xacl`` lists, or in none of its
        ``acl`` lists when it has one, is refused in Grid Engine's words."""
        prj = self.projects.get(project_name) if project_name else None
        if prj is None:
            return  # no project, or an unknown one (check_request refuses that)
        if not access_list.has_access(user, (group,), prj.acl, prj.xacl, self.usersets):
            raise RequestError(f'Unable to run job: job rejected: no access to project "{prj.name}" '
                               f'for user "{user}"\nExiting.')

    def is_deadline_user(self, user: str) -> bool:
        """sge_priority(5), qsub(1) -dl: only the users named in the access
        list ``deadlineusers`` may submit deadline jobs (by user name: Grid
        Engine's userset_is_deadline_user looks at no @group entry)."""
        acl = self.usersets.get("deadlineusers")
        return acl is not None and user in acl.entries

    def _queue_pattern_exists(self, pattern: str) -> bool:
        """A -q wc_queue names a cluster queue, or with ``@`` at least one
        queue instance (8.1.9 refuses ``all.q@nosuchhost``, ``*@nosuch``,
        ``all.q@@nosuchgroup`` as unknown queues; measured)."""
        if "@" in pattern:
            return bool(self.match_qinstances(pattern))
        return any(wc_queue.cqueue_matches(pattern, n) for n in self.cqueues)

    # ------------------------------------------------------------ scheduler snapshot
    def snapshot(self, jobs: Mapping[int, Job], execds, now: float = 0.0,
                 states: bool = True, explain: bool = True,
                 counted: Mapping[int, RunningJob] | None = None) -> scheduler.Snapshot:
        """The scheduler's view of the cell at ``now`` (the time of the pass,
        for waiting times and deadlines: the scheduler reads no clock);
        ``states=False``: every queue instance as if enabled and up (-w);
        ``counted``: what :meth:`running_jobs_of` gives for ``jobs`` now, if the caller has it."""
        if counted is None:
            counted = self.running_jobs_of(jobs)
        sums = self.running_jobs.sums(counted)
        used, pe_used = sums.used, sums.pe_used
        qi_booked, host_booked, global_booked = sums.booked()
        held_maps: dict[str, dict[str, list[str]]] = {}
        entries: list[scheduler.ScheduleEntry] = []
        want_entries = self.sched_conf.max_reservation > 0 or self.sched_conf.monitor
        if want_entries or sums.with_maps:
            for rj in counted.values():
                for host, name, ids in rj.resource_maps:
                    held_maps.setdefault(host, {}).setdefault(name, []).extend(ids)
                entries.extend(rj.schedule_entries)
        running_tasks = tuple(entries) if want_entries else ()
        rsmap_used = {h: {n: tuple(ids) for n, ids in maps.items()} for h, maps in held_maps.items()}
        qis = []
        for static in self._static_qinstances():
            name = static.name
            qi_states = self.qi_states.get(name, "") if states else ""
            if states and static.host not in execds:
                qi_states += "u"
            qis.append(static.in_use(used.get(name, 0), qi_states, qi_booked.get(name, {})))
        hosts = {h: static.in_use(self.scaled_load(h), host_booked.get(h, {}), rsmap_used.get(h, {}))
                 for h, static in self._static_hosts().items()}
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
        default_duration = self.sched_conf.default_duration_seconds
        for job in jobs.values():
            job_count = counted.get(job.number)
            if job_count is None:  # held as a whole, no task: nothing (RunningJobs.count)
                continue
            entry = job_count.snapshot_entry(job, free, now, default_duration)
            if entry is None:
                continue
            if isinstance(entry, list):
                pending += entry
            else:
                others.append(entry)
        global_host = self.exec_hosts.get("global")
        return scheduler.Snapshot(
            qinstances=tuple(qis),
            hosts=hosts,
            pending=tuple(pending),
            complexes=self.complex_index,
            pes=pes,
            global_values=dict(global_host.complex_values) if global_host else {},
            global_consumed=global_booked,
            queue_sort_method=self.sched_conf.queue_sort_method,
            load_of=self._load_of(),
            acls=self.usersets,
            quotas=self.quota_context(jobs, counted) if any(r.enabled for r in self.rqs.values()) else None,
            now=now,
            weights=job_order.Weights.from_sched_conf(self.sched_conf),
            running=tuple(others),
            hostgroups=self.group_members(),
            global_host=scheduler.HostInfo(
                name="global", user_lists=global_host.user_lists, xuser_lists=global_host.xuser_lists,
                projects=global_host.projects, xprojects=global_host.xprojects,
            ) if global_host else scheduler.HostInfo("global"),
            max_reservation=self.sched_conf.max_reservation,
            duration_offset=self.sched_conf.duration_offset,
            running_tasks=running_tasks,
            explain=explain,
        )

    def running_jobs_of(self, jobs: Mapping[int, Job], changed: Collection[int] | None = None) -> dict[int, RunningJob]:
        """What a pass counts of each of ``jobs`` that has a task or is not
        held as a whole (kept between passes: :mod:`minisge.qmaster.running_jobs`;
        a held job with no task counts for nothing; a pass hands it only the
        jobs :class:`minisge.qmaster.job_index.JobIndex` considers, so that a
        long queue of held jobs costs a pass nothing, and ``changed``, the
        jobs the index filed again since the pass before:
        :meth:`minisge.qmaster.running_jobs.RunningJobs.count`)."""
        durations = (self.sched_conf.default_duration_seconds, self.sched_conf.duration_offset)
        return self.running_jobs.count(jobs, self.complex_index, durations, changed)

    def booked_consumables(self, jobs: Mapping[int, Job],
                           counted: Mapping[int, RunningJob] | None = None) -> tuple[dict, dict, dict]:
        """complex(5) "the internal bookkeeping will subtract from this total
        the assumed resource consumption by all running jobs": what the tasks
        that hold queue instances book, per queue instance, host and globally
        (per-slot requests times the slots, JOB requests in the master queue,
        complex defaults for the consumables not requested: the rule's home is
        :class:`minisge.qmaster.running_jobs.CountedSums`); ``counted``: a
        pass's count of the jobs, if the caller has it."""
        return CountedSums().update(self.running_jobs_of(jobs) if counted is None else counted).booked()

    def quota_context(self, jobs: Mapping[int, Job], counted: Mapping[int, RunningJob] | None = None):
        """What resource quota evaluation needs (minisge.scheduler.quota.QuotaContext):
        the sets, access lists, host groups, the numbers ``$complex`` in a
        dynamic limit reads on each host (load, host and global complex
        values), and the queue instances every running task holds."""
        def numbers(*layers) -> dict[str, float]:
            out: dict[str, float] = {}
            for layer in layers:
                for k, v in layer.items():
                    try:
                        out[k] = parse_number(rsmap.amount_text(str(v)))
                    except SpecifierError:
                        pass
            return out

        g = self.exec_hosts.get("global")
        gvalues = dict(g.complex_values) if g else {}
        host_values = {
            h: numbers(gvalues, dict(eh.complex_values), self.scaled_load(h))
            for h, eh in self.exec_hosts.items() if h != "global"
        }
        if counted is None:
            counted = self.running_jobs_of(jobs)
        running = [req for rj in counted.values() for req in rj.quota_requests]
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
        that reported no value of the formula sorts last, as 9999).  A
        host's value is kept for the next passes while the formula and its
        load report are the same (a report comes every load_report_time, a
        pass with every change: parsing its ~25 values again cost a pass
        ~20 us a host)."""
        sc = sched_conf
        formula = self.sched_conf.load_formula
        known = self._formula_values

        def load_of(host: scheduler.HostInfo) -> float:
            key = (formula, tuple(host.load.items()))
            value = known.get(key)
            if value is not None:
                return value
            values = {}
            for k, v in host.load.items():
                try:
                    values[k] = parse_number(v)
                except SpecifierError:
                    pass
            try:
                value = sc.evaluate_load_formula(formula, values)
            except SpecifierError:
                value = sc.ERROR_LOAD_VAL
            if len(known) >= MAX_FORMULA_VALUES:
                known.clear()
            known[key] = value
            return value

        return load_of

    def static_qinstance(self, cqueue: str, host: str) -> scheduler.QInstance:
        """The configured part of queue instance ``cqueue@host`` (KeyError if none)."""
        for qi in self._static_qinstances():
            if qi.cqueue == cqueue and qi.host == host:
                return qi
        raise KeyError(f"{cqueue}@{host}")

    def static_qinstances(self) -> list[scheduler.QInstance]:
        """The configured part of every queue instance (nothing used, no state)."""
        return self._static_qinstances()

    def _static_hosts(self) -> dict[str, scheduler.HostInfo]:
        """The configured part of every execution host (not ``global``), cached
        until an exec host is replaced (the models are immutable)."""
        key = (tuple(map(id, self.exec_hosts.values())), tuple(self.exec_hosts))
        cached = self._host_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        out = {h: scheduler.HostInfo(name=h, values=dict(eh.complex_values), user_lists=eh.user_lists,
                                     xuser_lists=eh.xuser_lists, projects=eh.projects, xprojects=eh.xprojects)
               for h, eh in self.exec_hosts.items() if h != "global"}
        self._host_cache = (key, out)
        return out

    def _static_qinstances(self) -> list[scheduler.QInstance]:
        """The configured part of every queue instance, cached until the
        configuration changes (the scheduler pass runs on every event)."""
        key = self.config_key()
        cached = self._qi_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        out = []
        for conf, host in self.queue_instances():
            def access(attr: str, conf: queue_conf.QueueConf = conf, host: str = host) -> tuple[str, ...]:
                return tuple(queue_conf.decode(attr, self.qvalue(conf, attr, host)))

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
                    user_lists=access("user_lists"), xuser_lists=access("xuser_lists"),
                    projects=access("projects"), xprojects=access("xprojects"),
                    values=values,
                    complex_names=frozenset(complex_values),
                )
            )
        self._qi_cache = (key, out)
        return out

    # ------------------------------------------------------------ dispatch
    def start_message(self, job: Job, task: Task, script_path: str) -> dict[str, Any]:
        m = granted_master(task)
        return {
            "op": "start",
            "job_id": job.number,
            "task_id": task.task_id,
            "owner": job.owner,
            "uid": job.uid,
            "gid": job.gid,
            "spec": job.spec,
            "queue": m.cqueue,
            "slots": task.slots,
            "nhosts": len({g.host for g in task.granted}),
            "nqueues": len(task.granted),
            "pe": task.granted_pe or None,
            "pe_hostfile": self.pe_hostfile(task) if task.granted_pe else None,
            "script_file": script_path,
            "restarted": task.restarted,
            "dispatched": task.start_time,  # the run's identity (unknown_hosts.stale_report)
            **self.start_facts(job, task),
            "resource_map": task.resource_map_on(m.host),  # sge_rsmap(5): SGE_HGR_<name> on this host
        }

    def start_facts(self, job: Job, task: Task) -> dict[str, Any]:
        """What a start message takes from the configuration: the master
        queue's values on its host, the limits (with the job's hard ``-l``),
        the procedures, the mailer.  The tasks of an array are dispatched one
        after the other to the same few queue instances, so the last answer
        is kept, for as long as everything it derives from is the same
        object (the models are immutable: qconf replaces them; ``qalter -l``
        gives the job a new hard resource list) and the host's local
        configuration file has not changed (its stat)."""
        m = granted_master(task)
        pe_name = task.granted_pe or None
        host_slots = sum(g.slots for g in task.granted if g.host == m.host) or 1
        try:
            st = os.stat(self.local_conf_path(m.host))
            local: tuple[int, ...] | None = (st.st_ino, st.st_mtime_ns, st.st_size, st.st_ctime_ns)
        except (FileNotFoundError, NotADirectoryError):
            local = None
        key = (m.cqueue, m.host, pe_name, host_slots, local, self.cqueues.get(m.cqueue), self.global_conf,
               self.pes.get(pe_name) if pe_name else None, self.complexes, job.spec.get("hard_resources"),
               *self.group_members_key())
        cached = self._start_facts
        if cached is not None and len(cached[0]) == len(key) and all(
                a is b or (type(a) in (str, int, tuple) and a == b) for a, b in zip(cached[0], key, strict=True)):
            return cached[1]
        conf = self.cqueues[m.cqueue]
        limit = parse_time(self.qvalue(conf, "h_rt", m.host))
        req_rt = (job.spec.get("hard_resources") or {}).get("h_rt")
        if req_rt:
            limit = min(limit, parse_time(req_rt))
        facts = {
            "queue_shell": self.qvalue(conf, "shell", m.host),
            "shell_start_mode": self.qvalue(conf, "shell_start_mode", m.host),
            "tmpdir": self.qvalue(conf, "tmpdir", m.host),
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
            "mailer": self.mailer(m.host),  # qsub -m: the execd sends the mails
            "rsh_command": self.rsh_command(m.host, task.granted_pe),
        }
        self._start_facts = (key, facts)
        return facts

    def rsh_command(self, host: str, pe_name: str | None) -> str | None:
        """sge_conf(5) rsh_command of ``host`` for a job of a PE with
        control_slaves TRUE (its SGE_RSH_COMMAND), else None."""
        pe = self.pes.get(pe_name) if pe_name else None
        if pe is None or not pe.control_slaves:
            return None
        local = self.host_conf_of(host)
        if local is not None and local.get("rsh_command"):
            return local.value("rsh_command")
        return self.global_conf.value("rsh_command")

    def mailer(self, host: str) -> str:
        """sge_conf(5) mailer of ``host``: its local configuration's, else the global one's."""
        local = self.host_conf_of(host)
        if local is not None and local.get("mailer"):
            return local.mailer.path
        return self.global_conf.mailer.path

    def task_limits(self, job: Job, task: Task) -> dict[str, Any]:
        """What the execd needs of a task's resource limits (queue_conf(5)
        RESOURCE LIMITS, :mod:`minisge.rules.limits`): ``limits``, the master
        queue's values lowered by the job's hard ``-l`` requests; ``host_slots``,
        the slots the task holds on the master host, which the per-slot
        limits are multiplied by; ``consumable_job``, the requested limits
        that are consumables of type JOB, which are not."""
        m = granted_master(task)
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
            "consumable_job": sorted(n for n in requests if n in limits.LIMIT_NAMES
                                     and _consumable_kind(cx.get(n)) is Consumable.JOB),
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

    def local_conf_path(self, host: str) -> str:
        return os.path.join(self.spool.cell.common, "local_conf", host)

    def host_conf_of(self, host: str):
        """The host-local configuration (sge_conf(5), ``common/local_conf/<host>``
        as qconf -mconf writes it) of ``host``, or None."""
        path = self.local_conf_path(host)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return self.parse_common(f"local_conf/{host}", text, path)

    def pe_hostfile(self, task: Task) -> str:
        """sge_pe(5) $pe_hostfile: a line per granted queue instance, master
        first: ``host slots queue@host UNDEFINED``; they add up to NSLOTS
        whatever job_is_first_task says (8.1.9: ``-pe make 2``, FALSE, gives
        ``vm 2 all.q@vm UNDEFINED`` and NSLOTS=2)."""
        return "".join(f"{g.host} {g.slots} {g.qinstance} UNDEFINED\n" for g in task.granted)

    def set_queue_error(self, qinstance: str, reason: str) -> None:
        """A job's failure put the queue instance in error (not spooled: the
        caller spools once, :meth:`spool_qi_states`)."""
        if "E" not in self.qi_states.get(qinstance, ""):
            self.qi_states[qinstance] = self.qi_states.get(qinstance, "") + "E"
        self.qi_messages.setdefault(qinstance, []).append(reason)

    # ------------------------------------------------------------ queue instance states
    def match_qinstances(self, pattern: str) -> list[str]:
        """Queue instances named by a sge_types(5) wc_queue: ``cq``, ``cq@host``, ``cq@@hostgroup``, wildcards."""
        groups = self.group_members()
        return [f"{conf.qname}@{host}" for conf, host in self.queue_instances()
                if wc_queue.matches(pattern, conf.qname, host, groups)]

    def owners_of(self, qinstance: str) -> tuple[str, ...]:
        cq, _, host = qinstance.partition("@")
        conf = self.cqueues.get(cq)
        if conf is None:
            return ()
        return tuple(queue_conf.decode("owner_list", self.qvalue(conf, "owner_list", host)))

    def add_qi_state(self, qi: str, letter: str) -> None:
        """qmod -d, -sq: spooled, or SpoolError and nothing changed."""
        with self._qi_change():
            if letter not in self.qi_states.get(qi, ""):
                self.qi_states[qi] = self.qi_states.get(qi, "") + letter

    def remove_qi_state(self, qi: str, letter: str) -> None:
        """qmod -e, -usq: spooled, or SpoolError and nothing changed."""
        with self._qi_change():
            self.qi_states[qi] = self.qi_states.get(qi, "").replace(letter, "")
            if not self.qi_states[qi]:
                del self.qi_states[qi]

    def clear_queue_error(self, qi: str) -> None:
        """qmod -c: state E and its messages gone; spooled, or SpoolError and nothing changed."""
        with self._qi_change():
            self.qi_states[qi] = self.qi_states.get(qi, "").replace("E", "")
            if not self.qi_states[qi]:
                del self.qi_states[qi]
            self.qi_messages.pop(qi, None)

    @contextlib.contextmanager
    def _qi_change(self) -> Iterator[None]:
        """A request's change of queue instance states: written, or taken back."""
        states, messages = dict(self.qi_states), {k: list(v) for k, v in self.qi_messages.items()}
        try:
            yield
            self.save_qi_states()
        except SpoolError:
            self.qi_states, self.qi_messages = states, messages
            raise

    def save_qi_states(self) -> None:
        """Write the queue instance states (SpoolError when the spool cannot)."""
        atomic_write(os.path.join(self.spool.dir, "qinstance_states"),
                     json.dumps({"states": self.qi_states, "messages": self.qi_messages}, indent=1, sort_keys=True))
        self.qi_states_unsaved = False

    def spool_qi_states(self) -> None:
        """Write them after one of the qmaster's own changes (a job's failure, an
        execd's start, new queue instances): if the spool cannot take them now,
        they stay in memory and the backlog writes them later."""
        try:
            self.save_qi_states()
        except SpoolError as err:
            if not self.qi_states_unsaved:
                log.error("cannot write the queue instance states: %s (written again later)", err)
            self.qi_states_unsaved = True

    def set_qi_states(self, qi: str, states: str) -> bool:
        """Set the state letters of a queue instance (not spooled); True when they changed."""
        old = self.qi_states.get(qi, "")
        if states == old:
            return False
        if states:
            self.qi_states[qi] = states
        else:
            self.qi_states.pop(qi, None)
        return True

    # ------------------------------------------------------------ queue_conf(5) initial_state
    def qinstance_names(self) -> set[str]:
        """``cq@host`` of every queue instance the configuration defines."""
        return {f"{conf.qname}@{host}" for conf, host in self.queue_instances()}

    def initial_state_of(self, qi: str) -> str:
        cq, _, host = qi.partition("@")
        conf = self.cqueues.get(cq)
        return str(self.qvalue(conf, "initial_state", host)) if conf is not None else "default"

    def qinstances_changed(self, before: set[str]) -> None:
        """After a change of queues or host groups: the new instances get their
        initial_state, the vanished ones lose their states
        (:mod:`minisge.rules.initial_state`); spooled if changed."""
        after = self.qinstance_names()
        changed = False
        for qi in vanished(before, after):
            changed |= self.set_qi_states(qi, "")
            changed |= self.qi_messages.pop(qi, None) is not None
        for qi in appeared(before, after):
            changed |= self.set_qi_states(qi, apply_initial_state(self.qi_states.get(qi, ""),
                                                                  self.initial_state_of(qi)))
        if changed:
            self.spool_qi_states()

    def execd_started(self, host: str) -> None:
        """An execd started and registered: every queue instance on ``host``
        gets its initial_state again (sge_execd(8) start-up, not a reconnect)."""
        changed = False
        for conf, h in self.queue_instances():
            if h != host:
                continue
            qi = f"{conf.qname}@{h}"
            changed |= self.set_qi_states(qi, apply_initial_state(self.qi_states.get(qi, ""),
                                                                  self.initial_state_of(qi)))
        if changed:
            self.spool_qi_states()

    def load_qi_states(self) -> None:
        try:
            with open(os.path.join(self.spool.dir, "qinstance_states"), encoding="utf-8") as f:
                data = json.load(f)
            self.qi_states = dict(data.get("states", {}))
            self.qi_messages = {k: list(v) for k, v in data.get("messages", {}).items()}
        except FileNotFoundError:
            pass


def job_duration(h_rt: str | None, default_duration: float) -> float:
    """How long a pending job would hold its slots, for the advance
    reservations beside it (scheduler.advance_reservation): its ``h_rt``,
    else sched_conf(5) ``default_duration``."""
    seconds = parse_time(h_rt) if h_rt else 0.0
    return advance_reservation.duration_of(seconds, default_duration)
