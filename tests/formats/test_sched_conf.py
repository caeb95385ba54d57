"""sched_conf(5): the scheduler configuration (qconf -ssconf) and the load formula."""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import sched_conf
from minisge.formats.errors import FormatError
from minisge.formats.sched_conf import (
    ERROR_LOAD_VAL,
    SchedConf,
    SpecifierError,
    evaluate_load_formula,
    parse,
    parse_load_formula,
    write,
)

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def golden() -> str:
    return (GOLDEN / "qconf_-ssconf").read_text()


def with_line(name: str, value: str) -> str:
    """The golden text with one attribute's value replaced."""
    out = []
    for line in golden().splitlines(keepends=True):
        if line.split()[0] == name:
            line = f"{name} {value}\n"
        out.append(line)
    return "".join(out)


def line_of(name: str) -> int:
    return sched_conf.ATTRIBUTE_ORDER.index(name) + 1


def rejected(name: str, value: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        parse(with_line(name, value), "ssconf")
    return info.value


# --- golden ------------------------------------------------------------------------------


def test_golden_writes_back_byte_identical():
    assert write(parse(golden(), "qconf_-ssconf")) == golden()


def test_golden_is_grid_engines_compiled_in_default():
    assert parse(golden()) == sched_conf.default() == SchedConf()


def test_golden_values_read_as_numbers_and_text():
    c = parse(golden())
    assert c.schedule_interval == "0:0:15" and c.schedule_interval_seconds == 15.0
    assert c.load_adjustment_decay_seconds == 450.0
    assert c.job_load_adjustments == (("np_load_avg", "0.50"),)
    assert c.usage_weight_list == (("cpu", 1.0), ("mem", 0.0), ("io", 0.0))
    assert c.compensation_factor == 5.0 and c.weight_ticket == 0.5
    assert c.share_override_tickets is True
    assert c.max_pending_tasks_per_job == 50
    assert math.isinf(c.default_duration_seconds)
    assert c.queue_sort_method == "load"
    assert c.schedd_job_info_enabled is True
    assert c.duration_offset == 60.0


# --- layout ------------------------------------------------------------------------------


def test_values_start_at_column_34():
    assert write(SchedConf()).splitlines()[0] == "algorithm" + " " * 25 + "default"


def test_reals_are_written_with_six_decimals():
    c = parse(with_line("compensation_factor", "5"))
    assert "compensation_factor               5.000000\n" in write(c)


def test_booleans_are_written_in_capitals():
    c = parse(with_line("share_override_tickets", "no"))
    assert c.share_override_tickets is False
    assert "share_override_tickets            FALSE\n" in write(c)


@pytest.mark.parametrize("text,value", [("true", True), ("T", True), ("1", True), ("yes", True), ("y", True),
                                         ("false", False), ("F", False), ("0", False), ("NO", False), ("n", False)])
def test_booleans_accept_the_spellings_of_grid_engine(text, value):
    assert parse(with_line("report_pjob_tickets", text)).report_pjob_tickets is value


def test_usage_weight_list_is_written_with_six_decimals():
    c = parse(with_line("usage_weight_list", "cpu=1,mem=0,io=0"))
    assert "usage_weight_list                 cpu=1.000000,mem=0.000000,io=0.000000\n" in write(c)


def test_empty_job_load_adjustments_is_written_none():
    c = parse(with_line("job_load_adjustments", "none"))
    assert c.job_load_adjustments == ()
    assert "job_load_adjustments              NONE\n" in write(c)


def test_several_job_load_adjustments_are_comma_separated():
    c = parse(with_line("job_load_adjustments", "np_load_avg=0.50,mem_free=1G"))
    assert c.job_load_adjustments == (("np_load_avg", "0.50"), ("mem_free", "1G"))
    assert "np_load_avg=0.50,mem_free=1G\n" in write(c)


def test_queue_sort_method_seqno():
    assert parse(with_line("queue_sort_method", "SEQNO")).queue_sort_method == "seqno"


def test_times_are_kept_as_given():
    c = parse(with_line("schedule_interval", "00:00:04"))
    assert c.schedule_interval == "00:00:04" and "00:00:04\n" in write(c)


def test_params_give_duration_offset():
    c = parse(with_line("params", "DURATION_OFFSET=120,PROFILE=1"))
    assert c.scheduler_params == {"DURATION_OFFSET": "120", "PROFILE": "1"}
    assert c.duration_offset == 120.0


def test_schedd_job_info_job_list():
    c = parse(with_line("schedd_job_info", "job_list 1,5-9"))
    assert c.schedd_job_info == "job_list 1,5-9" and c.schedd_job_info_enabled


def test_templates_of_the_installation():
    normal = sched_conf.template("normal")
    assert normal.schedd_job_info == "false" and normal.weight_ticket == 0.01 and normal.weight_priority == 1.0
    high = sched_conf.template("high")
    assert high.job_load_adjustments == () and high.load_adjustment_decay_time == "0:0:0"
    big = sched_conf.template("max")
    assert big.schedule_interval == "0:2:0" and big.flush_submit_sec == 4 and big.report_pjob_tickets is False
    for t in (normal, high, big):
        assert parse(write(t)) == t


# --- validation -----------------------------------------------------------------------------

BAD_VALUES = [
    ("algorithm", "fancy"),
    ("schedule_interval", "soon"),
    ("schedule_interval", "INFINITY"),
    ("maxujobs", "-1"),
    ("maxujobs", "many"),
    ("queue_sort_method", "random"),
    ("job_load_adjustments", "np_load_avg"),
    ("job_load_adjustments", "np_load_avg=lots"),
    ("load_adjustment_decay_time", "x"),
    ("load_formula", "none"),
    ("load_formula", "2*num_proc"),
    ("load_formula", "a*2*3"),
    ("load_formula", "a++b"),
    ("load_formula", "a/2"),
    ("schedd_job_info", "maybe"),
    ("schedd_job_info", "job_list x"),
    ("flush_submit_sec", "1.5"),
    ("flush_finish_sec", "x"),
    ("params", "FOO=1"),
    ("params", "PE_RANGE_ALG=random"),
    ("params", "PROFILE=maybe"),
    ("reprioritize_interval", "x"),
    ("halftime", "-5"),
    ("usage_weight_list", "cpu=x"),
    ("usage_weight_list", "gpu=1"),
    ("usage_weight_list", "cpu=1,cpu=2"),
    ("compensation_factor", "fast"),
    ("weight_user", "nan"),
    ("weight_tickets_functional", "0.5"),
    ("share_override_tickets", "maybe"),
    ("share_functional_shares", "2"),
    ("max_functional_jobs_to_schedule", "x"),
    ("report_pjob_tickets", "sure"),
    ("max_pending_tasks_per_job", "0"),
    ("halflife_decay_list", "cpu=abc"),
    ("halflife_decay_list", "gpu=5"),
    ("policy_hierarchy", "OOF"),
    ("policy_hierarchy", "OFX"),
    ("weight_ticket", "inf"),
    ("max_reservation", "x"),
    ("default_duration", "x"),
]


@pytest.mark.parametrize("name,value", BAD_VALUES)
def test_bad_value_is_rejected_with_its_line(name, value):
    err = rejected(name, value)
    assert err.path == "ssconf" and err.line == line_of(name), err
    assert name in err.message or name.replace("_", " ") in err.message, err


def test_reservation_needs_a_default_duration():
    text = with_line("max_reservation", "10").replace("INFINITY", "0")
    with pytest.raises(FormatError) as info:
        parse(text, "ssconf")
    assert info.value.line == line_of("default_duration")


def test_reservation_with_a_finite_default_duration():
    text = with_line("max_reservation", "10").replace("INFINITY", "1:0:0")
    c = parse(text)
    assert c.max_reservation == 10 and c.default_duration_seconds == 3600.0


def test_missing_attribute_is_rejected():
    text = "".join(line for line in golden().splitlines(keepends=True) if not line.startswith("halftime"))
    with pytest.raises(FormatError) as info:
        parse(text, "ssconf")
    assert info.value.line == 0 and "halftime" in info.value.message


def test_unknown_attribute_is_rejected():
    with pytest.raises(FormatError) as info:
        parse(golden() + "weight_everything 1\n", "ssconf")
    assert info.value.line == 36 and "weight_everything" in info.value.message


def test_repeated_attribute_is_rejected():
    with pytest.raises(FormatError) as info:
        parse(golden() + "halftime 1\n", "ssconf")
    assert info.value.line == 36


def test_two_words_for_a_single_value_attribute_are_rejected():
    err = rejected("maxujobs", "1 2")
    assert err.line == line_of("maxujobs")


def test_policy_hierarchy_none_and_partial():
    assert parse(with_line("policy_hierarchy", "NONE")).policy_hierarchy == "NONE"
    assert parse(with_line("policy_hierarchy", "FS")).policy_hierarchy == "FS"


# --- load formula --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "formula,values,expected",
    [
        ("np_load_avg", {"np_load_avg": 0.5}, 0.5),
        ("-slots", {"slots": 3}, -3.0),
        ("load_avg*2+mem_free", {"load_avg": 1.5, "mem_free": 10}, 13.0),
        ("$num_proc*0.5", {"num_proc": 4}, 2.0),
        ("num_proc+1", {"num_proc": 4}, 5.0),
        ("$num_proc-2", {"num_proc": 4}, 2.0),
        ("1+$num_proc+0.1", {"num_proc": 4}, 5.1),
        ("np_load_avg-mem_free*0.001", {"np_load_avg": 1.0, "mem_free": 1000}, 0.0),
    ],
)
def test_load_formula_is_a_sum_of_weighted_load_values(formula, values, expected):
    assert evaluate_load_formula(formula, values) == pytest.approx(expected)


