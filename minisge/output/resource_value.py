"""How Grid Engine 8.1.9 prints a resource's value: the one home of load value scaling.

A host reports its load values as text (``mem_total=24105.550781M``,
``num_proc=2``); the commands print them by the type of their complex
attribute:

- ``qstat -F`` (``sge_get_dominant_stringval``): MEMORY scaled to the
  largest 1024-based unit with three decimals (``hl:mem_total=23.541G``,
  ``swap_total=0.000``), TIME as ``HH:MM:SS``, INT as an integer
  (``num_proc=2``), DOUBLE and BOOL with ``%f``, strings as reported;
- ``qhost -F`` the same, but INT with ``%f`` too (``num_proc=2.000000``);
- ``qhost``'s columns (``reformatDoubleValue``): the number scaled to K, M,
  G or T with one (memory) or two (LOAD) decimals: ``23.5G``, ``2.30``;
- ``qconf -se`` prints the reported text unchanged.

Standard library (and the sge_types parser) only: the commands import it.
"""

from __future__ import annotations

from minisge.formats.sge_types import SpecifierError, parse_number

INF = float("inf")  # math.inf, without importing math

#: Complex types whose values are text, printed as they are.
STRING_TYPES = ("STRING", "CSTRING", "RESTRING", "HOST")

_UNITS = (("T", 1024.0**4), ("G", 1024.0**3), ("M", 1024.0**2), ("K", 1024.0))


def format_memory(value: float) -> str:
    """double_print_memory_to_dstring: ``%.3f`` and K/M/G/T in 1024 steps,
    no unit below 1K (``3.188M``, ``89.867M``, ``512.000``); ``infinity``."""
    value = float(value)
    if value == INF:
        return "infinity"
    magnitude = abs(value)
    for unit, size in _UNITS:
        if magnitude >= size:
            return f"{value / size:.3f}{unit}"
    return f"{magnitude:.3f}"


def format_time(seconds: float) -> str:
    """double_print_time_to_dstring: ``HH:MM:SS`` (hours may exceed 99); ``infinity``."""
    if seconds == INF:
        return "infinity"
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def resource_text(valtype: str, raw: str, *, int_as_double: bool = False) -> str:
    """The value ``raw`` of a complex attribute of type ``valtype`` as
    ``qstat -F`` prints it (``int_as_double``: as ``qhost -F`` prints it).
    A value that is no number is printed as it is."""
    if valtype in STRING_TYPES:
        return raw
    try:
        value = parse_number(raw)
    except SpecifierError:
        return raw
    if valtype == "MEMORY":
        return format_memory(value)
    if valtype == "TIME":
        return format_time(value)
    if value == INF:
        return "infinity"
    if valtype == "INT" and not int_as_double:
        if not -2**31 <= value <= 2**31 - 1:
            return "integer_overflow"
        return str(int(value))
    return f"{value:f}"


def scaled_column(raw: str | None, decimals: int) -> str:
    """reformatDoubleValue: a number of qhost's LOAD (``decimals`` 2) or
    memory columns (1) scaled to K/M/G/T with that many decimals (``23.5G``,
    ``768.1M``, ``0.0``); ``-`` when the host reports none, ``?E`` when it
    is no number."""
    if raw is None:
        return "-"
    try:
        value = parse_number(raw)
    except SpecifierError:
        return "?E"
    if value == INF:
        return "infinity"
    for unit, size in _UNITS:
        if abs(value) >= size:
            return f"{value / size:.{decimals}f}{unit}"
    return f"{value:.{decimals}f}"
