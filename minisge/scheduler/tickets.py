"""The ticket policies of sge_priority(5): share tree, functional and override tickets.

Pure: no I/O and no clock.  The caller passes the jobs (their running and
pending tasks), the share tree, the users', projects' and departments'
shares and override tickets, and the usage already decayed to the time of
the pass (:mod:`minisge.scheduler.share_usage`).  :func:`tickets` gives
every task its figures as ``qstat -ext`` prints them (tckts, ovrts via the
job, otckt, ftckt, stckt, share), and :func:`normalized` the ``ntckts`` of
the priority formula (:mod:`minisge.scheduler.job_order`).

As Grid Engine 8.1.9 computes them (``sge_calc_tickets`` in sgeee.c, run
twice per pass: once with the pending and running jobs, whose pending
figures are kept, once with the running jobs alone):

- **share tree** (``weight_tickets_share``): a node is active when jobs map
  to it or below it.  Among the active children of a node, the long-term
  target is ``shares / sum of shares``; the short-term target weighs it by
  usage, ``shr = shares² / max(usage, oltt)``, ``stt = shr / sum shr``
  (``compensation_factor`` caps a child whose short-term target is more
  than that factor times its long-term one).  A running job gets
  ``ostt × weight_tickets_share / jobs of its node``; the pending jobs of a
  node get ``stt / n`` (n counting on from the node's running jobs and its
  decayed ``finished_jobs``) in their order (``sge_sort_pending_job_nodes``);
- **functional** (``weight_tickets_functional``): a job's user, project,
  department and job shares, weighted by ``weight_user`` ... ``weight_job``
  (those with no shares left out), divided among the user's jobs when
  ``share_functional_shares``; the pending jobs are taken one by one, each
  time the one that would get most if it ran next (at most
  ``max_functional_jobs_to_schedule``);
- **override**: the job's ``-ot`` plus its user's, project's and
  department's ``oticket`` (divided among their jobs when
  ``share_override_tickets``);
- ``policy_hierarchy`` (``OFS``): a policy listed before another orders the
  pending jobs of the next one by the tickets it gave;
- ``share``: a job's tickets over the sum of the pending (or running) jobs'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from minisge.formats.sched_conf import SchedConf
from minisge.formats.share_tree import ShareTree

MIN_USAGE = 1.0  # SGE_MIN_USAGE
DEFAULT_DEPARTMENT = "defaultdepartment"


@dataclass(frozen=True)
class TicketPolicy:
    """The sched_conf(5) parameters of the ticket policies."""

    share_tree_tickets: float = 0.0
    functional_tickets: float = 0.0
    compensation_factor: float = 5.0
    usage_weights: tuple[tuple[str, float], ...] = (("cpu", 1.0), ("mem", 0.0), ("io", 0.0))
    share_override_tickets: bool = True
    share_functional_shares: bool = True
    weight_user: float = 0.25
    weight_project: float = 0.25
    weight_department: float = 0.25
    weight_job: float = 0.25
    max_functional_jobs_to_schedule: int = 200
    max_pending_tasks_per_job: int = 50
    policy_hierarchy: str = "OFS"

    @classmethod
    def from_sched_conf(cls, sc: SchedConf) -> TicketPolicy:
        return cls(
            share_tree_tickets=float(sc.weight_tickets_share),
            functional_tickets=float(sc.weight_tickets_functional),
            compensation_factor=float(sc.compensation_factor),
            usage_weights=tuple(sc.usage_weight_list),
            share_override_tickets=bool(sc.share_override_tickets),
            share_functional_shares=bool(sc.share_functional_shares),
            weight_user=float(sc.weight_user), weight_project=float(sc.weight_project),
            weight_department=float(sc.weight_department), weight_job=float(sc.weight_job),
            max_functional_jobs_to_schedule=int(sc.max_functional_jobs_to_schedule),
            max_pending_tasks_per_job=int(sc.max_pending_tasks_per_job),
            policy_hierarchy=str(sc.policy_hierarchy),
        )

    def hierarchy(self) -> list[tuple[str, bool]]:
        """sconf_ph_fill_array: the policies O, F, S in the order
        ``policy_hierarchy`` lists them (dependent), then the rest (not)."""
        text = self.policy_hierarchy.upper()
        listed = [] if text == "NONE" else [c for c in text if c in "OFS"]
        return [(c, True) for c in listed] + [(c, False) for c in "OFS" if c not in listed]


@dataclass(frozen=True)
class Holder:
    """A user, project or department as the policies see it: functional shares and override tickets."""

    fshare: int = 0
    oticket: int = 0


class HolderOf(Protocol):
    """The user (``u``), project (``p``) or department (``d``) of a name."""

    def __call__(self, kind: str, name: str, /) -> Holder: ...


class TicketTask(NamedTuple):
    """A running or pending task of a job, with what the policies read of its job."""

    job_id: int
    task_id: int
    owner: str
    running: bool
    project: str | None = None
    department: str = DEFAULT_DEPARTMENT
    jobshare: int = 0  # qsub -js
    override_tickets: int = 0  # qsub/qalter -ot
    submission_time: float = 0.0


#: a usage list: name (cpu, mem, io, finished_jobs ...) -> value
Usage = Mapping[str, float]


@dataclass(frozen=True)
class TicketInput:
    """Everything the policies read besides the tasks.  ``user_usage`` is
    keyed by (user, project or None): a job under a project counts in its
    user's usage for that project (UU_project); ``project_usage`` by project."""

    policy: TicketPolicy = TicketPolicy()
    tree: ShareTree | None = None
    users: Mapping[str, Holder] = field(default_factory=dict)
    projects: Mapping[str, Holder] = field(default_factory=dict)
    departments: Mapping[str, Holder] = field(default_factory=dict)
    user_usage: Mapping[tuple[str, str | None], Usage] = field(default_factory=dict)
    project_usage: Mapping[str, Usage] = field(default_factory=dict)
    free_slots: int = 0  # free slots of the cell: how many tasks of a pending array count


