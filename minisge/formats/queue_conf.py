"""queue_conf(5): the cluster queue configuration file.

One ``name value`` line per attribute, in Grid Engine's order (the order of
``qconf -sq``), names padded to 22 columns, long lines broken at 80 columns.

For every attribute except ``qname`` and ``hostlist`` the value may be
host-specific (queue_conf(5), "enhanced queue configuration specifier
syntax")::

    slots 1,[@dual=2],[node7=4]

A default (the entry without brackets) is required; ``[host_id=value]``
tuples override it for a host group (``@name``) or a single host; a host
entry beats a host group entry beats the default.

The model keeps every value as the text Grid Engine writes back for it
(``qconf -sq``): parsing normalises what Grid Engine normalises (numbers to
decimal, booleans to TRUE/FALSE, lists to its separators, overrides to
groups-then-hosts order) and keeps as given what it keeps as given (time and
memory specifiers, strings).  :func:`decode` turns such a text into a typed
Python value for the engine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import is_memory, is_time, parse_memory, parse_time

NAME_WIDTH = 22  # value column of `qconf -sq`

# ---------------------------------------------------------------------------
# The attributes, in Grid Engine's order, with the kind of value each takes.
# ---------------------------------------------------------------------------

ULONG = "ulong"  # decimal number, 0 .. 4294967295 (seq_no, nsuspend)
SLOTS = "slots"  # number 0 .. 9999999
BOOL = "bool"  # TRUE / FALSE
TIME = "time"  # time_specifier (resource limits s_rt h_rt s_cpu h_cpu)
INTERVAL = "interval"  # time_specifier (suspend_interval, min_cpu_interval, notify)
MEMORY = "memory"  # memory_specifier (the other resource limits)
PRIORITY = "priority"  # nice value -20 .. +20
PROCESSORS = "processors"  # UNDEFINED or a range list 1-4,8
QTYPE = "qtype"  # BATCH, INTERACTIVE, both, or NONE
STRLIST = "strlist"  # names (pe_list, ckpt_list), white space separated on write
USERLIST = "userlist"  # user / access list names
PROJECTLIST = "projectlist"  # project names
CELIST = "celist"  # name=value,... (load_thresholds, complex_values)
SOLIST = "solist"  # subordinate_list
STRING = "string"  # free text (tmpdir, prolog, methods, ...)
PATH = "path"  # absolute path (shell)
START_MODE = "shell_start_mode"
INITIAL_STATE = "initial_state"
CALENDAR = "calendar"  # NONE or a calendar name

ATTRIBUTE_KINDS: dict[str, str] = {
    "seq_no": ULONG,
    "load_thresholds": CELIST,
    "suspend_thresholds": CELIST,
    "nsuspend": ULONG,
    "suspend_interval": INTERVAL,
    "priority": PRIORITY,
    "min_cpu_interval": INTERVAL,
    "processors": PROCESSORS,
    "qtype": QTYPE,
    "ckpt_list": STRLIST,
    "pe_list": STRLIST,
    "rerun": BOOL,
    "slots": SLOTS,
    "tmpdir": STRING,
    "shell": PATH,
    "prolog": STRING,
    "epilog": STRING,
    "shell_start_mode": START_MODE,
    "starter_method": STRING,
    "suspend_method": STRING,
    "resume_method": STRING,
    "terminate_method": STRING,
    "notify": INTERVAL,
    "owner_list": USERLIST,
    "user_lists": USERLIST,
    "xuser_lists": USERLIST,
    "subordinate_list": SOLIST,
    "complex_values": CELIST,
    "projects": PROJECTLIST,
    "xprojects": PROJECTLIST,
    "calendar": CALENDAR,
    "initial_state": INITIAL_STATE,
    "s_rt": TIME,
    "h_rt": TIME,
    "s_cpu": TIME,
    "h_cpu": TIME,
    "s_fsize": MEMORY,
    "h_fsize": MEMORY,
    "s_data": MEMORY,
    "h_data": MEMORY,
    "s_stack": MEMORY,
    "h_stack": MEMORY,
    "s_core": MEMORY,
    "h_core": MEMORY,
    "s_rss": MEMORY,
    "h_rss": MEMORY,
    "s_vmem": MEMORY,
    "h_vmem": MEMORY,
}

#: The attributes that take host-specific values, in Grid Engine's order.
HOST_ATTRIBUTES: tuple[str, ...] = tuple(ATTRIBUTE_KINDS)
#: Every attribute of the file, in Grid Engine's order.
ATTRIBUTES: tuple[str, ...] = ("qname", "hostlist") + HOST_ATTRIBUTES

MAX_SLOTS = 9999999  # queue_conf(5) slots: "valid values are 0 to 9999999"
MAX_ULONG = 4294967295
SHELL_START_MODES = ("unix_behavior", "posix_compliant", "script_from_stdin")
INITIAL_STATES = ("default", "enabled", "disabled")
QUEUE_TYPES = ("BATCH", "INTERACTIVE")  # the order qconf writes them in
NONE = "NONE"


# ---------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------


def is_hostgroup(host_id: str) -> bool:
    """sge_types(5): a hostgroup_name is an object name with a ``@`` prefix."""
    return host_id.startswith("@")


def _grid_engine_order(overrides: Iterable[Iterable[str]]) -> tuple[tuple[str, str], ...]:
    """Host group entries first, then host entries, each in the order given.

    This is the order ``qconf -sq`` writes them in, whatever order they were
    given in; keeping the model in it makes ``parse(write(x)) == x``.
    """
    pairs = [tuple(p) for p in overrides]
    groups = tuple((h, v) for h, v in pairs if is_hostgroup(h))
    hosts = tuple((h, v) for h, v in pairs if not is_hostgroup(h))
    return groups + hosts


@attrs.frozen
class HostValues:
    """The value of one attribute: the default and the host-specific overrides.

    Values are the text Grid Engine writes back (``"2"``, ``"make smp"``,
    ``"np_load_avg=1.75"``); ``overrides`` holds ``(host_identifier, value)``
    pairs, host groups before hosts.
    """

    default: str
    overrides: tuple[tuple[str, str], ...] = attrs.field(default=(), converter=_grid_engine_order)

    def text(self) -> str:
        """``default,[@group=value],[host=value]`` as ``qconf -sq`` writes it."""
        return ",".join([self.default] + [f"[{h}={v}]" for h, v in self.overrides])


def _host_values_field() -> Any:
    return attrs.field(validator=attrs.validators.instance_of(HostValues))


@attrs.frozen
class QueueConf:
    """A cluster queue (queue_conf(5)); one field per attribute, in file order.

    ``hostlist`` is empty for ``NONE``.
    """

    qname: str
    hostlist: tuple[str, ...] = attrs.field(converter=tuple)
    seq_no: HostValues = _host_values_field()
    load_thresholds: HostValues = _host_values_field()
    suspend_thresholds: HostValues = _host_values_field()
    nsuspend: HostValues = _host_values_field()
    suspend_interval: HostValues = _host_values_field()
    priority: HostValues = _host_values_field()
    min_cpu_interval: HostValues = _host_values_field()
    processors: HostValues = _host_values_field()
    qtype: HostValues = _host_values_field()
    ckpt_list: HostValues = _host_values_field()
    pe_list: HostValues = _host_values_field()
    rerun: HostValues = _host_values_field()
    slots: HostValues = _host_values_field()
    tmpdir: HostValues = _host_values_field()
    shell: HostValues = _host_values_field()
    prolog: HostValues = _host_values_field()
    epilog: HostValues = _host_values_field()
    shell_start_mode: HostValues = _host_values_field()
    starter_method: HostValues = _host_values_field()
    suspend_method: HostValues = _host_values_field()
    resume_method: HostValues = _host_values_field()
    terminate_method: HostValues = _host_values_field()
    notify: HostValues = _host_values_field()
    owner_list: HostValues = _host_values_field()
    user_lists: HostValues = _host_values_field()
    xuser_lists: HostValues = _host_values_field()
    subordinate_list: HostValues = _host_values_field()
    complex_values: HostValues = _host_values_field()
    projects: HostValues = _host_values_field()
    xprojects: HostValues = _host_values_field()
    calendar: HostValues = _host_values_field()
    initial_state: HostValues = _host_values_field()
    s_rt: HostValues = _host_values_field()
    h_rt: HostValues = _host_values_field()
    s_cpu: HostValues = _host_values_field()
    h_cpu: HostValues = _host_values_field()
    s_fsize: HostValues = _host_values_field()
    h_fsize: HostValues = _host_values_field()
    s_data: HostValues = _host_values_field()
    h_data: HostValues = _host_values_field()
    s_stack: HostValues = _host_values_field()
    h_stack: HostValues = _host_values_field()
    s_core: HostValues = _host_values_field()
    h_core: HostValues = _host_values_field()
    s_rss: HostValues = _host_values_field()
    h_rss: HostValues = _host_values_field()
    s_vmem: HostValues = _host_values_field()
    h_vmem: HostValues = _host_values_field()


#: What ``qconf -aq`` offers for a new queue (Grid Engine 8.1.9 as installed
#: here: shell /bin/sh and pe_list "make smp mpi" differ from the 6.2 source).
TEMPLATE_VALUES: dict[str, str] = {
    "seq_no": "0",
    "load_thresholds": "np_load_avg=1.75",
    "suspend_thresholds": NONE,
    "nsuspend": "1",
    "suspend_interval": "00:05:00",
    "priority": "0",
    "min_cpu_interval": "00:05:00",
    "processors": "UNDEFINED",
    "qtype": "BATCH INTERACTIVE",
    "ckpt_list": NONE,
    "pe_list": "make smp mpi",
    "rerun": "FALSE",
    "slots": "1",
    "tmpdir": "/tmp",
    "shell": "/bin/sh",
    "prolog": NONE,
    "epilog": NONE,
    "shell_start_mode": "posix_compliant",
    "starter_method": NONE,
    "suspend_method": NONE,
    "resume_method": NONE,
    "terminate_method": NONE,
    "notify": "00:00:60",
    "owner_list": NONE,
    "user_lists": NONE,
    "xuser_lists": NONE,
    "subordinate_list": NONE,
    "complex_values": NONE,
    "projects": NONE,
    "xprojects": NONE,
    "calendar": NONE,
    "initial_state": "default",
    **{a: "INFINITY" for a in ("s_rt", "h_rt", "s_cpu", "h_cpu")},
    **{a: "INFINITY" for a, k in ATTRIBUTE_KINDS.items() if k == MEMORY},
}


def template(name: str = "template") -> QueueConf:
    """The template defaults of queue_conf(5), as ``qconf -aq NAME`` offers them.

    ``hostlist`` is NONE ("no hosts support the queue").
    """
    return QueueConf(
        qname=name,
        hostlist=(),
        **{a: HostValues(TEMPLATE_VALUES[a]) for a in HOST_ATTRIBUTES},
    )


# ---------------------------------------------------------------------------
# Values: checking and normalising one value of one attribute
# ---------------------------------------------------------------------------

# sge_types(5) object_name: printing ASCII except SPACE / : ' \ [ ] { } | ( ) @ % , "
_OBJECT_NAME_FORBIDDEN = set(" /:\u00b4'\\[]{}|()@%,\"")
_HOST_NAME_FORBIDDEN = set("[]=,@\"'\\()")


def is_object_name(name: str) -> bool:
    """sge_types(5) object_name: up to 512 printing ASCII characters, none special."""
    return (
        0 < len(name) <= 512
        and all("!" <= c <= "~" for c in name)
        and not (set(name) & _OBJECT_NAME_FORBIDDEN)
    )


def is_host_identifier(host_id: str) -> bool:
    """sge_types(5) host_identifier: a host name or ``@`` + an object name."""
    if is_hostgroup(host_id):
        return is_object_name(host_id[1:])
    return (
        0 < len(host_id) <= 512
        and all("!" <= c <= "~" for c in host_id)
        and not (set(host_id) & _HOST_NAME_FORBIDDEN)
    )


def _split_names(text: str) -> list[str]:
    """A list separated by commas and/or white space (queue_conf(5))."""
    return [p for p in re.split(r"[\s,]+", text) if p]


def _unique(items: Iterable[Any]) -> list[Any]:
    """First occurrences only: Grid Engine silently drops repeated list elements."""
    seen: list[Any] = []
    for i in items:
        if i not in seen:
            seen.append(i)
    return seen


_C_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _ulong(attr: str, text: str) -> str:
    """A u_long32 read as Grid Engine does (strtod: 0x10, 1e3 accepted), in decimal."""
    body = text[1:] if text[:1] in "+-" else text
    if text.startswith("-") and _C_NUMBER.fullmatch(body):
        raise FormatError(f'{attr}: "{text}" is not an u_long32 value')
    m = _C_NUMBER.match(body)
    if m is None or m.end() != len(body) or text.startswith("-"):
        raise FormatError(f'{attr}: error parsing unsigned long value from string "{text}"')
    tok = m.group(0)
    if tok[:2].lower() == "0x":
        value = float(min(int(tok, 16), MAX_ULONG + 1))
    else:
        value = float(tok)
    if math.isinf(value) or value - math.floor(value) > 1e-12 or value > MAX_ULONG:
        raise FormatError(f'{attr}: "{text}" is not an u_long32 value')
    return str(int(value))


def _slots(attr: str, text: str) -> str:
    """queue_conf(5) slots: "Type is number, valid values are 0 to 9999999"."""
    value = _ulong(attr, text)
    if int(value) > MAX_SLOTS:
        raise FormatError(
            f'{value} is an invalid value for the "{attr}" attribute'
            f" - it must be a value between 0 and {MAX_SLOTS}"
        )
    return value


_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


def _bool(attr: str, text: str) -> str:
    """Booleans: TRUE/T/1/YES/Y or FALSE/F/0/NO/N in any case, written TRUE/FALSE."""
    if text.lower() in _TRUE:
        return "TRUE"
    if text.lower() in _FALSE:
        return "FALSE"
    raise FormatError(f'{attr}: error parsing value "{text}": not a boolean (TRUE or FALSE)')


def _time(attr: str, text: str) -> str:
    """A time_specifier of sge_types(5), kept as given."""
    if not is_time(text):
        raise FormatError(f'{attr}: error parsing value "{text}": not a time specifier')
    return text


def _memory(attr: str, text: str) -> str:
    """A memory_specifier of sge_types(5), kept as given."""
    if not is_memory(text):
        raise FormatError(f'{attr}: error parsing value "{text}": not a memory specifier')
    return text


def _atoi(text: str) -> int:
    """C atoi: optional sign and the leading digits, 0 when there are none."""
    m = re.match(r"\s*([+-]?)([0-9]*)", text)
    assert m is not None
    if not m.group(2):
        return 0
    value = int(m.group(2)[:12])  # C would overflow; any such value is out of range
    return -value if m.group(1) == "-" else value


def _priority(attr: str, text: str) -> str:
    """queue_conf(5) priority: a nice value from -20 to +20, kept as given.

    Grid Engine reads it with atoi, so trailing characters are ignored, but a
    value reading as 0 must start with "0".
    """
    value = _atoi(text)
    if value == 0 and not text.startswith("0"):
        raise FormatError(f'{attr}: invalid character in "{text}"')
    if not -20 <= value <= 20:
        raise FormatError(f'{attr}: "{text}": priority not in range -20 to +20')
    return text


_RANGE = re.compile(r"[0-9]+|[0-9]+-[0-9]*|-[0-9]+")


def _processors(attr: str, text: str) -> str:
    """queue_conf(5) processors: UNDEFINED or a range list like 1-4,8,10.

    Written with the elements joined by single commas (Grid Engine keeps the
    text as given; the two agree for every list without white space).
    """
    if text.upper() == "UNDEFINED":
        return text
    parts = _split_names(text)
    for part in parts:
        if not _RANGE.fullmatch(part):
            raise FormatError(f'{attr}: "{text}" is not a range list (e.g. 1-4,8,10) or UNDEFINED')
    if not parts:
        raise FormatError(f"{attr}: no value given")
    return ",".join(parts)


def _qtype(attr: str, text: str) -> str:
    """queue_conf(5) qtype: BATCH, INTERACTIVE, both, or NONE; written BATCH INTERACTIVE."""
    words = _split_names(text)
    if len(words) == 1 and words[0].upper() == NONE:
        return NONE
    given: list[str] = []
    for w in words:
        if w.upper() not in QUEUE_TYPES:
            raise FormatError(f'{attr}: unknown queue type "{w}" in "{text}" (BATCH, INTERACTIVE or NONE)')
        if w.upper() in given:
            raise FormatError(f'{attr}: queue type "{w.upper()}" given twice in "{text}"')
        given.append(w.upper())
    if not given:
        raise FormatError(f"{attr}: no value given")
    return " ".join(t for t in QUEUE_TYPES if t in given)


def _name_list(attr: str, text: str) -> str:
    """A list of names separated by commas or white space, written with spaces.

    NONE (any case) as the first element means the empty list; repeated names
    are dropped, as Grid Engine does.
    """
    names = _split_names(text)
    if not names:
        raise FormatError(f"{attr}: no value given")
    if names[0].upper() == NONE:
        return NONE
    for n in names:
        if not is_object_name(n):
            raise FormatError(f'{attr}: "{n}" is not a valid name in "{text}"')
    return " ".join(_unique(names))


def _celist(attr: str, text: str) -> str:
    """``name=value`` pairs (load_thresholds, complex_values), written ``a=1,b=2``.

    Grid Engine splits the text at commas, white space and ``=`` and takes the
    words in pairs; NONE or UNDEFINED as the first word means no entries.
    """
    words = [w for w in re.split(r"[\s,=]+", text) if w]
    if not words:
        raise FormatError(f"{attr}: no value given")
    if words[0].upper() in (NONE, "UNDEFINED"):
        return NONE
    if len(words) % 2:
        raise FormatError(f'{attr}: error parsing value "{text}": expected name=value pairs')
    pairs = list(zip(words[0::2], words[1::2], strict=True))
    for name, value in pairs:
        if not is_object_name(name):
            raise FormatError(f'{attr}: "{name}" is not a valid complex name in "{text}"')
        if value.upper() == NONE or set(value) & set("[]"):
            raise FormatError(f'{attr}: "{value}" is not a valid value for "{name}"')
    return ",".join(f"{n}={v}" for n, v in pairs)


_SLOTWISE = re.compile(r"slots\s*=\s*([^(]*)\((.*)\)", re.IGNORECASE | re.DOTALL)


def _subordinates(attr: str, text: str) -> str:
    """queue_conf(5) subordinate_list, written as Grid Engine writes it.

    Queue-wise: ``q1=5,q2`` -> ``q1=5, q2`` (a threshold of 0 is dropped).
    Slot-wise: ``slots=N(q1:seq:action, ...)`` with seq_no 0 and action ``sr``
    filled in where left out.
    """
    if text.lower().startswith("slots") and text[5:].lstrip().startswith("="):
        return _slotwise(attr, text)
    words = _split_names(text)
    if not words:
        raise FormatError(f"{attr}: no value given")
    if words[0].upper() == NONE:
        return NONE
    entries: list[tuple[str, int]] = []
    for w in words:
        m = re.fullmatch(r"([^:=]+)(?:[:=]([0-9]{1,10}))?", w)
        if m is None or not is_object_name(m.group(1)) or int(m.group(2) or 0) > MAX_ULONG:
            raise FormatError(f'{attr}: error parsing value "{text}": bad subordinate "{w}"')
        entries.append((m.group(1), int(m.group(2) or 0)))
    entries = _unique(entries)
    out = []
    for i, (name, threshold) in enumerate(entries):
        last = i == len(entries) - 1
        out.append(name + (f"={threshold}" + ("" if last else ",") if threshold else ""))
    return " ".join(out)


def _slotwise(attr: str, text: str) -> str:
    """Slot-wise preemption: ``slots=threshold(queue[:seq_no][:action],...)``."""
    m = _SLOTWISE.fullmatch(text)
    if m is None:
        raise FormatError(f'{attr}: error parsing value "{text}": expected slots=N(queue_list)')
    threshold = m.group(1).strip()
    if not re.fullmatch(r"[0-9]{1,10}", threshold) or not 0 < int(threshold) <= MAX_ULONG:
        raise FormatError(f'{attr}: error parsing value "{text}": threshold must be a positive integer')
    entries: list[tuple[str, int, str]] = []
    for w in _split_names(m.group(2)):
        q = re.fullmatch(r"([^:]+)(?::([0-9]{1,10}))?(?::(sr|lr))?", w)
        if q is None or not is_object_name(q.group(1)) or int(q.group(2) or 0) > MAX_ULONG:
            raise FormatError(f'{attr}: error parsing value "{text}": bad queue_def "{w}"')
        entries.append((q.group(1), int(q.group(2) or 0), q.group(3) or "sr"))
    if not entries:
        raise FormatError(f'{attr}: error parsing value "{text}": no queue given')
    inner = ", ".join(f"{n}:{s}:{a}" for n, s, a in _unique(entries))
    return f"slots={int(threshold)}({inner})"


def _string(attr: str, text: str) -> str:
    """Free text (paths, methods), kept as given."""
    return text


def _path(attr: str, text: str) -> str:
    """queue_conf(5) shell: Grid Engine requires an absolute path."""
    if not text.startswith("/"):
        raise FormatError(f'{attr}: invalid value "{text}": must be an absolute path')
    return text


#: A value's check: (attribute name, text) -> the text as Grid Engine writes it back.
Normaliser = Callable[[str, str], str]


def _one_of(choices: tuple[str, ...], what: str) -> Normaliser:
    def check(attr: str, text: str) -> str:
        if text.lower() not in choices:
            raise FormatError(f'{attr}: invalid value "{text}" as {what} ({", ".join(choices)})')
        return text

    check.__doc__ = f"queue_conf(5) {what}: one of {', '.join(choices)} (any case), kept as given."
    return check


def _calendar(attr: str, text: str) -> str:
    """queue_conf(5) calendar: NONE or a calendar name (an object_name)."""
    if text.upper() != NONE and not is_object_name(text):
        raise FormatError(f'{attr}: "{text}" is not a valid calendar name')
    return text


_NORMALISERS: dict[str, Normaliser] = {
    ULONG: _ulong,
    SLOTS: _slots,
    BOOL: _bool,
    TIME: _time,
    INTERVAL: _time,
    MEMORY: _memory,
    PRIORITY: _priority,
    PROCESSORS: _processors,
    QTYPE: _qtype,
    STRLIST: _name_list,
    USERLIST: _name_list,
    PROJECTLIST: _name_list,
    CELIST: _celist,
    SOLIST: _subordinates,
    STRING: _string,
    PATH: _path,
    START_MODE: _one_of(SHELL_START_MODES, "shell start mode"),
    INITIAL_STATE: _one_of(INITIAL_STATES, "initial state"),
    CALENDAR: _calendar,
}


def normalise_value(attr: str, text: str) -> str:
    """Check one value of ``attr`` and return it as Grid Engine writes it back.

    Raises FormatError (line 0) naming the attribute and the value.
    """
    kind = ATTRIBUTE_KINDS.get(attr)
    if kind is None:
        raise FormatError(f'unknown attribute name "{attr}"')
    text = text.strip()
    if not text:
        raise FormatError(f"{attr}: no value given")
    return _NORMALISERS[kind](attr, text)


# ---------------------------------------------------------------------------
# The host-specific syntax: default,[host_id=value],...
# ---------------------------------------------------------------------------


def parse_host_values(attr: str, text: str) -> HostValues:
    """``default[,[host_id=value]]...`` of queue_conf(5), every value checked.

    Spaces are allowed around "," but not inside "[]" (except within list
    values); a default is required; a host identifier given twice is
    ambiguous and rejected.  Raises FormatError (line 0).
    """
    text = text.strip()
    start = text.find("[")
    head = text if start < 0 else text[:start].rstrip()
    if start >= 0:
        if not head:
            raise FormatError(f'"{attr}" has no default value: "{text}"')
        if not head.endswith(","):
            raise FormatError(f'{attr}: all list elements must be separated by commas: "{text}"')
        head = head[:-1].rstrip()
    if "]" in head:
        raise FormatError(f'{attr}: "]" without "[" in "{text}"')
    if not head:
        raise FormatError(f'"{attr}" has no default value: "{text}"')
    default = normalise_value(attr, head)
    overrides = _parse_overrides(attr, text, start) if start >= 0 else []
    return HostValues(default, tuple(overrides))


def _parse_overrides(attr: str, text: str, pos: int) -> list[tuple[str, str]]:
    """The ``[host_id=value]`` tuples from ``text[pos:]`` (which starts with "[")."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    n = len(text)
    while True:
        close = text.find("]", pos + 1)
        inner = text[pos + 1 : close] if close >= 0 else text[pos + 1 :]
        if close < 0 or "[" in inner:
            raise FormatError(f'{attr}: each list item must be enclosed in brackets: "{text}"')
        host_id, value = _override(attr, inner)
        if host_id.lower() in seen:
            raise FormatError(f'{attr}: value for "{host_id}" is multiply defined')
        seen.add(host_id.lower())
        out.append((host_id, value))
        pos = close + 1
        while pos < n and text[pos].isspace():
            pos += 1
        if pos == n:
            return out
        if text[pos] != ",":
            raise FormatError(f'{attr}: all list elements must be separated by commas: "{text}"')
        pos += 1
        while pos < n and text[pos].isspace():
            pos += 1
        if pos == n:
            raise FormatError(f'{attr}: there is an extra comma at the end of the list: "{text}"')
        if text[pos] != "[":
            raise FormatError(f'{attr}: each list item must be enclosed in brackets: "{text}"')


