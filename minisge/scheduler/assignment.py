"""One task being placed in one pass: the state every placement check reads.

Named for Grid Engine's ``sge_assignment_t``, the record each queue
selection function of sge_select_queue.c takes (the job, its category, the
cell's lists): here the snapshot, the task, its category's cache (None on
the plain path) and what the pass derived from the snapshot once (the
queue instances of each cluster queue).  The pass makes one per task it
tries to place; nothing is stored on the snapshot.  :class:`Discard` is the
reasons list of a placement try whose reasons nobody reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from minisge.scheduler.category_cache import CategoryCache
from minisge.scheduler.snapshot import PendingTask, QInstance, Snapshot


def by_cqueue(qinstances: Iterable[QInstance]) -> dict[str, list[QInstance]]:
    """The queue instances of each cluster queue, in snapshot order."""
    out: dict[str, list[QInstance]] = {}
    for q in qinstances:
        out.setdefault(q.cqueue, []).append(q)
    return out


class Assignment:
    """The placement of ``task`` under way (see the module docstring)."""

    __slots__ = ("snap", "task", "cache", "cqueues")

    def __init__(self, snap: Snapshot, task: PendingTask, cache: CategoryCache | None,
                 cqueues: Mapping[str, Sequence[QInstance]]) -> None:
        self.snap = snap
        self.task = task
        self.cache = cache
        self.cqueues = cqueues

    def siblings(self, qi: QInstance) -> Sequence[QInstance]:
        """The instances of ``qi``'s cluster queue."""
        return self.cqueues.get(qi.cqueue, ())


class Discard(list[str]):
    """The reasons list of a placement try whose reasons nobody reads (the
    pass's first, fast try on the instances with a free slot): it keeps
    nothing, and tells the PE placement it may look at hosts lazily."""

    __slots__ = ()

    def append(self, _item: str) -> None:
        pass

    def extend(self, _items: Iterable[str]) -> None:
        pass
