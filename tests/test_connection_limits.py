"""What no caller can exhaust: frame limits per operation and before the
handshake, a local user's connections, bytes in flight and idle time, the
log of refusals (a line per peer a minute)."""

from __future__ import annotations

import logging
import os
import select
import socket
import struct
import subprocess
import sys
import threading

import pytest
import trio

from minisge import protocol
from minisge.protocol import ConnectionClosed, FrameDecoder, ProtocolError, catalogue, encode
from minisge.protocol import trio_streams as pt
from minisge.protocol.client import comm_failure

KEY = bytes(range(32))
MiB = 1024 * 1024


def header(length: int) -> bytes:
    return struct.pack(">4sBI", b"MSGE", 1, length)


def command_decoder() -> FrameDecoder:
    """The decoder of a daemon's Unix socket."""
    return FrameDecoder(catalogue.max_frame(catalogue.COMMAND), catalogue.frame_limits(catalogue.COMMAND))


# ---------------------------------------------------------------- frame limits


def test_a_request_names_its_operation_first():
    assert encode({"request": {"x": 1}, "op": "submit"})[9:].startswith(b'{"op":"submit",')


def test_only_submit_qconf_and_pe_task_may_send_more_than_a_mebibyte():
    assert catalogue.max_frame(catalogue.COMMAND) == MiB
    assert catalogue.frame_limits(catalogue.COMMAND) == {
        "submit": protocol.MAX_PAYLOAD, "qconf": 16 * MiB, "pe_task": 4 * MiB}
    assert catalogue.max_frame(catalogue.HANDSHAKE) == protocol.MAX_HANDSHAKE_PAYLOAD == 4096


def test_a_big_frame_of_a_small_operation_is_refused_before_its_payload_is_read():
    decoder = command_decoder()
    decoder.push(header(2 * MiB))
    assert decoder.announced == 0  # not yet known which limit it is under
    with pytest.raises(ProtocolError, match=f"frame of {2 * MiB} bytes is over the limit of {MiB} for 'qstat'"):
        decoder.push(b'{"op":"qstat","users":["')
    assert decoder.buffered < 64


@pytest.mark.parametrize("start", [b'{"users":[], "op":"submit"', b'["op","submit"]', b'{"op": "submit"',
                                   b'{"op":"sub\\u006dit"', b'{"op":"' + b"s" * 40])
def test_a_big_frame_that_does_not_name_its_operation_first_is_refused(start):
    decoder = command_decoder()
    with pytest.raises(ProtocolError, match=f"over the limit of {MiB}"):
        decoder.push(header(2 * MiB) + start)


def test_a_big_submission_is_read_whole():
    msg = {"op": "submit", "request": {"job_name": "big", "script": "x" * (3 * MiB)}}
    data = encode(msg)
    decoder = command_decoder()
    decoder.push(data[:100])
    assert decoder.announced == len(data) - 9 and decoder.expected_op == "submit"
    got = []
    for i in range(100, len(data), 1 << 16):
        got += decoder.feed(data[i:i + (1 << 16)])
    assert got == [msg] and decoder.buffered == 0 and decoder.announced == 0


def test_a_submission_over_its_own_limit_is_refused():
    decoder = command_decoder()
    with pytest.raises(ProtocolError, match=f"over the limit of {protocol.MAX_PAYLOAD}"):
        decoder.push(header(protocol.MAX_PAYLOAD + 1) + b'{"op":"submit",')


def test_a_frame_that_named_one_operation_and_holds_another_is_refused():
    payload = b'{"op":"submit","op":"qstat"}' + b" " * (2 * MiB)
    decoder = command_decoder()
    with pytest.raises(ProtocolError):
        decoder.feed(header(len(payload)) + payload)


def test_the_handshake_takes_small_frames_only():
    async def main():
        a, b = trio.testing.memory_stream_pair()
        decoder = FrameDecoder()
        async with trio.open_nursery() as nursery:
            async def client():
                hello = await pt.recv_message(b, FrameDecoder())
                assert hello["op"] == "hello"
                await b.send_all(header(64 * 1024) + b'{"op":"auth"')
            nursery.start_soon(client)
            with pytest.raises(ProtocolError, match="over the limit of 4096"):
                await pt.server_handshake(a, decoder, KEY, "qmaster", "m")
        assert decoder.max_payload == 4096  # the connection is closed: it stays small

    trio.run(main)


