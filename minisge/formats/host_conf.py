"""host_conf(5): execution hosts (``qconf -se``/``-Ae``, the ``global`` host).

``qconf -se`` pads the names to column 22 and breaks long lines (the
reported ``load_values`` mostly) at commas::

    hostname              vm
    load_scaling          NONE
    complex_values        NONE
    load_values           arch=lx-amd64,num_proc=2,... \\
                          swap_total=0.000000M,...
    processors            2
    user_lists            NONE
    xuser_lists           NONE
    projects              NONE
    xprojects             NONE
    usage_scaling         NONE
    report_variables      NONE

``load_values`` and ``processors`` are reported by the execution daemon and
cannot be configured: ``qconf -ae``'s template and ``qconf -Ae`` leave them
out, ``qconf -se`` shows them.  Here they are optional on input, and
``write(host, show_load=False)`` leaves them out.  Every other attribute is
required, as ``qconf -Ae`` demands.
"""

from __future__ import annotations

import math
import re

import attrs

from minisge.formats.access_list import (
    check_object_name,
    is_none,
    parse_name_list,
    parse_ulong_attr,
    write_name_list,
)
from minisge.formats.errors import FormatError
from minisge.formats.hostgroup import check_host_name
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import SpecifierError

REQUIRED = (
    "hostname",
    "load_scaling",
    "complex_values",
    "user_lists",
    "xuser_lists",
    "projects",
    "xprojects",
    "usage_scaling",
    "report_variables",
)
REPORTED = ("load_values", "processors")
ORDER = (
    "hostname",
    "load_scaling",
    "complex_values",
    "load_values",
    "processors",
    "user_lists",
    "xuser_lists",
    "projects",
    "xprojects",
    "usage_scaling",
    "report_variables",
)
NAME_WIDTH = 22
USAGE_SCALING_NAMES = ("cpu", "mem", "io")

# C strtod's decimal floats (no hex floats, inf or nan: no scaling needs them)
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


@attrs.frozen
class ExecHost:
    """An execution host entry; defaults are those of ``qconf -ae``."""

    hostname: str
    load_scaling: tuple[tuple[str, float], ...] = ()
    complex_values: tuple[tuple[str, str], ...] = ()
    load_values: tuple[tuple[str, str], ...] = ()
    processors: int = 0
    user_lists: tuple[str, ...] = ()
    xuser_lists: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    xprojects: tuple[str, ...] = ()
    usage_scaling: tuple[tuple[str, float], ...] = ()
    report_variables: tuple[str, ...] = ()

    def scaling(self, name: str) -> float:
        """The load_scaling factor for load value ``name`` (1.0 if none)."""
        return dict(self.load_scaling).get(name, 1.0)

    def usage_factor(self, name: str) -> float:
        """The usage_scaling factor for cpu, mem or io (1.0 if none)."""
        return dict(self.usage_scaling).get(name, 1.0)


def template(name: str) -> ExecHost:
    """What ``qconf -ae NAME`` offers: nothing scaled, limited or restricted."""
    return ExecHost(hostname=name)


# --- value parsers ---------------------------------------------------------------


def _pairs(attr: str, value: str, path: str, line: int) -> list[tuple[str, str]]:
    """``name=value,name=value`` (blanks allowed after a comma), or NONE."""
    if is_none(value.strip()):
        return []
    out: list[tuple[str, str]] = []
    for item in split_outside_parentheses(value):
        item = item.strip()
        if not item:
            raise FormatError(f'attribute "{attr}": empty element in "{value.strip()}"', path, line)
        if any(c.isspace() for c in item.partition("(")[0]) or any(c.isspace() for c in item.rpartition(")")[2]):
            raise FormatError(
                f'attribute "{attr}": values in the attribute value list should be separated by ","', path, line
            )
        name, eq, val = item.partition("=")
        if not eq or not name or not val:
            raise FormatError(f'attribute "{attr}": "{item}" is not name=value', path, line)
        try:
            check_object_name(name)
        except SpecifierError as err:
            raise FormatError(f'attribute "{attr}": invalid name "{name}": {err}', path, line) from None
        out.append((name, val))
    _no_repeats(attr, [n for n, _ in out], path, line)
    return out


