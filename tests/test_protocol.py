"""The protocol shared by the commands and the daemons: frames, handshake, peers, serving."""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import struct
import subprocess
import sys

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from minisge import protocol
from minisge.protocol import (
    ConnectionClosed,
    Credentials,
    FrameDecoder,
    HandshakeError,
    KeyFileError,
    ProtocolError,
    RemotePeer,
    encode,
    handshake,
)
from minisge.protocol import trio_streams as pt
from minisge.protocol.handshake import ClientHandshake, ServerHandshake

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def frame(payload: bytes, magic: bytes = b"MSGE", version: int = 1, length: int | None = None) -> bytes:
    return struct.pack(">4sBI", magic, version, len(payload) if length is None else length) + payload


# ---------------------------------------------------------------- frames

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=8,
)
messages = st.dictionaries(st.text(max_size=10), json_values, max_size=4)


def test_frame_is_magic_version_length_and_json_payload():
    data = encode({"op": "qstat"})
    assert data == b"MSGE\x01\x00\x00\x00\x0e" + b'{"op":"qstat"}'


@given(msgs=st.lists(messages, min_size=1, max_size=3), cuts=st.lists(st.integers(1, 64), max_size=40))
def test_any_messages_survive_any_split_of_the_stream(msgs, cuts):
    stream = b"".join(encode(m) for m in msgs)
    decoder = FrameDecoder()
    got, pos = [], 0
    for cut in cuts:
        got += decoder.feed(stream[pos : pos + cut])
        pos += cut
    got += decoder.feed(stream[pos:])
    decoder.eof()
    assert got == msgs
    assert decoder.buffered == 0


def test_file_name_text_with_surrogate_escapes_survives():
    name = b"/home/u/caf\xe9.sh".decode("utf-8", "surrogateescape")
    assert FrameDecoder().feed(encode({"op": "qsub", "script": name})) == [{"op": "qsub", "script": name}]


def test_next_message_gives_one_message_at_a_time():
    decoder = FrameDecoder()
    decoder.push(encode({"n": 1}) + encode({"n": 2}) + encode({"n": 3})[:5])
    assert decoder.next_message() == {"n": 1}
    assert decoder.next_message() == {"n": 2}
    assert decoder.next_message() is None


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"X", "bad magic"),
        (b"GET / HTTP/1.1\r\n", "bad magic"),
        (frame(b"{}", magic=b"MSGF"), "bad magic"),
        (frame(b"{}", version=2), "unsupported protocol version 2"),
        (frame(b"{}", version=0), "unsupported protocol version 0"),
        (frame(b"", length=protocol.MAX_PAYLOAD + 1), "over the limit"),
        (frame(b"{"), "not JSON"),
        (frame(b""), "not JSON"),
        (frame(b"[1, 2]"), "not an object"),
        (frame(b'"op"'), "not an object"),
        (frame(b'{"op": NaN}'), "NaN"),
        (frame(b'{"op": "a", "op": "b"}'), "twice"),
        (frame(b'{"op": "\xff"}'), "not UTF-8"),
        (frame(b"[" * 100000 + b"]" * 100000), "not JSON"),
    ],
)
def test_bad_frame_raises_protocol_error(data, reason):
    with pytest.raises(ProtocolError, match=reason):
        FrameDecoder().feed(data)


def test_oversized_length_is_refused_before_the_payload_arrives():
    decoder = FrameDecoder(max_payload=1000)
    with pytest.raises(ProtocolError, match="1001 bytes is over the limit of 1000"):
        decoder.push(frame(b"", length=1001))


def test_garbage_is_refused_at_its_first_byte():
    with pytest.raises(ProtocolError, match="bad magic"):
        FrameDecoder().push(b"\x16")  # a TLS client hello, say


def test_frame_cut_by_end_of_stream_raises():
    decoder = FrameDecoder()
    assert decoder.feed(encode({"op": "qstat"})[:-1]) == []
    with pytest.raises(ProtocolError, match="middle of a frame"):
        decoder.eof()


def test_decoder_refuses_everything_after_an_error():
    decoder = FrameDecoder()
    with pytest.raises(ProtocolError):
        decoder.feed(b"nope")
    with pytest.raises(ProtocolError, match="already failed"):
        decoder.feed(encode({"op": "qstat"}))


@given(st.binary(max_size=200))
def test_random_bytes_give_messages_or_protocol_error_only(data):
    try:
        FrameDecoder().feed(data)
    except ProtocolError:
        pass


