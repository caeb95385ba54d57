"""The one protocol spoken between the commands and the daemons, and between daemons.

Standard library only: every command imports this module, and a command must
start in a few milliseconds (DESIGN.md, decision 3). The daemons use the pure
parts (``encode``, ``FrameDecoder``, the handshake classes) with their own trio
streams, see ``minisge.protocol_trio``.

Frame
    ``b"MSGE"`` (4 bytes), the protocol version (1 byte, ``VERSION``), the
    payload length (4 bytes, big-endian, at most ``MAX_PAYLOAD``), then the
    payload: one JSON object in UTF-8. Anything else is a ``ProtocolError``;
    the side that sees it closes that connection and nothing else.

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
    TCP with mutual challenge-response on the cell key (32 random bytes in a
    file only the admin can read; the key itself never crosses the wire):

    1. server -> client ``{"op": "hello", "protocol": 1, "role", "name", "nonce"}``
    2. client -> server ``{"op": "auth", "role", "name", "nonce", "proof"}``
    3. server -> client ``{"ok": true, "proof"}`` or a refusal, then it closes.

    Each proof is an HMAC-SHA256 under the key of the whole exchange (both
    nonces, both roles and names), with a different label for each direction,
    so a proof is good for one connection in one direction only: a recorded
    proof replayed on another connection, or reflected back, fails.
"""

from __future__ import annotations

import _socket  # not socket: its enums cost a command ~5 ms at start-up
import json
import os
import stat
import struct
from collections import namedtuple

MAGIC = b"MSGE"
VERSION = 1
HEADER = struct.Struct(">4sBI")  # magic, version, payload length
HEADER_SIZE = HEADER.size  # 9
MAX_PAYLOAD = 64 * 1024 * 1024  # room for a large job script
KEY_SIZE = 32
NONCE_SIZE = 32
MAX_FIELD_LENGTH = 255  # role and host names in the handshake

_CLIENT_LABEL = b"minisge-v1 client proof"
_SERVER_LABEL = b"minisge-v1 server proof"

Credentials = namedtuple("Credentials", "pid uid gid")
Credentials.__doc__ = "Who is at the other end of a local socket, as the kernel tells it."

RemotePeer = namedtuple("RemotePeer", "role name")
RemotePeer.__doc__ = "A daemon on another host, as proven with the cell key."


class ProtocolError(Exception):
    """A frame or message breaks the protocol; close that connection."""


class ConnectionClosed(ProtocolError):
    """The other side closed the connection between two frames."""


class HandshakeError(ProtocolError):
    """The cell-key handshake failed: the connection is not to be trusted."""


class KeyFileError(ProtocolError):
    """The cell key file is missing, malformed or readable by others."""


# ---------------------------------------------------------------- frames


def encode(msg: dict) -> bytes:
    """One frame holding ``msg``.

    ``msg`` must be a dict whose keys are all strings (at every depth) and
    whose values JSON can hold (no NaN or infinity); tuples go out as arrays
    and come back as lists. Strings are escaped to ASCII, so text decoded
    from file names with ``surrogateescape`` survives the trip.
    """
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message is a JSON object, not {type(msg).__name__}")
    try:
        text = json.dumps(msg, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as err:
        raise ProtocolError(f"message cannot be encoded as JSON: {err}") from None
    _check_keys(msg)
    payload = text.encode("ascii")
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"message of {len(payload)} bytes is over the limit of {MAX_PAYLOAD}")
    return HEADER.pack(MAGIC, VERSION, len(payload)) + payload


