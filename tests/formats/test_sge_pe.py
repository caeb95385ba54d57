"""sge_pe(5): parallel environments."""

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import sge_pe
from minisge.formats.errors import FormatError
from minisge.formats.sge_pe import ParallelEnvironment, ProcArgs, parse, template, write

GOLDEN = Path(__file__).parent.parent / "golden"
BASE = template("hp_pe")


def pe_text(**values):
    """A PE file: the qconf -ap template with some attributes replaced."""
    lines = write(BASE).splitlines()
    out = []
    for line in lines:
        name = line.split()[0]
        out.append(f"{name} {values[name]}" if name in values else line)
    return "\n".join(out) + "\n"


def line_of(attr):
    return sge_pe.ATTRIBUTES.index(attr) + 1


# --- what qconf -sp prints ------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["qconf_-sp_smp", "qconf_-sp_mpi", "qconf_-sp_make", "qconf_-sp_smp.after_Ap", "qconf_-sp_hp_mpich"]
)
def test_qconf_sp_output_parses_and_writes_back_byte_identical(name):
    text = (GOLDEN / name).read_text()
    assert write(parse(text, name)) == text


def test_golden_pes_have_their_allocation_rules():
    rules = {n: parse((GOLDEN / f"qconf_-sp_{n}").read_text()).allocation_rule for n in ("smp", "mpi", "make")}
    assert rules == {"smp": "$pe_slots", "mpi": "$fill_up", "make": "$round_robin"}


def test_smp_input_file_reads_as_qconf_shows_it_afterwards():
    # inputs/smp.pe was added with qconf -Ap; qconf_-sp_smp.after_Ap is what -sp showed
    assert parse((GOLDEN / "inputs" / "smp.pe").read_text()) == parse(
        (GOLDEN / "qconf_-sp_smp.after_Ap").read_text()
    )


def test_names_are_padded_to_column_19():
    assert all(line[19] != " " for line in write(BASE).splitlines())
    assert write(BASE).splitlines()[10] == "accounting_summary FALSE"


def test_template_is_what_qconf_ap_offers():
    assert write(template("hp_tpl")) == (GOLDEN / "qconf_-ap_hp_tpl.template").read_text()


# --- start_proc_args / stop_proc_args ----------------------------------------------


def test_user_prefix_is_parsed_into_user_and_command_line():
    pe = parse((GOLDEN / "qconf_-sp_hp_mpich").read_text())
    assert pe.start_proc_args.user == "sgeadmin"
    assert pe.start_proc_args.argv[:3] == ("/usr/local/mpi/startmpi.sh", "-catch_rsh", "$pe_hostfile")
    assert pe.stop_proc_args == ProcArgs("/usr/local/mpi/stopmpi.sh", "root")


def test_long_start_proc_args_wrap_like_qconf_sp():
    given_ = parse((GOLDEN / "inputs" / "hp_mpich.pe").read_text())
    assert write(given_) == (GOLDEN / "qconf_-sp_hp_mpich").read_text()


def test_without_prefix_there_is_no_user():
    pe = parse(pe_text(start_proc_args="/bin/true $pe_hostfile"))
    assert pe.start_proc_args == ProcArgs("/bin/true $pe_hostfile", None)


def test_at_sign_after_the_first_blank_is_no_user_prefix():
    pe = parse(pe_text(start_proc_args="/bin/mail root@host"))
    assert pe.start_proc_args.user is None


def test_blanks_between_words_are_kept_as_one_as_grid_engine_does():
    pe = parse(pe_text(start_proc_args="/bin/echo   a    b"))
    assert "start_proc_args    /bin/echo a b\n" in write(pe)


def test_none_in_any_case_means_no_procedure():
    assert parse(pe_text(start_proc_args="none", stop_proc_args="None")).start_proc_args is None


@pytest.mark.parametrize(
    "value, why",
    [("/bin/true $bogus", 'unknown variable "bogus"'),
     ("/bin/true $", "at least one character"),
     ("@/bin/stop", "empty user name"),
     ("root@", "no command"),
     ("a:b@/bin/x", 'invalid user name "a:b"')],
)  # fmt: skip
def test_bad_procedures_are_rejected(value, why):
    with pytest.raises(FormatError, match=why) as err:
        parse(pe_text(stop_proc_args=value), "t.pe")
    assert err.value.line == line_of("stop_proc_args")


