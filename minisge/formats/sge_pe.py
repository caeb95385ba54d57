"""sge_pe(5): parallel environments (``qconf -sp``/``-Ap``).

All twelve attributes are required (as ``qconf -Ap`` demands); ``qconf -sp``
pads the names to column 19 in this order::

    pe_name            smp
    slots              999
    user_lists         NONE
    xuser_lists        NONE
    start_proc_args    NONE
    stop_proc_args     NONE
    allocation_rule    $pe_slots
    control_slaves     TRUE
    job_is_first_task  TRUE
    urgency_slots      min
    accounting_summary TRUE
    qsort_args         NONE

``start_proc_args``/``stop_proc_args`` are a command line with an optional
``user@`` prefix (:class:`ProcArgs`); Grid Engine keeps their words joined
by single spaces, and so do we.
"""

from __future__ import annotations

import re

import attrs

from minisge.formats.access_list import (
    check_not_in_both,
    check_object_name,
    is_none,
    parse_name_list,
    parse_ulong_attr,
    write_name_list,
)
from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.procedure_variables import PROC_VARIABLES
from minisge.formats.sge_types import SpecifierError

ATTRIBUTES = (
    "pe_name",
    "slots",
    "user_lists",
    "xuser_lists",
    "start_proc_args",
    "stop_proc_args",
    "allocation_rule",
    "control_slaves",
    "job_is_first_task",
    "urgency_slots",
    "accounting_summary",
    "qsort_args",
)
NAME_WIDTH = 19
MAX_SLOTS = 9999999
PE_SLOTS, FILL_UP, ROUND_ROBIN = "$pe_slots", "$fill_up", "$round_robin"
ALLOCATION_RULES = (PE_SLOTS, FILL_UP, ROUND_ROBIN)
URGENCY_METHODS = ("min", "max", "avg")

_VARIABLE = re.compile(r"\$([A-Za-z0-9_]*)")

_TRUE_WORDS = ("true", "t", "yes", "y", "1")
_FALSE_WORDS = ("false", "f", "no", "n", "0")


@attrs.frozen
class ProcArgs:
    """A start/stop procedure: ``[user@]command [args...]``.

    sge_pe(5): the command line is started directly, not in a shell; an
    optional ``user@`` prefix names the user it runs as.
    """

    command: str  # the command line, words joined by single spaces
    user: str | None = None

    @property
    def text(self) -> str:
        return f"{self.user}@{self.command}" if self.user is not None else self.command

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(self.command.split(" "))


@attrs.frozen
class ParallelEnvironment:
    """One PE; defaults are those of the ``qconf -ap`` template."""

    name: str
    slots: int = 0
    user_lists: tuple[str, ...] = ()
    xuser_lists: tuple[str, ...] = ()
    start_proc_args: ProcArgs | None = None
    stop_proc_args: ProcArgs | None = None
    allocation_rule: str = PE_SLOTS  # "$pe_slots", "$fill_up", "$round_robin" or digits
    control_slaves: bool = False
    job_is_first_task: bool = True
    urgency_slots: str = "min"  # min, max, avg (any case) or digits, as given
    accounting_summary: bool = False
    qsort_args: str | None = None

    @property
    def fixed_allocation(self) -> int | None:
        """The per-host process count of an integer allocation_rule, else None."""
        rule = self.allocation_rule
        return int(rule) if rule.isascii() and rule.isdigit() else None


def template(name: str) -> ParallelEnvironment:
    """The PE ``qconf -ap NAME`` offers in the editor."""
    return ParallelEnvironment(name=name)


# --- value parsers -------------------------------------------------------------


def _single_word(attr: str, value: str, path: str, line: int) -> str:
    words = value.split()
    if len(words) != 1:
        rest = " ".join(words[1:])
        raise FormatError(f'attribute "{attr}": unrecognized characters after the value: "{rest}"', path, line)
    return words[0]


def parse_bool(attr: str, value: str, path: str = "<input>", line: int = 0) -> bool:
    """TRUE/FALSE as Grid Engine reads them: true t yes y 1 / false f no n 0, any case."""
    word = _single_word(attr, value, path, line).lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    raise FormatError(f'attribute "{attr}": error parsing value "{value}": not TRUE or FALSE', path, line)


def parse_slots(value: str, path: str = "<input>", line: int = 0) -> int:
    """slots: an integer from 0 to 9999999."""
    slots = parse_ulong_attr("slots", _single_word("slots", value, path, line), path, line)
    if slots > MAX_SLOTS:
        raise FormatError(
            f'{slots} is an invalid value for the "slots" attribute - it must be a value between 0 and {MAX_SLOTS}',
            path,
            line,
        )
    return slots


def parse_allocation_rule(value: str, path: str = "<input>", line: int = 0) -> str:
    """allocation_rule: a positive integer (processes per host), $pe_slots,
    $fill_up or $round_robin."""
    rule = _single_word("allocation_rule", value, path, line)
    if rule in ALLOCATION_RULES:
        return rule
    if rule.startswith("$"):
        raise FormatError(f'attribute "allocation_rule": unknown variable "{rule[1:]}"', path, line)
    if rule.isdigit() and rule.isascii() and int(rule) > 0:
        return rule
    raise FormatError(
        f'attribute "allocation_rule": "{rule}" is neither a positive integer nor $pe_slots, $fill_up or $round_robin',
        path,
        line,
    )


