"""sge_resource_quota(5): resource quota sets (RQS).

A file holds zero or more rule sets, each in braces, as ``qconf -srqs``
prints them::

    {
       name         max_u_slots
       description  "All users max use of 100 slots"
       enabled      TRUE
       limit        users {*} hosts {@lx_host} to slots=$num_proc*2,h_vmem=4G
    }

:func:`parse` reads one set, :func:`parse_sets` any number; :func:`write`
and :func:`write_sets` print them byte for byte as Grid Engine 8.1 does.
The pure functions at the end give the rules their meaning: which rule of a
set applies to a request (:func:`matching_rule`, :func:`rule_matches`), the
key under which usage is counted (:func:`consumer_key`), the expansion of
``{...}`` filters into one rule per consumer (:func:`expand`), and the value
of a static or dynamic limit (:func:`evaluate_limit`).

What Grid Engine does that the page does not say, and this module follows
(checked against the real ``qconf -Arqs`` / ``qconf -srqs``):

* ``name``, ``description`` and ``enabled`` come in any order but before the
  first ``limit``; the keywords of a limit rule come in any order and are
  written back as ``name users projects pes queues hosts to``.
* In a filter, plain entries are written before ``!`` entries.
* ``enabled`` takes true/t/yes/y/1 and false/f/no/n/0 (any case) and is
  written ``TRUE``/``FALSE``; when missing it is FALSE.
* ``description`` is the rest of the line with white space runs made one
  space, kept as written (quotes included); when missing it is ``NONE``.
* White space separates the words of a rule, so a list holds no blanks
  (``{a, b}`` is rejected) -- except after a comma at a continued line end,
  where the continuation joins with nothing (``a, \\`` + ``b`` is ``a,b``).
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple, Protocol

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import add_line_breaks
from minisge.formats.sge_types import SpecifierError, parse_memory, parse_time

#: The filter keywords of a limit rule, in the order Grid Engine writes them.
FILTER_NAMES = ("users", "projects", "pes", "queues", "hosts")

#: What a dynamic limit evaluates to when a complex it uses has no value on
#: the host (ERROR_LOAD_VAL in the scheduler): "a large value ... to suggest
#: an overloaded condition".
ERROR_LOAD_VALUE = 9999.0

_VALUE_COLUMN = 13  # "   name         x": names padded to 13 after 3 blanks
_INDENT = "   "

# ---------------------------------------------------------------------------
# model


@attrs.frozen
class FilterEntry:
    """One element of a filter list: a name (user, ``@acl``, project, PE,
    queue, host, ``@hostgroup``, a wildcard pattern or ``*``), maybe ``!``."""

    name: str
    negated: bool = False

    def __str__(self) -> str:
        return ("!" if self.negated else "") + self.name


def _plain_before_negated(entries: Iterable[FilterEntry]) -> tuple[FilterEntry, ...]:
    """Grid Engine keeps a filter as a scope list and an exclusion list and
    writes the scope first; the model holds the entries in that order."""
    entries = tuple(entries)
    return tuple(e for e in entries if not e.negated) + tuple(e for e in entries if e.negated)


@attrs.frozen
class Filter:
    """A ``users``/``projects``/``pes``/``queues``/``hosts`` filter.

    ``expand`` is true for a braced list: the limit applies to each consumer
    of the list alone, rather than to all of them together.
    """

    expand: bool
    entries: tuple[FilterEntry, ...] = attrs.field(converter=_plain_before_negated)

    def __str__(self) -> str:
        body = ",".join(str(e) for e in self.entries)
        return "{" + body + "}" if self.expand else body


@attrs.frozen
class Limit:
    """``complex_name=value_expr`` after ``to``: a static value, or a dynamic
    limit (a sum of weighted complex values) when the text holds a ``$``."""

    complex_name: str
    value_expr: str

    @property
    def is_dynamic(self) -> bool:
        return "$" in self.value_expr

    def __str__(self) -> str:
        return f"{self.complex_name}={self.value_expr}"


def _limit_tuple(limits: Iterable[Limit]) -> tuple[Limit, ...]:
    return tuple(limits)


def _rule_tuple(rules: Iterable[QuotaRule]) -> tuple[QuotaRule, ...]:
    return tuple(rules)


@attrs.frozen
class QuotaRule:
    """One ``limit`` line: optional name, filters (None: not given) and limits."""

    name: str | None = None
    users: Filter | None = None
    projects: Filter | None = None
    pes: Filter | None = None
    queues: Filter | None = None
    hosts: Filter | None = None
    limits: tuple[Limit, ...] = attrs.field(default=(), converter=_limit_tuple)

    def filter(self, kind: str) -> Filter | None:
        """The filter called ``kind`` (one of :data:`FILTER_NAMES`)."""
        return {"users": self.users, "projects": self.projects, "pes": self.pes, "queues": self.queues,
                "hosts": self.hosts}[kind]

    def with_filters(self, filters: Mapping[str, Filter | None]) -> QuotaRule:
        """This rule with the filters named in ``filters`` replaced."""
        return attrs.evolve(self, users=filters.get("users", self.users),
                            projects=filters.get("projects", self.projects), pes=filters.get("pes", self.pes),
                            queues=filters.get("queues", self.queues), hosts=filters.get("hosts", self.hosts))


@attrs.frozen
class ResourceQuotaSet:
    """A resource quota set: its rules are tried in order, the first that
    matches a request is the one that limits it."""

    name: str
    description: str = "NONE"
    enabled: bool = False
    rules: tuple[QuotaRule, ...] = attrs.field(default=(), converter=_rule_tuple)

    @property
    def description_text(self) -> str:
        """The description without its surrounding double quotes, if any."""
        d = self.description
        if len(d) >= 2 and d[0] == d[-1] == '"':
            return d[1:-1]
        return d


# ---------------------------------------------------------------------------
# reading lines


class _Line(NamedTuple):
    lineno: int
    words: list[str]


_CONTINUED = re.compile(r"\\[ \t\r]*$")


def _joined_lines(text: str) -> Iterator[tuple[int, str]]:
    """Physical lines joined at a backslash before the newline.

    As Grid Engine's scanner does: the backslash, the newline and the white
    space around them become one space -- or nothing when the last character
    before them is a comma, so that a list broken after a comma stays one
    word.
    """
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    i = 0
    while i < len(physical):
        start = i
        cur = physical[i].rstrip("\r")
        while _CONTINUED.search(cur) and i + 1 < len(physical):
            head = _CONTINUED.sub("", cur).rstrip(" \t\r")
            i += 1
            tail = physical[i].rstrip("\r").lstrip(" \t\r")
            cur = head + tail if head.endswith(",") else head + " " + tail
        if _CONTINUED.search(cur):  # a backslash on the very last line
            cur = _CONTINUED.sub("", cur)
        i += 1
        yield start + 1, cur


def _lines(text: str, path: str) -> Iterator[_Line]:
    """Non-blank, non-comment logical lines split into words.

    A ``#`` starts a comment only at the start of a line here: Grid Engine
    lets a comment elsewhere swallow the line end and misreads what follows,
    so a word starting with ``#`` after the first is rejected.
    """
    for lineno, joined in _joined_lines(text):
        words = joined.split()
        if not words or words[0].startswith("#"):
            continue
        for w in words[1:]:
            if w.startswith("#"):
                raise FormatError(
                    f'"{w}": a comment must stand on a line of its own', path, lineno
                )
        yield _Line(lineno, words)


# ---------------------------------------------------------------------------
# names and values

# verify_str_key(KEY_TABLE): the rule Grid Engine applies to object names.
_KEY_FORBIDDEN = "\n\t\r /:'\"\\[]{}|()@%,"
_KEY_KEYWORDS = ("NONE", "ALL", "TEMPLATE")
_MAX_KEY_LENGTH = 512

# the page's NAME ([a-zA-Z][a-zA-Z0-9_-]*), with the '.' Grid Engine allows
_RULE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*\Z")

_TRUE = ("true", "t", "yes", "y", "1")
_FALSE = ("false", "f", "no", "n", "0")


def _check_set_name(name: str, path: str, lineno: int) -> None:
    """The set name is an object name: no blank, none of ``/:'"\\[]{}|()@%,``,
    not starting with ``.`` or ``#``, not NONE/ALL/TEMPLATE, at most 512."""
    if len(name) > _MAX_KEY_LENGTH:
        raise FormatError(f'resource quota set name "{name[:20]}..." is longer than 512 characters', path, lineno)
    if name[0] in ".#":
        raise FormatError(f'resource quota set name "{name}" may not start with "{name[0]}"', path, lineno)
    for c in _KEY_FORBIDDEN:
        if c in name:
            raise FormatError(f'resource quota set name "{name}" may not contain "{c}"', path, lineno)
    if name.upper() in _KEY_KEYWORDS:
        raise FormatError(f'resource quota set name "{name}" is a reserved keyword', path, lineno)


