"""sched_conf(5) ``schedd_job_info``: whose pending reasons a pass keeps.

Grid Engine 8.1.9's scheduler keeps a job's messages (``qstat -j``'s
"scheduling info:") only when ``schedd_job_info`` is ``true``, or is
``job_list`` and lists the job; a message found for one job of a category
is kept for every job of that category (the peer: ``job_list 493`` gave
job 494, of 493's category, its reason too, and job 495 of another
category none).  In place of the pass's job messages ``qstat -j`` then
shows one global message: :data:`TURNED_OFF` (``false``) or
:data:`NOT_EVERY_JOB` (``job_list``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from minisge.formats.sched_conf import schedd_job_info_lists
from minisge.scheduler.category_cache import job_category
from minisge.scheduler.snapshot import PendingTask

#: SCHEDD_INFO_TURNEDOFF, schedd_job_info false
TURNED_OFF = "(Collecting of scheduler job information is turned off)"
#: SCHEDD_INFO_JOBLIST, schedd_job_info job_list
NOT_EVERY_JOB = "(Scheduler job information not available for every job)"


def global_message(setting: str) -> str | None:
    """The global message ``qstat -j`` shows for this schedd_job_info, if any."""
    word = setting.split(None, 1)[0] if setting.strip() else "true"
    return {"false": TURNED_OFF, "job_list": NOT_EVERY_JOB}.get(word)


def kept_reasons(reasons: Mapping[int, list[str]], pending: Sequence[PendingTask],
                 setting: str) -> dict[int, list[str]]:
    """The reasons per job a pass keeps under schedd_job_info ``setting``:
    all (true), none (false), or those of the listed jobs and of the jobs
    sharing a category with one (job_list)."""
    if global_message(setting) is None:
        return dict(reasons)
    listed = {t.job_id for t in pending if schedd_job_info_lists(setting, t.job_id)}
    if not listed:
        return {}
    categories = {job_category(t) for t in pending if t.job_id in listed}
    kept = listed | {t.job_id for t in pending if t.job_id not in listed and job_category(t) in categories}
    return {job_id: r for job_id, r in reasons.items() if job_id in kept}
