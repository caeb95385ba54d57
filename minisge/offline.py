"""The qmaster's scheduler without a daemon: for a teacher, a test, a what-if.

:func:`load_snapshot` reads a cell's spool exactly as the qmaster does at
start-up (:meth:`minisge.qmaster.qmaster.Qmaster.load`: the queue, host,
complex, PE, resource quota and scheduler configuration through
:class:`minisge.qmaster.config_state.ConfigState`, the spooled jobs under
``spool/qmaster/jobs`` through :mod:`minisge.qmaster.spool`) and builds the snapshot
the daemon's scheduling pass would build (``ConfigState.snapshot``);
:func:`minisge.scheduler.schedule` turns it into a plan.  Nothing is written.

What only a running daemon knows is assumed: every execution host of the
configuration is up (an execd registered), and no host has reported load
values (so ``queue_sort_method load`` sees equal loads, and the load and
suspend thresholds and subordination of :mod:`minisge.qmaster.load_control`, which
need reports and act on running jobs, are not applied).

From the shell, one line per dispatch and then the pending jobs' reasons::

    python -m minisge.offline [SGE_ROOT [CELL]]

    2.1 -> all.q@node1 (2)
    1.1 -> all.q@node2 (1)
    3: queue instance "all.q@node1" dropped because it is full

A snapshot can also be written as plain data (the man pages' words are the
field names: :mod:`minisge.scheduler`):

>>> from minisge import scheduler
>>> from minisge.formats.complex import default_complex
>>> from minisge.scheduler import ComplexIndex, HostInfo, PE, PendingTask, QInstance, Snapshot, job_order
>>> snap = Snapshot(
...     qinstances=(QInstance("all.q", "node1", seq_no=0, slots=2, used=0, pe_list=("smp",)),
...                 QInstance("all.q", "node2", seq_no=0, slots=1, used=0)),
...     hosts={"node1": HostInfo("node1"), "node2": HostInfo("node2")},
...     pending=(PendingTask(1, 1, "alice"), PendingTask(2, 1, "bob", pe=("smp", ((2, 2),))),
...              PendingTask(3, 1, "carol")),
...     complexes=ComplexIndex(default_complex()), pes={"smp": PE("smp", slots=10, used=0)},
...     queue_sort_method="seqno", now=1000.0,
...     weights=job_order.Weights(priority=0.0, urgency=0.5, ticket=0.5))
>>> print(plan_text(scheduler.schedule(snap)))
2.1 -> all.q@node1 (2)
1.1 -> all.q@node2 (1)
3: queue instance "all.q@node1" dropped because it is full
3: queue instance "all.q@node2" dropped because it is full

(Job 2 asks for two slots, so its urgency is higher (2000 against 1000):
it goes first, then job 1 takes the free slot of node2.)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable

from minisge import scheduler
from minisge.cell import DEFAULT_CELL, Cell, default_root, short_hostname
from minisge.qmaster.qmaster import Qmaster, gc_paused


def load_qmaster(cell_dir: str) -> Qmaster:
    """A :class:`minisge.qmaster.qmaster.Qmaster` loaded from the spool of the cell
    at ``cell_dir`` (``$SGE_ROOT/$SGE_CELL``), as the daemon loads it; no
    socket, no execd, nothing written."""
    cell_dir = os.path.abspath(cell_dir)
    cell = Cell(os.path.dirname(cell_dir), os.path.basename(cell_dir))
    if not cell.exists():
        raise FileNotFoundError(f"{cell_dir}: no minisge cell here")
    qm = Qmaster(cell, short_hostname())
    qm.load()
    return qm


def exec_hosts(qm: Qmaster) -> list[str]:
    """The configured execution hosts (``global`` is none)."""
    return sorted(h for h in qm.config.exec_hosts if h != "global")


def snapshot_of(qm: Qmaster, now: float | None = None, hosts_up: Iterable[str] | None = None) -> scheduler.Snapshot:
    """The snapshot the qmaster's pass builds at ``now`` (default: the
    clock), with the execds of ``hosts_up`` (default: every execution host)
    registered."""
    up = exec_hosts(qm) if hosts_up is None else list(hosts_up)
    snapshot: scheduler.Snapshot = qm.config.snapshot(qm.jobs, {h: None for h in up},
                                                      now=time.time() if now is None else now)
    return snapshot


def load_snapshot(cell_dir: str, now: float | None = None,
                  hosts_up: Iterable[str] | None = None) -> scheduler.Snapshot:
    """The scheduler's snapshot of the cell at ``cell_dir`` (see the module
    docstring for what is assumed of the hosts)."""
    return snapshot_of(load_qmaster(cell_dir), now, hosts_up)


def plan(cell_dir: str, now: float | None = None, hosts_up: Iterable[str] | None = None) -> scheduler.Plan:
    """What one scheduling pass of the qmaster would do with the cell now."""
    with gc_paused():
        return scheduler.schedule(load_snapshot(cell_dir, now, hosts_up))


def plan_text(p: scheduler.Plan) -> str:
    """The plan as lines: ``JOB.TASK -> queue@host (slots)`` per dispatch in
    dispatch order (every granted queue instance of a parallel job, the
    master queue first), then ``JOB: reason`` per pending reason, jobs in
    number order."""
    lines = []
    for d in p.dispatches:
        granted = " ".join(f"{q}@{h} ({n})" for q, h, n in d.granted)
        lines.append(f"{d.job_id}.{d.task_id} -> {granted}")
    for job_id in sorted(p.reasons):
        lines.extend(f"{job_id}: {r}" for r in p.reasons[job_id])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 2 or any(a.startswith("-") for a in argv):
        print("usage: python -m minisge.offline [SGE_ROOT [CELL]]", file=sys.stderr)
        return 2
    root = argv[0] if argv else os.environ.get("SGE_ROOT") or default_root()
    name = argv[1] if len(argv) > 1 else os.environ.get("SGE_CELL") or DEFAULT_CELL
    try:
        text = plan_text(plan(os.path.join(root, name)))
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if text:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
