"""The daemons' boundary: what fails the catalogue is dropped (and logged a few lines a minute)."""

from __future__ import annotations

import logging
import os

import trio
import trio.testing

from minisge.cell import Cell
from minisge.daemon.cell_certificate import write_cell_certificate
from minisge.execd.qmaster_link import ExecdClient
from minisge.protocol import FrameDecoder, catalogue, tls
from minisge.protocol import trio_streams as pt

KEY = bytes(range(32))


def test_drop_log_logs_a_burst_then_counts_the_rest(caplog):
    now = [0.0]
    drops = pt.DropLog(logging.getLogger("t"), "message", burst=3, interval=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="t"):
        for i in range(10):
            drops.note(f"junk {i}")
        assert [r.getMessage() for r in caplog.records] == [f"dropped an invalid message junk {i}" for i in range(3)]
        now[0] = 61.0
        drops.note("junk 10")
    assert caplog.records[3].getMessage() == "dropped 7 more invalid message(s) in 60 s"
    assert caplog.records[4].getMessage() == "dropped an invalid message junk 10"
    assert drops.total == 11


async def test_an_execd_drops_junk_from_its_qmaster_and_the_link_goes_on(tmp_path, caplog):
    write_cell_certificate(str(tmp_path / "cell_tls.pem"), "default")
    client = ExecdClient(Cell(str(tmp_path)), "ws1", ("127.0.0.1", 1), KEY,
                         tls.client_context(str(tmp_path / "cell_tls.pem")))
    os.makedirs(client.execd.active)
    ours, theirs = trio.testing.memory_stream_pair()
    conn = pt.Connection(ours)
    client.conn = conn
    junk = [
        {"op": catalogue.START, "job_id": 1, "task_id": 1},  # no owner, uid, spec ...
        {"op": catalogue.SUSPEND, "job_id": "1", "task_id": 1},
        {"op": catalogue.PE_TASK_KILL, "job_id": 1, "task_id": 1, "signal": "KILL; rm -rf /"},
        {"op": catalogue.RELAY_REPLY, "rid": 5, "reply": {"answer": 42}},  # no "ok"
        {"op": catalogue.SUBMIT, "request": {}},  # a command's operation, not the qmaster's
        {"nop": 1},
    ]
    send, recv = trio.open_memory_channel(1)
    client.relays[5] = send
    decoder = FrameDecoder()
    with caplog.at_level(logging.WARNING, logger="minisge.remote"):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client._serve, conn)
            registration = await pt.recv_message(theirs, decoder)
            assert catalogue.validate(registration, catalogue.EXECD).name == catalogue.REGISTER
            for msg in junk:
                await pt.send_message(theirs, msg)
            await pt.send_message(theirs, {"op": catalogue.RELAY_REPLY, "rid": 5, "reply": {"ok": True, "n": 1}})
            with trio.fail_after(10):
                assert await recv.receive() == {"ok": True, "n": 1}
            nursery.cancel_scope.cancel()
    assert client.dropped.total == len(junk)
    assert sum("dropped an invalid message from the qmaster" in r.getMessage() for r in caplog.records) == len(junk)
