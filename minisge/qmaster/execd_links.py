"""The qmaster's side of its execds' TCP connections.

After the cell-key handshake an execd's connection carries messages both
ways with no request/reply pairing: the qmaster pushes ``start``,
``signal`` and ``ack_end``; the execd pushes ``register`` (its running
tasks), ``task_end``, ``load`` and ``relay`` (a local command's request,
with the kernel's word on its caller), which the qmaster answers with
``relay_reply`` messages carrying the same ``rid``.  The execd's side is
:mod:`minisge.execd.qmaster_link`.

Every message is checked against :mod:`minisge.protocol.catalogue` first:
one that fails is logged (a few lines a minute) and dropped, and the
connection stays up; only a broken frame closes it.  The host of a report
is the one the execd proved with the cell key, whatever the message says.
"""

from __future__ import annotations

import logging
import ssl
import time
from typing import Any

import trio

from minisge import protocol
from minisge.protocol import FrameDecoder, ProtocolError, catalogue
from minisge.protocol import trio_streams as protocol_trio
from minisge.qmaster.outbox import ExecdLink
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.requests import RequestHandler

log = logging.getLogger("minisge.remote")

#: the execds' messages this link handles itself; the reports go to RequestHandler.execd_handlers
LINK_OPS = (catalogue.REGISTER, catalogue.RELAY)

# a message to an execd that does not read (its host hangs, the network is gone without
# a reset) must not hold up the qmaster (its scheduler loop, a qdel): after this many
# seconds the connection is closed, as if the execd had gone, and the execd reconnects
SEND_TIMEOUT = 30.0


class RemoteExecd(ExecdLink):
    def __init__(self, host: str, stream: trio.abc.Stream, address: str):
        self.host = host
        self.stream = stream
        self.address = address
        self.since = time.time()
        self.lock = trio.Lock()
        self.dropped = protocol_trio.DropLog(log, f"message from execd {host}")

    async def send(self, msg: dict[str, Any]) -> None:
        async with self.lock:
            with trio.move_on_after(SEND_TIMEOUT) as scope:
                try:
                    await protocol_trio.send_message(self.stream, msg)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    log.warning("execd %s went away while sending %s", self.host, msg.get("op"))
            if scope.cancelled_caught:  # half a frame may be out: the connection is useless now
                log.warning("execd %s did not take %s within %.0f s: closing its connection",
                            self.host, msg.get("op"), SEND_TIMEOUT)
                await trio.aclose_forcefully(self.stream)


async def serve_execd(stream: trio.SocketStream, qm: Qmaster, handler: RequestHandler, key: bytes,
                      refusals: protocol_trio.PeerLog, tls: ssl.SSLContext | None) -> None:
    """One TCP connection to the qmaster: it must be an execd that proves the
    cell certificate in TLS (``tls``, :mod:`minisge.protocol.tls`; None only
    in tests of the bare handshake) and the cell key (a refusal is logged
    through ``refusals``: a line per address a minute).

    Whatever goes wrong on it (a reset, a bad frame, a fault in handling one of
    its messages) closes this connection, is logged, and touches nothing else:
    the error may come wrapped in an ExceptionGroup from the nursery of the
    requests the execd relays, so it is matched with ``except*``.
    """
    address = protocol_trio.peer_address(stream)
    try:
        async with stream:
            await _serve_execd(stream, qm, handler, key, refusals, tls)
    except* (trio.BrokenResourceError, trio.ClosedResourceError):
        log.info("connection from %s went away", address)
    except* ProtocolError as group:
        log.warning("closed connection from %s: %s", address, "; ".join(map(str, group.exceptions)))
    except* Exception:
        log.exception("connection from %s failed: closed", address)


