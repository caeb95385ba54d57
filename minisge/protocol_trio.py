"""The daemons' side of the protocol, on trio streams.

The frames, messages and handshake are those of ``minisge.protocol``; this
module only moves them over trio streams and serves connections:

* ``serve_local(stream, handler)`` for a connection on the daemon's Unix
  socket: the caller is who the kernel says (SO_PEERCRED);
* ``serve_remote(stream, handler, key, role, name)`` for a TCP connection:
  the caller must prove the cell key first, or is refused and logged.

Both read requests one after the other and answer each with
``await handler(request, peer, send_more)``: the handler returns the final
reply and may first ``await send_more(reply)`` any number of intermediate
ones (sent with ``"more": true``). A bad frame or message closes that
connection, is logged, and touches nothing else; a handler that raises gets
its request an error reply, and the connection goes on.

For the listening side, ``trio.serve_listeners(partial(serve_local,
handler=h), [await open_unix_listener(path)])``.
"""

from __future__ import annotations

import functools
import logging
import os
import socket as stdsocket
import stat
from typing import Awaitable, Callable

import trio

from minisge.protocol import (
    ClientHandshake,
    ConnectionClosed,
    Credentials,
    FrameDecoder,
    HandshakeError,
    ProtocolError,
    RemotePeer,
    ServerHandshake,
    check_reply,
    check_request,
    encode,
    error_reply,
    is_final,
    peer_credentials,
)

log = logging.getLogger("minisge.protocol")

RECEIVE_SIZE = 64 * 1024
HANDSHAKE_TIMEOUT = 10.0
LISTEN_BACKLOG = 128

Peer = Credentials | RemotePeer
SendMore = Callable[[dict], Awaitable[None]]
Handler = Callable[[dict, Peer, SendMore], Awaitable[dict]]


# ---------------------------------------------------------------- messages on a stream


async def send_message(stream: trio.abc.SendStream, msg: dict) -> None:
    """Send one message."""
    await stream.send_all(encode(msg))


async def recv_message(stream: trio.abc.ReceiveStream, decoder: FrameDecoder) -> dict | None:
    """The next message, or None when the other side closed between frames.

    Reads no more than one chunk beyond the message, which stays in
    ``decoder`` for the next call; so a connection holds at most one frame
    and one chunk in memory.
    """
    while True:
        msg = decoder.next_message()
        if msg is not None:
            return msg
        data = await stream.receive_some(RECEIVE_SIZE)
        if not data:
            decoder.eof()
            return None
        decoder.push(data)


class Connection:
    """A client connection from a daemon: a stream, its decoder, and who is at the other end."""

    def __init__(self, stream: trio.abc.Stream, peer: RemotePeer | None = None):
        self.stream = stream
        self.decoder = FrameDecoder()
        self.peer = peer

    async def send(self, msg: dict) -> None:
        await send_message(self.stream, msg)

    async def receive(self) -> dict:
        """The next message; ConnectionClosed if the other side closed instead."""
        msg = await recv_message(self.stream, self.decoder)
        if msg is None:
            raise ConnectionClosed("the other side closed the connection")
        return msg

    async def request(self, msg: dict) -> dict:
        """Send a request and return its one reply."""
        await self.send(msg)
        reply = check_reply(await self.receive())
        if not is_final(reply):
            raise ProtocolError(f"request {msg.get('op')!r} has several replies: use replies()")
        return reply

    async def replies(self, msg: dict) -> list[dict]:
        """Send a request and return all its replies, the final one last."""
        await self.send(msg)
        replies = [check_reply(await self.receive())]
        while not is_final(replies[-1]):
            replies.append(check_reply(await self.receive()))
        return replies

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


# ---------------------------------------------------------------- handshake