class Tickets:
    """One task's ticket figures (``qstat -ext``: tckts otckt ftckt stckt share)."""

    __slots__ = ("tickets", "otickets", "ftickets", "stickets", "share")

    def __init__(self) -> None:
        self.tickets = self.otickets = self.ftickets = self.stickets = self.share = 0.0

    def __repr__(self) -> str:
        return (f"Tickets(t={self.tickets:.1f}, o={self.otickets:.1f}, f={self.ftickets:.1f}, "
                f"s={self.stickets:.1f}, share={self.share:.3f})")


class _Node:
    """A share tree node during one calculation."""

    __slots__ = ("name", "shares", "children", "project", "refs", "active", "usage", "other",
                 "ltt", "oltt", "stt", "ostt", "shr", "acp", "jobs")

    def __init__(self, name: str, shares: int, project: bool) -> None:
        self.name, self.shares, self.project = name, shares, project
        self.children: list[_Node] = []
        self.refs = self.active = 0  # job_ref_count, active_job_ref_count
        self.usage = 0.0  # combined usage
        self.other: dict[str, float] = {}  # other usage (finished_jobs)
        self.ltt = self.oltt = self.stt = self.ostt = self.shr = self.acp = 0.0
        self.jobs: list[_Ref] = []  # pending job refs hung under this node


class _Ref:
    """A task during one calculation (sge_ref_t)."""

    __slots__ = ("task", "node", "t", "sort", "user", "project", "dept", "ufs", "pfs", "dfs", "stn", "stn_tickets")

    def __init__(self, task: TicketTask) -> None:
        self.task = task
        self.node: _Node | None = None
        self.t = Tickets()
        self.sort = 0.0  # the tickets of the policies this one depends on
        self.user = self.project = self.dept = ""
        self.ufs = self.pfs = self.dfs = 0.0
        self.stn = self.stn_tickets = 0.0  # STN_sort, STN_tickets of its temporary share tree node


