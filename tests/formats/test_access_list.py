"""access_list(5): user access lists and departments."""

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import access_list
from minisge.formats.access_list import (
    AccessList,
    contains,
    has_access,
    parse,
    template,
    write,
)
from minisge.formats.errors import FormatError

GOLDEN = Path(__file__).parent.parent / "golden"


def acl_text(name="hp_acl", type_="ACL", fshare="0", oticket="0", entries="NONE"):
    return f"name {name}\ntype {type_}\nfshare {fshare}\noticket {oticket}\nentries {entries}\n"


# --- what qconf -su prints --------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["qconf_-su_arusers", "qconf_-su_deadlineusers", "qconf_-su_defaultdepartment", "qconf_-su_hp_dept"],
)
def test_qconf_su_output_parses_and_writes_back_byte_identical(name):
    text = (GOLDEN / name).read_text()
    assert write(parse(text, name)) == text


def test_defaultdepartment_is_a_department_only():
    acl = parse((GOLDEN / "qconf_-su_defaultdepartment").read_text())
    assert (acl.type, acl.is_dept, acl.is_acl) == ("DEPT", True, False)


def test_input_file_reads_as_qconf_shows_it_afterwards():
    # tests/golden/inputs/hp_dept.acl was added with qconf -Au, and
    # qconf_-su_hp_dept is what qconf -su showed afterwards
    given_ = parse((GOLDEN / "inputs" / "hp_dept.acl").read_text())
    shown = parse((GOLDEN / "qconf_-su_hp_dept").read_text())
    assert given_ == shown


def test_long_entries_break_at_commas_with_indent_to_value_column():
    text = write(parse((GOLDEN / "inputs" / "hp_dept.acl").read_text()))
    assert text.splitlines()[4].endswith("a_very_long_user_name_that_goes_on_and_on, \\")
    assert text.splitlines()[5].startswith("        another_very_long_user_name_here")


def test_prologusers_input_round_trips():
    text = (GOLDEN / "inputs" / "prologusers.acl").read_text()
    assert parse(text).entries == ("sgetest2",)
    assert write(parse(text)) == text


def test_template_is_an_empty_acl_without_shares():
    assert write(template("x")) == "name    x\ntype    ACL\nfshare  0\noticket 0\nentries NONE\n"


# --- type ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "given_, written",
    [("ACL", "ACL"), ("DEPT", "DEPT"), ("acl", "ACL"), ("dept", "DEPT"),
     ("ACL,DEPT", "ACL DEPT"), ("DEPT,ACL", "ACL DEPT"), ("ACL DEPT", "ACL DEPT")],
)  # fmt: skip
def test_type_is_acl_dept_or_both_written_as_grid_engine_does(given_, written):
    acl = parse(acl_text(type_=given_))
    assert acl.type == written
    assert write(acl).splitlines()[1] == f"type    {written}"


def test_both_types_make_an_access_list_and_a_department():
    acl = parse(acl_text(type_="ACL,DEPT"))
    assert acl.is_acl and acl.is_dept


@pytest.mark.parametrize("bad", ["FOO", "ACL,FOO", "NONE"])
def test_unknown_type_specifier_is_rejected(bad):
    with pytest.raises(FormatError, match="unknown specifier") as err:
        parse(acl_text(type_=bad), "a.acl")
    assert (err.value.path, err.value.line) == ("a.acl", 2)


def test_type_given_twice_is_rejected():
    with pytest.raises(FormatError, match='"ACL" given twice'):
        parse(acl_text(type_="ACL,acl"))


# --- fshare and oticket -----------------------------------------------------


def test_fshare_and_oticket_are_unsigned_numbers_read_like_strtod():
    acl = parse(acl_text(fshare="010", oticket="0x10"))
    assert (acl.fshare, acl.oticket) == (10, 16)
    assert parse(acl_text(oticket="4294967295")).oticket == 4294967295


@pytest.mark.parametrize(
    "bad, why",
    [("-1", "must be a positive number"), ("1.5", "not an u_long32"), ("4294967296", "not an u_long32"),
     ("abc", "error parsing unsigned long"), ("5x", "error parsing unsigned long")],
)  # fmt: skip
def test_bad_share_values_are_rejected_at_their_line(bad, why):
    with pytest.raises(FormatError, match=why) as err:
        parse(acl_text(oticket=bad), "a.acl")
    assert err.value.line == 4
    assert "oticket" in err.value.message


# --- entries --------------------------------------------------------------------


def test_entries_are_users_and_at_groups_comma_separated():
    acl = parse(acl_text(entries="u1,u2,@g1"))
    assert acl.entries == ("u1", "u2", "@g1")
    assert write(acl).endswith("entries u1,u2,@g1\n")


def test_blanks_after_commas_are_dropped():
    assert parse(acl_text(entries="u1, u2")).entries == ("u1", "u2")


