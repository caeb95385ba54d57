"""Wildcard expressions of sge_types(5), used for STRING/CSTRING/HOST requests.

The complex(5) examples (seed 002) are tests as they stand; the rest was
checked against the real Grid Engine 8.1.9 with ``qhost -l arch=PATTERN`` on
a host whose arch is ``lx-amd64``, and fnmatch against the C library's.
"""

import ctypes
import ctypes.util

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
