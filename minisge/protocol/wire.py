"""The one protocol spoken between the commands and the daemons, and between daemons.

Standard library only: every command imports this module, and a command must
start in a few milliseconds (DESIGN.md, decision 3). The daemons use the pure
parts (``encode``, ``FrameDecoder``, the handshake classes) with their own trio
streams, see ``minisge.protocol.trio_streams``.

Frame
    ``b"MSGE"`` (4 bytes), the protocol version (1 byte, ``VERSION``), the
    payload length (4 bytes, big-endian, at most ``MAX_PAYLOAD``), then the
    payload: one JSON object in UTF-8. Anything else is a ``ProtocolError``;
    the side that sees it closes that connection and nothing else.
    A message's ``"op"``, when it has one, is its first key: a receiver that
    allows some operations larger frames than others (``FrameDecoder``'s
    ``op_limits``) learns from the first bytes of the payload which limit a
    frame is under, before it reads the rest.

Messages
    A request is an object with an ``"op"`` naming what is asked. A reply is
    ``{"ok": true, ...}`` or ``{"ok": false, "error": "text", "rc": n}``.
    A request that gets several replies (``qsub -sync y`` waits for the job's
    end) receives replies marked ``"more": true`` and then one final reply
    without it.

Local connections
    A Unix stream socket. The daemon learns who is calling from the kernel
    (``SO_PEERCRED``: pid, uid, gid), never from what the message says.

Connections between hosts
    TLS 1.3 with the cell certificate, both ends proving it
    (:mod:`minisge.protocol.tls`: every frame encrypted and authenticated),
    and inside it a mutual challenge-response on the cell key (32 random
    bytes in a file only the admin can read; the key itself never crosses
    the wire):

    1. server -> client ``{"op": "hello", "protocol": 1, "role", "name", "nonce"}``
    2. client -> server ``{"op": "auth", "role", "name", "nonce", "proof"}``
    3. server -> client ``{"ok": true, "proof"}`` or a refusal, then it closes.

    Each proof is an HMAC-SHA256 under the key of the whole exchange (both
    nonces, both roles and names), with a different label for each direction,
    so a proof is good for one connection in one direction only: a recorded
    proof replayed on another connection, or reflected back, fails.  The
    handshake is :mod:`minisge.protocol.handshake` (daemons and TCP clients
    only: hashlib, hmac and socket cost a local command milliseconds).
"""

from __future__ import annotations

import _socket  # not socket: its enums cost a command ~5 ms at start-up
import posix  # not os (minisge.cell says why)
import sys

from minisge.protocol.json_text import Decoder, dumps

TYPE_CHECKING = False  # not typing's: a command must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any, Protocol, TypeVar

    Message = dict[str, Any]
    T = TypeVar("T")

    class SockOpts(Protocol):
        """What ``peer_credentials`` needs of a socket (a plain or a trio one)."""

        def getsockopt(self, level: int, option: int, buflen: int) -> bytes: ...

MAGIC = b"MSGE"
VERSION = 1
HEADER_SIZE = 9  # magic (4 bytes), version (1), payload length (4, big-endian); no struct: its import costs a command
MAX_PAYLOAD = 64 * 1024 * 1024  # room for a large job script
MAX_HANDSHAKE_PAYLOAD = 4096  # a frame before the cell-key handshake is done (its messages are ~300 bytes)
_OP_PREFIX = b'{"op":"'
_MAX_OP_NAME = 32  # an operation's name, as the first key of a big frame must spell it
KEY_SIZE = 32
NONCE_SIZE = 32
MAX_FIELD_LENGTH = 255  # role and host names in the handshake


class Credentials(tuple[int, int, int]):
    """Who is at the other end of a local socket, as the kernel tells it
    (a named tuple written out: ``collections`` costs a command its import)."""

    __slots__ = ()

    def __new__(cls, pid: int, uid: int, gid: int) -> Credentials:
        return tuple.__new__(cls, (pid, uid, gid))

    @property
    def pid(self) -> int:
        return self[0]

    @property
    def uid(self) -> int:
        return self[1]

    @property
    def gid(self) -> int:
        return self[2]

    def __repr__(self) -> str:
        return f"Credentials(pid={self[0]!r}, uid={self[1]!r}, gid={self[2]!r})"