def _check_keys(value) -> None:
    """Reject non-string keys, which JSON would silently turn into strings."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ProtocolError(f"message key {key!r} is not a string")
            _check_keys(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_keys(item)


def check_header(header: bytes, max_payload: int = MAX_PAYLOAD) -> int:
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
    _, _, length = HEADER.unpack_from(header)
    if length > max_payload:
        raise ProtocolError(f"frame of {length} bytes is over the limit of {max_payload}")
    return length


def decode_payload(payload: bytes) -> dict:
    """The message a payload holds: strict UTF-8, one JSON object, no duplicate keys."""
    try:
        text = bytes(payload).decode("utf-8")
    except UnicodeDecodeError as err:
        raise ProtocolError(f"payload is not UTF-8: {err}") from None
    try:
        msg = json.loads(text, object_pairs_hook=_object_without_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise ProtocolError(f"payload is not JSON: {err}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"payload is a JSON {type(msg).__name__}, not an object")
    return msg


def _object_without_duplicates(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ProtocolError(f"payload has the key {key!r} twice")
            seen.add(key)
    return obj


def _no_constant(name: str):
    raise ProtocolError(f"payload has {name}, which is not JSON")


class FrameDecoder:
    """Turns the bytes of a stream into messages, however the bytes are split.

    ``feed(data)`` returns every message completed so far. For one message at
    a time, ``push(data)`` then ``next_message()`` until it gives None. At the
    end of the stream, ``eof()`` raises ProtocolError if a frame was cut.
    After a ProtocolError the decoder refuses everything: the connection is
    to be closed.
    """

    def __init__(self, max_payload: int = MAX_PAYLOAD):
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._failed: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes received that are not yet a whole message."""
        return len(self._buffer)

    def push(self, data: bytes) -> None:
        """Add received bytes; the header is checked as soon as it arrives."""
        self._raise_if_failed()
        self._buffer += data
        self._guard(lambda: check_header(self._buffer[:HEADER_SIZE], self.max_payload))

    def next_message(self) -> dict | None:
        """The next whole message, or None until more bytes arrive."""
        self._raise_if_failed()
        length = self._guard(lambda: check_header(self._buffer[:HEADER_SIZE], self.max_payload))
        if length < 0 or len(self._buffer) < HEADER_SIZE + length:
            return None
        payload = self._buffer[HEADER_SIZE : HEADER_SIZE + length]
        del self._buffer[: HEADER_SIZE + length]
        return self._guard(lambda: decode_payload(payload))

    def feed(self, data: bytes) -> list[dict]:
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
            self._failed = ProtocolError(
                f"connection closed in the middle of a frame ({len(self._buffer)} bytes pending)"
            )
            raise self._failed

    def _guard(self, step):
        try:
            return step()
        except ProtocolError as err:
            self._failed = err
            raise

    def _raise_if_failed(self) -> None:
        if self._failed is not None:
            raise ProtocolError(f"connection already failed: {self._failed}")


# ---------------------------------------------------------------- messages


def ok_reply(**fields) -> dict:
    """A reply saying the request was done."""
    return {"ok": True, **fields}


def error_reply(error: str, rc: int = 1, **fields) -> dict:
    """A reply saying the request failed: the text the command prints, its exit code."""
    return {"ok": False, "error": error, "rc": rc, **fields}


def check_request(msg: dict) -> str:
    """The ``op`` of a request, or ProtocolError if it has none."""
    op = msg.get("op")
    if not isinstance(op, str) or not op:
        raise ProtocolError("request without an \"op\"")
    return op


def check_reply(msg: dict) -> dict:
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


def is_final(reply: dict) -> bool:
    """Whether ``reply`` is the last one to its request (no ``"more": true``)."""
    return not reply.get("more", False)


def relay_envelope(request: dict, credentials: Credentials, host: str) -> dict:
    """A local command's request as an execd forwards it to the qmaster.

    The execd vouches for the kernel's word on the caller; the qmaster is to
    believe it only from a peer that proved the cell key as an execd.
    """
    pid, uid, gid = credentials
    return {"op": "relay", "host": host, "pid": pid, "uid": uid, "gid": gid, "request": request}


def open_relay_envelope(msg: dict) -> tuple[dict, Credentials, str]:
    """The request, the caller's credentials and host inside a relay envelope."""
    request = msg.get("request")
    host = msg.get("host")
    ids = [msg.get(k) for k in ("pid", "uid", "gid")]
    if not isinstance(request, dict) or not isinstance(host, str) or any(type(i) is not int for i in ids):
        raise ProtocolError("malformed relay envelope")
    check_request(request)
    return request, Credentials(*ids), host


# ---------------------------------------------------------------- cell key


def make_key() -> bytes:
    """A new random cell key."""
    return os.urandom(KEY_SIZE)


