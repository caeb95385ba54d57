"""Tight integration, execd side: running the slave tasks ("PE tasks") of a job.

The qmaster sends ``pe_task_start`` (a job start message plus the task's
id, command and the variables qrsh passed) and ``pe_task_kill``.  A task
runs under a shepherd of its own, started by the execd's launcher like a
job's (the same :class:`minisge.execd.shepherd.Shepherd`, so the same ids,
limits and usage), with what 8.1.9 changes for a PE task (exec_job.c): no
prolog, epilog nor PE start/stop procedure (config ``pe_task_id``: the
shepherd runs the job alone), ``JOB_NAME``/``REQUEST``/``REQNAME`` ``petask``,
``JOB_SCRIPT`` ``QRSH``, no ``PE_HOSTFILE`` (the master task's alone), its
own ``SGE_JOB_SPOOL_DIR``.  As qrsh's own starter does, the command and its
arguments are joined with blanks and run by the job's shell (``sh -c``), so
shell words in them are interpreted once more.

The task's stdout and stderr are FIFOs in its directory
(``pe_tasks/<job>.<task>/<pe_task_id>/``), opened by the task as the job
owner; the execd reads them and streams what comes as ``pe_task_output``
messages, then reports ``pe_task_end`` with the shepherd's results (the
shepherd keeps a write end of each, passed through the launcher, so the
execd sees their end only once the task and its shepherd are done).  Its
h_rt is the job's, counted from the task's start.  Standard input is
/dev/null.  Its TMPDIR is the job's on this host (made by the first of
them, :mod:`minisge.execd.tmpdir`).  Slave tasks are not recovered after
an execd restart.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from minisge.cell import Cell
from minisge.execd import job_control
from minisge.execd.launcher_link import LauncherError, ShepherdLauncher
from minisge.execd.limit_watch import LimitWatch
from minisge.execd.shepherd_config import build_task_config
from minisge.execd.task_dir import (
    RunningTask,
    TaskKey,
    end_report,
    killpg,
    read_int,
    signal_dir,
    signal_number,
    write_config,
)
from minisge.execd.tmpdir import make_tmpdir, remove_tmpdir, use_tmpdir
from minisge.rules import exit_codes

log = logging.getLogger("minisge.pe_task_execd")

PeTaskKey = tuple[int, int, str]  # (job id, array task id, PE task id)

DRAIN_AFTER_END = 5.0  # seconds to read output that background children still write


def task_config(cfg: Mapping[str, Any], msg: Mapping[str, Any], task_dir: str) -> dict[str, Any]:
    """The shepherd config of a PE task, from the job's (pure): see the module doc."""
    env = dict(cfg["env"])
    for name in ("PE_HOSTFILE",):
        env.pop(name, None)
    env.update(JOB_NAME="petask", REQUEST="petask", REQNAME="petask", JOB_SCRIPT="QRSH",
               SGE_JOB_SPOOL_DIR=task_dir)
    task_env = {str(k): str(v) for k, v in (msg.get("task_env") or {}).items()}
    env.update(task_env)
    cwd = task_env.get("PWD") or cfg["cwd"]  # qrsh(1): "-v PWD" replaces -cwd
    env["SGE_CWD_PATH"] = cwd
    return dict(
        cfg,
        env=env,
        cwd=cwd,
        binary=True,
        noshell=False,
        command=" ".join(msg["command"]),
        args=[],
        stdin_path="/dev/null",
        stdout_path=os.path.join(task_dir, "stdout"),
        stderr_path=os.path.join(task_dir, "stderr"),
        merge=False,
        procedures={},
        pe=None,
        forbid_reschedule=True,
        forbid_apperror=True,
        pe_task_id=msg["pe_task_id"],
    )


Report = Callable[[dict[str, Any]], Awaitable[None]]


