"""complex(5): the complex attribute list, as ``qconf -sc`` shows it and ``qconf -Mc`` reads it.

A tabulated list, one attribute a line, eight columns::

    #name      shortcut   type    relop requestable consumable default urgency
    h_rt       h_rt       TIME    <=    YES         NO         0:0:0   0

Lines starting with ``#`` are comments (and are not kept); a backslash at the
end of a line continues it.  Keywords are read in any case and in their short
forms (requestable ``y yes n no f forced``, consumable ``y yes n no j job``)
and written as Grid Engine writes them (``YES NO FORCED``, ``YES NO JOB``);
``default`` and ``urgency`` stay text, written back as given.

The rules each line must follow are those of complex(5) and of Grid Engine's
``centry_elem_validate``; the error messages are Grid Engine's own, with the
file and line in front.  ``write`` reproduces ``qconf -sc`` byte for byte:
columns as wide as their longest value plus three, sorted by name.

Besides the format: :func:`compare` and :func:`threshold_exceeded`, the
comparisons the scheduler makes with a complex attribute, and
:func:`default_complex`, the list a new cell starts with.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

from attrs import field, frozen

from minisge.formats import sge_types, wildcard
from minisge.formats.errors import FormatError
from minisge.formats.lines import logical_lines
from minisge.formats.sge_types import SpecifierError


class ValueType(enum.StrEnum):
    """complex(5) ``type``: how values are read and compared."""

    INT = "INT"
    STRING = "STRING"
    TIME = "TIME"
    MEMORY = "MEMORY"
    BOOL = "BOOL"
    CSTRING = "CSTRING"
    HOST = "HOST"
    DOUBLE = "DOUBLE"
    RESTRING = "RESTRING"
    RSMAP = "RSMAP"  # Open Cluster Scheduler's resource map (sge_rsmap(5)); not in Grid Engine 8.1.9

    @property
    def is_numeric(self) -> bool:
        """INT, DOUBLE, TIME, MEMORY and BOOL: values are numbers."""
        return self._value_ in sge_types.NUMERIC_TYPES  # (not .value: an enum's property costs 0.2 µs a read)

    @property
    def is_string(self) -> bool:
        """STRING, CSTRING, RESTRING and HOST: values are matched by wildcard expressions."""
        return self._value_ in sge_types.STRING_TYPES

    @property
    def is_resource_map(self) -> bool:
        """RSMAP: a consumable count whose instances have names (``gpu=2(0 1)``)."""
        return self is ValueType.RSMAP

    @property
    def ignores_case(self) -> bool:
        """CSTRING and HOST compare case-insensitively."""
        return self in (ValueType.CSTRING, ValueType.HOST)


class Relop(enum.StrEnum):
    """complex(5) ``relop``: the relational operator of a request against an offer."""

    EQ = "=="
    GE = ">="
    GT = ">"
    LT = "<"
    LE = "<="
    NE = "!="
    EXCL = "EXCL"


class Requestable(enum.StrEnum):
    """complex(5) ``requestable``: may (YES), may not (NO) or must (FORCED) be requested."""

    NO = "NO"
    YES = "YES"
    FORCED = "FORCED"


class Consumable(enum.StrEnum):
    """complex(5) ``consumable``: not (NO), per slot (YES) or per job (JOB)."""

    NO = "NO"
    YES = "YES"
    JOB = "JOB"


_REQUESTABLE_WORDS = {
    "y": Requestable.YES,
    "yes": Requestable.YES,
    "n": Requestable.NO,
    "no": Requestable.NO,
    "f": Requestable.FORCED,
    "forced": Requestable.FORCED,
}
_CONSUMABLE_WORDS = {
    "y": Consumable.YES,
    "yes": Consumable.YES,
    "n": Consumable.NO,
    "no": Consumable.NO,
    "j": Consumable.JOB,
    "job": Consumable.JOB,
}

#: The eight columns, in their order (also the header of ``qconf -sc``).
COLUMNS = ("name", "shortcut", "type", "relop", "requestable", "consumable", "default", "urgency")

#: The built-in attributes (Grid Engine's host and queue resource tables): they
#: cannot be deleted and keep their type (a string type may become another
#: string type, but not HOST).
BUILTIN_TYPES: dict[str, ValueType] = {
    **{n: ValueType.STRING for n in ("arch", "m_topology", "m_topology_inuse", "qname", "tmpdir", "calendar")},
    **{
        n: ValueType.DOUBLE
        for n in (
            "cpu",
            "load_avg",
            "load_long",
            "load_medium",
            "load_short",
            "np_load_avg",
            "np_load_long",
            "np_load_medium",
            "np_load_short",
        )
    },
    **{
        n: ValueType.MEMORY
        for n in (
            "mem_free",
            "mem_total",
            "mem_used",
            "swap_free",
            "swap_rate",
            "swap_rsvd",
            "swap_total",
            "swap_used",
            "virtual_free",
            "virtual_total",
            "virtual_used",
            "s_fsize",
            "h_fsize",
            "s_data",
            "h_data",
            "s_stack",
            "h_stack",
            "s_core",
            "h_core",
            "s_rss",
            "h_rss",
            "s_vmem",
            "h_vmem",
        )
    },
    **{n: ValueType.TIME for n in ("min_cpu_interval", "s_rt", "h_rt", "s_cpu", "h_cpu")},
    **{n: ValueType.INT for n in ("num_proc", "m_core", "m_socket", "m_thread", "slots", "seq_no")},
    **{n: ValueType.BOOL for n in ("display_win_gui", "rerun")},
    "hostname": ValueType.HOST,
}

_STRING_KINDS = frozenset({ValueType.STRING, ValueType.CSTRING, ValueType.RESTRING})


@frozen
class ComplexAttr:
    """One complex attribute (one line of the complex list)."""

    name: str
    shortcut: str
    type: ValueType = field(converter=ValueType)
    relop: Relop = field(converter=Relop)
    requestable: Requestable = field(converter=Requestable)
    consumable: Consumable = field(converter=Consumable)
    default: str
    urgency: str

    @property
    def is_consumable(self) -> bool:
        """Consumable per slot (YES) or per job (JOB)."""
        return self.consumable is not Consumable.NO

    @property
    def is_requestable(self) -> bool:
        """May be requested with ``-l`` (YES or FORCED)."""
        return self.requestable is not Requestable.NO

    @property
    def is_builtin(self) -> bool:
        """One of Grid Engine's built-in attributes (cannot be deleted)."""
        return self.name in BUILTIN_TYPES

    def columns(self) -> tuple[str, ...]:
        """The eight column texts as ``qconf -sc`` writes them."""
        return (
            self.name,
            self.shortcut,
            self.type.value,
            self.relop.value,
            self.requestable.value,
            self.consumable.value,
            self.default,
            self.urgency,
        )


