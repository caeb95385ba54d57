"""What the page shows a user: the cell's queue instances, the jobs the user
may see, and why each pending one waits.

Pure: the qmaster's replies in (:class:`CellState`, gathered by
:mod:`minisge.web.app`), one JSON document out (:func:`document`).  The
rows are the ``qstat -f -fmt json`` view's (:func:`minisge.output.json_views.qstat_full_view`),
so the page and ``qstat -f`` never disagree; the reasons are ``qstat -j``'s
scheduling info, the job's own lines, with the cell-wide ones once apart
(``global_messages``).

Who sees what: a manager (root, the user the qmaster runs as, and the
cell's manager list, ``qconf -sm``) every job, as ``qstat -u '*'``; anyone
else their own jobs, as a plain ``qstat`` shows them.  The queue instances
and the cell-wide messages are everyone's (``qstat -f`` and ``qstat -j``
show them to every user).  The document::

    {"schema": "minisge-web", "version": 1, "cell": "default", "host": "node1",
     "user": "alice", "sees": "own" | "all",
     "queues": [{"name", "qtype", "slots_used", "slots_resv", "slots_total", "load_avg", "state"}],
     "jobs": [{"job_number", "name", "owner", "state", "slots", "prio",
               "queue_name" and "start_time" (running) | "submission_time" (pending),
               "ja_task_ids" (an array's tasks),
               "reasons" (pending: [text], null for a job beyond the first REASONS_MAX)}],
     "global_messages": [text]}

or, when the cell cannot be asked, ``{"schema", "version", "error": text}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from minisge.output import json_views, qstat_out

SCHEMA = "minisge-web"
VERSION = 1

#: the queue instance's fields of qstat -f's JSON view the page shows
QUEUE_FIELDS = ("name", "qtype", "slots_used", "slots_resv", "slots_total", "load_avg", "state")


@dataclass(frozen=True)
class CellState:
    """One look at the cell: the replies of ping (``cell``, ``host``,
    ``admin_user``), ``qconf -sm`` (``managers``), ``qstat -f -u '*'``
    (``queues``: its queue_info, ``jobs``) and ``qstat -j`` of the pending
    jobs (``reasons`` by job number, ``global_messages``); or ``error``, what
    went wrong asking."""

    cell: str = ""
    host: str = ""
    admin_user: str = ""
    managers: frozenset[str] = frozenset()
    queues: Sequence[Mapping[str, Any]] = ()
    jobs: Sequence[Mapping[str, Any]] = ()
    reasons: Mapping[str, Sequence[str]] = field(default_factory=dict)
    global_messages: Sequence[str] = ()
    error: str | None = None


def is_manager(state: CellState, uid: int, user: str) -> bool:
    """Grid Engine's managers: root, the admin user (the qmaster's), the manager list."""
    return uid == 0 or user == state.admin_user or user in state.managers


#: the pending jobs whose reasons are asked for, at most (in qstat's order: the
#: first to be dispatched): ``qstat -j`` of thousands of jobs every second
#: would cost the qmaster more than a page is worth
REASONS_MAX = 100


def pending_job_ids(jobs: Sequence[Mapping[str, Any]], limit: int = REASONS_MAX) -> list[str]:
    """The jobs whose reasons ``qstat -j`` is asked for: those with a pending
    line (a pending job, or an array with pending tasks), the first ``limit``
    of them in qstat's order."""
    out: list[str] = []
    for row in qstat_out.pending_rows(jobs, qstat_out.Options()):
        number = str(row.job["job_number"])
        if number not in out:
            if len(out) == limit:
                break
            out.append(number)
    return out


def document(state: CellState, uid: int, user: str) -> dict[str, Any]:
    """The page's document for the local user ``user`` (``uid``)."""
    head: dict[str, Any] = {"schema": SCHEMA, "version": VERSION}
    if state.error is not None:
        return {**head, "error": state.error}
    everyone = is_manager(state, uid, user)
    jobs = [j for j in state.jobs if everyone or str(j.get("owner", "")) == user]
    full = json_views.qstat_full_view(state.queues, jobs, qstat_out.Options())
    rows: list[dict[str, Any]] = []
    queues = []
    for q in full["queues"]:
        queues.append({k: q[k] for k in QUEUE_FIELDS})
        rows.extend(q["jobs"])
    for row in full["jobs_pending"]:
        asked = state.reasons.get(str(row["job_number"]))  # None: beyond REASONS_MAX, not asked
        rows.append({**row, "reasons": None if asked is None else [str(r) for r in asked]})
    return {**head, "cell": state.cell, "host": state.host, "user": user, "sees": "all" if everyone else "own",
            "queues": queues, "jobs": rows, "global_messages": [str(m) for m in state.global_messages]}