def _override(attr: str, inner: str) -> tuple[str, str]:
    """``host_id=value`` inside one pair of brackets."""
    if "=" not in inner:
        raise FormatError(f"{attr}: '=' has to separate host or group from value: \"[{inner}]\"")
    host_id, value = inner.split("=", 1)
    if not is_host_identifier(host_id):
        raise FormatError(f'{attr}: "{host_id}" is not a valid host or host group name in "[{inner}]"')
    if not value.strip():
        raise FormatError(f'{attr}: no value given for "{host_id}"')
    return host_id, normalise_value(attr, value)


def _parse_hostlist(text: str) -> tuple[str, ...]:
    """queue_conf(5) hostlist: host identifiers separated by white space or ",".

    NONE means no hosts; repeated entries are dropped.
    """
    if "[" in text or "]" in text:
        raise FormatError(f'hostlist: host-specific values are not allowed here: "{text}"')
    names = _split_names(text)
    if not names or names[0].upper() == NONE:
        return ()
    for n in names:
        if not is_host_identifier(n):
            raise FormatError(f'hostlist: "{n}" is not a valid host or host group name')
    return tuple(_unique(names))


def _check_qname(text: str) -> str:
    """queue_conf(5) qname: a queue_name (an object_name of sge_types(5))."""
    if not is_object_name(text):
        raise FormatError(f'cluster queue name "{text}" is not valid')
    return text


