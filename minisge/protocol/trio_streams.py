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
ones (sent with ``"more": true``).  A handler with a ``begin(request, peer,
answer)`` method (:data:`Begin`) may take a request at once instead, with
no task of its own, and call ``answer(reply)`` when its answer is ready (a
plain submission, once its group commit is done).  Requests sent ahead are
begun in order, every whole frame of a receive before the next receive, and
answered in order (:class:`Turn`); the replies ready together go in one send
(:class:`Replies`). A bad frame closes that connection, is
logged, and touches nothing else; whether a message is a valid request is
the handler's to check (:func:`minisge.protocol.catalogue.validate`), and
a handler that raises gets its request an error reply: the connection goes on.
What a daemon drops is logged through a :class:`DropLog`, a few lines a minute;
what it refuses to a peer through a :class:`PeerLog`, a line per peer a minute.

Limits, so that no caller can exhaust a daemon (:class:`LocalLimits`):
a frame before the cell-key handshake is tiny (``MAX_HANDSHAKE_PAYLOAD``);
on the Unix socket a request's frame is small unless its operation allows
more (:func:`minisge.protocol.catalogue.frame_limits`: a job script in
``submit``), a big payload is decoded off the event loop, and each user has
a budget of bytes in flight, a number of open connections and a time to send
a request before an idle connection is closed (root and, where the handler
says so, managers are exempt from the first two).

