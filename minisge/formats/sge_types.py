"""sge_types(5): time and memory specifiers, and the other value syntaxes.

``parse_time("1:0:1") == 3601.0``; ``parse_memory("1K") == 1024.0``;
``INFINITY`` parses to ``math.inf`` for both.  Values stay text in the models
(so that they are written back as given); these functions check and compare.

Grid Engine reads every numeric value -- INT, DOUBLE, TIME, MEMORY and BOOL
complex values, requests (``qsub -l h_rt=1:0:0``), queue limits (``h_rt``,
``h_vmem``) -- with one parser (``sge_parse_num_val``), so a time may carry a
memory multiplier (``1k`` seconds) and a memory may be written ``1:0:0``.
:func:`parse_number` is that parser; :func:`parse_time` and
:func:`parse_memory` are the same grammar under the names the man page uses.
What the real ``qconf`` 8.1.9 accepts was checked value by value (``-1``,
``1.5``, ``true``, ``1k`` are valid time values; ``1:30`` and ``08`` are not).
"""

from __future__ import annotations

from minisge.formats import scan

#: the values of INFINITY and of C's nan (float's own: no math module to import)
INF = float("inf")
NAN = float("nan")

INFINITY = "INFINITY"

#: sge_types(5) memory_specifier: the multiplier letters and their meaning.
MULTIPLIERS = {
    "k": 1000.0,
    "K": 1024.0,
    "m": 1000.0**2,
    "M": 1024.0**2,
    "g": 1000.0**3,
    "G": 1024.0**3,
    "t": 1000.0**4,
    "T": 1024.0**4,
}

_LONG_MAX = 2**63 - 1
_ULONG32 = 2**32 - 1
_HOUR_MINUTE_LIMIT = 0x7FFFFFFF

#: what may stand between the parentheses of C's "nan(...)"
_NAN_CHARS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


class SpecifierError(ValueError):
    """A value that is not a valid specifier; the message says why."""


def _strtod(text: str, pos: int = 0) -> tuple[float, int]:
    """C ``strtod``: the number at ``pos`` and the index after it (``pos`` if none)."""
    start = scan.skip(text, pos, scan.C_SPACE)  # leading white space, a sign, then a
    body = scan.sign_end(text, start)  # hexadecimal float, a decimal number, inf[inity] or nan[(chars)]
    if (end := scan.hex_number_end(text, body)) > body:
        return float.fromhex(text[start:end]), end
    if (end := scan.decimal_number_end(text, body)) > body:
        return float(text[start:end]), end
    word = text[body:body + 3]
    if word.isascii() and word.lower() == "inf":
        end = body + 8 if text[body + 3:body + 8].isascii() and text[body + 3:body + 8].lower() == "inity" else body + 3
        return float(text[start:end]), end
    if word.isascii() and word.lower() == "nan":
        end = body + 3
        if text[end:end + 1] == "(" and text[(close := scan.set_end(text, end + 1, _NAN_CHARS)):close + 1] == ")":
            end = close + 1
        return NAN, end
    return 0.0, pos


def _multiplier(text: str, pos: int) -> float:
    """The multiplier letter at ``pos`` (1.0 if none); what may follow is checked.

    After the number and its optional letter only the end of the value, ``,``
    or ``/`` may follow (Grid Engine stops reading there).
    """
    mul = 1.0
    c = text[pos : pos + 1]
    if c and c in MULTIPLIERS:
        mul = MULTIPLIERS[c]
        pos += 1
    elif c not in ("", ",", "/", " "):
        raise SpecifierError(f'"{text}": unknown multiplier "{text[pos:]}"')
    if text[pos : pos + 1] not in ("", ",", "/"):
        raise SpecifierError(f'"{text}": unexpected "{text[pos:]}" after the number')
    return mul


def _parse_hms(text: str) -> float:
    """``h:m:s`` -- exactly three numbers, each may be left out (``1::1``)."""
    total = 0.0
    pos = 0
    for unit, part in ((3600.0, "hours"), (60.0, "minutes")):
        val, pos = _strtod(text, pos)
        if val > _HOUR_MINUTE_LIMIT:
            raise SpecifierError(f'"{text}": too many {part}')
        if text[pos : pos + 1] != ":":
            raise SpecifierError(f'"{text}" is not a time: it takes hours:minutes:seconds')
        total += unit * val
        pos += 1
    val, pos = _strtod(text, pos)
    if text[pos:].strip(" \t\n\v\f\r"):
        raise SpecifierError(f'"{text}" is not a time: unexpected "{text[pos:]}"')
    return total + val


