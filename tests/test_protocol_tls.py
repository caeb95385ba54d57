"""TLS between hosts (minisge.protocol.tls): what crosses the network is
encrypted and authenticated; a peer without the cell certificate, a byte
altered or injected on the way, is refused and the daemon goes on."""

from __future__ import annotations

import logging
import os
import stat

import pytest
import trio

from minisge import protocol
from minisge.daemon.cell_certificate import write_cell_certificate
from minisge.protocol import HandshakeError, KeyFileError, tls
from minisge.protocol import trio_streams as pt

KEY = bytes(range(32))
SECRET = "echo the-secret-script-line"


async def echo_handler(request, peer, send_more):
    return protocol.ok_reply(op=request["op"], text=request.get("text", ""), name=peer.name)


@pytest.fixture
def cert(tmp_path):
    path = str(tmp_path / "cell_tls.pem")
    write_cell_certificate(path, "default")
    return path


@pytest.fixture
def other_cert(tmp_path):
    path = str(tmp_path / "other_tls.pem")
    write_cell_certificate(path, "other")
    return path


@pytest.fixture
async def tls_server(nursery, cert):
    """A daemon's TCP port in TLS with the cell certificate; its handled requests are kept."""
    seen: list[dict] = []

    async def handler(request, peer, send_more):
        seen.append(request)
        return await echo_handler(request, peer, send_more)

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    serve = pt.serving(handler, KEY, "qmaster", "master1", tls=tls.server_context(cert))
    await nursery.start(trio.serve_listeners, serve, listeners)
    return listeners[0].socket.getsockname()[1], seen


async def _ask(port: int, cert: str, text: str = "") -> dict:
    conn = await pt.open_tcp_connection("127.0.0.1", port, KEY, "execd", "ws1", expect_role="qmaster",
                                        tls=tls.client_context(cert))
    async with conn:
        return await conn.request({"op": "load_report", "text": text})


def test_init_makes_a_certificate_closed_to_others_and_refuses_to_replace_it(cert):
    assert stat.S_IMODE(os.stat(cert).st_mode) == 0o600
    text = open(cert).read()
    assert "PRIVATE KEY" in text and "CERTIFICATE" in text
    with pytest.raises(FileExistsError):
        write_cell_certificate(cert, "default")


def test_a_certificate_open_to_others_or_missing_is_refused(cert, tmp_path):
    os.chmod(cert, 0o644)
    with pytest.raises(KeyFileError, match="chmod 600"):
        tls.server_context(cert)
    with pytest.raises(KeyFileError, match="cannot read the cell certificate"):
        tls.client_context(str(tmp_path / "none.pem"))
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    os.chmod(junk, 0o600)
    with pytest.raises(KeyFileError, match="not a cell certificate"):
        tls.client_context(str(junk))


async def test_daemons_with_the_cell_certificate_talk_in_tls(tls_server, cert):
    port, seen = tls_server
    reply = await _ask(port, cert, SECRET)
    assert reply == {"ok": True, "op": "load_report", "text": SECRET, "name": "ws1"}
    assert seen[-1]["text"] == SECRET


async def test_a_peer_with_another_certificate_is_refused_both_ways(tls_server, cert, other_cert, caplog):
    caplog.set_level(logging.WARNING, logger="minisge.protocol")
    port, seen = tls_server
    with pytest.raises((HandshakeError, trio.BrokenResourceError)):
        await _ask(port, other_cert)
    assert not seen
    # a qmaster of another cell (or an impostor) is refused by the execd
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    async with trio.open_nursery() as nursery:
        serve = pt.serving(echo_handler, KEY, "qmaster", "impostor", tls=tls.server_context(other_cert))
        await nursery.start(trio.serve_listeners, serve, listeners)
        with pytest.raises(HandshakeError, match="TLS with the cell certificate failed"):
            await _ask(listeners[0].socket.getsockname()[1], cert)
        nursery.cancel_scope.cancel()
    # and the first daemon goes on
    assert (await _ask(port, cert, "still here"))["text"] == "still here"


