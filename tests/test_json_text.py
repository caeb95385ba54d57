"""minisge.protocol.json_text does what json.dumps/json.loads do (the wire's
and the -fmt json views' text), without importing json: same text, same
values, same errors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.protocol import json_text

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner,
                                                                                            max_size=4), max_leaves=20)


@given(VALUES)
def test_dumps_is_json_dumps(value):
    for ascii in (True, False):
        assert json_text.dumps(value, ascii=ascii) == json.dumps(value, ensure_ascii=ascii, separators=(",", ":"),
                                                                 allow_nan=False)


@given(VALUES)
def test_loads_reads_what_dumps_wrote(value):
    assert json_text.loads(json_text.dumps(value)) == value


@given(st.text(alphabet='{}[]",:0123456789.eE+- \t\n\\utrfalsn\ufeff', max_size=30))
def test_loads_is_json_loads_also_when_it_fails(text):
    try:
        expected: object = ("ok", json.loads(text))
    except ValueError as err:
        expected = ("error", str(err))
    try:
        got: object = ("ok", json_text.loads(text))
    except ValueError as err:
        got = ("error", str(err))
    assert repr(got) == repr(expected)


def test_what_json_refuses_it_refuses():
    for bad in (math.nan, math.inf, {1j: 1}, object()):
        with pytest.raises((TypeError, ValueError)):
            json_text.dumps({"x": bad})
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises((ValueError, RecursionError)):
        json_text.dumps(cycle)
    assert json_text.dumps({"x": [1, 2.5, "é"]}) == '{"x":[1,2.5,"\\u00e9"]}'


def test_a_decoder_passes_its_pairs_and_constants_to_its_hooks():
    seen = []
    decoder = json_text.Decoder(object_pairs_hook=lambda pairs: seen.append(pairs) or dict(pairs),
                                parse_constant=lambda name: f"<{name}>")
    assert decoder.decode('{"a": NaN, "a": 1}') == {"a": 1}
    assert seen == [[("a", "<NaN>"), ("a", 1)]]