class RemotePeer(tuple[str, str]):
    """A daemon on another host, as proven with the cell key."""

    __slots__ = ()

    def __new__(cls, role: str, name: str) -> RemotePeer:
        return tuple.__new__(cls, (role, name))

    @property
    def role(self) -> str:
        return self[0]

    @property
    def name(self) -> str:
        return self[1]

    def __repr__(self) -> str:
        return f"RemotePeer(role={self[0]!r}, name={self[1]!r})"


class ProtocolError(Exception):
    """A frame or message breaks the protocol; close that connection."""


class ConnectionClosed(ProtocolError):
    """The other side closed the connection: between two frames, or in the
    middle of one (the message says which)."""


class HandshakeError(ProtocolError):
    """The cell-key handshake failed: the connection is not to be trusted."""


class KeyFileError(ProtocolError):
    """The cell key file is missing, malformed or readable by others."""


# ---------------------------------------------------------------- frames


def encode(msg: Message) -> bytes:
    """One frame holding ``msg``.

    ``msg`` must be a dict whose keys are all strings (at every depth) and
    whose values JSON can hold (no NaN or infinity); tuples go out as arrays
    and come back as lists. Strings are escaped to ASCII, so text decoded
    from file names with ``surrogateescape`` survives the trip.
    """
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message is a JSON object, not {type(msg).__name__}")
    if "op" in msg and next(iter(msg)) != "op":
        msg = {"op": msg["op"], **msg}  # the op first: see "Frame" above
    try:
        text = dumps(msg)
    except (TypeError, ValueError, RecursionError) as err:
        raise ProtocolError(f"message cannot be encoded as JSON: {err}") from None
    _check_keys(msg)
    payload = text.encode("ascii")
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"message of {len(payload)} bytes is over the limit of {MAX_PAYLOAD}")
    return MAGIC + VERSION.to_bytes(1, "big") + len(payload).to_bytes(4, "big") + payload


_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _check_keys(value: object) -> None:
    """Reject non-string keys, which JSON would silently turn into strings
    (without a call per value: a long reply is mostly scalars)."""
    if not isinstance(value, _CONTAINERS):
        return
    todo: list[object] = [value]
    while todo:
        item = todo.pop()
        values: Iterable[object]
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    raise ProtocolError(f"message key {key!r} is not a string")
            values = item.values()
        else:
            values = item  # type: ignore[assignment]  # a list or tuple: only those are pushed
            if _SCALARS.issuperset(map(type, values)):  # (a long list of ints: no loop of the interpreter's)
                continue
        for v in values:
            if type(v) not in _SCALARS and isinstance(v, _CONTAINERS):
                todo.append(v)


def check_header(header: bytes | bytearray, max_payload: int = MAX_PAYLOAD) -> int:
    """The payload length announced by a header, or ProtocolError.

    A shorter ``header`` (the start of one) is checked as far as it goes and
    gives -1, so garbage is refused at its first byte, and an oversized
    length before any of the payload is read.
    """
    got = header[: len(MAGIC)]
    if got != MAGIC[: len(got)]:
        raise ProtocolError(f"bad magic {bytes(got)!r}: not a minisge frame")
    if len(header) > len(MAGIC) and header[len(MAGIC)] != VERSION:
        raise ProtocolError(
            f"unsupported protocol version {header[len(MAGIC)]} (this side speaks {VERSION})"
        )
    if len(header) < HEADER_SIZE:
        return -1
    length = int.from_bytes(header[len(MAGIC) + 1:HEADER_SIZE], "big")
    if length > max_payload:
        raise ProtocolError(f"frame of {length} bytes is over the limit of {max_payload}")
    return length


