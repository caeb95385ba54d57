"""An execd's side of its qmaster connection (the separate roles, over TCP).

The execd registers with the tasks it knows, reports task ends and load,
and relays the requests of commands run on its host; it reconnects when the
qmaster goes away, keeping its jobs running, and reports what ended
meanwhile once it is connected again.  The qmaster's side is
:mod:`minisge.qmaster.execd_links`.

Every message from the qmaster is checked against
:mod:`minisge.protocol.catalogue` first (one that fails is logged, a few
lines a minute, and dropped; the connection stays up), and so is every
command's request before it is relayed (a bad one is refused here).
"""

from __future__ import annotations

import itertools
import logging
import os
import ssl
from collections.abc import Mapping
from typing import Any

import trio

from minisge import protocol
from minisge.cell import Cell
from minisge.execd.execd import Execd
from minisge.protocol import Credentials, ProtocolError, catalogue
from minisge.protocol import trio_streams as protocol_trio

log = logging.getLogger("minisge.remote")

# how long a message to the qmaster may wait for it to read (see _send)
SEND_TIMEOUT = 30.0
# seconds between attempts to reach the qmaster: doubling from the first to the most
RETRY_FIRST = 0.1
RETRY_MAX = 10.0

#: the qmaster's messages the execd itself handles (Execd.handle); relay_reply is this link's
EXECD_OPS = (
    catalogue.START, catalogue.SIGNAL, catalogue.SUSPEND, catalogue.RESUME, catalogue.TERMINATE,
    catalogue.ACK_END, catalogue.PE_TASK_START, catalogue.PE_TASK_KILL, catalogue.PE_TASK_SUSPEND,
    catalogue.PE_TASK_RESUME,
)