def test_load_value_without_a_value_makes_the_host_heavily_loaded():
    assert evaluate_load_formula("np_load_avg+slots", {"np_load_avg": 0.1}) == ERROR_LOAD_VAL


def test_load_formula_terms():
    assert parse_load_formula("-a*2+3") == (
        sched_conf.LoadTerm(-1, "a", 2.0),
        sched_conf.LoadTerm(1, 3.0, 1.0),
    )


@pytest.mark.parametrize("formula", ["none", "2*num_proc", "2,0+num_proc", "a b", "", "a*b", "a*1*2", "a-", "+"])
def test_malformed_load_formula_is_refused(formula):
    with pytest.raises(SpecifierError):
        evaluate_load_formula(formula, {"a": 1, "b": 1, "num_proc": 1})


def test_configuration_load_uses_its_formula():
    c = attrs.evolve(SchedConf(), load_formula="load_avg*2")
    assert c.load({"load_avg": 0.25}) == 0.5


# --- properties ---------------------------------------------------------------------------------

_micro = st.integers(0, 10**10).map(lambda k: k / 10**6)
_ulong = st.integers(0, 2**32 - 1)
_times = st.sampled_from(["0:0:15", "00:00:04", "0:2:0", "15", "0:7:30", "0:0:0"])


@st.composite
def sched_confs(draw):
    uwl = draw(st.permutations(["cpu", "mem", "io"]))
    n = draw(st.integers(0, 3))
    names = ["np_load_avg", "mem_free", "load_avg", "slots"]
    jla = tuple((names[i], draw(st.sampled_from(["0.50", "1", "1G", "0.1"]))) for i in range(n))
    formula = draw(st.sampled_from(["np_load_avg", "-slots", "load_avg*2+mem_free", "1+$num_proc+0.1",
                                    "np_load_avg*0.5-slots"]))
    duration = draw(st.sampled_from(["INFINITY", "1:0:0", "600"]))
    return SchedConf(
        algorithm="default",
        schedule_interval=draw(_times),
        maxujobs=draw(_ulong),
        queue_sort_method=draw(st.sampled_from(["load", "seqno"])),
        job_load_adjustments=jla,
        load_adjustment_decay_time=draw(_times),
        load_formula=formula,
        schedd_job_info=draw(st.sampled_from(["true", "false", "job_list 1,2,5-9"])),
        flush_submit_sec=draw(_ulong),
        flush_finish_sec=draw(_ulong),
        params=draw(st.sampled_from(["none", "PROFILE=1", "DURATION_OFFSET=120 MONITOR=true"])),
        reprioritize_interval=draw(_times),
        halftime=draw(_ulong),
        usage_weight_list=tuple((u, draw(_micro)) for u in uwl[: draw(st.integers(1, 3))]),
        compensation_factor=draw(_micro),
        weight_user=draw(_micro),
        weight_project=draw(_micro),
        weight_department=draw(_micro),
        weight_job=draw(_micro),
        weight_tickets_functional=draw(_ulong),
        weight_tickets_share=draw(_ulong),
        share_override_tickets=draw(st.booleans()),
        share_functional_shares=draw(st.booleans()),
        max_functional_jobs_to_schedule=draw(_ulong),
        report_pjob_tickets=draw(st.booleans()),
        max_pending_tasks_per_job=draw(st.integers(1, 2**32 - 1)),
        halflife_decay_list=draw(st.sampled_from(["none", "cpu=60:mem=-1:io=0"])),
        policy_hierarchy=draw(st.sampled_from(["OFS", "FS", "NONE", "SOF", "O"])),
        weight_ticket=draw(_micro),
        weight_waiting_time=draw(_micro),
        weight_deadline=draw(_micro),
        weight_urgency=draw(_micro),
        weight_priority=draw(_micro),
        max_reservation=draw(_ulong) if duration != "INFINITY" else 0,
        default_duration=duration,
    )


@given(sched_confs())
def test_write_then_parse_gives_the_same_configuration(c):
    assert parse(write(c)) == c


@given(st.text(max_size=300))
def test_random_text_raises_only_format_error(text):
    try:
        parse(text, "fuzz")
    except FormatError:
        pass


@given(st.data())
def test_mutated_golden_raises_only_format_error(data):
    text = golden()
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(alphabet="a1 :=,.*+-$\\\n#", max_size=8))
    cut = data.draw(st.integers(0, 5))
    try:
        parse(text[:pos] + junk + text[pos + cut :], "fuzz")
    except FormatError:
        pass


@given(st.text(alphabet="ab$*+-0123456789. ,/", max_size=20),
       st.dictionaries(st.sampled_from(["a", "b", "ab"]), st.floats(-1e6, 1e6)))
def test_load_formula_evaluation_raises_only_specifier_error(formula, values):
    try:
        result = evaluate_load_formula(formula, values)
    except SpecifierError:
        return
    assert isinstance(result, float)