def _build_tree(tree: ShareTree, projects: Mapping[str, Holder]) -> _Node:
    ids = tree.by_id()

    def build(nid: int) -> _Node:
        n = ids[nid]
        node = _Node(n.name, n.shares, n.name in projects)
        node.children = [build(c) for c in n.children]
        return node

    return build(tree.root.id)


def _search(ep: _Node, user: str, project: str | None, root: _Node) -> _Node | None:
    """search_userprj_node: the node of a user (within a project's subtree
    when ``project``), else the ``default`` node."""
    if ep.project and ep is not root and (project is None or ep.name != project):
        return None
    if project is not None:
        if ep.name == project:
            return ep if not ep.children else _search(ep, user, None, ep)
        for c in ep.children:
            found = _search(c, user, project, root)
            if found is not None:
                return found
        return None
    if ep.name == user:
        return ep
    for c in ep.children:
        found = _search(c, user, None, root)
        if found is not None:
            return found
    if ep is root and user != "default":
        return _search(ep, "default", None, ep)
    return None


def _add_default_copies(root: _Node, users: Iterable[tuple[str, str | None]]) -> None:
    """sge_add_default_user_nodes: a user the tree does not name gets a node of its own under ``default``."""
    for user, project in users:
        node = _search(root, user, project, root)
        if node is not None and node.name == "default" and user != "default":
            node.children.append(_Node(user, node.shares, False))


def _combined(usage: Usage | None, weights: Sequence[tuple[str, float]]) -> float:
    if not usage:
        return 0.0
    total = sum(w for _n, w in weights)
    if total <= 0:
        return 0.0
    return sum(usage.get(name, 0.0) * (w / total) for name, w in weights)


def _node_usage(node: _Node, inp: TicketInput, project: str | None) -> float:
    """sge_calc_node_usage: a leaf's usage is its user's (for the project of
    its subtree) or its project's; a project node's is the project's."""
    weights = inp.policy.usage_weights
    usage: Usage | None = None
    project_node = False
    if not node.children:
        if project is not None:
            usage = inp.user_usage.get((node.name, project))
        elif (node.name, None) in inp.user_usage:
            usage = inp.user_usage[(node.name, None)]
        elif node.name in inp.projects:
            usage = inp.project_usage.get(node.name)
    elif project is None and node.project:
        project_node = True
        usage = inp.project_usage.get(node.name)
        project = node.name
    value = _combined(usage, weights)
    for name, v in (usage or {}).items():
        if name not in ("cpu", "mem", "io"):
            node.other[name] = node.other.get(name, 0.0) + v
    if node.children:
        child_usage = 0.0
        for c in node.children:
            child_usage += _node_usage(c, inp, project)
            if not project_node:
                for name, v in c.other.items():
                    node.other[name] = node.other.get(name, 0.0) + v
        if not project_node:
            value += child_usage
    node.usage = value
    return value


def _count_refs(node: _Node) -> tuple[int, int]:
    if node.children:
        refs = active = 0
        for c in node.children:
            r, a = _count_refs(c)
            refs, active = refs + r, active + a
        node.refs, node.active = refs, active
    return node.refs, node.active


def _targets(node: _Node, compensation: float, is_root: bool = True) -> None:
    """sge_calc_node_targets: long- and short-term targets of the active children."""
    if is_root:
        node.stt = node.ltt = node.ostt = node.oltt = 1.0
    kids = [c for c in node.children if c.refs > 0]
    if not kids:
        return
    sum_shares = float(sum(c.shares for c in kids))
    total = 0.0
    for c in kids:
        c.ltt = c.shares / sum_shares if sum_shares > 0 else 0.0
        c.oltt = node.oltt * c.ltt
        c.shr = c.shares * c.shares / max(c.usage, MIN_USAGE * c.oltt) if c.oltt > 0 else 0.0
        total += c.shr
    for c in kids:
        c.stt = c.shr / total if total > 0 else 0.0
        c.ostt = node.ostt * c.stt
        c.acp = c.ostt
    if compensation != 0:
        compensated = False
        total = 0.0
        for c in kids:
            if c.ostt > compensation * c.oltt:
                c.shr = c.shares * c.shares / (max(c.usage, MIN_USAGE * c.oltt)
                                               * (c.ostt / (compensation * c.oltt)))
                compensated = True
            total += c.shr
        if compensated:
            for c in kids:
                c.stt = c.shr / total
                c.ostt = node.ostt * c.stt
                c.acp = c.ostt
    for c in kids:
        _targets(c, compensation, False)