def decode_payload(payload: bytes | bytearray) -> Message:
    """The message a payload holds: strict UTF-8, one JSON object, no duplicate keys."""
    try:
        text = str(payload, "utf-8")  # no copy of a bytearray's bytes first
    except UnicodeDecodeError as err:
        raise ProtocolError(f"payload is not UTF-8: {err}") from None
    try:
        msg = _DECODER.decode(text)
    except (ValueError, RecursionError) as err:
        raise ProtocolError(f"payload is not JSON: {err}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"payload is a JSON {type(msg).__name__}, not an object")
    return msg


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> Message:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ProtocolError(f"payload has the key {key!r} twice")
            seen.add(key)
    return obj


def _no_constant(name: str) -> None:
    raise ProtocolError(f"payload has {name}, which is not JSON")


_DECODER = Decoder(object_pairs_hook=_object_without_duplicates, parse_constant=_no_constant)


class FrameDecoder:
    """Turns the bytes of a stream into messages, however the bytes are split.

    ``feed(data)`` returns every message completed so far. For one message at
    a time, ``push(data)`` then ``next_message()`` until it gives None; or
    ``next_payload()`` and ``decode(payload)`` apart (a daemon decodes a big
    payload off its event loop). At the end of the stream, ``eof()`` raises
    ProtocolError if a frame was cut. After a ProtocolError the decoder
    refuses everything: the connection is to be closed.

    A frame is at most ``max_payload`` bytes, unless ``op_limits`` names its
    operation (the payload's first key, see "Frame") with a larger limit: a
    frame over ``max_payload`` is refused as soon as its header, or the few
    bytes that name its operation, show it over its limit, before the rest
    is read. ``announced`` is the length of the frame being received.
    """

    def __init__(self, max_payload: int = MAX_PAYLOAD, op_limits: Mapping[str, int] | None = None):
        self.max_payload = max_payload
        self.op_limits = dict(op_limits or {})
        self._buffer = bytearray()
        self._failed: ProtocolError | None = None
        self._length = -1  # of the frame at the head of the buffer, once its limit is checked
        self._op: str | None = None  # the operation a big frame's first bytes named

    @property
    def buffered(self) -> int:
        """Bytes received that are not yet a whole message."""
        return len(self._buffer)

    @property
    def announced(self) -> int:
        """The payload length of the frame being received, once its header
        (and, for a big frame, its operation) passed the limits; else 0."""
        return max(self._length, 0)

    def push(self, data: bytes | bytearray) -> None:
        """Add received bytes; the header is checked as soon as it arrives."""
        self._raise_if_failed()
        self._buffer += data
        self._guard(self._frame_length)

    def next_payload(self) -> bytearray | None:
        """The payload of the next whole frame (not yet decoded), or None until more bytes arrive."""
        self._raise_if_failed()
        length = self._guard(self._frame_length)
        if length < 0 or len(self._buffer) < HEADER_SIZE + length:
            return None
        if len(self._buffer) == HEADER_SIZE + length:  # the usual case: hand the buffer over, no copy
            payload = self._buffer
            del payload[:HEADER_SIZE]
            self._buffer = bytearray()
        else:
            payload = self._buffer[HEADER_SIZE : HEADER_SIZE + length]
            del self._buffer[: HEADER_SIZE + length]
        self._length = -1
        return payload

    def decode(self, payload: bytes | bytearray, op: str | None = None) -> Message:
        """The message of a payload from ``next_payload``; ``op``: the operation
        its first bytes named (``expected_op`` before ``next_payload``)."""
        msg = self._guard(lambda: decode_payload(payload))
        if op is not None and msg.get("op") != op:
            self._failed = ProtocolError(f"a frame under the limit of {op!r} holds another message")
            raise self._failed
        return msg

    @property
    def expected_op(self) -> str | None:
        """The operation the frame being received named to pass a larger limit, else None."""
        return self._op if self._length > self.max_payload else None

    def next_message(self) -> Message | None:
        """The next whole message, or None until more bytes arrive."""
        op = self.expected_op
        payload = self.next_payload()
        return None if payload is None else self.decode(payload, op)

    def feed(self, data: bytes | bytearray) -> list[Message]:
        """Add received bytes; every message they complete, in order."""
        self.push(data)
        messages = []
        while (msg := self.next_message()) is not None:
            messages.append(msg)
        return messages

    def eof(self) -> None:
        """The stream ended: fine between frames, a ProtocolError inside one."""
        self._raise_if_failed()
        if self._buffer:
            self._failed = ConnectionClosed(
                f"connection closed in the middle of a frame ({len(self._buffer)} bytes pending)"
            )
            raise self._failed

    def _frame_length(self) -> int:
        """The payload length of the frame at the head of the buffer once its
        limit is checked, -1 until enough of it is there to tell."""
        if self._length >= 0:
            return self._length
        largest = max(self.op_limits.values(), default=0)
        length = check_header(self._buffer[:HEADER_SIZE], max(self.max_payload, largest))
        if length <= self.max_payload:
            self._length = length
            return length
        head = bytes(self._buffer[HEADER_SIZE : HEADER_SIZE + len(_OP_PREFIX) + _MAX_OP_NAME + 1])
        op = leading_op(head)
        if op is None:
            if len(head) < len(_OP_PREFIX) + _MAX_OP_NAME + 1 and _could_name_an_op(head):
                return -1
            raise ProtocolError(f"frame of {length} bytes is over the limit of {self.max_payload}")
        limit = self.op_limits.get(op, self.max_payload)
        if length > limit:
            raise ProtocolError(f"frame of {length} bytes is over the limit of {limit} for {op[:_MAX_OP_NAME]!r}")
        self._op, self._length = op, length
        return length

    def _guard(self, step: Callable[[], T]) -> T:
        try:
            return step()
        except ProtocolError as err:
            self._failed = err
            raise

    def _raise_if_failed(self) -> None:
        if self._failed is not None:
            raise ProtocolError(f"connection already failed: {self._failed}")


_OP_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz_")


def leading_op(head: bytes) -> str | None:
    """The operation named at the start of a payload (``{"op":"submit",...``),
    or None when ``head`` does not (yet) start that way."""
    if not head.startswith(_OP_PREFIX):
        return None
    name = head[len(_OP_PREFIX) : len(_OP_PREFIX) + _MAX_OP_NAME + 1]
    end = name.find(b'"')
    if end <= 0 or not _OP_CHARS.issuperset(name[:end]):
        return None
    return name[:end].decode("ascii")


def _could_name_an_op(head: bytes) -> bool:
    """Whether more bytes could still make ``head`` start with an operation's name."""
    if len(head) <= len(_OP_PREFIX):
        return _OP_PREFIX.startswith(head)
    name = head[len(_OP_PREFIX) :]
    return head.startswith(_OP_PREFIX) and b'"' not in name and _OP_CHARS.issuperset(name)


# ---------------------------------------------------------------- messages


def ok_reply(**fields: Any) -> Message:
    """A reply saying the request was done."""
    return {"ok": True, **fields}


def error_reply(error: str, rc: int = 1, **fields: Any) -> Message:
    """A reply saying the request failed: the text the command prints, its exit code."""
    return {"ok": False, "error": error, "rc": rc, **fields}


def check_request(msg: Message) -> str:
    """The ``op`` of a request, or ProtocolError if it has none."""
    op = msg.get("op")
    if not isinstance(op, str) or not op:
        raise ProtocolError("request without an \"op\"")
    return op


def check_reply(msg: Message) -> Message:
    """``msg`` if it is a well-formed reply, else ProtocolError."""
    ok = msg.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolError("reply without a boolean \"ok\"")
    if not ok:
        if not isinstance(msg.get("error"), str):
            raise ProtocolError("failed reply without an \"error\" text")
        if type(msg.get("rc")) is not int:
            raise ProtocolError("failed reply without an integer \"rc\"")
    if "more" in msg and not isinstance(msg["more"], bool):
        raise ProtocolError("reply with a non-boolean \"more\"")
    return msg


def is_final(reply: Message) -> bool:
    """Whether ``reply`` is the last one to its request (no ``"more": true``)."""
    return not reply.get("more", False)


def relay_envelope(request: Message, credentials: Credentials, host: str) -> Message:
    """A local command's request as an execd forwards it to the qmaster.

    The execd vouches for the kernel's word on the caller; the qmaster is to
    believe it only from a peer that proved the cell key as an execd.
    """
    pid, uid, gid = credentials
    return {"op": "relay", "host": host, "pid": pid, "uid": uid, "gid": gid, "request": request}


def open_relay_envelope(msg: Message) -> tuple[Message, Credentials, str]:
    """The request, the caller's credentials and host inside a relay envelope
    (the request itself is checked like any other, by the qmaster's handler)."""
    request = msg.get("request")
    host = msg.get("host")
    ids: list[Any] = [msg.get(k) for k in ("pid", "uid", "gid")]
    if not isinstance(request, dict) or not isinstance(host, str) or any(type(i) is not int for i in ids):
        raise ProtocolError("malformed relay envelope")
    return request, Credentials(*ids), host


# ---------------------------------------------------------------- cell key


def make_key() -> bytes:
    """A new random cell key."""
    return posix.urandom(KEY_SIZE)


def write_key(path: str, key: bytes) -> None:
    """Create the key file, readable and writable by its owner alone.

    Refuses (FileExistsError) to replace an existing key: every host of the
    cell would have to get the new one.
    """
    if len(key) != KEY_SIZE:
        raise ValueError(f"a cell key is {KEY_SIZE} bytes, not {len(key)}")
    fd = posix.open(path, posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL, 0o600)
    try:
        posix.write(fd, key.hex().encode("ascii") + b"\n")
        posix.fsync(fd)
    finally:
        posix.close(fd)


def read_key(path: str) -> bytes:
    """The cell key from its file: 64 hex digits, the file closed to group and others."""
    try:
        fd = posix.open(path, posix.O_RDONLY)
    except OSError as err:
        raise KeyFileError(f"{path}: cannot read the cell key: {err.strerror}") from None
    try:
        mode = posix.fstat(fd).st_mode
        data = posix.read(fd, 4096)
    finally:
        posix.close(fd)
    if mode & 0o077:  # stat.S_IRWXG | stat.S_IRWXO (stat itself: a module more for every command)
        raise KeyFileError(
            f"{path}: the cell key is open to others (mode {mode & 0o7777:04o}); chmod 600 it"
        )
    text = data.decode("ascii", "replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_SIZE or len(text) != 2 * KEY_SIZE:
        raise KeyFileError(f"{path}: a cell key is {2 * KEY_SIZE} hex digits on one line")
    return key


# ---------------------------------------------------------------- local peers


def peer_credentials(sock: SockOpts) -> Credentials:
    """(pid, uid, gid) of the process at the other end of a Unix socket, from the
    kernel (SO_PEERCRED, taken when it connected), whatever it says it is.

    ``sock`` is anything with ``getsockopt``: a socket, a trio socket.
    """
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # struct ucred: three C ints
    pid, uid, gid = (int.from_bytes(raw[i:i + 4], sys.byteorder, signed=True) for i in (0, 4, 8))
    return Credentials(pid, uid, gid)


# ---------------------------------------------------------------- blocking client


class ClientSocket(_socket.socket):
    """A plain socket that closes at the end of a ``with`` block (what
    ``socket.socket`` adds, without importing ``socket``)."""

    def __enter__(self) -> ClientSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect_unix(path: str, timeout: float | None = 10.0) -> ClientSocket:
    """A connection to the daemon's local socket. ``timeout`` stays on the socket
    for every later send and receive; set it to None to wait for a job's end."""
    sock = ClientSocket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException:
        sock.close()
        raise
    return sock


def send(sock: _socket.socket, msg: Message) -> None:
    """Send one message."""
    sock.sendall(encode(msg))


def recv(sock: _socket.socket, max_payload: int = MAX_PAYLOAD) -> Message:
    """Receive one message; ConnectionClosed if the other side closed instead.

    Reads exactly one frame, so nothing is left buffered between calls.
    """
    header = _recv_exact(sock, HEADER_SIZE, header_limit=max_payload)
    length = check_header(header, max_payload)
    return decode_payload(_recv_exact(sock, length))


def _recv_exact(sock: _socket.socket, size: int, header_limit: int | None = None) -> bytearray:
    """``size`` bytes; with ``header_limit`` they are a header, checked as they come."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            if header_limit is not None and got == 0:
                raise ConnectionClosed("the daemon closed the connection")
            raise ConnectionClosed("connection closed in the middle of a frame")
        if header_limit is not None:
            check_header(buf[: got + n], header_limit)
        got += n
    return buf


def request(sock: _socket.socket, msg: Message) -> Message:
    """Send a request and return its one reply (checked with ``check_reply``).

    A request answered with several replies is read with ``iter_replies``.
    """
    early = _send_request(sock, msg)
    reply = check_reply(early if early is not None else recv(sock))
    if not is_final(reply):
        raise ProtocolError(f"request {msg.get('op')!r} has several replies: use iter_replies")
    return reply


def iter_replies(sock: _socket.socket, msg: Message) -> Iterator[Message]:
    """Send a request and yield its replies, up to and including the final one."""
    early = _send_request(sock, msg)
    if early is not None:
        yield {**check_reply(early), "more": False}
        return
    while True:
        reply = check_reply(recv(sock))
        yield reply
        if is_final(reply):
            return


def _send_request(sock: _socket.socket, msg: Message) -> Message | None:
    """Send a request; None once sent.  A daemon that refuses a caller (over
    its limits) says why and closes, maybe before the request is all sent:
    then what it said is the answer, returned; without one, the send's error."""
    try:
        send(sock, msg)
    except (BrokenPipeError, ConnectionResetError) as err:
        try:
            return recv(sock)
        except (OSError, ProtocolError):
            raise err from None
    return None