def parse_number(text: str) -> float:
    """Any numeric Grid Engine value, as Grid Engine's ``sge_parse_num_val`` reads it.

    - ``TRUE``/``FALSE`` (any case) are 1 and 0 (BOOL values);
    - ``INFINITY`` (any case) is ``math.inf``;
    - with a ``:`` it is a time ``h:m:s`` (sge_types(5) time_specifier: three
      numbers, a zero may be left out, ``1:0:1 = 1::1``);
    - otherwise a decimal or floating point number, or (leading ``0``) a
      hexadecimal or octal integer, each with an optional multiplier
      ``k K m M g G t T`` (sge_types(5) memory_specifier: 1000 or 1024 powers).
    """
    if not isinstance(text, str):
        raise SpecifierError(f"{text!r} is not a number")
    value = _REMEMBERED.get(text)
    if value is None:
        value = _parse_number(text)
        if len(_REMEMBERED) >= _REMEMBER_AT_MOST:
            _REMEMBERED.clear()
        _REMEMBERED[text] = value
    return value


#: parse_number's values by text: a pass reads the same few request values of
#: every running job again (a plain dict, not functools.lru_cache: functools
#: imports collections, which every command would pay for at its start)
_REMEMBERED: dict[str, float] = {}
_REMEMBER_AT_MOST = 4096


def _parse_number(text: str) -> float:
    """parse_number of a string, remembered: a pass reads the same few request
    values of every running job again (a bad value raises, and is not kept)."""
    low = text.lower()
    if low == "true":
        return 1.0
    if low == "false":
        return 0.0
    if low == "infinity":
        return INF
    if ":" in text:
        return _parse_hms(text)
    if "." in text or not text.startswith("0"):
        val, end = _strtod(text)
        if end == 0:
            raise SpecifierError(f'"{text}" is not a number')
        return val * _multiplier(text, end)
    # C's strtol(s, &end, 0) of a text that starts with "0": hexadecimal or octal
    if text[:2] in ("0x", "0X") and (end := scan.set_end(text, 2, scan.HEX_DIGITS)) > 2:
        ival = int(text[2:end], 16)
    else:
        end = scan.set_end(text, 1, scan.OCT_DIGITS)
        ival = int(text[1:end] or "0", 8)
    ival = min(ival, _LONG_MAX) & _ULONG32  # strtol result stored in a u_long32
    return float(ival) * _multiplier(text, end)


def parse_memory(text: str) -> float:
    """A memory specifier in bytes: number with optional k K m M g G t T, or INFINITY."""
    try:
        return parse_number(text)
    except SpecifierError as err:
        raise SpecifierError(f"not a memory specifier: {err}") from None


def parse_time(text: str) -> float:
    """A time specifier in seconds: ``h:m:s`` (``1::1``) or plain seconds, or INFINITY."""
    try:
        return parse_number(text)
    except SpecifierError as err:
        raise SpecifierError(f"not a time specifier: {err}") from None


def format_time(seconds: float) -> str:
    """``HH:MM:SS`` as Grid Engine prints a time value, or INFINITY."""
    if seconds in (INF, -INF):
        return INFINITY
    s = int(seconds)
    return f"{s // 3600:02d}:{(s // 60) % 60:02d}:{s % 60:02d}"


def time_request_text(text: str) -> str:
    """A TIME value of a job's ``-l`` request as the qmaster keeps it (and
    qstat -j, qstat -r and the accounting category show it): whole seconds
    (``1:00:00`` → ``3600``, ``1.5`` → ``2``), INFINITY as written."""
    seconds = parse_time(text)
    if seconds in (INF, -INF):
        return text
    return f"{seconds:.0f}"


def format_time_value(seconds: float) -> str:
    """A TIME complex value as the scheduler prints it (``double_print_time_to_dstring``).

    ``HH:MM:SS``, or ``D:HH:MM:SS`` from one day on; ``infinity`` for INFINITY.
    """
    if seconds == INF:
        return "infinity"
    s = int(seconds)
    days, s = divmod(s, 86400) if s >= 0 else (0, s)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days > 0:
        return f"{days}:{hours:02d}:{minutes:02d}:{s:02d}"
    return f"{hours:02d}:{minutes:02d}:{s:02d}"


