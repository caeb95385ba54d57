"""What a replay produced: the runs of its tasks, in simulated time.

The one type the replay (:mod:`minisge.replay`), its metrics, its plots and
its what-if tables share.  Times are seconds since the epoch of the trace
(SWF: relative to its first submit; an accounting file: the recorded
epoch seconds), floats.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskRun:
    """One task of the trace as the replay ran it."""

    job_id: int
    task_id: int
    owner: str
    project: str | None
    submit_time: float
    start_time: float | None  # None: never started (unschedulable, or the replay ended first)
    end_time: float | None
    run_time: float  # the recorded run time the replay gave it
    slots: int
    placement: tuple[tuple[str, str, int], ...]  # (queue, host, slots) of each queue instance it ran in; master first
    requested_time: float | None = None  # the trace's requested run time (SWF field 9, h_rt), when known


@dataclass(frozen=True)
class ReplayResult:
    """One replay of one trace under one configuration."""

    label: str  # the configuration's name (what-if tables and plots use it)
    tasks: tuple[TaskRun, ...]  # in (submit_time, job_id, task_id) order
    host_slots: tuple[tuple[str, int], ...]  # every execution host and its total slots, in name order
    queue_slots: tuple[tuple[str, str, int], ...]  # every queue instance (queue, host, slots), sorted
