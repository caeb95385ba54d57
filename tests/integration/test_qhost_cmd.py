"""qhost(1), qselect(1) and the load values of qstat -F and qconf -se against a
running cell, compared with what the real 8.1.9 printed (tests/golden/qhost,
tests/golden/qselect).

The cell's host is called ``vm``, as the peer's, so that the widths of its
columns are the peer's; its execd reports the load values the peer's execd
reported when the capture was made (MINISGE_LOAD_OVERRIDE), so that the
figures are the same.
"""

from __future__ import annotations

import os
import re

import pytest
from cellutil import Cell, ensure_user
from golden import GOLDEN, normalise, read_golden, without_fmt_usage

from minisge.formats import host_conf

pytestmark = pytest.mark.root

USER = "sgetest"  # the peer's submit user, whose name the captures show


def _resource_values(case: str) -> str:
    """MINISGE_LOAD_OVERRIDE for the load values a qhost -F capture shows
    (its scaled texts parse back to the same values: ``23.541G``)."""
    pairs = []
    for line in read_golden(case).text.splitlines():
        if line.startswith("   hl:"):
            name, _, value = line[len("   hl:"):].partition("=")
            pairs.append(f"{name}={value}")
    return ",".join(pairs)


def _start(monkeypatch, values: str, last_job_id: int = 99) -> Cell:
    """A cell whose next job gets the id after ``last_job_id`` (the peer's
    job ids: a job id of 1 would be normalised in the NSOC column too)."""
    monkeypatch.setenv("MINISGE_LOAD_OVERRIDE", values)
    ensure_user(USER)
    ensure_user("sgetest2")
    c = Cell(host="vm", slots=2)
    c.minisge("init", "--hostname", "vm", "--slots", "2")
    with open(os.path.join(c.qmaster_spool, "jobseqnum"), "w") as f:
        f.write(f"{last_job_id}\n")
    c.start()
    c.wait_for(lambda: "lx-amd64" in c.run("qhost").out, what="the first load report")
    return c


@pytest.fixture
def idle_cell(monkeypatch):
    c = _start(monkeypatch, _resource_values("qhost/qhost_-F.idle"))
    try:
        yield c
    finally:
        c.cleanup()


def _prior_free(text: str) -> str:
    """The priority column and -xml's priority left out: it is normalised
    over all the jobs of a cell, and the peer, shared with other testers,
    had other jobs pending when it was captured."""
    text = re.sub(r"(?m)^(   +JOBID\d )\d\.\d{5} ", r"\1PRIOR   ", text)
    text = re.sub(r"(?m)^( +\d+ )\d\.\d{5} ", r"\1PRIOR   ", text)
    return re.sub(r"name='priority'>'[\d.]+'<", "name='priority'>PRIOR<", text)


def _start_times(text: str) -> str:
    return re.sub(r"name='(start|submit)_time'>\d+<", r"name='\1_time'>EPOCH<", text)


def check(cell: Cell, case: str, *, job_ids: tuple[int, ...] = (), peer_ids: tuple[int, ...] = (),
          user: str = USER, argv: list[str] | None = None) -> None:
    """Run the captured command in ``cell`` (or ``argv``) and compare stdout,
    stderr and the exit status with the capture, after normalising."""
    g = read_golden(case)
    words = g.command.split()
    args = argv if argv is not None else [w.strip("'") for w in words[1:]]
    r = cell.run(words[0], *args, user=user)
    err_case = case + ".stderr"
    try:
        want_err = read_golden(err_case).text
    except FileNotFoundError:
        want_err = ""

    def norm(text: str, ids: tuple[int, ...]) -> str:
        return _start_times(_prior_free(normalise(text, job_ids=ids)))

    assert (r.rc, norm(r.out, job_ids), without_fmt_usage(r.err)) == (g.exit, norm(g.text, peer_ids), want_err), case


# ---------------------------------------------------------------- qhost, no jobs

