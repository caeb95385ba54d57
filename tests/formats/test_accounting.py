"""accounting(5): the colon-separated accounting record of Grid Engine 8.1.9."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minisge.formats import accounting
from minisge.formats.accounting import (
    FIELD_NAMES,
    AccountingRecord,
    failed_text,
    header,
    parse_line,
    read_file,
    write_line,
)
from minisge.formats.errors import FormatError

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def golden_lines() -> list[str]:
    text = (GOLDEN / "accounting_raw_lines").read_text()
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def golden_line(job_name: str) -> str:
    return next(line for line in golden_lines() if line.split(":")[4] == job_name)


# --- golden -----------------------------------------------------------------------------


def test_golden_lines_write_back_byte_identical():
    lines = golden_lines()
    assert len(lines) == 10
    for i, line in enumerate(lines, 1):
        assert write_line(parse_line(line, "accounting", i)) == line + "\n"


def test_golden_header_is_the_header_of_a_new_file():
    assert header("8.1.9") == (GOLDEN / "accounting_file_header").read_text()


def test_a_record_has_45_fields_named_as_qacct_names_them():
    # and minisge's resource_map, written only when a job was granted instances (sge_rsmap(5))
    assert len(FIELD_NAMES) == 45 == len(AccountingRecord._fields) - 1
    assert AccountingRecord._fields[-1] == "resource_map"
    assert FIELD_NAMES[:6] == ("qname", "hostname", "group", "owner", "job_name", "job_number")
    assert FIELD_NAMES[-3:] == ("maxvmem", "arid", "ar_submission_time")


def test_golden_h_rt_kill_reads_as_failed_37_exit_137():
    r = parse_line(golden_line("hrt"))
    assert (r.qname, r.hostname, r.owner, r.group) == ("all.q", "vm", "sgetest", "sgetest")
    assert r.job_number == 12 and r.task_number == 0
    assert r.failed == 37 and r.exit_status == 137
    assert r.failed_text == "qmaster enforced h_rt, h_cpu, or h_vmem limit"
    assert r.submission_time == 1795308850 and r.start_time == 1795308863 and r.end_time == 1795308869
    assert r.ru_wallclock == 6
    assert r.category == "-l h_rt=5"
    assert r.io == pytest.approx(0.000028) and r.maxvmem == 3366912.0
    assert r.project == "NONE" and r.department == "defaultdepartment" and r.granted_pe == "NONE"
    assert r.slots == 1 and r.pe_taskid == "NONE" and r.arid == 0
    assert r.queue_instance == "all.q@vm"


def test_golden_qdel_of_running_job_reads_as_failed_100():
    r = parse_line(golden_line("run1"))
    assert r.failed == 100 and r.exit_status == 137 and failed_text(r.failed) == "assumedly after job"


def test_golden_array_tasks_carry_their_task_number():
    tasks = [parse_line(line).task_number for line in golden_lines() if line.split(":")[4] == "arr"]
    assert tasks == [1, 2, 3, 4, 5]


def test_floats_are_written_with_six_decimals_and_integers_plain():
    r = AccountingRecord("all.q", "node1", "staff", "alice", "job", 5, ru_utime=0.5, maxvmem=1024)
    fields = write_line(r).rstrip("\n").split(":")
    assert fields[14] == "0.500000" and fields[42] == "1024.000000"
    assert fields[5] == "5" and fields[13] == "0"


def test_defaults_are_those_grid_engine_writes():
    r = AccountingRecord("all.q", "node1", "staff", "alice", "job", 5)
    assert write_line(r) == (
        "all.q:node1:staff:alice:job:5:sge:0:0:0:0:0:0:0:0.000000:0.000000:0.000000:"
        "0:0:0:0:0:0:0:0.000000:0:0:0:0:0:0:NONE:defaultdepartment:NONE:1:0:"
        "0.000000:0.000000:0.000000:NONE:0.000000:NONE:0.000000:0:0\n"
    )


def test_empty_strings_are_written_none():
    r = AccountingRecord("all.q", "n", "g", "o", "j", 1, project="", granted_pe="", category="", pe_taskid="")
    f = write_line(r).split(":")
    assert f[31] == "NONE" and f[33] == "NONE" and f[39] == "NONE" and f[41] == "NONE"


# --- reading a file ----------------------------------------------------------------------


def test_read_file_skips_header_comments_and_short_lines():
    body = "\n".join(golden_lines()[:3])
    text = header() + "\n" + body + "\n\nx\n"
    records = list(read_file(text, "accounting"))
    assert [r.job_number for r in records] == [11, 10, 2]


def test_read_file_reads_the_golden_file_with_its_comment_lines():
    text = (GOLDEN / "accounting_raw_lines").read_text()
    assert len(list(read_file(text, "accounting_raw_lines"))) == 10


def test_bad_line_in_a_file_names_its_line():
    text = header() + golden_lines()[0] + "\nnot:an:accounting:line\n"
    with pytest.raises(FormatError) as info:
        list(read_file(text, "accounting"))
    assert info.value.path == "accounting" and info.value.line == 6
    assert "45 fields" in info.value.message


def test_bad_lines_can_be_skipped_and_reported_like_qacct():
    text = "garbage\n" + golden_lines()[0] + "\n"
    errors: list[FormatError] = []
    records = list(read_file(text, "accounting", on_error=errors.append))
    assert len(records) == 1 and [e.line for e in errors] == [1]


def test_line_with_crlf_is_read():
    line = golden_lines()[0]
    assert parse_line(line + "\r\n") == parse_line(line)


# --- colons and old lines ------------------------------------------------------------------


def test_colon_inside_the_category_is_given_back_to_the_category():
    fields = golden_line("hrt").split(":")
    fields[39] = "-l arch=a:b:c -q all.q"
    line = ":".join(fields)
    r = parse_line(line)
    assert r.category == "-l arch=a:b:c -q all.q"
    assert r.iow == 0.0 and r.pe_taskid == "NONE" and r.maxvmem == 3366912.0
    assert write_line(r) == line + "\n"


def test_line_without_maxvmem_and_advance_reservation_reads_them_as_zero():
    line = ":".join(golden_line("hrt").split(":")[:42])
    r = parse_line(line)
    assert r.pe_taskid == "NONE" and r.maxvmem == 0.0 and r.arid == 0 and r.ar_submission_time == 0


# --- rejected lines ---------------------------------------------------------------------------


def _with_field(index: int, value: str) -> str:
    fields = golden_line("ok").split(":")
    fields[index] = value
    return ":".join(fields)


@pytest.mark.parametrize(
    "index,value",
    [(5, "x"), (5, "-1"), (5, " 1"), (5, "1_0"), (8, "1.5"), (11, ""), (12, "-137"),
     (13, "6s"), (14, "fast"), (16, "1 0"), (24, "1_0"), (34, "one"), (35, "1e3"),
     (36, "cpu"), (42, "big"), (43, "x"), (44, "-")],
)
def test_non_numeric_field_is_rejected_naming_it(index, value):
    with pytest.raises(FormatError) as info:
        parse_line(_with_field(index, value), "accounting", 7)
    err = info.value
    assert err.line == 7 and f"field {index + 1} ({FIELD_NAMES[index]})" in err.message


def test_too_few_fields_is_rejected():
    with pytest.raises(FormatError) as info:
        parse_line("all.q:vm:g:o:j:1", "accounting", 3)
    assert str(info.value) == "accounting:3: an accounting record has 45 fields separated by ':', this line has 6"


def test_failed_codes_have_qacct_texts():
    assert failed_text(0) == ""
    assert failed_text(8) == "in prolog"
    assert failed_text(25) == "rescheduling"
    assert failed_text(30) == "application error returned"
    assert failed_text(99) == "invalid execution state"


# --- properties ---------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(blacklist_characters=":\n\r", blacklist_categories=("Cs",)),
                min_size=1, max_size=12)
_word = _text.filter(lambda s: s.strip() == s and len(s) > 0)
_u32 = st.integers(0, 2**32 - 1)
_u64 = st.integers(0, 2**63 - 1)
_f = st.integers(0, 10**12).map(lambda k: k / 10**6)
_category = st.lists(
    st.sampled_from(["-l h_rt=5", "-U arusers", "-q all.q", "-l arch=a:b", "-pe smp 4", "-l x=1::2"]),
    min_size=1, max_size=3,
).map(" ".join)


@st.composite
def records(draw):
    values = {}
    for name in FIELD_NAMES:
        if name == "category":
            values[name] = draw(st.one_of(st.just("NONE"), _category))
        elif name == "qname":  # a queue name never starts a comment line
            values[name] = draw(_word.filter(lambda w: not w.startswith("#")))
        elif name in accounting.STRING_FIELDS:
            values[name] = draw(_word)
        elif name in accounting.FLOAT_FIELDS:
            values[name] = draw(_f)
        elif name in ("priority", "ru_wallclock") or name.startswith("ru_"):
            values[name] = draw(_u64)
        else:
            values[name] = draw(_u32)
    return AccountingRecord(**values)


@given(records())
def test_write_then_parse_gives_the_same_record(r):
    assert parse_line(write_line(r)) == r


@given(st.lists(records(), max_size=5))
def test_a_file_of_written_records_reads_back_in_order(rs):
    text = header() + "".join(write_line(r) for r in rs)
    assert list(read_file(text)) == rs


@given(st.text(max_size=400))
def test_random_text_raises_only_format_error(text):
    try:
        list(read_file(text, "fuzz"))
    except FormatError:
        pass


@given(st.data())
def test_mutated_golden_line_raises_only_format_error(data):
    line = golden_line("hrt")
    pos = data.draw(st.integers(0, len(line)))
    junk = data.draw(st.text(alphabet="1.:-x e_+", max_size=6))
    cut = data.draw(st.integers(0, 4))
    try:
        parse_line(line[:pos] + junk + line[pos + cut :], "fuzz", 1)
    except FormatError:
        pass


def test_queue_instance_splits_into_cluster_queue_and_host():
    assert accounting.split_queue_instance("all.q@node1") == ("all.q", "node1")
    assert accounting.split_queue_instance("all.q") == ("all.q", "")
