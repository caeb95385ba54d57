"""Job dependencies: qsub -hold_jid and -hold_jid_ad (submit(1)).

``-hold_jid wc_job_list``: the job is not eligible for execution until every
job named (by id, or by name or pattern among the same user's jobs, resolved
at submission) has left the system.

``-hold_jid_ad wc_job_list`` (array dependency): "Each sub-task of the
submitted job is not eligible for execution unless the corresponding
sub-tasks of all jobs referenced in the comma-separated job id and/or job
name list have completed. ... If either the submitted job or any job in
wc_job_list are not array jobs with the same range of sub-tasks (see -t
option below), the request list will be rejected".  As 8.1.9 does it
(sge_job_qmaster.c job_verify_predecessors_ad, sge_task_depend.c):

* "the same range" is the same first and last task id; the steps may
  differ.  Task ``i`` of the dependent job B (``b0-b1:sb``) waits for the
  tasks of A (``a0-a1:sa``) from ``n(i)`` to ``n(i + sb - 1)``, step ``sa``,
  where ``n(x) = a0 + floor((x - a0) / sa) * sa`` (the A task at or below
  ``x``): with equal steps task i waits for task i; B ``1-10:2`` waits for
  two A tasks each; B ``1-10:1`` on A ``1-10:2`` has tasks 1 and 2 wait for
  A's task 1.  Where that range leaves A's (B ``1-10:4`` on A ``1-10``: task
  9 would wait for 9-12) the task waits for the whole of A.
* a task of A is finished when it is neither pending nor running nor in
  error: a task that exited with 100 (error state) keeps its dependents
  waiting, as the page says, until it is deleted or runs again;
* a dependency on a job that is gone (or never was) is dropped at once;
  when A leaves the system its dependents no longer wait for it.

The pure rules come first; the functions after them read and change the
qmaster's jobs (no I/O: the qmaster spools what they report as changed).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

from minisge.formats.sge_types import is_decimal
from minisge.qmaster.job import Job

Array = tuple[int, int, int]  # qsub -t: first, last, step


class DependencyError(Exception):
    """A dependency list the qmaster refuses, with Grid Engine's message."""


# ================================================================ pure rules
def not_found(ref: str) -> str:
    return f'denied: job "{ref}" not found'


def own_predecessor(job_id: int) -> str:
    return f'denied: job "{job_id}" may not be its own jobnet predecessor'


ARRAY_ONLY = 'Can only specify "-hold_jid_ad" option with an array job (using "-t" option)'
SAME_RANGE = ("This array job must have the same range of sub-tasks as the dependent array job "
              "specified with -hold_jid_ad")


def leading_number(ref: str) -> int:
    """The job id of a reference that starts with a digit (atoi: ``12x`` is 12)."""
    digits = ""
    for c in ref:
        if not is_decimal(c):
            break
        digits += c
    return int(digits)


def same_range(a: Array, b: Array) -> bool:
    """Array jobs that may depend on each other task by task: the same first
    and last task id (sge_task_depend_is_same_range; the steps may differ)."""
    return a[0] == b[0] and a[1] == b[1]


def _at_or_below(x: int, first: int, step: int) -> int:
    return first + (x - first) // step * step


def waited_for(pre: Array, suc: Array, task_id: int) -> range | None:
    """The tasks of array ``pre`` that task ``task_id`` of array ``suc`` waits
    for (sge_task_depend_get_range); None when they cannot be told (not the
    same range, a task id that is not one of ``suc``'s, a range past
    ``pre``'s ends): then it waits for the whole of ``pre``.  With the roles
    swapped (a task of ``pre`` given as ``suc``'s), the tasks that a finished
    task may release."""
    a0, a1, sa = pre
    b0, _b1, sb = suc
    if not same_range(pre, suc) or task_id < b0 or (task_id - b0) % sb:
        return None
    lo = _at_or_below(task_id, a0, sa)
    hi = _at_or_below(task_id + sb - 1, a0, sa)
    if lo < a0 or hi > a1:
        return None
    return range(lo, hi + 1, sa)


# ================================================================ the qmaster's jobs
def resolve(refs: Iterable[str], owner: str, job_id: int, jobs: Mapping[int, Job]) -> list[int]:
    """-hold_jid / -hold_jid_ad references (job ids, names, patterns) → the
    ids of the jobs they name that exist now; names match the owner's jobs
    only (job_verify_predecessors)."""
    out: set[int] = set()
    for ref in refs:
        if is_decimal(ref[:1]):
            if "." in ref:  # a job cannot wait for a task
                raise DependencyError(not_found(ref))
            n = leading_number(ref)
            if n == job_id:
                raise DependencyError(own_predecessor(n))
            if n in jobs:
                out.add(n)
        else:
            out.update(j.number for j in jobs.values()
                       if j.owner == owner and j.number != job_id and fnmatch.fnmatchcase(j.name, ref))
    return sorted(out)