@pytest.mark.parametrize("case", [
    "qhost/qhost.idle", "qhost/qhost_-q.idle", "qhost/qhost_-F.idle", "qhost/qhost_-F_mem_total,cpu",
    "qhost/qhost_-F_mem_total_-F_cpu", "qhost/qhost_-ncb", "qhost/qhost_-ncb_-q", "qhost/qhost_-xml.idle",
    "qhost/qhost_-q_-xml.idle", "qhost/qhost_-F_-xml", "qhost/qhost_-h_vm", "qhost/qhost_-h_nosuchhost",
    "qhost/qhost_-l_arch=lx-amd64", "qhost/qhost_-l_arch=sol-sparc", "qhost/qhost_-l_nosuchres=1",
    "qhost/qhost_-x", "qhost/qhost_-h", "qhost/qhost_-help",
])
def test_qhost_prints_what_8_1_9_printed(idle_cell, case):
    check(idle_cell, case)


_QSELECT_CASES = [
    "qselect/qselect", "qselect/qselect_-help", "qselect/qselect_-q_all.q", "qselect/qselect_-q_nosuch.q",
    "qselect/qselect_-q_all.q@vm", "qselect/qselect_-q_*@vm", "qselect/qselect_-pe_nosuchpe",
    "qselect/qselect_-pe_make,smp", "qselect/qselect_-l_arch=lx-amd64", "qselect/qselect_-l_arch=sol-sparc",
    "qselect/qselect_-l_nosuchres=1", "qselect/qselect_-l_slots=1", "qselect/qselect_-l_h_vmem=1G",
    "qselect/qselect_-l_mem_free=1T", "qselect/qselect_-l_hostname=vm", "qselect/qselect_-qs_a",
    "qselect/qselect_-qs_d", "qselect/qselect_-qs_u", "qselect/qselect_-qs_X", "qselect/qselect_-U_sgetest",
    "qselect/qselect_-U_nosuchuser", "qselect/qselect_-u_sgetest", "qselect/qselect_-x", "qselect/qselect_-q",
    "qselect/qselect_-xml",
]


@pytest.mark.parametrize("case", _QSELECT_CASES)
def test_qselect_prints_what_8_1_9_printed(idle_cell, case):
    check(idle_cell, case)


def test_qselect_pe_selects_the_queues_offering_the_pe(idle_cell):
    # the peer's all.q has PE mpi; minisge's default cell has make and smp
    check(idle_cell, "qselect/qselect_-pe_mpi", argv=["-pe", "smp"])


def test_qselect_qs_selects_a_disabled_queue_instance(idle_cell):
    assert idle_cell.run("qmod", "-d", "all.q@vm").rc == 0
    r = idle_cell.run("qselect", "-qs", "d")
    assert (r.rc, r.out) == (0, "all.q@vm\n")
    r = idle_cell.run("qhost", "-q")
    assert "   all.q                BIP   0/0/2         d\n" in r.out


# ---------------------------------------------------------------- qhost -j

def test_qhost_j_shows_the_master_and_slave_lines_of_a_pe_job(idle_cell):
    c = idle_cell
    # the peer's job ran in PE mpi ($fill_up, job_is_first_task TRUE); smp is minisge's PE of that kind
    job = c.submit("-N", "qhpe", "-pe", "smp", "2", "-b", "y", "/bin/sleep", "600", user=USER)
    c.wait_for(lambda: c.qstat_states().get(job) == "r", what="the PE job running")
    for case in ("qhost/qhost_-j.pe", "qhost/qhost_-q.pe", "qhost/qhost_-q_-j.pe", "qhost/qhost_-j_-xml.pe",
                 "qhost/qhost_-q_-j_-xml.pe", "qhost/qhost_-j_-u_sgetest2.pe", "qhost/qhost_-u_sgetest.pe",
                 "qhost/qhost_-F_slots.pe"):
        check(c, case, job_ids=(job,), peer_ids=(100,))
    c.run("qdel", str(job), user=USER)


