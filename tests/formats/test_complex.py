"""complex(5): the complex list, as ``qconf -sc`` writes it and ``qconf -Mc`` reads it.

The accepted and rejected lines were tried with the real Grid Engine 8.1.9
(``qconf -Mc`` of ``qconf -sc`` plus the line, then the original restored);
the messages are the real ones.
"""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import complex as cx
from minisge.formats.complex import (
    DEFAULT_COMPLEX_TEXT,
    ComplexAttr,
    ComplexList,
    Consumable,
    Relop,
    Requestable,
    ValueType,
    check_modification,
    compare,
    default_complex,
    parse,
    threshold_exceeded,
    write,
)
from minisge.formats.errors import FormatError
from minisge.formats.sge_types import SpecifierError

GOLDEN = Path(__file__).parent.parent / "golden"
SC = (GOLDEN / "qconf_-sc").read_text()


def with_line(line: str) -> str:
    """The golden list with one more line (line 56), as the qconf -Mc trials were made."""
    return SC + line + "\n"


def rejected(line: str) -> FormatError:
    with pytest.raises(FormatError) as err:
        parse(with_line(line), "test.sc")
    return err.value


def added(line: str) -> ComplexAttr:
    return parse(with_line(line))[line.split()[0]]


# --- the golden qconf -sc ---------------------------------------------------


def test_golden_qconf_sc_parses_and_writes_back_byte_identical():
    assert write(parse(SC)) == SC


def test_default_complex_is_the_golden_list():
    assert DEFAULT_COMPLEX_TEXT == SC
    assert default_complex() == parse(SC)
    assert len(default_complex()) == 52


def test_golden_slots_is_the_only_consumable():
    cl = parse(SC)
    assert [a.name for a in cl if a.is_consumable] == ["slots"]
    assert cl["slots"] == ComplexAttr("slots", "s", "INT", "<=", "YES", "YES", "1", "1000")


def test_lookup_by_name_or_shortcut():
    cl = default_complex()
    assert cl["h"].name == "hostname"
    assert cl.get("hostname") is cl.get("h")
    assert cl.resolve("mf") == "mem_free"
    assert "nla" in cl and "nosuch" not in cl
    assert cl.get("nosuch") is None
    with pytest.raises(KeyError):
        cl["nosuch"]


def test_lookup_prefers_a_name_to_a_shortcut():
    cl = ComplexList(
        (
            ComplexAttr("a", "x", "INT", "<=", "YES", "NO", "0", "0"),
            ComplexAttr("b", "a", "INT", "<=", "YES", "NO", "0", "0"),
        )
    )
    assert cl["a"].name == "a"


# --- writing as qconf -sc ---------------------------------------------------


def test_list_is_sorted_by_name_in_byte_order():
    text = with_line("Zeta z INT <= YES NO 0 0")
    assert parse(text).names[0] == "Zeta"  # upper case sorts before lower case
    assert list(parse(text).names[1:]) == sorted(parse(SC).names)


def test_keywords_are_written_in_grid_engine_spelling():
    a = added("hc_a hca bool excl yes job 0 1e3")
    assert (a.type, a.relop, a.requestable, a.consumable) == ("BOOL", "EXCL", "YES", "JOB")


def test_default_and_urgency_are_written_as_given():
    # real: "hc_a hca TIME <= y n ::0 0" is shown with default ::0
    a = added("hc_a hca TIME <= y n ::0 -1.50")
    assert (a.default, a.urgency) == ("::0", "-1.50")


def test_column_widths_grow_with_the_longest_value():
    # real qconf -sc after adding this line
    text = write(parse(with_line(
        "hc_a_very_long_name_exceeding_widths hca_long_shortcut_name restring == y n NONE 100000000000")))
    lines = text.splitlines()
    assert lines[0] == (
        "#name                                   shortcut                  type        relop requestable"
        " consumable default  urgency         "
    )
    assert lines[1] == "#" + "-" * 131
    assert (
        "hc_a_very_long_name_exceeding_widths    hca_long_shortcut_name    RESTRING    ==    YES         NO"
        "         NONE     100000000000"
    ) in lines