@given(msg=messages, pos=st.integers(0, 10_000), byte=st.integers(0, 255))
def test_mutated_frames_give_messages_or_protocol_error_only(msg, pos, byte):
    data = bytearray(encode(msg))
    data[pos % len(data)] = byte
    try:
        FrameDecoder().feed(bytes(data))
    except ProtocolError:
        pass


@pytest.mark.parametrize(
    "msg, reason",
    [
        ([1, 2], "JSON object"),
        ({"x": float("nan")}, "cannot be encoded"),
        ({"x": {1: "a"}}, "key 1 is not a string"),
        ({"x": object()}, "cannot be encoded"),
        ({"x": b"bytes"}, "cannot be encoded"),
    ],
)
def test_encode_refuses_what_would_not_come_back_the_same(msg, reason):
    with pytest.raises(ProtocolError, match=reason):
        encode(msg)


def test_encode_refuses_a_message_over_the_limit(monkeypatch):
    monkeypatch.setattr(protocol.wire, "MAX_PAYLOAD", 100)
    encode({"s": "x" * 90})
    with pytest.raises(ProtocolError, match="over the limit of 100"):
        encode({"s": "x" * 100})


# ---------------------------------------------------------------- messages


def test_replies_are_ok_or_error_with_text_and_exit_code():
    assert protocol.check_reply(protocol.ok_reply(job=7)) == {"ok": True, "job": 7}
    assert protocol.check_reply(protocol.error_reply("denied", rc=2)) == {"ok": False, "error": "denied", "rc": 2}


@pytest.mark.parametrize(
    "reply", [{}, {"ok": 1}, {"ok": False, "rc": 1}, {"ok": False, "error": "x"},
              {"ok": False, "error": "x", "rc": True}, {"ok": True, "more": 1}]
)
def test_malformed_reply_raises(reply):
    with pytest.raises(ProtocolError):
        protocol.check_reply(reply)


@pytest.mark.parametrize("request_", [{}, {"op": ""}, {"op": 3}])
def test_request_without_op_raises(request_):
    with pytest.raises(ProtocolError, match="op"):
        protocol.check_request(request_)


def test_relay_envelope_carries_the_kernel_credentials_of_the_caller():
    env = protocol.relay_envelope({"op": "qstat"}, Credentials(10, 1000, 100), "ws3")
    assert protocol.open_relay_envelope(json.loads(json.dumps(env))) == (
        {"op": "qstat"},
        Credentials(10, 1000, 100),
        "ws3",
    )
    with pytest.raises(ProtocolError, match="relay"):
        protocol.open_relay_envelope({**env, "uid": "root"})


# ---------------------------------------------------------------- cell key


def test_write_key_creates_a_file_for_its_owner_alone_and_read_key_reads_it(tmp_path):
    key = protocol.make_key()
    path = str(tmp_path / "cell.key")
    protocol.write_key(path, key)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert protocol.read_key(path) == key
    assert len(key) == 32 and protocol.make_key() != key


def test_write_key_never_replaces_a_key(tmp_path):
    path = str(tmp_path / "cell.key")
    protocol.write_key(path, KEY)
    with pytest.raises(FileExistsError):
        protocol.write_key(path, OTHER_KEY)
    assert protocol.read_key(path) == KEY


def test_read_key_refuses_a_key_others_can_read(tmp_path):
    path = tmp_path / "cell.key"
    path.write_text(KEY.hex() + "\n")
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match="open to others .mode 0644"):
        protocol.read_key(str(path))


@pytest.mark.parametrize("text", ["", "abcd\n", KEY.hex() + "00\n", "zz" * 32, KEY.hex() + "\n" + KEY.hex()])
def test_read_key_refuses_a_malformed_key(tmp_path, text):
    path = tmp_path / "cell.key"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="64 hex digits"):
        protocol.read_key(str(path))


def test_read_key_of_a_missing_file_raises_key_file_error(tmp_path):
    with pytest.raises(KeyFileError, match="cannot read"):
        protocol.read_key(str(tmp_path / "none"))


# ---------------------------------------------------------------- handshake (pure)


def shake(server_key=KEY, client_key=KEY, client_role="execd", expect_role=None):
    server = ServerHandshake(server_key, "qmaster", "master1")
    client = ClientHandshake(client_key, client_role, "ws3", expect_role=expect_role)
    auth = client.answer(server.hello())
    return server, client, auth


