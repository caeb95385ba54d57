"""The scanners of minisge.formats.scan read what the regular expressions
they stand for read (the patterns are written in their docstrings)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import scan

TEXT = st.text(alphabet="0123456789٣.xXeEpP+-aAfF() \t\n", max_size=16)


def _end(pattern: str, text: str, pos: int) -> int:
    m = re.compile(pattern).match(text, pos)
    return m.end() if m else pos


@given(TEXT, st.integers(0, 4))
def test_the_scanners_end_where_the_patterns_end(text, pos):
    pos = min(pos, len(text))
    assert scan.decimal_end(text, pos) == _end(r"\d*", text, pos)
    assert scan.decimal_number_end(text, pos) == _end(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", text, pos)
    assert scan.hex_number_end(text, pos) == _end(
        r"0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?", text, pos)
    assert scan.exponent_end(text, pos, ("e", "E")) == _end(r"(?:[eE][+-]?\d+)?", text, pos)
    assert scan.sign_end(text, pos) == _end(r"[+-]?", text, pos)
    assert scan.skip(text, pos, " \t") == _end(r"[ \t]*", text, pos)
    assert scan.set_end(text, pos, scan.HEX_DIGITS) == _end(r"[0-9a-fA-F]*", text, pos)
    assert scan.is_integer(text) == bool(re.fullmatch(r"[+-]?\d+", text))