For the listening side, ``trio.serve_listeners(partial(serve_local,
handler=h), [await open_unix_listener(path)])``.
"""

from __future__ import annotations

import collections
import contextvars
import functools
import logging
import math
import os
import resource
import socket as stdsocket
import ssl
import stat
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from minisge.protocol import (
    MAX_HANDSHAKE_PAYLOAD,
    MAX_PAYLOAD,
    ConnectionClosed,
    Credentials,
    FrameDecoder,
    HandshakeError,
    ProtocolError,
    RemotePeer,
    catalogue,
    check_reply,
    encode,
    error_reply,
    is_final,
    peer_credentials,
)
from minisge.protocol.handshake import ClientHandshake, ServerHandshake

log = logging.getLogger("minisge.protocol")

RECEIVE_SIZE = 64 * 1024
BIG_RECEIVE_SIZE = 1024 * 1024  # while a big frame comes: fewer, larger reads
THREAD_DECODE_SIZE = 1024 * 1024  # a payload this big is decoded in a worker thread
HANDSHAKE_TIMEOUT = 10.0
LISTEN_BACKLOG = 128

# LocalLimits' defaults (and the environment variables a daemon reads them from)
IDLE_TIMEOUT = 60.0  # MINISGE_IDLE_TIMEOUT: seconds a local connection may wait before its request is complete
USER_BYTES = 2 * MAX_PAYLOAD + 16 * 1024 * 1024  # two biggest submissions at once
FD_RESERVE = 256  # descriptors no unprivileged caller can take: root's commands, the spool, the shepherds

Message = dict[str, Any]
Peer = Credentials | RemotePeer
SendMore = Callable[[Message], Awaitable[None]]
Handler = Callable[[Message, Peer, SendMore], Awaitable[Message]]
#: a handler's ``begin(request, peer, answer)``: True when it took the request at once and will
#: call ``answer(final reply)`` (see :func:`serve_local`); False for the handler's coroutine to answer it
Begin = Callable[[Message, Peer, Callable[[Message], None]], bool]
Serve = Callable[[trio.SocketStream], Awaitable[None]]


# ---------------------------------------------------------------- messages on a stream


async def send_message(stream: trio.abc.SendStream, msg: Message) -> None:
    """Send one message."""
    await stream.send_all(encode(msg))


async def recv_message(stream: trio.abc.ReceiveStream, decoder: FrameDecoder) -> Message | None:
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

    async def send(self, msg: Message) -> None:
        await send_message(self.stream, msg)

    async def receive(self) -> Message:
        """The next message; ConnectionClosed if the other side closed instead."""
        msg = await recv_message(self.stream, self.decoder)
        if msg is None:
            raise ConnectionClosed("the other side closed the connection")
        return msg

    async def request(self, msg: Message) -> Message:
        """Send a request and return its one reply."""
        await self.send(msg)
        reply = check_reply(await self.receive())
        if not is_final(reply):
            raise ProtocolError(f"request {msg.get('op')!r} has several replies: use replies()")
        return reply

    async def replies(self, msg: Message) -> list[Message]:
        """Send a request and return all its replies, the final one last."""
        await self.send(msg)
        replies = [check_reply(await self.receive())]
        while not is_final(replies[-1]):
            replies.append(check_reply(await self.receive()))
        return replies

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ---------------------------------------------------------------- handshake


async def server_handshake(
    stream: trio.abc.Stream,
    decoder: FrameDecoder,
    key: bytes,
    role: str,
    name: str,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
) -> RemotePeer:
    """Make the client prove the cell key (and prove it back); who the client is.

    On failure the client is told it was refused and HandshakeError (or
    ProtocolError for a bad frame) is raised: the caller closes and logs.
    """
    shake = ServerHandshake(key, role, name)
    limit, decoder.max_payload = decoder.max_payload, MAX_HANDSHAKE_PAYLOAD  # nobody buffers much unproven
    try:
        with trio.fail_after(handshake_timeout):
            await send_message(stream, shake.hello())
            msg = await recv_message(stream, decoder)
            if msg is None:
                raise HandshakeError("the client closed the connection during the handshake")
            peer = shake.check_auth(msg)
            await send_message(stream, shake.welcome())
            decoder.max_payload = limit
            return peer
    except trio.TooSlowError:
        raise HandshakeError(f"no answer to hello within {handshake_timeout} s") from None
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
    limit, decoder.max_payload = decoder.max_payload, MAX_HANDSHAKE_PAYLOAD  # the server is not proven yet
    hello = await recv_message(stream, decoder)
    if hello is None:
        raise HandshakeError("the server closed the connection before hello")
    await send_message(stream, shake.answer(hello))
    welcome = await recv_message(stream, decoder)
    if welcome is None:
        raise HandshakeError("the server closed the connection: refused")
    server = shake.check_welcome(welcome)
    decoder.max_payload = limit
    return server


async def open_tcp_connection(
    host: str,
    port: int,
    key: bytes,
    role: str,
    name: str,
    expect_role: str | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
    tls: ssl.SSLContext | None = None,
) -> Connection:
    """A TCP connection to another daemon, authenticated both ways with the
    cell key; with ``tls`` (:func:`minisge.protocol.tls.client_context`, what
    the daemons always give), inside TLS with the cell certificate."""
    tcp = await trio.open_tcp_stream(host, port)
    stream: trio.abc.Stream = tcp
    try:
        with trio.fail_after(handshake_timeout):
            if tls is not None:
                stream = await start_tls(tcp, tls, server_side=False)
            conn = Connection(stream)
            conn.peer = await client_handshake(stream, conn.decoder, key, role, name, expect_role)
        return conn
    except trio.TooSlowError:
        await trio.aclose_forcefully(stream)
        raise HandshakeError(f"{host}:{port} did not finish the handshake within {handshake_timeout} s") from None
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


async def start_tls(tcp: trio.SocketStream, tls: ssl.SSLContext,
                    server_side: bool) -> trio.SSLStream[trio.SocketStream]:
    """TLS over ``tcp`` with the cell certificate (:mod:`minisge.protocol.tls`),
    its handshake done; HandshakeError if the other end does not prove the
    certificate or does not speak TLS."""
    stream = trio.SSLStream(tcp, tls, server_side=server_side)
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as err:
        cause = err.__cause__
        raise HandshakeError(f"TLS with the cell certificate failed: {cause or 'the connection broke'}") from None
    return stream


async def open_unix_connection(path: str) -> Connection:
    """A connection to a daemon's local socket (the kernel tells it who we are)."""
    return Connection(await trio.open_unix_socket(path))


# ---------------------------------------------------------------- serving


class Refused(ProtocolError):
    """A local caller went over one of its limits (:class:`LocalLimits`): told so, and closed."""


