"""The wire as the daemons alone speak it (:mod:`minisge.protocol.wire` is
what every command loads): the decoder of a stream's frames, the peers at
the other end of a connection (a local process as the kernel tells it, a
daemon of another host as the cell key proves it), the relay envelope an
execd forwards a local command's request in, and the cell key's file.

A command loads none of this (issue 14: its classes were ~0.7 M of a plain
``qsub``'s instructions); :mod:`minisge.protocol` gives these names as its
own, loaded at their first use.  Standard library only.
"""

from __future__ import annotations

import _socket  # not socket: its enums (minisge.protocol.wire says why)
import posix  # not os (minisge.cell says why)
import sys

from minisge.protocol.wire import (
    HEADER_SIZE,
    KEY_SIZE,
    MAX_PAYLOAD,
    ConnectionClosed,
    ProtocolError,
    check_header,
    decode_payload,
)

TYPE_CHECKING = False  # not typing's: see minisge.protocol.wire
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, Protocol, TypeVar

    from minisge.protocol.wire import Message

    T = TypeVar("T")

    class SockOpts(Protocol):
        """What ``peer_credentials`` needs of a socket (a plain or a trio one)."""

        def getsockopt(self, level: int, option: int, buflen: int) -> bytes: ...

_MAX_OP_NAME = 32  # an operation's name, as the first key of a big frame must spell it


_OP_PREFIX = b'{"op":"'


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


class HandshakeError(ProtocolError):
    """The cell-key handshake failed: the connection is not to be trusted."""


class KeyFileError(ProtocolError):
    """The cell key file is missing, malformed or readable by others."""


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


def peer_credentials(sock: SockOpts) -> Credentials:
    """(pid, uid, gid) of the process at the other end of a Unix socket, from the
    kernel (SO_PEERCRED, taken when it connected), whatever it says it is.

    ``sock`` is anything with ``getsockopt``: a socket, a trio socket.
    """
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # struct ucred: three C ints
    pid, uid, gid = (int.from_bytes(raw[i:i + 4], sys.byteorder, signed=True) for i in (0, 4, 8))
    return Credentials(pid, uid, gid)
