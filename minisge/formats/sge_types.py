"""sge_types(5): time and memory specifiers, and the other value syntaxes.

``parse_time("1:0:1") == 3601.0``; ``parse_memory("1K") == 1024.0``;
``INFINITY`` parses to ``math.inf`` for both.  Values stay text in the models
(so that they are written back as given); these functions check and compare.
"""

from __future__ import annotations

import math
import re

INFINITY = "INFINITY"

_MULT = {
    "k": 1000.0,
    "K": 1024.0,
    "m": 1000.0**2,
    "M": 1024.0**2,
    "g": 1000.0**3,
    "G": 1024.0**3,
}

_NUM = re.compile(r"[+]?(0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


class SpecifierError(ValueError):
    """A value that is not a valid specifier; the message says why."""


def _number(text: str) -> tuple[float, str]:
    m = _NUM.match(text)
    if not m:
        raise SpecifierError(f'"{text}" is not a number')
    tok = m.group(1)
    if tok[:2] in ("0x", "0X"):
        val = float(int(tok, 16))
    elif len(tok) > 1 and tok[0] == "0" and tok.isdigit():
        val = float(int(tok, 8))
    else:
        val = float(tok)
    return val, text[m.end():]


def parse_memory(text: str) -> float:
    """A memory specifier in bytes: number with optional k K m M g G."""
    t = text.strip()
    if t.upper() == INFINITY:
        return math.inf
    if not t or t.startswith("-"):
        raise SpecifierError(f'"{text}" is not a memory specifier')
    try:
        val, rest = _number(t)
    except SpecifierError:
        raise SpecifierError(f'"{text}" is not a memory specifier') from None
    if rest == "":
        return val
    if rest in _MULT:
        return val * _MULT[rest]
    raise SpecifierError(f'"{text}" is not a memory specifier: unknown multiplier "{rest}"')


def parse_time(text: str) -> float:
    """A time specifier in seconds: ``[[h:]m:]s`` or plain seconds, or INFINITY."""
    t = text.strip()
    if t.upper() == INFINITY:
        return math.inf
    if not t or t.startswith("-"):
        raise SpecifierError(f'"{text}" is not a time specifier')
    if ":" in t:
        parts = t.split(":")
        if len(parts) > 3:
            raise SpecifierError(f'"{text}" is not a time specifier: too many ":"')
        total = 0.0
        for p in parts:
            if p == "":
                v = 0
            elif p.isdigit():
                v = int(p)
            else:
                raise SpecifierError(f'"{text}" is not a time specifier')
            total = total * 60 + v
        return float(total)
    try:
        val, rest = _number(t)
    except SpecifierError:
        raise SpecifierError(f'"{text}" is not a time specifier') from None
    if rest:
        raise SpecifierError(f'"{text}" is not a time specifier')
    return val


def format_time(seconds: float) -> str:
    """``HH:MM:SS`` as Grid Engine prints a time value, or INFINITY."""
    if math.isinf(seconds):
        return INFINITY
    s = int(seconds)
    return f"{s // 3600:02d}:{(s // 60) % 60:02d}:{s % 60:02d}"


def is_time(text: str) -> bool:
    try:
        parse_time(text)
        return True
    except SpecifierError:
        return False


def is_memory(text: str) -> bool:
    try:
        parse_memory(text)
        return True
    except SpecifierError:
        return False