def parse_bool(value: str, path: str = "<input>", lineno: int = 0) -> bool:
    """``enabled``: BOOL of the page, plus the yes/no/t/f Grid Engine takes."""
    v = value.lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise FormatError(f'attribute "enabled" is not a boolean: "{value}"', path, lineno)


# ---------------------------------------------------------------------------
# filters


def parse_filter(text: str, kind: str = "users", path: str = "<input>", lineno: int = 0) -> Filter:
    """FILTER: ``LIST | { LIST }``; LIST: ``LISTVALUE[,LISTVALUE]*``;
    LISTVALUE: ``*`` or a name, maybe prefixed with ``!``."""
    expand = text.startswith("{")
    body = text
    if expand:
        if not text.endswith("}") or len(text) < 2:
            raise FormatError(f'{kind} filter "{text}": no valid expanded list (missing "}}")', path, lineno)
        body = text[1:-1]
    if "{" in body or "}" in body:
        raise FormatError(f'{kind} filter "{text}": braces must enclose the whole list', path, lineno)
    if body == "":
        raise FormatError(f'{kind} filter "{text}" is empty', path, lineno)
    entries = []
    for item in body.split(","):
        entries.append(_parse_entry(item, kind, text, path, lineno))
    return Filter(expand, tuple(entries))


