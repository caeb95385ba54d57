"""The usage the share tree weighs, and the input of the ticket policies.

Named for sge_share_tree(5)'s usage: the qmaster keeps each user's decayed
usage (cpu, mem, io and the count ``finished_jobs``; per project in the
user's ``project`` list) in the user object, spooled in ``users/NAME``
(:mod:`minisge.formats.user`).  A finished job adds its usage
(:meth:`ShareUsage.job_finished`); a running job's online usage counts while
it runs (:meth:`ShareUsage.ticket_input`).  The rules -- decay, tickets --
are the scheduler's (:mod:`minisge.scheduler.tickets`, pure).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import trio

from minisge.formats import sched_conf, share_tree, user
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.job import RUNNING, Job, Task
from minisge.qmaster.spool import QmasterSpool
from minisge.scheduler import tickets

log = logging.getLogger("minisge.qmaster")

SPOOL_KIND = "users"
SHARETREE = "sharetree"
SPOOL_INTERVAL = 1.0  # seconds: the users' usage is written at most this often (a decaying figure)


def _add(usage: Iterable[tuple[str, float]], more: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    out = dict(usage)
    for k, v in more.items():
        out[k] = out.get(k, 0.0) + v
    return tuple(out.items())


class ShareUsage:
    """The users' usage and the share tree, as the qmaster keeps and spools them."""

    def __init__(self, spool: QmasterSpool, config: ConfigState):
        self.spool = spool
        self.config = config  # its ``users``: the user objects (ConfigState.load reads them)
        self.tree: share_tree.ShareTree | None = None
        self.unspooled: set[str] = set()  # users whose usage changed since the last spool()
        self.spooled_at = -SPOOL_INTERVAL  # when spool_usage last wrote (the clock of its caller)

    @property
    def users(self) -> Mapping[str, user.User]:
        return self.config.users

    def load(self) -> None:
        """The share tree's spool file (the user objects are the configuration's)."""
        path = os.path.join(self.spool.dir, SHARETREE)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.tree = share_tree.parse(f.read(), path)

    def set_tree(self, tree: share_tree.ShareTree | None) -> None:
        """Spool the share tree (``qconf -Astree``/``-Mstree``; None: ``-dstree``), then keep it."""
        path = os.path.join(self.spool.dir, SHARETREE)
        if tree is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            tmp = path + ".new"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(share_tree.write(tree))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        self.tree = tree

    def _decayed(self, u: user.User, now: float, sc: sched_conf.SchedConf) -> user.User:
        interval = now - u.usage_time_stamp if u.usage_time_stamp else 0.0
        halflife = tickets.decay_list(sc.halflife_decay_list)
        return attrs.evolve(
            u, usage=tickets.decayed(u.usage, interval, sc.halftime, halflife),
            project_usage=tuple((p, tickets.decayed(pu, interval, sc.halftime, halflife))
                                for p, pu in u.project_usage),
            usage_time_stamp=int(now))

    def job_finished(self, owner: str, project: str | None, cpu: float, mem: float, io: float,
                     now: float, sc: sched_conf.SchedConf) -> None:
        """A finished task's usage, and one more ``finished_jobs``, added to
        its owner's decayed usage (for its project too); spooled."""
        u = self._decayed(self.users.get(owner) or user.User(owner), now, sc)
        more = {"cpu": cpu, "mem": mem, "io": io, "finished_jobs": 1.0}
        if project:
            projects = dict(u.project_usage)
            projects[project] = _add(projects.get(project, ()), more)
            u = attrs.evolve(u, project_usage=tuple(projects.items()))
        else:
            u = attrs.evolve(u, usage=_add(u.usage, more))
        self.config.put_object(SPOOL_KIND, owner, u)
        self.unspooled.add(owner)

    def spool_usage(self, now: float | None = None) -> None:
        """Write the user objects whose usage changed (the qmaster's flush,
        after a pass: one write a user, not one a job end, and not synced:
        usage is a decaying figure, as 8.1.9 spools it now and then); with
        ``now``, only when the last write is SPOOL_INTERVAL old (a stream of
        ends writes each user once a second; :meth:`run_timer` writes what
        is left).  A spool that refuses the write (full, read-only) keeps
        them for the next flush; usage never holds up a job's end."""
        if not self.unspooled:
            return
        if now is not None:
            if now - self.spooled_at < SPOOL_INTERVAL:
                return
            self.spooled_at = now
        try:
            os.makedirs(os.path.join(self.spool.dir, SPOOL_KIND), exist_ok=True)
        except OSError as e:
            log.warning("cannot spool the users' usage: %s", e)
            return
        for name in sorted(self.unspooled):
            u = self.users.get(name)
            try:
                if u is not None:
                    self.spool.write_object(SPOOL_KIND, name, user.write_spool(u), sync=False)
            except OSError as e:
                log.warning("cannot spool the usage of user %s: %s", name, e)
                continue
            self.unspooled.discard(name)

    async def run_timer(self, clock: Callable[[], float]) -> None:
        """Write the usage the flushes left unwritten (their last second),
        and what is left when the daemon stops."""
        try:
            while True:
                await trio.sleep(SPOOL_INTERVAL)
                self.spool_usage(clock())
        finally:
            self.spool_usage()

    def clear_usage(self, name: str) -> None:
        """``qconf -clearusage``: user ``name``'s usage (its projects' too) set to none; spooled."""
        u = attrs.evolve(self.users[name], usage=(), project_usage=())
        self.spool.write_object(SPOOL_KIND, name, user.write_spool(u))
        self.config.put_object(SPOOL_KIND, name, u)

    def ticket_input(self, jobs: Mapping[int, Job], now: float, sc: sched_conf.SchedConf,
                     projects: Mapping[str, object], free_slots: int,
                     usage_of: Callable[[Job, Task], Mapping[str, Any] | None]
                     ) -> tuple[tickets.TicketInput, tuple[tickets.TicketTask, ...]] | None:
        """The ticket policies' input at ``now`` and the tasks they weigh
        (running, then pending and not held, in job order); None when no
        policy gives tickets."""
        policy = tickets.TicketPolicy.from_sched_conf(sc)
        # first the cheap test, so that a cell without ticket policies (the default)
        # pays nothing a pass for them
        any_ot = (any(u.oticket for u in self.users.values())
                  or any(int(getattr(p, "oticket", 0)) for p in projects.values())
                  or any(j.spec.get("override_tickets") for j in jobs.values()))
        if policy.share_tree_tickets <= 0 and policy.functional_tickets <= 0 and not any_ot:
            return None
        running: list[tickets.TicketTask] = []
        pending: list[tickets.TicketTask] = []
        live: dict[tuple[str, str | None], dict[str, float]] = {}
        for job in sorted(jobs.values(), key=lambda j: j.number):
            spec = job.spec
            project = spec.get("project") or None
            common = dict(owner=job.owner, project=project, jobshare=int(spec.get("job_share") or 0),
                          override_tickets=int(spec.get("override_tickets") or 0),
                          submission_time=job.submission_time)
            for t in sorted(job.tasks.values(), key=lambda t: t.task_id):
                if t.state != RUNNING:
                    continue
                running.append(tickets.TicketTask(job.number, t.task_id, running=True, **common))  # type: ignore[arg-type]
                live_usage = usage_of(job, t)
                if live_usage:
                    acc = live.setdefault((job.owner, project), {})
                    for k in ("cpu", "mem", "io"):
                        acc[k] = acc.get(k, 0.0) + float(live_usage.get(k, 0.0))
            if job.held or job.task_holds:
                continue
            for tid in sorted(job.pending):
                pending.append(tickets.TicketTask(job.number, tid, running=False, **common))  # type: ignore[arg-type]
        user_usage, project_usage = self.usage_tables(now, sc, decay=True)
        for key, more in live.items():
            acc = user_usage.setdefault(key, {})
            for k, v in more.items():
                acc[k] = acc.get(k, 0.0) + v
            if key[1]:
                pacc = project_usage.setdefault(key[1], {})
                for k, v in more.items():
                    pacc[k] = pacc.get(k, 0.0) + v
        holders = {p: tickets.Holder(int(getattr(obj, "fshare", 0)), int(getattr(obj, "oticket", 0)))
                   for p, obj in projects.items()}
        users = {n: tickets.Holder(u.fshare, u.oticket) for n, u in self.users.items()}
        inp = tickets.TicketInput(policy=policy, tree=self.tree, users=users, projects=holders,
                                  user_usage=user_usage, project_usage=project_usage, free_slots=free_slots)
        return inp, (*running, *pending)

    def usage_tables(self, now: float, sc: sched_conf.SchedConf, decay: bool
                     ) -> tuple[dict[tuple[str, str | None], dict[str, float]], dict[str, dict[str, float]]]:
        """The users' kept usage (decayed to ``now`` with ``decay``) by
        (user, project or None), and summed per project."""
        user_usage: dict[tuple[str, str | None], dict[str, float]] = {}
        project_usage: dict[str, dict[str, float]] = {}
        for name, u in self.users.items():
            d = self._decayed(u, now, sc) if decay else u
            user_usage[(name, None)] = dict(d.usage)
            for p, pu in d.project_usage:
                user_usage[(name, p)] = dict(pu)
                acc = project_usage.setdefault(p, {})
                for k, v in pu:
                    acc[k] = acc.get(k, 0.0) + v
        return user_usage, project_usage

    def monitor(self, jobs: Mapping[int, Job], now: float, sc: sched_conf.SchedConf,
                projects: Mapping[str, object], decay: bool) -> list[dict[str, Any]] | None:
        """The share tree as ``sge_share_mon`` prints it (None: no tree): the
        users' usage as kept, or decayed to ``now`` (``-u``); the pending and
        running tasks counted under their nodes when the share tree policy
        gives tickets."""
        if self.tree is None or not self.tree.nodes:
            return None
        user_usage, project_usage = self.usage_tables(now, sc, decay)
        tasks: list[tickets.TicketTask] = []
        for job in sorted(jobs.values(), key=lambda j: j.number):
            common = dict(owner=job.owner, project=job.spec.get("project") or None)
            tasks.extend(tickets.TicketTask(job.number, t.task_id, running=True, **common)  # type: ignore[arg-type]
                         for t in job.tasks.values() if t.state == RUNNING)
            if not (job.held or job.task_holds):
                tasks.extend(tickets.TicketTask(job.number, tid, running=False, **common)  # type: ignore[arg-type]
                             for tid in job.pending)
        holders = {p: tickets.Holder(int(getattr(obj, "fshare", 0)), int(getattr(obj, "oticket", 0)))
                   for p, obj in projects.items()}
        inp = tickets.TicketInput(policy=tickets.TicketPolicy.from_sched_conf(sc), tree=self.tree,
                                  projects=holders, user_usage=user_usage, project_usage=project_usage)
        stamps = {n: u.usage_time_stamp for n, u in self.users.items()}
        return [{**n._asdict(), "usage_time": stamps.get(n.user, 0) if n.user else 0}
                for n in tickets.share_monitor(inp, tasks, self.users)]
