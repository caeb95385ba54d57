"""A connection's fault closes that connection only: the daemons stay up and serve.

A fake execd that proves the cell key and then resets its connection (SO_LINGER 0,
then close: the qmaster reads ECONNRESET) against a real ``minisge qmaster``; a fake
qmaster that resets during the handshake against a real ``minisge execd``.
"""

from __future__ import annotations

import os
import socket
import struct

import pytest
from cellutil import Cell

from minisge import protocol
from minisge.protocol import handshake
from minisge.protocol import tls as protocol_tls

pytestmark = pytest.mark.root


def _qmaster_port(c: Cell) -> int:
    for line in open(os.path.join(c.common, "settings.sh")):
        if "SGE_QMASTER_PORT=" in line:
            return int(line.split("=")[1])
    raise AssertionError("no port")


def _key(c: Cell) -> bytes:
    return protocol.read_key(os.path.join(c.common, "cell_key"))


def _reset(sock: socket.socket) -> None:
    """Close with a reset (RST), not a FIN: the other side reads ECONNRESET."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.fixture
def roles():
    c = Cell(host="master").start_roles(("node1",), slots=1)
    try:
        yield c
    finally:
        c.cleanup()


def _cell_serves(c: Cell) -> None:
    job = c.submit("-b", "y", "/bin/true")
    c.wait_records(job)


@pytest.mark.parametrize("when", ["after registering", "before registering", "after a relayed request"])
def test_the_qmaster_survives_an_execd_connection_reset(roles, when):
    qmaster = roles.procs[0]
    sock = handshake.connect_tcp("127.0.0.1", _qmaster_port(roles), _key(roles), "execd", "fake1",
                                 tls=roles.tls())
    if when != "before registering":
        protocol.send(sock, {"op": "register", "known": [], "startup": True})
        messages = os.path.join(roles.qmaster_spool, "messages")
        roles.wait_for(lambda: "execd fake1 connected" in open(messages).read(), what="the fake execd registered")
    if when == "after a relayed request":
        # a qsub -sync y from a command on the fake host: its relay is still waiting
        spec = {"job_name": "sleeper", "binary": True, "command": "/bin/sleep", "args": ["2"], "cwd": roles.work}
        env = protocol.relay_envelope({"op": "submit", "request": spec, "sync": True},
                                      protocol.Credentials(os.getpid(), 0, 0), "fake1")
        protocol.send(sock, {**env, "rid": 1})
        assert protocol.recv(sock)["reply"]["ok"]  # "Your job ... has been submitted", more to come
    _reset(sock)
    messages = os.path.join(roles.qmaster_spool, "messages")
    roles.wait_for(lambda: "execd fake1 disconnected" in open(messages).read() or when == "before registering",
                   what="the qmaster closed the fake execd's connection")
    _cell_serves(roles)
    assert qmaster.poll() is None, open(os.path.join(roles.dir, "qmaster.log")).read()
    assert "Traceback" not in open(os.path.join(roles.dir, "qmaster.log")).read()
    assert "Traceback" not in open(messages).read()  # nothing failed: a connection ended


def test_an_execd_survives_a_qmaster_that_resets_during_the_handshake():
    c = Cell(host="master")
    try:
        c.minisge("init", "--hostname", "master", "--slots", "1")
        key = _key(c)
        tls = protocol_tls.server_context(os.path.join(c.common, "cell_tls.pem"))  # the execd speaks TLS first
        with socket.create_server(("127.0.0.1", 0)) as listener:
            listener.settimeout(60)
            port = listener.getsockname()[1]
            execd = c.spawn("execd", "--hostname", "node1", "--qmaster", f"127.0.0.1:{port}", log="execd.log")
            # first connection: hello, the execd's proof, then a reset instead of the welcome
            conn, _ = listener.accept()
            conn.settimeout(60)
            conn = tls.wrap_socket(conn, server_side=True)
            shake = handshake.ServerHandshake(key, "qmaster", "master")
            protocol.send(conn, shake.hello())
            shake.check_auth(protocol.recv(conn))
            _reset(conn)
            # the execd reconnects: this time the handshake completes and it registers
            conn, _ = listener.accept()
            conn.settimeout(60)
            with tls.wrap_socket(conn, server_side=True) as conn:
                shake = handshake.ServerHandshake(key, "qmaster", "master")
                protocol.send(conn, shake.hello())
                peer = shake.check_auth(protocol.recv(conn))
                protocol.send(conn, shake.welcome())
                first = protocol.recv(conn)
                assert (peer.role, peer.name) == ("execd", "node1")
                assert first["op"] == "register"
                assert execd.poll() is None
            log = open(os.path.join(c.dir, "execd.log")).read()
            assert "Traceback" not in log, log
    finally:
        c.cleanup()
