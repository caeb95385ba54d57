"""hostgroup(5): host groups, their resolution and their tree."""

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats.errors import FormatError
from minisge.formats.hostgroup import (
    HostGroup,
    HostGroupError,
    find_cycle,
    parse,
    resolve,
    template,
    tree,
    write,
)

GOLDEN = Path(__file__).parent.parent / "golden"

# The groups that existed on the real Grid Engine when the @hp_* goldens were
# captured: @hp_sub_group_01..12 empty except 02 = "vm @hp_sub_group_01".
SUBGROUPS = {f"@hp_sub_group_{i:02d}": HostGroup(f"@hp_sub_group_{i:02d}") for i in range(1, 13)}
SUBGROUPS["@hp_sub_group_02"] = HostGroup("@hp_sub_group_02", ("vm", "@hp_sub_group_01"))


def golden_groups():
    groups = dict(SUBGROUPS)
    for name in ("@allhosts", "@hp_big", "@hp_ord"):
        g = parse((GOLDEN / f"qconf_-shgrp_{name}").read_text())
        groups[g.name] = g
    return groups


# --- what qconf -shgrp prints -------------------------------------------------


@pytest.mark.parametrize("name", ["@allhosts", "@hp_big", "@hp_ord"])
def test_qconf_shgrp_output_parses_and_writes_back_byte_identical(name):
    text = (GOLDEN / f"qconf_-shgrp_{name}").read_text()
    assert write(parse(text)) == text


def test_long_hostlist_wraps_with_continuation_under_the_first_host():
    text = (GOLDEN / "qconf_-shgrp_@hp_big").read_text()
    assert parse(text).hostlist[-1] == "@hp_sub_group_12"
    assert text.splitlines()[2].startswith("         @hp_sub_group_04")


def test_hostlist_keeps_the_order_given():
    g = parse((GOLDEN / "inputs" / "hp_ord.hg").read_text())
    assert g.hostlist == ("@hp_sub_group_03", "vm", "@hp_sub_group_02")
    assert write(g) == (GOLDEN / "qconf_-shgrp_@hp_ord").read_text()


def test_hosts_and_subgroups_are_told_apart_by_the_at_sign():
    g = HostGroup("@g", ("a", "@sub", "b"))
    assert (g.hosts, g.subgroups) == (("a", "b"), ("@sub",))


def test_template_is_an_empty_group():
    assert write(template("@hp_tpl")) == (GOLDEN / "qconf_-ahgrp_@hp_tpl.template").read_text()
    assert parse("group_name @x\nhostlist none\n").hostlist == ()


def test_duplicate_hosts_are_kept_as_grid_engine_does():
    assert parse("group_name @x\nhostlist vm vm\n").hostlist == ("vm", "vm")


# --- rejected forms --------------------------------------------------------------


@pytest.mark.parametrize("bad", ["hp_d", "@", "@a:b", "@NONE"])
def test_group_name_must_be_at_and_an_object_name(bad):
    with pytest.raises(FormatError, match="host group name") as err:
        parse(f"group_name {bad}\nhostlist NONE\n", "h.hg")
    assert (err.value.path, err.value.line) == ("h.hg", 1)


def test_only_white_space_separates_hostlist_entries():
    with pytest.raises(FormatError, match="only white space") as err:
        parse("group_name @x\nhostlist vm,localhost\n")
    assert err.value.line == 2


def test_none_with_other_hosts_is_rejected():
    with pytest.raises(FormatError, match="NONE cannot be combined"):
        parse("group_name @x\nhostlist NONE vm\n")


@pytest.mark.parametrize("bad", ["template", "all", "default", "unknown", "a=b", "@bad:group"])
def test_reserved_or_malformed_host_names_are_rejected(bad):
    with pytest.raises(FormatError, match="hostlist"):
        parse(f"group_name @x\nhostlist vm {bad}\n")


def test_a_group_containing_itself_is_a_cycle():
    with pytest.raises(FormatError, match="would create a cycle"):
        parse("group_name @x\nhostlist vm @x\n")


