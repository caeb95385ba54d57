"""What every command does to reach its cell: find it, connect, ask.

Standard library and :mod:`minisge.protocol` only.  A command talks to the
qmaster's Unix socket; where none is on this host (a host that runs only an
execd) it goes through the local execd's socket, which relays it.
"""

from __future__ import annotations

import os
import sys

from minisge import protocol
from minisge.cell import Cell


class NoQmaster(Exception):
    pass


def connect(cell: Cell | None = None, timeout: float | None = 30.0):
    cell = cell or Cell.from_env()
    for path in (cell.socket_path, os.path.join(cell.execd_spool(_host()), "execd.sock")):
        try:
            return protocol.connect_unix(path, timeout)
        except (FileNotFoundError, ConnectionRefusedError):
            continue
        except OSError:
            continue
    port = cell.qmaster_port() if cell.exists() else 6444
    host = cell.act_qmaster() or _host()
    raise NoQmaster(
        f"error: commlib error: got select error (Connection refused)\n"
        f"unable to send message to qmaster using port {port} on host \"{host}\": got send error"
    )


def _host() -> str:
    from minisge.cell import short_hostname

    return short_hostname()


def call(msg: dict, cell: Cell | None = None, timeout: float | None = 30.0) -> dict:
    """One request, one reply; exits like Grid Engine when the qmaster is not there."""
    try:
        sock = connect(cell, timeout)
    except NoQmaster as e:
        sys.stderr.write(f"{e}\n")
        sys.exit(1)
    try:
        return protocol.request(sock, msg)
    except protocol.ProtocolError as e:
        sys.stderr.write(f"error: {e}\n")
        sys.exit(1)
    finally:
        sock.close()
