"""Resource quota sets at work: what the scheduler checks and qquota shows.

sge_resource_quota(5): "All of the configured and enabled rule sets apply
all of the time ... the most restrictive set is used"; inside a set "the
first rule that matches a specific request will be used"; a braced filter
``{...}`` limits each consumer alone, a plain list all of them together.

Pure: a :class:`QuotaContext` (the enabled sets, the complex list, access
lists, host groups, the values dynamic limits read, the running tasks) goes
into a :class:`QuotaLedger`, the working copy of the usage.  The scheduler
asks :meth:`QuotaLedger.check` before it places a task and calls
:meth:`QuotaLedger.debit` for every task it places, so two tasks that each
fit alone but not together do not both start.  :func:`report` gives the
lines of ``qquota``.

The meaning of a single rule (matching, usage keys, limit values) is
:mod:`minisge.formats.resource_quota`'s; this module adds the counting.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from minisge.formats import resource_quota as rq
from minisge.formats.complex import ComplexAttr, Consumable, ValueType
from minisge.formats.errors import FormatError
from minisge.formats.sge_types import SpecifierError, format_double, format_memory_value, format_time_value
from minisge.scheduler.complexes import ComplexIndex

#: a qquota filter column item: (kind, ((name, excluded), ...), text as printed)
FilterItem = tuple[str, tuple[tuple[str, bool], ...], str]


@dataclass(frozen=True)
class QuotaRequest:
    """What a task asks of one queue instance, or holds there when running.

    ``requests`` are the hard ``-l`` requests as text (names or shortcuts);
    a parallel task holding several queue instances is one request per
    instance, ``master`` true for the first (per-job consumables are debited
    there only)."""

    user: str
    project: str | None
    pe: str | None
    cqueue: str
    host: str
    slots: int = 1
    requests: Mapping[str, str] = field(default_factory=dict)
    master: bool = True
    group: str | None = None


@dataclass(frozen=True)
class QuotaContext:
    """Everything quota evaluation reads.

    ``complexes`` answers ``get(name)`` (attribute with ``name``,
    ``shortcut``, ``type``, ``consumable``, ``default``), ``numeric(name,
    text)`` and ``compare(name, requested, offered)``.  ``acls``: access
    list name -> entries; ``hostgroups``: ``@name`` -> hosts (resolved);
    ``host_values``: host -> complex name -> number, what ``$complex`` in a
    dynamic limit reads (load values, host and global complex values)."""

    sets: tuple[rq.ResourceQuotaSet, ...]
    complexes: ComplexIndex
    acls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hostgroups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    host_values: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    running: tuple[QuotaRequest, ...] = ()  # every running task's queue instances

    @property
    def enabled_sets(self) -> tuple[rq.ResourceQuotaSet, ...]:
        """"If set to true the resource quota set is active": the others never limit."""
        return tuple(s for s in self.sets if s.enabled)


def _request_text(attr: ComplexAttr, requests: Mapping[str, str]) -> str | None:
    """The job's request for ``attr``, by name or shortcut."""
    if attr.name in requests:
        return requests[attr.name]
    sc = attr.shortcut
    if sc and sc in requests:
        return requests[sc]
    return None


def contribution(ctx: QuotaContext, attr: ComplexAttr, req: QuotaRequest) -> float:
    """How much of consumable ``attr`` a request counts against a limit.

    As Grid Engine debits a rule: ``slots`` is 1 per slot even when not
    requested; another consumable is its request or else its complex
    default, times the slots -- a per-job consumable (``JOB``) once, on the
    master queue only."""
    if attr.name == "slots":
        per = 1.0
        text = _request_text(attr, req.requests)
        if text is not None:
            per = ctx.complexes.numeric(attr.name, text)
    else:
        text = _request_text(attr, req.requests)
        if text is None:
            text = attr.default
            if text in ("", "NONE"):
                return 0.0
        try:
            per = ctx.complexes.numeric(attr.name, text)
        except SpecifierError:  # a default the type cannot read counts nothing
            return 0.0
    if attr.consumable is Consumable.JOB:
        return per if req.master else 0.0
    return per * req.slots


@dataclass(frozen=True)
class Exceeded:
    """A request a rule refuses: the set/rule label, the usage key, the limit."""

    rule_label: str
    key: str
    limit: str

    def __str__(self) -> str:
        # MSG_SCHEDD_INFO_CANNOTRUNRQSGLOBAL_SS
        return f'cannot run because it exceeds limit "{self.key}" in rule "{self.rule_label}"'


