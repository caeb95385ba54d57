"""Pictures of replays (issue 16): what the scheduler did, at a glance.

:func:`write_plots` draws one or several :class:`~minisge.replay.result.ReplayResult`
with matplotlib (the optional extra ``pip install '.[teach]'``; the Agg
backend, never a display) and writes each figure as PNG and SVG:

``gantt``
    the task runs on the slots of the hosts: one row per slot of a host
    (the hosts in name order, a line between hosts), a block per task run
    on the slots it held (a parallel job over several rows, on one or
    several hosts), a colour per owner;
``usage``
    above, the utilisation (busy slots / all slots of the hosts, in %);
    below, the queue length (tasks submitted and not yet started);
``waits``
    the distribution of the wait times (start - submit) of the tasks that
    started, with their mean and median and the share that waited at most x;
``metrics`` (several results only)
    a bar per result of the mean wait, the mean bounded slowdown, the
    makespan and the mean utilisation of :func:`minisge.replay.metrics.summarise`.

Several results (a what-if) give the same figures with a panel per result
on shared axes, so that the eye compares like with like.  Time runs from
the first submission of the trace (0), in s, min, h or d as the span fits.

The series are :mod:`minisge.replay.metrics`' (busy slots, pending tasks,
the summaries) or pure functions here without matplotlib
(:func:`utilisation_steps`, :func:`gantt_layout`, :func:`gantt_blocks`,
:func:`legend_entries`, :func:`wait_times`, :func:`bin_counts`), tested
alone.  The same results give the same files byte for byte: the SVG's
hash salt and both formats' metadata are fixed.

This module imports matplotlib at its top: no command imports it (the
replay loads it with :mod:`importlib` only for ``--plot``).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from minisge.replay import metrics
from minisge.replay.result import ReplayResult, TaskRun

#: Task runs labelled with their job number in the Gantt chart when there are at most this many.
LABEL_LIMIT = 60

#: The Gantt chart's blocks have a black outline when there are at most this many (else the outlines hide them).
OUTLINE_LIMIT = 400

#: The bins of the wait-time histogram; its count axis is logarithmic when
#: the fullest bin holds more than SKEWED times the emptiest non-empty one.
WAIT_BINS = 20
SKEWED = 50

#: The owners the legend names (those whose tasks held the most slot time); the others share one colour.
LEGEND_OWNERS = 10
OTHER_OWNERS = "other owners"

FIGURES = ("gantt", "usage", "waits")
WHAT_IF_FIGURES = (*FIGURES, "metrics")

#: Fixed so that the SVG's ids, and so its bytes, do not change from run to run.
SVG_HASH_SALT = "minisge-replay"

#: What each format writes into the file's metadata: no date, no version (the same bytes every time).
METADATA: dict[str, dict[str, Any]] = {
    "svg": {"Date": None, "Creator": "minisge replay"},
    "png": {"Software": "minisge replay"},
}

# ---------------------------------------------------------------- the series (pure)


def horizon(result: ReplayResult) -> float:
    """The last moment of the replay: its last end, start or submission (0 if it has no task)."""
    times = [t for task in result.tasks for t in (task.submit_time, task.start_time, task.end_time)
             if t is not None]
    return max(times, default=0.0)


def origin(results: Iterable[ReplayResult]) -> float:
    """Time 0 of the figures: the first submission of any of ``results`` (0 if none has a task)."""
    return min((task.submit_time for r in results for task in r.tasks), default=0.0)


def run_end(task: TaskRun, end_of_replay: float) -> float | None:
    """When ``task`` stopped holding its slots: its end, or the end of the
    replay if it was still running then; None if it never started."""
    if task.start_time is None:
        return None
    return end_of_replay if task.end_time is None else task.end_time


def total_slots(result: ReplayResult) -> int:
    """All slots of the execution hosts."""
    return sum(n for _, n in result.host_slots)


def utilisation_steps(result: ReplayResult) -> list[tuple[float, float]]:
    """The utilisation over time, busy slots (:func:`minisge.replay.metrics.busy_slots`)
    / all slots of the hosts (0..1), at every change (empty if the hosts have no slot)."""
    total = total_slots(result)
    return [(t, busy / total) for t, busy in metrics.busy_slots(result)] if total else []


def wait_times(result: ReplayResult) -> list[float]:
    """The wait (start - submit, s) of every task that started, in the result's task order."""
    return [task.start_time - task.submit_time for task in result.tasks if task.start_time is not None]


