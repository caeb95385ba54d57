"""sge_conf(5) ``max_unheard`` and ``reschedule_unknown``: execds that stop reporting.

With the separate roles the qmaster knows an execd is gone when its
connection closes: from then on the host's queue instances show ``u``
(a host whose execd is not connected is unknown, :mod:`minisge.views`).

reschedule_unknown: "controls the time which Grid Engine will wait before
jobs are rescheduled after a host became unknown ... If the special value
00:00:00 is set, then jobs will not be rescheduled from this host.
Rescheduling is only initiated for jobs which have activated the rerun flag
(see the -r y option of qsub(1) and the rerun option of queue_conf(5)).
Parallel jobs are only rescheduled if the host on which their master task
executes is in unknown state."  The local configuration of the host may
override the global one.

8.1.9 declares a host unknown when it has not heard from it for
``MAX(3 * load_report_time, max_unheard)`` (sge_load_value_cleanup_handler)
and starts the reschedule_unknown timer then (reschedule_unknown_trigger);
at a qmaster start every host is unknown and the timer is
``reschedule_unknown + load_report_time``.  So a task is re-queued that long
after its execd was lost, unless the execd came back meanwhile: the run is
accounted as rescheduled (``failed`` 25), the task is pending again at once
as restarted (``Rq``, then ``RESTARTED=1``), through the same path as
``qmod -r`` (:func:`minisge.job_control.reschedule_task`).  A task that is
not rerunnable stays as it is until its host comes back.  Should the execd
come back still running such a rescheduled task, it is told to kill it and
its report of the end is ignored.

The rules are pure functions; :func:`unknown_host_timer` is the task that
applies them, owned by the qmaster role's nursery (:mod:`minisge.remote`).
"""

from __future__ import annotations

import logging
import math
import signal as _signal

import trio

from minisge import job_control
from minisge.formats import sge_conf
from minisge.job import RUNNING

log = logging.getLogger("minisge.unknown_hosts")

LOST = "lost"  # its connection closed
BOOT = "boot"  # not connected since the qmaster started


# ================================================================ pure rules
def unheard_timeout(load_report_time: float, max_unheard: float) -> float:
    """How long 8.1.9 waits before a silent host is unknown:
    ``MAX(3 * load_report_time, max_unheard)``."""
    return max(3 * load_report_time, max_unheard)


def reschedule_due(kind: str, since: float, load_report_time: float, max_unheard: float,
                   reschedule_unknown: float) -> float | None:
    """When the tasks of a host unheard of ``since`` are rescheduled; None when
    reschedule_unknown is 00:00:00 (never)."""
    if not reschedule_unknown or math.isinf(reschedule_unknown) or reschedule_unknown <= 0:
        return None
    if kind == BOOT:
        return since + load_report_time + reschedule_unknown
    return since + unheard_timeout(load_report_time, max_unheard) + reschedule_unknown


def reschedulable(job, task, host: str, queue_rerun) -> bool:
    """A task rescheduled off unknown ``host`` (reschedule.c reschedule_job):
    running (suspended too) with its master task there, not deleted, and
    rerunnable (qsub -r y, or without -r the queue's rerun TRUE)."""
    m = task.master
    return (task.state == RUNNING and m is not None and m.host == host and not task.delete_requested
            and job_control.is_rerunnable(job.spec, queue_rerun))


def stale_report(task, report: dict) -> bool:
    """A task end reported by a host the task no longer runs on (it was
    rescheduled while that host was unknown): not the current run's end."""
    host = report.get("host")
    m = task.master
    return bool(host) and m is not None and m.host != host


# ================================================================ on the qmaster
def _effective_conf(qm, host: str):
    return sge_conf.merge(qm.config.global_conf, qm.config.host_conf_of(host))


def _due(qm, host: str) -> float | None:
    kind, since = qm.unknown_since[host]
    try:
        conf = _effective_conf(qm, host)
        return reschedule_due(kind, since, conf.load_report_time, conf.max_unheard, conf.reschedule_unknown)
    except Exception:  # a configuration it cannot read reschedules nothing
        log.exception("cannot read reschedule_unknown for host %s", host)
        return None


