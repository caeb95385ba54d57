"""The jobs that have finished, as ``qstat -s z`` lists them (8.1.9's zombie
jobs): sge_conf(5) ``finished_jobs`` of them, the oldest dropped first.

A job enters the list once it has left the qmaster (every task ended or
deleted, a job deleted before it ran included), in that order; it shows
with state ``z``, its submission time, no queue, the slots it asked for and,
for an array, its task ranges.  The list lives in the qmaster's memory: a
restarted qmaster starts with none.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any

from minisge.qmaster.job import Job


class FinishedJobs:
    """The finished jobs, oldest first, at most ``limit()`` of them."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self.limit = limit
        self.rows: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def job_left(self, job: Job) -> None:
        """``job`` has left the qmaster: it becomes the newest finished job."""
        row: dict[str, Any] = {
            "job_number": job.number,
            "name": job.name,
            "owner": job.owner,
            "submission_time": int(job.submission_time),
            "slots": job.requested_slots(),
            "array": job.is_array,
            "prio": 0.0,
            "state": "z",
        }
        if job.is_array:
            first, last, step = job.spec["array"]
            row["tasks"] = [{"ranges": [(first, last, step)], "state": "z"}]
        self.rows.pop(job.number, None)
        self.rows[job.number] = row
        keep = max(0, self.limit())
        while len(self.rows) > keep:
            self.rows.popitem(last=False)

    def listing(self, users: Collection[str] | None) -> list[dict[str, Any]]:
        """The finished jobs of ``users`` (None or ``*``: everyone's), oldest first."""
        return [r for r in self.rows.values() if users is None or "*" in users or r["owner"] in users]
