"""Shared fixtures of the integration tests: a real running cell.

``cell`` makes a temporary SGE_ROOT, runs ``minisge start --hostname
testhost`` (the all-in-one daemon), yields a :class:`cellutil.Cell` (its
``run(cmd, *args)`` runs a command as a process) and ``minisge stop``s it
afterwards.  ``submit(cell, **request)`` submits through the protocol (no
qsub needed) and returns the job id.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from cellutil import TEST_USERS, Cell, ensure_user

from minisge import cell as cell_mod
from minisge.protocol.client import call


@pytest.fixture
def cell():
    c = Cell().start()
    try:
        yield c
    finally:
        c.cleanup()


@pytest.fixture(scope="module")
def users():
    """The real Unix test users (created when missing), as pwd entries."""
    return [ensure_user(u) for u in TEST_USERS]


def submit(c: Cell, **request) -> int:
    """Submit a job to cell ``c`` with the protocol; ``request`` as qsub
    sends it (defaults: a binary ``/bin/sleep 30`` named ``sleeper``)."""
    spec = {"job_name": "sleeper", "binary": True, "command": "/bin/sleep", "args": ["30"],
            "cwd": c.work}
    spec.update(request)
    reply = call({"op": "submit", "request": spec}, cell=cell_mod.Cell(c.root))
    assert reply.get("ok"), reply
    return int(reply["job_id"])