async def test_a_plain_tcp_peer_with_a_well_formed_hello_is_refused(tls_server, cert, caplog):
    caplog.set_level(logging.WARNING, logger="minisge.protocol")
    port, seen = tls_server
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(protocol.encode({"op": "auth", "role": "execd", "name": "x", "nonce": "0" * 64,
                                               "proof": "0" * 64}))
        with trio.fail_after(30):
            while await stream.receive_some(4096):
                pass  # what TLS says back (an alert), then the close: logged before it
    assert "refused connection from 127.0.0.1" in caplog.text
    assert "TLS with the cell certificate failed" in caplog.text
    assert not seen
    assert (await _ask(port, cert, "after"))["text"] == "after"


async def _tampering_proxy(listener: trio.SocketListener, port: int, tamper, caught: list[bytes]) -> None:
    """Accept one connection and relay it to ``port``; what goes from client to
    server passes ``tamper(data, offset) -> bytes`` first (an attacker on the wire)."""
    client = await listener.accept()
    server = await trio.open_tcp_stream("127.0.0.1", port)

    async def pipe(src, dst, change):
        offset = 0
        try:
            while data := await src.receive_some(65536):
                caught.append(bytes(data))
                out = change(data, offset) if change else data
                offset += len(data)
                await dst.send_all(out)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(dst)

    async with client, server, trio.open_nursery() as nursery:
        nursery.start_soon(pipe, client, server, tamper)
        nursery.start_soon(pipe, server, client, None)


async def _through_proxy(nursery, port: int, cert: str, tamper, after_handshake: bool):
    """A connection through a tampering proxy; tampering starts with the first
    bytes after the handshakes when ``after_handshake``. The error the client
    saw (None if its request was answered) and the bytes seen on the wire."""
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    caught: list[bytes] = []
    armed = [not after_handshake, 0]

    def change(data, offset):
        if not armed[0]:
            armed[1] = offset + len(data)
            return data
        return tamper(data, offset - armed[1])

    nursery.start_soon(_tampering_proxy, listener, port, change, caught)
    conn = await pt.open_tcp_connection("127.0.0.1", listener.socket.getsockname()[1], KEY, "execd", "ws1",
                                        expect_role="qmaster", tls=tls.client_context(cert))
    armed[0] = True
    try:
        async with conn:
            with trio.fail_after(30):
                await conn.request({"op": "load_report", "text": SECRET})
    except (protocol.ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
        return err, caught
    return None, caught


def _flip(data: bytes, offset: int) -> bytes:
    """Flip one bit in the middle of what is sent."""
    b = bytearray(data)
    b[len(b) // 2] ^= 0x01
    return bytes(b)


def _inject(data: bytes, offset: int) -> bytes:
    """Put a well-formed frame of the attacker's before what is sent."""
    return protocol.encode({"op": "load_report", "text": "injected"}) + data


@pytest.mark.parametrize("tamper", [_flip, _inject], ids=["altered byte", "injected frame"])
async def test_an_altered_or_injected_byte_stream_is_refused_and_the_daemon_goes_on(tls_server, cert, nursery,
                                                                                   tamper, caplog):
    port, seen = tls_server
    err, caught = await _through_proxy(nursery, port, cert, tamper, after_handshake=True)
    assert err is not None  # the server closed the connection instead of answering
    assert not any(r.get("text") in (SECRET, "injected") for r in seen)  # nothing of it was acted on
    assert (await _ask(port, cert, "next"))["text"] == "next"  # the daemon goes on


async def test_nothing_readable_crosses_the_wire(tls_server, cert, nursery):
    port, seen = tls_server
    err, caught = await _through_proxy(nursery, port, cert, lambda data, offset: data, after_handshake=True)
    assert err is None and seen[-1]["text"] == SECRET
    wire = b"".join(caught)
    assert SECRET.encode() not in wire and b"load_report" not in wire and b"MSGE" not in wire
    # the names of the cell-key handshake are inside TLS too
    assert b"master1" not in wire and b"ws1" not in wire