def bin_counts(values: Iterable[float], edges: Sequence[float]) -> list[int]:
    """How many ``values`` fall in each bin between ``edges`` (as a
    histogram counts: each bin holds its left edge, the last its right one
    too; values outside are not counted)."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        if not edges[0] <= v <= edges[-1]:
            continue
        i = bisect.bisect_right(edges, v) - 1
        counts[min(i, len(counts) - 1)] += 1
    return counts


@dataclass(frozen=True)
class Bar:
    """One task run on one slot row of the Gantt chart."""

    row: int
    start: float
    end: float
    job_id: int
    task_id: int
    owner: str


@dataclass(frozen=True)
class GanttLayout:
    """The rows (host, slot number from 0) of the chart, top to bottom, and the bars on them.

    A host has a row per slot it has (``host_slots``); where the replay put
    more tasks on a host at once than it has slots (queue instances with
    more slots than the host), the extra rows follow the host's own."""

    rows: tuple[tuple[str, int], ...]
    bars: tuple[Bar, ...]


def _free_rows(free_at: Sequence[float], start: float, n: int) -> list[int]:
    """``n`` rows free at ``start``: the first run of ``n`` adjacent ones if
    there is one, else the lowest-numbered (fewer if not enough are free)."""
    free = [i for i, t in enumerate(free_at) if t <= start]
    for k in range(len(free) - n + 1):
        if free[k + n - 1] - free[k] == n - 1:
            return free[k:k + n]
    return free[:n]


def gantt_layout(result: ReplayResult) -> GanttLayout:
    """Which slot row each task run occupies: tasks in start order, each
    queue instance's slots of a task on rows of its host free at its start
    (a row is free again when its task ends): the first run of adjacent
    free rows long enough, else the lowest-numbered free rows."""
    end = horizon(result)
    free_at: dict[str, list[float]] = {h: [float("-inf")] * n for h, n in result.host_slots}
    started = sorted((t for t in result.tasks if t.start_time is not None),
                     key=lambda t: (t.start_time, t.job_id, t.task_id))
    placed: list[tuple[str, int, TaskRun, float]] = []
    for task in started:
        assert task.start_time is not None
        stop = run_end(task, end)
        assert stop is not None
        for _queue, host, n in task.placement:
            rows = free_at.setdefault(host, [])
            free = _free_rows(rows, task.start_time, n)
            while len(free) < n:
                rows.append(float("-inf"))
                free.append(len(rows) - 1)
            for i in free:
                rows[i] = stop
                placed.append((host, i, task, stop))
    hosts = [h for h, _ in result.host_slots] + sorted(set(free_at) - {h for h, _ in result.host_slots})
    index: dict[tuple[str, int], int] = {}
    for host in hosts:
        for i in range(len(free_at[host])):
            index[(host, i)] = len(index)
    bars = tuple(Bar(index[(host, i)], task.start_time or 0.0, stop, task.job_id, task.task_id, task.owner)
                 for host, i, task, stop in placed)
    return GanttLayout(tuple(index), bars)


@dataclass(frozen=True)
class Block:
    """Bars of one task run on adjacent rows, drawn as one block: ``rows``
    rows from ``row`` down."""

    row: int
    rows: int
    start: float
    end: float
    job_id: int
    task_id: int
    owner: str


def gantt_blocks(layout: GanttLayout) -> list[Block]:
    """The bars of ``layout`` with each task run's bars on adjacent rows
    merged into one block, in (job, task, row) order."""
    blocks: list[Block] = []
    for bar in sorted(layout.bars, key=lambda b: (b.job_id, b.task_id, b.start, b.row)):
        last = blocks[-1] if blocks else None
        if (last is not None and (last.job_id, last.task_id, last.start, last.end) == (
                bar.job_id, bar.task_id, bar.start, bar.end) and last.row + last.rows == bar.row):
            blocks[-1] = Block(last.row, last.rows + 1, last.start, last.end, last.job_id, last.task_id, last.owner)
        else:
            blocks.append(Block(bar.row, 1, bar.start, bar.end, bar.job_id, bar.task_id, bar.owner))
    return blocks


def owner_ranking(results: Iterable[ReplayResult]) -> list[str]:
    """Every owner of the tasks of ``results``, the one whose tasks held the
    most slot time (slots x run time, summed over the results) first, then
    by name."""
    use: dict[str, float] = {}
    for r in results:
        end = horizon(r)
        for task in r.tasks:
            stop = run_end(task, end)
            held = 0.0 if stop is None or task.start_time is None else (stop - task.start_time) * task.slots
            use[task.owner] = use.get(task.owner, 0.0) + held
    return sorted(use, key=lambda o: (-use[o], o))