def _sorted_attrs(items: Iterable[ComplexAttr]) -> tuple[ComplexAttr, ...]:
    """Sorted by name as Grid Engine sorts the list (``strcmp`` order)."""
    return tuple(sorted(items, key=lambda a: a.name))


@frozen
class ComplexList:
    """The complex attribute list, kept sorted by name as ``qconf -sc`` shows it."""

    attrs: tuple[ComplexAttr, ...] = field(converter=_sorted_attrs)

    def get(self, name: str) -> ComplexAttr | None:
        """The attribute called ``name``, else the one with that shortcut, else None."""
        for a in self.attrs:
            if a.name == name:
                return a
        for a in self.attrs:
            if a.shortcut == name:
                return a
        return None

    def __getitem__(self, name: str) -> ComplexAttr:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[ComplexAttr]:
        return iter(self.attrs)

    def __len__(self) -> int:
        return len(self.attrs)

    @property
    def names(self) -> tuple[str, ...]:
        """The attribute names, sorted."""
        return tuple(a.name for a in self.attrs)

    def resolve(self, name: str) -> str | None:
        """The full name for a name or shortcut (``h`` -> ``hostname``), or None."""
        found = self.get(name)
        return found.name if found is not None else None


# ---------------------------------------------------------------- validation


def _number(text: str) -> float | None:
    try:
        return sge_types.parse_number(text)
    except SpecifierError:
        return None


_TYPE_WORDS = {
    ValueType.INT: "integer value",
    ValueType.TIME: "time value",
    ValueType.MEMORY: "memory value",
    ValueType.BOOL: "boolean value",
    ValueType.DOUBLE: "double value",
    ValueType.RSMAP: "integer value",
}


