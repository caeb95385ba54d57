"""What a qmaster killed at any moment finds when it starts again (found by the soak)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import trio
import trio.testing
from qmaster_harness import small_qmaster

from minisge.qmaster import accounting_writer, spool
from minisge.qmaster.outbox import ExecdLink
from minisge.qmaster.qmaster import Qmaster

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def qm(tmp_path):
    return small_qmaster(tmp_path / "root")


def test_a_successor_whose_predecessor_ended_just_before_a_kill_is_released(qm):
    first = qm.submit(dict(REQ), 0, 0)["job_id"]
    second = qm.submit(dict(REQ, hold_jid=[str(first)]), 0, 0)["job_id"]
    assert qm.jobs[second].held
    # killed after the predecessor's end removed its file, before the successor's was rewritten
    os.unlink(os.path.join(qm.spool.dir, spool.job_relpath(first)))
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[second].predecessors == [] and not again.jobs[second].held


class Taker(ExecdLink):
    """Takes the qmaster's messages to the execd of ``host``."""

    def __init__(self, host: str):
        self.host = host
        self.sent: list[dict[str, Any]] = []

    async def send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)


def test_a_tasks_end_is_in_the_accounting_file_at_once_and_acknowledged_only_once_synced(qm, monkeypatch):
    taker = Taker("h1")
    qm.execds["h1"] = taker
    qm.config.register_execd("h1")
    job_id = qm.submit(dict(REQ), 0, 0)["job_id"]
    assert [t.task_id for _, t in qm.flush(qm.schedule())] == [1]
    synced: list[str] = []
    real_sync = accounting_writer.sync
    monkeypatch.setattr(accounting_writer, "sync", lambda path: (synced.append(path), real_sync(path)))
    qm.task_finished({"op": "task_end", "host": "h1", "job_id": job_id, "task_id": 1, "exit_status": 0,
                      "failed": 0, "usage": {}})
    qm.ack_task_end("h1", job_id, 1)
    # written before the task leaves qstat (qacct sees it), not yet synced
    assert job_id not in qm.jobs
    with open(qm.cell.accounting, encoding="utf-8") as f:
        assert [ln for ln in f if not ln.startswith("#")][0].split(":")[5] == str(job_id)
    assert synced == [] and qm.accounting_unsynced
    trio.run(qm.deliver)  # no flush yet: the execd must keep the task's directory
    assert not [m for m in taker.sent if m["op"] == "ack_end"]
    qm.flush()  # one fdatasync for the pass's ends
    assert synced == [qm.cell.accounting] and not qm.accounting_unsynced
    trio.run(qm.deliver)
    assert [m for m in taker.sent if m["op"] == "ack_end"] == [{"op": "ack_end", "job_id": job_id, "task_id": 1}]


def test_with_the_daemons_syncer_an_end_is_acknowledged_once_its_record_is_synced_off_the_loop(qm, monkeypatch):
    """In a daemon, the flush does not wait for the accounting file's sync:
    the syncer does it in a worker thread, then sends the acknowledgements
    that waited for it (no scheduling pass); an end's acknowledgement waits
    for the sync of its own record, not for records appended after it."""
    taker = Taker("h1")
    qm.execds["h1"] = taker
    qm.config.register_execd("h1")
    job_id = qm.submit(dict(REQ, array=[1, 3, 1]), 0, 0)["job_id"]
    assert len(qm.flush(qm.schedule())) == 2
    synced: list[int] = []
    real_sync = accounting_writer.sync
    gates = [trio.Event(), trio.Event()]  # one a sync

    def end(task_id: int) -> None:
        qm.task_finished({"op": "task_end", "host": "h1", "job_id": job_id, "task_id": task_id, "exit_status": 0,
                          "failed": 0, "usage": {}})
        qm.ack_task_end("h1", job_id, task_id)

    def acked() -> list[int]:
        return [m["task_id"] for m in taker.sent if m["op"] == "ack_end"]

    async def main() -> None:
        token = trio.lowlevel.current_trio_token()

        async def wait_gate(k: int) -> None:
            with trio.fail_after(10):  # not forever when an assertion of the test failed meanwhile
                await gates[k].wait()

        def slow_sync(path: str) -> None:
            trio.from_thread.run(wait_gate, len(synced), trio_token=token)  # a slow disk: the loop goes on
            synced.append(len(synced))
            real_sync(path)

        monkeypatch.setattr(accounting_writer, "sync", slow_sync)
        async with trio.open_nursery() as nursery:
            done = [trio.Event(), trio.Event()]  # set after each sync

            async def on_synced() -> None:  # the daemon's: qm.send_synced_acks
                await qm.send_synced_acks()
                done[done[0].is_set()].set()

            await nursery.start(qm.accounting_sync.run, on_synced)
            end(1)
            qm.flush()  # does not sync: the syncer does
            await qm.deliver()
            assert acked() == [] and qm.accounting_unsynced
            await trio.testing.wait_all_tasks_blocked()
            end(2)  # appended while the first sync runs
            gates[0].set()
            await done[0].wait()
            assert acked() == [1] and qm.accounting_unsynced  # sent by the syncer, no pass; task 2's: no flush yet
            qm.flush()
            await qm.deliver()  # the pass after task 2's end: its record is not synced yet
            assert acked() == [1]
            gates[1].set()
            await done[1].wait()
            assert acked() == [1, 2]
            nursery.cancel_scope.cancel()

    trio.run(main)
    with open(qm.cell.accounting, encoding="utf-8") as f:
        assert len([ln for ln in f if not ln.startswith("#")]) == 2
