"""What a qmaster killed at any moment finds when it starts again (found by the soak)."""

from __future__ import annotations

import os

import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster import spool
from minisge.qmaster.qmaster import Qmaster

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


@pytest.fixture
def qm(tmp_path):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=2, env={})
    q = Qmaster(cell, "h1")
    q.load()
    q.config.cell_owner_only = False
    return q


def test_a_successor_whose_predecessor_ended_just_before_a_kill_is_released(qm):
    first = qm.submit(dict(REQ), 0, 0)["job_id"]
    second = qm.submit(dict(REQ, hold_jid=[str(first)]), 0, 0)["job_id"]
    assert qm.jobs[second].held
    # killed after the predecessor's end removed its file, before the successor's was rewritten
    os.unlink(os.path.join(qm.spool.dir, spool.job_relpath(first)))
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[second].predecessors == [] and not again.jobs[second].held