# ---------------------------------------------------------------------------
# parse / write
# ---------------------------------------------------------------------------


def parse(text: str, path: str = "<input>") -> QueueConf:
    """Parse a queue_conf(5) file; every attribute is required, once."""
    attrs_ = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES)
    fields: dict[str, Any] = {}
    for name in ATTRIBUTES:
        a = attrs_[name]
        try:
            if name == "qname":
                fields[name] = _check_qname(a.value)
            elif name == "hostlist":
                fields[name] = _parse_hostlist(a.value)
            else:
                fields[name] = parse_host_values(name, a.value)
        except FormatError as e:
            raise e.located(path, a.lineno) from None
    return QueueConf(**fields)


def attribute_text(conf: QueueConf, attr: str) -> str:
    """The value of ``attr`` as written in the file (``qconf -sq``)."""
    if attr == "qname":
        return conf.qname
    if attr == "hostlist":
        return " ".join(conf.hostlist) if conf.hostlist else NONE
    values: HostValues = getattr(conf, attr)  # every other attribute is host-specific
    return values.text()


def write(conf: QueueConf) -> str:
    """The file as ``qconf -sq`` prints it: 22-column names, 80-column breaks."""
    return write_attributes(((a, attribute_text(conf, a)) for a in ATTRIBUTES), NAME_WIDTH)