#: where a limit's usage is counted: (set name, rule index, complex name)
UsageSlot = tuple[str, int, str]


def _usage_slot(rqs: rq.ResourceQuotaSet, index: int, limit_name: str) -> UsageSlot:
    return (rqs.name, index, limit_name)


class QuotaLedger:
    """The usage of every limit of every enabled set, by consumer key.

    Built from the running tasks of the context; :meth:`debit` adds a task
    placed in this scheduling pass."""

    def __init__(self, ctx: QuotaContext):
        self.ctx = ctx
        self.sets = ctx.enabled_sets
        self.usage: dict[UsageSlot, dict[str, float]] = {}
        for req in ctx.running:
            self.debit(req)

    # -------------------------------------------------------------- matching
    def matching(self, rqs: rq.ResourceQuotaSet, req: QuotaRequest) -> tuple[int, rq.QuotaRule] | None:
        """The set's first rule matching the request: ``(index, rule)`` or None."""
        return rq.matching_rule(
            rqs, req.user, req.project, req.pe, req.cqueue, req.host,
            self.ctx.acls, self.ctx.hostgroups, req.group,
        )

    def limit_value(self, limit: rq.Limit, host: str) -> float:
        """A static limit's number, or a dynamic one evaluated on ``host``."""
        return rq.evaluate_limit(limit, self.ctx.host_values.get(host, {}))

    # -------------------------------------------------------------- booking
    def debit(self, req: QuotaRequest, sign: int = 1) -> None:
        """Count a task's consumables against the matching rule of each set."""
        cx = self.ctx.complexes
        for rqs in self.sets:
            m = self.matching(rqs, req)
            if m is None:
                continue
            index, rule = m
            key = rq.consumer_key(rule, req.user, req.project, req.pe, req.cqueue, req.host)
            for limit in rule.limits:
                attr = cx.get(limit.complex_name)
                if attr is None or not attr.is_consumable:
                    continue
                amount = contribution(self.ctx, attr, req)
                if amount == 0:
                    continue
                usage = self.usage.setdefault(_usage_slot(rqs, index, attr.name), {})
                usage[key] = usage.get(key, 0.0) + sign * amount
                if usage[key] <= 0:
                    del usage[key]

    def used(self, rqs: rq.ResourceQuotaSet, index: int, limit_name: str, key: str) -> float:
        return self.usage.get(_usage_slot(rqs, index, limit_name), {}).get(key, 0.0)

    # -------------------------------------------------------------- checking
    def check(self, req: QuotaRequest) -> Exceeded | None:
        """None if the request fits every enabled set, else the first refusal.

        Every set applies (the most restrictive wins: one refusal is enough);
        in a set only the first matching rule counts.  A consumable limit
        holds when usage + the request's contribution stays within it; a
        non-consumable limit caps what a job may request of it."""
        for rqs in self.sets:
            m = self.matching(rqs, req)
            if m is None:
                continue
            index, rule = m
            why = self._rule_refuses(rqs, index, rule, req)
            if why is not None:
                return why
        return None

    def _rule_refuses(self, rqs: rq.ResourceQuotaSet, index: int, rule: rq.QuotaRule,
                      req: QuotaRequest) -> Exceeded | None:
        cx = self.ctx.complexes
        key = rq.consumer_key(rule, req.user, req.project, req.pe, req.cqueue, req.host)
        for limit in rule.limits:
            attr = cx.get(limit.complex_name)
            if attr is None:  # "undefined centries can be ignored"
                continue
            label = rq.rule_label(rqs, index)
            if attr.is_consumable:
                amount = contribution(self.ctx, attr, req)
                if amount == 0:
                    continue
                try:
                    cap = self.limit_value(limit, req.host)
                except FormatError:
                    continue
                if self.used(rqs, index, attr.name, key) + amount > cap + 1e-9:
                    return Exceeded(label, key, str(limit))
            else:
                requested = _request_text(attr, req.requests)
                if requested is not None and not cx.compare(attr.name, requested, limit.value_expr):
                    return Exceeded(label, key, str(limit))
        return None