def _parse_entry(item: str, kind: str, text: str, path: str, lineno: int) -> FilterEntry:
    if item == "":
        raise FormatError(f'{kind} filter "{text}" has an empty element', path, lineno)
    negated = item.startswith("!")
    name = item[1:] if negated else item
    if name == "" or name.startswith("!"):
        raise FormatError(f'{kind} filter "{text}": "{item}" names nothing', path, lineno)
    if name == "@":
        raise FormatError(f'{kind} filter "{text}": "@" without a group name', path, lineno)
    if name.startswith("#"):
        raise FormatError(f'{kind} filter "{text}": "{item}" would start a comment', path, lineno)
    return FilterEntry(name, negated)


# ---------------------------------------------------------------------------
# limits

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]\d+)?"
_COMPLEX = r"[A-Za-z_][A-Za-z0-9_.]*"
_TERM = re.compile(rf"\$(?P<cx>{_COMPLEX})(?:\*(?P<w>{_NUMBER}))?|(?P<n>{_NUMBER})")
_LIMIT_NAME = re.compile(r"[^\s=,$]+\Z")


class Term(NamedTuple):
    """One summand of a dynamic limit: ``sign * weight * $complex`` (complex
    None: the constant ``sign * weight``)."""

    sign: float
    complex_name: str | None
    weight: float


def parse_dynamic_limit(expr: str) -> tuple[Term, ...]:
    """The page's formula ``{w1|$complex1[*w1]}[{+|-}{w2|$complex2[*w2]}...]``.

    Weights are unsigned integers or decimal numbers; each summand is a
    number or a ``$complex`` with at most one weight.  Raises SpecifierError.
    """
    terms: list[Term] = []
    pos = 0
    sign = 1.0
    while True:
        m = _TERM.match(expr, pos)
        if not m:
            rest = expr[pos:] or "<end>"
            raise SpecifierError(
                f'"{expr}" is not a sum of weighted complex values: expected a number or '
                f'$complex at "{rest}"'
            )
        if m.group("cx") is not None:
            weight = float(m.group("w")) if m.group("w") is not None else 1.0
            terms.append(Term(sign, m.group("cx"), weight))
        else:
            terms.append(Term(sign, None, float(m.group("n"))))
        pos = m.end()
        if pos == len(expr):
            break
        op = expr[pos]
        if op not in "+-":
            raise SpecifierError(
                f'"{expr}" is not a sum of weighted complex values: "{expr[pos:]}" '
                "(only one *weight per complex, terms joined by + or -)"
            )
        sign = 1.0 if op == "+" else -1.0
        pos += 1
    if not any(t.complex_name for t in terms):
        raise SpecifierError(f'"{expr}" uses no $complex')
    return tuple(terms)


