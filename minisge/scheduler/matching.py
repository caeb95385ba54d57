"""Request matching (complex(5)): does a job's ``-l`` fit a queue instance?

Named for Grid Engine's request matching of sge_select_queue.c
(``compare_complexes``, ``ri_time_by_slots``, ``sge_queue_match_static``'s
FORCED check, ``request_cq_rejected``): pure functions over complex
attributes, the values of the three levels and what is booked on them.

complex(5) "Overriding attributes": an attribute may be attached to the
global object, a host and a queue at once; Grid Engine checks a request
against every level where the attribute exists (global, then host, then
queue), so a value on a lower level "overrides" only by being more
restrictive -- and ``==``/``!=`` values, which cannot be more restrictive,
must all match.  On one level a configured value and a load value merge:
for ``==``/``!=`` "the user defined value always overrides the load value";
otherwise the more restrictive of the two wins, and for a consumable with a
load value the more restrictive of (capacity - booked) and the load report.
Consumables the job does not request are checked with their default ("for
default request"); EXCL attributes admit an exclusive job only to an
object no job uses, and any other job only to one no exclusive job uses.

The reasons are Grid Engine 8.1.9's (msg_schedd.h, sge_select_queue.c):
``(-l a=1,b=2) cannot run in queue "q@h" because it offers only qc:b=1.000000``;
the two letters say the level (g, h, q) and the kind of value (f fixed,
l load, c consumable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from minisge.formats import complex as complex_fmt
from minisge.formats import rsmap, sge_types
from minisge.formats.complex import ComplexAttr, Consumable, Relop, ValueType
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.snapshot import HostInfo, QInstance

#: the key under which a level's book counts the jobs on an EXCL object
#: (complex(5) EXCL: "no other exclusive or non-exclusive jobs uses the complex")
EXCL_JOBS = "\0jobs:"


def excl_jobs_key(name: str) -> str:
    return EXCL_JOBS + name


@dataclass(frozen=True)
class Offer:
    """What one level offers for an attribute: the value to compare, how it
    is printed, the dominance letters, and whether a request is multiplied
    by the slots (load values and per-slot consumables are per job)."""

    level: str  # "g", "h", "q"
    kind: str  # "f" fixed, "l" load, "c" consumable
    value: float | str  # float for numeric types, str for string types
    per_job: bool  # compare request * slots


class Level(NamedTuple):
    """One complex(5) level of a queue instance as a pass checks it: its
    letter, where it is for a reason, its complex_values, what is booked on
    it and its load values (a host's only)."""

    letter: str  # "g", "h", "q"
    where: str  # 'globally', 'at host "h"', 'in queue "q@h"'
    config: Mapping[str, str]
    consumed: Mapping[str, float]
    load: Mapping[str, str] | None


def _number(text: str) -> float | None:
    """A number, or None; a resource map (sge_rsmap(5) ``2(0 1)``) counts its amount."""
    try:
        return sge_types.parse_number(rsmap.amount_text(str(text)))
    except sge_types.SpecifierError:
        return None


def _more_restrictive(relop: str, a: float, b: float) -> float:
    """complex(5): of two values the one a request passes less easily
    (the smaller for ``<``/``<=``, the larger for ``>``/``>=``)."""
    return max(a, b) if relop in (">=", ">") else min(a, b)


def level_offer(attr: ComplexAttr, level: str, config: Mapping[str, str], consumed: Mapping[str, float],
                load: Mapping[str, str] | None) -> Offer | None:
    """The offer of one level (global, host or queue) for ``attr``: its
    complex_values entry (a consumable: capacity less what is booked), merged
    with the level's load value as complex(5) says; None if the level knows
    nothing of it."""
    name = attr.name
    relop = attr.relop
    is_string = attr.type.is_string
    offer = None
    if name in config:
        if is_string:
            offer = Offer(level, "f", str(config[name]), False)
        else:
            cap = _number(config[name])
            if cap is None:
                return None
            if attr.consumable is not Consumable.NO:
                used = consumed.get(name, 0.0)
                offer = Offer(level, "c", (used if relop in (">=", ">") else cap - used), True)
            else:
                offer = Offer(level, "f", cap, False)
    if load is None or name not in load:
        return offer
    raw = load[name]
    if is_string:
        if offer is None:
            return Offer(level, "l", str(raw), False)
        return offer  # a configured string value overrides the load value
    value = _number(raw)
    if value is None:
        return offer
    if offer is None:
        return Offer(level, "l", value, True)
    if relop in ("==", "!=") or isinstance(offer.value, str):
        return offer  # "the user defined value always overrides the load value"
    if _more_restrictive(relop, offer.value, value) == offer.value:
        return offer
    return Offer(level, "l", value, True)


def format_value(attr: ComplexAttr, value: float | str) -> str:
    """A value as the scheduler prints it in a reason (compare_complexes)."""
    if isinstance(value, str):
        return value
    t = attr.type
    if t is ValueType.MEMORY:
        return sge_types.format_memory_value(value)
    if t is ValueType.TIME:
        return sge_types.format_time_value(value)
    if t is ValueType.BOOL:
        return "true" if value > 0 else "false"
    return sge_types.format_double(value)


def offer_satisfies(attr: ComplexAttr, requested: str, offer: Offer, slots: int) -> bool:
    """complex(5) relop: ``requested RELOP offered``; a per-job offer (load
    value, per-slot consumable) is compared with the request times the slots."""
    if isinstance(offer.value, str):
        return complex_fmt.compare(attr, requested, offer.value)
    req = _number(requested)
    if req is None:
        req = 0.0
    if offer.per_job:
        req *= slots
    return sge_types.relop_holds(attr.relop.value, req, offer.value)


def reason_offers_only(attr: ComplexAttr, offer: Offer) -> str:
    return f"it offers only {offer.level}{offer.kind}:{attr.name}={format_value(attr, offer.value)}"


def excl_rejects(attr: ComplexAttr, exclusive: bool, config: Mapping[str, str],
                 consumed: Mapping[str, float]) -> str | None:
    """complex(5) EXCL: an exclusive request fits only an object no job
    uses; any other job fits only an object no exclusive job uses.  The
    object is the level whose complex_values holds the attribute (true)."""
    if attr.name not in config or not (_number(config[attr.name]) or 0):
        return None
    if exclusive:
        if consumed.get(excl_jobs_key(attr.name), 0) > 0:
            return f"exclusive resource ({attr.name}) is already in use"
        return None
    if consumed.get(attr.name, 0) > 0:
        return f"for default request exclusive resource ({attr.name}) is already in use"
    return None


def request_text(cx: ComplexIndex, requests: Mapping[str, str]) -> str:
    """The ``-l`` list of a reason: full names, sorted, ``name=value`` joined by commas."""
    items = []
    for key, value in requests.items():
        attr = cx.get(key)
        items.append((attr.name if attr is not None else key, value))
    return ",".join(f"{n}={v}" for n, v in sorted(items))


def default_request(attr: ComplexAttr) -> str:
    """complex(5) ``default``: what a job that does not request ``attr`` is assumed to request."""
    return attr.default if attr.default not in ("", "NONE") else "0"


class PreparedRequests(NamedTuple):
    """What :func:`requests_reject` reads of the ``-l`` requests before it
    looks at a level (the same for every queue instance a task is tried on):
    the attributes with the values and the prefix of their reasons, the
    names of the EXCL ones requested, and the first unknown name."""

    attrs: tuple[tuple[ComplexAttr, str, str], ...]
    exclusive: frozenset[str]
    unknown: str | None


def prepare_requests(cx: ComplexIndex, requests: Mapping[str, str], defaults: bool = True) -> PreparedRequests:
    """:class:`PreparedRequests` of ``requests`` (``defaults``: with the
    consumables not requested, at their default, "for default request")."""
    attrs = []
    for name, value in requests.items():
        attr = cx.get(name)
        if attr is None:
            return PreparedRequests((), frozenset(), name)
        attrs.append((attr, value, ""))
    asked = {a.name for a, _v, _p in attrs}
    if defaults:
        for attr in cx.consumables():
            if attr.name == "slots" or attr.name in asked or attr.relop is Relop.EXCL:
                continue
            d = default_request(attr)
            if cx.numeric(attr.name, d):
                attrs.append((attr, d, "for default request "))
    exclusive = frozenset(a.name for a, v, _p in attrs if a.relop is Relop.EXCL and cx.numeric(a.name, v))
    return PreparedRequests(tuple(attrs), exclusive, None)


def requests_reject(cx: ComplexIndex, levels: Sequence[Level], qi_name: str, requests: Mapping[str, str],
                    slots: int, defaults: bool = True,
                    prepared: PreparedRequests | None = None) -> tuple[str, str] | None:
    """complex(5): does every ``-l`` request hold on every level (global,
    host, queue) that offers the attribute, counting what is booked, and
    does the EXCL rule let the job in?  Consumables the job does not request
    are checked with their default ("for default request").  None if all
    hold, else (where, reason); an attribute no level offers: "job requests
    unknown resource".  ``prepared``: :func:`prepare_requests` of the same
    requests and ``defaults``, if the caller kept it."""
    attrs, exclusive, unknown = prepare_requests(cx, requests, defaults) if prepared is None else prepared
    if unknown is not None:
        return f'in queue "{qi_name}"', f"job requests unknown resource ({unknown})"
    found: set[str] = set()
    for letter, where, config, consumed, load in levels:
        for attr in cx.exclusive:
            why = excl_rejects(attr, attr.name in exclusive, config, consumed)
            if why:
                return where, why
            if attr.name in config:
                found.add(attr.name)
        for attr, value, prefix in attrs:
            if attr.relop is Relop.EXCL:
                continue
            offer = level_offer(attr, letter, config, consumed, load)
            if offer is None:
                continue
            found.add(attr.name)
            n = 1 if attr.consumable is Consumable.JOB else slots
            if not offer_satisfies(attr, value, offer, n):
                return where, prefix + reason_offers_only(attr, offer)
    for attr, _value, prefix in attrs:
        if not prefix and attr.name not in found:
            return f'in queue "{qi_name}"', f"job requests unknown resource ({attr.name})"
    return None


def resource_reason(cx: ComplexIndex, requests: Mapping[str, str], where: str, why: str) -> str:
    """Grid Engine's words: ``(-l REQUESTS) cannot run in queue "q@h" because ...``."""
    return f"(-l {request_text(cx, requests)}) cannot run {where} because {why}"


def forced_rejects(cx: ComplexIndex, global_values: Mapping[str, str], host: HostInfo | None, qi: QInstance,
                   requests: Mapping[str, str]) -> str | None:
    """complex(5) requestable FORCED: a queue instance, host or the cell
    whose complex_values hold a forced attribute takes only jobs whose hard
    ``-l`` requests it (sge_select_queue.c job_is_forced_centry_missing)."""
    if not cx.forced:
        return None
    requested = set()
    for n in requests:
        attr = cx.get(n)
        if attr is not None:
            requested.add(attr.name)
    for attr in cx.forced:
        if attr.name in requested:
            continue
        if attr.name in global_values:
            return f"does not request globally 'forced' resource \"{attr.name}\""
        if host is not None and attr.name in host.values:
            return f"does not request 'forced' resource \"{attr.name}\" of host {qi.host}"
        if attr.name in qi.complex_value_names:
            return f"does not request 'forced' resource \"{attr.name}\" of queue instance {qi.name}"
    return None


def cqueue_request_rejects(cx: ComplexIndex, siblings: Sequence[QInstance], qi: QInstance,
                           requests: Mapping[str, str], parallel: bool) -> str | None:
    """sge_complex_schedd.c request_cq_rejected: a ``-l`` request that the
    configured value of every instance of the cluster queue (``siblings``)
    refuses (a numeric one only for a single slot, so not for a parallel
    job) rules the whole cluster queue out: ``(-l name=value) cannot run in
    queue "cq" because of cluster queue``."""
    for name, value in requests.items():
        attr = cx.get(name)
        if attr is None or attr.relop is Relop.EXCL:
            continue
        if parallel and not attr.type.is_string:
            continue
        refused = True
        for q in siblings:
            offered = q.values.get(attr.name)
            if offered is None:
                refused = False
                break
            try:
                if complex_fmt.compare(attr, value, offered):
                    refused = False
                    break
            except ValueError:  # an offer Grid Engine cannot read matches nothing
                continue
        if refused:
            return f'(-l {attr.name}={value}) cannot run in queue "{qi.cqueue}" because of cluster queue'
    return None