def _calc(tasks: Sequence[TicketTask], inp: TicketInput, with_pending: bool) -> list[_Ref]:
    """One run of sge_calc_tickets over ``tasks``."""
    pol = inp.policy
    refs = [_Ref(t) for t in tasks if with_pending or t.running]
    running = [r for r in refs if r.task.running]
    pending = [r for r in refs if not r.task.running]
    root: _Node | None = None
    if inp.tree is not None and inp.tree.nodes:
        root = _build_tree(inp.tree, inp.projects)
        _add_default_copies(root, sorted({(r.task.owner, r.task.project if r.task.project in inp.projects else None)
                                          for r in refs}, key=lambda k: (k[0], k[1] or "")))
    job_cnt: dict[tuple[str, str], int] = {}
    for r in refs:
        t = r.task
        r.user = t.owner
        r.project = t.project if t.project and t.project in inp.projects else ""
        r.dept = t.department if t.department in inp.departments else ""
        if root is not None:
            node = None
            if r.project:
                node = _search(root, t.owner, r.project, root)
            if node is None:
                node = _search(root, t.owner, None, root)
            r.node = node
            if node is not None:
                node.refs += 1
                if t.running:
                    node.active += 1
        if t.running:
            for kind, name in (("u", r.user), ("p", r.project), ("d", r.dept)):
                if name:
                    job_cnt[(kind, name)] = job_cnt.get((kind, name), 0) + 1

    def holder(kind: str, name: str) -> Holder:
        table = inp.users if kind == "u" else inp.projects if kind == "p" else inp.departments
        return table.get(name, Holder())

    if root is not None:
        _count_refs(root)
        _node_usage(root, inp, None)
        _targets(root, pol.compensation_factor)
    # running jobs (pass 1 and 2)
    sums = {"u": 0.0, "p": 0.0, "d": 0.0, "j": 0.0}
    sum_priority: dict[int, int] = {}
    for r in running:
        if r.node is not None:
            sum_priority[id(r.node)] = sum_priority.get(id(r.node), 0) + r.task.jobshare
        _functional_pass1(r, job_cnt, holder, sums, pol.share_functional_shares, True)
    weights = _functional_weights(pol, sums)
    for r in running:
        if pol.share_tree_tickets > 0 and r.node is not None:
            share_tickets = r.node.acp * pol.share_tree_tickets
            sp = sum_priority.get(id(r.node), 0)
            if sp:
                r.t.stickets = float(int(r.task.jobshare * share_tickets / sp))
            elif r.node.refs:
                r.t.stickets = share_tickets / r.node.refs
        if pol.functional_tickets > 0:
            r.t.ftickets = _functional_pass2(r, sums, pol.functional_tickets, weights)
        r.t.otickets = _override(r, job_cnt, holder, pol.share_override_tickets, pending=False)
    if pending:
        for policy, dependent in pol.hierarchy():
            if policy == "S" and pol.share_tree_tickets > 0 and root is not None:
                for r in pending:
                    if r.node is not None:
                        r.node.jobs.append(r)
                        r.stn_tickets = r.sort if dependent else 0.0
                        r.stn = r.sort + 0.01 * r.task.jobshare if dependent else float(r.task.jobshare)
                for r in _sort_pending(root, root, pol.share_tree_tickets):
                    if dependent:
                        r.sort += r.t.stickets
            elif policy == "F" and pol.functional_tickets > 0:
                _pending_functional(pending, job_cnt, holder, dict(sums), pol, dependent)
            elif policy == "O":
                if pol.share_override_tickets:
                    _pending_shared_override(pending, job_cnt, holder, dependent)
                else:
                    for r in pending:
                        r.t.otickets = _override(r, job_cnt, holder, False, pending=True)
                        if dependent:
                            r.sort += r.t.otickets
    for r in refs:
        r.t.tickets = r.t.stickets + r.t.ftickets + r.t.otickets
    for group in (running, pending):
        total = sum(r.t.tickets for r in group)
        for r in group:
            r.t.share = r.t.tickets / total if r.t.tickets > 0 else 0.0
    return refs


