"""The qmaster's scheduler without a daemon: for a teacher, a test, a what-if.

:func:`load_snapshot` reads a cell's spool exactly as the qmaster does at
start-up (:meth:`minisge.qmaster.qmaster.Qmaster.load`: the queue, host,
complex, PE, resource quota and scheduler configuration through
:class:`minisge.qmaster.config_state.ConfigState`, the spooled jobs under
``spool/qmaster/jobs`` through :mod:`minisge.qmaster.spool`) and builds the snapshot
the daemon's scheduling pass would build (``ConfigState.snapshot``);
:func:`minisge.scheduler.schedule` turns it into a plan.  Nothing is written.

What only a running daemon knows is assumed: every execution host of the
configuration is up (an execd registered), and its load values are those
:func:`assume_load_values` gives (no execd reports load to a stopped cell):
the host this runs on reports what it measures now, as its execd would;
every other host each load value at its complex(5) default (``mem_free=0``),
where its ``complex_values`` do not set the attribute.  The first line of
the report says so.  The load and suspend thresholds and subordination of
:mod:`minisge.qmaster.load_control`, which act on reports and running jobs,
are not applied.

From the shell, the assumption, one line per dispatch, then what ``qstat
-j`` would say under "scheduling info:" of every job still pending, one
line per message (the pass's global messages -- queue instances full,
disabled, overloaded for every job -- then the job's own reasons, hold and
dependencies, whatever sched_conf(5) ``schedd_job_info`` says)::

    python -m minisge.offline [SGE_ROOT [CELL]]

    assumed load values (a stopped cell has no load report): node1 measured here now; node2 at \
their complex defaults (mem_free=0, np_load_avg=0, ...)
    2.1 -> all.q@node1 (2)
    1.1 -> all.q@node2 (1)
    3: queue instance "all.q@node1" dropped because it is full
    3: queue instance "all.q@node2" dropped because it is full

(When every queue instance is full or disabled before the pass, each
pending job gets those global messages, then "All queues dropped because
of overload or full", as ``qstat -j`` shows them.)

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
from collections.abc import Iterable, Mapping

from minisge import scheduler
from minisge.cell import DEFAULT_CELL, Cell, default_root, short_hostname
from minisge.execd.load import read_load_values
from minisge.qmaster import views
from minisge.qmaster.qmaster import Qmaster, gc_paused

#: the load values the assumption line names as examples of the complex defaults
EXAMPLE_LOAD_VALUES = ("mem_free", "np_load_avg")


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


def assume_load_values(qm: Qmaster, hosts: Iterable[str], here: str | None = None,
                       measured: Mapping[str, str] | None = None) -> str:
    """Give every host of ``hosts`` that has no load report (none has, in a
    stopped cell) the load values its execd would report, as well as can be
    known without it: the host this runs on (``here``, default this host's
    name) what is ``measured`` here now (default: read now, as the execd
    reads it); any other host each of those load values at its complex(5)
    ``default``.  A value the host's ``complex_values`` set is left out (the
    configured value then stands alone, as for a host that reports none).
    Returns the one line that says what was assumed ("" if nothing was)."""
    here = short_hostname() if here is None else here
    values = dict(read_load_values() if measured is None else measured)
    cx = qm.config.complex_index
    defaults = {}
    for name in values:
        attr = cx.get(name)
        if attr is not None and attr.default not in ("", "NONE"):
            defaults[name] = attr.default
    local: list[str] = []
    others: list[str] = []
    for host in hosts:
        eh = qm.config.exec_hosts.get(host)
        if eh is None or host in qm.config.load_values:
            continue
        configured = dict(eh.complex_values)
        mine = values if host == here else defaults
        (local if host == here else others).append(host)
        qm.config.set_load_values(host, {k: v for k, v in mine.items() if k not in configured})
    said = []
    if local:
        said.append(f"{local[0]} measured here now")
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        examples = ", ".join(f"{n}={defaults[n]}" for n in EXAMPLE_LOAD_VALUES if n in defaults)
        said.append(f"{shown} at their complex defaults ({examples}, ...)")
    if not said:
        return ""
    return "assumed load values (a stopped cell has no load report): " + "; ".join(said)


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
    qm = load_qmaster(cell_dir)
    assume_load_values(qm, exec_hosts(qm) if hosts_up is None else hosts_up)
    return snapshot_of(qm, now, hosts_up)


def plan(cell_dir: str, now: float | None = None, hosts_up: Iterable[str] | None = None) -> scheduler.Plan:
    """What one scheduling pass of the qmaster would do with the cell now."""
    with gc_paused():
        return scheduler.schedule(load_snapshot(cell_dir, now, hosts_up))


def explanations(qm: Qmaster, p: scheduler.Plan) -> dict[int, list[str]]:
    """What ``qstat -j`` would say under "scheduling info:" of every job
    with a task still pending after the pass ``p``, by job number: the
    pass's global messages (queue instances dropped for every job: full,
    disabled, overloaded; "All queues dropped because of overload or full"),
    then the job's own (:func:`minisge.qmaster.views.job_messages`: its
    reasons, error, hold, dependencies; then
    :func:`~minisge.qmaster.views.reservation_lines`, a ``-R y`` reservation)
    -- all of them, as if sched_conf(5) ``schedd_job_info`` were true."""
    started: dict[int, int] = {}
    for d in p.dispatches:
        started[d.job_id] = started.get(d.job_id, 0) + 1
    reserved = {r.job_id: r for r in p.reservations}
    dropped = list(p.global_messages)
    out: dict[int, list[str]] = {}
    for number in sorted(qm.jobs):
        job = qm.jobs[number]
        if len(job.pending) <= started.get(number, 0):
            continue
        out[number] = (dropped + views.job_messages(job, list(p.reasons.get(number, [])), dropped)
                       + views.reservation_lines(job, reserved.get(number)))
    return out


def report(cell_dir: str, now: float | None = None, hosts_up: Iterable[str] | None = None) -> str:
    """``python -m minisge.offline``'s text: the assumption on load values
    (:func:`assume_load_values`), the dispatches of one pass
    (:func:`plan_text`'s lines) and every pending job's
    :func:`explanations`, a ``JOB: message`` line each."""
    qm = load_qmaster(cell_dir)
    up = exec_hosts(qm) if hosts_up is None else list(hosts_up)
    assumption = assume_load_values(qm, up)
    with gc_paused():
        p = scheduler.schedule(snapshot_of(qm, now, up))
    lines = [assumption] if assumption else []
    lines += plan_text(scheduler.Plan(dispatches=p.dispatches)).splitlines()
    lines += [f"{number}: {m}" for number, messages in explanations(qm, p).items() for m in messages]
    return "\n".join(lines)


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
        text = report(os.path.join(root, name))
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if text:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
