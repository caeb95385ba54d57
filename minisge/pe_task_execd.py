"""Tight integration, execd side: running the slave tasks ("PE tasks") of a job.

The qmaster sends ``pe_task_start`` (a job start message plus the task's
id, command and the variables qrsh passed) and ``pe_task_kill``.  A task
runs under a shepherd of its own, forked like a job's (the same
:class:`minisge.shepherd.Shepherd`, so the same ids, limits and usage),
with what 8.1.9 changes for a PE task (exec_job.c): no prolog, epilog nor
PE start/stop procedure, ``JOB_NAME``/``REQUEST``/``REQNAME`` ``petask``,
``JOB_SCRIPT`` ``QRSH``, no ``PE_HOSTFILE`` (the master task's alone), its
own ``SGE_JOB_SPOOL_DIR``.  As qrsh's own starter does, the command and its
arguments are joined with blanks and run by the job's shell (``sh -c``), so
shell words in them are interpreted once more.

The task's stdout and stderr are FIFOs in its directory
(``pe_tasks/<job>.<task>/<pe_task_id>/``), opened by the task as the job
owner; the execd reads them and streams what comes as ``pe_task_output``
messages, then reports ``pe_task_end`` with the shepherd's results.  Its
h_rt is the job's, counted from the task's start.  Standard input is
/dev/null.  Slave tasks are not recovered after an execd restart.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import time

import trio

from minisge import shepherd
from minisge.execd import _read_int, build_task_config, read_results, signal_dir

log = logging.getLogger("minisge.pe_task_execd")

DRAIN_AFTER_END = 5.0  # seconds to read output that background children still write


def task_config(cfg: dict, msg: dict, task_dir: str) -> dict:
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


class PeTaskShepherd(shepherd.Shepherd):
    """A PE task's shepherd: the job step alone (exec_job.c: prolog, epilog
    and the PE procedures are not run for PE tasks)."""

    def run_sequence(self) -> None:
        if not self.signalled():
            self.run_job()


class ExecdPeTasks:
    """The PE tasks running under one execd."""

    def __init__(self, execd):
        self.execd = execd
        self.base = os.path.join(execd.spool, "pe_tasks")
        self.running: dict[tuple[int, int, str], dict] = {}

    def task_dir(self, job_id: int, task_id: int, pe_task_id: str) -> str:
        return os.path.join(self.base, f"{job_id}.{task_id}", pe_task_id)

    async def handle(self, msg: dict) -> None:
        op = msg.get("op")
        if op == "pe_task_start":
            try:
                self.start(msg)
            except Exception as e:  # say so to the qmaster, never die
                log.exception("cannot start pe task %s of job %s", msg.get("pe_task_id"), msg.get("job_id"))
                self.running.pop((msg.get("job_id"), msg.get("task_id"), msg.get("pe_task_id")), None)
                await self.execd.report({"op": "pe_task_end", "job_id": msg.get("job_id"),
                                         "task_id": msg.get("task_id"), "pe_task_id": msg.get("pe_task_id"),
                                         "host": self.execd.host, "failed": 3, "exit_status": 1,
                                         "error": f"can't set up the task on {self.execd.host}: {e}", "usage": {}})
        elif op == "pe_task_kill":
            self.kill(msg["job_id"], msg["task_id"], msg.get("signal", "KILL"))
        elif op in ("pe_task_suspend", "pe_task_resume"):
            self.control(msg["job_id"], msg["task_id"], op[len("pe_task_"):], msg.get("method") or {})

    def start(self, msg: dict) -> None:
        key = (msg["job_id"], msg["task_id"], msg["pe_task_id"])
        if key in self.running:
            return
        d = self.task_dir(*key)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for path in (self.base, os.path.dirname(d), d):
            os.chmod(path, 0o711)  # the task opens its FIFOs as the job owner
        cfg = task_config(build_task_config(msg, self.execd.host, self.execd.cell, d), msg, d)
        # queue_conf(5) RESOURCE LIMITS, as for a job: the shepherd sets them, the execd checks the sums
        cfg.update(limits=msg.get("limits") or {}, host_slots=msg.get("host_slots") or 1,
                   consumable_job=msg.get("consumable_job") or [])
        root = os.getuid() == 0
        os.makedirs(cfg["tmpdir"], exist_ok=True)
        if root:
            os.chown(cfg["tmpdir"], cfg["uid"], cfg["gid"])
        fds = {}
        for name in ("stdout", "stderr"):
            path = cfg[f"{name}_path"]
            os.mkfifo(path, 0o600)
            if root:
                os.chown(path, cfg["uid"], cfg["gid"])
            # our read end, and a write end the shepherd inherits: no EOF before the task opened its end
            fds[name] = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            fds[name + "_keep"] = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        with open(os.path.join(d, "config"), "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        pid = os.fork()
        if pid == 0:
            for name in ("stdout", "stderr"):
                os.close(fds[name])
            shepherd.run(d, PeTaskShepherd)
        for name in ("stdout_keep", "stderr_keep"):
            os.close(fds[name])
        entry = {"pid": pid, "dir": d, "h_rt": msg.get("h_rt"), "tmpdir": cfg["tmpdir"], "limits": cfg["limits"],
                 "host_slots": cfg["host_slots"], "started": time.monotonic()}
        self.running[key] = entry
        assert self.execd.nursery is not None
        self.execd.nursery.start_soon(self.watch, key, entry, fds["stdout"], fds["stderr"])
        if msg.get("suspended"):  # its job is suspended: stopped as soon as it runs
            self.control(msg["job_id"], msg["task_id"], "suspend", msg.get("suspend_method") or {}, only=key)

    # ------------------------------------------------------------ suspend, resume
    def control(self, job_id: int, task_id: int, action: str, method: dict, only=None) -> None:
        """Stop (``suspend``) or continue (``resume``) the job's PE tasks on this
        host with the queue's method (:mod:`minisge.execd_control`): a signal
        to the task's process group, or the method's command run as the job
        owner.  A task whose job has no pid yet (just started) gets it as
        soon as it has one, unless the opposite came meanwhile."""
        stop = action == "suspend"
        for key, entry in list(self.running.items()):
            if key[:2] != (job_id, task_id) or (only is not None and key != only):
                continue
            if entry.get("stopped", False) == stop:
                continue
            entry["stopped"] = stop
            if not self._apply(entry, action, method):
                self.execd.nursery.start_soon(self._apply_later, entry, action, method)

    def _apply(self, entry: dict, action: str, method: dict) -> bool:
        """Apply the method now if the task's job has a pid; False if not yet."""
        from minisge import execd_control

        job_pid = _read_int(os.path.join(entry["dir"], "job_pid"))
        if not job_pid:
            return False
        if "command" in method:
            self.execd.nursery.start_soon(execd_control.run_method_command, entry["dir"], method["command"], job_pid,
                                          False)
        else:
            default = signal.SIGSTOP if action == "suspend" else signal.SIGCONT
            try:
                os.killpg(job_pid, int(method.get("signal") or default))
            except (ProcessLookupError, PermissionError):
                pass
        return True

    async def _apply_later(self, entry: dict, action: str, method: dict) -> None:
        want = action == "suspend"
        while entry.get("stopped", False) == want and os.path.isdir(entry["dir"]):
            if self._apply(entry, action, method):
                return
            await trio.sleep(0.1)

    async def watch(self, key: tuple[int, int, str], entry: dict, out_fd: int, err_fd: int) -> None:
        """Stream the task's output, enforce its h_rt, report its end."""
        job_id, task_id, pe_task_id = key
        d, pid = entry["dir"], entry["pid"]
        pumps_done = [trio.Event(), trio.Event()]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, key, "out", out_fd, pumps_done[0])
            nursery.start_soon(self._pump, key, "err", err_fd, pumps_done[1])
            fd = os.pidfd_open(pid)
            try:
                await self._enforce_limits(entry, pid, fd)
            finally:
                os.close(fd)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            with trio.move_on_after(DRAIN_AFTER_END):
                for ev in pumps_done:
                    await ev.wait()
            nursery.cancel_scope.cancel()
        report = read_results(d)
        if report.get("usage") and entry.get("usage") is not None:
            report["usage"].update(entry["usage"].fields())  # the PDC's cpu, mem, io, maxvmem
        report.update(op="pe_task_end", job_id=job_id, task_id=task_id, pe_task_id=pe_task_id, host=self.execd.host)
        self.running.pop(key, None)
        shutil.rmtree(d, ignore_errors=True)
        try:
            os.rmdir(os.path.dirname(d))
        except OSError:
            pass
        if entry.get("tmpdir") and (job_id, task_id) not in self.execd.running \
                and not any(k[:2] == (job_id, task_id) for k in self.running):
            shutil.rmtree(entry["tmpdir"], ignore_errors=True)  # no master here: the last task cleans up
        await self.execd.report(report)

    async def _enforce_limits(self, entry: dict, pid: int, fd: int) -> None:
        """Wait for the task's shepherd to end, applying the limits the execd
        watches as it does for a job (:func:`minisge.execd.watch_limits`):
        h_rt from the task's start, s_rt, its summed CPU and vmem."""
        from minisge.execd import watch_limits

        def apply(action) -> None:
            signal_dir(entry["dir"], getattr(signal, f"SIG{action.signal}"), note=action.signal == "KILL")

        await watch_limits(entry, pid, fd, f"pe task {entry['dir']}", apply)

    async def _pump(self, key, stream: str, fd: int, done: trio.Event) -> None:
        job_id, task_id, pe_task_id = key
        try:
            async with trio.lowlevel.FdStream(fd) as s:
                while data := await s.receive_some(65536):
                    await self.execd.report({"op": "pe_task_output", "job_id": job_id, "task_id": task_id,
                                             "pe_task_id": pe_task_id, "host": self.execd.host,
                                             "stream": stream, "data": data.decode("latin-1")})
        except (OSError, trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            done.set()

    def kill(self, job_id: int, task_id: int, sig: str = "KILL") -> None:
        """Signal every PE task of the job on this host (qdel, the master's end)."""
        signum = getattr(signal, f"SIG{sig}", signal.SIGKILL)
        for key, entry in list(self.running.items()):
            if key[:2] == (job_id, task_id):
                signal_dir(entry["dir"], signum)