# ---------------------------------------------------------------------------
# Typed values for the engine
# ---------------------------------------------------------------------------


@attrs.frozen
class QueueSubordinate:
    """Queue-wise subordination: suspend ``queue`` when ``threshold`` slots are
    busy here (None: when all slots are busy)."""

    queue: str
    threshold: int | None


@attrs.frozen
class SlotwiseSubordinate:
    """One queue of a slot-wise preemption list."""

    queue: str
    seq_no: int
    action: str  # "sr" shortest run time first, "lr" longest


@attrs.frozen
class SlotwiseSubordination:
    """``slots=threshold(queue_list)``."""

    threshold: int
    queues: tuple[SlotwiseSubordinate, ...]


def decode(attr: str, text: str) -> Any:
    """A value text of ``attr`` (as in the model) as a Python value.

    ulong/slots -> int; bool -> bool; time -> float seconds; memory -> float
    bytes (INFINITY -> math.inf); priority -> int; qtype and name lists ->
    tuple of str (NONE -> ()); load_thresholds/complex_values -> tuple of
    (name, value) pairs; subordinate_list -> tuple of QueueSubordinate, or a
    SlotwiseSubordination; every other attribute -> the text itself.
    """
    kind = ATTRIBUTE_KINDS[attr]
    if kind in (ULONG, SLOTS):
        return int(text)
    if kind == BOOL:
        return text == "TRUE"
    if kind in (TIME, INTERVAL):
        return parse_time(text)
    if kind == MEMORY:
        return parse_memory(text)
    if kind == PRIORITY:
        return _atoi(text)
    if kind in (QTYPE, STRLIST, USERLIST, PROJECTLIST):
        return () if text == NONE else tuple(text.split())
    if kind == CELIST:
        return () if text == NONE else tuple(tuple(p.split("=", 1)) for p in text.split(","))
    if kind == SOLIST:
        return _decode_subordinates(text)
    return text


