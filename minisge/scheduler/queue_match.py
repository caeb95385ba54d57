"""Does a task fit a queue instance?  Every check, in Grid Engine's order and words.

Named for Grid Engine's queue matching (sge_select_queue.c
``sge_queue_match_static``, ``cqueue_match_static``, and the slot and
resource checks after them): a queue instance takes a task when

1. the pass has not dropped it for every job (:mod:`.queue_filter`:
   unavailable, alarm, disabled);
2. the hard queue list (``-q``, sge_types(5) wc_queue_list) names it;
3. queue_conf(5) ``user_lists``/``xuser_lists`` and ``projects``/
   ``xprojects`` admit the owner and the project (said once for the
   cluster queue when they shut every instance of it), and so do those of
   the instance's host (host_conf(5); the global host's are checked once
   per job, before any instance, by :func:`host_access`);
4. it is of type BATCH (a batch job; a PE job needs the PE in ``pe_list``),
   INTERACTIVE for an interactive job (qrsh, qlogin);
5. it has no FORCED attribute the job does not request (complex(5));
6. it has a free slot for each slot asked;
7. the cluster queue's fixed values do not refuse a ``-l`` request on
   every instance, and every ``-l`` request holds on the global, host and
   queue levels counting what is booked (:mod:`.matching`);

and, last, the resource quota sets let it in (:mod:`.quota`).  Steps 1-5
and the first half of 7 no booking changes: :mod:`.category_cache` keeps
their verdicts per job category.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minisge.formats import access_list, wc_queue
from minisge.scheduler import matching
from minisge.scheduler.assignment import Assignment
from minisge.scheduler.booking import Book
from minisge.scheduler.queue_filter import drop_reason, full_message
from minisge.scheduler.snapshot import HostInfo, PendingTask, QInstance, Snapshot


def queues_match(patterns: Sequence[str], qi: QInstance, snap: Snapshot) -> bool:
    """Whether a queue list (``-q``, ``-soft -q``, ``-masterq``) names ``qi``; an empty one names every instance."""
    return not patterns or wc_queue.list_matches(patterns, qi.cqueue, qi.host, snap.hostgroups)


def has_access(snap: Snapshot, task: PendingTask, user_lists: Sequence[str], xuser_lists: Sequence[str]) -> bool:
    """queue_conf(5), sge_pe(5): a user in an ``xuser_lists`` list is denied
    (even if also in ``user_lists``); with ``user_lists`` NONE anyone else may
    enter, otherwise only members of one of its lists."""
    if not user_lists and not xuser_lists:  # NONE and NONE: anyone (most queues, hosts and PEs)
        return True
    groups = (task.group,) if task.group else ()
    return access_list.has_access(task.owner, groups, user_lists, xuser_lists, snap.acls)


def instance_access(snap: Snapshot, qi: QInstance, task: PendingTask) -> str | None:
    """Why the job's owner or project may not use queue instance ``qi``
    (queue_conf(5) user_lists/xuser_lists, projects/xprojects), in Grid
    Engine's words; None if it may."""
    if not has_access(snap, task, qi.user_lists, qi.xuser_lists):
        return f'has no permission for queue "{qi.name}"'
    if qi.projects:
        if not task.project:
            return f'(no project) does not have the correct project to run in queue "{qi.name}"'
        if task.project not in qi.projects:
            return f'(project {task.project}) does not have the correct project to run in queue "{qi.name}"'
    if task.project and task.project in qi.xprojects:
        return f'(project {task.project}) is not allowed to run in queue "{qi.name}" based on the excluded project list'
    return None


def host_access(snap: Snapshot, host: HostInfo, task: PendingTask) -> str | None:
    """Why the job's owner or project may not run on ``host`` (host_conf(5)
    user_lists/xuser_lists, projects/xprojects; the global host's hold for
    every host), in Grid Engine's words (its ``sge_host_match_static``);
    None if it may."""
    if not has_access(snap, task, host.user_lists, host.xuser_lists):
        return f'has no permission for host "{host.name}"'
    if host.projects:
        if not task.project:
            return f'(no project) does not have the correct project to run in host "{host.name}"'
        if task.project not in host.projects:
            return f'(project {task.project}) does not have the correct project to run in host "{host.name}"'
    if task.project and task.project in host.xprojects:
        return (f'(project {task.project}) is not allowed to run in host "{host.name}" '
                "based on the excluded project list")
    return None


def access_rejects(a: Assignment, qi: QInstance) -> str | None:
    """The access and project rules of :func:`instance_access`; when they
    shut the owner out of every instance of the cluster queue, Grid Engine
    says so once for the cluster queue (its ``cqueue_match_static``); then
    those of the instance's host (:func:`host_access`), then the instance's."""
    snap, task = a.snap, a.task
    host = snap.hosts.get(qi.host)
    if not (qi.user_lists or qi.xuser_lists or qi.projects or qi.xprojects) and (host is None or not (
            host.user_lists or host.xuser_lists or host.projects or host.xprojects)):
        return None  # NONE everywhere: anyone, any project (most queues and hosts)
    why = instance_access(snap, qi, task)
    if why is None or any(instance_access(snap, q, task) is None for q in a.siblings(qi)):
        return (host_access(snap, host, task) if host is not None else None) or why
    if why.startswith("has no permission"):
        return f'has no permission for cluster queue "{qi.cqueue}"'
    # Grid Engine 8.1.9 words every cluster-queue project refusal this way
    return f'(no project) does not have the correct project to run in cluster queue "{qi.cqueue}"'


