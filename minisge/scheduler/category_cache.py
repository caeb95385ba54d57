"""Job categories, and what one scheduling pass remembers per category.

Named for Grid Engine's sge_category.c: jobs with equal requests share one
category, so a category found unplaceable is not tried again in the same
pass, and Grid Engine keeps per category the queue instances whose fixed
properties already rule it out (the ``cqueue_match_static`` and
"dispatch_static" results).  As slots are booked within a pass the free
slots, consumables and quotas change, but a queue instance's state, access
lists, qtype, PE list, hard ``-q`` match, FORCED attributes and the fixed
values that a request is compared with do not.  :class:`CategoryCache`
holds those booking-independent verdicts of
:func:`minisge.scheduler.queue_match.fits` for one category, so that only
the booking-dependent checks run again for every job of the category.

A job category (:func:`job_category`) holds every field of a pending task
that decides where it may run, so a verdict found for one task holds for
every task of its category.  A pass without the caches (``schedule(snap,
caches=False)``) is the plain reference path the tests compare with.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from minisge.formats.complex import ComplexAttr, Consumable
from minisge.formats.sge_types import SpecifierError
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.matching import PreparedRequests, default_request
from minisge.scheduler.snapshot import PendingTask

#: a job category: the values of :data:`CATEGORY_FIELDS`, made hashable
Category = tuple[object, ...]

# PendingTask fields that say who the task is or when it goes, not what it needs
_NOT_CATEGORY = frozenset({"job_id", "task_id", "priority", "submission_time", "deadline", "held",
                            "execution_time"})
CATEGORY_FIELDS = tuple(f.name for f in dataclasses.fields(PendingTask) if f.name not in _NOT_CATEGORY)

_PLAIN = (str, int, float, bool, type(None), tuple, frozenset)
_category_values = operator.attrgetter(*CATEGORY_FIELDS)
# the category fields that hold mappings (hard and soft -l requests)
_DICT_AT = tuple(i for i, f in enumerate(f for f in dataclasses.fields(PendingTask) if f.name in CATEGORY_FIELDS)
                 if f.default_factory is dict or str(f.type).startswith(("Mapping", "dict")))


def _hashable(value: object) -> object:
    """A field's value as part of a dict key (dicts as sorted item tuples)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return tuple(sorted(value.items())) if value else ()
    if isinstance(value, (list, set)):
        return tuple(_hashable(v) for v in value)
    return value


def job_category(task: PendingTask) -> Category:
    """The job category (Grid Engine's sge_category): every request that
    decides where a task may run -- resources, queues, PE, and owner, group
    and project for access lists and quotas -- so every PendingTask field but
    its identity and its place in the order.  Tasks of one category fit or
    fail alike; a category found unplaceable is not tried again in the pass.
    Remembered in the (immutable) task: a snapshot may hand a pass the same
    task objects as the pass before."""
    kept = task.__dict__.get(_KEPT)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    category = _category(task)
    object.__setattr__(task, _KEPT, category)
    return category


#: the name a task keeps its category under (no field: not compared, not printed)
_KEPT = "_category"


def job_categories(tasks: Sequence[PendingTask]) -> list[Category]:
    """:func:`job_category` of each of ``tasks``, in one sweep (a pass's
    dispatch order: those kept in the tasks read without a call each)."""
    kept = [t.__dict__.get(_KEPT) for t in tasks]
    if None in kept:
        kept = [job_category(t) if c is None else c for t, c in zip(tasks, kept, strict=True)]
    return kept  # type: ignore[return-value]


def _category(task: PendingTask) -> Category:
    values: Any = _category_values(task)
    if _DICT_AT:
        values = list(values)
        for i in _DICT_AT:
            v = values[i]
            values[i] = tuple(sorted(v.items())) if v else ()
    try:
        hash(values := tuple(values))
    except TypeError:  # some other unhashable value: the general way
        values = tuple(_hashable(v) for v in values)
    return tuple(values)


class CategoryCache:
    """The booking-independent verdicts of one job category in one pass."""

    __slots__ = ("static", "resources", "resources_static", "asked", "access", "queue", "cq_request", "prepared")

    def __init__(self, resources_static: bool, access: dict[str, str | None] | None = None,
                 asked: tuple[str, ...] = (),
                 queue: dict[str, tuple[str | None, str | None]] | None = None) -> None:
        # queue instance -> (reason before, after the free-slot check)
        self.static: dict[str, tuple[str | None, str | None]] = {}
        # queue instance -> access verdict (shared by the categories of one
        # owner, group and project: queue_conf(5) user_lists, projects)
        self.access: dict[str, str | None] = {} if access is None else access
        # queue instance -> its verdicts that ask nothing of the owner (queue
        # state or -q, qtype or FORCED: shared by the categories of one
        # queue shape, :func:`queue_shape`)
        self.queue: dict[str, tuple[str | None, str | None]] = {} if queue is None else queue
        self.cq_request: dict[str, str | None] = {}  # cluster queue -> its fixed values' -l verdict
        # (queue instance, slots) -> -l verdict, if static; slots 0: the verdict
        # of every slot count (no request is of a load value there, see fits())
        self.resources: dict[tuple[str, int], str | None] = {}
        self.resources_static = resources_static
        self.asked = asked  # the complex attributes the -l requests name (full names)
        self.prepared: PreparedRequests | None = None  # the -l requests as the check reads them, once made


def queue_shape(task: PendingTask) -> tuple[object, ...]:
    """What the verdicts of a queue instance that ask nothing of the owner
    depend on (queue_match.static_rejects): ``-q``, ``-masterq``, whether
    the task is of a PE and interactive, and the ``-l`` requests."""
    return (task.queues, task.master_queues, task.pe is not None, task.interactive,
            tuple(sorted(task.requests.items())))


def asked_names(cx: ComplexIndex, requests: Mapping[str, str]) -> tuple[str, ...]:
    """The full names of the complex attributes ``requests`` name (a
    shortcut's attribute by its name; unknown names left out)."""
    return tuple(attr.name for name in requests if (attr := cx.get(name)) is not None)


def resources_are_static(cx: ComplexIndex, requests: Mapping[str, str],
                         excl_attrs: Sequence[ComplexAttr]) -> bool:
    """complex(5): whether the ``-l`` check of a task can change as the pass
    books slots: not when no level's booked amount takes part in it -- no
    EXCL attribute exists, no request names a consumable, and no
    consumable is debited "for default request" (a non-zero default)."""
    if excl_attrs:
        return False
    asked = set()
    for name in requests:
        attr = cx.get(name)
        if attr is None:
            continue  # "job requests unknown resource": the same every time
        if attr.consumable is not Consumable.NO:
            return False
        asked.add(attr.name)
    for attr in cx.consumables():
        if attr.name == "slots" or attr.name in asked:
            continue
        try:
            if cx.numeric(attr.name, default_request(attr)):
                return False
        except SpecifierError:  # an unreadable default: let the plain check decide every time
            return False
    return True
