"""Which jobs and tasks a command's job_task_list names, as 8.1.9 reads it.

``qdel``, ``qhold``/``qrls`` and ``qmod -cj`` take ``job_tasks``: a job id
(``5``), a job id and one task range (``5.3``, ``5.1-4:2``; ``5.0`` is every
task), or a job name that is a pattern (fnmatch(3): ``'run-*'``); ``qdel``
and ``qhold`` also ``-u user_list`` (patterns too, ``*`` for every user).
A word that starts with a digit is a job id, any other a name.  ``qdel``
looks up names among the caller's jobs alone unless ``-u`` names the users
(sge_gdi_del_job); ``qhold`` and ``qmod`` among every user's.

The answers for a list that names nothing are qmaster's
(``empty_job_list_filter``), here in :func:`nothing_named`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from minisge.formats.sge_types import is_decimal
from minisge.formats.wildcard import fnmatch
from minisge.qmaster.job import Job
from minisge.qmaster.range_list import TaskSelection


@dataclass(frozen=True)
class JobTasks:
    """One ``job_tasks`` of a list: ``ref`` (a job id or a name pattern) and
    the task range after the dot (None: every task)."""

    ref: str
    first: int = 0
    last: int = 0
    step: int = 1

    @property
    def is_id(self) -> bool:
        return is_decimal(self.ref[:1])

    @property
    def tasks(self) -> TaskSelection | None:
        return TaskSelection([(self.first, self.last, self.step)]) if self.first else None

    @property
    def range_text(self) -> str:
        return f"{self.first}-{self.last}:{self.step}"


def parse(text: str) -> JobTasks | None:
    """``5``, ``5.3``, ``5.1-4:2``, ``name``; None for a task range that is none."""
    ref, dot, rng = text.partition(".")
    if not dot or not is_decimal(ref[:1]):
        return JobTasks(text)
    if rng == "0":
        return JobTasks(ref)
    sel = TaskSelection.parse(rng)
    if sel is None or len(sel.ranges) != 1:
        return None
    first, last, step = sel.ranges[0]
    return JobTasks(ref, first, max(first, last), step)


def owner_named(users: Iterable[str] | None, owner: str) -> bool:
    """The owner is one of ``users`` (patterns; None: no user list)."""
    return users is None or any(fnmatch(u, owner) for u in users)


def jobs_named(jobs: Iterable[Job], target: JobTasks, users: Iterable[str] | None = None) -> list[Job]:
    """The jobs ``target`` names, of the owners ``users`` names (None: any owner), by number."""
    users = None if users is None or "*" in users else list(users)
    if target.is_id:
        want = int(target.ref) if is_decimal(target.ref) else -1
        found = [j for j in jobs if j.number == want]
    else:
        found = [j for j in jobs if fnmatch(target.ref, j.name)]
    return sorted((j for j in found if owner_named(users, j.owner)), key=lambda j: j.number)


def task_ids_text(ids: list[int]) -> str:
    """Task ids as 8.1.9 prints the range list it builds of them
    (range_list_insert_id, then range_list_compress, then range_to_dstring):
    ``1-3:1``, ``5,7``, ``1-7:2``, ``1-3:1,5``."""
    ranges: list[list[int]] = []  # [start, end, step]
    for tid in sorted(set(ids)):
        if ranges and ranges[-1][1] + ranges[-1][2] == tid:
            ranges[-1][1] = tid
        else:
            ranges.append([tid, tid, 1])
    k = 0
    while k + 1 < len(ranges):
        (s1, e1, st1), (s2, e2, st2) = ranges[k], ranges[k + 1]
        if e1 + st1 == s2 and st1 == st2:
            ranges[k] = [s1, e2, st1]
        elif s1 == e1 and st1 == 1 and e1 == s2 - st2:
            ranges[k] = [s1, e2, st2]
        elif s2 == e2 and st2 == 1 and e1 + st1 == e2:
            ranges[k] = [s1, e2, st1]
        elif s1 == e1 and s2 == e2 and st1 == st2 == 1:
            ranges[k] = [s1, s2, s2 - s1]
        else:
            k += 1
            continue
        del ranges[k + 1]
    return ",".join(str(s) if s == e else f"{s},{e}" if s + st == e else f"{s}-{e}:{st}" for s, e, st in ranges)


def nothing_named(target: JobTasks | None, users: list[str] | None, caller: str) -> str:
    """qdel's answer when a job_tasks (or ``-u`` alone, ``target`` None) names
    no job or task (qmaster's empty_job_list_filter); ``users`` is ``-u``'s list."""
    if target is not None and not target.is_id and not users:
        users = [caller]  # a name without -u: the caller's jobs
    if users and "*" in users:
        return "There are no jobs registered"
    if users:
        names = ",".join(users[:20]) + (",..." if len(users) > 20 else "")
        if target is None:
            return f"There is no job registered for the following users: {names}"
        if target.first:
            if target.first == target.last:
                return f'job "{target.ref}" task "{target.first}" does not exist for user(s) {names}'
            return f'job "{target.ref}" task id range "{target.range_text}" comprises no tasks under user(s) {names}'
        return f"The job {target.ref} of user(s) {names} does not exist"
    if target is None:  # neither jobs nor users (the commands do not ask so)
        return "No jobs deleted"
    if target.first:
        if target.first == target.last:
            return f'job "{target.ref}" task "{target.first}" does not exist'
        return f'job "{target.ref}" task id range "{target.range_text}" comprises no tasks'
    return f'denied: job "{target.ref}" does not exist'
