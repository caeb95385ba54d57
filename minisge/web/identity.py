"""Who is at the other end of a browser's connection: the local user owning
the client's socket, found as identd finds it (RFC 1413's answer, read from
the kernel's tables instead of asked over the network).

The browser runs on this host and connects over TCP; the kernel lists every
TCP socket of this network namespace in ``/proc/net/tcp`` (IPv4) and
``/proc/net/tcp6`` (IPv6), one line each: the local and remote address and
port, the state, and the uid of the socket's owner (proc(5)).  The client's
socket is the line whose *local* end is the connection's remote end and whose
*remote* end is the server's end.  A connection from another host has no such
line (its socket lives on that host): its user cannot be known, and it is
refused.

Standard library only; :func:`owner_in_table` is pure (the tables' text in,
a uid out), :func:`socket_owner` reads the files.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Iterable

#: the tables, IPv4 and IPv6 (a dual-stack listener's IPv4 clients appear in
#: the IPv4 table, as their own sockets are IPv4)
TABLES = ("/proc/net/tcp", "/proc/net/tcp6")

#: the state column's ESTABLISHED (include/net/tcp_states.h: TCP_ESTABLISHED = 1)
ESTABLISHED = "01"

Address = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]


def normalise(host: str, port: int) -> Address:
    """An address as the tables and ASGI give it, comparable: an IPv4
    address mapped into IPv6 (``::ffff:127.0.0.1``) is the IPv4 address."""
    ip = ipaddress.ip_address(host.split("%", 1)[0])  # a scope id (fe80::1%lo) is not in the tables
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, port
    return ip, port


def parse_address(text: str, byteorder: str = sys.byteorder) -> Address:
    """``0100007F:1F90`` (IPv4) or 32 hex digits and a port (IPv6): the
    address is printed as the kernel holds it, in 32-bit words of the host's
    byte order; the port is a plain hexadecimal number."""
    addr, _, port = text.partition(":")
    raw = bytes.fromhex(addr)
    if byteorder == "little":
        raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address
    ip = ipaddress.IPv4Address(raw) if len(raw) == 4 else ipaddress.IPv6Address(raw)
    return normalise(str(ip), int(port, 16))


def owner_in_table(lines: Iterable[str], client: Address, server: Address,
                   byteorder: str = sys.byteorder) -> int | None:
    """The uid owning the established socket whose local end is ``client``
    and remote end ``server``, in the lines of a ``/proc/net/tcp*`` table;
    None when there is none."""
    for line in lines:
        fields = line.split()
        # sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
        if len(fields) < 8 or not fields[0].endswith(":") or fields[3] != ESTABLISHED:
            continue
        try:
            local, remote = parse_address(fields[1], byteorder), parse_address(fields[2], byteorder)
            uid = int(fields[7])
        except ValueError:
            continue
        if local == client and remote == server:
            return uid
    return None


def socket_owner(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid of the local user whose socket is the client end of the TCP
    connection ``client`` -> ``server`` (each (host, port) as ASGI's scope
    gives them); None when no socket of this host is that end (a client on
    another host, or a connection already gone)."""
    try:
        ends = normalise(*client), normalise(*server)
    except ValueError:
        return None  # not an IP address (a Unix socket's peer): no TCP table knows it
    for path in TABLES:
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                uid = owner_in_table(f, *ends)
        except OSError:
            continue  # no IPv6 in this kernel
        if uid is not None:
            return uid
    return None


def is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (not a name)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """Whether a bind address only takes connections from this host."""
    if host == "localhost":
        return True
    try:
        return normalise(host, 0)[0].is_loopback
    except ValueError:
        return False