def test_handshake_with_the_cell_key_proves_both_sides():
    server, client, auth = shake()
    assert server.check_auth(auth) == RemotePeer("execd", "ws3")
    assert client.check_welcome(server.welcome()) == RemotePeer("qmaster", "master1")


def test_key_never_crosses_the_wire():
    server, client, auth = shake()
    server.check_auth(auth)
    wire = json.dumps([server.hello(), auth, server.welcome()])
    assert KEY.hex() not in wire


def test_handshake_with_a_wrong_key_is_refused():
    server, client, auth = shake(client_key=OTHER_KEY)
    with pytest.raises(HandshakeError, match="did not prove the cell key"):
        server.check_auth(auth)


def test_replayed_client_proof_is_refused_on_a_new_connection():
    _, _, recorded = shake()
    fresh = ServerHandshake(KEY, "qmaster", "master1")
    with pytest.raises(HandshakeError, match="did not prove"):
        fresh.check_auth(recorded)


def test_replayed_server_proof_is_refused_by_the_client():
    server, _, auth = shake()
    server.check_auth(auth)
    recorded_welcome = server.welcome()
    server2 = ServerHandshake(KEY, "qmaster", "master1", nonce=server.nonce)  # same hello, even
    client2 = ClientHandshake(KEY, "execd", "ws3")
    client2.answer(server2.hello())
    with pytest.raises(HandshakeError, match="did not prove"):
        client2.check_welcome(recorded_welcome)


def test_server_proof_reflected_as_a_client_proof_is_refused():
    server, client, auth = shake()
    server.check_auth(auth)
    reflected = {**auth, "proof": server.welcome()["proof"]}
    with pytest.raises(HandshakeError):
        ServerHandshake(KEY, "qmaster", "master1", nonce=server.nonce).check_auth(reflected)


def test_a_client_cannot_change_its_role_after_proving():
    server, _, auth = shake()
    with pytest.raises(HandshakeError, match="did not prove"):
        server.check_auth({**auth, "role": "qmaster"})


def test_client_refuses_a_server_of_the_wrong_role():
    server = ServerHandshake(KEY, "execd", "ws4")
    with pytest.raises(HandshakeError, match="expected a qmaster"):
        ClientHandshake(KEY, "execd", "ws3", expect_role="qmaster").answer(server.hello())


def test_client_reports_the_server_refusal():
    server, client, auth = shake(client_key=OTHER_KEY)
    with pytest.raises(HandshakeError, match="refused"):
        client.check_welcome(ServerHandshake.refusal())


@pytest.mark.parametrize(
    "change",
    [{"op": "qstat"}, {"nonce": "00"}, {"proof": "x" * 64}, {"role": ""}, {"name": "n" * 256}, {"proof": None}],
)
def test_malformed_auth_is_refused(change):
    server, _, auth = shake()
    with pytest.raises(HandshakeError):
        server.check_auth({**auth, **change})


def test_hello_of_another_protocol_version_is_refused():
    hello = {**ServerHandshake(KEY, "qmaster", "m").hello(), "protocol": 2}
    with pytest.raises(HandshakeError, match="protocol 2"):
        ClientHandshake(KEY, "execd", "ws3").answer(hello)


# ---------------------------------------------------------------- local peers and blocking client


def test_peer_credentials_of_a_socketpair_are_ours():
    a, b = socket.socketpair()
    with a, b:
        assert protocol.peer_credentials(a) == (os.getpid(), os.getuid(), os.getgid())


def test_peer_credentials_name_the_connecting_process_not_the_server(tmp_path):
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen()
        child = subprocess.Popen(
            [sys.executable, "-c",
             f"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect({path!r}); sys.stdin.read()"],
            stdin=subprocess.PIPE,
        )
        try:
            conn, _ = listener.accept()
            with conn:
                creds = protocol.peer_credentials(conn)
        finally:
            child.communicate(b"")
    assert creds == Credentials(child.pid, os.getuid(), os.getgid())


def test_recv_reads_exactly_one_frame_each_time():
    a, b = socket.socketpair()
    with a, b:
        a.sendall(encode({"n": 1}) + encode({"n": 2}))
        assert protocol.recv(b) == {"n": 1}
        assert protocol.recv(b) == {"n": 2}


def test_recv_at_a_clean_close_raises_connection_closed():
    a, b = socket.socketpair()
    with b:
        a.close()
        with pytest.raises(ConnectionClosed):
            protocol.recv(b)