def test_qhost_j_shows_serial_jobs_and_array_tasks(monkeypatch):
    # the load of that capture: LOAD 2.50 (load_avg=2.504395), MEMUSE 1.1G
    values = _resource_values("qhost/qhost_-F.idle") + ",load_avg=2.504395,mem_used=1.1G"
    c = _start(monkeypatch, values, last_job_id=100)
    try:
        serial = c.submit("-N", "qhser", "-b", "y", "/bin/sleep", "600", user=USER)
        c.wait_for(lambda: c.qstat_states().get(serial) == "r", what="the serial job running")
        array = c.submit("-N", "qharr", "-t", "1-2", "-b", "y", "/bin/sleep", "600", user=USER)
        c.wait_for(lambda: "qharr" in c.run("qhost", "-j").out, what="the first array task running")
        for case in ("qhost/qhost_-j.serial_and_array", "qhost/qhost_-q_-j.serial_and_array",
                     "qhost/qhost_-j_-xml.serial_and_array", "qhost/qhost_-F_-q_-j.serial_and_array"):
            check(c, case, job_ids=(serial, array), peer_ids=(101, 102))
        c.run("qdel", str(serial), str(array), user=USER)
    finally:
        c.cleanup()


# ---------------------------------------------------------------- qstat -F, qconf -se

def test_qstat_F_and_qconf_se_print_the_load_values_as_8_1_9(monkeypatch):
    peer = host_conf.parse(read_golden_plain("qconf_-se_HOST"))
    c = _start(monkeypatch, ",".join(f"{k}={v}" for k, v in peer.load_values))
    try:
        r = c.run("qconf", "-se", "vm")
        assert r.rc == 0
        ours = host_conf.parse(r.out)
        assert ours.load_values == peer.load_values
        want = [ln for ln in read_golden_plain("qstat_-F").splitlines() if ln.startswith("\thl:")]
        got = [ln for ln in c.run("qstat", "-F").out.splitlines() if ln.startswith("\thl:")]
        assert got == want
    finally:
        c.cleanup()


def read_golden_plain(name: str) -> str:
    """An early capture (tests/golden/NAME, without a header)."""
    with open(f"{GOLDEN}/{name}", encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------- several hosts

def test_several_hosts_in_name_order_with_one_job_header():
    ensure_user(USER)
    c = Cell().start_roles(hosts=("node2", "node1"), slots=2)  # the qmaster's host "master" is one too
    try:
        c.wait_for(lambda: c.run("qhost").out.count("lx-amd64") == 2, what="both execds' load reports")
        lines = c.run("qhost").out.splitlines()[2:]
        assert [ln.split()[0] for ln in lines] == ["global", "master", "node1", "node2"]
        # an execution host without an execd: dashes, as for the global host
        assert lines[1].split()[1:] == lines[0].split()[1:] == ["-"] * 10
        r = c.run("qhost", "-h", "node2")
        assert [ln.split()[0] for ln in r.out.splitlines()[2:]] == ["global", "node2"]
        r = c.run("qhost", "-l", "hostname=node1")
        assert [ln.split()[0] for ln in r.out.splitlines()[2:]] == ["node1"]
        assert c.run("qselect").out == "all.q@node1\nall.q@node2\n"
        assert c.run("qselect", "-q", "*@node2").out == "all.q@node2\n"
        jobs = [c.submit("-b", "y", "/bin/sleep", "600", user=USER) for _ in range(4)]
        c.wait_for(lambda: all(c.qstat_states().get(j) == "r" for j in jobs), what="four jobs running")
        out = c.run("qhost", "-j").out
        assert out.count("job-ID  prior") == 1  # qhost prints the job header once
        lines = out.splitlines()
        node1, node2, header = (next(i for i, ln in enumerate(lines) if ln.startswith(w))
                                for w in ("node1", "node2", "   job-ID"))
        assert node1 < header < node2  # under the first host with jobs
        assert sum(" MASTER " in ln for ln in lines) == 4
        q = c.run("qhost", "-q").out
        assert "   all.q                BIP   0/2/2         \n" in q and q.count("all.q") == 2
        c.run("qdel", *map(str, jobs), user=USER)
    finally:
        c.cleanup()
