"""The scheduler's test harness: snapshot builders and plan readers shared by
every scheduler test module (as Nomad's scheduler/testing.go).

The builders take Grid Engine's words and the defaults of a small cell --
queue ``all.q`` on host ``h1`` with 4 slots, owner ``u``, the default
complex list, ``queue_sort_method seqno`` -- and a test says only what
differs::

    plan = schedule(snap([qi(slots=1), qi(host="h2")], [task(), task(job=2, pe=("smp", ((2, 2),)))],
                         pes=[pe("smp", "$pe_slots")]))
    assert where(plan, job=2) == ["all.q@h2"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from minisge.formats import complex as complex_fmt
from minisge.scheduler import PE, ComplexIndex, HostInfo, PendingTask, Plan, QInstance, Snapshot, schedule
from minisge.scheduler.load_alarms import QueueLoadConf, RunningTask

#: the default complex list of a new cell
CX = ComplexIndex(complex_fmt.default_complex())


def complexes(extra: str = "") -> ComplexIndex:
    """The default complex list with the attribute lines of ``extra`` (``qconf -sc`` format) added."""
    return ComplexIndex(complex_fmt.parse(complex_fmt.DEFAULT_COMPLEX_TEXT + extra))


def qi(cq: str = "all.q", host: str = "h1", slots: int = 4, used: int = 0, seq: int = 0, *,
       values: Mapping[str, str] | None = None, **kw: Any) -> QInstance:
    """A queue instance ``cq@host``; its values hold qname, hostname and
    ``h_rt INFINITY`` (as the qmaster's do), then ``values``."""
    v = {"qname": cq, "hostname": host, "h_rt": "INFINITY"}
    v.update(values or {})
    return QInstance(cq, host, seq, slots, used, values=v, **kw)


def host(name: str = "h1", **kw: Any) -> HostInfo:
    """An execution host (``load``, ``values`` (complex_values), ``consumed``)."""
    return HostInfo(name, **kw)


def pe(name: str = "mpi", rule: str = "$fill_up", slots: int = 999, used: int = 0, **kw: Any) -> PE:
    """A parallel environment with its allocation_rule."""
    return PE(name, slots, used, rule, **kw)


def task(job: int = 1, tid: int = 1, owner: str = "u", **kw: Any) -> PendingTask:
    """A pending task of job ``job`` (``requests``, ``queues``, ``pe=(name, ((lo, hi), ...))`` ...)."""
    return PendingTask(job_id=job, task_id=tid, owner=owner, **kw)


def snap(qis: Iterable[QInstance], pending: Iterable[PendingTask] = (), *, hosts: Mapping[str, HostInfo] | None = None,
         complexes: ComplexIndex = CX, pes: Mapping[str, PE] | Iterable[PE] = (),
         queue_sort_method: str = "seqno", **kw: Any) -> Snapshot:
    """A snapshot of ``qis`` and ``pending``; the hosts default to one
    without load or values per queue instance's host, ``pes`` may be a list."""
    qis = tuple(qis)
    if hosts is None:
        hosts = {q.host: HostInfo(q.host) for q in qis}
    pe_map = dict(pes) if isinstance(pes, Mapping) else {p.name: p for p in pes}
    return Snapshot(qinstances=qis, hosts=hosts, pending=tuple(pending), complexes=complexes, pes=pe_map,
                    queue_sort_method=queue_sort_method, **kw)


def plan(qis: Iterable[QInstance], pending: Iterable[PendingTask] = (), **kw: Any) -> Plan:
    """One pass over :func:`snap` of the same arguments."""
    return schedule(snap(qis, pending, **kw))


# ---------------------------------------------------------------- reading a plan


def placed(p: Plan) -> dict[tuple[int, int], list[tuple[str, str, int]]]:
    """(job, task) -> the granted ``(cqueue, host, slots)``."""
    return {(d.job_id, d.task_id): d.granted for d in p.dispatches}


def where(p: Plan, job: int = 1, tid: int = 1) -> list[str] | None:
    """The queue instances ``cq@host`` granted to a task (master first), None if it waits."""
    for d in p.dispatches:
        if (d.job_id, d.task_id) == (job, tid):
            return [f"{q}@{h}" for q, h, _n in d.granted]
    return None


def grants(p: Plan, job: int = 1) -> list[tuple[str, int]] | None:
    """``(host, slots)`` granted to a job's first dispatched task, None if it waits."""
    for d in p.dispatches:
        if d.job_id == job:
            return [(h, n) for _cq, h, n in d.granted]
    return None


def dispatched(p: Plan) -> list[int]:
    """The job ids of the dispatches, in dispatch order."""
    return [d.job_id for d in p.dispatches]


# ---------------------------------------------------------------- load control


def load_conf(cq: str = "all.q", host: str = "h1", **kw: Any) -> QueueLoadConf:
    """The load-control configuration of queue instance ``cq@host``."""
    return QueueLoadConf(cqueue=cq, host=host, **kw)


def running_task(job: int, start: float, qi: str = "all.q@h1", slots: int = 1, tid: int = 1,
                 by: Iterable[str] = ()) -> RunningTask:
    """A task running since ``start`` in queue instance ``qi``, suspended ``by`` these causes."""
    return RunningTask(job, tid, start, ((qi, slots),), frozenset(by))