def test_both_attributes_are_required():
    with pytest.raises(FormatError, match='missing attribute "hostlist"'):
        parse("group_name @x\n")
    with pytest.raises(FormatError, match='missing attribute "group_name"'):
        parse("hostlist vm\n")


def test_unknown_attribute_is_rejected():
    with pytest.raises(FormatError, match='unknown attribute name "hosts"'):
        parse("group_name @x\nhostlist vm\nhosts a\n")


# --- resolution ------------------------------------------------------------------------


def test_resolve_expands_nested_groups_to_hosts():
    groups = {
        "@all": HostGroup("@all", ("h1", "@a", "@b")),
        "@a": HostGroup("@a", ("h2", "@b")),
        "@b": HostGroup("@b", ("h3", "h1")),
    }
    assert resolve(groups, "@all") == frozenset({"h1", "h2", "h3"})
    assert resolve(groups, "@b") == frozenset({"h1", "h3"})


def test_resolve_of_the_golden_groups():
    groups = golden_groups()
    assert resolve(groups, "@allhosts") == frozenset({"vm"})
    assert resolve(groups, "@hp_sub_group_01") == frozenset()


def test_resolve_rejects_a_cycle():
    groups = {"@a": HostGroup("@a", ("@b",)), "@b": HostGroup("@b", ("h", "@a"))}
    with pytest.raises(HostGroupError, match='"@a" in specification of "@b" would create a cycle'):
        resolve(groups, "@a")


def test_resolve_rejects_an_unknown_subgroup():
    with pytest.raises(HostGroupError, match='"@gone" does not exist'):
        resolve({"@a": HostGroup("@a", ("@gone",))}, "@a")


def test_find_cycle_names_the_loop():
    groups = {"@a": HostGroup("@a", ("@b",)), "@b": HostGroup("@b", ("@c",)), "@c": HostGroup("@c", ("@a",))}
    assert find_cycle(groups) == ("@a", "@b", "@c", "@a")
    assert find_cycle(golden_groups()) is None


# --- qconf -shgrp_tree ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["@allhosts", "@hp_big", "@hp_ord"])
def test_tree_is_byte_identical_to_qconf_shgrp_tree(name):
    assert tree(golden_groups(), name) == (GOLDEN / f"qconf_-shgrp_tree_{name}").read_text()


def test_tree_rejects_a_cycle():
    with pytest.raises(HostGroupError, match="cycle"):
        tree({"@a": HostGroup("@a", ("@a",))}, "@a")


# --- properties --------------------------------------------------------------------------

OBJ = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_.-", max_size=11),
).filter(lambda s: s.upper() not in ("NONE", "ALL", "TEMPLATE"))
HOST = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_lowercase),
    st.text(string.ascii_lowercase + string.digits + "-.", max_size=14),
).filter(lambda s: s not in ("template", "all", "default", "unknown", "none"))
GROUPS = st.builds(
    HostGroup,
    name=OBJ.map(lambda s: "@" + s),
    hostlist=st.lists(st.one_of(HOST, OBJ.map(lambda s: "@" + s)), max_size=30).map(tuple),
).filter(lambda g: g.name not in g.hostlist)


@given(GROUPS)
def test_write_then_parse_gives_the_same_group(group):
    assert parse(write(group)) == group


@given(st.dictionaries(st.sampled_from(["@a", "@b", "@c", "@d"]),
                       st.lists(st.sampled_from(["h1", "h2", "@a", "@b", "@c", "@d"]), max_size=4)))  # fmt: skip
def test_resolve_either_finds_hosts_or_reports_cycle_or_missing_group(spec):
    groups = {n: HostGroup(n, tuple(members)) for n, members in spec.items()}
    for name in groups:
        try:
            hosts = resolve(groups, name)
        except HostGroupError:
            continue
        assert hosts <= {"h1", "h2"}
        assert set(groups[name].hosts) <= hosts


@given(st.data())
def test_mangled_text_raises_only_format_error(data):
    text = (GOLDEN / "qconf_-shgrp_@hp_big").read_text()
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(st.sampled_from("@,:\\ \n\t#xNONE="), max_size=6))
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