def hard_queue_rejects(a: Assignment, qi: QInstance) -> str | None:
    """-q: named by the cluster queue when no pattern names it at all, else by the instance.
    A PE job's ``-masterq`` instance passes too (it may hold the master task)."""
    task = a.task
    if queues_match(task.queues, qi, a.snap):
        return None
    if task.pe is not None and task.master_queues and queues_match(task.master_queues, qi, a.snap):
        return None
    cq_named = any(wc_queue.cqueue_matches(p, qi.cqueue) for p in task.queues)
    where = qi.name if cq_named else qi.cqueue
    return f'cannot run in queue "{where}" because it is not contained in its hard queue list (-q)'


def _owner_free_rejects(a: Assignment, qi: QInstance) -> tuple[str | None, str | None]:
    """The checks of :func:`static_rejects` that do not ask who the owner
    is: (queue state or ``-q``, qtype or FORCED), each None if it passes."""
    why = drop_reason(qi) or hard_queue_rejects(a, qi)
    if why:
        return why, None
    task = a.task
    if task.interactive:
        if "INTERACTIVE" not in qi.qtype:  # queue_conf(5) qtype: qrsh and qlogin need an INTERACTIVE queue
            return None, f'cannot run in queue instance "{qi.name}" because it is not of type interactive'
    elif task.pe is None and "BATCH" not in qi.qtype:
        # queue_conf(5) qtype: a batch job never goes to an INTERACTIVE-only queue
        # (a PE job needs the PE in pe_list instead, as in Grid Engine)
        return None, f'cannot run in queue instance "{qi.name}" because it is not of type batch'
    snap = a.snap
    return None, matching.forced_rejects(snap.complexes, snap.global_values, snap.hosts.get(qi.host), qi,
                                         task.requests)


def static_rejects(a: Assignment, qi: QInstance) -> tuple[str | None, str | None]:
    """The checks of :func:`fits` that no booking in the pass changes:
    (the reason before the free-slot check, the reason after it), each None
    if it passes -- queue state, ``-q``, access lists, qtype, FORCED, and
    the cluster queue's fixed values (with the category's cache the access
    verdicts are shared by the categories of one owner, group and project,
    the other verdicts of the instance by those of one queue shape, the
    cluster queue's by its instances)."""
    cache = a.cache
    if cache is None:
        first, then = _owner_free_rejects(a, qi)
    else:
        name = qi.name
        verdicts = cache.queue.get(name)
        if verdicts is None:
            verdicts = cache.queue[name] = _owner_free_rejects(a, qi)
        first, then = verdicts
    if first:
        return first, None
    if cache is None:
        why = access_rejects(a, qi)
    else:
        why = cache.access.get(name, _UNKNOWN)  # (a lookup that misses raises nothing, as a KeyError would)
        if why is _UNKNOWN:
            why = cache.access[name] = access_rejects(a, qi)
    if why or then:
        return why or then, None
    snap, task = a.snap, a.task
    cx = snap.complexes
    if cache is None:
        return None, matching.cqueue_request_rejects(cx, a.siblings(qi), qi, task.requests, task.pe is not None)
    why = cache.cq_request.get(qi.cqueue, _UNKNOWN)
    if why is _UNKNOWN:
        why = cache.cq_request[qi.cqueue] = matching.cqueue_request_rejects(
            cx, a.siblings(qi), qi, task.requests, task.pe is not None)
    return None, why


#: a verdict not yet found (None is one: the check passes)
_UNKNOWN: Any = object()


def _resources_reason(a: Assignment, book: Book, qi: QInstance, slots: int) -> str | None:
    """Step 7's booking-dependent half: the ``-l`` requests on the three levels."""
    snap, task, cache = a.snap, a.task, a.cache
    prepared = None
    if cache is not None:  # the requests read once for the category
        prepared = cache.prepared
        if prepared is None:
            prepared = cache.prepared = matching.prepare_requests(snap.complexes, task.requests)
    rejected = matching.requests_reject(snap.complexes, book.levels(snap, qi), qi.name, task.requests, slots,
                                        prepared=prepared)
    return matching.resource_reason(snap.complexes, task.requests, *rejected) if rejected else None


def fits(a: Assignment, book: Book, qi: QInstance, slots: int) -> str | None:
    """None if ``qi`` can take ``slots`` more slots of the task (quotas
    aside), else the reason in Grid Engine's words."""
    cache = a.cache
    if cache is None:
        before, after = static_rejects(a, qi)
    else:
        static = cache.static.get(qi.name)
        if static is None:
            static = cache.static[qi.name] = static_rejects(a, qi)
        before, after = static
    if before:
        return before
    if qi.slots - book.qi_used[qi.name] < slots:
        return full_message(qi.name)  # 8.1.9's words (msg 47078)
    if after:
        return after
    if cache is not None and cache.resources_static:  # the -l check needs no booked amount
        # nor the slot count, unless a request is of a load value of the host
        # (compared with the request times the slots; a fixed value is not)
        host = a.snap.hosts.get(qi.host)
        load = host.load if host is not None else None
        key = (qi.name, slots if load and any(n in load for n in cache.asked) else 0)
        try:
            return cache.resources[key]
        except KeyError:
            why = cache.resources[key] = _resources_reason(a, book, qi, slots)
            return why
    return _resources_reason(a, book, qi, slots)


def fits_within_quotas(a: Assignment, book: Book, qi: QInstance, slots: int, pe: str | None = None) -> str | None:
    """:func:`fits`, then the resource quota sets (sge_resource_quota(5))."""
    return fits(a, book, qi, slots) or book.quota_refuses(a.task, qi, slots, pe)
