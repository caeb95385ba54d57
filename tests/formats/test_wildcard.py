"""Wildcard expressions of sge_types(5), used for STRING/CSTRING/HOST requests.

The complex(5) examples (seed 002) are tests as they stand; the rest was
checked against the real Grid Engine 8.1.9 with ``qhost -l arch=PATTERN`` on
a host whose arch is ``lx-amd64``, and fnmatch against the C library's.
"""

import ctypes
import ctypes.util
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats.wildcard import (
    WildcardError,
    check,
    evaluate,
    fnmatch,
    is_expression,
    match,
)

ARCHES = ["lx22-x86", "lx24-x86", "lx25-x86", "lx26-x86", "lx24-amd64", "sol-sparc", "sol-sparc64", "sol-x86",
          "sol-x64"]


def matching(pattern, values=ARCHES):
    return {v for v in values if match(pattern, v)}


# --- complex(5) examples ----------------------------------------------------


def test_or_of_patterns():
    # -l arch="*x24*|sol*" : lx24-x86 OR lx24-amd64 OR sol-sparc OR sol-sparc64 OR sol-x86 ...
    assert matching("*x24*|sol*") == {"lx24-x86", "lx24-amd64", "sol-sparc", "sol-sparc64", "sol-x86", "sol-x64"}


def test_question_mark_is_one_character():
    # -l arch="sol-x??" : sol-x86 OR sol-x64
    assert matching("sol-x??") == {"sol-x86", "sol-x64"}


def test_bracket_lists_characters():
    # -l arch="lx2[246]-x86" : lx22-x86 OR lx24-x86 OR lx26-x86
    assert matching("lx2[246]-x86") == {"lx22-x86", "lx24-x86", "lx26-x86"}


def test_bracket_range():
    # -l arch="lx2[4-6]-x86" : lx24-x86 OR lx25-x86 OR lx26-x86
    assert matching("lx2[4-6]-x86") == {"lx24-x86", "lx25-x86", "lx26-x86"}


def test_bracket_characters_and_range():
    # -l arch="lx2[24-6]-x86" : lx22-x86 OR lx24-x86 OR lx25-x86 OR lx26-x86
    assert matching("lx2[24-6]-x86") == {"lx22-x86", "lx24-x86", "lx25-x86", "lx26-x86"}


def test_and_of_negations():
    # -l arch="!lx24-x86&!sol-sparc" : NEITHER lx24-x86 NOR sol-sparc
    assert matching("!lx24-x86&!sol-sparc") == set(ARCHES) - {"lx24-x86", "sol-sparc"}


def test_or_inside_brackets_splits_the_pattern():
    # -l arch="lx2[4|6]-x86" : "arch=lx2[4" OR "arch=6]-x86" -- not lx24/lx26
    assert matching("lx2[4|6]-x86") == set()
    assert match("lx2[4|6]-x86", "lx2[4")
    assert match("lx2[4|6]-x86", "6]-x86")


# --- sge_types(5) expression examples --------------------------------------


def test_parentheses_group():
    # "(lx*|sol*)&*64*" any string beginning with lx or sol and containing 64
    assert matching("(lx*|sol*)&*64*") == {"lx24-amd64", "sol-sparc64", "sol-x64"}


def test_and_not():
    # "rh_3*&!rh_3.1" any string beginning with rh_3, except rh_3.1
    assert match("rh_3*&!rh_3.1", "rh_3.2")
    assert not match("rh_3*&!rh_3.1", "rh_3.1")


def test_wc_cqueue_example():
    assert match("a*&!adam", "alice")
    assert not match("a*&!adam", "adam")


# --- checked against the real qhost -l arch=... ------------------------------


@pytest.mark.parametrize(
    "pattern,matches",
    [
        ("lx-amd64", True),
        ("LX-AMD64", False),
        ("lx*", True),
        ("lx-amd6[^x]", True),
        ("lx-amd6[^4]", False),
        ("lx-amd6[!4]", False),
        ("*x*|sol*", True),
        ("!lx-amd64", False),
        ("!lx-amd64&!sol-amd64", False),
        ("lx-amd6[4|6]", False),
        ("lx-amd6[3-5]", True),
        ("(lx*|sol*)&*64*", True),
        (" lx-amd64", False),
        ("lx-amd64|", False),
        ("(lx*", False),
        ("lx-amd6\\4", False),
        ("lx*&!lx-amd64", False),
        ("lx-amd64|(", False),
        ("sol*|lx*", True),
        ("!(sol*)", True),
        ("!!lx*", True),
        ("lx* sol*", False),
        ("lx-[a-b]md64", True),
        ("lx-amd64)", False),
    ],
)
def test_real_grid_engine_agrees(pattern, matches):
    assert match(pattern, "lx-amd64") is matches


