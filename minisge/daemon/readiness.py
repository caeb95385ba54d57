"""Telling a service manager that a daemon is ready: systemd's notify
protocol (sd_notify(3)), a datagram ``READY=1`` to the Unix socket named by
``$NOTIFY_SOCKET``, sent by a unit of ``Type=notify`` (packaging/systemd/).

The daemon's roles already say when they are ready: they call their
``task_status.started()`` once they serve (:mod:`minisge.daemon.allinone`,
:mod:`minisge.daemon.roles`).  :class:`Readiness` is the task status
``__main__`` hands them: its ``started()`` sends ``READY=1`` with the
daemon's pid.  Without ``$NOTIFY_SOCKET`` (not started by systemd) it does
nothing.  The variable is taken out of the daemon's environment, so that the
shepherds and jobs it starts do not inherit it (sd_notify's
``unset_environment``).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import MutableMapping

log = logging.getLogger("minisge.daemon")


def notify_socket(environ: MutableMapping[str, str]) -> str | bytes | None:
    """The address ``$NOTIFY_SOCKET`` names, taken out of ``environ``: a
    path, or an abstract socket's name (``@name``: a leading NUL byte); None
    when unset, empty or of a kind this does not speak (``vsock:``)."""
    value = environ.pop("NOTIFY_SOCKET", "")
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    if value.startswith("/"):
        return value
    return None


def notify(address: str | bytes, state: str) -> bool:
    """Send ``state`` (``READY=1`` ...) to ``address``;
    whether it went (a service manager that is not listening is logged, not fatal)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(address)
            s.sendall(state.encode())
        return True
    except OSError as err:
        log.warning("cannot tell the service manager %r: %s", state, err)
        return False


class Readiness:
    """A trio task status (``task_status=`` of a role) whose ``started()``
    tells the service manager that the daemon is ready."""

    def __init__(self, address: str | bytes | None):
        self.address = address

    @classmethod
    def from_environ(cls) -> Readiness:
        return cls(notify_socket(os.environ))

    def started(self, value: None = None) -> None:
        if self.address is not None:
            notify(self.address, f"READY=1\nMAINPID={os.getpid()}")
