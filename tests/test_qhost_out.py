"""qhost's printing (minisge.output.qhost_out) and load value scaling
(minisge.output.resource_value) against what 8.1.9 printed (tests/golden/qhost)."""

from __future__ import annotations

import calendar
import time
from pathlib import Path

import pytest

from minisge.cli import qhost as qhost_cli
from minisge.output import qhost_out
from minisge.output.qhost_out import Options
from minisge.output.resource_value import format_memory, resource_text, scaled_column

GOLDEN = Path(__file__).parent / "golden" / "qhost"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text().partition("# ----\n")[2]


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """The peer printed its dates in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def epoch(text: str) -> int:
    """A date the peer printed as the epoch it came from (-xml prints the epoch)."""
    return calendar.timegm(time.strptime(text, "%m/%d/%Y %H:%M:%S"))


GLOBAL = {"name": "global", "values": dict.fromkeys(("arch", "num_proc", "load_avg"))}


def vm(load_avg="2.300293", mem_used="768.121094M", **extra):
    values = {"arch": "lx-amd64", "num_proc": "2", "m_socket": "1", "m_core": "2", "m_thread": "2",
              "load_avg": load_avg, "mem_total": "24105.550781M", "mem_used": mem_used,
              "swap_total": "0.000000M", "swap_used": "0.000000M"}
    return {"name": "vm", "values": values, **extra}


def resources_of(name: str) -> list[list[str]]:
    """The -F lines of a golden file as (dominance, name, value)."""
    out = []
    for line in golden(name).splitlines():
        if ":" in line and "=" in line and not line.startswith("<"):
            dom, _, rest = line.split("Host Resource(s):")[-1].strip().partition(":")
            n, _, v = rest.partition("=")
            out.append([dom, n, v])
    return out


# ---------------------------------------------------------------- scaling

def test_memory_columns_are_scaled_to_one_decimal_with_the_unit():
    assert scaled_column("24105.550781M", 1) == "23.5G"
    assert scaled_column("768.121094M", 1) == "768.1M"
    assert scaled_column("0.000000M", 1) == "0.0"
    assert scaled_column("2048G", 1) == "2.0T"


def test_the_load_column_has_two_decimals_and_missing_values_a_dash():
    assert scaled_column("2.300293", 2) == "2.30"
    assert scaled_column(None, 2) == "-"
    assert scaled_column("junk", 1) == "?E"


def test_resource_values_are_printed_by_their_complex_type():
    assert resource_text("MEMORY", "24105.550781M") == "23.541G"
    assert resource_text("MEMORY", "0.000000M") == "0.000"
    assert resource_text("MEMORY", "768.121094M") == "768.121M"
    assert resource_text("INT", "2") == "2"  # qstat -F
    assert resource_text("INT", "2", int_as_double=True) == "2.000000"  # qhost -F
    assert resource_text("DOUBLE", "0.173340") == "0.173340"
    assert resource_text("STRING", "lx-amd64") == "lx-amd64"
    assert resource_text("RESTRING", "SCC") == "SCC"
    assert resource_text("TIME", "3661") == "01:01:01"
    assert resource_text("MEMORY", "INFINITY") == "infinity"
    assert format_memory(3 * 1024.0**4) == "3.000T"


# ---------------------------------------------------------------- the listing

def test_the_listing_prints_the_global_host_first_and_dashes_for_unknown_values():
    assert qhost_out.format_text([GLOBAL, vm()]) == golden("qhost.idle")


def test_ncb_leaves_out_the_topology_columns():
    assert qhost_out.format_text([GLOBAL, vm()], Options(binding=False)) == golden("qhost_-ncb")


def test_no_host_prints_nothing_not_even_the_header():
    assert qhost_out.format_text([]) == golden("qhost_-l_arch=sol-sparc") == ""


def test_l_leaves_out_the_global_host_when_it_does_not_match():
    assert qhost_out.format_text([vm()]) == golden("qhost_-l_arch=lx-amd64")


def test_q_lists_the_queue_instances_under_their_host():
    queue = {"name": "all.q", "qinstance": "all.q@vm", "qtype": "BIP", "resv": 0, "used": 0, "total": 2,
             "states": "", "jobs": []}
    hosts = [dict(GLOBAL, queues=[]), vm(queues=[queue])]
    assert qhost_out.format_text(hosts, Options(queues=True)) == golden("qhost_-q.idle")
    ncb = golden("qhost_-ncb_-q")
    assert qhost_out.format_text(hosts, Options(queues=True, binding=False)) == ncb


def test_F_prints_every_resource_of_the_host():
    hosts = [dict(GLOBAL, resources=[]), vm(resources=resources_of("qhost_-F.idle"))]
    assert qhost_out.format_text(hosts, Options(resources=[])) == golden("qhost_-F.idle")


def test_F_with_names_announces_the_first_resource():
    hosts = [dict(GLOBAL, resources=[]), vm(resources=resources_of("qhost_-F_mem_total,cpu"))]
    text = qhost_out.format_text(hosts, Options(resources=["mem_total", "cpu"]))
    assert text == golden("qhost_-F_mem_total,cpu") == golden("qhost_-F_mem_total_-F_cpu")


def test_xml_lists_the_host_values():
    assert qhost_out.format_xml([GLOBAL, vm()]) == golden("qhost_-xml.idle")


def test_xml_with_F_adds_the_resource_values():
    hosts = [dict(GLOBAL, resources=[]), vm(resources=resources_of("qhost_-F.idle"))]
    assert qhost_out.format_xml(hosts, Options(resources=[])) == golden("qhost_-F_-xml")


def test_xml_with_q_adds_the_queue_elements():
    queue = {"name": "all.q", "qinstance": "all.q@vm", "qtype": "BIP", "resv": 0, "used": 0, "total": 2,
             "states": "", "jobs": []}
    hosts = [dict(GLOBAL, queues=[]), vm(queues=[queue])]
    assert qhost_out.format_xml(hosts, Options(queues=True)) == golden("qhost_-q_-xml.idle")


# ---------------------------------------------------------------- -j

def pe_host():
    job = {"job_number": 100, "task_number": None, "prio": 0.75, "name": "qhpe", "owner": "sgetest",
           "state": "r", "start_time": epoch("11/23/2026 06:56:22"), "submission_time": 0, "slots": 2,
           "master": True, "slot_adjust": False}
    queue = {"name": "all.q", "qinstance": "all.q@vm", "qtype": "BIP", "resv": 0, "used": 2, "total": 2,
             "states": "", "jobs": [job]}
    return [dict(GLOBAL, queues=[]), vm(queues=[queue])]


def serial_and_array_host():
    common = {"prio": 0.620968, "owner": "sgetest", "state": "r", "submission_time": 0, "slots": 1,
              "master": True, "slot_adjust": False}
    jobs = [dict(common, job_number=101, task_number=None, name="qhser", start_time=epoch("11/23/2026 06:58:37")),
            dict(common, job_number=102, task_number=1, name="qharr", start_time=epoch("11/23/2026 06:58:52"))]
    queue = {"name": "all.q", "qinstance": "all.q@vm", "qtype": "BIP", "resv": 0, "used": 2, "total": 2,
             "states": "", "jobs": jobs}
    return [dict(GLOBAL, queues=[]), vm(load_avg="2.504395", mem_used="1126.4M", queues=[queue])]


def test_j_prints_a_master_and_a_slave_line_for_a_two_slot_pe_job():
    assert qhost_out.format_text(pe_host(), Options(jobs=True)) == golden("qhost_-j.pe")
    assert qhost_out.format_text(pe_host(), Options(jobs=True)) == golden("qhost_-u_sgetest.pe")


def test_j_with_q_prints_the_jobs_under_their_queue_without_the_queue_column():
    assert qhost_out.format_text(pe_host(), Options(jobs=True, queues=True)) == golden("qhost_-q_-j.pe")


def test_j_xml_has_a_job_element_per_line():
    assert qhost_out.format_xml(pe_host(), Options(jobs=True)) == golden("qhost_-j_-xml.pe")
    assert qhost_out.format_xml(pe_host(), Options(jobs=True, queues=True)) == golden("qhost_-q_-j_-xml.pe")


def test_j_serial_jobs_are_masters_and_array_tasks_show_their_task_id():
    hosts = serial_and_array_host()
    assert qhost_out.format_text(hosts, Options(jobs=True)) == golden("qhost_-j.serial_and_array")
    assert qhost_out.format_text(hosts, Options(jobs=True, queues=True)) == golden("qhost_-q_-j.serial_and_array")
    assert qhost_out.format_xml(hosts, Options(jobs=True)) == golden("qhost_-j_-xml.serial_and_array")


def test_F_q_j_together():
    hosts = serial_and_array_host()
    hosts[1]["resources"] = [["hl", "load_avg", "2.504395"]]
    hosts[0]["resources"] = []
    text = qhost_out.format_text(hosts, Options(jobs=True, queues=True, resources=["load_avg"]))
    assert text == golden("qhost_-F_-q_-j.serial_and_array")


def test_a_pe_without_job_is_first_task_gets_a_line_more_in_the_master_queue():
    job = {"job_number": 7, "task_number": None, "slots": 2, "master": True, "slot_adjust": True}
    assert [m for _, m, _ in qhost_out.job_lines([job])] == ["MASTER", "SLAVE", "SLAVE"]
    slave = dict(job, master=False, slot_adjust=False)
    assert [(m, first) for _, m, first in qhost_out.job_lines([slave])] == [("SLAVE", True), ("SLAVE", False)]


# ---------------------------------------------------------------- the command line

def test_help_prints_8_1_9s_usage(capsys):
    assert qhost_cli.main(["-help"]) == 0
    out = capsys.readouterr().out  # 8.1.9's, and the -fmt line after -F's (Open Cluster Scheduler 9's)
    assert out.replace(qhost_cli.FMT_USAGE, "") == golden("qhost_-help")
    fmt_line, f_line = out.splitlines()[2:4]
    assert (fmt_line + "\n", f_line) == (qhost_cli.FMT_USAGE, "  [-F [resource_attribute]]  show (selected) resources")


@pytest.mark.parametrize("case,argv", [("qhost_-x", ["-x"]), ("qhost_-h", ["-h"])])
def test_bad_command_lines_say_so_as_8_1_9(capsys, case, argv):
    assert qhost_cli.main(argv) == 1
    err = capsys.readouterr().err.replace(qhost_cli.FMT_USAGE, "")  # the usage without minisge's -fmt line
    assert err == (GOLDEN / f"{case}.stderr").read_text().partition("# ----\n")[2]


def test_u_shows_jobs_and_F_takes_the_words_up_to_the_next_option():
    args = qhost_cli.parse_args(["-F", "mem_total,cpu", "swap_used", "-u", "a,b", "-h", "vm"])
    req = qhost_cli.request(args)
    assert req["resources"] == ["mem_total", "cpu", "swap_used"]
    assert req["users"] == ["a", "b"] and req["jobs"] is True
    assert req["hosts"] == ["vm"]
    assert qhost_cli.request(qhost_cli.parse_args(["-F"]))["resources"] == []


def test_a_word_after_a_flag_is_an_invalid_option_argument():
    with pytest.raises(qhost_cli.CommandLineError) as e:
        qhost_cli.parse_args(["-q", "junk"])
    assert e.value.text == 'error: invalid option argument "junk"' and e.value.usage


def test_xml_escapes_as_grid_engine_and_the_listing_escapes_control_characters():
    assert qhost_out.xml_escape("a<b>&'\"") == "a%lt;b&gt;&amp;&apos;&quot;"
    job = {"job_number": 1, "task_number": None, "prio": 0.5, "name": "a\nb", "owner": "u", "state": "r",
           "start_time": 0, "slots": 1, "master": True}
    queue = {"name": "all.q", "qinstance": "all.q@vm", "jobs": [job]}
    text = qhost_out.format_text([vm(queues=[queue])], Options(jobs=True))
    assert "\\nb" in text and text.count("\n") == 6  # header, rule, host, job header (2), job