def _decode_subordinates(text: str) -> Any:
    if text == NONE:
        return ()
    m = _SLOTWISE.fullmatch(text)
    if m:
        queues = []
        for w in m.group(2).split(", "):
            q, seq, action = w.split(":")
            queues.append(SlotwiseSubordinate(q, int(seq), action))
        return SlotwiseSubordination(int(m.group(1)), tuple(queues))
    out = []
    for w in text.replace(",", " ").split():
        q, _, threshold = w.partition("=")
        out.append(QueueSubordinate(q, int(threshold) if threshold else None))
    return tuple(out)


# ---------------------------------------------------------------------------
# Queue instances: the value of attribute A in queue instance Q@H
# ---------------------------------------------------------------------------


class AmbiguousSetting(LookupError):
    """A host gets a value from more than one host group entry (state ``c``)."""

    def __init__(self, attr: str, host: str, groups: tuple[str, ...]):
        self.attr = attr
        self.host = host
        self.groups = groups
        super().__init__(
            f'attribute "{attr}" is ambiguous for host "{host}": '
            f"it is a member of {', '.join(groups)}"
        )


def _members(hostgroups: Mapping[str, Collection[str]], group: str) -> set[str]:
    return {h.lower() for h in hostgroups.get(group, ())}


def group_matches(values: HostValues, host: str,
                  hostgroups: Mapping[str, Collection[str]]) -> list[tuple[str, str]]:
    """The ``[@group=value]`` overrides of ``values`` whose host group holds ``host``."""
    return [(g, v) for g, v in values.overrides if is_hostgroup(g) and host.lower() in _members(hostgroups, g)]