def test_caret_negates_a_bracket_like_glibc():
    # sge_types(5) says ^ is literal; the real Grid Engine (glibc fnmatch) negates
    assert match("lx-amd6[^x]", "lx-amd64")
    assert not match("lx-amd6[^4]", "lx-amd64")


def test_plain_text_is_compared_as_it_is():
    assert not is_expression("lx-amd6\\4")
    assert match("lx-amd6\\4", "lx-amd6\\4")
    assert not match("lx-amd6\\4", "lx-amd64")


def test_backslash_escapes_inside_an_expression():
    assert match("lx\\-amd64*", "lx-amd64")
    assert match("a\\*|x", "a*")
    assert not match("a\\*|x", "ab")


def test_blanks_between_tokens_are_skipped():
    assert match("lx* | sol*", "sol-x86")
    assert match(" ( lx* ) ", "lx-amd64")


def test_ignore_case_for_cstring_and_host():
    assert match("LX-AMD64", "lx-amd64", ignore_case=True)
    assert match("LX*|SOL*", "sol-X86", ignore_case=True)
    assert match("node[A-C]", "NODEb", ignore_case=True)
    assert not match("LX*", "lx-amd64")


def test_evaluate_is_three_valued():
    assert evaluate("lx*", "lx-amd64") == 0
    assert evaluate("sol*", "lx-amd64") == 1
    assert evaluate("lx*|", "lx-amd64") == -1


@pytest.mark.parametrize("bad", ["a|", "|a", "(a", "a)", "()", "!", "a b*", "a&", "&", "((a)"])
def test_syntax_errors_are_reported(bad):
    with pytest.raises(WildcardError):
        check(bad)
    assert not match(bad, "a")


def test_syntax_error_names_the_position():
    with pytest.raises(WildcardError) as err:
        check("lx*|(sol*")
    assert err.value.pos == 9


def test_empty_request_matches_only_empty_value():
    assert match("", "")
    assert not match("", "x")


# --- fnmatch(3) -------------------------------------------------------------


def test_fnmatch_star_matches_slashes_and_dots():
    assert fnmatch("*", ".x")
    assert fnmatch("a/b*", "a/bc/d")


def test_fnmatch_closing_bracket_first_is_literal():
    assert fnmatch("lx-amd6[]4]", "lx-amd64")
    assert fnmatch("[]]", "]")


def test_fnmatch_reversed_range_matches_nothing():
    assert not fnmatch("lx-amd6[6-3]", "lx-amd64")


def test_fnmatch_unterminated_bracket_is_literal():
    assert fnmatch("lx-amd6[", "lx-amd6[")


def test_fnmatch_trailing_backslash_matches_nothing():
    assert not fnmatch("lx-amd64\\", "lx-amd64")


def test_fnmatch_character_classes():
    assert fnmatch("lx-amd6[[:digit:]]", "lx-amd64")
    assert not fnmatch("lx-amd6[[:alpha:]]", "lx-amd64")
    assert not fnmatch("[[:nosuch:]]", "a")


def _libc_fnmatch():
    name = ctypes.util.find_library("c")
    if not name:
        return None
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "gnu_get_libc_version"):
        return None
    f = libc.fnmatch
    f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    return lambda p, v: f(p.encode(), v.encode(), 0) == 0


LIBC_FNMATCH = _libc_fnmatch()

_literal = st.sampled_from("ab-.x")
_escaped = st.sampled_from("ab*?[]\\-!").map(lambda c: "\\" + c)
_member = st.one_of(
    st.sampled_from("ab-.x!^*?"),
    st.tuples(st.sampled_from("abx"), st.sampled_from("abx")).map(lambda t: f"{t[0]}-{t[1]}"),
    st.sampled_from(["[:alpha:]", "[:digit:]", "[:punct:]"]),
)
_bracket = st.tuples(
    st.sampled_from(["", "!", "^"]),
    st.booleans(),
    st.lists(_member, min_size=1, max_size=3),
).map(lambda t: "[" + t[0] + ("]" if t[1] else "") + "".join(t[2]) + "]")
_well_formed = st.lists(
    st.one_of(_literal, _escaped, st.just("*"), st.just("?"), _bracket), max_size=6
).map("".join)


@pytest.mark.skipif(LIBC_FNMATCH is None, reason="needs glibc")
@given(_well_formed, st.text(alphabet="ab-]!^*?.[\\x1", max_size=6))
def test_fnmatch_agrees_with_glibc_on_well_formed_patterns(pattern, value):
    assert fnmatch(pattern, value) == LIBC_FNMATCH(pattern, value)


