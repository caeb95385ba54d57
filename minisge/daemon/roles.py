"""The separate roles: ``minisge qmaster`` and ``minisge execd``.

The qmaster role runs the qmaster and its scheduler with execds reaching it
over TCP (:mod:`minisge.qmaster.execd_links`); the execd role runs an execd
that reaches its qmaster over TCP (:mod:`minisge.execd.qmaster_link`).
An execd that loses its qmaster keeps its jobs running; what ends meanwhile
stays in its spool and is reported when it is connected again.
"""

from __future__ import annotations

import logging
import os
import ssl

import trio

from minisge import protocol
from minisge.cell import Cell
from minisge.daemon.cell_certificate import write_cell_certificate
from minisge.daemon.process import (
    guarded,
    local_limits,
    remove_file,
    remove_runtime_files,
    watch_signals,
    write_pid,
)
from minisge.execd.qmaster_link import ExecdClient
from minisge.protocol import tls as protocol_tls
from minisge.protocol import trio_streams as protocol_trio
from minisge.qmaster.execd_links import serve_execd
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.requests import RequestHandler
from minisge.qmaster.scheduling import scheduler_loop

log = logging.getLogger("minisge.remote")


async def run_qmaster(cell: Cell, host: str, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """``minisge qmaster``: the qmaster and scheduler, execds over TCP."""
    qm = Qmaster(cell, host)
    qm.load()
    qm.settle_journal()
    key = protocol.read_key(cell.key_file)
    tls = qmaster_tls(cell)
    with trio.CancelScope() as scope:
        handler = RequestHandler(qm, shutdown=scope.cancel, role="qmaster")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_signals, scope)
            nursery.start_soon(scheduler_loop, qm)
            nursery.start_soon(qm.load_control.run_timer)  # queue_conf(5) suspend_interval
            nursery.start_soon(qm.reservations.run_mailer)  # qrsub -m mails
            nursery.start_soon(qm.backlog.run_timer, qm.released)  # writes a full spool did not take
            nursery.start_soon(qm.share_usage.run_timer, qm.clock)  # the users' usage, once a second
            await nursery.start(qm.accounting_sync.run, qm.send_synced_acks)  # ends' records synced off the loop
            await nursery.start(qm.group_commit.run)  # the syncs submissions share (spool.py:GroupCommit)
            nursery.start_soon(qm.unknown_hosts.run_timer)  # sge_conf(5) reschedule_unknown
            local = await protocol_trio.open_unix_listener(cell.socket_path)
            serve = guarded(protocol_trio.serving(handler, limits=local_limits(qm)))
            nursery.start_soon(trio.serve_listeners, serve, [local])
            tcp = await trio.open_tcp_listeners(cell.qmaster_port())
            refusals = protocol_trio.PeerLog(log)  # a refused hello: a line per address a minute

            async def per_conn(stream: trio.SocketStream) -> None:
                await serve_execd(stream, qm, handler, key, refusals, tls)

            nursery.start_soon(trio.serve_listeners, guarded(per_conn), tcp)
            write_pid(cell.pid_file)
            log.info("qmaster of cell %s listening on port %d", cell.name, cell.qmaster_port())
            task_status.started()
    remove_runtime_files(cell)


async def run_execd(cell: Cell, host: str, qmaster: tuple[str, int],
                    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """``minisge execd``: an execution daemon for ``host`` that reaches the qmaster over TCP."""
    key = protocol.read_key(cell.key_file)
    try:
        tls = protocol_tls.client_context(cell.tls_file)
    except protocol.KeyFileError as err:
        raise protocol.KeyFileError(f"{err} (copy common/cell_tls.pem from the master host, as the cell key)") from None
    client = ExecdClient(cell, host, qmaster, key, tls)
    pid_file = cell.execd_pid_file(host)
    with trio.CancelScope() as scope:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch_signals, scope)
                await nursery.start(client.run)
                write_pid(pid_file)
                log.info("execd %s of cell %s started: qmaster at %s:%d", host, cell.name, *qmaster)
                task_status.started()
        finally:
            remove_file(pid_file)
    log.info("execd %s shut down", host)


def qmaster_tls(cell: Cell) -> ssl.SSLContext:
    """The qmaster's TLS context; a cell made before there were cell
    certificates gets one now (logged: every execd host needs a copy)."""
    if not os.path.exists(cell.tls_file):
        write_cell_certificate(cell.tls_file, cell.name)
        log.warning("made the cell certificate %s: copy it to every execution host's common directory",
                    cell.tls_file)
    return protocol_tls.server_context(cell.tls_file)