def test_excl_widens_the_relop_column():
    # real: "hc_a                hca        BOOL      EXCL    YES         JOB        0        1e3"
    text = write(parse(with_line("hc_a hca bool excl yes job 0 1e3")))
    assert "hc_a                hca        BOOL      EXCL    YES         JOB        0        1e3\n" in text


def test_footer_line():
    assert write(default_complex()).endswith(
        "# >#< starts a comment but comments are not saved across edits --------\n")


def test_empty_list_writes_header_and_footer():
    # Grid Engine's layout rule taken literally (its list is never empty: the
    # built-ins cannot be deleted): the first header column gets no extra space
    assert write(ComplexList(())) == (
        "#nameshortcut type relop requestable consumable default urgency \n"
        "#" + "-" * 63 + "\n" + cx.FOOTER
    )


# --- reading ---------------------------------------------------------------


@pytest.mark.parametrize("word,value", [("y", "YES"), ("yes", "YES"), ("n", "NO"), ("no", "NO"), ("f", "FORCED"),
                                        ("forced", "FORCED"), ("FORCED", "FORCED")])
def test_requestable_words(word, value):
    assert added(f"hc_a hca INT <= {word} n 0 0").requestable == value


@pytest.mark.parametrize("word,value", [("y", "YES"), ("YES", "YES"), ("n", "NO"), ("No", "NO"), ("j", "JOB"),
                                        ("JOB", "JOB")])
def test_consumable_words(word, value):
    default = "0" if value == "NO" else "5"
    assert added(f"hc_a hca INT <= y {word} {default} 0").consumable == value


def test_type_and_relop_in_any_case():
    assert added("hc_a hca int <= y n 0 0").type is ValueType.INT
    assert added("hc_a hca cstring != y n none 0").relop is Relop.NE


def test_all_types_are_known():
    for t in ("INT", "DOUBLE", "TIME", "MEMORY", "BOOL"):
        assert added(f"hc_a hca {t} == y n 0 0").type == t
    for t in ("STRING", "CSTRING", "RESTRING", "HOST"):
        assert added(f"hc_a hca {t} == y n NONE 0").type == t


def test_comments_blank_lines_tabs_and_continuations():
    text = SC + "\n  # indented comment\n   hc_a\thca\tINT <= \\\ny n 0 0\n"
    assert parse(text)["hc_a"].shortcut == "hca"


def test_a_hash_after_the_columns_is_not_a_comment():
    err = rejected("hc_a hca INT <= y n 0 0 # comment")
    assert (err.path, err.line) == ("test.sc", 56)
    assert '"#" is one too many' in err.message


def test_name_may_be_its_own_shortcut():
    assert added("hc_a hc_a INT <= y n 0 0").shortcut == "hc_a"


# --- rejected forms, with file and line ------------------------------------


def test_unknown_type():
    err = rejected("hc_a hca FLOAT <= y n 0 0")
    assert str(err).startswith('test.sc:56: unknown complex attribute type "FLOAT" for complex "hc_a"')


def test_unknown_relop():
    err = rejected("hc_a hca INT =< y n 0 0")
    assert 'invalid relational operator "=<" for complex "hc_a"' in str(err)


def test_unknown_requestable():
    assert 'invalid requestable "maybe"' in str(rejected("hc_a hca INT <= maybe n 0 0"))


def test_unknown_consumable():
    assert 'invalid consumable "maybe"' in str(rejected("hc_a hca INT <= y maybe 0 0"))


def test_missing_columns():
    err = rejected("hc_a hca INT <= y n 0")
    assert err.line == 56 and 'column "urgency" is missing' in err.message
    assert 'column "type" is missing' in rejected("hc_a hca").message


def test_name_must_be_unique():
    err = rejected("arch hca INT <= y n 0 0")
    assert err.message == "complex with name arch or shortcut hca already exists"


def test_shortcut_must_be_unique():
    assert rejected("hc_a a INT <= y n 0 0").message == "complex with name hc_a or shortcut a already exists"


def test_shortcut_may_not_be_another_name():
    assert rejected("hc_a arch INT <= y n 0 0").message == "complex with name hc_a or shortcut arch already exists"


def test_name_may_not_be_another_shortcut():
    assert rejected("h hca INT <= y n 0 0").message == "complex with name h or shortcut hca already exists"