def _sort_pending(root: _Node, node: _Node, total: float) -> list[_Ref]:
    """sge_sort_pending_job_nodes: the pending jobs hang under their nodes
    as temporary children; below every node but the root (or a root with
    jobs of its own) they are ordered by their sort value (the tickets of
    the policies before, or their job share), then job and task number, and
    the n-th is given ``stt / (running jobs + finished_jobs + n)`` of the
    node's share tree tickets (a higher level overwriting a lower one's)."""
    if root is node and not node.jobs:
        active = [c for c in node.children if c.refs - c.active > 0]
        if len(active) == 1:
            return _sort_pending(active[0], active[0], total)
    out: list[_Ref] = list(node.jobs)
    own = len(out)
    for c in node.children:
        if c.refs - c.active > 0:
            out.extend(_sort_pending(root, c, total))
    node.jobs = []
    if root is not node or own:
        out.sort(key=lambda r: (-r.stn, r.task.job_id, r.task.task_id))
        count = node.active + node.other.get("finished_jobs", 0.0)
        for r in out:
            count += 1
            r.t.stickets = node.stt / count * total
            r.stn = r.stn_tickets + r.t.stickets
    return out


def _functional_pass1(r: _Ref, job_cnt: Mapping[tuple[str, str], int], holder: HolderOf, sums: dict[str, float],
                      shared: bool, sum_shares: bool) -> None:
    """calc_job_functional_tickets_pass1: the job's user, project and
    department shares (divided by their running jobs when shared), summed."""
    for kind, name, attr in (("u", r.user, "ufs"), ("p", r.project, "pfs"), ("d", r.dept, "dfs")):
        if not name:
            continue
        cnt = job_cnt.get((kind, name), 0)
        fs = float(holder(kind, name).fshare)
        value = fs / cnt if shared and cnt else fs
        setattr(r, attr, value)
        if sum_shares or cnt <= 1:
            sums[kind] += value
    sums["j"] += r.task.jobshare


def _functional_weights(pol: TicketPolicy, sums: Mapping[str, float], all_on: bool = False) -> dict[str, float]:
    """get_functional_weighting_parameters: the weights of the categories
    that have shares, normalized to sum 1."""
    w = {"u": pol.weight_user if all_on or sums["u"] > 0 else 0.0,
         "d": pol.weight_department if all_on or sums["d"] > 0 else 0.0,
         "p": pol.weight_project if all_on or sums["p"] > 0 else 0.0,
         "j": pol.weight_job if all_on or sums["j"] > 0 else 0.0}
    total = sum(w.values())
    return {k: v / total for k, v in w.items()} if total > 0 else w


def _functional_pass2(r: _Ref, sums: Mapping[str, float], total: float, w: Mapping[str, float]) -> float:
    """calc_job_functional_tickets_pass2: the weighted sum of the job's part of each category."""
    out = 0.0
    if r.user and sums["u"]:
        out += w["u"] * r.ufs * total / sums["u"]
    if r.project and sums["p"]:
        out += w["p"] * r.pfs * total / sums["p"]
    if r.dept and sums["d"]:
        out += w["d"] * r.dfs * total / sums["d"]
    if sums["j"]:
        out += w["j"] * r.task.jobshare * total / sums["j"]
    return out