def exceeded_anywhere(ctx: QuotaContext, placed: Iterable[QuotaRequest]) -> list[str]:
    """Every limit that the running tasks plus ``placed`` exceed (an empty
    list when all quotas hold): the check a plan must pass."""
    ledger = QuotaLedger(ctx)
    for req in placed:
        ledger.debit(req)
    problems = []
    cx = ctx.complexes
    hosts_of_key: dict[tuple[str, int, str], set[str]] = {}
    for req in list(ctx.running) + list(placed):
        for rqs in ledger.sets:
            m = ledger.matching(rqs, req)
            if m is None:
                continue
            index, rule = m
            key = rq.consumer_key(rule, req.user, req.project, req.pe, req.cqueue, req.host)
            hosts_of_key.setdefault((rqs.name, index, key), set()).add(req.host)
    for rqs in ledger.sets:
        for index, rule in enumerate(rqs.rules):
            for limit in rule.limits:
                attr = cx.get(limit.complex_name)
                if attr is None or not attr.is_consumable:
                    continue
                for key, used in ledger.usage.get(_usage_slot(rqs, index, attr.name), {}).items():
                    for host in hosts_of_key.get((rqs.name, index, key), ()):
                        if used > ledger.limit_value(limit, host) + 1e-9:
                            problems.append(f"{rq.rule_label(rqs, index)} {key} {limit}: {used:g}")
    return problems


# ---------------------------------------------------------------------------
# qquota


@dataclass(frozen=True)
class QquotaQuery:
    """qquota's selection: ``-u``, ``-P``, ``-pe``, ``-q``, ``-h`` lists of
    wildcard names (empty: ``*``, users: the calling user) and ``-l``."""

    users: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    pes: tuple[str, ...] = ()
    queues: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()


@dataclass(frozen=True)
class QquotaRow:
    """One line of qquota: rule label, resource, limit text, usage text
    (None for a non-consumable limit) and the effective filter as
    ``(kind, ((name, excluded), ...), display text)`` items."""

    rule: str
    resource: str
    limit: str
    value: str | None
    filters: tuple[FilterItem, ...] = ()

    @property
    def filter_text(self) -> str:
        """The filter column: ``users {*} hosts vm`` ..., or ``-``."""
        return " ".join(f"{kind} {display}" for kind, _entries, display in self.filters) or "-"


def _query_hit(entry: str, kind: str, query: str, ctx: QuotaContext) -> bool:
    """Does a qquota selection value (maybe a wildcard) meet a filter entry?"""
    if entry == "*" or query == "*" or entry == query:
        return True
    if fnmatch.fnmatchcase(query, entry) or fnmatch.fnmatchcase(entry, query):
        return True
    if kind == "users" and entry.startswith("@"):
        return query in ctx.acls.get(entry[1:], ())
    if kind == "hosts" and entry.startswith("@"):
        return query.lower() in {h.lower() for h in ctx.hostgroups.get(entry, ())}
    return False


def _query_matches(flt: rq.Filter | None, kind: str, query: str, ctx: QuotaContext) -> bool:
    """A rule's filter against one qquota selection value: excluded by a
    ``!`` entry it names, else in scope if there is no plain entry or one
    meets it (wildcards compare both ways, as qquota does)."""
    if flt is None:
        return True
    for e in flt.entries:
        if e.negated and query != "*" and e.name != "*" and _query_hit(e.name, kind, query, ctx):
            return False
    plain = [e for e in flt.entries if not e.negated]
    return not plain or any(_query_hit(e.name, kind, query, ctx) for e in plain)


def format_amount(attr: ComplexAttr, value: float) -> str:
    """A consumable's number as qquota prints it (sge_get_dominant_stringval)."""
    t = attr.type
    if t is ValueType.MEMORY:
        return format_memory_value(value)
    if t is ValueType.TIME:
        return format_time_value(value)
    if t is ValueType.INT:
        return "infinity" if math.isinf(value) else f"{value:.0f}"
    return format_double(value)


def _key_parts(key: str) -> list[str]:
    """``user/project/pe/queue/host/`` -> five values, ``-`` for empty."""
    parts = key.split("/")[:5]
    return [p or "-" for p in parts + [""] * (5 - len(parts))]


def _key_selected(parts: list[str], sel: Mapping[str, str], ctx: QuotaContext) -> bool:
    """qquota keeps a usage entry when each part of its key is unset or
    matches the selection (an ``@acl`` / ``@hostgroup`` selection by
    membership)."""
    for kind, value in zip(rq.FILTER_NAMES, parts, strict=True):
        want = sel[kind]
        if value == "-" or want == "*":
            continue
        if want.startswith("@") and kind == "users":
            if want[1:] in ctx.acls and value not in ctx.acls[want[1:]]:
                return False
            continue
        if want.startswith("@") and kind == "hosts":
            if want in ctx.hostgroups and value.lower() not in {h.lower() for h in ctx.hostgroups[want]}:
                return False
            continue
        if not fnmatch.fnmatchcase(value, want):
            return False
    return True