def format_memory_value(value: float) -> str:
    """A MEMORY complex value as the scheduler prints it (``double_print_memory_to_dstring``).

    ``%.3f`` with the largest 1024-based unit K, M or G that fits (``1.000G``);
    ``infinity`` for INFINITY.
    """
    if value == INF:
        return "infinity"
    size = abs(value)
    for unit, factor in (("G", 1024.0**3), ("M", 1024.0**2), ("K", 1024.0)):
        if size >= factor:
            return f"{value / factor:.3f}{unit}"
    return f"{size:.3f}"


def format_double(value: float) -> str:
    """A DOUBLE/INT complex value as the scheduler prints it (``%f``, or ``infinity``)."""
    if value == INF:
        return "infinity"
    return f"{value:f}"


def is_decimal(text: str) -> bool:
    """``text`` is a non-empty run of the digits 0-9, as 8.1.9's C parsers read a job id
    (``str.isdigit`` also takes '²' and other digits ``int`` refuses)."""
    return text.isascii() and text.isdigit()


def is_number(text: str) -> bool:
    """Whether :func:`parse_number` accepts ``text``."""
    try:
        parse_number(text)
        return True
    except SpecifierError:
        return False


def is_time(text: str) -> bool:
    """Whether ``text`` is a valid time specifier (see :func:`parse_time`)."""
    return is_number(text)


def is_memory(text: str) -> bool:
    """Whether ``text`` is a valid memory specifier (see :func:`parse_memory`)."""
    return is_number(text)


#: complex(5) relational operators, in Grid Engine's order.
RELOPS = ("==", ">=", ">", "<", "<=", "!=", "EXCL")


def relop_holds(relop: str, requested: float, offered: float) -> bool:
    """``requested RELOP offered`` -- how the scheduler compares a numeric request.

    complex(5): "the value requested by the user ... is compared against the
    corresponding value configured for the considered queues"; Grid Engine
    puts the request on the left (``resource_cmp``), so ``h_rt`` (``<=``)
    requested 1:0:0 fits a queue offering 2:0:0.  ``EXCL`` (exclusive
    consumable BOOL) holds when the job does not ask for exclusivity (0) or
    the offered amount covers it.
    """
    if relop == "==":
        return requested == offered
    if relop == "<=":
        return requested <= offered
    if relop == "<":
        return requested < offered
    if relop == ">":
        return requested > offered
    if relop == ">=":
        return requested >= offered
    if relop == "!=":
        return requested != offered
    if relop == "EXCL":
        return requested == 0 or requested <= offered
    raise ValueError(f'unknown relational operator "{relop}"')


#: The complex types whose values are numbers (all read by :func:`parse_number`).
NUMERIC_TYPES = frozenset({"INT", "DOUBLE", "TIME", "MEMORY", "BOOL", "RSMAP"})
#: The complex types whose values are strings matched by wildcard expressions.
STRING_TYPES = frozenset({"STRING", "CSTRING", "RESTRING", "HOST"})


def parse_value(value_type: str, text: str) -> float:
    """The number a value of a numeric complex type stands for (BOOL: 1.0 or 0.0 for TRUE/FALSE)."""
    if value_type not in NUMERIC_TYPES:
        raise SpecifierError(f'type "{value_type}" has no numeric values')
    return parse_number(text)


def compare_values(value_type: str, a: str, b: str) -> int:
    """-1, 0 or 1 as value ``a`` is less than, equal to or greater than ``b``.

    Numeric types compare the numbers (``1:0:0`` == ``3600``, ``1K`` > ``1000``);
    CSTRING and HOST compare case-insensitively, STRING and RESTRING exactly.
    """
    if value_type in NUMERIC_TYPES:
        x, y = parse_number(a), parse_number(b)
        return (x > y) - (x < y)
    if value_type in ("CSTRING", "HOST"):
        a, b = a.lower(), b.lower()
    elif value_type not in STRING_TYPES:
        raise SpecifierError(f'unknown complex attribute type "{value_type}"')
    return (a > b) - (a < b)


def is_node_share(item: str) -> bool:
    """An item of a node_shares_list (``qconf -astnode/-mstnode``): node_path=shares
    (``[^=]+=\\d+``)."""
    path, eq, shares = item.partition("=")
    return bool(path) and bool(eq) and shares.isdecimal()