def _state(qm):
    if not hasattr(qm, "unknown_since"):
        qm.unknown_since = {}  # host -> (LOST | BOOT, since)
        qm.rescheduled_unknown = {}  # host -> {(job, task)} re-queued while it was unknown
        qm.unknown_rearm = trio.Event()
    return qm


def _rearm(qm) -> None:
    _state(qm).unknown_rearm.set()


def config_changed(qm) -> None:
    """The global or a host configuration changed: the timer reads
    reschedule_unknown, load_report_time and max_unheard again."""
    _rearm(qm)


def host_lost(qm, host: str) -> None:
    """The execd of ``host`` is no longer connected: its timer starts."""
    _state(qm).unknown_since[host] = (LOST, qm.clock())
    _rearm(qm)


def host_heard(qm, host: str, known=()) -> None:
    """The execd of ``host`` registered: its timer stops; a task it still
    runs that was rescheduled while it was unknown is killed."""
    _state(qm).unknown_since.pop(host, None)
    gone = qm.rescheduled_unknown.pop(host, set())
    for job_id, task_id in sorted(gone & {tuple(k) for k in known}):
        log.warning("task %d.%d was rescheduled while %s was unknown: killing it there", job_id, task_id, host)
        qm.acks.append((host, {"op": "terminate", "job_id": job_id, "task_id": task_id,
                               "method": {"signal": int(_signal.SIGKILL)}, "notify": 0.0}))
    if gone:
        qm.changed()
    _rearm(qm)


def hosts_unknown_at_boot(qm) -> None:
    """At a qmaster start every host with running tasks is unknown until its
    execd registers."""
    st = _state(qm)
    for job in qm.jobs.values():
        for task in job.tasks.values():
            m = task.master
            if m is not None and m.host not in qm.execds:
                st.unknown_since.setdefault(m.host, (BOOT, qm.boot_time))
    _rearm(qm)


def reschedule_host(qm, host: str) -> list[str]:
    """Re-queue the rerunnable tasks whose master runs on unknown ``host``;
    the names of the tasks re-queued."""
    done = []
    for job in list(qm.jobs.values()):
        for task in list(job.tasks.values()):
            if not reschedulable(job, task, host, qm.queue_rerun(task)):
                continue
            job_control.reschedule_task(qm, job, task)  # accounted: failed 25
            job_control.end_of_rescheduled(qm, job, task)  # pending again at once, restarted
            qm.save_job(job)
            qm.rescheduled_unknown.setdefault(host, set()).add((job.number, task.task_id))
            done.append(f"{job.number}.{task.task_id}")
    if done:
        log.warning("rescheduled %s: host %s is unknown", ", ".join(done), host)
        qm.changed()
    return done


def reschedule_due_hosts(qm, now: float) -> None:
    """Reschedule the tasks of every host whose time is up (once per loss)."""
    st = _state(qm)
    for host in sorted(st.unknown_since):
        if host in qm.execds:
            st.unknown_since.pop(host, None)
            continue
        due = _due(qm, host)
        if due is not None and due <= now:
            st.unknown_since.pop(host, None)
            reschedule_host(qm, host)


def next_due(qm) -> float | None:
    dues = [d for d in (_due(qm, h) for h in _state(qm).unknown_since) if d is not None]
    return min(dues) if dues else None


async def unknown_host_timer(qm) -> None:
    """The reschedule_unknown timer of the qmaster role: sleeps until the
    next host's time is up, or until a host is lost or heard again."""
    hosts_unknown_at_boot(qm)
    while True:
        st = _state(qm)
        st.unknown_rearm = rearm = trio.Event()
        try:
            reschedule_due_hosts(qm, qm.clock())
            due = next_due(qm)
        except Exception:  # a bug here must not take the qmaster down
            log.exception("reschedule_unknown check failed")
            due = None
        if due is None:
            await rearm.wait()
            continue
        with trio.move_on_after(max(0.0, due - qm.clock()) + 0.05):
            await rearm.wait()