def parse_limits(text: str, path: str = "<input>", lineno: int = 0) -> tuple[Limit, ...]:
    """RESOURCE: ``RESOURCEPAIR[,RESOURCEPAIR]*``, a pair being
    ``complex=value``; a value with ``$`` is a dynamic limit."""
    limits = []
    for item in text.split(","):
        if item == "":
            raise FormatError(f'limit list "{text}" has an empty element', path, lineno)
        name, eq, value = item.partition("=")
        if not eq or not name or not value or "=" in value:
            raise FormatError(f'limit "{item}" is not of the form complex=value', path, lineno)
        if not _LIMIT_NAME.match(name):
            raise FormatError(f'limit "{item}": "{name}" is not a complex name', path, lineno)
        if "$" in value:
            try:
                parse_dynamic_limit(value)
            except SpecifierError as exc:
                raise FormatError(f'dynamic limit of "{name}": {exc}', path, lineno) from None
        limits.append(Limit(name, value))
    return tuple(limits)


# ---------------------------------------------------------------------------
# rules

_RULE_KEYWORDS = ("name",) + FILTER_NAMES + ("to",)


def parse_rule(words: list[str], path: str = "<input>", lineno: int = 0) -> QuotaRule:
    """rule: ``limit [name NAME] [users F] [projects F] [pes F] [queues F]
    [hosts F] to RESOURCE`` -- ``words`` are those after ``limit``.  Grid
    Engine takes the keywords in any order; each at most once."""
    fields: dict[str, str] = {}
    for i in range(0, len(words), 2):
        key = words[i]
        if key not in _RULE_KEYWORDS:
            raise FormatError(
                f'unknown keyword "{key}" in limit rule (expected name, users, projects, '
                "pes, queues, hosts or to)",
                path,
                lineno,
            )
        if key in fields:
            raise FormatError(f'"{key}" given more than once in limit rule', path, lineno)
        if i + 1 >= len(words):
            raise FormatError(f'"{key}" without a value in limit rule', path, lineno)
        fields[key] = words[i + 1]
    if "to" not in fields:
        raise FormatError('limit rule without "to": the limits are mandatory', path, lineno)
    name = fields.get("name")
    if name is not None and not _RULE_NAME.match(name):
        raise FormatError(f'rule name "{name}" is not a NAME ([a-zA-Z][a-zA-Z0-9_.-]*)', path, lineno)
    filters = {k: parse_filter(fields[k], k, path, lineno) for k in FILTER_NAMES if k in fields}
    rule = QuotaRule(name=name, limits=parse_limits(fields["to"], path, lineno), **filters)
    _check_dynamic_limits(rule, path, lineno)
    return rule


def _check_dynamic_limits(rule: QuotaRule, path: str, lineno: int) -> None:
    """"Dynamic limits can only be configured for a host-specific rule, and
    must be defined for an expanded host list": the hosts filter in braces."""
    if rule.hosts is not None and rule.hosts.expand:
        return
    for lim in rule.limits:
        if lim.is_dynamic:
            raise FormatError(
                f'dynamic limit "{lim}" needs an expanded hosts filter (hosts {{...}}): '
                "dynamic limits are only supported for per host rules",
                path,
                lineno,
            )


def write_rule(rule: QuotaRule) -> str:
    """The text after ``limit``, keywords in Grid Engine's order."""
    parts: list[str] = []
    if rule.name is not None:
        parts += ["name", rule.name]
    for kind in FILTER_NAMES:
        flt = rule.filter(kind)
        if flt is not None:
            parts += [kind, str(flt)]
    parts += ["to", ",".join(str(lim) for lim in rule.limits)]
    return " ".join(parts)


# ---------------------------------------------------------------------------
# rule sets