@pytest.mark.parametrize("var", sge_pe.PROC_VARIABLES)
def test_every_documented_variable_is_accepted(var):
    assert parse(pe_text(start_proc_args=f"/bin/x ${var}.suffix")).start_proc_args is not None


# --- slots ----------------------------------------------------------------------------


def test_slots_range_from_0_to_9999999():
    assert parse(pe_text(slots="9999999")).slots == 9999999
    with pytest.raises(FormatError, match="must be a value between 0 and 9999999") as err:
        parse(pe_text(slots="10000000"))
    assert err.value.line == 2


def test_slots_are_read_like_strtod():
    assert parse(pe_text(slots="0x10")).slots == 16
    assert parse(pe_text(slots="010")).slots == 10


@pytest.mark.parametrize(
    "bad, why",
    [("-1", "must be a positive number"), ("abc", "error parsing"), ("1.5", "not an u_long32"),
     ("5 extra", "unrecognized characters")],
)  # fmt: skip
def test_bad_slots_are_rejected(bad, why):
    with pytest.raises(FormatError, match=why):
        parse(pe_text(slots=bad))


# --- allocation_rule ---------------------------------------------------------------


@pytest.mark.parametrize("rule", ["$pe_slots", "$fill_up", "$round_robin", "1", "4"])
def test_allocation_rule_is_an_integer_or_a_special_name(rule):
    assert parse(pe_text(allocation_rule=rule)).allocation_rule == rule


def test_integer_allocation_rule_fixes_processes_per_host():
    assert parse(pe_text(allocation_rule="4")).fixed_allocation == 4
    assert parse(pe_text(allocation_rule="$fill_up")).fixed_allocation is None


def test_special_names_are_case_sensitive():
    with pytest.raises(FormatError, match='unknown variable "PE_SLOTS"'):
        parse(pe_text(allocation_rule="$PE_SLOTS"))


@pytest.mark.parametrize("bad", ["0", "-1", "foo", "4x"])
def test_other_allocation_rules_are_rejected(bad):
    # the real qconf 8.1.9 stores these and its scheduler then fails on them
    with pytest.raises(FormatError, match="allocation_rule") as err:
        parse(pe_text(allocation_rule=bad))
    assert err.value.line == line_of("allocation_rule")


# --- booleans ------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["TRUE", "true", "T", "y", "yes", "1"])
def test_true_words(word):
    pe = parse(pe_text(control_slaves=word))
    assert pe.control_slaves is True
    assert "control_slaves     TRUE\n" in write(pe)


@pytest.mark.parametrize("word", ["FALSE", "False", "f", "n", "no", "0"])
def test_false_words(word):
    assert parse(pe_text(job_is_first_task=word)).job_is_first_task is False


def test_other_boolean_words_are_rejected():
    with pytest.raises(FormatError, match='error parsing value "maybe"') as err:
        parse(pe_text(accounting_summary="maybe"))
    assert err.value.line == line_of("accounting_summary")


# --- urgency_slots -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["min", "max", "avg", "MAX", "Avg", "0", "5"])
def test_urgency_slots_is_an_integer_or_min_max_avg_kept_as_given(value):
    pe = parse(pe_text(urgency_slots=value))
    assert pe.urgency_slots == value
    assert f"urgency_slots      {value}\n" in write(pe)


@pytest.mark.parametrize("bad", ["-3", "foo", "5x"])
def test_invalid_urgency_slots_are_rejected(bad):
    with pytest.raises(FormatError, match=f'rejecting invalid urgency_slots setting "{bad}"'):
        parse(pe_text(urgency_slots=bad))


# --- user lists, qsort_args, name ------------------------------------------------------


def test_user_lists_are_written_space_separated():
    pe = parse(pe_text(user_lists="arusers,deadlineusers", xuser_lists="none"))
    assert pe.user_lists == ("arusers", "deadlineusers")
    assert "user_lists         arusers deadlineusers\n" in write(pe)
    assert pe.xuser_lists == ()


def test_a_userset_in_both_user_lists_and_xuser_lists_is_denied():
    # what the real qmaster answers to qconf -Ap
    why = 'multiple occurrences of userset "arusers" in parallel environment "hp_pe"'
    with pytest.raises(FormatError, match=why) as err:
        parse(pe_text(user_lists="deadlineusers arusers", xuser_lists="arusers"))
    assert err.value.line == line_of("xuser_lists")


