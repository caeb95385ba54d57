"""project(5): projects."""

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import project
from minisge.formats.errors import FormatError
from minisge.formats.project import Project, allows, parse, template, write

GOLDEN = Path(__file__).parent.parent / "golden"


def prj_text(name="hp_prj", oticket="0", fshare="0", acl="NONE", xacl="NONE"):
    return f"name {name}\noticket {oticket}\nfshare {fshare}\nacl {acl}\nxacl {xacl}\n"


def test_qconf_sprj_output_parses_and_writes_back_byte_identical():
    text = (GOLDEN / "qconf_-sprj_hp_prj").read_text()
    prj = parse(text)
    assert prj == Project("hp_prj", 100, 25, ("arusers",), ("deadlineusers", "defaultdepartment"))
    assert write(prj) == text


def test_input_file_reads_as_qconf_shows_it_afterwards():
    assert parse((GOLDEN / "inputs" / "hp_prj.prj").read_text()) == parse(
        (GOLDEN / "qconf_-sprj_hp_prj").read_text()
    )


def test_template_is_what_qconf_aprj_offers():
    assert write(template("template")) == (GOLDEN / "qconf_-aprj.template").read_text()


def test_names_are_followed_by_one_space_not_padded():
    assert write(template("p")).splitlines()[1] == "oticket 0"


def test_tickets_and_shares_are_unsigned_numbers_read_like_strtod():
    prj = parse(prj_text(oticket="0x10", fshare="010"))
    assert (prj.oticket, prj.fshare) == (16, 10)
    assert parse(prj_text(oticket="1e3", fshare="+5")) == Project("hp_prj", 1000, 5)


@pytest.mark.parametrize(
    "attr, bad, why",
    [("oticket", "-1", "must be a positive number"), ("fshare", "1.5", "not an u_long32"),
     ("fshare", ".5", "not an u_long32"), ("oticket", "4294967296", "not an u_long32"),
     ("oticket", "inf", "error parsing unsigned long")],
)  # fmt: skip
def test_bad_numbers_are_rejected_at_their_line(attr, bad, why):
    with pytest.raises(FormatError, match=why) as err:
        parse(prj_text(**{attr: bad}), "p.prj")
    assert err.value.line == {"oticket": 2, "fshare": 3}[attr]


def test_acl_lists_are_space_separated_and_commas_are_read_too():
    assert parse(prj_text(acl="arusers deadlineusers")).acl == ("arusers", "deadlineusers")
    assert parse(prj_text(acl="arusers,deadlineusers")).acl == ("arusers", "deadlineusers")
    assert write(parse(prj_text(acl="a,b"))).splitlines()[3] == "acl a b"


def test_duplicates_within_acl_are_kept_as_grid_engine_does():
    assert parse(prj_text(acl="arusers arusers")).acl == ("arusers", "arusers")


def test_a_userset_in_both_acl_and_xacl_is_denied():
    # what the real qmaster answers to qconf -Aprj
    with pytest.raises(FormatError, match='multiple occurrences of userset "arusers" in project "hp_prj"') as err:
        parse(prj_text(acl="arusers", xacl="deadlineusers arusers"))
    assert err.value.line == 5


def test_none_in_any_case_means_no_list():
    assert parse(prj_text(xacl="none")).xacl == ()


def test_none_with_other_names_is_rejected():
    with pytest.raises(FormatError, match="NONE cannot be combined") as err:
        parse(prj_text(acl="NONE arusers"))
    assert err.value.line == 4


def test_acl_names_must_be_object_names():
    with pytest.raises(FormatError, match='invalid name "a:b"'):
        parse(prj_text(xacl="a:b"))


@pytest.mark.parametrize("bad", ["template", "NONE", "a/b", "#x"])
def test_project_name_must_be_an_object_name(bad):
    with pytest.raises(FormatError, match="invalid project name") as err:
        parse(prj_text(name=bad))
    assert err.value.line == 1


@pytest.mark.parametrize("missing", project.ATTRIBUTES)
def test_every_attribute_is_required(missing):
    text = "".join(ln + "\n" for ln in prj_text().splitlines() if not ln.startswith(missing + " "))
    with pytest.raises(FormatError, match=f'missing attribute "{missing}"'):
        parse(text)


def test_spool_only_attributes_are_unknown_to_the_qconf_format():
    with pytest.raises(FormatError, match='unknown attribute name "usage"'):
        parse(prj_text() + "usage NONE\n")


def test_empty_value_is_rejected():
    with pytest.raises(FormatError, match='missing value for attribute "fshare"'):
        parse("name p\noticket 0\nfshare \nacl NONE\nxacl NONE\n")


# --- who may submit -------------------------------------------------------------


def test_project_without_acl_admits_everyone_not_excluded():
    assert allows(Project("p"), set())
    assert not allows(Project("p", xacl=("bad",)), {"bad"})


def test_project_with_acl_admits_only_its_members():
    prj = Project("p", acl=("ok",))
    assert allows(prj, {"ok"})
    assert not allows(prj, {"other"})


def test_xacl_wins_over_acl():
    assert not allows(Project("p", acl=("ok",), xacl=("bad",)), {"ok", "bad"})


# --- properties --------------------------------------------------------------------

NAMES = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_.-", max_size=11),
).filter(lambda s: s.upper() not in ("NONE", "ALL", "TEMPLATE"))
PROJECTS = st.builds(
    Project,
    name=NAMES,
    oticket=st.integers(0, 2**32 - 1),
    fshare=st.integers(0, 2**32 - 1),
    acl=st.lists(NAMES, max_size=10).map(tuple),
    xacl=st.lists(NAMES, max_size=10).map(tuple),
).filter(lambda p: not set(p.acl) & set(p.xacl))


@given(PROJECTS)
def test_write_then_parse_gives_the_same_project(prj):
    assert parse(write(prj)) == prj


@given(st.data())
def test_mangled_text_raises_only_format_error(data):
    text = (GOLDEN / "qconf_-sprj_hp_prj").read_text()
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(st.sampled_from("0x1.-e@,:\\ \n\t#aNONE"), max_size=6))
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