# ---------------------------------------------------------------- a local user's limits


def test_a_user_gets_so_many_connections_and_root_and_managers_more():
    limits = pt.LocalLimits(user_connections=2, total_connections=3, privileged=lambda uid: uid == 7)
    assert limits.admit(1000) is None and limits.admit(1000) is None
    assert "max. connection count reached (uid 1000 holds 2 connections)" == limits.admit(1000)
    assert limits.admit(1001) is None
    assert "max. connection count reached" in limits.admit(1002)  # all users together
    assert limits.admit(0) is None and limits.admit(7) is None and limits.admit(7) is None
    limits.leave(1000)
    assert limits.admit(1000) is None
    for uid in (1000, 1000, 1001, 0, 7, 7):
        limits.leave(uid)
    assert limits.counted == 0 and limits.connections == {}


def test_a_user_has_a_budget_of_bytes_in_flight():
    limits = pt.LocalLimits(user_bytes=100)
    limits.reserve(1000, 60)
    with pytest.raises(pt.Refused, match="uid 1000 has 60 bytes of requests in flight"):
        limits.reserve(1000, 60)
    limits.reserve(1001, 60)  # another user's budget
    limits.reserve(0, 1000)  # root's is not counted against
    limits.release(1000, 60)
    limits.reserve(1000, 100)
    limits.release(1000, 100)
    assert 1000 not in limits.in_flight


def test_the_limits_come_from_the_environment_and_the_descriptors():
    limits = pt.LocalLimits.from_environ({}, nofile=20000)
    assert limits.idle_timeout == 60.0 and limits.user_connections == 1024
    assert limits.total_connections == 20000 - 2500
    small = pt.LocalLimits.from_environ({"MINISGE_IDLE_TIMEOUT": "2.5", "MINISGE_USER_CONNECTIONS": "5"}, nofile=1024)
    assert (small.idle_timeout, small.user_connections, small.total_connections) == (2.5, 5, 768)
    bad = pt.LocalLimits.from_environ({"MINISGE_IDLE_TIMEOUT": "-1", "MINISGE_USER_CONNECTIONS": "x"}, nofile=1024)
    assert (bad.idle_timeout, bad.user_connections) == (60.0, 96)


