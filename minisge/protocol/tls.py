"""TLS between the daemons of different hosts, with the cell certificate.

Every TCP connection between daemons (an execd and its qmaster) is a TLS 1.3
connection from the standard library's :mod:`ssl` in which both ends prove
that they hold the cell certificate's private key (``common/cell_tls.pem``,
made by ``minisge init``, mode 0600 like the cell key, copied to each host
with ``common/``); the cell-key handshake of :mod:`minisge.protocol.handshake`
then runs inside it.  So every frame between hosts is encrypted (a job's
script and environment are not readable on the wire) and authenticated (a
byte injected or altered by anyone without the cell's key material breaks
the TLS record's tag: the connection is closed, nothing of it is acted on).

The certificate is the cell's own trust anchor: self-signed, and the only
certificate either end accepts.  Host names are not checked by TLS (every
host holds the same certificate); who a peer is, is the name it proves in
the cell-key handshake.

Only the daemons import this module: local commands talk to a Unix socket,
where the kernel vouches for the caller and nothing crosses a network, so
they never pay for ``import ssl``.
"""

from __future__ import annotations

import os
import ssl
import stat

from minisge.protocol.daemon_wire import KeyFileError


def check_tls_file(path: str) -> str:
    """``path`` if it is a cell certificate file closed to group and others, else KeyFileError."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise KeyFileError(f"{path}: cannot read the cell certificate: {err.strerror}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"{path}: the cell certificate's key is open to others "
                           f"(mode {stat.S_IMODE(st.st_mode):04o}); chmod 600 it")
    return path


def _context(server_side: bool, path: str) -> ssl.SSLContext:
    check_tls_file(path)
    # not create_default_context: it would trust the system's CAs
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server_side else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False  # one certificate for every host of the cell: who is who is the cell-key handshake's
    ctx.verify_mode = ssl.CERT_REQUIRED
    try:
        ctx.load_cert_chain(path)
        ctx.load_verify_locations(cafile=path)
    except (ssl.SSLError, OSError, ValueError) as err:
        raise KeyFileError(f"{path}: not a cell certificate with its key: {err}") from None
    return ctx


def server_context(path: str) -> ssl.SSLContext:
    """The accepting side's TLS context: it shows the cell certificate and demands it of the client."""
    return _context(True, path)


def client_context(path: str) -> ssl.SSLContext:
    """The connecting side's TLS context: it shows the cell certificate and demands it of the server."""
    return _context(False, path)
