"""Small scanners for the number syntaxes the formats read (C's strtol and
strtod, sge_types(5)), written out instead of regular expressions: ``re``
costs a command milliseconds at start-up (it imports ``enum`` and compiles
its patterns), and ``qsub``/``qstat`` read their options through these.

Each function says the pattern it stands for; ``\\d`` is a decimal digit as
``re`` has it for text (``str.isdecimal``: any script's digits, which
``int()`` and ``float()`` read too).  Standard library only, pure.
"""

from __future__ import annotations

#: C's isspace() in the "C" locale
C_SPACE = " \t\n\v\f\r"
HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
OCT_DIGITS = frozenset("01234567")


def skip(text: str, pos: int, chars: str) -> int:
    """The index after the run of ``chars`` at ``pos`` (``[chars]*``)."""
    n = len(text)
    while pos < n and text[pos] in chars:
        pos += 1
    return pos


def decimal_end(text: str, pos: int) -> int:
    """The index after the decimal digits at ``pos`` (``\\d*``)."""
    n = len(text)
    while pos < n and text[pos].isdecimal():
        pos += 1
    return pos


def set_end(text: str, pos: int, chars: frozenset[str]) -> int:
    """The index after the run of characters of ``chars`` at ``pos``."""
    n = len(text)
    while pos < n and text[pos] in chars:
        pos += 1
    return pos


def sign_end(text: str, pos: int) -> int:
    """After an optional sign at ``pos`` (``[+-]?``)."""
    return pos + 1 if text[pos:pos + 1] in ("+", "-") else pos


def exponent_end(text: str, pos: int, letters: tuple[str, str]) -> int:
    """After an optional exponent at ``pos`` (``(?:[eE][+-]?\\d+)?`` for
    ``letters`` ``("e", "E")``): ``pos`` when there is none."""
    if text[pos:pos + 1] not in letters:
        return pos
    start = sign_end(text, pos + 1)
    end = decimal_end(text, start)
    return end if end > start else pos


def decimal_number_end(text: str, pos: int) -> int:
    """After the decimal number at ``pos``, ``(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?``;
    ``pos`` when there is none."""
    end = decimal_end(text, pos)
    if end > pos:
        if text[end:end + 1] == ".":
            end = decimal_end(text, end + 1)
    elif text[pos:pos + 1] == "." and (after := decimal_end(text, pos + 1)) > pos + 1:
        end = after
    else:
        return pos
    return exponent_end(text, end, ("e", "E"))


def hex_number_end(text: str, pos: int) -> int:
    """After the C hexadecimal float at ``pos``,
    ``0[xX](?:[0-9a-fA-F]+\\.?[0-9a-fA-F]*|\\.[0-9a-fA-F]+)(?:[pP][+-]?\\d+)?``;
    ``pos`` when there is none."""
    if text[pos:pos + 2] not in ("0x", "0X"):
        return pos
    start = pos + 2
    end = set_end(text, start, HEX_DIGITS)
    if end > start:
        if text[end:end + 1] == ".":
            end = set_end(text, end + 1, HEX_DIGITS)
    elif text[start:start + 1] == "." and (after := set_end(text, start + 1, HEX_DIGITS)) > start + 1:
        end = after
    else:
        return pos
    return exponent_end(text, end, ("p", "P"))


def is_integer(text: str) -> bool:
    """``[+-]?\\d+``, the whole text."""
    return text[sign_end(text, 0):].isdecimal()
