"""The execd's load values (minisge.execd.load): 8.1.9's names and order,
the topology and the cpu percentage."""

from __future__ import annotations

from pathlib import Path

from minisge.execd.load import Topology, cpu_percent, cpu_ticks, load_values
from minisge.formats import host_conf

GOLDEN = Path(__file__).parent / "golden"

MEMINFO = "MemTotal:       24684084 kB\nMemFree:        20000000 kB\nMemAvailable:   24379344 kB\n" \
          "SwapTotal:             0 kB\nSwapFree:              0 kB\n"


def test_the_values_come_in_the_order_8_1_9s_execd_reports_them():
    peer = host_conf.parse((GOLDEN / "qconf_-se_HOST").read_text())
    ours = load_values("0.21 0.17 0.15 1/100 1234", MEMINFO, 2, "lx-amd64", Topology([(0, 0), (0, 1)]), 0.0)
    assert list(ours) == [name for name, _ in peer.load_values]


def test_memory_is_reported_in_mebibytes_and_the_topology_of_two_single_thread_cores():
    values = load_values("0.21 0.17 0.15 1/100 1234", MEMINFO, 2, "lx-amd64", Topology([(0, 0), (0, 1)]), 12.5)
    assert values["mem_total"] == "24105.550781M"
    assert values["swap_total"] == "0.000000M"
    assert (values["m_topology"], values["m_socket"], values["m_core"], values["m_thread"]) == ("SCC", "1", "2", "2")
    assert values["m_topology_inuse"] == "SCC"
    assert values["cpu"] == "12.500000"
    assert values["load_avg"] == values["load_medium"] == "0.170000"
    assert values["np_load_avg"] == "0.085000"


def test_hyperthreaded_cores_show_their_threads():
    topo = Topology([(0, 0), (0, 1), (0, 0), (0, 1), (1, 0), (1, 0)])
    assert topo.string == "SCTTCTTSCTT"
    assert (topo.socket_count, topo.core_count, topo.thread_count) == (2, 3, 6)


def test_cpu_is_the_user_nice_and_system_share_of_the_ticks_between_two_readings():
    first = cpu_ticks("cpu  100 0 100 800 5 0 0\ncpu0 50 0 50 400\n")
    assert first == (100, 0, 100, 800)
    assert cpu_percent(first, ()) == 20.0  # since boot
    assert cpu_percent((130, 10, 120, 840), first) == 60.0  # 30+10+20 of 100 ticks
    assert cpu_percent(first, first) == 0.0  # no tick passed
    assert cpu_percent((), ()) == 0.0


def test_each_state_is_rounded_to_a_tenth_of_a_percent():
    # 1 of 3 ticks each: 33.3 + 33.3 (+ 0 system) as 8.1.9's percentages() rounds
    assert round(cpu_percent((1, 1, 0, 1), (0, 0, 0, 0)), 6) == 66.6
