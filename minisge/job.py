"""The qmaster's model of a job and its array tasks.

A job is its submission request (the dict ``qsub`` sends, see
:mod:`minisge.submit_options`) plus what happened since: which tasks are
still pending, which were dispatched, holds and predecessors.  Pending
array tasks stay a plain list of ids; a task gets a :class:`Task` record
only when it is dispatched (or put in error), and leaves the job when it
ends (the accounting file keeps it), so a 100,000-task array costs little.
"""

from __future__ import annotations

import attrs

RUNNING = "running"
ERROR = "error"  # Eqw: waits for qmod -cj
RESCHEDULING = "rescheduling"  # Rq: qmod -r, its run is being killed; pending once it ended


@attrs.define
class Grant:
    """Slots granted in one queue instance."""

    cqueue: str
    host: str
    slots: int

    @property
    def qinstance(self) -> str:
        return f"{self.cqueue}@{self.host}"


@attrs.define
class Task:
    task_id: int
    state: str = RUNNING
    start_time: float = 0.0
    granted: list[Grant] = attrs.field(factory=list)
    granted_pe: str = ""
    restarted: int = 0
    delete_requested: bool = False
    error_reason: str = ""
    # why the task is stopped: "job" (qmod -sj), "queue" (qmod -sq of its queue
    # instance), "threshold" (suspend_thresholds), "subordinate" (subordinate_list);
    # stopped while non-empty (minisge.job_control)
    suspended_by: set[str] = attrs.field(factory=set, converter=set)

    @property
    def suspended(self) -> bool:
        return bool(self.suspended_by)

    @property
    def slots(self) -> int:
        return sum(g.slots for g in self.granted)

    @property
    def master(self) -> Grant | None:
        return self.granted[0] if self.granted else None


@attrs.define
class Job:
    number: int
    name: str
    owner: str
    uid: int
    group: str
    gid: int
    submission_time: float
    spec: dict
    pending: list[int] = attrs.field(factory=list)
    tasks: dict[int, Task] = attrs.field(factory=dict)
    user_hold: bool = False
    operator_hold: bool = False
    system_hold: bool = False
    predecessors: list[int] = attrs.field(factory=list)
    restarted_pending: dict[int, int] = attrs.field(factory=dict)  # task -> restart count
    priority: int = 0

    @property
    def is_array(self) -> bool:
        return self.spec.get("array") is not None

    @property
    def array(self) -> tuple[int, int, int]:
        a = self.spec.get("array")
        return tuple(a) if a else (1, 1, 1)  # type: ignore[return-value]

    @property
    def held(self) -> bool:
        return self.user_hold or self.operator_hold or self.system_hold or bool(self.predecessors)

    def is_done(self) -> bool:
        return not self.pending and not self.tasks

    def requested_slots(self) -> int:
        """The least number of slots the job's ``-pe`` range allows (1 without a PE)."""
        pe = self.spec.get("pe")
        if not pe:
            return 1
        return min(lo for lo, _hi in pe["ranges"])

    @property
    def pe_ranges(self) -> list[tuple[int, int]]:
        pe = self.spec.get("pe")
        return [tuple(r) for r in pe["ranges"]] if pe else []