def _check_relop(a: ComplexAttr) -> str | None:
    """complex(5) relop: "==" or "!=" for strings; "==" or EXCL for BOOL; EXCL only for BOOL."""
    if a.type.is_string:
        if a.relop not in (Relop.EQ, Relop.NE):
            return f'Complex "{a.name}" has an invalid relational operator'
        if a.is_consumable:
            return f'Complex "{a.name}" of type "{a.type.value}" cannot be a consumable'
    elif a.type is ValueType.BOOL:
        if a.relop not in (Relop.EQ, Relop.EXCL):
            return f'Complex "{a.name}" has an invalid relational operator'
        if a.is_consumable and a.relop is not Relop.EXCL:
            return f'Exclusive complex "{a.name}" must have EXCL as relational operator'
        if a.relop is Relop.EXCL and not a.is_consumable:
            return f'Exclusive complex "{a.name}" must be a consumable'
    elif a.relop is Relop.EXCL:
        return f'Complex "{a.name}" must be BOOL to use EXCL as relational operator'
    return None


def _check_consumable(a: ComplexAttr) -> str | None:
    """complex(5) consumable/default: a consumable's relop is <= (EXCL for BOOL), and
    its default is a value of its type -- not 0 if not requestable, 0 if forced."""
    if a.relop not in (Relop.LE, Relop.EXCL):
        return f'Consumable "{a.name}" can have only <= as an relational operator'
    value = _number(a.default)
    if value is None:
        return f"Complex \"{a.name}\"'s default value should be of type \"{_TYPE_WORDS[a.type]}\""
    if a.requestable is Requestable.NO and value == 0:
        return f'Consumable "{a.name}" needs a default value because it is not requestable.'
    if a.requestable is Requestable.FORCED and value != 0:
        return f'Consumable "{a.name}" cannot have a (non-zero) default value because it is forced.'
    return None


def _check_default(a: ComplexAttr) -> str | None:
    """complex(5) default: "must be specified as 0" for non-consumables (NONE for strings)."""
    if a.type.is_string:
        if a.default.lower() != "none":
            return f'Complex "{a.name}" cannot have a (non-zero) default value'
        return None
    value = _number(a.default)
    if value is None:
        return f"Complex \"{a.name}\"'s default value should be of type \"{_TYPE_WORDS[a.type]}\""
    if value != 0:
        return f'Complex "{a.name}" cannot have a (non-zero) default value'
    return None


def _check_builtin(a: ComplexAttr) -> str | None:
    """complex(5): the type of a built-in attribute cannot be changed; tmpdir is not requestable."""
    if a.name == "tmpdir" and a.requestable is not Requestable.NO:
        return f'Complex attribute "{a.name}" is not requestable'
    builtin = BUILTIN_TYPES.get(a.name)
    if builtin is not None and builtin is not a.type:
        if not (builtin in _STRING_KINDS and a.type in _STRING_KINDS):
            return f'The type of the complex "{a.name}" cannot be changed due to its built in status'
    return None


def _check_resource_map(a: ComplexAttr) -> str | None:
    """sge_rsmap(5): "A resource map is always consumable" and its relop is ``<=``."""
    if a.type is not ValueType.RSMAP:
        return None
    if not a.is_consumable:
        return f'RSMAP complex "{a.name}" needs to be a consumable'
    if a.relop is not Relop.LE:
        return f'Consumable "{a.name}" can have only <= as an relational operator'
    return None


def problems(a: ComplexAttr) -> list[str]:
    """Everything wrong with one attribute, in Grid Engine's words (empty: valid)."""
    found = [_check_relop(a), _check_resource_map(a)]
    if a.is_consumable and a.type.is_numeric:
        found.append(_check_consumable(a))
    elif not a.is_consumable:
        found.append(_check_default(a))
    if _number(a.urgency) is None:
        found.append(
            f'The following error occurred for complex "{a.name}", '
            'while parsing the urgency value: "double value"'
        )
    found.append(_check_builtin(a))
    return [p for p in found if p]


def check_attr(a: ComplexAttr, path: str = "<input>", line: int = 0) -> None:
    """Raise :class:`FormatError` for the first thing wrong with ``a``."""
    found = problems(a)
    if found:
        raise FormatError(found[0], path, line)