def check_array_dependency(array: Array | None, requested: bool, predecessors: Iterable[Job]) -> None:
    """-hold_jid_ad is refused for a job that is no array, or on a job that
    is no array or has another range of task ids."""
    if requested and array is None:
        raise DependencyError(ARRAY_ONLY)
    for pre in predecessors:
        if not pre.is_array:
            raise DependencyError(ARRAY_ONLY)
        if array is not None and not same_range(pre.array, array):
            raise DependencyError(SAME_RANGE)


def waits(job: Job, task_id: int, jobs: Mapping[int, Job]) -> bool:
    """Task ``task_id`` of ``job`` waits for an unfinished task of one of its
    -hold_jid_ad predecessors (sge_task_depend_update)."""
    for number in job.ad_predecessors:
        pre = jobs.get(number)
        if pre is None:
            continue
        tasks = waited_for(pre.array, job.array, task_id)
        if tasks is None or any(pre.unfinished(t) for t in tasks):
            return True
    return False


def init_array_holds(job: Job, jobs: Mapping[int, Job]) -> bool:
    """Which of the job's pending tasks wait (at submission and at a qmaster
    start, sge_task_depend_init); True when that changed."""
    job.ad_predecessors = [n for n in job.ad_predecessors if n in jobs]
    held = {t for t in job.pending if waits(job, t, jobs)} if job.ad_predecessors else set()
    changed = held != job.ad_held
    job.ad_held = held
    return changed


def successors(job: Job, jobs: Mapping[int, Job]) -> tuple[list[int], list[int]]:
    """The jobs that wait for ``job``: (-hold_jid, -hold_jid_ad) ids, for ``qstat -j``."""
    jid = sorted(j.number for j in jobs.values() if job.number in j.predecessors)
    ad = sorted(j.number for j in jobs.values() if job.number in j.ad_predecessors)
    return jid, ad


def task_left(pre: Job, task_id: int, jobs: Mapping[int, Job],
              candidates: Iterable[Job] | None = None) -> list[Job]:
    """Task ``task_id`` of ``pre`` ended or was deleted: the tasks of its
    -hold_jid_ad successors that waited for it are looked at again
    (release_successor_tasks_ad); the successors that changed.  ``candidates``:
    the jobs that may wait for ``pre`` (all jobs when not given)."""
    if pre.unfinished(task_id):  # pending again (re-queued) or in error: nothing is released
        return []
    changed = []
    for suc in jobs.values() if candidates is None else candidates:
        if pre.number not in suc.ad_predecessors or not suc.ad_held:
            continue
        released = waited_for(suc.array, pre.array, task_id)
        if released is None:
            continue
        free = {t for t in released if t in suc.ad_held and not waits(suc, t, jobs)}
        if free:
            suc.ad_held -= free
            changed.append(suc)
    return changed


def tasks_left(pre: Job, task_ids: Iterable[int], jobs: Mapping[int, Job],
               dependents: Iterable[Job] | None = None) -> list[Job]:
    """:func:`task_left` for many tasks of ``pre`` (a qdel of an array):
    O(tasks) when no job waits for ``pre``'s tasks, its successors found once
    among ``dependents`` (the jobs that wait for any; all jobs when not given)."""
    waiting = {j.number: j for j in (jobs.values() if dependents is None else dependents)
               if pre.number in j.ad_predecessors and j.ad_held}
    if not waiting:
        return []
    changed: dict[int, Job] = {}
    for tid in task_ids:
        changed.update((j.number, j) for j in task_left(pre, tid, jobs, waiting.values()))
    return list(changed.values())


def job_left(pre: Job, jobs: Mapping[int, Job], dependents: Iterable[Job] | None = None) -> list[Job]:
    """``pre`` has left the system: its successors no longer wait for it
    (release_successor_jobs, release_successor_jobs_ad); those that changed.
    ``dependents``: the jobs that wait for any (all jobs when not given)."""
    changed = []
    for suc in list(jobs.values() if dependents is None else dependents):
        touched = False
        if pre.number in suc.predecessors:
            suc.predecessors.remove(pre.number)
            touched = True
        if pre.number in suc.ad_predecessors:
            suc.ad_predecessors.remove(pre.number)
            if not suc.ad_predecessors:
                suc.ad_held.clear()
            touched = True
        if touched:
            changed.append(suc)
    return changed


def after_load(jobs: Mapping[int, Job]) -> None:
    """At a qmaster start: dependencies on jobs that are gone are dropped and
    the array holds recomputed (setup_qmaster, sge_task_depend_init)."""
    for job in jobs.values():
        job.predecessors = [n for n in job.predecessors if n in jobs]
        if job.ad_predecessors or job.ad_held:
            init_array_holds(job, jobs)
