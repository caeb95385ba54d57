"""The one protocol spoken between the commands and the daemons, and between daemons.

Standard library only: every command imports this module, and a command must
start in a few milliseconds (DESIGN.md, decision 3). The daemons use the pure
parts (``encode``, and ``FrameDecoder``, the peers' and the cell key's parts of
:mod:`minisge.protocol.daemon_wire`, which no command loads) with their own
trio streams, see ``minisge.protocol.trio_streams``.

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

from minisge.protocol.json_text import Decoder, dumps

TYPE_CHECKING = False  # not typing's: a command must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    Message = dict[str, Any]

MAGIC = b"MSGE"
VERSION = 1
HEADER_SIZE = 9  # magic (4 bytes), version (1), payload length (4, big-endian); no struct: its import costs a command
MAX_PAYLOAD = 64 * 1024 * 1024  # room for a large job script
MAX_HANDSHAKE_PAYLOAD = 4096  # a frame before the cell-key handshake is done (its messages are ~300 bytes)
KEY_SIZE = 32
NONCE_SIZE = 32
MAX_FIELD_LENGTH = 255  # role and host names in the handshake


class operations:  # a namespace the commands use as a module: ``operations.SUBMIT``
    """The names of the operations a command asks for (direction ``COMMAND``):
    what a command puts in its request's ``op`` (``minisge.protocol.operations``
    for the commands, given by the package).  Each operation's direction,
    fields, limits and replies are in the catalogue
    (:mod:`minisge.protocol.catalogue`, which defines every operation of these
    names with them); the commands use these names alone: building the
    catalogue's schemas costs a command's start about a millisecond, and a
    command needs none of them (the daemon checks what it receives).  Here,
    not a module of its own: a module more costs every command's start ~0.3 M
    instructions.  ``tests/test_catalogue.py`` checks that the two name the
    same operations."""

    __slots__ = ()

    PING = "ping"
    SHUTDOWN = "shutdown"
    SUBMIT = "submit"
    QSTAT = "qstat"
    QSTAT_FULL = "qstat_full"
    JOB_DETAIL = "job_detail"
    QDEL = "qdel"
    QHOLD = "qhold"
    QMOD = "qmod"
    QCONF = "qconf"
    PE_TASK = "pe_task"
    QPING = "qping"
    QQUOTA = "qquota"
    SHARE_MON = "share_mon"
    QRSUB = "qrsub"
    QRSTAT = "qrstat"
    QRDEL = "qrdel"
    QALTER = "qalter"
    QRESUB = "qresub"
    QHOST = "qhost"
    QSELECT = "qselect"


class ProtocolError(Exception):
    """A frame or message breaks the protocol; close that connection."""


class ConnectionClosed(ProtocolError):
    """The other side closed the connection: between two frames, or in the
    middle of one (the message says which)."""


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
