"""Request matching of the scheduler: does a job's ``-l`` fit a queue instance?

Pure functions over the scheduler's snapshot and working book (no I/O, no
clock).  complex(5) "Overriding attributes": an attribute may be attached to
the global object, a host and a queue at once; Grid Engine checks a request
against every level where the attribute exists (global, then host, then
queue), so a value on a lower level "overrides" only by being more
restrictive -- and ``==``/``!=`` values, which cannot be more restrictive,
must all match.  On one level a configured value and a load value merge:
for ``==``/``!=`` "the user defined value always overrides the load value";
otherwise the more restrictive of the two wins, and for a consumable with a
load value the more restrictive of (capacity - booked) and the load report.

The reasons are Grid Engine 8.1.9's (msg_schedd.h, sge_select_queue.c):
``(-l a=1,b=2) cannot run in queue "q@h" because it offers only qc:b=1.000000``;
the two letters say the level (g, h, q) and the kind of value (f fixed,
l load, c consumable).
"""

from __future__ import annotations

from dataclasses import dataclass

from minisge.formats import sge_types
from minisge.formats import complex as complex_fmt

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
    value: object  # float for numeric types, str for string types
    per_job: bool  # compare request * slots


def _type(attr) -> str:
    return str(attr.type.value if hasattr(attr.type, "value") else attr.type)


def _is_string(attr) -> bool:
    return _type(attr) in sge_types.STRING_TYPES


def _relop(attr) -> str:
    return str(attr.relop.value if hasattr(attr.relop, "value") else attr.relop)


def _consumable(attr) -> str:
    return str(attr.consumable.value if hasattr(attr.consumable, "value") else attr.consumable)


def _number(text) -> float | None:
    try:
        return sge_types.parse_number(str(text))
    except sge_types.SpecifierError:
        return None


def _more_restrictive(relop: str, a: float, b: float) -> float:
    """complex(5): of two values the one a request passes less easily
    (the smaller for ``<``/``<=``, the larger for ``>``/``>=``)."""
    return max(a, b) if relop in (">=", ">") else min(a, b)


def level_offer(attr, level: str, config: dict, consumed: dict, load: dict | None) -> Offer | None:
    """The offer of one level (global, host or queue) for ``attr``: its
    complex_values entry (a consumable: capacity less what is booked), merged
    with the level's load value as complex(5) says; None if the level knows
    nothing of it."""
    name = attr.name
    relop = _relop(attr)
    offer = None
    if name in config:
        if _is_string(attr):
            offer = Offer(level, "f", str(config[name]), False)
        else:
            cap = _number(config[name])
            if cap is None:
                return None
            if _consumable(attr) != "NO":
                used = consumed.get(name, 0.0)
                offer = Offer(level, "c", (used if relop in (">=", ">") else cap - used), True)
            else:
                offer = Offer(level, "f", cap, False)
    if load is None or name not in load:
        return offer
    raw = load[name]
    if _is_string(attr):
        if offer is None:
            return Offer(level, "l", str(raw), False)
        return offer  # a configured string value overrides the load value
    value = _number(raw)
    if value is None:
        return offer
    if offer is None:
        return Offer(level, "l", value, True)
    if relop in ("==", "!="):
        return offer  # "the user defined value always overrides the load value"
    if _more_restrictive(relop, offer.value, value) == offer.value:
        return offer
    return Offer(level, "l", value, True)


def format_value(attr, value) -> str:
    """A value as the scheduler prints it in a reason (compare_complexes)."""
    if _is_string(attr):
        return str(value)
    t = _type(attr)
    if t == "MEMORY":
        return sge_types.format_memory_value(value)
    if t == "TIME":
        return sge_types.format_time_value(value)
    if t == "BOOL":
        return "true" if value > 0 else "false"
    return sge_types.format_double(value)


def offer_satisfies(attr, requested: str, offer: Offer, slots: int) -> bool:
    """complex(5) relop: ``requested RELOP offered``; a per-job offer (load
    value, per-slot consumable) is compared with the request times the slots."""
    if _is_string(attr):
        return complex_fmt.compare(attr, requested, offer.value)
    req = _number(requested)
    if req is None:
        req = 0.0
    if offer.per_job:
        req *= slots
    return sge_types.relop_holds(_relop(attr), req, offer.value)


def reason_offers_only(attr, offer: Offer) -> str:
    return f"it offers only {offer.level}{offer.kind}:{attr.name}={format_value(attr, offer.value)}"


def excl_rejects(attr, exclusive: bool, config: dict, consumed: dict) -> str | None:
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


def request_text(cx, requests: dict) -> str:
    """The ``-l`` list of a reason: full names, sorted, ``name=value`` joined by commas."""
    items = []
    for key, value in requests.items():
        attr = cx.get(key)
        items.append((attr.name if attr is not None else key, value))
    return ",".join(f"{n}={v}" for n, v in sorted(items))