class _SetBuilder:
    """The attributes and rules of the set being read."""

    def __init__(self, lineno: int):
        self.lineno = lineno
        self.given: set[str] = set()
        self.name: str | None = None
        self.description = "NONE"
        self.enabled = False
        self.rules: list[QuotaRule] = []
        self.rule_names: set[str] = set()

    def add_attribute(self, words: list[str], path: str, lineno: int) -> None:
        key = words[0]
        if self.rules:
            raise FormatError(f'attribute "{key}" must come before the limit rules', path, lineno)
        if key in self.given:
            raise FormatError(f'attribute "{key}" given more than once', path, lineno)
        if len(words) < 2:
            raise FormatError(f'missing value for attribute "{key}"', path, lineno)
        self.given.add(key)
        if key == "description":
            self.description = " ".join(words[1:])
            return
        if len(words) > 2:
            raise FormatError(f'attribute "{key}" takes one word, not "{" ".join(words[1:])}"', path, lineno)
        if key == "name":
            _check_set_name(words[1], path, lineno)
            self.name = words[1]
        else:
            self.enabled = parse_bool(words[1], path, lineno)

    def add_rule(self, words: list[str], path: str, lineno: int) -> None:
        rule = parse_rule(words, path, lineno)
        if rule.name is not None:
            if rule.name in self.rule_names:
                raise FormatError(
                    f'rule name "{rule.name}" used twice: it must be unique within a resource quota set',
                    path,
                    lineno,
                )
            self.rule_names.add(rule.name)
        self.rules.append(rule)

    def build(self, path: str) -> ResourceQuotaSet:
        if self.name is None:
            raise FormatError("resource quota set has no name", path, self.lineno)
        if not self.rules:
            raise FormatError(f'resource quota set "{self.name}" has no limit rules', path, self.lineno)
        return ResourceQuotaSet(
            name=self.name,
            description=self.description,
            enabled=self.enabled,
            rules=tuple(self.rules),
        )


def parse_sets(text: str, path: str = "<input>") -> tuple[ResourceQuotaSet, ...]:
    """rulesets: ``ruleset*`` -- every set of a file (as ``qconf -srqs`` with
    no name prints them); set names must differ."""
    sets: list[ResourceQuotaSet] = []
    seen: set[str] = set()
    cur: _SetBuilder | None = None
    for lineno, words in _lines(text, path):
        if cur is None:
            if words != ["{"]:
                raise FormatError(
                    f'expected "{{" on a line of its own to start a resource quota set, not "{words[0]}"',
                    path,
                    lineno,
                )
            cur = _SetBuilder(lineno)
        elif words == ["}"]:
            rqs = cur.build(path)
            if rqs.name in seen:
                raise FormatError(f'resource quota set "{rqs.name}" given more than once', path, cur.lineno)
            seen.add(rqs.name)
            sets.append(rqs)
            cur = None
        elif words[0] == "limit":
            cur.add_rule(words[1:], path, lineno)
        elif words[0] in ("name", "description", "enabled"):
            cur.add_attribute(words, path, lineno)
        elif "{" in words[0] or "}" in words[0]:
            raise FormatError(f'"{" ".join(words)}": braces "{{" and "}}" stand on lines of their own', path, lineno)
        else:
            raise FormatError(f'unknown attribute name "{words[0]}"', path, lineno)
    if cur is not None:
        raise FormatError('resource quota set not closed with "}"', path, cur.lineno)
    return tuple(sets)


def parse(text: str, path: str = "<input>") -> ResourceQuotaSet:
    """Exactly one resource quota set."""
    sets = parse_sets(text, path)
    if len(sets) != 1:
        raise FormatError(f"expected one resource quota set, found {len(sets)}", path, 0)
    return sets[0]


def write(rqs: ResourceQuotaSet) -> str:
    """One set as ``qconf -srqs NAME`` prints it (80-column line breaking)."""
    lines = ["{"]
    lines.append(_INDENT + "name".ljust(_VALUE_COLUMN) + rqs.name)
    lines.append(_INDENT + "description".ljust(_VALUE_COLUMN) + rqs.description)
    lines.append(_INDENT + "enabled".ljust(_VALUE_COLUMN) + ("TRUE" if rqs.enabled else "FALSE"))
    for rule in rqs.rules:
        lines.append(_INDENT + "limit".ljust(_VALUE_COLUMN) + write_rule(rule))
    lines.append("}")
    return add_line_breaks("\n".join(lines) + "\n")


def write_sets(sets: Iterable[ResourceQuotaSet]) -> str:
    """Several sets, one after the other, as ``qconf -srqs`` prints them."""
    return "".join(write(s) for s in sets)


# ---------------------------------------------------------------------------
# meaning: matching, usage keys, expansion, limit values


def _acl_members(name: str, acls: Mapping[str, Iterable[str]]) -> Iterable[str]:
    """Members of access list ``name`` (given with or without its ``@``)."""
    return acls.get(name[1:] if name.startswith("@") else name, ())