async def serve_one(limits: pt.LocalLimits, nursery) -> socket.socket:
    """A connected plain socket whose other end serve_local serves with ``limits``."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

    async def handler(request, peer, send_more):
        return protocol.ok_reply(op=request["op"])

    nursery.start_soon(pt.serve_local, trio.SocketStream(trio.socket.from_stdlib_socket(theirs)), handler, limits)
    return ours


async def test_an_idle_connection_is_told_and_closed(nursery):
    sock = await serve_one(pt.LocalLimits(idle_timeout=0.05), nursery)
    with sock:
        sock.setblocking(False)
        msg = await trio.to_thread.run_sync(lambda: (sock.setblocking(True), protocol.recv(sock))[1])
        assert msg["ok"] is False
        assert msg["error"] == "error: commlib error: closing idle connection after 0.05 s without a request"
        with pytest.raises(ConnectionClosed):
            await trio.to_thread.run_sync(protocol.recv, sock)


async def test_a_connection_that_asks_in_time_is_answered(nursery):
    sock = await serve_one(pt.LocalLimits(idle_timeout=30), nursery)
    with sock:
        reply = await trio.to_thread.run_sync(protocol.request, sock, {"op": "qstat"})
    assert reply == {"ok": True, "op": "qstat"}


async def test_a_big_payload_is_decoded_and_answered(nursery):
    sock = await serve_one(pt.LocalLimits(), nursery)
    with sock:
        reply = await trio.to_thread.run_sync(protocol.request, sock, {"op": "submit", "x": "y" * (2 * MiB)})
    assert reply == {"ok": True, "op": "submit"}


async def test_an_oversized_request_is_told_and_closed(nursery):
    sock = await serve_one(pt.LocalLimits(), nursery)
    with sock:
        sock.sendall(header(2 * MiB) + b'{"op":"qstat",')
        msg = await trio.to_thread.run_sync(protocol.recv, sock)
    assert msg["ok"] is False and f"over the limit of {MiB} for 'qstat'" in msg["error"]


def test_a_refusal_sent_before_the_daemon_closed_is_the_answer():
    a, b = socket.socketpair()
    with a, b:
        b.sendall(encode(protocol.error_reply("error: commlib error: max. connection count reached")))
        b.close()  # the command's request is never read: its send may fail
        reply = protocol.request(a, {"op": "qstat", "pad": "x" * MiB})
    assert reply["error"] == "error: commlib error: max. connection count reached"


# ---------------------------------------------------------------- the refusals' log


def test_refusals_are_logged_once_per_peer_a_minute_with_a_count(caplog):
    now = [1000.0]
    refusals = pt.PeerLog(logging.getLogger("test.peerlog"), clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="test.peerlog"):
        for _ in range(50):
            refusals.note("10.0.0.1", "refused connection from 10.0.0.1:1234: bad proof")
        refusals.note("10.0.0.2", "refused connection from 10.0.0.2:99: bad proof")
        now[0] += 61
        refusals.note("10.0.0.1", "refused connection from 10.0.0.1:1235: bad proof")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "refused connection from 10.0.0.1:1234: bad proof",
        "refused connection from 10.0.0.2:99: bad proof",
        "refused connection from 10.0.0.1:1235: bad proof (49 more from 10.0.0.1 in 61 s not logged)",
    ]


def test_the_refusals_log_follows_a_bounded_number_of_peers(caplog):
    now = [0.0]
    refusals = pt.PeerLog(logging.getLogger("test.peerlog"), max_peers=10, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="test.peerlog"):
        for i in range(1000):
            refusals.note(f"10.0.{i // 256}.{i % 256}", "refused")
    assert len(refusals.peers) <= 11
    assert len(caplog.records) <= 11


# ---------------------------------------------------------------- the commands' words


@pytest.fixture
def fake_cell(mem_tmp_path, monkeypatch):
    """An SGE_ROOT whose qmaster socket a test serves itself (in a short
    directory: pytest's tmp_path under a worker of pytest -n makes the
    socket's path longer than AF_UNIX takes)."""
    root = mem_tmp_path / "root"
    spool = root / "default" / "spool" / "qmaster"
    spool.mkdir(parents=True)
    (root / "default" / "common").mkdir(parents=True)
    (root / "default" / "common" / "act_qmaster").write_text("fakehost\n")
    monkeypatch.setenv("SGE_ROOT", str(root))
    monkeypatch.delenv("SGE_CELL", raising=False)
    return spool / "qmaster.sock"


def test_comm_failure_words(fake_cell):
    assert comm_failure(ConnectionClosed("x")) == 'error: commlib error: got read error (closing "fakehost/qmaster/1")'
    assert comm_failure(ConnectionResetError()) == "error: commlib error: got select error (Connection reset by peer)"
    assert comm_failure(BrokenPipeError()) == (
        'error: unable to send message to qmaster using port 6444 on host "fakehost": got send error')
    assert comm_failure(TimeoutError()) == (
        'error: unable to send message to qmaster using port 6444 on host "fakehost": '
        "got message acknowledge error")
    assert comm_failure(ProtocolError("bad magic")) == "error: bad magic"


def test_a_timeout_reaches_the_command_as_timeout_error():
    a, b = socket.socketpair()
    with a, b:
        a.settimeout(0.05)
        with pytest.raises(TimeoutError):
            protocol.request(a, {"op": "qstat"})


@pytest.mark.parametrize("misbehaviour, expected", [
    ("reset", "error: commlib error: got select error (Connection reset by peer)\n"),
    ("close", 'error: commlib error: got read error (closing "fakehost/qmaster/1")\n'),
    ("half", 'error: commlib error: got read error (closing "fakehost/qmaster/1")\n'),
])
def test_a_command_whose_daemon_fails_mid_request_says_so_in_commlib_words(fake_cell, misbehaviour, expected):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(fake_cell))
    server.listen(1)

    def serve():
        conn, _ = server.accept()
        with conn:
            if misbehaviour == "reset":
                # the request unread: closing resets the caller's connection
                select.select([conn], [], [], 60)
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            protocol.recv(conn)
            if misbehaviour == "half":
                conn.sendall(encode(protocol.ok_reply(jobs=[], queues=[]))[:12])

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        p = subprocess.run([sys.executable, "-m", "minisge.cli.qstat"], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ))
    finally:
        t.join(60)
        server.close()
    assert (p.returncode, p.stdout, p.stderr) == (1, "", expected)