def _pending_functional(pending: Sequence[_Ref], job_cnt: dict[tuple[str, str], int], holder: HolderOf,
                        sums: dict[str, float], pol: TicketPolicy, dependent: bool) -> None:
    """The pending functional tickets: repeatedly the job that would get most
    if it ran next is taken and counted as running."""
    weights = _functional_weights(pol, sums, all_on=True)
    shared = pol.share_functional_shares
    left = list(pending)
    taken: list[_Ref] = []
    for _ in range(min(pol.max_functional_jobs_to_schedule, len(left))):
        best: _Ref | None = None
        best_value = -1.0
        for r in left:
            trial = dict(sums)
            for kind, name, attr in (("u", r.user, "ufs"), ("p", r.project, "pfs"), ("d", r.dept, "dfs")):
                if not name:
                    continue
                fs = float(holder(kind, name).fshare)
                if shared:
                    setattr(r, attr, fs / (job_cnt.get((kind, name), 0) + 1))
                else:
                    setattr(r, attr, fs)
                    trial[kind] += fs
            trial["j"] += r.task.jobshare
            for k in trial:
                trial[k] += 0.001
            value = _functional_pass2(r, trial, pol.functional_tickets, weights)
            if dependent:
                value += r.sort
            key = (r.task.submission_time, r.task.job_id, r.task.task_id)
            if best is None or value > best_value or (
                    value == best_value and key < (best.task.submission_time, best.task.job_id, best.task.task_id)):
                best, best_value = r, value
        if best is None:
            break
        left.remove(best)
        taken.append(best)
        for kind, name in (("u", best.user), ("p", best.project), ("d", best.dept)):
            if name:
                job_cnt[(kind, name)] = job_cnt.get((kind, name), 0) + 1
        _functional_pass1(best, job_cnt, holder, sums, shared, not shared)
        best.t.ftickets = _functional_pass2(best, sums, pol.functional_tickets, weights)
    for r in taken:
        for kind, name in (("u", r.user), ("p", r.project), ("d", r.dept)):
            if name:
                job_cnt[(kind, name)] -= 1
        if dependent:
            r.sort += r.t.ftickets


def _override(r: _Ref, job_cnt: Mapping[tuple[str, str], int], holder: HolderOf, shared: bool, pending: bool) -> float:
    """calc_job_override_tickets (running) and calc_pjob_override_tickets_shared
    (pending: as if it ran next): the job's -ot plus its objects' oticket."""
    total = 0.0
    for kind, name in (("u", r.user), ("p", r.project), ("d", r.dept)):
        if not name:
            continue
        ot = holder(kind, name).oticket
        if not ot:
            continue
        if shared:
            cnt = job_cnt.get((kind, name), 0) + (1 if pending else 0)
            if cnt:
                total += ot / cnt
        else:
            total += ot
    return total + r.task.override_tickets


def _pending_shared_override(pending: Sequence[_Ref], job_cnt: dict[tuple[str, str], int], holder: HolderOf,
                             dependent: bool) -> None:
    """calculate_pending_shared_override_tickets: repeatedly the pending job
    with most override tickets (if it ran next) is counted as running."""
    left = [r for r in pending if _override(r, job_cnt, holder, True, True) > 0]
    taken = []
    while left:
        best: _Ref | None = None
        best_value = -1.0
        for r in left:
            value = _override(r, job_cnt, holder, True, True)
            if best is None or value > best_value or (
                    value == best_value and (r.task.job_id, r.task.task_id) < (best.task.job_id, best.task.task_id)):
                best, best_value = r, value
        assert best is not None
        best.t.otickets = best_value
        left.remove(best)
        taken.append(best)
        for kind, name in (("u", best.user), ("p", best.project), ("d", best.dept)):
            if name:
                job_cnt[(kind, name)] = job_cnt.get((kind, name), 0) + 1
    for r in taken:
        for kind, name in (("u", r.user), ("p", r.project), ("d", r.dept)):
            if name:
                job_cnt[(kind, name)] -= 1
        if dependent:
            r.sort += r.t.otickets