def check_modification(old: ComplexList, new: ComplexList, path: str = "<input>") -> ComplexList:
    """What the qmaster does with ``qconf -Mc``: the list that replaces ``old``.

    complex(5): built-in attributes "cannot be deleted"; ``slots`` always stays
    ``INT <= YES YES 1`` (only its urgency can change; Grid Engine silently
    keeps the rest).  Whether a deleted attribute is still referenced by a
    host or queue is for the caller, who knows them.
    """
    kept = set(new.names)
    for a in old:
        if a.is_builtin and a.name not in kept:
            raise FormatError(f'The built-in complex "{a.name}" cannot be deleted', path, 0)
    out = []
    for a in new:
        if a.name == "slots":
            a = ComplexAttr(
                "slots", a.shortcut, ValueType.INT, Relop.LE, Requestable.YES, Consumable.YES, "1", a.urgency
            )
        out.append(a)
    return ComplexList(tuple(out))


# ---------------------------------------------------------------- parse/write


_TYPE_NAMES = {t.value: t for t in ValueType}
_RELOP_NAMES = {r.value: r for r in Relop}


Keyword = TypeVar("Keyword", bound=enum.StrEnum)


def _keyword(word: str, table: Mapping[str, Keyword]) -> Keyword | None:
    return table.get(word.lower())


def _parse_line(words: list[str], path: str, line: int) -> ComplexAttr:
    """One complex line (already split into words) to a :class:`ComplexAttr`."""
    name = words[0]
    if len(words) < len(COLUMNS):
        missing = COLUMNS[len(words)]
        raise FormatError(
            f'complex "{name}": column "{missing}" is missing '
            f"(a line has {len(COLUMNS)} columns: {' '.join(COLUMNS)})",
            path,
            line,
        )
    if len(words) > len(COLUMNS):
        raise FormatError(
            f'complex "{name}": {len(words)} columns, "{words[len(COLUMNS)]}" is one too many '
            f"(a line has {len(COLUMNS)} columns: {' '.join(COLUMNS)})",
            path,
            line,
        )
    shortcut, type_word, relop_word, req_word, cons_word, default, urgency = words[1:]
    vtype = _TYPE_NAMES.get(type_word.upper())
    if vtype is None:
        raise FormatError(
            f'unknown complex attribute type "{type_word}" for complex "{name}" '
            f"(one of {' '.join(t.value for t in ValueType)})",
            path,
            line,
        )
    relop = _RELOP_NAMES.get(relop_word.upper())
    if relop is None:
        raise FormatError(
            f'invalid relational operator "{relop_word}" for complex "{name}" '
            f"(one of {' '.join(r.value for r in Relop)})",
            path,
            line,
        )
    requestable = _keyword(req_word, _REQUESTABLE_WORDS)
    if requestable is None:
        raise FormatError(
            f'invalid requestable "{req_word}" for complex "{name}" (one of y yes n no f forced)',
            path,
            line,
        )
    consumable = _keyword(cons_word, _CONSUMABLE_WORDS)
    if consumable is None:
        raise FormatError(
            f'invalid consumable "{cons_word}" for complex "{name}" (one of y yes n no j job)',
            path,
            line,
        )
    return ComplexAttr(name, shortcut, vtype, relop, requestable, consumable, default, urgency)


def _check_unique(a: ComplexAttr, seen: dict[str, ComplexAttr], path: str, line: int) -> None:
    """complex(5): a name and a shortcut "may appear only once across all complexes"."""
    for key in (a.name, a.shortcut):
        if key in seen:
            raise FormatError(f"complex with name {a.name} or shortcut {a.shortcut} already exists", path, line)


def parse(text: str, path: str = "<input>") -> ComplexList:
    """Read a complex list (``qconf -Mc`` input, ``qconf -sc`` output)."""
    seen: dict[str, ComplexAttr] = {}
    attrs = []
    for ln in logical_lines(text):
        words = ln.text.split()
        a = _parse_line(words, path, ln.lineno)
        _check_unique(a, seen, path, ln.lineno)
        check_attr(a, path, ln.lineno)
        seen[a.name] = a
        seen[a.shortcut] = a
        attrs.append(a)
    return ComplexList(tuple(attrs))


