"""Several workstations on real network stacks (root; CI runs as root).

Each host of the lab is a network namespace of its own (``ip netns``), with
its own address on a bridge (in a namespace of its own too, so the machine's
own network is not touched), its own host name (a UTS namespace: ``unshare
--uts``, ``hostname``) and its own copy of the cell, as on real machines:

- ``master`` (10.77.0.1) runs ``minisge qmaster``, which lays the cell down
  (a split cell: the master runs no execd, each new execd joins @allhosts);
- ``ws1`` ... (10.77.0.2 ...) get a copy of the master's ``common/``
  directory (with the cell key and the cell certificate) in their own
  SGE_ROOT and run ``minisge execd`` with no argument: its host name is the
  namespace's, the qmaster's is ``act_qmaster`` (``master``), resolved
  through that namespace's ``/etc/hosts`` (``ip netns exec`` puts
  ``/etc/netns/NAME/hosts`` there), its port is the copied settings.sh's.

So names, addresses, the cell key, TLS and reconnects go through a real
kernel's network stack: a job runs on each host, a command on a workstation
goes through its execd, the qmaster killed and restarted and a link taken
down are survived.  README.md's "Several workstations" follows these steps.
Whatever happens, the namespaces, their /etc/netns entries and every
process are removed at the end.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest
from cellutil import WAIT, kill_cell_processes, wait_for

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("ip") is None or shutil.which("unshare") is None,
                       reason="network namespaces need ip(8) (iproute2) and unshare(1) (util-linux)"),
]

SUBNET = "10.77.0"
WORKSTATIONS = ("ws1", "ws2", "ws3")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=60)


class Lab:
    """A bridge and one namespace per host; each host a directory of its own as SGE_ROOT."""

    def __init__(self, hosts: tuple[str, ...]):
        self.tag = f"{os.getpid() % 100000}"
        self.dir = tempfile.mkdtemp(prefix="minisge-lab-")
        os.chmod(self.dir, 0o755)
        self.hosts = hosts
        self.address = {h: f"{SUBNET}.{i + 1}" for i, h in enumerate(hosts)}
        self.switch = f"msge{self.tag}-sw"
        self.namespaces: list[str] = []
        self.procs: dict[str, subprocess.Popen] = {}
        self.made_etc_netns = False

    def ns(self, host: str) -> str:
        return f"msge{self.tag}-{host}"

    def veth(self, host: str) -> str:
        return f"v{self.tag}{self.hosts.index(host)}"  # at most 15 characters

    def root(self, host: str) -> str:
        return os.path.join(self.dir, host)

    def setup(self) -> None:
        _ip("netns", "add", self.switch)
        self.namespaces.append(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        hosts_file = "127.0.0.1 localhost\n" + "".join(f"{a} {h}\n" for h, a in self.address.items())
        if not os.path.isdir("/etc/netns"):
            os.makedirs("/etc/netns")
            self.made_etc_netns = True
        for host in self.hosts:
            ns, veth = self.ns(host), self.veth(host)
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", veth + "p")
            _ip("link", "set", veth, "netns", ns)
            _ip("link", "set", veth + "p", "netns", self.switch)
            _ip("-n", self.switch, "link", "set", veth + "p", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{self.address[host]}/24", "dev", veth)
            _ip("-n", ns, "link", "set", veth, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            os.makedirs(f"/etc/netns/{ns}", exist_ok=True)
            with open(f"/etc/netns/{ns}/hosts", "w") as f:
                f.write(hosts_file)
            os.makedirs(self.root(host))

    def argv(self, host: str, *argv: str) -> list[str]:
        """``argv`` run on ``host``: in its network namespace, under its host name."""
        return ["ip", "netns", "exec", self.ns(host), "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', host, *argv]

    def env(self, host: str) -> dict[str, str]:
        e = {k: v for k, v in os.environ.items() if not k.startswith("SGE_")}
        e["SGE_ROOT"] = self.root(host)
        e["MINISGE_LOAD_OVERRIDE"] = "np_load_avg=0.000000"  # the machine's real load must not alarm all.q
        return e

    def minisge(self, host: str, *args: str) -> subprocess.CompletedProcess:
        return self.run(host, "minisge", *args)

    def run(self, host: str, command: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        """A command of the table run on ``host`` (as root), as a user there would."""
        return subprocess.run(self.argv(host, sys.executable, "-m", f"minisge.cli.{command}", *args),
                              env=self.env(host), capture_output=True, text=True, timeout=WAIT, cwd=self.dir,
                              input=input)

    def spawn(self, host: str, *args: str) -> subprocess.Popen:
        """``minisge ARGS`` in the foreground on ``host`` (a daemon: ``ip``, ``unshare``
        and ``sh`` exec it, so its pid is the daemon's)."""
        log = open(os.path.join(self.dir, f"{host}-{args[0]}.log"), "ab")
        p = subprocess.Popen(self.argv(host, sys.executable, "-m", "minisge.cli.minisge", *args),
                             env=self.env(host), stdout=log, stderr=log, start_new_session=True, cwd="/")
        self.procs[f"{host} {args[0]}"] = p
        return p

    def messages(self, host: str) -> str:
        name = "qmaster" if host == "master" else host
        try:
            with open(os.path.join(self.root(host), "default", "spool", name, "messages")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def copy_common(self, host: str) -> None:
        """What an admin does for each new host: copy the cell's common directory (key and certificate too)."""
        shutil.copytree(os.path.join(self.root("master"), "default", "common"),
                        os.path.join(self.root(host), "default", "common"))

    def accounting_host(self, job: int) -> str | None:
        path = os.path.join(self.root("master"), "default", "common", "accounting")
        with open(path) as f:
            for line in f:
                fields = line.split(":")
                if len(fields) > 5 and fields[5] == str(job):
                    return fields[1]
        return None

    def cleanup(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        for host in self.hosts:
            kill_cell_processes(self.root(host))
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=60)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        if self.made_etc_netns:
            try:
                os.rmdir("/etc/netns")
            except OSError:
                pass  # another test's namespaces are there too
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def lab():
    lab = Lab(("master", *WORKSTATIONS))
    try:
        lab.setup()
        yield lab
    finally:
        lab.cleanup()


def _submit(lab: Lab, host: str, *args: str) -> int:
    r = lab.run(host, "qsub", "-terse", *args)
    assert r.returncode == 0, r
    return int(r.stdout.strip())


def _start_lab(lab: Lab) -> None:
    """The README's steps: the qmaster on the master host, then on each
    workstation a copy of common/ and an execd (no argument: the host name is
    the machine's, the qmaster is act_qmaster, resolved by /etc/hosts)."""
    lab.spawn("master", "qmaster")
    pid_file = os.path.join(lab.root("master"), "default", "spool", "qmaster", "qmaster.pid")
    wait_for(lambda: os.path.exists(pid_file), what="the qmaster")
    for ws in WORKSTATIONS:
        lab.copy_common(ws)
        lab.spawn(ws, "execd")
    for ws in WORKSTATIONS:
        wait_for(lambda ws=ws: f"execd {ws} connected from {lab.address[ws]}:" in lab.messages("master"),
                 what=f"execd {ws} connected over the bridge")


def test_a_qmaster_and_three_workstations_on_their_own_network_stacks(lab):
    _start_lab(lab)
    master_log = lab.messages("master")
    for ws in WORKSTATIONS:
        assert f"execd {ws} is a new execution host: added to @allhosts" in master_log

    # what runs where: the master runs no execd, each workstation's execd is seen from its address
    st = lab.minisge("master", "status")
    assert st.returncode == 0, st
    assert "qmaster and scheduler running on master" in st.stdout and "execd running" not in st.stdout
    for ws in WORKSTATIONS:
        assert f"execd {ws}: connected from {lab.address[ws]}, up " in st.stdout
    st = lab.minisge("ws2", "status")
    assert st.returncode == 0, st
    assert "execd ws2 running on this machine" in st.stdout and "qmaster master port" in st.stdout
    assert "qmaster and scheduler running on master (on another host" in st.stdout  # relayed by the execd
    qstat = lab.run("master", "qstat", "-f")
    assert sorted(line.split()[0] for line in qstat.stdout.splitlines() if "@" in line) == [
        f"all.q@{ws}" for ws in WORKSTATIONS]  # no instance on the master: no "au" for ever

    # a job on each host, submitted on the master; its output names the host it ran on
    jobs = {ws: _submit(lab, "master", "-b", "y", "-j", "y", "-o", os.path.join(lab.dir, f"out.{ws}"),
                        "-l", f"h={ws}", "/bin/hostname") for ws in WORKSTATIONS}
    for ws, job in jobs.items():
        wait_for(lambda job=job: lab.accounting_host(job), what=f"job {job}'s accounting record")
        assert lab.accounting_host(job) == ws
        with open(os.path.join(lab.dir, f"out.{ws}")) as f:
            assert f.read().strip() == ws

    # a command on a workstation goes through its execd to the qmaster on the other host
    r = lab.run("ws3", "qsub", "-sync", "y", "-b", "y", "-l", "h=ws1", "/bin/true")
    assert r.returncode == 0 and r.stdout.endswith("exited with exit code 0.\n"), r
    r = lab.run("ws1", "qstat", "-f")
    assert r.returncode == 0 and "all.q@ws2" in r.stdout, r
    # a job script submitted on one workstation runs on another: it travels with the job
    out = os.path.join(lab.dir, "script.out")
    r = lab.run("ws1", "qsub", "-sync", "y", "-j", "y", "-o", out, "-l", "h=ws2",
                input="#!/bin/sh\necho \"script from $SGE_O_HOST ran on $(hostname)\"\n")
    assert r.returncode == 0, r
    with open(out) as f:
        assert f.read() == "script from ws1 ran on ws2\n"

    # minisge stop on a workstation: no qmaster here, and the command says how to stop the execd
    r = lab.minisge("ws3", "stop")
    assert r.returncode == 1 and r.stderr.endswith("minisge: the execd of ws3 runs here: minisge execd stop\n"), r
    # minisge execd stop: that host's execd goes, the qmaster sees it
    r = lab.minisge("ws3", "execd", "stop")
    assert (r.returncode, r.stdout) == (0, "minisge: execd ws3 stopped\n"), r
    wait_for(lambda: "execd ws3 disconnected" in lab.messages("master"), what="the qmaster to see ws3 go")
    assert "execd ws3:" not in lab.minisge("master", "status").stdout


def test_workstations_survive_a_killed_qmaster_and_a_link_taken_down(lab):
    _start_lab(lab)
    # the qmaster dies (SIGKILL) and comes back: every execd reconnects by itself
    qmaster = lab.procs["master qmaster"]
    qmaster.send_signal(signal.SIGKILL)
    qmaster.wait(timeout=WAIT)
    for ws in WORKSTATIONS:
        wait_for(lambda ws=ws: "lost the qmaster" in lab.messages(ws), what=f"{ws} to lose the qmaster")
    # nobody answers for a while: the execds try again and again, quietly (backoff)
    wait_for(lambda: all(lab.messages(ws).count("cannot reach the qmaster") >= 1 for ws in WORKSTATIONS),
             what="the execds to try in vain")
    os.unlink(os.path.join(lab.root("master"), "default", "spool", "qmaster", "qmaster.pid"))
    lab.spawn("master", "qmaster")
    for ws in WORKSTATIONS:
        wait_for(lambda ws=ws: "failed attempt(s)" in lab.messages(ws), what=f"{ws} to reconnect")
        log = lab.messages(ws)
        # one line per change of state (a new reason for failing: a qmaster killed in the middle of a
        # handshake resets it, then refuses), not one per attempt
        reasons = [line.split(": ", 1)[1] for line in log.splitlines() if "cannot reach the qmaster" in line]
        assert reasons and all(a != b for a, b in itertools.pairwise(reasons)), log
        assert "Traceback" not in log
    job = _submit(lab, "master", "-b", "y", "-l", "h=ws2", "/bin/true")
    wait_for(lambda: lab.accounting_host(job), what=f"job {job} after the qmaster's restart")
    assert lab.accounting_host(job) == "ws2"

    # ws1's link goes down (no reset, no FIN: the cable is out); a job for ws1 waits
    # for it, and runs once the link is back, over the same TCP connection
    _ip("-n", lab.ns("ws1"), "link", "set", lab.veth("ws1"), "down")
    try:
        job = _submit(lab, "master", "-b", "y", "-l", "h=ws1", "/bin/true")
        wait_for(lambda: (r := lab.run("master", "qstat")) and f" {job} " in f" {r.stdout}" and
                 any(line.split()[0] == str(job) and line.split()[4] != "qw" for line in r.stdout.splitlines()[2:]),
                 what=f"job {job} dispatched to ws1")
        assert lab.accounting_host(job) is None  # it cannot have run: ws1 is cut off
    finally:
        _ip("-n", lab.ns("ws1"), "link", "set", lab.veth("ws1"), "up")
    wait_for(lambda: lab.accounting_host(job), what=f"job {job} once ws1's link is back")
    assert lab.accounting_host(job) == "ws1"


def test_an_execd_without_the_cell_certificate_or_key_cannot_join(lab):
    lab.spawn("master", "qmaster")
    pid_file = os.path.join(lab.root("master"), "default", "spool", "qmaster", "qmaster.pid")
    wait_for(lambda: os.path.exists(pid_file), what="the qmaster")
    # ws1 got the common directory but not the certificate: it says what to copy, and stops
    lab.copy_common("ws1")
    os.unlink(os.path.join(lab.root("ws1"), "default", "common", "cell_tls.pem"))
    r = subprocess.run(lab.argv("ws1", sys.executable, "-m", "minisge.cli.minisge", "execd"), env=lab.env("ws1"),
                       capture_output=True, text=True, timeout=WAIT)
    assert r.returncode == 1, r
    assert "cell_tls.pem" in r.stderr and "copy common/cell_tls.pem from the master host" in r.stderr
    # ws2 has another cell's key and certificate (a cell of its own): refused at TLS, logged, no host added
    lab.minisge("ws2", "init")
    lab_conf = os.path.join(lab.root("ws2"), "default", "common")
    shutil.copy(os.path.join(lab.root("master"), "default", "common", "settings.sh"), lab_conf)
    with open(os.path.join(lab_conf, "act_qmaster"), "w") as f:
        f.write("master\n")
    lab.spawn("ws2", "execd")
    wait_for(lambda: f"refused connection from {lab.address['ws2']}" in lab.messages("master"),
             what="the qmaster to refuse ws2")
    assert "TLS with the cell certificate failed" in lab.messages("master")
    assert "ws2" not in lab.run("master", "qconf", "-sel").stdout