class IdleConnection(Exception):
    """A local connection sent no whole request within the idle timeout."""


class LocalLimits:
    """What the callers of one daemon's Unix socket may hold, per user (the
    kernel's uid): ``user_connections`` open connections, ``user_bytes`` of
    requests in flight (announced by their frames' headers, from the header
    to the reply), and ``idle_timeout`` seconds to complete a request once
    connected or answered (a request being handled, ``qsub -sync y`` waiting
    for its job, is not idle).  ``total_connections`` caps the connections of
    all unprivileged users together, so that root still gets a descriptor.
    ``privileged(uid)`` (root always) is exempt from the counts, asked only
    when a count would refuse.  One object per listening socket: it holds
    the counts of that socket's connections."""

    def __init__(
        self,
        user_connections: int = 256,
        total_connections: int = 1024,
        user_bytes: int = USER_BYTES,
        idle_timeout: float = IDLE_TIMEOUT,
        privileged: Callable[[int], bool] | None = None,
        refusals: PeerLog | None = None,
    ):
        self.user_connections = user_connections
        self.total_connections = total_connections
        self.user_bytes = user_bytes
        self.idle_timeout = idle_timeout
        self.privileged = privileged or (lambda uid: False)
        self.refusals = refusals or PeerLog(log)
        self.connections: dict[int, int] = {}  # uid -> open connections counted
        self.counted = 0  # of all unprivileged users
        self.in_flight: dict[int, int] = {}  # uid -> bytes of requests received or being received

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], nofile: int | None = None,
                     privileged: Callable[[int], bool] | None = None) -> LocalLimits:
        """The limits for a daemon with ``nofile`` descriptors (its RLIMIT_NOFILE
        soft limit): ``MINISGE_IDLE_TIMEOUT`` seconds (default 60) and
        ``MINISGE_USER_CONNECTIONS`` per user (default: an eighth of the
        descriptors not kept back, 32 to 1024), when set to a number."""
        if nofile is None:
            nofile = descriptor_limit()
        total = max(16, nofile - max(FD_RESERVE, nofile // 8))
        per_user = max(32, min(1024, total // 8))
        idle = IDLE_TIMEOUT
        try:
            per_user = max(1, int(environ.get("MINISGE_USER_CONNECTIONS", per_user)))
        except ValueError:
            log.warning("MINISGE_USER_CONNECTIONS=%.32r is not a number: %d", environ["MINISGE_USER_CONNECTIONS"],
                        per_user)
        try:
            idle = float(environ.get("MINISGE_IDLE_TIMEOUT", idle))
            if not 0 < idle < 1e9:
                raise ValueError
        except ValueError:
            idle = IDLE_TIMEOUT
            log.warning("MINISGE_IDLE_TIMEOUT=%.32r is not a positive number: %g", environ["MINISGE_IDLE_TIMEOUT"],
                        idle)
        return cls(user_connections=per_user, total_connections=total, idle_timeout=idle, privileged=privileged)

    def is_privileged(self, uid: int) -> bool:
        return uid == 0 or self.privileged(uid)

    def admit(self, uid: int) -> str | None:
        """Count a new connection of ``uid``; why it is refused instead (nothing counted)."""
        if uid == 0:
            return None  # root is never counted
        mine = self.connections.get(uid, 0)
        if mine >= self.user_connections or self.counted >= self.total_connections:
            if self.is_privileged(uid):
                return None
            if mine >= self.user_connections:
                return f"max. connection count reached (uid {uid} holds {mine} connections)"
            return f"max. connection count reached ({self.counted} connections of users)"
        self.connections[uid] = mine + 1
        self.counted += 1
        return None

    def leave(self, uid: int) -> None:
        """A connection ``admit`` counted is closed."""
        mine = self.connections.get(uid, 0)
        if mine <= 0:
            return  # a privileged caller's, never counted
        if mine == 1:
            del self.connections[uid]
        else:
            self.connections[uid] = mine - 1
        self.counted -= 1

    def reserve(self, uid: int, size: int) -> None:
        """``size`` more bytes in flight for ``uid``, or Refused."""
        held = self.in_flight.get(uid, 0)
        if held + size > self.user_bytes and held and not self.is_privileged(uid):
            raise Refused(f"uid {uid} has {held} bytes of requests in flight: {size} more is over the limit "
                          f"of {self.user_bytes}")
        self.in_flight[uid] = held + size

    def release(self, uid: int, size: int) -> None:
        held = self.in_flight.get(uid, 0) - size
        if held > 0:
            self.in_flight[uid] = held
        else:
            self.in_flight.pop(uid, None)


def descriptor_limit() -> int:
    """This process's RLIMIT_NOFILE soft limit."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


async def serve_local(stream: trio.SocketStream, handler: Handler, limits: LocalLimits | None = None) -> None:
    """Serve one connection on the local Unix socket; the peer is the kernel's
    ``Credentials(pid, uid, gid)`` of the caller, held to ``limits``. Never
    raises for the caller's faults."""
    limits = limits or LocalLimits()
    async with stream:
        try:
            peer = peer_credentials(stream.socket)
        except OSError as err:
            log.warning("local connection without peer credentials (%s): closed", err)
            return
        refusal = limits.admit(peer.uid)
        if refusal is not None:
            limits.refusals.note(f"uid {peer.uid}", f"refused a connection of uid {peer.uid}: {refusal}")
            await _send_refusal(stream, f"error: commlib error: {refusal}")
            return
        try:
            decoder = FrameDecoder(catalogue.max_frame(catalogue.COMMAND), catalogue.frame_limits(catalogue.COMMAND))
            await _serve_requests(stream, decoder, peer, describe(peer), handler, limits)
        finally:
            limits.leave(peer.uid)


async def serve_remote(stream: trio.SocketStream, handler: Handler, key: bytes, role: str, name: str,
                       refusals: PeerLog | None = None, tls: ssl.SSLContext | None = None) -> None:
    """Serve one TCP connection: the caller proves the cell certificate (with
    ``tls``) and the cell key or is refused and logged (``refusals``: a line
    per address a minute); then its requests are served with a
    ``RemotePeer(role, name)``."""
    async with stream:
        decoder = FrameDecoder()
        accepted = await accept_remote(stream, decoder, key, role, name, refusals or PeerLog(log), tls)
        if accepted is None:
            return
        secured, peer = accepted
        address = peer_address(stream)
        log.info("%s %s connected from %s", peer.role, peer.name, address)
        await _serve_requests(secured, decoder, peer, f"{describe(peer)} at {address}", handler)


async def accept_remote(stream: trio.SocketStream, decoder: FrameDecoder, key: bytes, role: str, name: str,
                        refusals: PeerLog, tls: ssl.SSLContext | None = None,
                        handshake_timeout: float = HANDSHAKE_TIMEOUT) -> tuple[trio.abc.Stream, RemotePeer] | None:
    """The handshakes of a TCP connection: TLS with the cell certificate (with
    ``tls``), then the cell key.  The stream to go on with (TLS over
    ``stream``, or ``stream`` itself) and who the client proved to be, or
    None when it was refused (told so, and noted in ``refusals``)."""
    secured: trio.abc.Stream = stream
    try:
        if tls is not None:
            with trio.fail_after(handshake_timeout):
                secured = await start_tls(stream, tls, server_side=True)
        return secured, await server_handshake(secured, decoder, key, role, name, handshake_timeout)
    except trio.TooSlowError:
        reason = f"no TLS handshake within {handshake_timeout} s"
    except ProtocolError as err:
        reason = str(err)
    except (trio.BrokenResourceError, trio.ClosedResourceError) as err:
        reason = f"it went away during the handshake ({err})"
    refusals.note(peer_host(stream), f"refused connection from {peer_address(stream)}: {reason}")
    return None


def serving(handler: Handler, key: bytes | None = None, role: str = "", name: str = "",
            limits: LocalLimits | None = None, tls: ssl.SSLContext | None = None) -> Serve:
    """The per-connection function for ``trio.serve_listeners``: local without
    a key (held to ``limits``, shared by all its connections: by default the
    environment's, see :meth:`LocalLimits.from_environ`), remote with one
    (and TLS with the cell certificate when given ``tls``)."""
    if key is None:
        return functools.partial(serve_local, handler=handler, limits=limits or LocalLimits.from_environ(os.environ))
    return functools.partial(serve_remote, handler=handler, key=key, role=role, name=name, refusals=PeerLog(log),
                             tls=tls)


async def _send_refusal(stream: trio.abc.Stream, text: str) -> None:
    """Tell a caller it is refused, if it listens within a second."""
    with trio.move_on_after(1):
        try:
            await send_message(stream, error_reply(text))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


class Turn:
    """One request of a connection and its place in the order of replies.
    Requests are begun one after the other, as they come, and their replies
    go in the order of the requests: a turn holds its replies, encoded,
    until every earlier request's final reply is sent (:class:`Replies`).
    A request handled by a task of its own (the handler's coroutine) lets
    the next one begin when it is done, or earlier when it has done the part
    later requests may depend on (:func:`let_next_request_begin`: a
    submission numbered and queued for its group commit); it may wait for
    the earlier ones' answers (:func:`earlier_requests_answered`).  One the
    handler takes at once (``begin``, see :func:`serve_local`) is answered
    with :meth:`answer`, whenever its answer is ready, with no task."""

    __slots__ = ("replies", "op", "size", "frames", "final", "sent", "released", "answered")

    def __init__(self, replies: Replies, op: object, size: int) -> None:
        self.replies = replies
        self.op = op  # the request's "op", for the log
        self.size = size  # bytes of its frame held in the caller's budget (LocalLimits)
        self.frames: list[bytes] = []  # its replies, encoded, not yet handed to the stream
        self.final = False  # its final reply is among them (or sent)
        self.sent = False  # its final reply is sent (or the connection failed)
        self.released: trio.Event | None = None  # a task handles it: the connection may begin its next request
        self.answered: trio.Event | None = None  # made when someone waits for ``sent``

    def push(self, frame: bytes, final: bool) -> None:
        """One more reply of this request (its final one last): sent once the
        earlier requests' final replies are."""
        if self.final:  # a handler that answers twice: its first answer stands
            log.error("request %.64r was answered twice: the second answer dropped", self.op)
            return
        self.frames.append(frame)
        self.final = final
        pending = self.replies.pending
        if pending and pending[0] is self:
            self.replies.wake.set()

    def answer(self, reply: Message) -> None:
        """The request's final reply, from a handler that took it at once."""
        self.push(final_frame(reply, self.op, self.replies.who), True)

    async def wait_answered(self) -> None:
        """Until its final reply is sent."""
        if not self.sent:
            if self.answered is None:
                self.answered = trio.Event()
            await self.answered.wait()

    async def wait_earlier(self) -> None:
        """Until every earlier request of the connection is answered."""
        pending = self.replies.pending
        while pending and pending[0] is not self and not self.sent:
            await pending[0].wait_answered()


def final_frame(reply: Message, op: object, who: str) -> bytes:
    """The frame of a handler's final reply, or of an error reply when what
    it gave is not a reply (a bug: logged)."""
    try:
        reply = dict(check_reply(reply))
        reply.pop("more", None)
        return encode(reply)
    except Exception:
        log.exception("request %.64r from %s failed", op, who)
        return encode(error_reply(f"internal error while handling {str(op)[:64]!r}", rc=1))


class Replies:
    """The replies of one connection, sent in the order of its requests
    (``pending``: the turns begun whose final reply is not yet sent).  Its
    writer (:meth:`run`, a task of the connection) sends every reply that
    is ready in one send, however many requests it answers: a batch of
    submissions made durable by one sync is answered with one send."""

    def __init__(self, stream: trio.abc.Stream, who: str, limits: LocalLimits | None, uid: int) -> None:
        self.stream = stream
        self.who = who
        self.limits = limits
        self.uid = uid
        self.pending: collections.deque[Turn] = collections.deque()
        self.wake = trio.Event()  # the head of ``pending`` has replies to send
        self.progress: trio.Event | None = None  # made when the reader waits for a turn to be answered
        self.closing = False  # no more requests: the writer ends once ``pending`` is sent
        # the idle timer of the request being received (with limits): its answers' ends restart it
        self.idle_deadline = trio.current_time() + limits.idle_timeout if limits is not None else math.inf
        self.idle: trio.CancelScope | None = None

    async def run(self, connection: trio.CancelScope) -> None:
        """The writer: until :meth:`close`, or the connection fails (then
        ``connection`` is cancelled, its requests with it)."""
        pending = self.pending
        try:
            while True:
                await self.wake.wait()
                self.wake = trio.Event()
                while pending:
                    chunks: list[bytes] = []
                    done = 0
                    for turn in pending:
                        if turn.frames:
                            chunks += turn.frames
                            turn.frames = []
                        if not turn.final:
                            break
                        done += 1
                    if not chunks:
                        break
                    await self.stream.send_all(chunks[0] if len(chunks) == 1 else b"".join(chunks))
                    if done:
                        self.finished(done)
                if self.closing and not pending:
                    return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            log.info("connection from %s went away", self.who)
            connection.cancel()

    def finished(self, count: int) -> None:
        """The first ``count`` turns' final replies are sent."""
        limits = self.limits
        for _ in range(count):
            turn = self.pending.popleft()
            turn.sent = True
            if turn.answered is not None:
                turn.answered.set()
            if limits is not None and turn.size:
                limits.release(self.uid, turn.size)
        if limits is not None:
            # the caller had its answer: it may idle from now (a request begun later still waits
            # for this one's reply, so an earlier request never runs past the timer)
            self.idle_deadline = trio.current_time() + limits.idle_timeout
            if self.idle is not None:
                self.idle.deadline = self.idle_deadline
        if self.progress is not None:
            self.progress.set()
            self.progress = None

    async def turn_answered(self) -> None:
        """Until one more turn is answered."""
        if self.progress is None:
            self.progress = trio.Event()
        await self.progress.wait()

    async def all_answered(self) -> None:
        """Until every request begun is answered (or the connection failed)."""
        while self.pending:
            await self.pending[-1].wait_answered()

    def close(self) -> None:
        """No more requests: the writer ends once the replies are sent."""
        self.closing = True
        self.wake.set()

    def drop(self) -> None:
        """The connection is over: what its requests held is given back, and
        who waits for their answers goes on (they will never be sent)."""
        while self.pending:
            turn = self.pending.popleft()
            turn.sent = True
            if turn.answered is not None:
                turn.answered.set()
            if self.limits is not None and turn.size:
                self.limits.release(self.uid, turn.size)

    async def receive(self, size: int) -> bytes | bytearray:
        """The stream's next bytes (b"" at its end); with limits within the
        idle timer, else IdleConnection."""
        if self.limits is None:
            return await self.stream.receive_some(size)
        with trio.CancelScope(deadline=self.idle_deadline) as scope:
            self.idle = scope
            try:
                return await self.stream.receive_some(size)
            finally:
                self.idle = None
        raise IdleConnection


#: the request the current task answers (:class:`Turn`), None outside a connection's answer
CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar("CURRENT_TURN", default=None)
MAX_IN_FLIGHT = 64  # requests of one connection begun and not yet answered


def let_next_request_begin() -> None:
    """A handler's word that the connection may read and begin its next
    request while this one goes on (its reply still comes first)."""
    turn = CURRENT_TURN.get()
    if turn is not None and turn.released is not None:
        turn.released.set()


async def earlier_requests_answered() -> None:
    """Wait until every earlier request of this connection is answered: what
    a handler does that must see their effects (all but plain submissions)."""
    turn = CURRENT_TURN.get()
    if turn is not None:
        await turn.wait_earlier()


async def _serve_requests(stream: trio.abc.Stream, decoder: FrameDecoder, peer: Peer, who: str,
                          handler: Handler, limits: LocalLimits | None = None) -> None:
    """Answer requests until the peer closes; a protocol fault closes this
    connection only (after the replies of the requests before it). With
    ``limits`` (a local caller): its budget of bytes in flight, and the idle
    timeout before each request once every earlier one is answered.

    Every whole frame a receive brought is begun before the next receive:
    a request the handler's ``begin`` takes costs no task (it answers
    through its :class:`Turn`), any other is handled by a task of its own,
    and the next request waits until that one is done or lets it begin."""
    uid = peer.uid if isinstance(peer, Credentials) else -1
    begin: Begin | None = getattr(handler, "begin", None)
    replies = Replies(stream, who, limits, uid)
    pending = replies.pending
    reserved = 0  # bytes reserved in limits for the request being received
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(replies.run, nursery.cancel_scope)
            try:
                while True:
                    if len(pending) >= MAX_IN_FLIGHT:
                        await replies.turn_answered()
                        continue
                    if limits is not None and not reserved and decoder.announced:
                        limits.reserve(uid, decoder.announced)
                        reserved = decoder.announced
                    op = decoder.expected_op
                    payload = decoder.next_payload()
                    if payload is None:
                        data = await replies.receive(BIG_RECEIVE_SIZE if decoder.announced > RECEIVE_SIZE
                                                    else RECEIVE_SIZE)
                        if not data:
                            decoder.eof()
                            break
                        decoder.push(data)
                        continue
                    if limits is not None and not reserved:  # a whole frame come with the one before it
                        limits.reserve(uid, len(payload))
                        reserved = len(payload)
                    if len(payload) < THREAD_DECODE_SIZE:
                        request = decoder.decode(payload, op)
                    else:
                        request = await trio.to_thread.run_sync(decoder.decode, payload, op)
                    turn = Turn(replies, request.get("op"), reserved)
                    reserved = 0
                    pending.append(turn)
                    replies.idle_deadline = math.inf  # a request in flight: no idle timer
                    if begin is not None:
                        try:
                            if begin(request, peer, turn.answer):
                                continue
                        except Exception:
                            log.exception("request %.64r from %s failed", turn.op, who)
                            turn.push(encode(error_reply(f"internal error while handling {str(turn.op)[:64]!r}",
                                                         rc=1)), True)
                            continue
                    turn.released = trio.Event()
                    nursery.start_soon(_answer_in_turn, request, peer, who, handler, turn, nursery.cancel_scope)
                    await turn.released.wait()
                await replies.all_answered()
            except IdleConnection:
                assert limits is not None
                limits.refusals.note(f"uid {uid}", f"closing idle connection from {who}: no request within "
                                                   f"{limits.idle_timeout:g} s")
                await replies.all_answered()
                await _send_refusal(stream, f"error: commlib error: closing idle connection after "
                                            f"{limits.idle_timeout:g} s without a request")
            except Refused as err:
                assert limits is not None
                limits.refusals.note(f"uid {uid}", f"refused a request from {who}: {err}")
                await replies.all_answered()
                await _send_refusal(stream, f"error: request refused: {err}")
            except ProtocolError as err:
                log.warning("closing connection from %s: %s", who, err)
                await replies.all_answered()
                await _send_refusal(stream, f"protocol error: {err}")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                log.info("connection from %s went away", who)
                nursery.cancel_scope.cancel()
            replies.close()
    finally:
        replies.drop()
        if limits is not None and reserved:
            limits.release(uid, reserved)


async def _answer_in_turn(request: Message, peer: Peer, who: str, handler: Handler, turn: Turn,
                          connection: trio.CancelScope) -> None:
    """One request of a connection handled by a task (see :class:`Turn`);
    a connection that fails while it answers is closed, its other requests
    with it."""
    CURRENT_TURN.set(turn)
    try:
        await _answer(request, peer, who, handler, turn)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        log.info("connection from %s went away", who)
        connection.cancel()
    finally:
        assert turn.released is not None
        turn.released.set()


async def _answer(request: Message, peer: Peer, who: str, handler: Handler, turn: Turn) -> None:
    """One request: the handler's intermediate replies, then its final one,
    each after the replies of the requests before it (``turn``).

    A handler that raises (a bug) or returns something that is not a reply
    gets the caller an error reply; the connection stays open.
    """
    try:
        op = catalogue.op_name(request)
    except catalogue.Invalid as err:  # not a request at all: said so, and the connection goes on
        turn.push(encode(catalogue.refusal(err)), True)
        return

    async def send_more(reply: Message) -> None:
        turn.push(encode({**check_reply(reply), "more": True}), False)

    try:
        reply = await handler(request, peer, send_more)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        raise
    except Exception:
        log.exception("request %.64r from %s failed", op, who)
        reply = error_reply(f"internal error while handling {op[:64]!r}", rc=1)
    assert turn.released is not None
    turn.released.set()  # handled: the next request may begin while this reply waits its turn
    turn.push(final_frame(reply, op, who), True)


def describe(peer: Peer) -> str:
    """A peer for the log."""
    if isinstance(peer, Credentials):
        return f"pid {peer.pid} uid {peer.uid} gid {peer.gid}"
    return f"{peer.role} {peer.name}"


def peer_address(stream: trio.SocketStream) -> str:
    """``host:port`` of the other end of a TCP stream, for the log."""
    try:
        host, port = stream.socket.getpeername()[:2]
    except (OSError, ValueError, AttributeError):
        return "an unknown address"
    return f"{host}:{port}"


def peer_host(stream: trio.SocketStream) -> str:
    """The address of the other end of a TCP stream without its port: who a refusal is counted against."""
    try:
        return str(stream.socket.getpeername()[0])
    except (OSError, ValueError, AttributeError, IndexError):
        return "an unknown address"


# ---------------------------------------------------------------- dropped messages


class DropLog:
    """The log of what a daemon drops (a message that fails validation) or
    refuses (a request): at most ``burst`` lines per ``interval`` seconds, then
    one line counting the rest, so a peer that floods cannot flood the log."""

    def __init__(self, logger: logging.Logger, what: str, burst: int = 10, interval: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, verb: str = "dropped"):
        self.logger = logger
        self.what = what
        self.verb = verb
        self.burst = burst
        self.interval = interval
        self.clock = clock
        self.window = -float("inf")
        self.logged = 0
        self.suppressed = 0
        self.total = 0

    def note(self, reason: str) -> None:
        """One more message dropped, and why."""
        self.total += 1
        now = self.clock()
        if now - self.window >= self.interval:
            if self.suppressed:
                self.logger.warning("%s %d more invalid %s(s) in %.0f s", self.verb, self.suppressed, self.what,
                                    self.interval)
            self.window, self.logged, self.suppressed = now, 0, 0
        if self.logged < self.burst:
            self.logged += 1
            self.logger.warning("%s an invalid %s %s", self.verb, self.what, reason)
        else:
            self.suppressed += 1


class PeerLog:
    """The log of what a daemon refuses to its peers (a TCP client that fails
    the handshake, a local user over its limits): at most one line per peer
    (an address, a uid) per ``interval`` seconds; the lines held back are
    counted and the count goes with that peer's next line.  At most
    ``max_peers`` peers are followed; past that, the ones quiet for an
    interval are forgotten, and a new peer beyond that shares one entry."""

    def __init__(self, logger: logging.Logger, interval: float = 60.0, max_peers: int = 4096,
                 clock: Callable[[], float] = time.monotonic):
        self.logger = logger
        self.interval = interval
        self.max_peers = max_peers
        self.clock = clock
        self.peers: dict[str, list[float]] = {}  # peer -> [time of its last line, lines held back since]

    def note(self, peer: str, line: str) -> None:
        now = self.clock()
        entry = self.peers.get(peer)
        if entry is None:
            if len(self.peers) >= self.max_peers:
                self.peers = {p: e for p, e in self.peers.items() if now - e[0] < self.interval}
                if len(self.peers) >= self.max_peers:
                    peer = "other peers"
                    entry = self.peers.get(peer)
        if entry is not None and now - entry[0] < self.interval:
            entry[1] += 1
            return
        held = int(entry[1]) if entry is not None else 0
        since = now - entry[0] if entry is not None else 0.0
        if held:
            line += f" ({held} more from {peer} in {since:.0f} s not logged)"
        self.logger.warning("%s", line)
        self.peers[peer] = [now, 0]


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
