"""The metrics of a replay (pure: results in, figures and text out).

Per task (:class:`minisge.replay.result.TaskRun`) that started:

- wait = start - submit;
- turnaround = end - submit (= wait + run time);
- slowdown = turnaround / run time (a task of run time 0 has none);
- bounded slowdown = max(1, turnaround / max(run time, tau)) with the bound
  tau = :data:`TAU` = 10 seconds (Feitelson's, as the Parallel Workloads
  Archive's tools use it), so that very short tasks do not dominate.

Per group of tasks (all, each owner, each queue: the master queue where a
task ran): the number of tasks, of those that started, of those that waited
(wait > 0), the mean and the largest wait, the mean turnaround, slowdown and
bounded slowdown.  For the whole replay also the makespan (the last end
less the first submit) and the utilisation: the slot-seconds the tasks used
over the slots of the execution hosts times the makespan; over time, the
busy slots as a step function (:func:`busy_slots`), and the length of the
queue of pending tasks (:func:`pending_tasks`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from minisge.replay.result import ReplayResult, TaskRun

TAU = 10.0  # seconds: the bound of the bounded slowdown

UNRUN_QUEUE = "-"  # the queue of a task that never started


@dataclass(frozen=True)
class Figures:
    """The metrics of a group of tasks."""

    tasks: int
    started: int
    waited: int
    mean_wait: float | None
    max_wait: float | None
    mean_turnaround: float | None
    mean_slowdown: float | None
    mean_bounded_slowdown: float | None


@dataclass(frozen=True)
class Summary:
    """A replay's metrics: in total, per owner, per queue."""

    label: str
    total: Figures
    users: dict[str, Figures]
    queues: dict[str, Figures]
    makespan: float | None
    utilisation: float | None
    slots: int


def wait(t: TaskRun) -> float | None:
    return None if t.start_time is None else t.start_time - t.submit_time


def turnaround(t: TaskRun) -> float | None:
    return None if t.end_time is None else t.end_time - t.submit_time


def slowdown(t: TaskRun) -> float | None:
    ta = turnaround(t)
    return None if ta is None or t.run_time <= 0 else ta / t.run_time


def bounded_slowdown(t: TaskRun, tau: float = TAU) -> float | None:
    ta = turnaround(t)
    return None if ta is None else max(1.0, ta / max(t.run_time, tau))


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def figures(tasks: Sequence[TaskRun]) -> Figures:
    waits = [wait(t) for t in tasks]
    known = [w for w in waits if w is not None]
    return Figures(
        tasks=len(tasks), started=len(known), waited=sum(1 for w in known if w > 0),
        mean_wait=_mean(list(waits)), max_wait=float(max(known)) if known else None,
        mean_turnaround=_mean([turnaround(t) for t in tasks]),
        mean_slowdown=_mean([slowdown(t) for t in tasks]),
        mean_bounded_slowdown=_mean([bounded_slowdown(t) for t in tasks]))


def queue_of(t: TaskRun) -> str:
    return t.placement[0][0] if t.placement else UNRUN_QUEUE


def busy_slots(result: ReplayResult) -> list[tuple[float, int]]:
    """The slots in use over time: (time, busy slots from then on), at each
    time the number changes, from the first submit."""
    changes: dict[float, int] = {}
    for t in result.tasks:
        if t.start_time is not None and t.end_time is not None:
            changes[t.start_time] = changes.get(t.start_time, 0) + t.slots
            changes[t.end_time] = changes.get(t.end_time, 0) - t.slots
    steps: list[tuple[float, int]] = []
    first = min((t.submit_time for t in result.tasks), default=0.0)
    busy = 0
    if first not in changes:
        steps.append((first, 0))
    for time in sorted(changes):
        busy += changes[time]
        steps.append((time, busy))
    return steps


def pending_tasks(result: ReplayResult) -> list[tuple[float, int]]:
    """The length of the queue over time: (time, tasks waiting from then on),
    at each time it changes (a submission adds one, a start takes one away;
    a task that never started waits to the end)."""
    changes: dict[float, int] = {}
    for t in result.tasks:
        changes[t.submit_time] = changes.get(t.submit_time, 0) + 1
        if t.start_time is not None:
            changes[t.start_time] = changes.get(t.start_time, 0) - 1
    steps: list[tuple[float, int]] = []
    waiting = 0
    for time in sorted(changes):
        waiting += changes[time]
        steps.append((time, waiting))
    return steps