def legend_entries(results: Iterable[ReplayResult], limit: int = LEGEND_OWNERS) -> dict[str, str]:
    """owner -> the legend entry its tasks are drawn as: the owner itself
    for at most ``limit`` owners (the first of :func:`owner_ranking`),
    :data:`OTHER_OWNERS` for the rest when there are more than ``limit``
    (then only ``limit - 1`` are named, the last entry being theirs)."""
    ranked = owner_ranking(results)
    named = ranked if len(ranked) <= limit else ranked[:limit - 1]
    return {o: (o if i < len(named) else OTHER_OWNERS) for i, o in enumerate(ranked)}


def time_unit(span: float) -> tuple[str, float]:
    """The unit that fits a span of ``span`` seconds: (name, seconds per unit)."""
    if span <= 600:
        return "s", 1.0
    if span <= 10 * 3600:
        return "min", 60.0
    if span <= 10 * 86400:
        return "h", 3600.0
    return "d", 86400.0


# ---------------------------------------------------------------- the figures


@dataclass(frozen=True)
class _Frame:
    """What every panel of a set of results shares: time 0, the unit, the colours."""

    t0: float
    end: float
    unit: str
    scale: float
    entries: dict[str, str]  # owner -> legend entry
    colours: dict[str, Any]  # legend entry -> colour, in the legend's order

    def x(self, t: float) -> float:
        return (t - self.t0) / self.scale

    @property
    def xlabel(self) -> str:
        return f"time since the first submission ({self.unit})"


def _frame(results: Sequence[ReplayResult]) -> _Frame:
    t0 = origin(results)
    end = max((horizon(r) for r in results), default=t0)
    unit, scale = time_unit(end - t0)
    entries = legend_entries(results)
    cmap = matplotlib.colormaps["tab10"]
    named = [o for o, e in entries.items() if o == e]
    colours: dict[str, Any] = {o: cmap(i % cmap.N) for i, o in enumerate(named)}
    if OTHER_OWNERS in entries.values():
        colours[OTHER_OWNERS] = "lightgrey"
    return _Frame(t0, end, unit, scale, entries, colours)


def _figure(nrows: int, ncols: int, *, figsize: tuple[float, float], **subplots: Any) -> tuple[Figure, Any]:
    """A figure of nrows x ncols panels drawn by Agg (no pyplot: no global
    figure manager, no display), its axes as a 2-D array."""
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplots)
    return fig, axes


def _draw_gantt(ax: Axes, result: ReplayResult, frame: _Frame) -> None:
    layout = gantt_layout(result)
    blocks = gantt_blocks(layout)
    by_entry: dict[str, list[Block]] = {}
    for block in blocks:
        by_entry.setdefault(frame.entries[block.owner], []).append(block)
    outline = 0.4 if len(blocks) <= OUTLINE_LIMIT else 0.0
    for entry in frame.colours:
        if entry not in by_entry:
            continue
        shapes = []
        for b in by_entry[entry]:
            x0, x1 = frame.x(b.start), frame.x(b.end)
            top, bottom = b.row - 0.4, b.row + b.rows - 1 + 0.4
            shapes.append([(x0, top), (x1, top), (x1, bottom), (x0, bottom)])
        ax.add_collection(PolyCollection(shapes, facecolors=frame.colours[entry], edgecolors="black",
                                         linewidths=outline))
    if len(result.tasks) <= LABEL_LIMIT:
        for b in blocks:
            ax.text(frame.x((b.start + b.end) / 2), b.row + (b.rows - 1) / 2, str(b.job_id),
                    ha="center", va="center", fontsize=7, clip_on=True)
    # a host's name in the middle of its rows, a line between hosts
    hosts: dict[str, list[int]] = {}
    for i, (host, _) in enumerate(layout.rows):
        hosts.setdefault(host, []).append(i)
    ax.set_yticks([(rows[0] + rows[-1]) / 2 for rows in hosts.values()], list(hosts))
    ax.set_yticks(range(len(layout.rows)), minor=True)
    for rows in list(hosts.values())[1:]:
        ax.axhline(rows[0] - 0.5, color="grey", linewidth=0.8)
    ax.set_ylim(len(layout.rows) - 0.5, -0.5)  # the first host on top
    ax.set_xlim(0, frame.x(frame.end) or 1.0)
    ax.grid(axis="x", linestyle=":", linewidth=0.6)
    ax.set_ylabel("host (a row per slot)")