def counted_tasks(tasks: Iterable[TicketTask], policy: TicketPolicy, free_slots: int) -> list[TicketTask]:
    """The tasks the ticket calculation takes: every running one, and of each
    pending job its first ``min(max_pending_tasks_per_job, free slots + 1)``."""
    limit = min(policy.max_pending_tasks_per_job, free_slots + 1)
    seen: dict[int, int] = {}
    out = []
    for t in tasks:
        if not t.running:
            n = seen.get(t.job_id, 0)
            if n >= limit:
                continue
            seen[t.job_id] = n + 1
        out.append(t)
    return out


def tickets(tasks: Iterable[TicketTask], inp: TicketInput) -> dict[tuple[int, int], Tickets]:
    """Every task's :class:`Tickets`, keyed by (job id, task id): the pending
    ones from the run with pending and running jobs, the running ones from
    the run with the running jobs alone (as 8.1.9's scheduler keeps them).
    ``tasks`` lists the running tasks and the pending ones in submission
    order; pending tasks beyond :func:`counted_tasks` get none."""
    counted = counted_tasks(tasks, inp.policy, inp.free_slots)
    out: dict[tuple[int, int], Tickets] = {}
    if inp.policy.share_tree_tickets <= 0 and inp.policy.functional_tickets <= 0 and not any(
            t.override_tickets for t in counted) and not _has_otickets(inp):
        return out
    for r in _calc(counted, inp, with_pending=True):
        if not r.task.running:
            out[(r.task.job_id, r.task.task_id)] = r.t
    for r in _calc(counted, inp, with_pending=False):
        out[(r.task.job_id, r.task.task_id)] = r.t
    return out


def _has_otickets(inp: TicketInput) -> bool:
    return any(h.oticket for table in (inp.users, inp.projects, inp.departments) for h in table.values())


def normalized(figures: Mapping[tuple[int, int], Tickets]) -> dict[tuple[int, int], float]:
    """sgeee_priority: ``ntckts``, the tickets normalized over 0..the most
    any job has (0.5 for all when no job has any)."""
    top = max((t.tickets for t in figures.values()), default=0.0)
    if top < 1e-11:
        return {k: 0.5 for k in figures}
    return {k: t.tickets / top for k, t in figures.items()}


def job_ntckts(figures: Mapping[tuple[int, int], Tickets]) -> tuple[dict[int, float], float]:
    """Per job the ``ntckts`` the dispatch order uses (that of its first task
    with figures, in task order), and the value of a job without figures
    (0 when some job has tickets, else 0.5: the ticket range is empty)."""
    norm = normalized(figures)
    out: dict[int, float] = {}
    for (job_id, _task_id), value in sorted(norm.items()):
        out.setdefault(job_id, value)
    top = max((t.tickets for t in figures.values()), default=0.0)
    return out, (0.0 if top >= 1e-11 else 0.5)


USAGE_INTERVAL = 60.0  # SGE_USAGE_INTERVAL: the decay constant's unit, seconds


def decay_constant(halftime_minutes: float) -> float:
    """calculate_decay_constant: the factor usage keeps per usage interval;
    a negative half-life forgets at once, 0 never."""
    if halftime_minutes < 0:
        return 0.0
    if halftime_minutes == 0:
        return 1.0
    return 1.0 - (-math.log(0.5) / (halftime_minutes * 60.0)) * USAGE_INTERVAL


def decay_list(halflife_decay_list: str) -> dict[str, float]:
    """sched_conf(5) halflife_decay_list ``cpu=m:mem=m:io=m`` (minutes; none: empty)."""
    text = halflife_decay_list.strip()
    if not text or text.lower() == "none":
        return {}
    out = {}
    for item in text.split(":"):
        name, _sep, value = item.partition("=")
        out[name.strip()] = float(value)
    return out


