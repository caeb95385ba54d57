"""Hypothesis strategies read off minisge.protocol.catalogue.

``valid(spec)`` draws values the spec accepts; ``near_valid(spec)`` values
that are mostly valid with junk somewhere inside (a wrong type, a value out
of range, a stray key), to reach past the validator's first checks;
``junk_message(op)`` every kind of bad message for an operation: the right
keys with the wrong types, random keys, huge values, nested junk.
Shared by the unit tests of the catalogue and the fuzz test against a
live daemon.
"""

from __future__ import annotations

from hypothesis import strategies as st

from minisge.protocol import catalogue as cat

JSON_SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)


def _chars(spec: cat.Str) -> st.SearchStrategy[str]:
    if spec.chars:
        return st.sampled_from(sorted(spec.chars))
    if spec.word:
        return st.characters(min_codepoint=0x21, max_codepoint=0x7e, blacklist_characters=spec.forbid)
    bad = set(spec.forbid)
    if not spec.nul:
        bad.add("\0")
    categories: tuple[str, ...] = ("Cs",)
    if not spec.control:
        categories = ("Cs", "Cc")
        bad |= {"\u2028", "\u2029"}
    return st.characters(blacklist_categories=categories, blacklist_characters="".join(bad))


def valid(spec: cat.Spec) -> st.SearchStrategy[object]:
    """Values ``spec`` accepts."""
    if isinstance(spec, cat.Str):
        if spec.choices:
            return st.sampled_from(sorted(spec.choices))
        return st.text(_chars(spec), min_size=spec.min_len, max_size=max(spec.min_len, min(spec.max_len, 12)))
    if isinstance(spec, cat.Int):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, cat.Num):
        return st.integers(int(spec.lo), int(spec.hi)) | st.floats(spec.lo, spec.hi, allow_nan=False)
    if isinstance(spec, cat.Bool):
        return st.booleans()
    if isinstance(spec, cat.Maybe):
        return st.none() | valid(spec.inner)
    if isinstance(spec, cat.AnyOf):
        return st.one_of(*(valid(o) for o in spec.options))
    if isinstance(spec, cat.ListOf):
        return st.lists(valid(spec.item), min_size=spec.min_items, max_size=max(spec.min_items, min(spec.max_items, 3)))
    if isinstance(spec, cat.Pair):
        return st.tuples(*(valid(i) for i in spec.items)).map(list)
    if isinstance(spec, cat.MapOf):
        return st.dictionaries(valid(spec.key).map(str), valid(spec.value), max_size=min(spec.max_items, 3))
    if isinstance(spec, cat.Record):
        return _record(spec, valid)
    if isinstance(spec, cat.Json):
        return _json(min(spec.depth, 3))
    raise TypeError(spec)


def _json(levels: int) -> st.SearchStrategy[object]:
    """JSON values with at most ``levels`` levels of lists and objects."""
    if levels == 0:
        return JSON_SCALARS
    inner = _json(levels - 1)
    return JSON_SCALARS | st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)


def _record(spec: cat.Record, draw_field) -> st.SearchStrategy[object]:
    required = {n: draw_field(f.spec) for n, f in spec.fields.items() if f.required}
    optional = {n: draw_field(f.spec) for n, f in spec.fields.items() if not f.required}
    records = st.fixed_dictionaries(required, optional=optional)
    if spec.rule is not None and draw_field is valid:
        rule = spec.rule
        records = records.filter(lambda r: rule(r) is None)
    return records


def huge() -> st.SearchStrategy[object]:
    """Values far over any limit of the catalogue."""
    return st.one_of(
        st.integers(2**31, 2**80) | st.integers(-(2**80), -(2**31)),
        st.floats(1e19, 1e300) | st.just(-1e300),
        st.integers(200_000, 1_200_000).map(lambda n: "x" * n),
        st.integers(200_000, 300_000).map(lambda n: ["a"] * n),
        st.integers(40, 200).map(_nested),
        st.integers(100_001, 120_000).map(lambda n: {str(i): "v" for i in range(n)}),
    )


def _nested(depth: int) -> object:
    value: object = "deep"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def near_valid(spec: cat.Spec, big: bool = True) -> st.SearchStrategy[object]:
    """Mostly valid values, with junk in some places (``big``: huge values too)."""
    junk = JSON | huge() if big else JSON
    if isinstance(spec, cat.Record):
        return st.one_of(_record(spec, lambda s: near_valid(s, big)),
                         st.tuples(_record(spec, valid), st.text(min_size=1, max_size=8), JSON)
                         .map(lambda t: {**t[0], t[1]: t[2]}))  # a stray key
    if isinstance(spec, cat.ListOf):
        return st.lists(near_valid(spec.item, big), max_size=3) | valid(spec)
    if isinstance(spec, cat.Pair):
        return st.tuples(*(near_valid(i, big) for i in spec.items)).map(list) | valid(spec)
    if isinstance(spec, cat.MapOf):
        return st.dictionaries(st.text(max_size=8), near_valid(spec.value, big), max_size=3) | valid(spec)
    if isinstance(spec, cat.Maybe):
        return st.none() | near_valid(spec.inner, big)
    return st.one_of(valid(spec), valid(spec), junk)


def valid_message(op: cat.Op) -> st.SearchStrategy[dict]:
    return valid(op.message).map(lambda body: {"op": op.name, **body})  # type: ignore[dict-item]


def junk_message(op: cat.Op, big: bool = True) -> st.SearchStrategy[dict]:
    """Every kind of bad message for ``op`` (``big``: with huge values)."""
    names = list(op.message.fields)
    typed = st.fixed_dictionaries({n: JSON for n in names}) if names else st.just({})
    kinds = [
        near_valid(op.message, big).map(lambda body: {"op": op.name, **body}),  # type: ignore[dict-item]
        typed.map(lambda body: {"op": op.name, **body}),  # the right keys, the wrong types
        st.dictionaries(st.text(max_size=12), JSON, max_size=5).map(lambda body: {**body, "op": op.name}),
        st.dictionaries(st.text(max_size=12), JSON, max_size=4),  # no op, or a random one
        JSON.map(lambda j: {"op": j}),
    ]
    if big:
        kinds.append(st.fixed_dictionaries({n: huge() for n in names[:2]}).map(lambda body: {"op": op.name, **body}))
    return st.one_of(kinds)
