"""Workload traces: the Standard Workload Format of the Parallel Workloads
Archive (SWF), and a Grid Engine accounting(5) file read as a trace.

A trace is a list of :class:`TraceJob`: what was submitted when, and how
long each task ran.  ``minisge replay`` (:mod:`minisge.replay`) submits them
to the qmaster's own code in simulated time.

SWF (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): ``;``
lines are header comments; every other non-blank line is one job of 18
whitespace-separated numeric fields, ``-1`` for unknown.  Read are: job
number (1), submit time (2), run time (4), allocated processors (5), else
requested processors (8), requested time (9), user id (12), group id (13),
queue number (15), partition number (16) and status (11).

What becomes of each job (decided here, documented in docs/teaching.md):

- status 5 (cancelled) or 0 (failed) with a run time of 0 or less: the job
  never ran; it is skipped (``skipped`` says so).  A failed or cancelled job
  that ran (run time > 0) is replayed for its run time: it held its slots.
- run time unknown (-1) or processors unknown (both -1): skipped.
- user 7 is owner ``user7``, group 3 ``group3``; queue 2 is queue ``2``
  (mapped onto the configuration's queues by the replay), the partition,
  when known, is the project ``partition4``.

A bad line raises :class:`minisge.formats.errors.FormatError`
``FILE:LINE: what is wrong`` (too few or too many fields, a field that is
not a number).

An accounting file (minisge's or a real 8.1's, :mod:`minisge.formats.accounting`):
one job per job number, its array tasks the records' task numbers; the
submit time is ``submission_time``, the run time ``end_time - start_time``,
the slots ``slots``, the owner, group, project and queue (``qname``) as
recorded.  A record of a task that never started (start time 0) and the
records of the slave tasks of a tightly integrated parallel job
(``pe_taskid`` set) are skipped; of a task accounted twice (re-run) the
last record counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from minisge.formats import accounting
from minisge.formats.errors import FormatError

NFIELDS = 18
#: SWF status: 0 failed, 1 completed, 5 cancelled (2-4: checkpointed parts)
FAILED, CANCELLED = 0, 5


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace: submitted at ``submit_time`` (seconds of the
    trace's epoch), its tasks ``(task_id, run_time)`` (one, task 1, unless
    an array job)."""

    job_id: int
    submit_time: float
    tasks: tuple[tuple[int, float], ...]
    slots: int
    owner: str
    group: str
    project: str | None = None
    queue: str | None = None
    requested_time: float | None = None

    @property
    def is_array(self) -> bool:
        return len(self.tasks) > 1 or (bool(self.tasks) and self.tasks[0][0] != 1)


@dataclass(frozen=True)
class Trace:
    """A trace: its jobs in (submit time, job id) order, and the jobs that
    are not replayed (``(job_id, why)``)."""

    jobs: tuple[TraceJob, ...]
    skipped: tuple[tuple[int, str], ...] = ()


def _number(text: str, field: int, path: str, lineno: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise FormatError(f"field {field} is not a number: {text!r}", path, lineno) from None


def parse_swf(text: str, path: str = "<input>") -> Trace:
    """The jobs of an SWF file's ``text``; FormatError on a bad line."""
    jobs: list[TraceJob] = []
    skipped: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        words = stripped.split()
        if len(words) != NFIELDS:
            raise FormatError(f"{len(words)} fields, an SWF job line has {NFIELDS}", path, lineno)
        f = [_number(w, i, path, lineno) for i, w in enumerate(words, 1)]
        job_id = int(f[0])
        submit, run, alloc, req_procs, req_time = f[1], f[3], int(f[4]), int(f[7]), f[8]
        status, uid, gid, queue, partition = int(f[10]), int(f[11]), int(f[12]), int(f[14]), int(f[15])
        if submit < 0:
            raise FormatError(f"job {job_id} has no submit time (field 2)", path, lineno)
        slots = alloc if alloc > 0 else req_procs
        if status in (FAILED, CANCELLED) and run <= 0:
            skipped.append((job_id, "cancelled before it ran" if status == CANCELLED else "failed before it ran"))
            continue
        if run < 0:
            skipped.append((job_id, "run time unknown"))
            continue
        if slots <= 0:
            skipped.append((job_id, "number of processors unknown"))
            continue
        jobs.append(TraceJob(
            job_id=job_id, submit_time=submit, tasks=((1, run),), slots=slots,
            owner=f"user{uid}" if uid >= 0 else "nobody", group=f"group{gid}" if gid >= 0 else "nogroup",
            project=f"partition{partition}" if partition >= 0 else None,
            queue=str(queue) if queue >= 0 else None,
            requested_time=req_time if req_time > 0 else None))
    return Trace(tuple(sorted(jobs, key=lambda j: (j.submit_time, j.job_id))), tuple(skipped))


def from_accounting(records: Iterable[accounting.AccountingRecord]) -> Trace:
    """The trace of accounting records (read with
    :func:`minisge.formats.accounting.parse_line`, which reports bad lines)."""
    last: dict[tuple[int, int], accounting.AccountingRecord] = {}
    skipped: dict[int, str] = {}
    for r in records:
        if r.pe_taskid not in ("NONE", ""):
            continue
        if not r.start_time:
            skipped[r.job_number] = "never started"
            continue
        last[(r.job_number, r.task_number)] = r
    by_job: dict[int, list[accounting.AccountingRecord]] = {}
    for (job_id, _task), r in sorted(last.items()):
        by_job.setdefault(job_id, []).append(r)
    jobs = []
    for job_id, recs in by_job.items():
        first = recs[0]
        skipped.pop(job_id, None)
        jobs.append(TraceJob(
            job_id=job_id, submit_time=float(min(r.submission_time for r in recs)),
            tasks=tuple((max(1, r.task_number), float(max(0, r.end_time - r.start_time))) for r in recs),
            slots=max(1, first.slots), owner=first.owner, group=first.group,
            project=None if first.project in ("NONE", "") else first.project,
            queue=first.qname or None))
    return Trace(tuple(sorted(jobs, key=lambda j: (j.submit_time, j.job_id))),
                 tuple(sorted(skipped.items())))


def parse_accounting(text: str, path: str = "<input>") -> Trace:
    """The trace of an accounting file's ``text`` (``#`` lines skipped as
    qacct does); FormatError ``FILE:LINE: what is wrong`` on a bad line."""
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#") or len(line) <= 1:
            continue
        records.append(accounting.parse_line(line, path, lineno))
    return from_accounting(records)


def is_swf(text: str) -> bool:
    """Whether ``text`` looks like SWF rather than an accounting file: its
    first line that is not a comment has no ``:`` (an accounting line has 44)."""
    for line in text.splitlines():
        if line.strip() and not line.startswith((";", "#")):
            return ":" not in line
    return True


def parse_trace(text: str, path: str = "<input>") -> Trace:
    """An SWF or an accounting file, told apart by :func:`is_swf`."""
    return parse_swf(text, path) if is_swf(text) else parse_accounting(text, path)
