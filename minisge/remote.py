"""The separate roles: a qmaster that execds reach over TCP, and an execd that does.

After the cell-key handshake an execd's connection carries messages both
ways with no request/reply pairing: the qmaster pushes ``start``,
``signal`` and ``ack_end``; the execd pushes ``register`` (its running
tasks), ``task_end``, ``load`` and ``relay`` (a local command's request,
with the kernel's word on its caller), which the qmaster answers with
``relay_reply`` messages carrying the same ``rid``.

An execd that loses its qmaster keeps its jobs running; what ends meanwhile
stays in its spool and is reported when it is connected again.
"""

from __future__ import annotations

import itertools
import logging
import os

import trio

from minisge import protocol, protocol_trio, qinstance_state, unknown_hosts
from minisge.cell import Cell
from minisge.execd import Execd, read_results
from minisge.protocol import Credentials, FrameDecoder, ProtocolError
from minisge.qmaster import ExecdLink, Qmaster
from minisge.requests import RequestHandler

log = logging.getLogger("minisge.remote")


# ================================================================ qmaster side


class RemoteExecd(ExecdLink):
    def __init__(self, host: str, stream: trio.abc.Stream):
        self.host = host
        self.stream = stream
        self.lock = trio.Lock()

    async def send(self, msg: dict) -> None:
        async with self.lock:
            try:
                await protocol_trio.send_message(self.stream, msg)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                log.warning("execd %s went away while sending %s", self.host, msg.get("op"))


