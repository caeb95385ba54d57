"""What one scheduling pass remembers per job category (no I/O, no clock).

Grid Engine's scheduler keeps, per job category, the queue instances whose
fixed properties already rule the category out (sge_category.c, the
``cqueue_match_static`` and "dispatch_static" results): as slots are booked
within a pass the free slots, consumables and quotas change, but a queue
instance's state, access lists, qtype, PE list, hard ``-q`` match, FORCED
attributes and the fixed values that a request is compared with do not.
:class:`CategoryCache` holds those booking-independent verdicts of
``scheduler._fits`` for one category, so that only the booking-dependent
checks run again for every job of the category.

A job category (``scheduler._category``) holds every field of a pending task
that decides where it may run, so a verdict found for one task holds for
every task of its category.  ``ENABLED = False`` turns the caches off: the
plain reference path (tests compare both on random snapshots).
"""

from __future__ import annotations

from minisge import sched_match

#: set to False to run every check afresh (the reference path of the tests)
ENABLED = True


class CategoryCache:
    """The booking-independent verdicts of one job category in one pass."""

    __slots__ = ("static", "resources", "resources_static", "pe_list", "access", "cq_request")

    def __init__(self, resources_static: bool, access: dict | None = None):
        self.static: dict[str, tuple] = {}  # qinstance name -> (reason before, after the free-slot check)
        self.access = {} if access is None else access  # qinstance name -> access verdict (shared by
        # the categories of one owner, group and project: queue_conf(5) user_lists, projects)
        self.cq_request: dict[str, str | None] = {}  # cluster queue -> its fixed values' -l verdict
        self.resources: dict[tuple, object] = {}  # (qinstance name, slots) -> -l verdict, if static
        self.resources_static = resources_static
        self.pe_list: dict[tuple, str | None] = {}  # (pe name, qinstance name) -> "not in PE list" reason


def resources_are_static(cx, requests, excl_attrs) -> bool:
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
        if sched_match._consumable(attr) != "NO":
            return False
        asked.add(attr.name)
    consumables = getattr(cx, "consumables", None)
    for attr in (consumables() if consumables is not None else ()):
        if attr.name == "slots" or attr.name in asked:
            continue
        default = attr.default if attr.default not in ("", "NONE") else "0"
        try:
            if cx.numeric(attr.name, default):
                return False
        except Exception:  # an unreadable default: let the plain check decide every time
            return False
    return True


class Discard(list):
    """The reasons list of a placement try whose reasons nobody reads (the
    pass's first, fast try on the instances with a free slot): it keeps
    nothing, and tells the PE placement it may look at hosts lazily."""

    __slots__ = ()

    def append(self, _item) -> None:
        pass

    def extend(self, _items) -> None:
        pass


class LazyHosts:
    """The suitable hosts of a PE placement (lists of queue instances, hosts
    in the order of their first suitable instance in ``ranked``), found only
    as far as the allocation rule walks them: ``$pe_slots`` usually stops at
    the first host.  Iterable again and again, like the list it stands for;
    ``fits(qi)`` must not change while it is in use (no quotas: their
    ledger is shared with the trials)."""

    def __init__(self, ranked, fits):
        self._ranked = ranked
        self._fits = fits
        self._pos = 0
        self._hosts: list[list] = []
        self._seen: set = set()
        self._by_host: dict | None = None

    def __iter__(self):
        i = 0
        while i < len(self._hosts) or self._advance():
            yield self._hosts[i]
            i += 1

    def _advance(self) -> bool:
        """Find the next host with a suitable instance; False at the end."""
        ranked, fits = self._ranked, self._fits
        while self._pos < len(ranked):
            qi = ranked[self._pos]
            self._pos += 1
            if qi.host in self._seen or not fits(qi):
                continue
            self._seen.add(qi.host)
            if self._by_host is None:
                self._by_host = {}
                for q in ranked:
                    self._by_host.setdefault(q.host, []).append(q)
            same = self._by_host[qi.host]
            later = same[next(i for i, q in enumerate(same) if q is qi) + 1:]
            self._hosts.append([qi, *(q for q in later if fits(q))])
            return True
        return False
