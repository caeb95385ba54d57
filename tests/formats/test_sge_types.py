"""sge_types(5) value syntaxes, as the real Grid Engine 8.1.9 reads them.

Every accepted/rejected value below was tried with the real ``qconf -Mc`` (as
the default of a non-requestable consumable) or ``qconf -Aq`` (as ``h_rt``).
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats.sge_types import (
    SpecifierError,
    compare_values,
    format_memory_value,
    format_time,
    format_time_value,
    is_memory,
    is_number,
    is_time,
    parse_memory,
    parse_number,
    parse_time,
    parse_value,
    relop_holds,
    time_request_text,
)

# --- time_specifier ---------------------------------------------------------


def test_time_is_hours_minutes_seconds():
    assert parse_time("1:0:1") == 3601.0


def test_time_zero_may_be_left_out_but_the_colon_remains():
    assert parse_time("1::1") == parse_time("1:0:1") == 3601.0
    assert parse_time("::") == 0.0


def test_time_plain_number_is_seconds():
    assert parse_time("3600") == 3600.0


def test_time_hex_and_octal_constants_are_seconds():
    assert parse_time("0x10") == 16.0
    assert parse_time("010") == 8.0


def test_time_with_two_fields_is_rejected():
    # the real qconf: error parsing value "1:30"
    with pytest.raises(SpecifierError):
        parse_time("1:30")


def test_time_with_four_fields_is_rejected():
    with pytest.raises(SpecifierError):
        parse_time("1:2:3:4")


def test_time_fields_may_be_fractions():
    assert parse_time("1.5:0:0") == 5400.0


def test_time_infinity():
    assert parse_time("INFINITY") == math.inf
    assert parse_time("infinity") == math.inf


def test_time_accepts_what_grid_engine_accepts():
    # one parser for all numeric values: the real qconf -Aq takes these as h_rt
    assert parse_time("1k") == 1000.0
    assert parse_time("true") == 1.0
    assert parse_time("-1") == -1.0


# --- memory_specifier -------------------------------------------------------


@pytest.mark.parametrize(
    "text,value",
    [
        ("1k", 1000.0),
        ("1K", 1024.0),
        ("1m", 1000.0**2),
        ("1M", 1024.0**2),
        ("1g", 1000.0**3),
        ("1G", 1024.0**3),
        ("1t", 1000.0**4),
        ("1T", 1024.0**4),
    ],
)
def test_memory_multiplier_letters(text, value):
    assert parse_memory(text) == value


def test_memory_without_multiplier_is_bytes():
    assert parse_memory("4096") == 4096.0


def test_memory_hex_and_octal_take_multipliers():
    assert parse_memory("0x10K") == 16 * 1024.0
    assert parse_memory("010k") == 8000.0


def test_memory_decimal_fraction_with_multiplier():
    assert parse_memory("1.5G") == 1.5 * 1024.0**3


@pytest.mark.parametrize("text", ["1X", "1P", "1kk", "08", "0x", "0xG", "1e", "", "yes", "1 ", "1:2"])
def test_memory_rejected_forms(text):
    with pytest.raises(SpecifierError):
        parse_memory(text)
    assert not is_memory(text)


def test_memory_infinity():
    assert parse_memory("INFINITY") == math.inf


# --- the one numeric parser -------------------------------------------------


def test_true_and_false_are_one_and_zero_in_any_case():
    assert parse_number("TRUE") == 1.0
    assert parse_number("False") == 0.0


def test_scientific_notation():
    assert parse_number("1e3") == 1000.0
    assert parse_number(".5") == 0.5
    assert parse_number("5.") == 5.0


def test_signs():
    assert parse_number("+5") == 5.0
    assert parse_number("-0x10") == -16.0


def test_list_separators_end_the_number():
    # Grid Engine stops reading at "," and "/" (its request lists)
    assert parse_number("1k,") == 1000.0
    assert parse_number("1/2") == 1.0


def test_octal_needs_octal_digits():
    with pytest.raises(SpecifierError):
        parse_number("08")


def test_not_a_string_is_rejected():
    with pytest.raises(SpecifierError):
        parse_number(None)  # type: ignore[arg-type]


def test_is_time_and_is_number():
    assert is_time("0:0:0")
    assert is_number("0")
    assert not is_number("abc")


@given(st.text(max_size=12))
def test_random_text_only_raises_specifier_error(text):
    try:
        parse_number(text)
    except SpecifierError:
        pass


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(["", "k", "K", "m", "M", "g", "G"]))
def test_memory_is_number_times_multiplier(n, letter):
    factor = {"": 1, "k": 1e3, "K": 1024, "m": 1e6, "M": 1024**2, "g": 1e9, "G": 1024**3}[letter]
    assert parse_memory(f"{n}{letter}") == n * factor


@given(st.integers(0, 10**4), st.integers(0, 59), st.integers(0, 59))
def test_time_fields_add_up(h, m, s):
    assert parse_time(f"{h}:{m}:{s}") == h * 3600 + m * 60 + s


# --- printing ---------------------------------------------------------------


def test_format_time():
    assert format_time(3601) == "01:00:01"
    assert format_time(math.inf) == "INFINITY"


def test_format_time_value_has_days_from_one_day_on():
    assert format_time_value(3601) == "01:00:01"
    assert format_time_value(90061) == "1:01:01:01"
    assert format_time_value(math.inf) == "infinity"


def test_format_memory_value_uses_1024_units():
    assert format_memory_value(1024.0**3) == "1.000G"
    assert format_memory_value(1536 * 1024.0) == "1.500M"
    assert format_memory_value(2048.0) == "2.000K"
    assert format_memory_value(100.0) == "100.000"


# --- comparing --------------------------------------------------------------


def test_relop_request_is_left_operand():
    # h_rt (<=): requested 1:0:0 fits an offer of 2:0:0
    assert relop_holds("<=", 3600.0, 7200.0)
    assert not relop_holds("<=", 7200.0, 3600.0)
    assert relop_holds(">=", 2.0, 1.5)


def test_relop_excl_holds_for_no_request_or_enough_offer():
    assert relop_holds("EXCL", 0.0, 0.0)
    assert relop_holds("EXCL", 1.0, 1.0)
    assert not relop_holds("EXCL", 1.0, 0.0)


def test_relop_unknown_is_an_error():
    with pytest.raises(ValueError):
        relop_holds("=<", 1.0, 1.0)


def test_compare_values_numeric_types_compare_numbers():
    assert compare_values("TIME", "1:0:0", "3600") == 0
    assert compare_values("MEMORY", "1K", "1000") == 1
    assert compare_values("INT", "1", "2") == -1


def test_compare_values_cstring_ignores_case():
    assert compare_values("CSTRING", "ABC", "abc") == 0
    assert compare_values("STRING", "ABC", "abc") != 0


def test_parse_value_bool():
    assert parse_value("BOOL", "TRUE") == 1.0
    with pytest.raises(SpecifierError):
        parse_value("STRING", "x")


def test_a_time_request_is_kept_in_whole_seconds_as_8_1_9_shows_it():
    # observed: h_rt=0:1:5 -> 65, 1:0:0 -> 3600, 90 -> 90, 1.5 -> 2, 0x10 -> 16, 1::1 -> 3601
    for text, shown in (("0:1:5", "65"), ("1:0:0", "3600"), ("90", "90"), ("1.5", "2"), ("0x10", "16"),
                        ("1::1", "3601"), ("INFINITY", "INFINITY")):
        assert time_request_text(text) == shown, text