class ExecdPeTasks:
    """The PE tasks running under one execd: each one's shepherd is
    followed, its output streamed, in this component's nursery (:meth:`run`,
    started by the execd's)."""

    def __init__(self, cell: Cell, host: str, spool: str, report: Report, limit_watch: LimitWatch,
                 launcher: ShepherdLauncher, master_here: Callable[[TaskKey], bool]):
        self.cell = cell
        self.host = host
        self.report = report  # sends a message to the qmaster
        self.limit_watch = limit_watch
        self.launcher = launcher  # the execd's: starts the shepherds
        self.master_here = master_here  # does this execd run the job's master task?
        self.base = os.path.join(spool, "pe_tasks")
        self.running: dict[PeTaskKey, RunningTask] = {}
        self.nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def start_soon(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        assert self.nursery is not None, "ExecdPeTasks.run has not started"
        self.nursery.start_soon(fn, *args)

    def task_dir(self, job_id: int, task_id: int, pe_task_id: str) -> str:
        return os.path.join(self.base, f"{job_id}.{task_id}", pe_task_id)

    async def handle(self, msg: Mapping[str, Any]) -> None:
        op = msg.get("op")
        if op == "pe_task_start":
            try:
                started = self.start(msg)
            except Exception as e:  # say so to the qmaster, never die
                log.exception("cannot start pe task %s of job %s", msg.get("pe_task_id"), msg.get("job_id"))
                await self.report_failed_start(msg, exit_codes.ESSTATE_NO_CONFIG,
                                               f"can't set up the task on {self.host}: {e}")
                return
            if started is not None:
                self.start_soon(self.launch, msg, *started)
        elif op == "pe_task_kill":
            self.kill(msg["job_id"], msg["task_id"], msg.get("signal", "KILL"))
        elif op in ("pe_task_suspend", "pe_task_resume"):
            self.control(msg["job_id"], msg["task_id"], op[len("pe_task_"):], msg.get("method") or {})

    async def launch(self, msg: Mapping[str, Any], key: PeTaskKey, task: RunningTask, fds: dict[str, int]) -> None:
        """Have the launcher fork the task's shepherd (handing it the write
        ends of the FIFOs), then follow the task."""
        if msg.get("suspended"):  # its job is suspended: stopped as soon as it runs
            self.control(msg["job_id"], msg["task_id"], "suspend", msg.get("suspend_method") or {}, only=key)
        try:
            task.pid = await self.launcher.fork(task.dir, key[0], (fds["stdout_keep"], fds["stderr_keep"]))
        except LauncherError as e:
            log.error("no shepherd for pe task %s of job %d.%d: %s", key[2], key[0], key[1], e)
            for fd in fds.values():
                os.close(fd)
            self.running.pop(key, None)
            remove_task_dir(task.dir)
            await self.report_failed_start(msg, exit_codes.ESSTATE_NO_SHEPHERD,
                                           f"can't start the shepherd on {self.host}: {e}")
            return
        for name in ("stdout_keep", "stderr_keep"):  # the shepherd has its own now
            os.close(fds[name])
        await self.watch(key, task, fds["stdout"], fds["stderr"])

    async def report_failed_start(self, msg: Mapping[str, Any], failed: int, error: str) -> None:
        await self.report({"op": "pe_task_end", "job_id": msg.get("job_id"), "task_id": msg.get("task_id"),
                           "pe_task_id": msg.get("pe_task_id"), "host": self.host, "failed": failed,
                           "exit_status": 1, "error": error, "usage": {}})

    def start(self, msg: Mapping[str, Any]) -> tuple[PeTaskKey, RunningTask, dict[str, int]] | None:
        """Set a PE task up: its directory, config, FIFOs and TMPDIR; the
        descriptors of its FIFOs (our read ends, and the write ends its
        shepherd is to keep).  None when it runs already."""
        key: PeTaskKey = (msg["job_id"], msg["task_id"], msg["pe_task_id"])
        if key in self.running:
            return None
        d = self.task_dir(*key)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for path in (self.base, os.path.dirname(d), d):
            os.chmod(path, 0o711)  # the task opens its FIFOs as the job owner
        cfg = task_config(build_task_config(msg, self.host, self.cell, d), msg, d)
        # queue_conf(5) RESOURCE LIMITS, as for a job: the shepherd sets them, the execd checks the sums
        cfg.update(limits=msg.get("limits") or {}, host_slots=msg.get("host_slots") or 1,
                   consumable_job=msg.get("consumable_job") or [])
        root = os.getuid() == 0
        # the job's TMPDIR on this host: its master's, or an earlier task's, else made now
        made, moved_aside = make_tmpdir(cfg["tmpdir"], cfg["uid"], cfg["gid"])
        for moved, removed in moved_aside:
            log.warning("pe task %s of job %d.%d: %s was in the way of its TMPDIR: moved to %s%s", key[2], key[0],
                        key[1], cfg["tmpdir"], moved, ", then removed" if removed else "")
        use_tmpdir(cfg, made)
        fds: dict[str, int] = {}
        try:
            for name in ("stdout", "stderr"):
                path = cfg[f"{name}_path"]
                os.mkfifo(path, 0o600)
                if root:
                    os.chown(path, cfg["uid"], cfg["gid"])  # in our own directory (0711): nobody else's path
                # our read end, and a write end the shepherd keeps: no EOF before the task opened its end
                fds[name] = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                fds[name + "_keep"] = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            write_config(d, cfg)
        except BaseException:
            for fd in fds.values():
                os.close(fd)
            raise
        task = RunningTask(d, None, limits=cfg["limits"], host_slots=cfg["host_slots"], h_rt=msg.get("h_rt"),
                           tmpdir=cfg["tmpdir"], job_id=key[0])
        self.running[key] = task
        return key, task, fds

    # ------------------------------------------------------------ suspend, resume
    def control(self, job_id: int, task_id: int, action: str, method: Mapping[str, Any],
                only: PeTaskKey | None = None) -> None:
        """Stop (``suspend``) or continue (``resume``) the job's PE tasks on this
        host with the queue's method (:mod:`minisge.execd.job_control`): a signal
        to the task's process group, or the method's command run as the job
        owner.  A task whose job has no pid yet (just started) gets it as
        soon as it has one, unless the opposite came meanwhile."""
        stop = action == "suspend"
        for key, task in list(self.running.items()):
            if key[:2] != (job_id, task_id) or (only is not None and key != only):
                continue
            if task.stopped == stop:
                continue
            task.stopped = stop
            if not self.apply(task, action, method):
                self.start_soon(self.apply_later, task, action, method)

    def apply(self, task: RunningTask, action: str, method: Mapping[str, Any]) -> bool:
        """Apply the method now if the task's job has a pid; False if not yet."""
        job_pid = read_int(os.path.join(task.dir, "job_pid"))
        if not job_pid:
            return False
        if "command" in method:
            self.start_soon(job_control.run_method_command, task.dir, method["command"], job_pid, False)
        else:
            killpg(job_pid, int(method.get("signal") or job_control.DEFAULT_SIGNAL[action]))
        return True

    def still_wanted(self, task: RunningTask, action: str) -> bool:
        """Is ``action`` still what the task should get (no opposite since, not ended)?"""
        return task.stopped == (action == "suspend") and os.path.isdir(task.dir)

    async def apply_later(self, task: RunningTask, action: str, method: Mapping[str, Any]) -> None:
        while self.still_wanted(task, action):
            if self.apply(task, action, method):
                return
            await trio.sleep(0.1)

    async def watch(self, key: PeTaskKey, task: RunningTask, out_fd: int, err_fd: int) -> None:
        """Stream the task's output, enforce its limits, report its end."""
        job_id, task_id, pe_task_id = key
        pumps_done = [trio.Event(), trio.Event()]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.pump, key, "out", out_fd, pumps_done[0])
            nursery.start_soon(self.pump, key, "err", err_fd, pumps_done[1])
            # its h_rt counts from the task's start, its CPU and vmem are its own
            sampled, _ = await self.limit_watch.follow(task, f"pe task {task.dir}", reap=False)
            status = await self.launcher.exit_status(task.pid) if task.pid is not None else None
            died_through_signal = status is not None and os.WIFSIGNALED(status)
            with trio.move_on_after(DRAIN_AFTER_END):
                for ev in pumps_done:
                    await ev.wait()
            nursery.cancel_scope.cancel()
        try:
            report = end_report(task.dir, died_through_signal)
        except OSError as e:  # its files cannot be read: its end is reported all the same
            log.error("pe task %s of job %d.%d: cannot read its end: %s", pe_task_id, job_id, task_id, e)
            report = {"failed": exit_codes.lost_shepherd_state(died_through_signal), "usage": {}}
        if report.get("usage") and sampled is not None:
            report["usage"].update(sampled.fields())  # the PDC's cpu, mem, io, maxvmem
        report.update(op="pe_task_end", job_id=job_id, task_id=task_id, pe_task_id=pe_task_id, host=self.host)
        self.running.pop(key, None)
        remove_task_dir(task.dir)
        if task.tmpdir and not self.master_here((job_id, task_id)) \
                and not any(k[:2] == (job_id, task_id) for k in self.running):
            # no master here: the last task cleans up (in a thread: a TMPDIR may hold many files)
            await trio.to_thread.run_sync(remove_tmpdir, task.tmpdir)
        await self.report(report)

    async def pump(self, key: PeTaskKey, stream: str, fd: int, done: trio.Event) -> None:
        job_id, task_id, pe_task_id = key
        try:
            async with trio.lowlevel.FdStream(fd) as s:
                while data := await s.receive_some(65536):
                    await self.report({"op": "pe_task_output", "job_id": job_id, "task_id": task_id,
                                       "pe_task_id": pe_task_id, "host": self.host,
                                       "stream": stream, "data": data.decode("latin-1")})
        except (OSError, trio.ClosedResourceError, trio.BrokenResourceError) as e:
            log.warning("pe task %s of job %d.%d: its std%s is lost: %s", pe_task_id, job_id, task_id, stream, e)
        finally:
            done.set()

    def kill(self, job_id: int, task_id: int, sig: str = "KILL") -> None:
        """Signal every PE task of the job on this host (qdel, the master's end)."""
        signum = signal_number(sig)
        for key, task in list(self.running.items()):
            if key[:2] == (job_id, task_id):
                signal_dir(task.dir, signum)


def remove_task_dir(task_dir: str) -> None:
    """A PE task's directory (small files and FIFOs), and its job's when it was the last."""
    shutil.rmtree(task_dir, ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(task_dir))
    except OSError:
        pass  # another PE task of the job still has its directory there
