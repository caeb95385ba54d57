"""qsub -binding: which cores a job takes (minisge.rules.core_binding)."""

from __future__ import annotations

from minisge.rules import core_binding as cb

# two sockets of three single-processor cores; processors numbered across
TOPO = [(0, 0, (0,)), (0, 1, (1,)), (0, 2, (2,)), (1, 0, (3,)), (1, 1, (4,)), (1, 2, (5,))]


def pick(spec, busy=()):
    b = cb.parse(spec)
    assert b is not None, spec
    cores = cb.select_cores(b, TOPO, set(busy))
    return None if cores is None else cb.processors(cores)


def test_parse_reads_mode_and_strategy():
    assert cb.parse("linear:1") == cb.Binding("set", "linear", 1, 1, None, ())
    assert cb.parse("env linear:2:1,0") == cb.Binding("env", "linear", 2, 1, (1, 0), ())
    assert cb.parse("pe striding:2:3") == cb.Binding("pe", "striding", 2, 3, None, ())
    assert cb.parse("explicit:0,1:1,2") == cb.Binding("set", "explicit", 2, 1, None, ((0, 1), (1, 2)))
    for bad in (None, "", "linear", "linear:x", "striding:2", "foo:1", "explicit:"):
        assert cb.parse(bad) is None, bad


def test_linear_takes_the_first_free_consecutive_cores():
    # the peer: qsub -binding linear:1 on an idle host runs on processor 0, SGE_BINDING=0
    assert pick("linear:1") == [0]
    assert pick("linear:1", busy=[0]) == [1]
    assert pick("linear:2", busy=[1]) == [2, 3]
    assert pick("linear:2:1,1") == [4, 5]
    assert pick("linear:7") is None  # more than the host has: unbound
    assert pick("linear:2:1,2") is None


def test_striding_and_explicit():
    assert pick("striding:2:3") == [0, 3]
    assert pick("striding:2:3", busy=[3]) is None
    assert pick("striding:2:2:0,1") == [1, 3]
    assert pick("explicit:1,2:0,0") == [5, 0]
    assert pick("explicit:0,0", busy=[0]) is None
    assert pick("explicit:2,0") is None  # no such socket


def test_what_the_job_sees():
    cores = [TOPO[0], TOPO[4]]
    assert cb.sge_binding(cores) == "0 4"
    assert cb.pe_hostfile_field(cores) == "0,0:1,1"


def test_topology_string_shows_the_taken_cores_in_lower_case():
    two = [(0, 0, (0,)), (0, 1, (1,))]
    assert cb.topology_string(two, [0]) == "ScC"  # 8.1.9's qstat -j of a -binding linear:1 job
    assert cb.topology_string(two, []) == "SCC"
    assert cb.topology_string(TOPO, [4]) == "SCCCSCcC"
    assert cb.topology_string([(0, 0, (0, 2)), (0, 1, (1, 3))], [1]) == "SCTTctt"


def test_pe_mode_writes_the_cores_into_the_hosts_line_of_the_pe_hostfile():
    hostfile = "node1 2 all.q@node1 UNDEFINED\nnode2 1 all.q@node2 UNDEFINED\n"
    assert cb.pe_hostfile_with_cores(hostfile, "node2", [TOPO[1], TOPO[2]]) == (
        "node1 2 all.q@node1 UNDEFINED\nnode2 1 all.q@node2 0,1:0,2\n")


def test_bn_fields_as_the_peer_keeps_the_request():
    """qstat -j -xml's JB_binding of the peer's jobs 486-492 (8.1.9;
    486 and 490 in tests/golden/qstat_-j_JOBID_-xml.binding*)."""
    def bn(spec):
        b = cb.parse(spec)
        assert b is not None
        return [v for _t, v in cb.bn_fields(b)]
    assert bn("linear:1") == ["linear_automatic", 3, 1, 0, 0, 0]
    assert bn("linear:2:0,1") == ["linear", 3, 2, 0, 1, 0]
    assert bn("striding:2:2") == ["striding_automatic", 3, 2, 0, 0, 2]
    assert bn("striding:2:2:0,1") == ["striding", 3, 2, 0, 1, 2]
    assert bn("explicit:0,0:0,1") == ["explicit", 3, 0, 0, 0, 0, "explicit:0,0:0,1"]
    assert bn("env linear:2") == ["linear_automatic", 2, 2, 0, 0, 0]
    assert bn("pe striding:1:1") == ["striding_automatic", 1, 1, 0, 0, 1]
    b = cb.parse("linear:1")
    assert b is not None
    assert [t for t, _v in cb.bn_fields(b)] == [
        "BN_strategy", "BN_type", "BN_parameter_n", "BN_parameter_socket_offset",
        "BN_parameter_core_offset", "BN_parameter_striding_step_size"]