def _filter_items(rule: rq.QuotaRule, values: Mapping[str, str | None]) -> tuple[FilterItem, ...]:
    """The effective filter of a printed rule: a braced filter shows the
    consumer of the usage entry, any other its configured list."""
    items: list[FilterItem] = []
    for kind in rq.FILTER_NAMES:
        flt = rule.filter(kind)
        if flt is None:
            continue
        v = values.get(kind)
        if flt.expand and v is not None:
            items.append((kind, ((v, False),), v))
        else:
            items.append((kind, tuple((e.name, e.negated) for e in flt.entries), str(flt)))
    return tuple(items)


def report(ctx: QuotaContext, query: QquotaQuery, caller: str) -> list[QquotaRow]:
    """The lines of ``qquota``: for each enabled set, each rule matching the
    selection, each limit on a defined complex (of ``-l``, if given): a
    consumable limit once per usage entry with positive usage, a static
    (non-consumable) limit once; the same line never twice."""
    ledger = QuotaLedger(ctx)
    cx = ctx.complexes
    rows: list[QquotaRow] = []
    seen: set[tuple[str, str, bool, tuple[FilterItem, ...]]] = set()
    for rqs in ledger.sets:
        for index, rule in enumerate(rqs.rules):
            for sel in _selections(query, caller):
                if not all(_query_matches(rule.filter(k), k, sel[k], ctx) for k in rq.FILTER_NAMES):
                    continue
                for limit in rule.limits:
                    attr = cx.get(limit.complex_name)
                    if attr is None:
                        continue
                    if query.resources and not ({attr.name, attr.shortcut} & set(query.resources)):
                        continue
                    label = rq.rule_label(rqs, index)
                    for row in _limit_rows(ledger, rqs, index, rule, limit, attr, label, sel):
                        token = (row.rule, row.resource, row.value is None, row.filters)
                        if token not in seen:
                            seen.add(token)
                            rows.append(row)
    return rows


def _selections(query: QquotaQuery, caller: str) -> Iterator[dict[str, str]]:
    """Every combination of the selection lists (qquota's nested loops)."""
    lists = [query.users or (caller,), query.projects or ("*",), query.pes or ("*",),
             query.queues or ("*",), query.hosts or ("*",)]
    for combo in itertools.product(*lists):
        yield dict(zip(rq.FILTER_NAMES, combo, strict=True))


def _limit_rows(ledger: QuotaLedger, rqs: rq.ResourceQuotaSet, index: int, rule: rq.QuotaRule, limit: rq.Limit,
                attr: ComplexAttr, label: str, sel: Mapping[str, str]) -> Iterator[QquotaRow]:
    """The lines of one limit: a non-consumable's configured value once; a
    consumable's ``used/limit`` per usage entry the selection keeps (a
    dynamic limit evaluated on the entry's host, printed as an integer)."""
    if not attr.is_consumable:
        yield QquotaRow(label, attr.name, limit.value_expr, None, _filter_items(rule, {}))
        return
    usage = ledger.usage.get(_usage_slot(rqs, index, attr.name), {})
    for key in sorted(usage):
        used = usage[key]
        parts = _key_parts(key)
        if not _key_selected(parts, sel, ledger.ctx):
            continue
        host = parts[4]
        if limit.is_dynamic:
            cap_text = f"{int(ledger.limit_value(limit, host))}"
        else:
            cap_text = format_amount(attr, rq.static_limit_value(limit.value_expr))
        values = dict(zip(rq.FILTER_NAMES, parts, strict=True))
        yield QquotaRow(label, attr.name, cap_text, format_amount(attr, used), _filter_items(rule, values))


def rows_to_wire(rows: list[QquotaRow]) -> list[dict[str, object]]:
    """Rows as plain data for the reply to the qquota command."""
    return [
        {
            "rule": r.rule,
            "resource": r.resource,
            "limit": r.limit,
            "value": r.value,
            "filter": r.filter_text,
            "filters": [[kind, [[n, x] for n, x in entries]] for kind, entries, _display in r.filters],
        }
        for r in rows
    ]