def test_none_in_any_case_means_no_entries():
    assert parse(acl_text(entries="none")).entries == ()


def test_none_with_other_entries_is_rejected():
    with pytest.raises(FormatError, match="NONE cannot be combined"):
        parse(acl_text(entries="u1,NONE"))


@pytest.mark.parametrize("bad", ["@", "u:1", "a/b", "@g,@"])
def test_malformed_entries_are_rejected(bad):
    with pytest.raises(FormatError, match="entries") as err:
        parse(acl_text(entries=bad))
    assert err.value.line == 5


def test_continued_entries_line_is_joined():
    text = "name x\ntype ACL\nfshare 0\noticket 0\nentries u1, \\\n        u2\n"
    assert parse(text).entries == ("u1", "u2")


# --- the file as a whole ----------------------------------------------------------


@pytest.mark.parametrize("missing", access_list.ATTRIBUTES)
def test_every_attribute_is_required(missing):
    text = "".join(ln + "\n" for ln in acl_text().splitlines() if not ln.startswith(missing + " "))
    with pytest.raises(FormatError, match=f'missing attribute "{missing}"') as err:
        parse(text)
    assert err.value.line == 0


def test_unknown_attribute_is_rejected():
    with pytest.raises(FormatError, match='unknown attribute name "bogus"') as err:
        parse(acl_text() + "bogus 1\n")
    assert err.value.line == 6


def test_repeated_attribute_is_rejected():
    with pytest.raises(FormatError, match="more than once"):
        parse(acl_text() + "fshare 1\n")


@pytest.mark.parametrize("bad", ["NONE", "a:b", ".x", "a,b"])
def test_name_must_be_an_object_name(bad):
    with pytest.raises(FormatError, match="invalid userset name") as err:
        parse(acl_text(name=bad))
    assert err.value.line == 1


# --- membership -------------------------------------------------------------------


def test_a_listed_user_is_contained():
    assert contains(AccessList("a", entries=("alice", "@staff")), "alice")


def test_a_user_whose_group_is_listed_is_contained():
    assert contains(AccessList("a", entries=("alice", "@staff")), "bob", ["users", "staff"])


def test_a_group_name_without_at_does_not_match_a_group():
    assert not contains(AccessList("a", entries=("staff",)), "bob", ["staff"])


def test_an_unlisted_user_is_not_contained():
    assert not contains(AccessList("a", entries=("alice",)), "bob", ["users"])
    assert not contains(AccessList("a"), "alice")


# --- user_lists / xuser_lists (sge_pe(5), host_conf(5), queue_conf(5)) ------------

LISTS = {
    "staff": AccessList("staff", entries=("alice", "@wheel")),
    "banned": AccessList("banned", entries=("mallory", "alice")),
}


def test_with_user_lists_none_everyone_not_excluded_has_access():
    assert has_access("bob", [], (), (), LISTS)
    assert not has_access("mallory", [], (), ("banned",), LISTS)


def test_with_user_lists_only_members_have_access():
    assert has_access("carol", ["wheel"], ("staff",), (), LISTS)
    assert not has_access("bob", ["users"], ("staff",), (), LISTS)


def test_a_user_in_both_user_lists_and_xuser_lists_is_denied():
    assert not has_access("alice", [], ("staff",), ("banned",), LISTS)


def test_an_unknown_list_name_has_no_members():
    assert not has_access("alice", [], ("gone",), (), LISTS)
    assert has_access("alice", [], (), ("gone",), LISTS)


# --- properties ---------------------------------------------------------------------

NAMES = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_.-", max_size=11),
).filter(lambda s: s.upper() not in ("NONE", "ALL", "TEMPLATE"))
ENTRY = st.one_of(NAMES, NAMES.map(lambda s: "@" + s))
ACLS = st.builds(
    AccessList,
    name=NAMES,
    type=st.sampled_from(["ACL", "DEPT", "ACL DEPT"]),
    fshare=st.integers(0, 2**32 - 1),
    oticket=st.integers(0, 2**32 - 1),
    entries=st.lists(ENTRY, max_size=12).map(tuple),
)


@given(ACLS)
def test_write_then_parse_gives_the_same_access_list(acl):
    assert parse(write(acl)) == acl


@given(st.data())
def test_mangled_text_raises_only_format_error(data):
    text = write(parse((GOLDEN / "qconf_-su_hp_dept").read_text()))
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(st.sampled_from("ACLDEPT@,:\\ \n\t#x0-=NONE"), max_size=6))
    cut = data.draw(st.integers(0, 5))
    try:
        parse(text[:pos] + junk + text[pos + cut :])
    except FormatError:
        pass


@given(st.text(max_size=200))
def test_random_text_raises_only_format_error(text):
    try:
        parse(text)
    except FormatError:
        pass
