"""A qmaster job as sge_priority(5) sees it: its JobFacts, and its ``-dl`` deadline in seconds.

The priority rules are the scheduler's (:mod:`minisge.scheduler.job_order`,
pure); reading a job of the qmaster and a ``date_time`` in local time (the
time zone is the host's) is the qmaster's side.
"""

from __future__ import annotations

import functools
import time

from minisge.formats import submit_options
from minisge.qmaster.job import Job
from minisge.scheduler.job_order import JobFacts


@functools.lru_cache(maxsize=256)
def _deadline_epoch(text: str, year: int) -> float:
    return time.mktime((*submit_options.date_time_fields(text, year), 0, 0, -1))


def deadline_time(text: str | float | None, now: float) -> float:
    """A ``-dl`` date_time (``[[CC]YY]MMDDhhmm[.SS]``, sge_types(5)) in
    seconds since the epoch, local time as qsub reads it (a missing year is
    that of ``now``; a two-digit year below 70 is 20YY); 0 for none."""
    if not text:
        return 0.0
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return _deadline_epoch(str(text), time.localtime(now).tm_year)
    except (ValueError, OverflowError):
        return 0.0


def execution_time(text: str | None, now: float) -> float:
    """qsub -a: the ``date_time`` (``[[CC]YY]MMDDhhmm[.SS]``, sge_types(5)) before
    which the job is not started, in seconds since the epoch, read in local
    time at submission (a missing year is that of ``now``); 0 for none."""
    return deadline_time(text, now)


def job_facts(job: Job, now: float) -> JobFacts:
    """The :class:`JobFacts` of a qmaster job: a job with no pending task
    waited until its first task started."""
    spec = job.spec
    pe = spec.get("pe")
    waited = None
    if not job.pending:
        starts = [t.start_time for t in job.tasks.values() if t.start_time]
        waited = min(starts) if starts else None
    return JobFacts(
        job.number, job.priority, job.submission_time, waited,
        deadline_time(spec.get("deadline"), now),
        tuple((spec.get("hard_resources") or {}).items()),
        (pe["name"], tuple((lo, hi) for lo, hi in pe["ranges"])) if pe else None,
    )