def test_recv_of_a_cut_frame_raises_protocol_error():
    a, b = socket.socketpair()
    with b:
        a.sendall(encode({"op": "qstat"})[:-2])
        a.close()
        with pytest.raises(ProtocolError, match="middle of a frame"):
            protocol.recv(b)


def test_recv_refuses_garbage_without_waiting_for_a_whole_header():
    a, b = socket.socketpair()
    with a, b:
        b.settimeout(5)
        a.sendall(b"HTTP")
        with pytest.raises(ProtocolError, match="bad magic"):
            protocol.recv(b)


def test_recv_refuses_an_oversized_frame_without_reading_it():
    a, b = socket.socketpair()
    with a, b:
        b.settimeout(5)
        a.sendall(frame(b"", length=2000))
        with pytest.raises(ProtocolError, match="over the limit of 1000"):
            protocol.recv(b, max_payload=1000)


def test_protocol_module_spares_a_command_the_slow_imports():
    """trio, attrs, cattrs never; socket and hashlib (OpenSSL) only when a TCP handshake needs them."""
    slow = ("trio", "attrs", "cattrs", "socket", "hashlib")
    code = f"import sys, minisge.protocol; print(sorted(m for m in {slow!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- trio side


async def echo_handler(request, peer, send_more):
    """Replies with who the peer is; "count" asks for that many replies before the last."""
    op = request["op"]
    if op == "fail":
        raise RuntimeError("handler bug")
    for i in range(request.get("count", 0)):
        await send_more(protocol.ok_reply(i=i))
    if isinstance(peer, Credentials):
        return protocol.ok_reply(op=op, pid=peer.pid, uid=peer.uid, gid=peer.gid)
    return protocol.ok_reply(op=op, role=peer.role, name=peer.name)


@pytest.fixture
async def unix_server(nursery, tmp_path):
    path = str(tmp_path / "qmaster.sock")
    listener = await pt.open_unix_listener(path)
    await nursery.start(trio.serve_listeners, pt.serving(echo_handler), [listener])
    return path


@pytest.fixture
async def tcp_server(nursery):
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    await nursery.start(trio.serve_listeners, pt.serving(echo_handler, KEY, "qmaster", "master1"), listeners)
    return listeners[0].socket.getsockname()[1]