def _owner_legend(fig: Figure, frame: _Frame) -> None:
    handles = [Patch(facecolor=c, edgecolor="black", linewidth=0.4, label=o) for o, c in frame.colours.items()]
    if handles:
        fig.legend(handles=handles, title="owner", loc="outside right upper")


def _gantt(results: Sequence[ReplayResult], frame: _Frame) -> Figure:
    rows = [len(gantt_layout(r).rows) for r in results]
    height = sum(min(max(1.6, 0.28 * n + 1.0), 6.0) for n in rows) + 0.8
    fig, axes = _figure(len(results), 1, sharex=True,
                        figsize=(10, height),
                        height_ratios=[max(n, 2) for n in rows])
    several = len(results) > 1
    for ax, result in zip(axes[:, 0], results, strict=True):
        _draw_gantt(ax, result, frame)
        never = sum(1 for t in result.tasks if t.start_time is None)
        note = f" ({never} tasks never started)" if never else ""
        ax.set_title(f"{result.label}{note}" if several else f"Task runs on the hosts' slots: {result.label}{note}")
    axes[-1, 0].set_xlabel(frame.xlabel)
    if several:
        fig.suptitle("Task runs on the hosts' slots")
    _owner_legend(fig, frame)
    return fig


def _draw_steps(ax: Axes, steps: Sequence[tuple[float, float]], frame: _Frame, colour: str) -> None:
    xs = [0.0] + [frame.x(t) for t, _ in steps] + [frame.x(frame.end)]
    ys = [0.0] + [v for _, v in steps] + [steps[-1][1] if steps else 0.0]
    ax.step(xs, ys, where="post", color=colour, linewidth=1.2)
    ax.fill_between(xs, ys, step="post", color=colour, alpha=0.25)
    ax.grid(linestyle=":", linewidth=0.6)
    ax.set_xlim(0, frame.x(frame.end) or 1.0)


def _usage(results: Sequence[ReplayResult], frame: _Frame) -> Figure:
    n = len(results)
    fig, axes = _figure(2, n, sharex=True, sharey="row",
                        figsize=(max(8.0, 4.5 * n), 5.5))
    longest = max((v for r in results for _, v in metrics.pending_tasks(r)), default=0)
    for col, result in enumerate(results):
        top, bottom = axes[0, col], axes[1, col]
        _draw_steps(top, [(t, 100 * u) for t, u in utilisation_steps(result)], frame, "tab:blue")
        top.set_ylim(0, 105)
        _draw_steps(bottom, [(t, float(q)) for t, q in metrics.pending_tasks(result)], frame, "tab:orange")
        bottom.set_ylim(0, max(1.0, longest * 1.05))
        bottom.yaxis.set_major_locator(MaxNLocator(integer=True))
        bottom.set_xlabel(frame.xlabel)
        if n > 1:
            top.set_title(result.label)
    axes[0, 0].set_ylabel("utilisation (% of slots busy)")
    axes[1, 0].set_ylabel("queue length (pending tasks)")
    fig.suptitle("Utilisation and queue length" + ("" if n > 1 else f": {results[0].label}"))
    return fig


