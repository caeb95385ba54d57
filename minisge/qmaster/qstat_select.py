"""qstat(1) ``-l resource=value`` and ``-U user``: which queue instances, and
which pending jobs, a listing shows.

Named for Grid Engine 8.1.9's queue selection of qstat
(sge_cqueue_qstat.c ``select_by_resource_list``,
``select_by_queue_user_list``; sge_qstat.c ``filter_jobs``):

- ``-l``: a queue instance is shown when the requests hold on it as in an
  empty cell: every consumable at its full capacity, and of the host's load
  values only the static ones (arch, num_proc, mem_total, swap_total,
  virtual_total and the topology values; load_scaling applied) -- so ``-l
  mem_free=1G`` selects nothing, as in 8.1.9.  An unknown resource: nothing
  is printed and qstat exits 1.
- ``-U``: a queue instance is shown when every user (or ``@group``) named
  may use it: the queue's, its host's, the global host's and the cluster
  configuration's user_lists/xuser_lists, and the acl/xacl of the projects
  in the queue's and hosts' projects (a project of ``xprojects`` counts
  against a user it admits), as 8.1.9 combines them.
- either: a pending job is listed only when it could run in one of the
  instances shown, in an empty cell (its hard ``-l`` requests; a job with a
  project only in an instance whose ``projects`` names it; with ``-q`` only
  in an instance its list names literally); running tasks only when they run
  in an instance shown (the command drops the others).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from minisge.formats import access_list, queue_conf
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.job import Job
from minisge.scheduler import matching
from minisge.scheduler.matching import Level

#: sge_load.c sge_is_static_load_value: the load values qstat's selection reads
STATIC_LOAD = frozenset({"arch", "num_proc", "mem_total", "swap_total", "virtual_total",
                         "m_topology", "m_socket", "m_core", "m_thread"})


class UnknownResource(Exception):
    """A ``-l`` name no complex attribute has: qstat prints nothing and exits 1."""


def parse_requests(items: Sequence[str]) -> dict[str, str]:
    """``-l`` items ``name=value`` (a name alone asks for TRUE, as a BOOL request)."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        out[name.strip()] = value.strip() if eq else "TRUE"
    return out


class Selection:
    """The queue instances and pending jobs a listing with ``-l``/``-U`` shows."""

    def __init__(self, config: ConfigState, requests: Mapping[str, str], queue_users: Sequence[str]):
        self.config = config
        self.requests = dict(requests)
        self.queue_users = list(queue_users)
        self._levels: dict[tuple[str, str], tuple[Level, Level, Level]] = {}
        self._verdicts: dict[tuple[str, str, tuple[tuple[str, str], ...]], bool] = {}  # jobs share requests
        cx = config.complex_index
        for name in self.requests:
            if cx.get(name) is None:
                raise UnknownResource(name)
        self.instances: list[tuple[str, str, str]] = []  # (cqueue, host, cqueue@host) selected
        for conf, host in config.queue_instances():
            if self.queue_users and not all(self.user_may_use(u, conf, host) for u in self.queue_users):
                continue
            if self.requests and not self.requests_hold(self.requests, conf, host):
                continue
            self.instances.append((conf.qname, host, f"{conf.qname}@{host}"))

    # ------------------------------------------------------------ -l
    def levels(self, conf, host: str) -> tuple[Level, Level, Level]:
        """The three levels of an instance in an empty cell (nothing booked, static load values only)."""
        known = self._levels.get((conf.qname, host))
        if known is not None:
            return known
        cfg = self.config
        g = cfg.exec_hosts.get("global")
        eh = cfg.exec_hosts.get(host)
        load = {k: v for k, v in cfg.scaled_load(host).items() if k in STATIC_LOAD}
        qi = cfg.static_qinstance(conf.qname, host)
        levels = self._levels[(conf.qname, host)] = (
            Level("g", "globally", dict(g.complex_values) if g else {}, {}, None),
            Level("h", f'at host "{host}"', dict(eh.complex_values) if eh else {}, {}, load),
            Level("q", f'in queue "{qi.name}"', {"slots": str(qi.slots), **qi.values}, {}, None),
        )
        return levels

    def requests_hold(self, requests: Mapping[str, str], conf, host: str) -> bool:
        key = (conf.qname, host, tuple(sorted(requests.items())))
        verdict = self._verdicts.get(key)
        if verdict is None:
            cx = self.config.complex_index
            try:
                verdict = matching.requests_reject(cx, self.levels(conf, host), f"{conf.qname}@{host}",
                                                   requests, 1) is None
            except ValueError:  # a value that does not read as its type: no match
                verdict = False
            self._verdicts[key] = verdict
        return verdict

    # ------------------------------------------------------------ -U
    def user_may_use(self, name: str, conf, host: str) -> bool:
        cfg = self.config
        user, groups = ("", (name[1:],)) if name.startswith("@") else (name, ())
        acls = cfg.usersets

        def allowed(user_lists, xuser_lists) -> bool:
            return access_list.has_access(user, groups, user_lists, xuser_lists, acls)

        def projects_admit(projects, xprojects) -> bool:
            ok = True
            for pname in projects:
                prj = cfg.projects.get(pname)
                if prj is not None:
                    ok = ok and allowed(prj.acl, prj.xacl)
            for pname in xprojects:
                prj = cfg.projects.get(pname)
                if prj is not None:
                    ok = ok and not allowed(prj.acl, prj.xacl)
            return ok

        def value(attr: str) -> tuple[str, ...]:
            return tuple(conf_decode(attr, cfg.qvalue(conf, attr, host)))

        q_access = allowed(value("user_lists"), value("xuser_lists"))
        q_access = q_access and projects_admit(value("projects"), value("xprojects"))
        eh = cfg.exec_hosts.get(host)
        h_access = True
        if eh is not None:
            h_access = allowed(eh.user_lists, eh.xuser_lists)
            q_access = q_access and projects_admit(eh.projects, eh.xprojects)
        g = cfg.exec_hosts.get("global")
        gh_access = True
        if g is not None:
            gh_access = allowed(g.user_lists, g.xuser_lists)
            q_access = q_access and projects_admit(g.projects, g.xprojects)
        gconf = cfg.global_conf
        conf_access = allowed(gconf.user_lists, gconf.xuser_lists)
        return q_access and h_access and gh_access and conf_access

    # ------------------------------------------------------------ pending jobs
    def shows_pending(self, job: Job) -> bool:
        """Could the job run in one of the selected instances (an empty cell)?"""
        spec = job.spec
        project = spec.get("project") or None
        hard_queues = list(spec.get("hard_queues") or ())
        requests = dict(spec.get("hard_resources") or {})
        cfg = self.config
        for cqueue, host, name in self.instances:
            conf = cfg.cqueues[cqueue]
            if project is not None:
                if project not in conf_decode("projects", cfg.qvalue(conf, "projects", host)):
                    continue
                if project in conf_decode("xprojects", cfg.qvalue(conf, "xprojects", host)):
                    continue
            if hard_queues and cqueue not in hard_queues and name not in hard_queues:
                continue
            if self.requests_hold(requests, conf, host):
                return True
        return False


def conf_decode(attr: str, value) -> list[str]:
    """A queue's list attribute (user_lists, projects ...) as names."""
    return list(queue_conf.decode(attr, value))