def test_string_types_take_only_equal_or_not_equal():
    assert rejected("hc_a hca STRING <= y n NONE 0").message == 'Complex "hc_a" has an invalid relational operator'
    assert added("hc_a hca STRING != y n NONE 0").relop is Relop.NE


def test_string_types_cannot_be_consumable():
    assert rejected("hc_a hca STRING == y y NONE 0").message == 'Complex "hc_a" of type "STRING" cannot be a consumable'


def test_string_default_must_be_none():
    assert rejected("hc_a hca STRING == y n foo 0").message == 'Complex "hc_a" cannot have a (non-zero) default value'
    assert added("hc_a hca STRING == y n none 0").default == "none"


def test_excl_only_for_bool():
    assert rejected("hc_a hca INT EXCL y n 0 0").message == (
        'Complex "hc_a" must be BOOL to use EXCL as relational operator')


def test_excl_must_be_consumable():
    assert rejected("hc_a hca BOOL EXCL y n 0 0").message == 'Exclusive complex "hc_a" must be a consumable'


def test_consumable_bool_must_be_excl():
    assert rejected("hc_a hca BOOL == y y 0 0").message == (
        'Exclusive complex "hc_a" must have EXCL as relational operator')


def test_exclusive_consumable_bool_is_accepted():
    a = added("hc_a hca BOOL EXCL y y 0 0")
    assert a.is_consumable and a.relop is Relop.EXCL


def test_bool_takes_only_equal_or_excl():
    assert rejected("hc_a hca BOOL <= y n 0 0").message == 'Complex "hc_a" has an invalid relational operator'
    assert rejected("hc_a hca BOOL != y n 0 0").message == 'Complex "hc_a" has an invalid relational operator'


def test_consumable_relop_must_be_less_or_equal():
    assert rejected("hc_a hca INT == y y 5 0").message == 'Consumable "hc_a" can have only <= as an relational operator'


def test_non_consumable_default_must_be_zero():
    assert rejected("hc_a hca INT <= y n 5 0").message == 'Complex "hc_a" cannot have a (non-zero) default value'
    assert rejected("hc_a hca BOOL == y n true 0").message == 'Complex "hc_a" cannot have a (non-zero) default value'
    assert rejected("hc_a hca INT <= y n infinity 0").message == 'Complex "hc_a" cannot have a (non-zero) default value'
    assert added("hc_a hca BOOL == y n false 0").default == "false"
    assert added("hc_a hca MEMORY <= y n 0G 0").default == "0G"


def test_default_must_be_a_value_of_the_type():
    assert rejected("hc_a hca TIME <= y n 0:0 0").message == (
        "Complex \"hc_a\"'s default value should be of type \"time value\"")
    assert rejected("hc_a hca MEMORY <= n y 1X 0").message == (
        "Complex \"hc_a\"'s default value should be of type \"memory value\"")
    assert rejected('hc_a hca INT <= y n "0" 0').message == (
        "Complex \"hc_a\"'s default value should be of type \"integer value\"")


def test_consumable_not_requestable_needs_a_default():
    assert rejected("hc_a hca INT <= n y 0 0").message == (
        'Consumable "hc_a" needs a default value because it is not requestable.')
    assert added("hc_a hca INT <= n y 1 0").default == "1"


def test_forced_consumable_cannot_have_a_default():
    err = rejected("hc_a hca INT <= f y 1 0")
    assert err.message == 'Consumable "hc_a" cannot have a (non-zero) default value because it is forced.'
    assert added("hc_a hca INT <= f y 0 0").requestable is Requestable.FORCED


def test_consumable_defaults_grid_engine_accepts():
    for v in ("1.5", "-1", "0x10", "010", "infinity", "1T"):
        assert added(f"hc_a hca INT <= y y {v} 0").default == v


def test_urgency_must_be_a_number():
    err = rejected("hc_a hca INT <= y n 0 abc")
    assert err.message == (
        'The following error occurred for complex "hc_a", while parsing the urgency value: "double value"')
    assert added("hc_a hca INT <= y n 0 -5").urgency == "-5"
    assert added("hc_a hca INT <= y n 0 INFINITY").urgency == "INFINITY"