FOOTER = "# >#< starts a comment but comments are not saved across edits --------\n"

#: Grid Engine pads each column to its widest value plus this.
_PADDING = 3


def write(model: ComplexList) -> str:
    """The complex list exactly as ``qconf -sc`` prints it.

    Column widths: the longest of the column name and each value plus three.
    The header line is ``#`` then each name padded to its width (plus one
    after the first), a ``#`` and a dash line as long as the header, then one
    line per attribute, columns separated by a space and the last one not
    padded, then the footer.
    """
    rows = [a.columns() for a in model]
    widths = [len(col) for col in COLUMNS]
    for row in rows:
        widths = [max(w, len(v) + _PADDING) for w, v in zip(widths, row, strict=True)]
    header = "#" + "".join(f"{col:<{w + (1 if i else 0)}}"
                           for i, (col, w) in enumerate(zip(COLUMNS, widths, strict=True)))
    dashes = "#" + "-" * (sum(widths) + len(widths) - 1)
    out = [header, dashes]
    for row in rows:
        cells = [f"{v:<{w}}" for v, w in zip(row[:-1], widths[:-1], strict=True)] + [row[-1]]
        out.append(" ".join(cells))
    return "\n".join(out) + "\n" + FOOTER


# ---------------------------------------------------------------- the default list

#: The complex list of a new Grid Engine 8.1 cell (``qconf -sc`` of a fresh install;
#: its header line ends in a blank, as Grid Engine's does).
DEFAULT_COMPLEX_TEXT = (
    "#name               shortcut   type      relop requestable consumable default  urgency \n"
    """\
#--------------------------------------------------------------------------------------
arch                a          STRING    ==    YES         NO         NONE     0
calendar            c          STRING    ==    YES         NO         NONE     0
cpu                 cpu        DOUBLE    >=    YES         NO         0        0
display_win_gui     dwg        BOOL      ==    YES         NO         0        0
h_core              h_core     MEMORY    <=    YES         NO         0        0
h_cpu               h_cpu      TIME      <=    YES         NO         0:0:0    0
h_data              h_data     MEMORY    <=    YES         NO         0        0
h_fsize             h_fsize    MEMORY    <=    YES         NO         0        0
h_rss               h_rss      MEMORY    <=    YES         NO         0        0
h_rt                h_rt       TIME      <=    YES         NO         0:0:0    0
h_stack             h_stack    MEMORY    <=    YES         NO         0        0
h_vmem              h_vmem     MEMORY    <=    YES         NO         0        0
hostname            h          HOST      ==    YES         NO         NONE     0
load_avg            la         DOUBLE    >=    NO          NO         0        0
load_long           ll         DOUBLE    >=    NO          NO         0        0
load_medium         lm         DOUBLE    >=    NO          NO         0        0
load_short          ls         DOUBLE    >=    NO          NO         0        0
m_core              core       INT       <=    YES         NO         0        0
m_socket            socket     INT       <=    YES         NO         0        0
m_thread            thread     INT       <=    YES         NO         0        0
m_topology          topo       STRING    ==    YES         NO         NONE     0
m_topology_inuse    utopo      STRING    ==    YES         NO         NONE     0
mem_free            mf         MEMORY    <=    YES         NO         0        0
mem_total           mt         MEMORY    <=    YES         NO         0        0
mem_used            mu         MEMORY    >=    YES         NO         0        0
min_cpu_interval    mci        TIME      <=    NO          NO         0:0:0    0
np_load_avg         nla        DOUBLE    >=    NO          NO         0        0
np_load_long        nll        DOUBLE    >=    NO          NO         0        0
np_load_medium      nlm        DOUBLE    >=    NO          NO         0        0
np_load_short       nls        DOUBLE    >=    NO          NO         0        0
num_proc            p          INT       ==    YES         NO         0        0
qname               q          STRING    ==    YES         NO         NONE     0
rerun               re         BOOL      ==    NO          NO         0        0
s_core              s_core     MEMORY    <=    YES         NO         0        0
s_cpu               s_cpu      TIME      <=    YES         NO         0:0:0    0
s_data              s_data     MEMORY    <=    YES         NO         0        0
s_fsize             s_fsize    MEMORY    <=    YES         NO         0        0
s_rss               s_rss      MEMORY    <=    YES         NO         0        0
s_rt                s_rt       TIME      <=    YES         NO         0:0:0    0
s_stack             s_stack    MEMORY    <=    YES         NO         0        0
s_vmem              s_vmem     MEMORY    <=    YES         NO         0        0
seq_no              seq        INT       ==    NO          NO         0        0
slots               s          INT       <=    YES         YES        1        1000
swap_free           sf         MEMORY    <=    YES         NO         0        0
swap_rate           sr         MEMORY    >=    YES         NO         0        0
swap_rsvd           srsv       MEMORY    >=    YES         NO         0        0
swap_total          st         MEMORY    <=    YES         NO         0        0
swap_used           su         MEMORY    >=    YES         NO         0        0
tmpdir              tmp        STRING    ==    NO          NO         NONE     0
virtual_free        vf         MEMORY    <=    YES         NO         0        0
virtual_total       vt         MEMORY    <=    YES         NO         0        0
virtual_used        vu         MEMORY    >=    YES         NO         0        0
# >#< starts a comment but comments are not saved across edits --------
"""
)


