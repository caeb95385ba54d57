"""The daemons tell a service manager when they are ready, as the systemd
units of packaging/systemd/ (Type=notify) expect: a datagram ``READY=1``
to the Unix socket named by ``$NOTIFY_SOCKET``, here a socket the test made.
The processes are started exactly as the units' ExecStart lines start them
(``minisge start --foreground``, ``minisge qmaster``, ``minisge execd``)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest
from cellutil import WAIT, Cell, command_line

pytestmark = pytest.mark.root


class NotifySocket:
    """A datagram socket standing in for systemd's notify socket."""

    def __init__(self, path: str):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(WAIT)

    def receive(self) -> dict[str, str]:
        """The next message, as its ``KEY=VALUE`` lines."""
        data = self.sock.recv(4096).decode()
        return dict(line.split("=", 1) for line in data.splitlines() if "=" in line)

    def close(self) -> None:
        self.sock.close()


def start_as_a_unit(c: Cell, notify: NotifySocket, *args: str, log: str) -> subprocess.Popen:
    out = open(os.path.join(c.dir, log), "ab")
    p = subprocess.Popen(command_line("minisge", *args), env=c.env(NOTIFY_SOCKET=notify.path),
                         stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
    c.procs.append(p)  # stopped (SIGTERM) and reaped by c.cleanup()
    return p


def environ_of(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/environ", "rb") as f:
        return f.read().split(b"\0")


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


@pytest.fixture
def cell_dir():
    c = Cell()
    try:
        yield c
    finally:
        c.cleanup()


def test_the_all_in_one_daemon_says_ready_once_it_answers(cell_dir):
    c = cell_dir
    notify = NotifySocket(os.path.join(c.dir, "notify"))
    try:
        p = start_as_a_unit(c, notify, "start", "--foreground", "--hostname", c.host, log="daemon.log")
        msg = notify.receive()
    finally:
        notify.close()
    assert msg.get("READY") == "1", msg
    # the process systemd started is the daemon itself (start --foreground execs it)
    assert msg.get("MAINPID") == str(p.pid) == str(c.daemon_pid())
    assert p.poll() is None
    # ready means serving: a command answers at once
    r = c.run("qstat", "-f")
    assert r.rc == 0 and "all.q@testhost" in r.out, r
    # what the daemon starts (the shepherds' launcher) does not inherit NOTIFY_SOCKET
    children = children_of(p.pid)
    assert children, "the all-in-one daemon has started no shepherd launcher"
    for child in children:
        assert not any(v.startswith(b"NOTIFY_SOCKET=") for v in environ_of(child)), child


def test_the_qmaster_and_the_execd_roles_say_ready(cell_dir):
    c = cell_dir
    c.minisge("init", "--hostname", "master", "--slots", "1")
    with open(os.path.join(c.qmaster_spool, "hostgroups", "@allhosts"), "w") as f:
        f.write("group_name @allhosts\nhostlist node1\n")
    qmaster_notify = NotifySocket(os.path.join(c.dir, "notify-qmaster"))
    execd_notify = NotifySocket(os.path.join(c.dir, "notify-execd"))
    try:
        qmaster = start_as_a_unit(c, qmaster_notify, "qmaster", "--hostname", "master", log="qmaster.log")
        msg = qmaster_notify.receive()
        assert msg.get("READY") == "1" and msg.get("MAINPID") == str(qmaster.pid), msg
        assert c.run("qstat", "-f").rc == 0
        execd = start_as_a_unit(c, execd_notify, "execd", "--hostname", "node1", "--qmaster", "127.0.0.1",
                                log="execd.log")
        msg = execd_notify.receive()
        assert msg.get("READY") == "1" and msg.get("MAINPID") == str(execd.pid), msg
    finally:
        qmaster_notify.close()
        execd_notify.close()
    messages = os.path.join(c.qmaster_spool, "messages")
    c.wait_for(lambda: "execd node1 connected" in open(messages).read(), what="execd node1")