# the old name, until minisge/qmaster/load_control.py calls group_matches
_group_matches = group_matches


def _host_match(values: HostValues, host: str) -> str | None:
    for h, v in values.overrides:
        if not is_hostgroup(h) and h.lower() == host.lower():
            return v
    return None


def value_for(
    conf: QueueConf,
    attr: str,
    host: str,
    hostgroups: Mapping[str, Collection[str]],
    strict: bool = True,
) -> str:
    """The value text of ``attr`` in queue instance ``conf.qname@host``.

    queue_conf(5): a host entry overrides a host group entry, which overrides
    the default.  ``hostgroups`` maps ``@name`` to its (resolved) member
    hosts; host names compare without regard to case.  When the host is in
    more than one host group with an entry (and has no entry of its own) the
    setting is ambiguous: AmbiguousSetting is raised, or with
    ``strict=False`` the default is used, as Grid Engine does for a queue
    instance in state ``c``.
    """
    if attr not in ATTRIBUTE_KINDS:
        raise KeyError(f'"{attr}" is not a host-specific queue attribute')
    values: HostValues = getattr(conf, attr)
    own = _host_match(values, host)
    if own is not None:
        return own
    groups = group_matches(values, host, hostgroups)
    if len(groups) == 1:
        return groups[0][1]
    if len(groups) > 1 and strict:
        raise AmbiguousSetting(attr, host, tuple(g for g, _ in groups))
    return values.default