def decayed(usage: Iterable[tuple[str, float]], interval: float, halftime_hours: float,
            halflife: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """decay_usage: each usage value times its decay constant (its own
    ``halflife_decay_list`` half-life, else ``halftime``) to the power of the
    usage intervals in ``interval`` seconds."""
    if interval <= 0:
        return tuple(usage)
    steps = interval / USAGE_INTERVAL
    default = decay_constant(halftime_hours * 60.0) ** steps
    return tuple((name, value * (decay_constant(halflife[name]) ** steps if name in halflife else default))
                 for name, value in usage)


class MonitorNode(NamedTuple):
    """One share tree node as ``sge_share_mon`` shows it (sge_sharetree_printing.c's fields)."""

    path: str  # node_name: ``/`` for the root, else ``/a/b``
    user: str  # user_name: a leaf's user object, else ""
    project: str  # project_name: the node's project or the project above it, else ""
    shares: int
    job_count: int  # the tasks the share tree policy hangs under the node (0 without share tree tickets)
    level: float  # level%: shares / the siblings' shares
    total: float  # total%: the share of the whole tree
    long_target: float  # long_target_share
    short_target: float  # short_target_share
    actual: float  # actual_share: the node's usage / the root's
    usage: float  # usage: combined by usage_weight_list
    cpu: float
    mem: float
    io: float
    leaf: bool


def share_monitor(inp: TicketInput, tasks: Sequence[TicketTask], user_names: Iterable[str]) -> list[MonitorNode]:
    """The share tree's nodes, depth first, with shares, targets and usage
    (sge_share_mon): a user the tree does not name but that has a user object
    (``user_names``) gets its copy under ``default`` (sge_add_default_user_nodes);
    job counts and targets only when the share tree policy gives tickets
    (the scheduler's figures, sge_calc_node_targets)."""
    if inp.tree is None or not inp.tree.nodes:
        return []
    root = _build_tree(inp.tree, inp.projects)
    _add_default_copies(root, [(u, None) for u in sorted(user_names)])
    if inp.policy.share_tree_tickets > 0:
        for t in tasks:
            project = t.project if t.project and t.project in inp.projects else None
            node = _search(root, t.owner, project, root) if project else None
            node = node if node is not None else _search(root, t.owner, None, root)
            if node is not None:
                node.refs += 1
        _count_refs(root)
    total_usage = _node_usage(root, inp, None)
    if inp.policy.share_tree_tickets > 0:
        _targets(root, inp.policy.compensation_factor)
    users = set(user_names)
    rows: list[MonitorNode] = []

    def walk(node: _Node, path: str, level: float, total: float, project: str | None) -> None:
        if node.project and project is None:
            project = node.name
        usage: Usage | None = None
        if not node.children:
            if project is not None and node.name != project:
                usage = inp.user_usage.get((node.name, project))
            elif (node.name, None) in inp.user_usage:
                usage = inp.user_usage[(node.name, None)]
            elif node.name in inp.projects:
                usage = inp.project_usage.get(node.name)
        elif node.name == project:
            usage = inp.project_usage.get(node.name)
        u = usage or {}
        rows.append(MonitorNode(
            path, node.name if not node.children and node.name in users else "", project or "", node.shares,
            node.refs, level, total, node.oltt if node.refs else 0.0, node.ostt if node.refs else 0.0,
            node.usage / total_usage if total_usage else 0.0, node.usage,
            u.get("cpu", 0.0), u.get("mem", 0.0), u.get("io", 0.0), not node.children))
        siblings = sum(c.shares for c in node.children)
        for c in node.children:
            share = c.shares / siblings if siblings else 0.0
            walk(c, ("" if path == "/" else path) + "/" + c.name, share, total * share, project)

    walk(root, "/", 1.0 if root.shares else 0.0, 1.0 if root.shares else 0.0, None)
    return rows
