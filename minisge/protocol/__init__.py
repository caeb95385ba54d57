"""The one protocol spoken between the commands and the daemons, and between daemons.

Standard library only: every command imports this package, and a command must
start in a few milliseconds.  What is where:

- :mod:`minisge.protocol.wire`: frames, replies, the blocking socket calls
  (the names below);
- :mod:`minisge.protocol.daemon_wire`: what the daemons alone use of the wire
  (the frame decoder of a stream, the peers' credentials, the relay envelope,
  the cell key): names of this package too, loaded at their first use
  (:data:`DAEMON_SIDE`), so that no command loads them;
- :mod:`minisge.protocol.handshake`: the cell-key handshake between hosts and
  the authenticated TCP connection (daemons only);
- :mod:`minisge.protocol.catalogue`: every operation (its direction, its
  fields with their types and limits, its replies) and the one validator
  the daemons run on every message they receive;
- :mod:`minisge.protocol.client`: how a command finds its cell and asks;
- :mod:`minisge.protocol.trio_streams`: the daemons' side, on trio (imported
  by the daemons alone, never by a command).
"""

from minisge import loaded_when_used
from minisge.protocol.wire import (
    HEADER_SIZE,
    KEY_SIZE,
    MAGIC,
    MAX_FIELD_LENGTH,
    MAX_HANDSHAKE_PAYLOAD,
    MAX_PAYLOAD,
    NONCE_SIZE,
    VERSION,
    ClientSocket,
    ConnectionClosed,
    ProtocolError,
    check_header,
    check_reply,
    check_request,
    connect_unix,
    decode_payload,
    encode,
    error_reply,
    is_final,
    iter_replies,
    ok_reply,
    operations,
    recv,
    request,
    send,
)

TYPE_CHECKING = False  # not typing's: see minisge.protocol.wire
if TYPE_CHECKING:
    from minisge.protocol.daemon_wire import (
        Credentials,
        FrameDecoder,
        HandshakeError,
        KeyFileError,
        RemotePeer,
        make_key,
        open_relay_envelope,
        peer_credentials,
        read_key,
        relay_envelope,
        write_key,
    )

#: The names of :mod:`minisge.protocol.daemon_wire` this package gives, loaded
#: at their first use (PEP 562): a command uses none of them, and their module
#: was ~0.7 M of a plain ``qsub``'s instructions (issue 14).
DAEMON_SIDE = frozenset({"Credentials", "FrameDecoder", "HandshakeError", "KeyFileError", "RemotePeer", "make_key",
                         "open_relay_envelope", "peer_credentials", "read_key", "relay_envelope", "write_key"})

__getattr__ = loaded_when_used(__name__, DAEMON_SIDE, "minisge.protocol.daemon_wire")


__all__ = [
    "HEADER_SIZE", "KEY_SIZE", "MAGIC", "MAX_FIELD_LENGTH", "MAX_HANDSHAKE_PAYLOAD", "MAX_PAYLOAD",
    "NONCE_SIZE", "VERSION",
    "ClientSocket", "ConnectionClosed", "Credentials", "FrameDecoder", "HandshakeError",
    "KeyFileError", "ProtocolError", "RemotePeer", "check_header", "check_reply",
    "check_request", "connect_unix", "decode_payload", "encode", "error_reply", "is_final",
    "iter_replies", "make_key", "ok_reply", "operations", "open_relay_envelope", "peer_credentials", "read_key", "recv",
    "relay_envelope", "request", "send", "write_key",
]