class ExecdClient:
    """An execd's side of its qmaster connection, reconnecting as needed."""

    def __init__(self, cell: Cell, host: str, qmaster: tuple[str, int], key: bytes, tls: ssl.SSLContext):
        self.cell = cell
        self.host = host
        self.qmaster = qmaster
        self.key = key
        self.tls = tls  # the cell certificate (minisge.protocol.tls): every frame to the qmaster is in TLS
        self.conn: protocol_trio.Connection | None = None
        self.send_lock = trio.Lock()
        self.execd = Execd(cell, host, self.report)
        self.rids = itertools.count(1)
        self.relays: dict[int, trio.MemorySendChannel[dict[str, Any]]] = {}
        self.connected = trio.Event()
        self.registered = False  # registered with the qmaster since this execd started
        self.dropped = protocol_trio.DropLog(log, "message from the qmaster")
        # one handler per message of the qmaster (catalogue.QMASTER): the execd's, and relay replies
        self.handlers = {name: self.execd.handle for name in EXECD_OPS}
        self.handlers[catalogue.RELAY_REPLY] = self.relay_reply

    async def report(self, msg: dict[str, Any]) -> None:
        """Send if connected; otherwise it stays on disk and goes at the next connect."""
        await self._send(msg)

    async def _send(self, msg: dict[str, Any]) -> bool:
        conn = self.conn
        if conn is None:
            return False
        async with self.send_lock:
            with trio.move_on_after(SEND_TIMEOUT):
                try:
                    await conn.send(msg)
                    return True
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return False
            # a qmaster that does not read for so long is as good as gone: the connection
            # is closed (half a frame may be out), and the execd connects again
            log.warning("the qmaster did not take %s within %.0f s: reconnecting", msg.get("op"), SEND_TIMEOUT)
            await trio.aclose_forcefully(conn.stream)
            return False

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(self.execd.run)
            listener = await protocol_trio.open_unix_listener(os.path.join(self.execd.spool, "execd.sock"))
            nursery.start_soon(trio.serve_listeners, protocol_trio.serving(self.relay_handler), [listener])
            nursery.start_soon(self._connect_loop)
            task_status.started()

    async def _connect_loop(self) -> None:
        """Connect, serve, and connect again, for ever: nothing the qmaster or the
        network does (a refusal, a reset during the handshake or later, a bad
        frame) ends the execd; a fault in handling a message is logged with its
        traceback and the connection starts over.  Attempts back off from
        RETRY_FIRST to RETRY_MAX seconds apart, and the log gets one line per
        change of state (lost, a new reason for failing, connected again), not
        one per attempt."""
        delay = RETRY_FIRST
        failing = ""  # why the attempts fail, as last logged
        attempts = 0  # failed attempts since the last connection
        while True:
            try:
                conn = await protocol_trio.open_tcp_connection(
                    self.qmaster[0], self.qmaster[1], self.key, "execd", self.host, expect_role="qmaster",
                    tls=self.tls,
                )
            except (OSError, ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
                # OSError: refused or unreachable; Broken: reset during the handshake (a
                # qmaster killed at that moment); ProtocolError: refused, a bad frame
                attempts += 1
                reason = str(err) or type(err).__name__
                if reason != failing:
                    log.warning("cannot reach the qmaster at %s:%d: %s (trying again, up to %g s apart)",
                                *self.qmaster, reason, RETRY_MAX)
                    failing = reason
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            delay = RETRY_FIRST
            self.conn = conn
            self.connected.set()
            if attempts:
                log.info("connected to the qmaster at %s:%d after %d failed attempt(s)", *self.qmaster, attempts)
            else:
                log.info("connected to the qmaster at %s:%d", *self.qmaster)
            failing, attempts = "", 0
            try:
                await self._serve(conn)
            except (ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
                log.warning("lost the qmaster: %s; reconnecting", err or type(err).__name__)
            except Exception:  # a fault in handling a message: this connection only; registering
                # again tells the qmaster what runs here (a start that failed is pending again)
                log.exception("connection to the qmaster failed: reconnecting")
                await trio.sleep(delay)
            finally:
                self.conn = None
                self.connected = trio.Event()
                await trio.aclose_forcefully(conn.stream)
                for ch in self.relays.values():
                    ch.close()
                self.relays.clear()

    async def _serve(self, conn: protocol_trio.Connection) -> None:
        known = sorted(set(self.execd.running) | set(self.execd.finished_unacked()))
        # "startup": the first registration since this execd started (not a reconnect)
        registration = {"op": catalogue.REGISTER, "known": [list(k) for k in known], "startup": not self.registered}
        if await self._send(registration):
            self.registered = True
        # what ended while we were apart
        for report in self.execd.unacked_reports():
            await self._send(report)
        while True:
            msg = await conn.receive()
            try:
                op = catalogue.validate(msg, catalogue.QMASTER)
            except catalogue.Invalid as err:
                self.dropped.note(str(err))
                continue
            try:
                await self.handlers[op.name](msg)
            except Exception:
                log.exception("handling %r from the qmaster failed", op.name)

    async def relay_reply(self, msg: Mapping[str, Any]) -> None:
        """A reply to a relayed request: to the command that waits for it."""
        ch = self.relays.get(msg["rid"])
        if ch is not None:
            try:
                ch.send_nowait(msg["reply"])
            except (trio.WouldBlock, trio.BrokenResourceError):
                pass

    async def relay_handler(self, request: dict[str, Any], peer: protocol_trio.Peer,
                            send_more: protocol_trio.SendMore) -> dict[str, Any]:
        """A local command's request, passed on to the qmaster with its caller's identity."""
        try:
            return await self._relay(request, peer, send_more)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise  # the command went away: its connection ends (minisge.protocol.trio_streams)
        except Exception:  # answered, logged; the execd goes on
            log.exception("relaying %r failed", request.get("op"))
            return protocol.error_reply(f"internal error while relaying {request.get('op')!r}")

    async def _relay(self, request: dict[str, Any], peer: protocol_trio.Peer,
                     send_more: protocol_trio.SendMore) -> dict[str, Any]:
        if not isinstance(peer, Credentials):
            return protocol.error_reply("refused")
        try:
            catalogue.validate(request, catalogue.COMMAND)
        except catalogue.Invalid as err:
            return catalogue.refusal(err)
        with trio.move_on_after(10):
            await self.connected.wait()
        rid = next(self.rids)
        send, recv = trio.open_memory_channel[dict[str, Any]](1000)
        self.relays[rid] = send
        try:
            env = protocol.relay_envelope(request, peer, self.host)
            env["rid"] = rid
            if not await self._send(env):
                return protocol.error_reply(f"unable to contact qmaster from execd {self.host}")
            async for reply in recv:
                if reply.get("more"):
                    r = dict(reply)
                    r.pop("more")
                    await send_more(r)
                    continue
                return reply
            return protocol.error_reply("lost the qmaster")
        finally:
            self.relays.pop(rid, None)