def test_none_with_other_user_lists_is_rejected():
    with pytest.raises(FormatError, match="NONE cannot be combined"):
        parse(pe_text(user_lists="NONE arusers"))


def test_qsort_args_is_a_library_a_function_and_arguments():
    pe = parse(pe_text(qsort_args="libfoo.so  qsort $arch"))
    assert pe.qsort_args == "libfoo.so qsort $arch"
    with pytest.raises(FormatError, match="qsort_args"):
        parse(pe_text(qsort_args="libfoo.so"))


@pytest.mark.parametrize(
    "bad, why",
    [("hp:pe", "Colon"), (".hp", "Dot"), ("hp/pe", "Slash"), ("hp@x", "At"), ("NONE", "Keyword"),
     ("template", "Keyword"), ("hp,x", "Comma"), ("hp'x", "Quote")],
)  # fmt: skip
def test_pe_name_must_be_an_object_name(bad, why):
    with pytest.raises(FormatError, match=why) as err:
        parse(pe_text(pe_name=bad))
    assert err.value.line == 1


@pytest.mark.parametrize("missing", sge_pe.ATTRIBUTES)
def test_every_attribute_is_required(missing):
    text = "".join(ln + "\n" for ln in pe_text().splitlines() if not ln.startswith(missing + " "))
    with pytest.raises(FormatError, match=f'missing attribute "{missing}"') as err:
        parse(text)
    assert err.value.line == 0


def test_unknown_and_repeated_attributes_are_rejected():
    with pytest.raises(FormatError, match='unknown attribute name "bogus"'):
        parse(pe_text() + "bogus 1\n")
    with pytest.raises(FormatError, match='"slots" given more than once'):
        parse(pe_text() + "slots 3\n")


# --- properties ------------------------------------------------------------------------

NAMES = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_.-", max_size=11),
).filter(lambda s: s.upper() not in ("NONE", "ALL", "TEMPLATE"))
# a command-line word; commas inside words test the line breaking at commas
WORD = st.lists(
    st.text(string.ascii_letters + string.digits + "_./=-", min_size=1, max_size=8), min_size=1, max_size=3
).map(",".join)
VARIABLE = st.sampled_from(sge_pe.PROC_VARIABLES).map(lambda v: "$" + v)
COMMAND = st.lists(st.one_of(WORD, VARIABLE), min_size=1, max_size=12).map(lambda ws: "/bin/" + " ".join(ws))
PROC = st.one_of(st.none(), st.builds(ProcArgs, command=COMMAND, user=st.one_of(st.none(), NAMES)))
PES = st.builds(
    ParallelEnvironment,
    name=NAMES,
    slots=st.integers(0, 9999999),
    user_lists=st.lists(NAMES, max_size=6).map(tuple),
    xuser_lists=st.lists(NAMES, max_size=6).map(tuple),
    start_proc_args=PROC,
    stop_proc_args=PROC,
    allocation_rule=st.one_of(st.sampled_from(sge_pe.ALLOCATION_RULES), st.integers(1, 64).map(str)),
    control_slaves=st.booleans(),
    job_is_first_task=st.booleans(),
    urgency_slots=st.one_of(st.sampled_from(["min", "max", "avg", "MIN"]), st.integers(0, 999).map(str)),
    accounting_summary=st.booleans(),
    qsort_args=st.one_of(st.none(), st.lists(WORD, min_size=2, max_size=5).map(" ".join)),
).filter(lambda pe: not set(pe.user_lists) & set(pe.xuser_lists))


@given(PES)
def test_write_then_parse_gives_the_same_pe(pe):
    assert parse(write(pe)) == pe


@given(st.data())
def test_mangled_text_raises_only_format_error(data):
    text = (GOLDEN / "qconf_-sp_hp_mpich").read_text()
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(st.sampled_from("$@,:\\ \n\t#x0-1TRUEnone"), max_size=6))
    cut = data.draw(st.integers(0, 5))
    try:
        parse(text[:pos] + junk + text[pos + cut :])
    except FormatError:
        pass


@given(st.text(max_size=300))
def test_random_text_raises_only_format_error(text):
    try:
        parse(text)
    except FormatError:
        pass
