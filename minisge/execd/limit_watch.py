"""The execd's watch over running tasks: their usage and the limits it enforces.

Grid Engine's execd runs a data collector (the PDC, sge_execd(8)
``PDC_INTERVAL``) that reads the processes of every job it runs and, with
that, applies the limits the execd itself enforces (queue_conf(5) RESOURCE
LIMITS, execd_ck_to_do.c; the rules are :mod:`minisge.rules.limits`):

* ``h_rt``: SIGKILL when the wall clock passes it; ``s_rt``: SIGUSR1, then
  SIGKILL once the queue's ``notify`` time has passed after it;
* the CPU time and virtual memory summed over the task's processes against
  h_/s_cpu and h_/s_vmem times its slots: SIGKILL above a hard limit,
  SIGXCPU above a soft one.

:class:`LimitWatch` is that collector for one execd: one pass over /proc per
interval for all the tasks it watches (jobs and PE tasks alike), in a worker
thread (a pass reads a few files per process on the host).  A kill is noted
in the task's ``limit`` file (accounting's failed 37) before it is sent.
"""

from __future__ import annotations

import logging
import os
import time

import attrs
import trio

from minisge.execd.task_dir import RunningTask, signal_dir, signal_number, write_file
from minisge.execd.usage import JobUsage, read_processes
from minisge.rules.limits import Action, check_usage, job_totals, wallclock_action

log = logging.getLogger("minisge.execd")

PDC_INTERVAL = 1.0  # sge_conf(5) execd_params PDC_INTERVAL: how often usage is read and limits checked


@attrs.define(eq=False)
class Watched:
    """What the watch keeps of one task."""

    task: RunningTask
    what: str  # how the log names it: "job 5.1", "pe task ..."
    limits: dict[str, float]  # its limits, h_rt of the start message folded in
    totals: dict[str, float]  # the limits its summed usage is checked against
    usage: JobUsage = attrs.Factory(JobUsage)
    last_rt: float | None = None  # when (elapsed seconds) the last s_rt warning went
    killed: bool = False  # killed for a limit: sampled still, never signalled again

    def check(self, now: float) -> Action | None:
        """What to do about the task now, after a sample."""
        if self.killed or self.task.pid is None:
            return None
        elapsed = now - self.task.started
        action = wallclock_action(self.limits, elapsed, self.last_rt)
        if action is not None:
            self.last_rt = elapsed
            return action
        return check_usage(self.totals, self.usage.cpu, self.usage.vmem)


class LimitWatch:
    """The PDC of one execd: :meth:`run` samples every interval (started by
    the execd's nursery); :meth:`follow` watches one task until its shepherd
    ends."""

    def __init__(self, interval: float = PDC_INTERVAL):
        self.interval = interval
        self.watched: dict[str, Watched] = {}  # by task directory

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(self.interval)
            try:
                await self.sample()
            except Exception:  # a failed pass costs one sample, never the execd
                log.exception("the data collector's pass failed")

    async def sample(self) -> None:
        """One pass: sample every watched task's processes, apply its limits."""
        watched = list(self.watched.values())
        sessions = {w.task.pid for w in watched if w.task.pid}
        if not sessions:
            return
        procs = await trio.to_thread.run_sync(read_processes, sessions)
        now = time.monotonic()
        for w in watched:
            if w.task.pid is None or self.watched.get(w.task.dir) is not w:
                continue  # ended meanwhile
            w.usage.sample(procs.get(w.task.pid, ()))
            action = w.check(now)
            if action is not None:
                self.apply(w, action)

    def usage_of(self, task: RunningTask) -> JobUsage | None:
        """The usage sampled so far of a task being watched (None: not watched)."""
        w = self.watched.get(task.dir)
        return w.usage if w is not None else None

    @staticmethod
    def apply(w: Watched, action: Action) -> None:
        """Send the action's signal to the task's process group; a kill is
        noted first (in ``limit``, and in ``signal`` so that a job not yet
        started never starts), a warning the job may catch is not."""
        log.warning("%s exceeds %s: SIG%s", w.what, action.limit, action.signal)
        kill = action.signal == "KILL"
        if kill:
            w.killed = True
            write_file(os.path.join(w.task.dir, "limit"), f"{action.limit}\n")
        signal_dir(w.task.dir, signal_number(action.signal), note=kill)

    async def follow(self, task: RunningTask, what: str, reap: bool) -> tuple[JobUsage | None, bool]:
        """Watch ``task`` until its shepherd ends: (its sampled usage, None
        when its shepherd was already gone; whether it died through a
        signal, known only when ``reap``: the shepherd is our child)."""
        if task.pid is None:
            return None, False
        try:
            fd = os.pidfd_open(task.pid)
        except ProcessLookupError:
            return None, reap and reap_child(task.pid)
        lim = task.wallclock_limits()
        w = Watched(task, what, lim, job_totals(lim, task.host_slots))
        self.watched[task.dir] = w
        try:
            await trio.lowlevel.wait_readable(fd)
        finally:
            del self.watched[task.dir]
            os.close(fd)
        return w.usage, reap and reap_child(task.pid)


def reap_child(pid: int) -> bool:
    """Collect a child shepherd that has ended (its pidfd said so, so this
    does not wait); True when a signal ended it."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:  # not yet a zombie: a matter of microseconds
            done, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return False
    return os.WIFSIGNALED(status)