def _hostgroup_hosts(
    name: str, hostgroups: Mapping[str, Iterable[str]], _seen: frozenset[str] = frozenset()
) -> list[str]:
    """Hosts of hostgroup ``name``, nested groups resolved (cycles ignored)."""
    key = name if name.startswith("@") else "@" + name
    if key in _seen:
        return []
    members = hostgroups.get(key, hostgroups.get(key[1:], ()))
    out: list[str] = []
    for m in members:
        if m.startswith("@"):
            out += _hostgroup_hosts(m, hostgroups, _seen | {key})
        else:
            out.append(m)
    return out


def _user_in_entry(entry: str, user: str, group: str | None, acls: Mapping[str, Iterable[str]]) -> bool:
    """A user matches a name, a wildcard pattern, or an ``@acl`` (the name
    may be a pattern) holding the user or, by an ``@group`` member, the
    user's UNIX group."""
    if entry == user or fnmatch.fnmatchcase(user, entry):
        return True
    if not entry.startswith("@"):
        return False
    for acl_name, members in acls.items():
        if fnmatch.fnmatchcase(acl_name, entry[1:]):
            for member in members:
                if member == user or (group is not None and member == "@" + group):
                    return True
    return False


def _host_in_entry(entry: str, host: str, hostgroups: Mapping[str, Iterable[str]]) -> bool:
    """A host matches ``*``, its name, a pattern, or an ``@hostgroup`` with it
    (host names compare without regard to case)."""
    h = host.lower()
    if entry == "*" or entry.lower() == h or fnmatch.fnmatchcase(h, entry.lower()):
        return True
    if entry.startswith("@"):
        return any(m.lower() == h for m in _hostgroup_hosts(entry, hostgroups))
    return False


def _name_in_entry(entry: str, value: str | None) -> bool:
    """Projects, PEs, queues: ``*``, the name, or a pattern; a job without a
    project (PE) matches no entry, not even ``*``."""
    if value is None:
        return False
    return entry == "*" or entry == value or fnmatch.fnmatchcase(value, entry)


def filter_matches(
    flt: Filter | None,
    kind: str,
    value: str | None,
    acls: Mapping[str, Iterable[str]] | None = None,
    hostgroups: Mapping[str, Iterable[str]] | None = None,
    group: str | None = None,
) -> bool:
    """Does ``value`` pass the filter?  No filter: everything (for projects
    and PEs also jobs requesting none).  A ``!`` entry that matches excludes;
    if there are plain entries, one of them must match."""
    if flt is None:
        return True
    acls = acls or {}
    hostgroups = hostgroups or {}

    def hit(entry: FilterEntry) -> bool:
        if kind == "users":
            return value is not None and _user_in_entry(entry.name, value, group, acls)
        if kind == "hosts":
            return value is not None and _host_in_entry(entry.name, value, hostgroups)
        return _name_in_entry(entry.name, value)

    if any(hit(e) for e in flt.entries if e.negated):
        return False
    plain = [e for e in flt.entries if not e.negated]
    return not plain or any(hit(e) for e in plain)


def rule_matches(
    rule: QuotaRule,
    user: str,
    project: str | None,
    pe: str | None,
    queue: str,
    host: str,
    acls: Mapping[str, Iterable[str]] | None = None,
    hostgroups: Mapping[str, Iterable[str]] | None = None,
    group: str | None = None,
) -> bool:
    """A rule matches a request when every filter it has matches."""
    values = {"users": user, "projects": project, "pes": pe, "queues": queue, "hosts": host}
    return all(
        filter_matches(rule.filter(k), k, values[k], acls, hostgroups, group) for k in FILTER_NAMES
    )


def matching_rule(
    rqs: ResourceQuotaSet,
    user: str,
    project: str | None,
    pe: str | None,
    queue: str,
    host: str,
    acls: Mapping[str, Iterable[str]] | None = None,
    hostgroups: Mapping[str, Iterable[str]] | None = None,
    group: str | None = None,
) -> tuple[int, QuotaRule] | None:
    """"The first rule that matches a specific request will be used": its
    0-based index and the rule, or None.  A disabled set limits nothing."""
    if not rqs.enabled:
        return None
    for i, rule in enumerate(rqs.rules):
        if rule_matches(rule, user, project, pe, queue, host, acls, hostgroups, group):
            return i, rule
    return None


def rule_label(rqs: ResourceQuotaSet, index: int) -> str:
    """``set/rule`` as qquota names a rule: its name, or its 1-based number."""
    rule = rqs.rules[index]
    return f"{rqs.name}/{rule.name if rule.name is not None else index + 1}"