def write_key(path: str, key: bytes) -> None:
    """Create the key file, readable and writable by its owner alone.

    Refuses (FileExistsError) to replace an existing key: every host of the
    cell would have to get the new one.
    """
    if len(key) != KEY_SIZE:
        raise ValueError(f"a cell key is {KEY_SIZE} bytes, not {len(key)}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def read_key(path: str) -> bytes:
    """The cell key from its file: 64 hex digits, the file closed to group and others."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as err:
        raise KeyFileError(f"{path}: cannot read the cell key: {err.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"{path}: the cell key is open to others (mode {stat.S_IMODE(mode):04o}); chmod 600 it"
        )
    text = data.decode("ascii", "replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_SIZE or len(text) != 2 * KEY_SIZE:
        raise KeyFileError(f"{path}: a cell key is {2 * KEY_SIZE} hex digits on one line")
    return key


# ---------------------------------------------------------------- handshake


def _new_nonce() -> str:
    return os.urandom(NONCE_SIZE).hex()


def _proof(key: bytes, label: bytes, *fields: str) -> str:
    """HMAC-SHA256 under ``key`` of ``label`` and the fields, each length-prefixed
    so that no two different exchanges give the same bytes.

    hashlib is imported here, not at the top: loading OpenSSL costs a local
    command ~6 ms it has no use for.
    """
    import hashlib
    import hmac

    mac = hmac.new(key, label, hashlib.sha256)
    for field in fields:
        data = field.encode("utf-8", "surrogateescape")
        mac.update(struct.pack(">I", len(data)))
        mac.update(data)
    return mac.hexdigest()


def _same(proof: str, expected: str) -> bool:
    """Constant-time comparison, so timing tells an attacker nothing of the proof."""
    import hmac

    return hmac.compare_digest(proof.encode("ascii"), expected.encode("ascii"))


def _field(msg: dict, name: str, what: str) -> str:
    value = msg.get(name)
    if not isinstance(value, str) or not value or len(value) > MAX_FIELD_LENGTH:
        raise HandshakeError(f"{what} has no valid \"{name}\"")
    return value


def _hex_field(msg: dict, name: str, size: int, what: str) -> str:
    value = msg.get(name)
    if not isinstance(value, str) or len(value) != 2 * size:
        raise HandshakeError(f"{what} has no valid \"{name}\"")
    try:
        bytes.fromhex(value)
    except ValueError:
        raise HandshakeError(f"{what} has no valid \"{name}\"") from None
    return value.lower()


class ServerHandshake:
    """The accepting side of the cell-key handshake, without I/O.

    ``hello()`` is sent first; the client's answer goes to ``check_auth()``,
    which returns who the client is (or raises HandshakeError: send
    ``refusal()``, close, log); then ``welcome()`` is sent.
    """

    def __init__(self, key: bytes, role: str, name: str, nonce: str | None = None):
        self._key = key
        self.role = role
        self.name = name
        self.nonce = nonce or _new_nonce()
        self.client: RemotePeer | None = None
        self._client_nonce = ""

    def hello(self) -> dict:
        return {"op": "hello", "protocol": VERSION, "role": self.role, "name": self.name, "nonce": self.nonce}

    def check_auth(self, msg: dict) -> RemotePeer:
        if msg.get("op") != "auth":
            raise HandshakeError("the client did not authenticate")
        role = _field(msg, "role", "auth")
        name = _field(msg, "name", "auth")
        client_nonce = _hex_field(msg, "nonce", NONCE_SIZE, "auth")
        proof = _hex_field(msg, "proof", 32, "auth")
        expected = _proof(self._key, _CLIENT_LABEL, self.nonce, client_nonce, role, name, self.role, self.name)
        if not _same(proof, expected):
            raise HandshakeError(f"{role} {name!r} did not prove the cell key")
        self._client_nonce = client_nonce
        self.client = RemotePeer(role, name)
        return self.client

    def welcome(self) -> dict:
        if self.client is None:
            raise HandshakeError("welcome before a good auth")
        role, name = self.client
        proof = _proof(self._key, _SERVER_LABEL, self.nonce, self._client_nonce, role, name, self.role, self.name)
        return {"ok": True, "proof": proof}

    @staticmethod
    def refusal() -> dict:
        """What a refused client is told (no more than that it was refused)."""
        return error_reply("authentication with the cell key failed", rc=1)


class ClientHandshake:
    """The connecting side of the cell-key handshake, without I/O.

    The server's hello goes to ``answer()``, whose result is sent; the
    server's reply goes to ``check_welcome()``, which returns who the server
    is or raises HandshakeError. ``expect_role`` (e.g. ``"qmaster"``) refuses
    a server with another role.
    """

    def __init__(self, key: bytes, role: str, name: str, nonce: str | None = None, expect_role: str | None = None):
        self._key = key
        self.role = role
        self.name = name
        self.nonce = nonce or _new_nonce()
        self.expect_role = expect_role
        self.server: RemotePeer | None = None
        self._server_nonce = ""

    def answer(self, hello: dict) -> dict:
        if hello.get("op") != "hello":
            raise HandshakeError("the server did not say hello")
        if hello.get("protocol") != VERSION:
            raise HandshakeError(f"the server speaks protocol {hello.get('protocol')!r}, not {VERSION}")
        role = _field(hello, "role", "hello")
        name = _field(hello, "name", "hello")
        if self.expect_role is not None and role != self.expect_role:
            raise HandshakeError(f"expected a {self.expect_role}, {name!r} is a {role}")
        self._server_nonce = _hex_field(hello, "nonce", NONCE_SIZE, "hello")
        self.server = RemotePeer(role, name)
        proof = _proof(self._key, _CLIENT_LABEL, self._server_nonce, self.nonce, self.role, self.name, role, name)
        return {"op": "auth", "role": self.role, "name": self.name, "nonce": self.nonce, "proof": proof}

    def check_welcome(self, reply: dict) -> RemotePeer:
        if self.server is None:
            raise HandshakeError("welcome before hello")
        if reply.get("ok") is not True:
            error = reply.get("error")
            raise HandshakeError(f"{self.server.name} refused the connection: {error}")
        proof = _hex_field(reply, "proof", 32, "welcome")
        s_role, s_name = self.server
        expected = _proof(self._key, _SERVER_LABEL, self._server_nonce, self.nonce, self.role, self.name, s_role, s_name)
        if not _same(proof, expected):
            raise HandshakeError(f"{s_role} {s_name!r} did not prove the cell key")
        return self.server


# ---------------------------------------------------------------- local peers


def peer_credentials(sock) -> Credentials:
    """(pid, uid, gid) of the process at the other end of a Unix socket, from the
    kernel (SO_PEERCRED, taken when it connected), whatever it says it is.

    ``sock`` is anything with ``getsockopt``: a socket, a trio socket.
    """
    size = struct.calcsize("3i")
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, size)
    return Credentials(*struct.unpack("3i", raw))


# ---------------------------------------------------------------- blocking client


class ClientSocket(_socket.socket):
    """A plain socket that closes at the end of a ``with`` block (what
    ``socket.socket`` adds, without importing ``socket``)."""

    def __enter__(self) -> "ClientSocket":
        return self

    def __exit__(self, *exc) -> None:
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


def connect_tcp(
    host: str,
    port: int,
    key: bytes,
    role: str,
    name: str,
    timeout: float | None = 10.0,
    expect_role: str | None = None,
) -> "socket.socket":
    """A TCP connection to a daemon, authenticated both ways with the cell key.

    Raises HandshakeError (connection closed) if either side fails the proof.
    """
    import socket

    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        shake = ClientHandshake(key, role, name, expect_role=expect_role)
        send(sock, shake.answer(recv(sock)))
        shake.check_welcome(recv(sock))
    except BaseException:
        sock.close()
        raise
    return sock


def send(sock, msg: dict) -> None:
    """Send one message."""
    sock.sendall(encode(msg))


def recv(sock, max_payload: int = MAX_PAYLOAD) -> dict:
    """Receive one message; ConnectionClosed if the other side closed instead.

    Reads exactly one frame, so nothing is left buffered between calls.
    """
    header = _recv_exact(sock, HEADER_SIZE, header_limit=max_payload)
    length = check_header(header, max_payload)
    return decode_payload(_recv_exact(sock, length))


def _recv_exact(sock, size: int, header_limit: int | None = None) -> bytearray:
    """``size`` bytes; with ``header_limit`` they are a header, checked as they come."""
    first = header_limit is not None
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            if first and got == 0:
                raise ConnectionClosed("the daemon closed the connection")
            raise ProtocolError("connection closed in the middle of a frame")
        if first:
            check_header(buf[: got + n], header_limit)
        got += n
    return buf


def request(sock, msg: dict) -> dict:
    """Send a request and return its one reply (checked with ``check_reply``).

    A request answered with several replies is read with ``iter_replies``.
    """
    send(sock, msg)
    reply = check_reply(recv(sock))
    if not is_final(reply):
        raise ProtocolError(f"request {msg.get('op')!r} has several replies: use iter_replies")
    return reply


def iter_replies(sock, msg: dict):
    """Send a request and yield its replies, up to and including the final one."""
    send(sock, msg)
    while True:
        reply = check_reply(recv(sock))
        yield reply
        if is_final(reply):
            return