def default_complex() -> ComplexList:
    """The complex list a new cell starts with (that of a fresh Grid Engine 8.1)."""
    return parse(DEFAULT_COMPLEX_TEXT, "<default complex>")


# ---------------------------------------------------------------- comparisons


def _numeric_request(text: str) -> float:
    """A numeric request; Grid Engine compares one it cannot read as 0."""
    try:
        return sge_types.parse_number(text)
    except SpecifierError:
        return 0.0


def _string_result(a: ComplexAttr, relop: Relop, requested: str, offered: str) -> bool:
    """Grid Engine's ``string_cmp``: the wildcard answer (0 match, 1 not, -1 bad) against 0."""
    r = wildcard.evaluate(requested, offered, ignore_case=a.type.ignores_case)
    return {
        Relop.EQ: r == 0,
        Relop.NE: r != 0,
        Relop.LE: r <= 0,
        Relop.LT: r < 0,
        Relop.GT: r > 0,
        Relop.GE: r >= 0,
    }.get(relop, False)


def compare(attr: ComplexAttr, requested: str, offered: str) -> bool:
    """Whether a job's request ``-l name=requested`` is satisfied by the ``offered`` value.

    complex(5) relop: the value requested "is compared against the
    corresponding value configured for the considered queues"; the request
    is the left operand (``requested RELOP offered``), so for ``h_rt`` (``<=``)
    a request of 1:0:0 fits a queue with 2:0:0, and for ``load_avg`` (``>=``)
    a request of 2 fits a host with load 1.5.  Numeric types compare the
    numbers; string types match the request as a wildcard expression against
    the offered value (CSTRING and HOST case-insensitively).  ``offered``
    must be a valid value (:class:`SpecifierError` otherwise); a request
    Grid Engine cannot read counts as 0, as in Grid Engine.
    """
    if attr.type.is_string:
        return _string_result(attr, attr.relop, requested, offered)
    req = _numeric_request(requested)
    off = sge_types.parse_number(offered)
    return sge_types.relop_holds(attr.relop.value, req, off)


_THRESHOLD_RELOP = {
    Relop.LE: Relop.GT,
    Relop.GT: Relop.LE,
    Relop.LT: Relop.GE,
    Relop.GE: Relop.LT,
}


def threshold_exceeded(attr: ComplexAttr, threshold: str, load: str) -> bool:
    """Whether a ``load`` value crosses a queue's load/suspend ``threshold`` for ``attr``.

    queue_conf(5) load_thresholds: the threshold is exceeded when the load
    is on the far side of the attribute's relop -- Grid Engine evaluates
    ``threshold RELOP' load`` with the relop reversed (``>=`` becomes ``<``):
    ``np_load_avg`` (``>=``) threshold 1.75 is exceeded by a load of 1.8.
    ``==`` and ``!=`` are used as they are.
    """
    relop = _THRESHOLD_RELOP.get(attr.relop, attr.relop)
    if attr.type.is_string:
        return _string_result(attr, relop, threshold, load)
    thr = _numeric_request(threshold)
    value = sge_types.parse_number(load)
    if math.isnan(value):
        return False
    return sge_types.relop_holds(relop.value, thr, value)