def typed_value_for(
    conf: QueueConf,
    attr: str,
    host: str,
    hostgroups: Mapping[str, Collection[str]],
    strict: bool = True,
) -> Any:
    """:func:`value_for`, decoded with :func:`decode`."""
    return decode(attr, value_for(conf, attr, host, hostgroups, strict))


def ambiguous_attributes(
    conf: QueueConf, host: str, hostgroups: Mapping[str, Collection[str]]
) -> tuple[str, ...]:
    """The attributes whose setting for ``host`` is ambiguous, in file order.

    queue_conf(5): "Ambiguous configurations (those with more than one
    attribute setting for a particular host) cause the relevant queue
    instances to go into a 'configuration ambiguous' state" (``c``).
    """
    out = []
    for attr in HOST_ATTRIBUTES:
        values: HostValues = getattr(conf, attr)
        if _host_match(values, host) is None and len(group_matches(values, host, hostgroups)) > 1:
            out.append(attr)
    return tuple(out)


def hosts_of(conf: QueueConf, hostgroups: Mapping[str, Collection[str]]) -> tuple[str, ...]:
    """The hosts of the queue's instances: the hostlist with groups expanded.

    In hostlist order, each host once (compared without regard to case); a
    host group's members in the order the mapping gives them.  A host group
    missing from ``hostgroups`` raises KeyError.
    """
    out: list[str] = []
    seen: set[str] = set()
    for entry in conf.hostlist:
        if is_hostgroup(entry):
            if entry not in hostgroups:
                raise KeyError(f'host group "{entry}" does not exist')
            members: Iterable[str] = hostgroups[entry]
        else:
            members = (entry,)
        for h in members:
            if h.lower() not in seen:
                seen.add(h.lower())
                out.append(h)
    return tuple(out)