def consumer_key(
    rule: QuotaRule,
    user: str | None,
    project: str | None,
    pe: str | None,
    queue: str | None,
    host: str | None,
) -> str:
    """The name under which a matching request's usage is counted:
    ``user/project/pe/queue/host/`` where only filters in braces contribute
    their value ("each member individually"); a plain list or a missing
    filter leaves its place empty ("all elements in total")."""
    values = {"users": user, "projects": project, "pes": pe, "queues": queue, "hosts": host}
    parts = []
    for kind in FILTER_NAMES:
        flt = rule.filter(kind)
        v = values[kind]
        parts.append(v if flt is not None and flt.expand and v is not None else "")
    return "/".join(parts) + "/"


def _expanded_entries(
    flt: Filter,
    kind: str,
    acls: Mapping[str, Iterable[str]],
    hostgroups: Mapping[str, Iterable[str]],
    consumers: Mapping[str, Iterable[str]],
) -> list[FilterEntry]:
    """The entries of a braced list with ACLs / hostgroups replaced by their
    constituents, ``!`` distributed over them, and ``*`` by the known
    consumers of that kind (kept as ``*`` when none are given)."""
    out: list[FilterEntry] = []
    for e in flt.entries:
        if kind == "users" and e.name.startswith("@"):
            names = list(_acl_members(e.name, acls))
        elif kind == "hosts" and e.name.startswith("@"):
            names = _hostgroup_hosts(e.name, hostgroups)
        elif e.name == "*" and not e.negated and kind in consumers:
            names = list(consumers[kind])
        else:
            names = [e.name]
        for n in names:
            fe = FilterEntry(n, e.negated)
            if fe not in out:
                out.append(fe)
    return out


def expand(
    rule: QuotaRule,
    acls: Mapping[str, Iterable[str]] | None = None,
    hostgroups: Mapping[str, Iterable[str]] | None = None,
    consumers: Mapping[str, Iterable[str]] | None = None,
) -> tuple[QuotaRule, ...]:
    """The page's expansion: ``limit users {a,b} ... to ...`` is ``limit users
    a ... to ...`` followed by ``limit users b ... to ...``, each braced
    filter in turn (users, projects, pes, queues, hosts).  ACLs and
    hostgroups in braces become their members first, a ``!`` going to each
    (``{!@acl}`` -> ``!user1``, ``!user2``, ...).  ``{*}`` becomes one rule per
    consumer named in ``consumers[kind]``; without that list it stays
    ``{*}``.  Plain lists are carried over as they are.

    Note: this is the page's textual reading.  For negated entries it is not
    what the scheduler does (it excludes every ``!`` entry and counts each
    remaining consumer alone, see :func:`rule_matches`)."""
    acls = acls or {}
    hostgroups = hostgroups or {}
    consumers = consumers or {}
    choices: list[list[Filter | None]] = []
    for kind in FILTER_NAMES:
        flt = rule.filter(kind)
        if flt is None or not flt.expand:
            choices.append([flt])
            continue
        options: list[Filter | None] = []
        for e in _expanded_entries(flt, kind, acls, hostgroups, consumers):
            per_consumer = e.name == "*" and not e.negated
            options.append(Filter(per_consumer, (e,)))
        choices.append(options)
    return tuple(
        rule.with_filters(dict(zip(FILTER_NAMES, combo, strict=True))) for combo in itertools.product(*choices)
    )


def static_limit_value(value: str) -> float:
    """A static limit as a number: ``[[h:]m:]s`` times, otherwise a number
    with an optional k/K/m/M/g/G multiplier (INFINITY: ``math.inf``)."""
    try:
        if ":" in value:
            return parse_time(value)
        return parse_memory(value)
    except SpecifierError as exc:
        raise FormatError(f'limit value "{value}" is not numeric: {exc}') from None


def evaluate_limit(limit: Limit, host_values: Mapping[str, float]) -> float:
    """The value of a limit on one host.  Static: its number.  Dynamic: the
    weighted sum over ``host_values`` (complex name -> value on the host, as
    the formula names it); if a complex has no value there the result is
    :data:`ERROR_LOAD_VALUE`, the scheduler's "overloaded" value."""
    if not limit.is_dynamic:
        return static_limit_value(limit.value_expr)
    try:
        terms = parse_dynamic_limit(limit.value_expr)
    except SpecifierError as exc:
        raise FormatError(f'dynamic limit of "{limit.complex_name}": {exc}') from None
    total = 0.0
    for t in terms:
        if t.complex_name is None:
            total += t.sign * t.weight
            continue
        v = host_values.get(t.complex_name)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ERROR_LOAD_VALUE
        total += t.sign * t.weight * float(v)
    return total