def split_outside_parentheses(value: str) -> list[str]:
    """``a=1,gpu=2(0 1)`` at its commas, but not at those inside parentheses
    (a resource map's id list, sge_rsmap(5), may hold blanks and no commas)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(value):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "," and depth == 0:
            out.append(value[start:i])
            start = i + 1
    out.append(value[start:])
    return out


def _no_repeats(attr: str, names: list[str], path: str, line: int) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise FormatError(f'attribute "{attr}": "{n}" given more than once', path, line)
        seen.add(n)


def parse_scaling(attr: str, value: str, path: str = "<input>", line: int = 0) -> tuple[tuple[str, float], ...]:
    """load_scaling/usage_scaling: ``name=factor`` pairs, comma-separated.

    The factor is a floating point number (``C strtod`` syntax); Grid Engine
    prints it back with six decimals.  usage_scaling knows cpu, mem and io
    only (host_conf(5)).
    """
    out = []
    for name, text in _pairs(attr, value, path, line):
        if not _FLOAT.match(text):
            raise FormatError(f'attribute "{attr}": error parsing double value from string "{text}"', path, line)
        factor = float(text)
        if not math.isfinite(factor) or factor < 0:
            raise FormatError(f'attribute "{attr}": scaling factor "{text}" must be a finite number >= 0', path, line)
        if attr == "usage_scaling" and name not in USAGE_SCALING_NAMES:
            raise FormatError(
                f'attribute "usage_scaling": "{name}" cannot be scaled; only cpu, mem and io can', path, line
            )
        out.append((name, factor))
    return tuple(out)


def parse_complex_values(attr: str, value: str, path: str = "<input>", line: int = 0) -> tuple[tuple[str, str], ...]:
    """complex_values (and the reported load_values): ``name=value`` pairs.

    The values stay text: checking them needs the complex definitions
    (complex(5)), which the qmaster has and this file does not.
    """
    return tuple(_pairs(attr, value, path, line))


def parse_report_variables(value: str, path: str = "<input>", line: int = 0) -> tuple[str, ...]:
    """report_variables: complex names, comma-separated, or NONE."""
    return parse_name_list("report_variables", value, path, line)


def _format_factor(factor: float) -> str:
    return f"{factor:f}"


def _write_pairs(pairs: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f"{n}={v}" for n, v in pairs) if pairs else "NONE"


def _write_scaling(pairs: tuple[tuple[str, float], ...]) -> str:
    return ",".join(f"{n}={_format_factor(v)}" for n, v in pairs) if pairs else "NONE"


# --- parse and write ---------------------------------------------------------------


def parse(text: str, path: str = "<input>") -> ExecHost:
    """A host_conf(5) file: ``qconf -Ae`` input or ``qconf -se`` output."""
    a = read_attributes(text, path, known=ORDER, required=REQUIRED, join="ge")

    def val(name: str) -> str:
        return a[name].value

    def ln(name: str) -> int:
        return a[name].lineno

    hostname = val("hostname")
    try:
        check_host_name(hostname)
    except SpecifierError as err:
        raise FormatError(f'attribute "hostname": {err}', path, ln("hostname")) from None
    load_values: tuple[tuple[str, str], ...] = ()
    if "load_values" in a:
        load_values = parse_complex_values("load_values", val("load_values"), path, ln("load_values"))
    processors = 0
    if "processors" in a:
        processors = parse_ulong_attr("processors", val("processors"), path, ln("processors"))
    return ExecHost(
        hostname=hostname,
        load_scaling=parse_scaling("load_scaling", val("load_scaling"), path, ln("load_scaling")),
        complex_values=parse_complex_values("complex_values", val("complex_values"), path, ln("complex_values")),
        load_values=load_values,
        processors=processors,
        user_lists=parse_name_list("user_lists", val("user_lists"), path, ln("user_lists")),
        xuser_lists=parse_name_list("xuser_lists", val("xuser_lists"), path, ln("xuser_lists")),
        projects=parse_name_list("projects", val("projects"), path, ln("projects")),
        xprojects=parse_name_list("xprojects", val("xprojects"), path, ln("xprojects")),
        usage_scaling=parse_scaling("usage_scaling", val("usage_scaling"), path, ln("usage_scaling")),
        report_variables=parse_report_variables(val("report_variables"), path, ln("report_variables")),
    )


def write(host: ExecHost, show_load: bool = True) -> str:
    """The text ``qconf -se HOST`` prints; with ``show_load=False`` the
    editable form of ``qconf -ae``/``-me`` (no load_values, processors)."""
    pairs = [
        ("hostname", host.hostname),
        ("load_scaling", _write_scaling(host.load_scaling)),
        ("complex_values", _write_pairs(host.complex_values)),
    ]
    if show_load:
        pairs += [
            ("load_values", _write_pairs(host.load_values)),
            ("processors", str(host.processors)),
        ]
    pairs += [
        ("user_lists", write_name_list(host.user_lists)),
        ("xuser_lists", write_name_list(host.xuser_lists)),
        ("projects", write_name_list(host.projects)),
        ("xprojects", write_name_list(host.xprojects)),
        ("usage_scaling", _write_scaling(host.usage_scaling)),
        ("report_variables", write_name_list(host.report_variables, ",")),
    ]
    return write_attributes(pairs, NAME_WIDTH)