async def _serve_execd(tcp: trio.SocketStream, qm: Qmaster, handler: RequestHandler, key: bytes,
                       refusals: protocol_trio.PeerLog, tls: ssl.SSLContext | None) -> None:
    decoder = FrameDecoder()
    accepted = await protocol_trio.accept_remote(tcp, decoder, key, "qmaster", qm.host, refusals, tls)
    if accepted is None:
        return
    stream, peer = accepted  # the TLS stream over tcp
    if peer.role != "execd":
        log.warning("refused %s %s: only execds connect to the qmaster over TCP", peer.role, peer.name)
        return
    host = peer.name
    link = RemoteExecd(host, stream, protocol_trio.peer_host(tcp))
    try:
        # the execd's first message says which tasks it knows; only then is it
        # given work, so no start message can cross the registration
        with trio.fail_after(30):
            first = await protocol_trio.recv_message(stream, decoder)
    except (ProtocolError, trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
        log.warning("execd %s did not register: %s", host, err or type(err).__name__)
        return
    if not first or first.get("op") != catalogue.REGISTER:
        log.warning("execd %s did not register: it sent %.64r", host, (first or {}).get("op"))
        return
    try:
        catalogue.validate(first, catalogue.EXECD)
    except catalogue.Invalid as err:
        log.warning("execd %s did not register: %s", host, err)
        return
    known = {(j, t) for j, t in first["known"]}
    qm.reconcile_host(host, known)
    qm.execds[host] = link
    try:
        admit_execd_host(qm, host)
        if first.get("startup"):  # queue_conf(5) initial_state: on start-up of the execd
            qm.config.execd_started(host)
        qm.unknown_hosts.host_heard(host, known)
        log.info("execd %s connected from %s", host, protocol_trio.peer_address(tcp))
        async with trio.open_nursery() as relays:  # the requests of commands on the execd's host
            try:
                while (msg := await protocol_trio.recv_message(stream, decoder)) is not None:
                    await _from_execd(handler, link, msg, relays)
            finally:
                # no reply can reach a relayed command any more: its request ends here
                # (the handlers change the qmaster's state before they wait)
                relays.cancel_scope.cancel()
    finally:
        if qm.execds.get(host) is link:
            del qm.execds[host]
            qm.unknown_hosts.host_lost(host)  # sge_conf(5) reschedule_unknown
        log.info("execd %s disconnected", host)
        qm.changed()


async def _from_execd(handler: RequestHandler, link: RemoteExecd, msg: dict[str, Any], nursery: trio.Nursery) -> None:
    try:
        op = catalogue.validate(msg, catalogue.EXECD)
    except catalogue.Invalid as err:
        link.dropped.note(str(err))
        return
    if op.name == catalogue.RELAY:
        nursery.start_soon(_relay, handler, link, msg)
    elif op.name in handler.execd_handlers:
        msg["host"] = link.host  # the host the execd proved, whatever the message says
        await handler.handle_report(op.name, msg)  # checked above
    else:
        link.dropped.note(f"{op.name!r}: only the first message registers")


async def _relay(handler: RequestHandler, link: RemoteExecd, msg: dict[str, Any]) -> None:
    """A command's request relayed by the execd (checked by the handler like a
    local one): answered whatever happens, a fault logged with its traceback
    (never the connection's end)."""
    rid = msg["rid"]
    request, creds, _host = protocol.open_relay_envelope(msg)

    async def send_more(reply: dict[str, Any]) -> None:
        await link.send({"op": catalogue.RELAY_REPLY, "rid": rid, "reply": {**reply, "more": True}})

    try:
        reply = await handler(request, creds, send_more)
    except Exception:
        log.exception("relayed request %.64r failed", request.get("op"))
        reply = protocol.error_reply(f"internal error while handling {str(request.get('op'))[:64]!r}")
    await link.send({"op": catalogue.RELAY_REPLY, "rid": rid, "reply": reply})


def admit_execd_host(qm: Qmaster, host: str) -> None:
    """An execd registered: its host is an execution host; a new one joins the
    cell's ``execd_joins`` host group (a split cell's ``@allhosts``); one in
    no queue is told in the log, with what to run."""
    new = qm.config.register_execd(host)
    if new and qm.execd_joins and qm.config.join_hostgroup(qm.execd_joins, host):
        log.info("execd %s is a new execution host: added to %s", host, qm.execd_joins)
        qm.changed()
    elif not qm.config.in_a_queue(host):
        log.warning("execd %s is in no queue's host list: no job runs there until it is added, e.g. with "
                    "'qconf -aattr hostgroup hostlist %s @allhosts'", host, host)