def test_tmpdir_is_not_requestable():
    text = SC.replace("tmpdir              tmp        STRING    ==    NO",
                      "tmpdir              tmp        STRING    ==    YES")
    with pytest.raises(FormatError) as err:
        parse(text)
    assert err.value.message == 'Complex attribute "tmpdir" is not requestable'


def test_builtin_type_cannot_change():
    text = SC.replace("arch                a          STRING", "arch                a          INT   ").replace(
        "NONE     0\ncalendar", "0     0\ncalendar", 1)
    with pytest.raises(FormatError) as err:
        parse(text)
    assert err.value.message == 'The type of the complex "arch" cannot be changed due to its built in status'
    assert err.value.line == 3


def test_builtin_string_may_become_another_string_type():
    text = SC.replace("arch                a          STRING", "arch                a          CSTRING")
    assert parse(text)["arch"].type is ValueType.CSTRING


def test_error_names_file_and_line():
    err = rejected("hc_a hca FLOAT <= y n 0 0")
    assert str(err).startswith("test.sc:56: ")


# --- what the qmaster does with qconf -Mc -----------------------------------


def test_builtin_cannot_be_deleted():
    new = ComplexList(tuple(a for a in default_complex() if a.name != "rerun"))
    with pytest.raises(FormatError) as err:
        check_modification(default_complex(), new, "test.sc")
    assert err.value.message == 'The built-in complex "rerun" cannot be deleted'


def test_added_attribute_may_be_deleted():
    old = parse(with_line("hc_a hca INT <= y n 0 0"))
    assert check_modification(old, default_complex()) == default_complex()


def test_slots_keeps_its_definition_but_not_its_urgency():
    # real: "slots s INT <= NO NO 0 0" is stored as "slots s INT <= YES YES 1 0"
    text = SC.replace("slots               s          INT       <=    YES         YES        1        1000",
                      "slots s INT <= NO NO 0 0")
    new = check_modification(default_complex(), parse(text))
    assert new["slots"] == ComplexAttr("slots", "s", "INT", "<=", "YES", "YES", "1", "0")


# --- the scheduler's comparisons --------------------------------------------


CL = default_complex()


def test_compare_time_request_must_not_exceed_offer():
    # h_rt (<=): requested 1:0:0 fits a queue with h_rt 2:0:0
    assert compare(CL["h_rt"], "1:0:0", "2:0:0")
    assert compare(CL["h_rt"], "3600", "1:0:0")
    assert not compare(CL["h_rt"], "3:0:0", "2:0:0")


def test_compare_memory():
    assert compare(CL["h_vmem"], "1G", "2G")
    assert not compare(CL["h_vmem"], "1025M", "1G")


def test_compare_load_greater_or_equal():
    # load_avg (>=): the request is the upper bound of the offered value
    assert compare(CL["load_avg"], "2", "1.5")
    assert not compare(CL["load_avg"], "1", "1.5")


def test_compare_equal_int():
    assert compare(CL["num_proc"], "4", "4")
    assert not compare(CL["num_proc"], "4", "8")


def test_compare_bool_true_false_one_zero():
    assert compare(CL["rerun"], "TRUE", "1")
    assert compare(CL["rerun"], "false", "0")
    assert not compare(CL["rerun"], "true", "FALSE")


def test_compare_string_matches_wildcards():
    assert compare(CL["arch"], "lx*|sol*", "lx-amd64")
    assert not compare(CL["arch"], "LX*", "lx-amd64")


def test_compare_host_and_cstring_ignore_case():
    assert compare(CL["hostname"], "NODE1", "node1")
    cstr = ComplexAttr("hc_c", "hcc", "CSTRING", "==", "YES", "NO", "NONE", "0")
    assert compare(cstr, "ABC*", "abcdef")


def test_compare_string_not_equal():
    ne = ComplexAttr("hc_s", "hcs", "STRING", "!=", "YES", "NO", "NONE", "0")
    assert compare(ne, "lx*", "sol-x86")
    assert not compare(ne, "lx*", "lx-amd64")
    assert compare(ne, "lx*|", "lx-amd64")  # a bad expression "differs" from everything


def test_compare_excl():
    excl = ComplexAttr("exclusive", "excl", "BOOL", "EXCL", "YES", "YES", "0", "1000")
    assert compare(excl, "true", "1")
    assert compare(excl, "false", "0")
    assert not compare(excl, "true", "0")


