"""One small qmaster for the tests that drive the qmaster's own code without
a daemon: a cell made by ``minisge init`` on host h1 (all.q of ``slots``
slots), its spool loaded, in a directory the test owns.

The tests of one rule each shape it as the rule needs (a clock they move, an
execd that is up, load values), through the keywords of
:func:`small_qmaster`, so that a change of how a qmaster is made has one home.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.qmaster import Qmaster


def small_qmaster(root: str | os.PathLike[str], *, slots: int = 2, clock: Callable[[], float] = time.time,
                  open_to_all: bool = True, execd_up: bool = False,
                  load: Mapping[str, str] | None = None) -> Qmaster:
    """A qmaster of a new cell under ``root`` on host h1 with ``slots`` slots.
    ``open_to_all``: it takes jobs of every user (a cell run by an ordinary
    user takes its owner's alone); ``execd_up``: h1's execd is registered
    (a pass places jobs there; a kill goes nowhere); ``load``: h1's load report."""
    cell = Cell(str(root))
    init_cell(cell, "h1", slots=slots, env={})
    qm = Qmaster(cell, "h1", clock=clock)
    qm.load()
    if open_to_all:
        qm.config.cell_owner_only = False
    if execd_up:
        qm.execds["h1"] = object()  # type: ignore[assignment]
    if load is not None:
        qm.config.load_values["h1"] = dict(load)
    return qm