async def server_handshake(
    stream: trio.abc.Stream,
    decoder: FrameDecoder,
    key: bytes,
    role: str,
    name: str,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> RemotePeer:
    """Make the client prove the cell key (and prove it back); who the client is.

    On failure the client is told it was refused and HandshakeError (or
    ProtocolError for a bad frame) is raised: the caller closes and logs.
    """
    shake = ServerHandshake(key, role, name)
    try:
        with trio.fail_after(timeout):
            await send_message(stream, shake.hello())
            msg = await recv_message(stream, decoder)
            if msg is None:
                raise HandshakeError("the client closed the connection during the handshake")
            peer = shake.check_auth(msg)
            await send_message(stream, shake.welcome())
            return peer
    except trio.TooSlowError:
        raise HandshakeError(f"no answer to hello within {timeout} s") from None
    except ProtocolError:
        with trio.move_on_after(1):
            try:
                await send_message(stream, shake.refusal())
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        raise


async def client_handshake(
    stream: trio.abc.Stream,
    decoder: FrameDecoder,
    key: bytes,
    role: str,
    name: str,
    expect_role: str | None = None,
) -> RemotePeer:
    """Prove the cell key to the server and check its proof; who the server is."""
    shake = ClientHandshake(key, role, name, expect_role=expect_role)
    hello = await recv_message(stream, decoder)
    if hello is None:
        raise HandshakeError("the server closed the connection before hello")
    await send_message(stream, shake.answer(hello))
    welcome = await recv_message(stream, decoder)
    if welcome is None:
        raise HandshakeError("the server closed the connection: refused")
    return shake.check_welcome(welcome)


async def open_tcp_connection(
    host: str,
    port: int,
    key: bytes,
    role: str,
    name: str,
    expect_role: str | None = None,
    timeout: float = HANDSHAKE_TIMEOUT,
) -> Connection:
    """A TCP connection to another daemon, authenticated both ways with the cell key."""
    stream = await trio.open_tcp_stream(host, port)
    try:
        conn = Connection(stream)
        with trio.fail_after(timeout):
            conn.peer = await client_handshake(stream, conn.decoder, key, role, name, expect_role)
        return conn
    except trio.TooSlowError:
        await trio.aclose_forcefully(stream)
        raise HandshakeError(f"{host}:{port} did not finish the handshake within {timeout} s") from None
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


async def open_unix_connection(path: str) -> Connection:
    """A connection to a daemon's local socket (the kernel tells it who we are)."""
    return Connection(await trio.open_unix_socket(path))


# ---------------------------------------------------------------- serving


async def serve_local(stream: trio.SocketStream, handler: Handler) -> None:
    """Serve one connection on the local Unix socket; the peer is the kernel's
    ``Credentials(pid, uid, gid)`` of the caller. Never raises for the caller's faults."""
    async with stream:
        try:
            peer = peer_credentials(stream.socket)
        except OSError as err:
            log.warning("local connection without peer credentials (%s): closed", err)
            return
        await _serve_requests(stream, FrameDecoder(), peer, describe(peer), handler)


async def serve_remote(stream: trio.SocketStream, handler: Handler, key: bytes, role: str, name: str) -> None:
    """Serve one TCP connection: the caller proves the cell key or is refused
    and logged; then its requests are served with a ``RemotePeer(role, name)``."""
    async with stream:
        address = peer_address(stream)
        decoder = FrameDecoder()
        try:
            peer = await server_handshake(stream, decoder, key, role, name)
        except ProtocolError as err:
            log.warning("refused connection from %s: %s", address, err)
            return
        except (trio.BrokenResourceError, trio.ClosedResourceError) as err:
            log.warning("refused connection from %s: it went away during the handshake (%s)", address, err)
            return
        log.info("%s %s connected from %s", peer.role, peer.name, address)
        await _serve_requests(stream, decoder, peer, f"{describe(peer)} at {address}", handler)


def serving(handler: Handler, key: bytes | None = None, role: str = "", name: str = ""):
    """The per-connection function for ``trio.serve_listeners``: local without a key, remote with one."""
    if key is None:
        return functools.partial(serve_local, handler=handler)
    return functools.partial(serve_remote, handler=handler, key=key, role=role, name=name)


async def _serve_requests(stream, decoder: FrameDecoder, peer: Peer, who: str, handler: Handler) -> None:
    """Answer requests until the peer closes; a protocol fault closes this connection only."""
    try:
        while (request := await recv_message(stream, decoder)) is not None:
            await _answer(stream, request, peer, who, handler)
    except ProtocolError as err:
        log.warning("closing connection from %s: %s", who, err)
        with trio.move_on_after(1):
            try:
                await send_message(stream, error_reply(f"protocol error: {err}"))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        log.info("connection from %s went away", who)


async def _answer(stream, request: dict, peer: Peer, who: str, handler: Handler) -> None:
    """One request: the handler's intermediate replies, then its final one.

    A handler that raises (a bug) or returns something that is not a reply
    gets the caller an error reply; the connection stays open.
    """
    op = check_request(request)

    async def send_more(reply: dict) -> None:
        await stream.send_all(encode({**check_reply(reply), "more": True}))

    try:
        reply = await handler(request, peer, send_more)
        reply = dict(check_reply(reply))
        reply.pop("more", None)
        frame = encode(reply)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        raise
    except Exception:
        log.exception("request %r from %s failed", op, who)
        frame = encode(error_reply(f"internal error while handling {op!r}", rc=1))
    await stream.send_all(frame)


def describe(peer: Peer) -> str:
    """A peer for the log."""
    if isinstance(peer, Credentials):
        return f"pid {peer.pid} uid {peer.uid} gid {peer.gid}"
    return f"{peer.role} {peer.name}"


def peer_address(stream) -> str:
    """``host:port`` of the other end of a TCP stream, for the log."""
    try:
        host, port = stream.socket.getpeername()[:2]
    except (OSError, ValueError, AttributeError):
        return "an unknown address"
    return f"{host}:{port}"


_address = peer_address  # the name minisge.remote first used


# ---------------------------------------------------------------- listening


async def open_unix_listener(path: str, mode: int = 0o666, backlog: int = LISTEN_BACKLOG) -> trio.SocketListener:
    """Listen on a Unix socket at ``path``, open to every local user (``mode``):
    who they are is asked of the kernel on each connection.

    A socket left by a dead daemon is replaced; a live one, or a file that is
    not a socket, is an error (another daemon is running, or a wrong path).
    """
    await _remove_stale_socket(path)
    sock = trio.socket.socket(stdsocket.AF_UNIX, stdsocket.SOCK_STREAM)
    try:
        await sock.bind(path)
        os.chmod(path, mode)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return trio.SocketListener(sock)


async def _remove_stale_socket(path: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise FileExistsError(f"{path} exists and is not a socket")
    probe = trio.socket.socket(stdsocket.AF_UNIX, stdsocket.SOCK_STREAM)
    try:
        await probe.connect(path)
    except ConnectionRefusedError:
        os.unlink(path)
        return
    finally:
        probe.close()
    raise OSError(f"another daemon is listening on {path}")