def summarise(result: ReplayResult) -> Summary:
    tasks = result.tasks
    users: dict[str, list[TaskRun]] = {}
    queues: dict[str, list[TaskRun]] = {}
    for t in tasks:
        users.setdefault(t.owner, []).append(t)
        queues.setdefault(queue_of(t), []).append(t)
    ends = [t.end_time for t in tasks if t.end_time is not None]
    first = min((t.submit_time for t in tasks), default=None)
    makespan = float(max(ends) - first) if ends and first is not None else None
    slots = sum(n for _, n in result.host_slots)
    used = sum(t.run_time * t.slots for t in tasks if t.end_time is not None)
    util = used / (slots * makespan) if makespan and slots else None
    return Summary(result.label, figures(tasks), {u: figures(users[u]) for u in sorted(users)},
                   {q: figures(queues[q]) for q in sorted(queues)}, makespan, util, slots)


# ---------------------------------------------------------------- output

COLUMNS = ("config", "group", "tasks", "started", "waited", "mean_wait", "max_wait", "mean_turnaround",
           "mean_slowdown", "mean_bsld", "utilisation", "makespan")
HEADINGS = ("config", "group", "tasks", "started", "waited", "mean wait", "max wait", "mean turnaround",
            "mean slowdown", f"mean bsld({TAU:g}s)", "utilisation", "makespan")


def rows(summaries: Sequence[Summary]) -> list[tuple[object, ...]]:
    """The table's rows: per configuration its total, then each owner, then
    each queue (utilisation and makespan on the total's row only)."""
    out: list[tuple[object, ...]] = []
    for s in summaries:
        groups = [("total", s.total)] + [(f"user {u}", f) for u, f in s.users.items()] \
            + [(f"queue {q}", f) for q, f in s.queues.items()]
        for i, (name, f) in enumerate(groups):
            out.append((s.label, name, f.tasks, f.started, f.waited, f.mean_wait, f.max_wait, f.mean_turnaround,
                        f.mean_slowdown, f.mean_bounded_slowdown,
                        s.utilisation if i == 0 else None, s.makespan if i == 0 else None))
    return out


def _cell(value: object, column: str) -> str:
    if value is None:
        return "-"
    if column == "utilisation" and isinstance(value, float):
        return f"{100 * value:.1f}%"
    if isinstance(value, float):
        return f"{value:.2f}" if "slowdown" in column or "bsld" in column else f"{value:.1f}"
    return str(value)


def table(summaries: Sequence[Summary]) -> str:
    """The terminal table: times in seconds, slowdowns as ratios."""
    cells = [list(HEADINGS)] + [[_cell(v, c) for v, c in zip(r, COLUMNS, strict=True)] for r in rows(summaries)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    lines = []
    for r in cells:
        lines.append("  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths,
                                                                                                  strict=True))))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def csv_text(summaries: Sequence[Summary]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows(summaries):
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])
    return buf.getvalue()


def json_text(summaries: Sequence[Summary], results: Sequence[ReplayResult]) -> str:
    """Every configuration's metrics, its busy slots over time and its tasks."""
    doc = {"bounded_slowdown_tau_seconds": TAU, "configurations": [
        {"label": s.label, "slots": s.slots, "makespan": s.makespan, "utilisation": s.utilisation,
         "total": asdict(s.total), "users": {u: asdict(f) for u, f in s.users.items()},
         "queues": {q: asdict(f) for q, f in s.queues.items()},
         "busy_slots": [list(x) for x in busy_slots(r)],
         "pending_tasks": [list(x) for x in pending_tasks(r)],
         "tasks": [dict(asdict(t), wait=wait(t), turnaround=turnaround(t), slowdown=slowdown(t),
                        bounded_slowdown=bounded_slowdown(t)) for t in r.tasks]}
        for s, r in zip(summaries, results, strict=True)]}
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"