def test_compare_unreadable_request_counts_as_zero():
    assert compare(CL["h_rt"], "nonsense", "0:0:0")


def test_compare_unreadable_offer_is_an_error():
    with pytest.raises(SpecifierError):
        compare(CL["h_rt"], "1:0:0", "nonsense")


def test_threshold_exceeded_reverses_the_relop():
    # np_load_avg (>=) threshold 1.75: exceeded by 1.8, not by 1.75
    assert threshold_exceeded(CL["np_load_avg"], "1.75", "1.8")
    assert not threshold_exceeded(CL["np_load_avg"], "1.75", "1.75")
    # mem_free (<=) threshold 1G: exceeded when less is free
    assert threshold_exceeded(CL["mem_free"], "1G", "512M")
    assert not threshold_exceeded(CL["mem_free"], "1G", "2G")


def test_threshold_on_string_uses_equality():
    assert threshold_exceeded(CL["arch"], "lx*", "lx-amd64")


# --- properties --------------------------------------------------------------

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=10).map(lambda s: "hc" + s)
_numeric_values = st.sampled_from(["0", "1", "1.5", "0x10", "1G", "1:0:0", "infinity", "-2", "010"])


@st.composite
def _attrs(draw, name):
    kind = draw(st.sampled_from(["string", "number", "consumable", "excl"]))
    shortcut = draw(st.one_of(st.just(name), _names.map(lambda s: s.upper())))
    urgency = draw(st.sampled_from(["0", "1000", "-1.5", "1e3"]))
    if kind == "string":
        t = draw(st.sampled_from(["STRING", "CSTRING", "RESTRING", "HOST"]))
        return ComplexAttr(name, shortcut, t, draw(st.sampled_from(["==", "!="])),
                           draw(st.sampled_from(list(Requestable))), "NO", draw(st.sampled_from(["NONE", "none"])),
                           urgency)
    if kind == "number":
        t = draw(st.sampled_from(["INT", "DOUBLE", "TIME", "MEMORY"]))
        return ComplexAttr(name, shortcut, t, draw(st.sampled_from(["==", "<", ">", "<=", ">=", "!="])),
                           draw(st.sampled_from(list(Requestable))), "NO",
                           draw(st.sampled_from(["0", "0:0:0", "0G", "false"])), urgency)
    if kind == "consumable":
        t = draw(st.sampled_from(["INT", "DOUBLE", "TIME", "MEMORY"]))
        req = draw(st.sampled_from(list(Requestable)))
        default = {"NO": "1", "FORCED": "0"}.get(req.value) or draw(_numeric_values)
        return ComplexAttr(name, shortcut, t, "<=", req, draw(st.sampled_from([Consumable.YES, Consumable.JOB])),
                           default, urgency)
    return ComplexAttr(name, shortcut, "BOOL", "EXCL", "YES", draw(st.sampled_from(["YES", "JOB"])), "0", urgency)


@st.composite
def complex_lists(draw):
    names = draw(st.lists(_names, min_size=0, max_size=6, unique=True))
    out, used = [], set()
    for n in names:
        a = draw(_attrs(n))
        if a.shortcut in used or a.shortcut in names and a.shortcut != n:
            a = ComplexAttr(a.name, a.name, a.type, a.relop, a.requestable, a.consumable, a.default, a.urgency)
        used.update({a.name, a.shortcut})
        out.append(a)
    return ComplexList(tuple(out))


@given(complex_lists())
def test_roundtrip(model):
    assert parse(write(model)) == model


@given(complex_lists())
def test_roundtrip_with_the_builtins(model):
    full = ComplexList(default_complex().attrs + model.attrs)
    assert parse(write(full)) == full


@given(st.text(max_size=200))
def test_random_text_only_raises_format_error(text):
    try:
        parse(text)
    except FormatError:
        pass


@given(st.integers(0, len(SC) - 1), st.integers(0, len(SC) - 1), st.text(max_size=5))
def test_mutated_golden_only_raises_format_error(i, j, insert):
    i, j = min(i, j), max(i, j)
    try:
        parse(SC[:i] + insert + SC[j : j + 20] + SC[i:])
    except FormatError:
        pass
