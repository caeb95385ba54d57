"""queue_conf(5): the cluster queue configuration file.

Golden samples in tests/golden/ (outputs of the real Grid Engine 8.1.9):
- qconf_-sq_all.q: `qconf -sq all.q` of the default cell;
- qconf_-sq_hq_test.q: `qconf -Aq inputs/hq_test.q` then `qconf -sq hq_test.q`
  (host-specific overrides, long lists that wrap);
- qconf_-sq_hq_wrap.q: the same for inputs/hq_wrap.q (overrides on every kind
  of value, slot-wise subordination, an unbreakable long value);
- qconf_-sq_hq_tmpl.q: `EDITOR=cat qconf -aq hq_tmpl.q` then `qconf -sq hq_tmpl.q`
  (the template defaults);
- qconf_-Aq.*.stderr with inputs/badslots.q, inputs/malformed.q: rejections.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import queue_conf as qc
from minisge.formats.errors import FormatError
from minisge.formats.queue_conf import HostValues, QueueConf

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def all_q_with(attr: str, value: str) -> str:
    """The golden all.q with one attribute line replaced."""
    lines = golden("qconf_-sq_all.q").splitlines(keepends=True)
    out = [f"{attr} {value}\n" if ln.split(" ", 1)[0] == attr else ln for ln in lines]
    return "".join(out)


def parse_value(attr: str, value: str) -> HostValues:
    return getattr(qc.parse(all_q_with(attr, value), "q"), attr)


def rejected(attr: str, value: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        qc.parse(all_q_with(attr, value), "test.q")
    return info.value


def line_of(attr: str) -> int:
    return qc.ATTRIBUTES.index(attr) + 1


# --- golden samples -------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["qconf_-sq_all.q", "qconf_-sq_hq_test.q", "qconf_-sq_hq_wrap.q", "qconf_-sq_hq_tmpl.q"],
)
def test_qconf_sq_output_parses_and_writes_back_byte_identical(name):
    text = golden(name)
    assert qc.write(qc.parse(text, name)) == text


@pytest.mark.parametrize("queue", ["hq_test.q", "hq_wrap.q"])
def test_input_is_written_as_qconf_sq_shows_it_after_qconf_Aq(queue):
    conf = qc.parse(golden(f"inputs/{queue}"), queue)
    assert qc.write(conf) == golden(f"qconf_-sq_{queue}")


def test_golden_all_q_values():
    conf = qc.parse(golden("qconf_-sq_all.q"))
    assert conf.qname == "all.q"
    assert conf.hostlist == ("@allhosts",)
    assert conf.pe_list == HostValues("make smp mpi")
    assert conf.load_thresholds == HostValues("np_load_avg=1.75")
    assert conf.notify == HostValues("00:00:60")  # kept as given, not 00:01:00
    assert conf.slots == HostValues("2")


def test_template_is_what_qconf_aq_offers():
    assert qc.write(qc.template("hq_tmpl.q")) == golden("qconf_-sq_hq_tmpl.q")
    assert qc.template().qname == "template"
    assert qc.template().hostlist == ()


def test_attributes_are_written_in_grid_engine_order_at_column_22():
    text = qc.write(qc.template())
    names = [ln.split()[0] for ln in text.splitlines()]
    assert tuple(names) == qc.ATTRIBUTES
    assert all(ln[22] != " " and ln[21] == " " for ln in text.splitlines())


# --- the host-specific syntax ----------------------------------------------


def test_host_entry_overrides_default():
    assert parse_value("slots", "1,[vm=2]") == HostValues("1", (("vm", "2"),))


def test_spaces_are_allowed_around_commas():
    assert parse_value("slots", "1 , [vm=2] ,  [@allhosts=3]") == HostValues(
        "1", (("@allhosts", "3"), ("vm", "2"))
    )


def test_host_group_entries_are_written_before_host_entries():
    # qconf -Aq with "slots 1,[vm=2],[@allhosts=3]" shows "1,[@allhosts=3],[vm=2]"
    conf = qc.parse(all_q_with("slots", "1,[vm=2],[@allhosts=3]"))
    assert "slots                 1,[@allhosts=3],[vm=2]\n" in qc.write(conf)


def test_list_values_inside_brackets_may_contain_spaces():
    assert parse_value("pe_list", "make,[@allhosts=make smp mpi],[vm=smp, mpi]") == HostValues(
        "make", (("@allhosts", "make smp mpi"), ("vm", "smp mpi"))
    )


def test_default_is_required():
    err = rejected("slots", "[vm=2]")
    assert err.line == line_of("slots")
    assert '"slots" has no default value' in str(err)
    assert str(err).startswith(f"test.q:{line_of('slots')}: ")


def test_same_host_twice_is_rejected_as_ambiguous():
    err = rejected("slots", "1,[vm=2],[vm=3]")
    assert 'value for "vm" is multiply defined' in str(err)
    assert err.line == line_of("slots")


def test_same_host_group_twice_is_rejected():
    assert "multiply defined" in str(rejected("slots", "1,[@allhosts=2],[@ALLHOSTS=3]"))


@pytest.mark.parametrize(
    "value, gist",
    [
        ("1[vm=2]", "separated by commas"),
        ("1,[vm=2][vm=3]", "separated by commas"),
        ("1,[vm=2", "enclosed in brackets"),
        ("1,[vm=2],", "extra comma at the end"),
        ("1,[vm]", "'=' has to separate host or group from value"),
        ("1,[=2]", "not a valid host"),
        ("1,[ vm=2]", "not a valid host"),
        ("1,[vm=]", 'no value given for "vm"'),
        ("1,[vm=abc]", 'error parsing unsigned long value from string "abc"'),
    ],
)
def test_malformed_host_specific_syntax_is_rejected(value, gist):
    err = rejected("slots", value)
    assert gist in err.message
    assert err.line == line_of("slots")


def test_qname_and_hostlist_take_no_host_specific_values():
    err = rejected("hostlist", "vm,[vm=x]")
    assert "host-specific values are not allowed" in err.message
    assert rejected("qname", "q,[vm=x]").line == 1


def test_every_override_value_is_checked_by_the_attribute_type():
    assert "not a time specifier" in rejected("h_rt", "INFINITY,[vm=1h]").message
    assert "priority not in range" in rejected("priority", "0,[@allhosts=30]").message


# --- values of each type ----------------------------------------------------


@pytest.mark.parametrize(
    "attr, given, written",
    [
        ("slots", "0x10", "16"),  # strtod, as the real qconf
        ("slots", "010", "10"),
        ("seq_no", "1e3", "1000"),
        ("seq_no", "4294967295", "4294967295"),
        ("nsuspend", "+3", "3"),
        ("rerun", "true", "TRUE"),
        ("rerun", "y", "TRUE"),
        ("rerun", "1", "TRUE"),
        ("rerun", "No", "FALSE"),
        ("qtype", "batch", "BATCH"),
        ("qtype", "interactive,batch", "BATCH INTERACTIVE"),
        ("qtype", "none", "NONE"),
        ("pe_list", "make,smp", "make smp"),
        ("pe_list", "smp make make", "smp make"),
        ("pe_list", "none", "NONE"),
        ("pe_list", "NONE make", "NONE"),
        ("owner_list", "root,sgetest", "root sgetest"),
        ("user_lists", "arusers , deadlineusers", "arusers deadlineusers"),
        ("xprojects", "none", "NONE"),
        ("load_thresholds", "np_load_avg=1.75 mem_free=1G", "np_load_avg=1.75,mem_free=1G"),
        ("load_thresholds", "np_load_avg= 1.75", "np_load_avg=1.75"),
        ("load_thresholds", "UNDEFINED", "NONE"),
        ("complex_values", "h_vmem=1G slots=4", "h_vmem=1G,slots=4"),
        ("subordinate_list", "all.q:3", "all.q=3"),
        ("subordinate_list", "all.q=1 b.q", "all.q=1, b.q"),
        ("subordinate_list", "a.q b.q=2", "a.q b.q=2"),
        ("subordinate_list", "all.q,all.q", "all.q"),
        ("subordinate_list", "SLOTS=3(all.q)", "slots=3(all.q:0:sr)"),
        ("subordinate_list", "slots=2( a.q , b.q:2:lr )", "slots=2(a.q:0:sr, b.q:2:lr)"),
        ("subordinate_list", "none", "NONE"),
        # kept as given, as the real qconf keeps them
        ("s_rt", "1:0:0", "1:0:0"),
        ("s_rt", "infinity", "infinity"),
        ("notify", "60", "60"),
        ("h_vmem", "1.5G", "1.5G"),
        ("priority", "+5", "+5"),
        ("priority", "0x5", "0x5"),
        ("shell_start_mode", "UNIX_BEHAVIOR", "UNIX_BEHAVIOR"),
        ("initial_state", "Enabled", "Enabled"),
        ("processors", "1-4,8", "1-4,8"),
        ("processors", "undefined", "undefined"),
        ("calendar", "none", "none"),
        ("tmpdir", "NONE", "NONE"),
        ("prolog", "root@/bin/true", "root@/bin/true"),
        ("shell", "/bin/bash", "/bin/bash"),
    ],
)
def test_values_are_written_as_the_real_qconf_writes_them(attr, given, written):
    assert parse_value(attr, given) == HostValues(written)


@pytest.mark.parametrize(
    "attr, value, gist",
    [
        ("slots", "10000000", "between 0 and 9999999"),
        ("slots", "-1", '"-1" is not an u_long32 value'),
        ("slots", "1.5", '"1.5" is not an u_long32 value'),
        ("slots", "2abc", 'error parsing unsigned long value from string "2abc"'),
        ("seq_no", "4294967296", "is not an u_long32 value"),
        ("rerun", "maybe", '"maybe"'),
        ("priority", "-21", "not in range -20 to +20"),
        ("priority", "21", "not in range"),
        ("priority", "abc", "invalid character"),
        ("priority", "+0", "invalid character"),
        ("qtype", "PARALLEL", 'unknown queue type "PARALLEL"'),
        ("qtype", "BATCH BATCH", "given twice"),
        ("qtype", "NONE BATCH", 'unknown queue type "NONE"'),
        ("shell_start_mode", "foo", '"foo" as shell start mode'),
        ("initial_state", "foo", '"foo" as initial state'),
        ("shell", "bin/sh", "absolute path"),
        ("processors", "NONE", "range list"),
        ("processors", "1-4:2", "range list"),
        ("s_rt", "NONE", "not a time specifier"),
        ("s_rt", "1:2:3:4", "not a time specifier"),
        ("notify", "1h", "not a time specifier"),
        ("h_vmem", "none", "not a memory specifier"),
        ("h_vmem", "1x", "not a memory specifier"),
        ("load_thresholds", "np_load_avg", "name=value pairs"),
        ("load_thresholds", "np_load_avg=1.75,mem_free", "name=value pairs"),
        ("subordinate_list", "all.q=x", "bad subordinate"),
        ("subordinate_list", "slots=0(all.q)", "positive integer"),
        ("subordinate_list", "slots=x(all.q)", "positive integer"),
        ("subordinate_list", "slots=2(all.q:x)", "bad queue_def"),
        ("subordinate_list", "slots=2(all.q:1:zz)", "bad queue_def"),
        ("subordinate_list", "slots=2()", "no queue given"),
        ("calendar", "a/b", "not a valid calendar name"),
        ("hostlist", "a/b,[x]", "host-specific"),
    ],
)
def test_bad_values_are_rejected_naming_attribute_and_value(attr, value, gist):
    err = rejected(attr, value)
    assert gist in err.message
    assert err.line == line_of(attr)


def test_bad_slots_value_like_golden_qconf_Aq():
    # real qconf: error parsing unsigned long value from string "abc"
    assert "error parsing unsigned long value from string" in golden("qconf_-Aq.bad_slots_value.stderr")
    with pytest.raises(FormatError) as info:
        qc.parse(golden("inputs/badslots.q"), "INPUTS/badslots.q")
    assert str(info.value) == (
        'INPUTS/badslots.q:15: slots: error parsing unsigned long value from string "abc"'
    )


def test_unknown_attribute_is_rejected_like_golden_qconf_Aq():
    # real qconf: error: unknown attribute name "this"
    assert 'unknown attribute name "this"' in golden("qconf_-Aq.malformed.stderr")
    with pytest.raises(FormatError) as info:
        qc.parse(golden("inputs/malformed.q"), "INPUTS/malformed.q")
    assert str(info.value) == 'INPUTS/malformed.q:1: unknown attribute name "this"'


def test_every_attribute_is_required():
    text = "".join(ln for ln in golden("qconf_-sq_all.q").splitlines(True) if not ln.startswith("seq_no"))
    with pytest.raises(FormatError) as info:
        qc.parse(text, "x.q")
    assert info.value.line == 0 and '"seq_no"' in info.value.message


def test_missing_qname_is_rejected():
    text = "".join(ln for ln in golden("qconf_-sq_all.q").splitlines(True) if not ln.startswith("qname"))
    with pytest.raises(FormatError, match='missing attribute "qname"'):
        qc.parse(text)


def test_attribute_given_twice_is_rejected():
    text = golden("qconf_-sq_all.q") + "slots 4\n"
    with pytest.raises(FormatError) as info:
        qc.parse(text, "x.q")
    assert info.value.line == len(qc.ATTRIBUTES) + 1


@pytest.mark.parametrize("name", ["a/b", "a@b", "hq:x", "a,b"])
def test_invalid_queue_name_is_rejected(name):
    assert f'cluster queue name "{name}" is not valid' in rejected("qname", name).message


def test_hostlist_takes_commas_or_white_space_and_drops_repeats():
    conf = qc.parse(all_q_with("hostlist", "vm,@allhosts  vm"))
    assert conf.hostlist == ("vm", "@allhosts")
    assert "hostlist              vm @allhosts\n" in qc.write(conf)
    assert qc.parse(all_q_with("hostlist", "none")).hostlist == ()
    assert "hostlist              NONE\n" in qc.write(qc.parse(all_q_with("hostlist", "NONE vm")))


def test_backslash_newline_continues_a_value():
    conf = qc.parse(all_q_with("pe_list", "make \\\n    smp,[vm=mpi]"))
    assert conf.pe_list == HostValues("make smp", (("vm", "mpi"),))


# --- typed values -----------------------------------------------------------


def test_decode_gives_typed_values():
    conf = qc.parse(golden("qconf_-sq_hq_wrap.q"))
    groups = {"@allhosts": {"vm"}}
    assert qc.typed_value_for(conf, "seq_no", "vm", groups) == 20
    assert qc.typed_value_for(conf, "rerun", "vm", groups) is True
    assert qc.typed_value_for(conf, "rerun", "other", groups) is False
    assert qc.typed_value_for(conf, "notify", "vm", groups) == 120.0
    assert qc.typed_value_for(conf, "h_vmem", "vm", groups) == 8 * 1024**3
    assert qc.typed_value_for(conf, "h_rt", "vm", groups) == math.inf
    assert qc.typed_value_for(conf, "qtype", "vm", groups) == ("BATCH",)
    assert qc.typed_value_for(conf, "qtype", "other", groups) == ()
    assert qc.typed_value_for(conf, "pe_list", "vm", groups) == ("make", "smp", "mpi")
    assert qc.typed_value_for(conf, "suspend_thresholds", "vm", groups) == (("np_load_avg", "3.5"),)
    assert qc.typed_value_for(conf, "subordinate_list", "vm", groups) == (
        qc.QueueSubordinate("all.q", 2),
        qc.QueueSubordinate("hq_sub.q", None),
    )
    assert qc.typed_value_for(conf, "subordinate_list", "other", groups) == qc.SlotwiseSubordination(
        4, (qc.SlotwiseSubordinate("all.q", 1, "lr"), qc.SlotwiseSubordinate("hq_sub.q", 2, "sr"))
    )
    assert qc.decode("priority", "-5") == -5
    assert qc.decode("slots", "2") == 2
    assert qc.decode("prolog", "NONE") == "NONE"


# --- queue instances ----------------------------------------------------------


def conf_with(**values: HostValues) -> QueueConf:
    return attrs.evolve(qc.template("q"), **values)


GROUPS = {"@dual": {"n1", "n2"}, "@quad": {"n2", "n3"}, "@all": {"n1", "n2", "n3", "n4"}}


def test_host_entry_beats_host_group_entry_beats_default():
    conf = conf_with(slots=HostValues("1", (("@dual", "2"), ("n1", "8"))))
    assert qc.value_for(conf, "slots", "n1", GROUPS) == "8"
    assert qc.value_for(conf, "slots", "n2", GROUPS) == "2"
    assert qc.value_for(conf, "slots", "n4", GROUPS) == "1"


def test_host_names_compare_without_regard_to_case():
    conf = conf_with(slots=HostValues("1", (("@dual", "2"), ("N1", "8"))))
    assert qc.value_for(conf, "slots", "n1", GROUPS) == "8"
    assert qc.value_for(conf, "slots", "N2", GROUPS) == "2"


def test_host_in_two_groups_with_entries_is_ambiguous():
    conf = conf_with(pe_list=HostValues("NONE", (("@dual", "mpi-4"), ("@quad", "mpi-8"))))
    with pytest.raises(qc.AmbiguousSetting) as info:
        qc.value_for(conf, "pe_list", "n2", GROUPS)
    assert info.value.groups == ("@dual", "@quad")
    assert qc.value_for(conf, "pe_list", "n2", GROUPS, strict=False) == "NONE"  # state c: default
    assert qc.ambiguous_attributes(conf, "n2", GROUPS) == ("pe_list",)
    assert qc.ambiguous_attributes(conf, "n1", GROUPS) == ()
    assert qc.value_for(conf, "pe_list", "n3", GROUPS) == "mpi-8"


def test_host_entry_resolves_group_ambiguity():
    conf = conf_with(slots=HostValues("1", (("@dual", "2"), ("@quad", "4"), ("n2", "3"))))
    assert qc.ambiguous_attributes(conf, "n2", GROUPS) == ()
    assert qc.value_for(conf, "slots", "n2", GROUPS) == "3"


def test_value_for_qname_or_unknown_attribute_is_an_error():
    with pytest.raises(KeyError):
        qc.value_for(qc.template(), "qname", "n1", GROUPS)


def test_hosts_of_expands_host_groups_once_each():
    conf = attrs.evolve(qc.template(), hostlist=("n9", "@dual", "N1", "@quad"))
    assert sorted(qc.hosts_of(conf, GROUPS)) == ["n1", "n2", "n3", "n9"]
    assert qc.hosts_of(conf, GROUPS)[0] == "n9"
    with pytest.raises(KeyError):
        qc.hosts_of(attrs.evolve(conf, hostlist=("@nope",)), GROUPS)


# --- properties ----------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_name = st.builds(
    str.__add__, st.sampled_from(_LETTERS + "_"), st.text(_LETTERS + "0123456789_.-", max_size=10)
)
_host = st.builds(
    str.__add__, st.sampled_from(_LETTERS[:26]), st.text("abcdefghijklmnopqrstuvwxyz0123456789-.", max_size=10)
)
_host_id = st.one_of(_host, _name.map(lambda n: "@" + n))
_time = st.one_of(
    st.just("INFINITY"),
    st.integers(0, 10**6).map(str),
    st.tuples(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59)).map(
        lambda t: f"{t[0]:02d}:{t[1]:02d}:{t[2]:02d}"
    ),
)
_memory = st.one_of(
    st.just("INFINITY"),
    st.tuples(st.integers(0, 10**5), st.sampled_from(["", "k", "K", "m", "M", "g", "G"])).map(
        lambda t: f"{t[0]}{t[1]}"
    ),
)


def _names(min_size: int = 1):
    return st.lists(_name, min_size=min_size, max_size=6, unique=True).map(" ".join)


def _name_list():
    return st.one_of(st.just("NONE"), _names().filter(lambda s: s.split()[0].upper() != "NONE"))


def _celist():
    pair = st.tuples(_name, st.text(_LETTERS + "0123456789.:_-", min_size=1, max_size=8)).filter(
        lambda p: p[1].upper() != "NONE"
    )
    return st.one_of(
        st.just("NONE"),
        st.lists(pair, min_size=1, max_size=6)
        .filter(lambda ps: ps[0][0].upper() not in ("NONE", "UNDEFINED"))
        .map(lambda ps: ",".join(f"{n}={v}" for n, v in ps)),
    )


def _solist():
    queue = _name.filter(lambda n: n.upper() != "NONE" and not n.lower().startswith("slots"))
    queuewise = st.lists(st.tuples(queue, st.integers(0, 9)), min_size=1, max_size=4, unique_by=lambda t: t).map(
        lambda es: " ".join(
            n + (f"={t}" + ("" if i == len(es) - 1 else ",") if t else "") for i, (n, t) in enumerate(es)
        )
    )
    slotwise = st.tuples(
        st.integers(1, 64),
        st.lists(st.tuples(queue, st.integers(0, 9), st.sampled_from(["sr", "lr"])), min_size=1, max_size=4,
                 unique=True),
    ).map(lambda t: f"slots={t[0]}(" + ", ".join(f"{n}:{s}:{a}" for n, s, a in t[1]) + ")")
    return st.one_of(st.just("NONE"), queuewise, slotwise)


_path = st.text(_LETTERS + "0123456789_./$-", max_size=20).map(lambda p: "/" + p)

_VALUES = {
    qc.ULONG: st.integers(0, 2**32 - 1).map(str),
    qc.SLOTS: st.integers(0, 9999999).map(str),
    qc.BOOL: st.sampled_from(["TRUE", "FALSE"]),
    qc.TIME: _time,
    qc.INTERVAL: _time,
    qc.MEMORY: _memory,
    qc.PRIORITY: st.integers(-20, 20).map(str),
    qc.PROCESSORS: st.one_of(
        st.just("UNDEFINED"),
        st.lists(st.sampled_from(["0", "1", "7", "1-4", "2-", "-3", "12-16"]), min_size=1, max_size=5).map(",".join),
    ),
    qc.QTYPE: st.sampled_from(["NONE", "BATCH", "INTERACTIVE", "BATCH INTERACTIVE"]),
    qc.STRLIST: _name_list(),
    qc.USERLIST: _name_list(),
    qc.PROJECTLIST: _name_list(),
    qc.CELIST: _celist(),
    qc.SOLIST: _solist(),
    qc.STRING: st.one_of(
        st.just("NONE"),
        st.builds(str.__add__, st.sampled_from(["", "root@", "sgeadmin@"]), _path),
        st.sampled_from(["SIGTSTP", "SIGCONT", "9", "/tmp"]),
    ),
    qc.PATH: _path,
    qc.START_MODE: st.sampled_from(qc.SHELL_START_MODES),
    qc.INITIAL_STATE: st.sampled_from(qc.INITIAL_STATES),
    qc.CALENDAR: st.one_of(st.just("NONE"), _name),
}


def host_values(attr: str):
    value = _VALUES[qc.ATTRIBUTE_KINDS[attr]]
    overrides = st.lists(st.tuples(_host_id, value), max_size=2, unique_by=lambda p: p[0].lower())
    return st.builds(HostValues, value, overrides)


def _some_attributes():
    """Values for a few attributes (the others keep the template's): cheap to
    draw, and over the examples every attribute gets its turn."""
    return st.lists(st.sampled_from(qc.HOST_ATTRIBUTES), max_size=8, unique=True).flatmap(
        lambda names: st.fixed_dictionaries({a: host_values(a) for a in names})
    )


queue_confs = st.builds(
    lambda name, hostlist, changes: attrs.evolve(qc.template(name), hostlist=hostlist, **changes),
    _name,
    st.lists(_host_id, max_size=4, unique_by=str.lower)
    .filter(lambda hs: not hs or hs[0].upper() != "NONE")
    .map(tuple),
    _some_attributes(),
)


@given(queue_confs)
def test_parse_write_roundtrip(conf):
    assert qc.parse(qc.write(conf)) == conf


@given(st.text(max_size=300))
def test_random_text_raises_only_format_error(text):
    try:
        qc.parse(text)
    except FormatError:
        pass


@given(
    st.sampled_from(["qconf_-sq_all.q", "qconf_-sq_hq_test.q", "qconf_-sq_hq_wrap.q"]),
    st.integers(0, 3000),
    st.integers(0, 20),
    st.text(alphabet=" ,[]=@:()\\\n#-+.0123456789abcNONEslotsINFINITY", max_size=8),
)
def test_mutated_golden_text_raises_only_format_error(name, at, cut, insert):
    text = golden(name)
    at %= len(text)
    mutated = text[:at] + insert + text[at + cut :]
    try:
        qc.parse(mutated)
    except FormatError:
        pass


@given(
    st.sampled_from(qc.HOST_ATTRIBUTES),
    st.text(alphabet=" ,[]=@:()\t-+.0123456789xeEabcNONEslotsINFINITYBATCHsrl/", max_size=30),
)
def test_any_value_is_normalised_to_a_fixed_point_or_rejected(attr, text):
    try:
        values = qc.parse_host_values(attr, text)
    except FormatError:
        return
    assert qc.parse_host_values(attr, values.text()) == values