async def serve_execd(stream: trio.SocketStream, qm: Qmaster, handler: RequestHandler, key: bytes) -> None:
    """One TCP connection to the qmaster: it must be an execd that proves the cell key."""
    async with stream:
        decoder = FrameDecoder()
        try:
            peer = await protocol_trio.server_handshake(stream, decoder, key, "qmaster", qm.host)
        except (ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
            log.warning("refused connection from %s: %s", protocol_trio._address(stream), err)
            return
        if peer.role != "execd":
            log.warning("refused %s %s: only execds connect to the qmaster over TCP", peer.role, peer.name)
            return
        host = peer.name
        link = RemoteExecd(host, stream)
        try:
            # the execd's first message says which tasks it knows; only then is it
            # given work, so no start message can cross the registration
            with trio.fail_after(30):
                first = await protocol_trio.recv_message(stream, decoder)
        except (ProtocolError, trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
            log.warning("execd %s did not register: %s", host, err)
            return
        if not first or first.get("op") != "register":
            log.warning("execd %s did not register: it sent %r", host, (first or {}).get("op"))
            return
        known = {(int(j), int(t)) for j, t in first.get("known") or []}
        qm.reconcile_host(host, known)
        qm.execds[host] = link
        qm.config.register_execd(host)
        if first.get("startup"):  # queue_conf(5) initial_state: on start-up of the execd
            qinstance_state.execd_started(qm.config, host)
        unknown_hosts.host_heard(qm, host, known)
        log.info("execd %s connected from %s", host, protocol_trio._address(stream))
        try:
            async with trio.open_nursery() as nursery:
                while (msg := await protocol_trio.recv_message(stream, decoder)) is not None:
                    await _from_execd(qm, handler, link, msg, nursery)
        except ProtocolError as err:
            log.warning("closing connection of execd %s: %s", host, err)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            if qm.execds.get(host) is link:
                del qm.execds[host]
                unknown_hosts.host_lost(qm, host)  # sge_conf(5) reschedule_unknown
            log.info("execd %s disconnected", host)
            qm.changed()


async def _from_execd(qm: Qmaster, handler: RequestHandler, link: RemoteExecd, msg: dict, nursery) -> None:
    op = msg.get("op")
    if op in ("task_end", "pe_task_output", "pe_task_end"):
        msg["host"] = link.host
        await handler.execd_report(msg)
    elif op == "load":
        values = msg.get("values")
        if isinstance(values, dict):
            qm.config.load_values[link.host] = {str(k): str(v) for k, v in values.items()}
            from minisge import load_control

            load_control.load_reported(qm)  # wakes the scheduler when a threshold is crossed
    elif op == "relay":
        nursery.start_soon(_relay, handler, link, msg)
    else:
        log.warning("execd %s sent an unknown message %r", link.host, op)


async def _relay(handler: RequestHandler, link: RemoteExecd, msg: dict) -> None:
    rid = msg.get("rid")
    try:
        request, creds, _host = protocol.open_relay_envelope(msg)
    except ProtocolError as err:
        await link.send({"op": "relay_reply", "rid": rid, "reply": protocol.error_reply(str(err))})
        return

    async def send_more(reply: dict) -> None:
        await link.send({"op": "relay_reply", "rid": rid, "reply": {**reply, "more": True}})

    try:
        reply = await handler(request, creds, send_more)
    except Exception:
        log.exception("relayed request failed")
        reply = protocol.error_reply("internal error")
    await link.send({"op": "relay_reply", "rid": rid, "reply": reply})


async def run_qmaster(cell: Cell, host: str, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """``minisge qmaster``: the qmaster and scheduler, execds over TCP."""
    from minisge.daemon import _watch_signals, scheduler_loop, write_pid, remove_runtime_files

    qm = Qmaster(cell, host)
    qm.load()
    qm.wake_scheduler = trio.Event()
    handler = RequestHandler(qm)
    key = protocol.read_key(cell.key_file)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, scope)
            handler.shutdown = scope.cancel
            nursery.start_soon(scheduler_loop, qm)
            nursery.start_soon(unknown_hosts.unknown_host_timer, qm)  # sge_conf(5) reschedule_unknown
            local = await protocol_trio.open_unix_listener(cell.socket_path)
            nursery.start_soon(trio.serve_listeners, protocol_trio.serving(handler), [local])
            tcp = await trio.open_tcp_listeners(cell.qmaster_port())

            async def per_conn(stream):
                await serve_execd(stream, qm, handler, key)

            nursery.start_soon(trio.serve_listeners, per_conn, tcp)
            write_pid(cell.pid_file)
            log.info("qmaster of cell %s listening on port %d", cell.name, cell.qmaster_port())
            task_status.started()
    remove_runtime_files(cell)


# ================================================================ execd side


class ExecdClient:
    """An execd's side of its qmaster connection, reconnecting as needed."""

    def __init__(self, cell: Cell, host: str, qmaster: tuple[str, int], key: bytes):
        self.cell = cell
        self.host = host
        self.qmaster = qmaster
        self.key = key
        self.conn: protocol_trio.Connection | None = None
        self.send_lock = trio.Lock()
        self.execd = Execd(cell, host, self.report)
        self.rids = itertools.count(1)
        self.relays: dict[int, trio.MemorySendChannel] = {}
        self.connected = trio.Event()
        self.registered = False  # registered with the qmaster since this execd started

    async def report(self, msg: dict) -> None:
        """Send if connected; otherwise it stays on disk and goes at the next connect."""
        await self._send(msg)

    async def _send(self, msg: dict) -> bool:
        conn = self.conn
        if conn is None:
            return False
        async with self.send_lock:
            try:
                await conn.send(msg)
                return True
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return False

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(self.execd.run)
            listener = await protocol_trio.open_unix_listener(os.path.join(self.execd.spool, "execd.sock"))
            nursery.start_soon(trio.serve_listeners, protocol_trio.serving(self.relay_handler), [listener])
            nursery.start_soon(self._connect_loop)
            task_status.started()

    async def _connect_loop(self) -> None:
        delay = 0.1
        while True:
            try:
                conn = await protocol_trio.open_tcp_connection(
                    self.qmaster[0], self.qmaster[1], self.key, "execd", self.host, expect_role="qmaster"
                )
            except (OSError, ProtocolError) as err:
                log.warning("cannot reach the qmaster at %s:%d: %s", *self.qmaster, err)
                await trio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.1
            self.conn = conn
            self.connected.set()
            log.info("connected to the qmaster at %s:%d", *self.qmaster)
            try:
                await self._serve(conn)
            except (ProtocolError, trio.BrokenResourceError, trio.ClosedResourceError) as err:
                log.warning("lost the qmaster: %s", err)
            finally:
                self.conn = None
                self.connected = trio.Event()
                await trio.aclose_forcefully(conn.stream)
                for ch in self.relays.values():
                    ch.close()
                self.relays.clear()

    async def _serve(self, conn) -> None:
        known = sorted(set(self.execd.running) | set(self.execd.finished_unacked()))
        # "startup": the first registration since this execd started (not a reconnect)
        if await self._send({"op": "register", "known": [list(k) for k in known], "startup": not self.registered}):
            self.registered = True
        # what ended while we were apart
        for key in list(self.execd.finished_unacked()):
            report = read_results(self.execd.job_dir(*key))
            report.update(op="task_end", job_id=key[0], task_id=key[1], host=self.host)
            await self._send(report)
        while True:
            msg = await conn.receive()
            if msg.get("op") == "relay_reply":
                ch = self.relays.get(msg.get("rid"))
                if ch is not None:
                    try:
                        ch.send_nowait(msg.get("reply") or {})
                    except (trio.WouldBlock, trio.BrokenResourceError):
                        pass
            else:
                await self.execd.handle(msg)

    async def relay_handler(self, request: dict, peer, send_more) -> dict:
        """A local command's request, passed on to the qmaster with its caller's identity."""
        if not isinstance(peer, Credentials):
            return protocol.error_reply("refused")
        with trio.move_on_after(10):
            await self.connected.wait()
        rid = next(self.rids)
        send, recv = trio.open_memory_channel(1000)
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


async def run_execd(cell: Cell, host: str, qmaster: tuple[str, int], task_status=trio.TASK_STATUS_IGNORED) -> None:
    """``minisge execd``: an execution daemon for ``host`` that reaches the qmaster over TCP."""
    from minisge.daemon import _watch_signals

    key = protocol.read_key(cell.key_file)
    client = ExecdClient(cell, host, qmaster, key)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_watch_signals, scope)
            await nursery.start(client.run)
            task_status.started()