# ---------------------------------------------------------------------------
# checking against the complex list (what qmaster does when a set is added)

_NUMERIC_TYPES = ("INT", "DOUBLE", "MEMORY", "TIME", "BOOL", "RSMAP")


class ComplexLike(Protocol):
    """What the checks of limits need of a complex attribute
    (:class:`minisge.formats.complex.ComplexAttr` has it): its name and
    shortcut, its type (``INT``, ``MEMORY``, ...) and whether it is
    consumable (``YES``, ``JOB``, ``NO``), each read as text."""

    @property
    def name(self) -> str: ...

    @property
    def shortcut(self) -> str: ...

    @property
    def type(self) -> object: ...

    @property
    def consumable(self) -> object: ...


def _is_consumable(cx: ComplexLike) -> bool:
    c = cx.consumable
    return c is True or str(c).upper() in ("YES", "JOB", "Y")


def _check_static_value(lim: Limit, cx: ComplexLike, path: str, lineno: int) -> str:
    """The value of a static limit checked against the complex's type; TIME
    values are normalised to seconds as Grid Engine stores them."""
    ctype = str(cx.type).upper()
    value = lim.value_expr
    if ctype not in _NUMERIC_TYPES:
        return value
    try:
        if ctype == "BOOL":
            parse_bool(value, path, lineno)
            return value
        number = parse_time(value) if ctype == "TIME" else parse_memory(value)
    except (SpecifierError, FormatError):
        raise FormatError(f'limit "{lim}": not a valid {ctype} value', path, lineno) from None
    if math.isinf(number) and _is_consumable(cx):
        raise FormatError(f'limit "{lim}": a consumable cannot be limited to infinity', path, lineno)
    if number < 0 and _is_consumable(cx):
        raise FormatError(f'limit "{lim}": a consumable cannot have a negative value', path, lineno)
    if ctype == "TIME" and not math.isinf(number):
        return f"{number:.0f}"
    return value


def resolve_complexes(
    rqs: ResourceQuotaSet, complexes: Iterable[ComplexLike], path: str = "<input>", lineno: int = 0
) -> ResourceQuotaSet:
    """Check every limit against the complex list, as qmaster does on
    ``qconf -Arqs``/``-Mrqs``: the complex must exist (name or shortcut; the
    shortcut is replaced by the name), a static value must suit its type
    (TIME becomes seconds), and a dynamic limit may use only numerical
    complexes.  ``complexes`` are objects with ``name``, ``shortcut``,
    ``type`` (``INT``, ``MEMORY``, ...) and ``consumable``."""
    by_name: dict[str, ComplexLike] = {}
    for c in complexes:
        by_name.setdefault(c.name, c)
    for c in list(by_name.values()):
        if c.shortcut:
            by_name.setdefault(c.shortcut, c)
    rules = []
    for rule in rqs.rules:
        limits = []
        for lim in rule.limits:
            cx = by_name.get(lim.complex_name)
            if cx is None:
                raise FormatError(
                    f'resource quota set "{rqs.name}" references not existing complex attribute '
                    f'"{lim.complex_name}"',
                    path,
                    lineno,
                )
            if lim.is_dynamic:
                for t in parse_dynamic_limit(lim.value_expr):
                    if t.complex_name is None:
                        continue
                    used = by_name.get(t.complex_name)
                    if used is None:
                        raise FormatError(
                            f'dynamic limit "{lim}" references not existing complex attribute '
                            f'"{t.complex_name}"',
                            path,
                            lineno,
                        )
                    if str(used.type).upper() not in _NUMERIC_TYPES:
                        raise FormatError(
                            f'dynamic limit "{lim}": "{t.complex_name}" is not of numerical type',
                            path,
                            lineno,
                        )
                value = lim.value_expr
            else:
                value = _check_static_value(lim, cx, path, lineno)
            limits.append(Limit(cx.name, value))
        rules.append(attrs.evolve(rule, limits=tuple(limits)))
    return attrs.evolve(rqs, rules=tuple(rules))
