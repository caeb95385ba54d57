"""The order in which a task's suitable queue instances are taken.

Named for sched_conf(5) ``queue_sort_method``: ``seqno`` sorts the queue
instances by their ``seq_no``, ``load`` by the ``load_formula`` of their
host (then ``seq_no``); the name breaks ties.  A task with ``-soft``
requests takes the instances with the fewest soft violations first, the
queue sort among equals (sge_select_queue.c ``compute_soft_violations``).
"""

from __future__ import annotations

from collections.abc import Iterable

from minisge.scheduler import matching
from minisge.scheduler.assignment import Assignment
from minisge.scheduler.booking import Book
from minisge.scheduler.queue_match import queues_match
from minisge.scheduler.snapshot import QInstance, Snapshot


def ranked(snap: Snapshot, qis: Iterable[QInstance]) -> list[QInstance]:
    """``qis`` in queue sort order (sched_conf(5) queue_sort_method)."""
    load_of = snap.load_of
    if snap.queue_sort_method == "seqno" or load_of is None:
        return sorted(qis, key=lambda q: (q.seq_no, q.name))

    def key(q: QInstance) -> tuple[float, int, str]:
        host = snap.hosts.get(q.host)
        return (load_of(host) if host else 0.0, q.seq_no, q.name)

    return sorted(qis, key=key)


def soft_violations(a: Assignment, book: Book, qi: QInstance) -> int:
    """sge_select_queue.c compute_soft_violations: the ``-soft -l`` requests
    that ``qi`` does not meet (for one slot), plus one for every ``-soft -q``
    entry that does not name it."""
    snap, task = a.snap, a.task
    n = 0
    levels = book.levels(snap, qi)
    for name, value in task.soft_requests.items():
        if matching.requests_reject(snap.complexes, levels, qi.name, {name: value}, 1, defaults=False) is not None:
            n += 1
    n += sum(1 for p in task.soft_queues if not queues_match((p,), qi, snap))
    return n


def by_soft_violations(a: Assignment, book: Book, qis: list[QInstance]) -> list[QInstance]:
    """Grid Engine sorts the suitable queue instances by soft violations
    first, then by the queue sort (stable: the load/seq_no order among equals)."""
    task = a.task
    if not task.soft_requests and not task.soft_queues:
        return qis
    return sorted(qis, key=lambda q: soft_violations(a, book, q))
