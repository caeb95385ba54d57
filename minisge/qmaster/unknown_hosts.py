"""sge_conf(5) ``max_unheard`` and ``reschedule_unknown``: execds that stop reporting.

With the separate roles the qmaster knows an execd is gone when its
connection closes: from then on the host's queue instances show ``u``
(a host whose execd is not connected is unknown, :mod:`minisge.qmaster.views`).

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
``qmod -r`` (:meth:`minisge.qmaster.job_control.JobControl.reschedule_task`).  A task that is
not rerunnable stays as it is until its host comes back.  Should the execd
come back still running such a rescheduled task, it is told to kill it and
its report of the end is ignored.

The rules are pure functions; :class:`UnknownHosts` holds the hosts' times
and applies them, and :meth:`UnknownHosts.run_timer` is the task that waits
for them, owned by the qmaster role's nursery (:mod:`minisge.daemon.roles`).
"""

from __future__ import annotations

import logging
import math
import signal as _signal
from collections.abc import Iterable
from typing import Any

import trio

from minisge.formats import sge_conf
from minisge.formats.errors import FormatError
from minisge.formats.sge_types import SpecifierError
from minisge.qmaster.job import RUNNING, Job, Task
from minisge.qmaster.job_control import end_of_rescheduled
from minisge.rules.job_control import is_rerunnable

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


def reschedulable(job: Job, task: Task, host: str, queue_rerun: str | bool | None) -> bool:
    """A task rescheduled off unknown ``host`` (reschedule.c reschedule_job):
    running (suspended too) with its master task there, not deleted, and
    rerunnable (qsub -r y, or without -r the queue's rerun TRUE)."""
    m = task.master
    return (task.state == RUNNING and m is not None and m.host == host and not task.delete_requested
            and is_rerunnable(job.spec, queue_rerun))


def stale_report(task: Task, report: dict[str, Any]) -> bool:
    """A task end that is not the current run's: reported by a host the task
    no longer runs on (it was rescheduled while that host was unknown), or
    by the right host for an earlier run of the task (a lost run re-queued
    and dispatched there again before the execd's repeated report of the old
    end arrived): each run carries its dispatch time, echoed by its report."""
    host = report.get("host")
    m = task.master
    if bool(host) and m is not None and m.host != host:
        return True
    dispatched = report.get("dispatched")
    return isinstance(dispatched, (int, float)) and dispatched != task.start_time


# ================================================================ on the qmaster
class UnknownHosts:
    """The hosts whose execd is not connected, and when their tasks are rescheduled."""

    def __init__(self, qm: Any):  # minisge.qmaster.qmaster.Qmaster, which creates it
        self.qm = qm
        self.unknown_since: dict[str, tuple[str, float]] = {}  # host -> (LOST | BOOT, since)
        self.rescheduled: dict[str, set[tuple[int, int]]] = {}  # host -> tasks re-queued while it was unknown
        self._rearm = trio.Event()  # set when a host is lost or heard, or the configuration changed

    def _due(self, host: str) -> float | None:
        kind, since = self.unknown_since[host]
        config = self.qm.config
        try:
            conf = sge_conf.merge(config.global_conf, config.host_conf_of(host))
            return reschedule_due(kind, since, conf.load_report_time, conf.max_unheard, conf.reschedule_unknown)
        except (FormatError, SpecifierError, OSError, ValueError, TypeError):
            # a configuration it cannot read reschedules nothing
            log.exception("cannot read reschedule_unknown for host %s", host)
            return None

    def config_changed(self) -> None:
        """The global or a host configuration changed: the timer reads
        reschedule_unknown, load_report_time and max_unheard again."""
        self._rearm.set()

    def host_lost(self, host: str) -> None:
        """The execd of ``host`` is no longer connected: its timer starts."""
        self.unknown_since[host] = (LOST, self.qm.clock())
        self._rearm.set()

    def host_heard(self, host: str, known: Iterable[tuple[int, int]] = ()) -> None:
        """The execd of ``host`` registered: its timer stops; a task it still
        runs that was rescheduled while it was unknown is killed."""
        qm = self.qm
        self.unknown_since.pop(host, None)
        gone = self.rescheduled.pop(host, set())
        for job_id, task_id in sorted(gone & {(int(j), int(t)) for j, t in known}):
            log.warning("task %d.%d was rescheduled while %s was unknown: killing it there", job_id, task_id, host)
            qm.outbox.post(host, {"op": "terminate", "job_id": job_id, "task_id": task_id,
                                  "method": {"signal": int(_signal.SIGKILL)}, "notify": 0.0})
        if gone:
            qm.changed()
        self._rearm.set()

    def hosts_unknown_at_boot(self) -> None:
        """At a qmaster start every host with running tasks is unknown until its
        execd registers."""
        qm = self.qm
        for job in qm.jobs.values():
            for task in job.tasks.values():
                m = task.master
                if m is not None and m.host not in qm.execds:
                    self.unknown_since.setdefault(m.host, (BOOT, qm.boot_time))
        self._rearm.set()

    def reschedule_host(self, host: str) -> list[str]:
        """Re-queue the rerunnable tasks whose master runs on unknown ``host``;
        the names of the tasks re-queued."""
        qm = self.qm
        done = []
        for job in list(qm.jobs.values()):
            for task in list(job.tasks.values()):
                if not reschedulable(job, task, host, qm.queue_rerun(task)):
                    continue
                qm.job_control.reschedule_task(job, task)  # accounted: failed 25
                end_of_rescheduled(job, task)  # pending again at once, restarted
                qm.save_job(job)
                self.rescheduled.setdefault(host, set()).add((job.number, task.task_id))
                done.append(f"{job.number}.{task.task_id}")
        if done:
            log.warning("rescheduled %s: host %s is unknown", ", ".join(done), host)
            qm.changed()
        return done

    def reschedule_due_hosts(self, now: float) -> None:
        """Reschedule the tasks of every host whose time is up (once per loss)."""
        for host in sorted(self.unknown_since):
            if host in self.qm.execds:
                self.unknown_since.pop(host, None)
                continue
            due = self._due(host)
            if due is not None and due <= now:
                self.unknown_since.pop(host, None)
                self.reschedule_host(host)

    def next_due(self) -> float | None:
        dues = [d for d in (self._due(h) for h in self.unknown_since) if d is not None]
        return min(dues) if dues else None

    async def run_timer(self) -> None:
        """The reschedule_unknown timer of the qmaster role: sleeps until the
        next host's time is up, or until a host is lost or heard again."""
        qm = self.qm
        self.hosts_unknown_at_boot()
        while True:
            self._rearm = rearm = trio.Event()
            try:
                self.reschedule_due_hosts(qm.clock())
                due = self.next_due()
            except Exception:  # a bug here must not take the qmaster down; logged
                log.exception("reschedule_unknown check failed")
                due = None
            if due is None:
                await rearm.wait()
                continue
            with trio.move_on_after(max(0.0, due - qm.clock()) + 0.05):
                await rearm.wait()