def parse_urgency_slots(value: str, path: str = "<input>", line: int = 0) -> str:
    """urgency_slots: an integer, min, max or avg (any case, kept as given)."""
    word = _single_word("urgency_slots", value, path, line)
    if word.lower() in URGENCY_METHODS or (word.isdigit() and word.isascii()):
        return word
    raise FormatError(f'rejecting invalid urgency_slots setting "{word}"', path, line)


def _check_variables(attr: str, command: str, path: str, line: int) -> None:
    """Only the sge_pe(5) variables may appear as ``$name``."""
    for m in _VARIABLE.finditer(command):
        name = m.group(1)
        if not name:
            raise FormatError(f'attribute "{attr}": variables need at least one character', path, line)
        if name not in PROC_VARIABLES:
            raise FormatError(f'attribute "{attr}": unknown variable "{name}"', path, line)


def parse_proc_args(attr: str, value: str, path: str = "<input>", line: int = 0) -> ProcArgs | None:
    """start_proc_args/stop_proc_args: NONE or ``[user@]command [args]``.

    The user prefix is what precedes an ``@`` that comes before the first
    blank (the shepherd's rule).
    """
    words = value.split()
    if not words:
        raise FormatError(f'missing value for attribute "{attr}"', path, line)
    if len(words) == 1 and is_none(words[0]):
        return None
    text = " ".join(words)
    user = None
    first = words[0]
    if "@" in first:
        user, _, rest = text.partition("@")
        if not user:
            raise FormatError(f'attribute "{attr}": empty user name before "@"', path, line)
        try:
            check_object_name(user)
        except SpecifierError as err:
            raise FormatError(f'attribute "{attr}": invalid user name "{user}": {err}', path, line) from None
        if not rest or rest.startswith(" "):
            raise FormatError(f'attribute "{attr}": no command after "{user}@"', path, line)
        text = rest
    _check_variables(attr, text, path, line)
    return ProcArgs(command=text, user=user)


def parse_qsort_args(value: str, path: str = "<input>", line: int = 0) -> str | None:
    """qsort_args: NONE or ``library qsort-function [arg ...]`` (kept as words)."""
    words = value.split()
    if len(words) == 1 and is_none(words[0]):
        return None
    if len(words) < 2:
        raise FormatError('attribute "qsort_args": expected "library qsort-function [arg1 ...]"', path, line)
    return " ".join(words)


# --- parse and write -------------------------------------------------------------


def parse(text: str, path: str = "<input>") -> ParallelEnvironment:
    """An sge_pe(5) file, as ``qconf -Ap`` reads it."""
    a = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES, join="ge")

    def val(name: str) -> str:
        return a[name].value

    def ln(name: str) -> int:
        return a[name].lineno

    name = _single_word("pe_name", val("pe_name"), path, ln("pe_name"))
    try:
        check_object_name(name)
    except SpecifierError as err:
        raise FormatError(f'invalid character in pe name of pe "{name}": {err}', path, ln("pe_name")) from None
    user_lists = parse_name_list("user_lists", val("user_lists"), path, ln("user_lists"))
    xuser_lists = parse_name_list("xuser_lists", val("xuser_lists"), path, ln("xuser_lists"))
    check_not_in_both(user_lists, xuser_lists, f'parallel environment "{name}"', path, ln("xuser_lists"))
    return ParallelEnvironment(
        name=name,
        slots=parse_slots(val("slots"), path, ln("slots")),
        user_lists=user_lists,
        xuser_lists=xuser_lists,
        start_proc_args=parse_proc_args("start_proc_args", val("start_proc_args"), path, ln("start_proc_args")),
        stop_proc_args=parse_proc_args("stop_proc_args", val("stop_proc_args"), path, ln("stop_proc_args")),
        allocation_rule=parse_allocation_rule(val("allocation_rule"), path, ln("allocation_rule")),
        control_slaves=parse_bool("control_slaves", val("control_slaves"), path, ln("control_slaves")),
        job_is_first_task=parse_bool("job_is_first_task", val("job_is_first_task"), path, ln("job_is_first_task")),
        urgency_slots=parse_urgency_slots(val("urgency_slots"), path, ln("urgency_slots")),
        accounting_summary=parse_bool("accounting_summary", val("accounting_summary"), path, ln("accounting_summary")),
        qsort_args=parse_qsort_args(val("qsort_args"), path, ln("qsort_args")),
    )


def _bool(value: bool) -> str:
    return "TRUE" if value else "FALSE"


def _proc(args: ProcArgs | None) -> str:
    return args.text if args is not None else "NONE"


def write(pe: ParallelEnvironment) -> str:
    """The text ``qconf -sp NAME`` prints."""
    return write_attributes(
        [
            ("pe_name", pe.name),
            ("slots", str(pe.slots)),
            ("user_lists", write_name_list(pe.user_lists)),
            ("xuser_lists", write_name_list(pe.xuser_lists)),
            ("start_proc_args", _proc(pe.start_proc_args)),
            ("stop_proc_args", _proc(pe.stop_proc_args)),
            ("allocation_rule", pe.allocation_rule),
            ("control_slaves", _bool(pe.control_slaves)),
            ("job_is_first_task", _bool(pe.job_is_first_task)),
            ("urgency_slots", pe.urgency_slots),
            ("accounting_summary", _bool(pe.accounting_summary)),
            ("qsort_args", pe.qsort_args if pe.qsort_args is not None else "NONE"),
        ],
        NAME_WIDTH,
    )