def _waits(results: Sequence[ReplayResult], frame: _Frame) -> Figure:
    n = len(results)
    fig, axes = _figure(1, n, sharex=True, sharey=True,
                        figsize=(max(8.0, 4.5 * n), 4.6))
    every = [w for r in results for w in wait_times(r)]
    unit, scale = time_unit(max(every, default=0.0))
    top = max(every, default=0.0) / scale
    bins = [top * i / WAIT_BINS for i in range(WAIT_BINS + 1)] if top > 0 else [0.0, 1.0]
    counts = [c for r in results for c in bin_counts([w / scale for w in wait_times(r)], bins) if c]
    skewed = bool(counts) and max(counts) > SKEWED * min(counts)
    for col, (ax, result) in enumerate(zip(axes[0], results, strict=True)):
        waits = sorted(w / scale for w in wait_times(result))
        ax.hist(waits, bins=bins, color="tab:green", edgecolor="black", linewidth=0.4, label="tasks (histogram)")
        said = "no task started"
        if waits:
            mean = sum(waits) / len(waits)
            median = (waits[(len(waits) - 1) // 2] + waits[len(waits) // 2]) / 2
            ax.axvline(mean, color="tab:red", linestyle="--", linewidth=1.2, label="mean")
            ax.axvline(median, color="black", linestyle=":", linewidth=1.2, label="median")
            said = f"mean {mean:.3g} {unit}, median {median:.3g} {unit}"
        # the share of tasks that waited at most so long, on the right
        share = ax.twinx()
        xs = [0.0, *waits, bins[-1]]
        ys = [0.0, *(100 * (i + 1) / len(waits) for i in range(len(waits))), 100.0] if waits else [0.0, 0.0]
        share.step(xs, ys, where="post", color="tab:purple", linewidth=1.2,
                   label="share of the tasks that waited at most x (%)")
        share.set_ylim(0, 102)
        if col == n - 1:
            share.set_ylabel("tasks that waited at most x (%)", color="tab:purple")
        else:
            share.tick_params(labelright=False)
        ax.set_xlabel(f"wait time x, submission to start ({unit})")
        ax.grid(axis="y", linestyle=":", linewidth=0.6)
        if skewed:
            ax.set_yscale("log")
        ax.set_title(f"{result.label}: {said}" if n > 1 else said, fontsize=9)
        if col == 0:
            handles, labels = ax.get_legend_handles_labels()
            more, more_labels = share.get_legend_handles_labels()
            fig.legend(handles + more, labels + more_labels, loc="outside lower center", ncols=4, fontsize=8)
    axes[0, 0].set_ylabel("tasks" + (" (log scale)" if skewed else ""))
    fig.suptitle("Wait times" + ("" if n > 1 else f": {results[0].label}"))
    return fig


def _metrics(results: Sequence[ReplayResult], frame: _Frame) -> Figure:
    sums = [metrics.summarise(r) for r in results]
    waits = [s.total.mean_wait or 0.0 for s in sums]
    spans = [s.makespan or 0.0 for s in sums]
    wait_unit, wait_scale = time_unit(max(waits, default=0.0))
    span_unit, span_scale = time_unit(max(spans, default=0.0))
    panels = [
        (f"mean wait ({wait_unit})", [w / wait_scale for w in waits]),
        (f"mean bounded slowdown (bound {metrics.TAU:g} s)", [s.total.mean_bounded_slowdown or 0.0 for s in sums]),
        (f"makespan ({span_unit})", [m / span_scale for m in spans]),
        ("mean utilisation (%)", [100 * (s.utilisation or 0.0) for s in sums]),
    ]
    fig, axes = _figure(1, len(panels),
                        figsize=(max(10.0, 1.2 * len(sums) * len(panels)), 3.8))
    cmap = matplotlib.colormaps["tab10"]
    labels = [s.label for s in sums]
    for ax, (title, values) in zip(axes[0], panels, strict=True):
        bars = ax.bar(range(len(values)), values, color=[cmap(i % 10) for i in range(len(values))],
                      edgecolor="black", linewidth=0.4)
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.set_xticks(range(len(values)), labels, rotation=20, ha="right")
        ax.set_title(title, fontsize=10)
        ax.margins(y=0.15)
        ax.grid(axis="y", linestyle=":", linewidth=0.6)
    fig.suptitle("The main metrics per configuration")
    return fig


def write_plots(results: Sequence[ReplayResult], out_dir: str,
                formats: Sequence[str] = ("png", "svg")) -> list[str]:
    """Draw ``results`` (one replay, or several of the same trace: a
    what-if) into ``out_dir`` (made if missing) as ``NAME.FORMAT`` for each
    of the figures (:data:`FIGURES`, :data:`WHAT_IF_FIGURES` for several)
    and ``formats``; returns the paths written, sorted."""
    if not results:
        raise ValueError("no replay to plot")
    os.makedirs(out_dir, exist_ok=True)
    draw = {"gantt": _gantt, "usage": _usage, "waits": _waits, "metrics": _metrics}
    names = WHAT_IF_FIGURES if len(results) > 1 else FIGURES
    written: list[str] = []
    with matplotlib.rc_context({"svg.hashsalt": SVG_HASH_SALT, "font.size": 9}):
        frame = _frame(results)
        for name in names:
            for fmt in formats:
                # a figure per file: a figure drawn once (for the PNG) lays out
                # its panels a hair differently the next time (for the SVG)
                path = os.path.join(out_dir, f"{name}.{fmt}")
                draw[name](results, frame).savefig(path, format=fmt, dpi=110, metadata=METADATA.get(fmt))
                written.append(path)
    return sorted(written)
