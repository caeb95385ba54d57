"""qping(1): is a daemon of the cell up, and how is it doing -- the qmaster's answer.

8.1.9's qping speaks commlib to the daemon named by ``host port name id``
and prints its SIRM status.  minisge's daemons speak no commlib: qping asks
the qmaster through the protocol (``qping`` of the catalogue) and the
qmaster answers for itself and for the execds linked to it, from what it
knows: when it started, or when the execd registered (its link's age);
how many execds are linked to it.  The
endpoint must be what 8.1.9 would reach there: ``qmaster`` at the cell's
SGE_QMASTER_PORT on the qmaster's host, ``execd`` at SGE_EXECD_PORT on a
host whose execd is linked (minisge's execds do not listen themselves).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Endpoint(NamedTuple):
    host: str
    port: int
    name: str
    id: int


def short(host: str) -> str:
    return host.split(".", 1)[0]


def answer(ep: Endpoint, *, qmaster_host: str, qmaster_port: int, execd_port: int,
           execds: dict[str, float], boot_time: float, now: float, clients: int) -> dict[str, Any]:
    """The reply to a qping of ``ep``: ``state`` "up" (with the status),
    "refused" (nothing listens there), "denied" (another daemon does: its
    endpoint name) or "unknown" (no daemon of the cell on that host)."""
    host = short(ep.host)
    if host == short(qmaster_host) and ep.port == qmaster_port:
        if ep.name != "qmaster" or ep.id != 1:
            return {"state": "denied", "local": f"{short(qmaster_host)}/qmaster/1"}
        return {"state": "up", "start_time": boot_time, "clients": clients,
                "info": f"MAIN: R ({max(0.0, now - boot_time):.2f}) | OK"}
    if host in execds and ep.port == execd_port:
        if ep.name != "execd" or ep.id != 1:
            return {"state": "denied", "local": f"{host}/execd/1"}
        return {"state": "up", "start_time": execds[host], "clients": 1,
                "info": f"execd: R ({max(0.0, now - execds[host]):.2f}) | OK"}
    if host == short(qmaster_host) or host in execds:
        return {"state": "refused"}
    return {"state": "unknown"}
