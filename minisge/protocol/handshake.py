"""The cell-key handshake between daemons on different hosts (see :mod:`minisge.protocol.wire`).

TCP with mutual challenge-response on the cell key: the server says hello
with a nonce, the client answers with its own nonce and a proof, the server
welcomes it with its proof or refuses and closes.  Each proof is an
HMAC-SHA256 under the key of the whole exchange (both nonces, both roles and
names), with a different label for each direction.  Only daemons and TCP
clients import this module: a local command has no use for hashlib, hmac or
socket, which cost it milliseconds at start-up.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import socket
import struct
from typing import TYPE_CHECKING, Any

from minisge.protocol.daemon_wire import HandshakeError, RemotePeer
from minisge.protocol.wire import (
    MAX_FIELD_LENGTH,
    NONCE_SIZE,
    VERSION,
    error_reply,
    recv,
    send,
)

if TYPE_CHECKING:
    import ssl

Message = dict[str, Any]

_CLIENT_LABEL = b"minisge-v1 client proof"
_SERVER_LABEL = b"minisge-v1 server proof"


def _new_nonce() -> str:
    return os.urandom(NONCE_SIZE).hex()


def _proof(key: bytes, label: bytes, *fields: str) -> str:
    """HMAC-SHA256 under ``key`` of ``label`` and the fields, each length-prefixed
    so that no two different exchanges give the same bytes."""
    mac = hmac.new(key, label, hashlib.sha256)
    for field in fields:
        data = field.encode("utf-8", "surrogateescape")
        mac.update(struct.pack(">I", len(data)))
        mac.update(data)
    return mac.hexdigest()


def _same(proof: str, expected: str) -> bool:
    """Constant-time comparison, so timing tells an attacker nothing of the proof."""
    return hmac.compare_digest(proof.encode("ascii"), expected.encode("ascii"))


def _field(msg: Message, name: str, what: str) -> str:
    value = msg.get(name)
    if not isinstance(value, str) or not value or len(value) > MAX_FIELD_LENGTH:
        raise HandshakeError(f"{what} has no valid \"{name}\"")
    return value


def _hex_field(msg: Message, name: str, size: int, what: str) -> str:
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

    def hello(self) -> Message:
        return {"op": "hello", "protocol": VERSION, "role": self.role, "name": self.name, "nonce": self.nonce}

    def check_auth(self, msg: Message) -> RemotePeer:
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

    def welcome(self) -> Message:
        if self.client is None:
            raise HandshakeError("welcome before a good auth")
        role, name = self.client
        proof = _proof(self._key, _SERVER_LABEL, self.nonce, self._client_nonce, role, name, self.role, self.name)
        return {"ok": True, "proof": proof}

    @staticmethod
    def refusal() -> Message:
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

    def answer(self, hello: Message) -> Message:
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

    def check_welcome(self, reply: Message) -> RemotePeer:
        if self.server is None:
            raise HandshakeError("welcome before hello")
        if reply.get("ok") is not True:
            error = reply.get("error")
            raise HandshakeError(f"{self.server.name} refused the connection: {error}")
        proof = _hex_field(reply, "proof", 32, "welcome")
        s_role, s_name = self.server
        expected = _proof(self._key, _SERVER_LABEL, self._server_nonce, self.nonce, self.role, self.name,
                          s_role, s_name)
        if not _same(proof, expected):
            raise HandshakeError(f"{s_role} {s_name!r} did not prove the cell key")
        return self.server


def connect_tcp(
    host: str,
    port: int,
    key: bytes,
    role: str,
    name: str,
    timeout: float | None = 10.0,
    expect_role: str | None = None,
    tls: ssl.SSLContext | None = None,
) -> socket.socket:
    """A TCP connection to a daemon, authenticated both ways with the cell key;
    with ``tls`` (:func:`minisge.protocol.tls.client_context`) inside TLS with
    the cell certificate, as the daemons speak between hosts.

    Raises HandshakeError (connection closed) if either side fails the proof.
    """
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        if tls is not None:
            sock = tls.wrap_socket(sock)
        shake = ClientHandshake(key, role, name, expect_role=expect_role)
        send(sock, shake.answer(recv(sock)))
        shake.check_welcome(recv(sock))
    except BaseException:
        sock.close()
        raise
    return sock
