"""The direct stream of an interactive job (qrsh, qlogin), between the
command and the job's shepherd.

Grid Engine 8.1.9's builtin mode: qrsh listens on a TCP port of its own
host and submits the job with ``QRSH_PORT=host:port`` in its environment;
the shepherd of the granted host connects back and the job's stdin,
stdout and stderr (or its pty) travel over that connection, then its exit
status.  minisge does the same with its own small frames (commlib is not
spoken), and with one addition 8.1.9 does not have: the shepherd's first
frame is a random token qrsh put in the job's request (never shown by
qstat), so no other process of the host can pose as the job.

A frame is one byte of kind, four bytes of length (big-endian) and the
payload.  From the shepherd: ``T`` token (first), ``O`` stdout, ``E``
stderr, ``X`` the exit status (ASCII digits, last).  From qrsh: ``I``
stdin, ``D`` end of stdin, ``W`` the terminal's size (``rows cols``).
A connection that ends without ``X`` lost its job (qrsh) or its qrsh
(the shepherd: the job is killed).

Pure (bytes in, frames out): qrsh and the shepherd do the I/O.
"""

from __future__ import annotations

import struct

TOKEN = b"T"
STDOUT = b"O"
STDERR = b"E"
EXIT = b"X"
STDIN = b"I"
STDIN_EOF = b"D"
WINSIZE = b"W"

KINDS = frozenset({TOKEN, STDOUT, STDERR, EXIT, STDIN, STDIN_EOF, WINSIZE})
MAX_FRAME = 1 << 20  # a frame's payload; more is a broken peer
_HEAD = struct.Struct(">cI")


class StreamError(Exception):
    """The other side sent something that is no frame of this stream."""


def frame(kind: bytes, data: bytes = b"") -> bytes:
    """One frame."""
    if kind not in KINDS:
        raise ValueError(f"unknown frame kind {kind!r}")
    if len(data) > MAX_FRAME:
        raise ValueError("frame too large")
    return _HEAD.pack(kind, len(data)) + data


class FrameReader:
    """Frames out of the bytes a connection delivers, as they come."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """The complete frames ``data`` ends, (kind, payload) each."""
        self._buf += data
        out = []
        while len(self._buf) >= _HEAD.size:
            kind, size = _HEAD.unpack_from(self._buf)
            if kind not in KINDS or size > MAX_FRAME:
                raise StreamError(f"bad frame {kind!r} of {size} bytes")
            if len(self._buf) < _HEAD.size + size:
                break
            out.append((kind, self._buf[_HEAD.size:_HEAD.size + size]))
            self._buf = self._buf[_HEAD.size + size:]
        return out

    @property
    def pending(self) -> bool:
        """Bytes of an unfinished frame are held."""
        return bool(self._buf)


def parse_port(text: str) -> tuple[str, int] | None:
    """``host:port`` of QRSH_PORT, or None when it is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)