async def test_local_request_is_answered_with_the_kernel_credentials(unix_server):
    async with await pt.open_unix_connection(unix_server) as conn:
        reply = await conn.request({"op": "qstat"})
    assert reply == {"ok": True, "op": "qstat", "pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid()}


async def test_what_a_local_caller_claims_does_not_change_who_it_is(unix_server):
    async with await pt.open_unix_connection(unix_server) as conn:
        reply = await conn.request({"op": "qdel", "uid": 0, "user": "root"})
    assert reply["uid"] == os.getuid()


async def test_several_requests_on_one_connection(unix_server):
    async with await pt.open_unix_connection(unix_server) as conn:
        for op in ("qstat", "qhost", "qconf"):
            assert (await conn.request({"op": op}))["op"] == op


async def test_request_with_several_replies_ends_with_the_final_one(unix_server):
    async with await pt.open_unix_connection(unix_server) as conn:
        replies = await conn.replies({"op": "qsub", "count": 3})
        with pytest.raises(ProtocolError, match="several replies"):
            await conn.request({"op": "qsub", "count": 1})
    assert replies == [
        {"ok": True, "i": 0, "more": True},
        {"ok": True, "i": 1, "more": True},
        {"ok": True, "i": 2, "more": True},
        {"ok": True, "op": "qsub", "pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid()},
    ]


async def test_blocking_client_talks_to_the_trio_daemon(unix_server):
    def command():
        with protocol.connect_unix(unix_server, timeout=5) as sock:
            one = protocol.request(sock, {"op": "qstat"})
            many = list(protocol.iter_replies(sock, {"op": "qsub", "count": 2}))
        return one, many

    one, many = await trio.to_thread.run_sync(command)
    assert one["uid"] == os.getuid()
    assert [r.get("more", False) for r in many] == [True, True, False]


async def test_garbage_closes_that_connection_only(unix_server, caplog):
    async with await pt.open_unix_connection(unix_server) as good:
        assert (await good.request({"op": "qstat"}))["ok"]
        async with await pt.open_unix_connection(unix_server) as bad:
            await bad.stream.send_all(b"GET / HTTP/1.0\r\n\r\n")
            refusal = await bad.receive()
            with pytest.raises(ConnectionClosed):
                await bad.receive()
        assert refusal["ok"] is False and "bad magic" in refusal["error"]
        assert (await good.request({"op": "qhost"}))["op"] == "qhost"
    async with await pt.open_unix_connection(unix_server) as later:
        assert (await later.request({"op": "qconf"}))["ok"]
    assert "closing connection from pid" in caplog.text


async def test_request_without_op_is_refused_and_the_connection_goes_on(unix_server):
    # a well-formed frame that is no request is refused; only a broken frame closes the connection
    async with await pt.open_unix_connection(unix_server) as conn:
        await conn.send({"ok": True})
        reply = await conn.receive()
        assert reply["ok"] is False and "op" in reply["error"]
        assert (await conn.request({"op": "qstat"}))["ok"]


async def test_handler_failure_gets_an_error_reply_and_the_connection_goes_on(unix_server, caplog):
    async with await pt.open_unix_connection(unix_server) as conn:
        reply = await conn.request({"op": "fail"})
        assert reply == {"ok": False, "error": "internal error while handling 'fail'", "rc": 1}
        assert (await conn.request({"op": "qstat"}))["ok"]
    assert "handler bug" in caplog.text


async def test_daemons_with_the_cell_key_connect_over_tcp(tcp_server):
    conn = await pt.open_tcp_connection("127.0.0.1", tcp_server, KEY, "execd", "ws3", expect_role="qmaster")
    async with conn:
        assert conn.peer == RemotePeer("qmaster", "master1")
        reply = await conn.request({"op": "load_report"})
    assert reply == {"ok": True, "op": "load_report", "role": "execd", "name": "ws3"}


async def test_tcp_connection_without_the_key_is_refused_and_logged(tcp_server, caplog):
    caplog.set_level(logging.WARNING, logger="minisge.protocol")
    with pytest.raises(HandshakeError, match="refused"):
        await pt.open_tcp_connection("127.0.0.1", tcp_server, OTHER_KEY, "execd", "intruder")
    assert "refused connection from 127.0.0.1" in caplog.text
    conn = await pt.open_tcp_connection("127.0.0.1", tcp_server, KEY, "execd", "ws3")
    async with conn:
        assert (await conn.request({"op": "qstat"}))["ok"]


async def test_tcp_request_before_the_handshake_is_refused(tcp_server, caplog):
    stream = await trio.open_tcp_stream("127.0.0.1", tcp_server)
    async with pt.Connection(stream) as conn:
        hello = await conn.receive()
        assert hello["op"] == "hello" and "proof" not in hello
        await conn.send({"op": "qdel", "job": 1})
        assert (await conn.receive())["ok"] is False
        with pytest.raises(ConnectionClosed):
            await conn.receive()
    assert "the client did not authenticate" in caplog.text


async def test_blocking_tcp_client_with_the_key(tcp_server):
    def command(key):
        with handshake.connect_tcp("127.0.0.1", tcp_server, key, "execd", "ws3", timeout=5,
                                  expect_role="qmaster") as sock:
            return protocol.request(sock, {"op": "qstat"})

    assert (await trio.to_thread.run_sync(command, KEY))["role"] == "execd"
    with pytest.raises(HandshakeError, match="refused"):
        await trio.to_thread.run_sync(command, OTHER_KEY)


async def test_silent_client_is_dropped_after_the_handshake_timeout():
    a, b = trio.testing.memory_stream_pair()
    with pytest.raises(HandshakeError, match="no answer to hello"):
        await pt.server_handshake(a, FrameDecoder(), KEY, "qmaster", "m", handshake_timeout=0.05)


async def test_a_stale_socket_of_a_dead_daemon_is_replaced(tmp_path):
    path = str(tmp_path / "s")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)
    dead.close()
    listener = await pt.open_unix_listener(path)
    async with listener:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666


async def test_a_live_daemon_socket_is_not_taken_over(unix_server):
    with pytest.raises(OSError, match="another daemon is listening"):
        await pt.open_unix_listener(unix_server)


async def test_a_file_that_is_not_a_socket_is_not_removed(tmp_path):
    path = tmp_path / "s"
    path.write_text("keep me")
    with pytest.raises(FileExistsError):
        await pt.open_unix_listener(str(path))
    assert path.read_text() == "keep me"