@given(st.text(alphabet="ab*?[]!|&() \\-^:", max_size=12), st.text(alphabet="ab-", max_size=4))
def test_random_expressions_only_raise_wildcard_error(expression, value):
    try:
        check(expression)
    except WildcardError:
        assert not match(expression, value)
    match(expression, value, ignore_case=True)


# --- the matcher against the regular expressions it replaced ----------------
# (minisge.formats.wildcard read patterns into regular expressions until
# qstat's start made it a matcher of its own: the translation is kept here as
# a second opinion on every pattern, the malformed ones too, which glibc's
# check above leaves out)

_RX_CLASSES = {
    "alpha": "A-Za-z", "digit": "0-9", "alnum": "0-9A-Za-z", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
}
_RX_NEVER = "(?!)"


def _rx_item(c):
    return "\\" + c if c in "\\]^-[" else c


def _rx_bracket(pattern, i):
    n = len(pattern)
    j = i + 1
    negate = j < n and pattern[j] in "!^"
    if negate:
        j += 1
    items = []
    first = True
    while True:
        if j >= n:
            return None, i
        c = pattern[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        nxt = pattern[j + 1 : j + 2]
        if c == "[" and nxt == ":":
            k = j + 2
            while k < n and "a" <= pattern[k] < "z":
                k += 1
            if pattern.startswith(":]", k):
                name = pattern[j + 2 : k]
                if name not in _RX_CLASSES:
                    return _RX_NEVER, n
                items.append(_RX_CLASSES[name])
                j = k + 2
                continue
        elif c == "[" and nxt == "=":
            if not (j + 2 < n and pattern.startswith("=]", j + 3)):
                return _RX_NEVER, n
            items.append(_rx_item(pattern[j + 2]))
            j += 5
            continue
        elif c == "[" and nxt == ".":
            end = pattern.find(".]", j + 3)
            if end == -1 or end != j + 3:
                return _RX_NEVER, n
            c = pattern[j + 2]
            j += 4
        elif c == "\\":
            j += 1
            if j >= n:
                return _RX_NEVER, n
            c = pattern[j]
        lo = c
        j += 1
        if pattern[j : j + 1] == "-" and pattern[j + 1 : j + 2] != "]":
            if j + 1 >= n:
                return _RX_NEVER, n
            hi = pattern[j + 1]
            j += 2
            if hi == "\\":
                if j >= n:
                    return _RX_NEVER, n
                hi = pattern[j]
                j += 1
            if lo <= hi:
                items.append(_rx_item(lo) + "-" + _rx_item(hi))
            continue
        items.append(_rx_item(lo))
    if not items:
        return ("(?s:.)" if negate else _RX_NEVER), j
    return "[" + ("^" if negate else "") + "".join(items) + "]", j


def regex_fnmatch(pattern, value):
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append(".*")
            continue
        if c == "?":
            out.append(".")
        elif c == "[":
            rx, j = _rx_bracket(pattern, i)
            if rx is not None:
                out.append(rx)
                i = j
                continue
            out.append(re.escape("["))
        elif c == "\\":
            if i + 1 >= n:
                return False
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL).fullmatch(value) is not None


_any_pattern = st.lists(st.one_of(
    st.sampled_from("ab-.x!^*?[]\\:=\n"),
    st.sampled_from(["[:alpha:]", "[:digit:]", "[:punct:]", "[:space:]", "[:nosuch:]", "[:z:]", "[=a=]", "[.b.]",
                     "[.ab.]", "[=", "**", "a-", "b-a", "[!", "[^]"]),
), max_size=10).map("".join)


@given(_any_pattern, st.text(alphabet="ab-.x]!^*?[\\:\n\t\x01\x7fZ9", max_size=8))
def test_fnmatch_agrees_with_its_regular_expressions(pattern, value):
    assert fnmatch(pattern, value) == regex_fnmatch(pattern, value)


@pytest.mark.parametrize("pattern,value", [
    ("*", ""), ("*", "abc"), ("a*", "a"), ("*a", "ba"), ("a*a", "a"), ("a*a", "aa"), ("*a*a*", "aa"),
    ("a*b*c", "abbbc"), ("a*b?c", "abbc"), ("a*[bc]*c", "axxbc"), ("?*?", "a"), ("?*?", "ab"),
    ("[!a]*", "a"), ("*[[:digit:]]", "lx9"), ("a*\\*", "ab*"), ("*ab*ab", "abab"), ("*ab*ab", "ababab"),
    ("*a?a", "aaba"), ("*a?a*b", "aaab"), ("node[0-9]*", "node12"), ("x[a-]", "x-"),
])
def test_fnmatch_stars_and_parts(pattern, value):
    assert fnmatch(pattern, value) == regex_fnmatch(pattern, value)
