"""The execd's side of its shepherd launcher (:mod:`minisge.execd.launcher`).

:class:`ShepherdLauncher` starts the launcher process with a clean exec
(every descriptor closed but its end of a SOCK_SEQPACKET pair), asks it
for a shepherd per task (:meth:`ShepherdLauncher.fork`) and collects the
shepherds' wait statuses it reports (:meth:`ShepherdLauncher.exit_status`).
If the launcher dies, the requests it had not answered fail and another
launcher is started.
"""

from __future__ import annotations

import array
import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import trio

import minisge

log = logging.getLogger("minisge.execd")

MAX_PACKET = 65536
RESTART_DELAYS = (0.0, 0.1, 0.5, 1.0, 5.0)  # seconds before each restart of a launcher that keeps dying
LONG_LIFE = 60.0  # a launcher that lived that long died by accident: the next one starts at once
READY_TIMEOUT = 30.0  # how long a request waits for a launcher to be there
EXIT_STATUS_TIMEOUT = 5.0  # how long the wait status of an ended shepherd is waited for


class LauncherError(Exception):
    """No shepherd was started (the launcher is gone or refused)."""


class TaskClaimed(LauncherError):
    """The task's ``pid`` file was there already: another launcher or a
    recovering execd has claimed the task."""


class ShepherdLauncher:
    """The launcher of one execd; :meth:`run` (in the execd's nursery) keeps one running."""

    def __init__(self) -> None:
        self.sock: trio.socket.SocketType | None = None
        self.ready = trio.Event()  # set while a launcher is up
        self.seqs = iter(range(1, 1 << 62))
        self.pending: dict[int, trio.MemorySendChannel[dict[str, Any]]] = {}
        self.statuses: dict[int, int] = {}  # wait statuses of ended shepherds nobody asked for yet
        self.status_waiters: dict[int, trio.Event] = {}

    # ------------------------------------------------------------ the process
    def spawn(self) -> tuple[subprocess.Popen[bytes], trio.socket.SocketType]:
        """Start a launcher.  Popen is called here, in the event loop's
        thread, not in a worker thread: nothing of the daemon but the one
        socket is passed (close_fds), and its cwd is ``/``."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            argv, env = launcher_command(theirs.fileno())
            proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), close_fds=True, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, cwd="/", env=env)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return proc, trio.socket.from_stdlib_socket(ours)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep a launcher running: start one, serve it, start another when it
        dies (at once the first time, then slower while they keep dying)."""
        quick_deaths = 0
        while True:
            try:
                proc, sock = self.spawn()
            except OSError as e:
                log.error("cannot start the shepherd launcher: %s", e)
            else:
                began = trio.current_time()
                self.sock = sock
                self.ready.set()
                try:
                    with sock:
                        task_status.started()
                        task_status = trio.TASK_STATUS_IGNORED
                        await self.serve(sock)
                finally:
                    self.gone()
                    with trio.CancelScope(shield=True):
                        await trio.to_thread.run_sync(reap, proc)
                log.error("the shepherd launcher (pid %d) ended (status %s): starting another", proc.pid,
                          proc.returncode)
                if trio.current_time() - began > LONG_LIFE:
                    quick_deaths = 0
            task_status.started()  # the execd goes on without: its tasks' starts fail until one runs
            task_status = trio.TASK_STATUS_IGNORED
            await trio.sleep(RESTART_DELAYS[min(quick_deaths, len(RESTART_DELAYS) - 1)])
            quick_deaths += 1

    async def serve(self, sock: trio.socket.SocketType) -> None:
        """Read the launcher's packets until it is gone."""
        while True:
            try:
                data = await sock.recv(MAX_PACKET)
            except OSError:
                return
            if not data:
                return
            try:
                msg = json.loads(data)
            except ValueError:
                log.warning("the shepherd launcher sent nonsense: %r", data[:200])
                continue
            op = msg.get("op")
            if op == "exited":
                pid, status = int(msg["pid"]), int(msg["status"])
                self.statuses[pid] = status
                ev = self.status_waiters.pop(pid, None)
                if ev is not None:
                    ev.set()
            elif op in ("forked", "refused"):
                ch = self.pending.pop(msg.get("seq"), None)
                if ch is not None:
                    ch.send_nowait(msg)

    def gone(self) -> None:
        """The launcher is gone: what it had not answered fails, and its
        shepherds' statuses will never come (they outlive it)."""
        self.sock = None
        self.ready = trio.Event()
        for ch in self.pending.values():
            ch.close()
        self.pending.clear()
        for ev in self.status_waiters.values():
            ev.set()
        self.status_waiters.clear()

    # ------------------------------------------------------------ requests
    async def fork(self, task_dir: str, job_id: int, keep_fds: Sequence[int] = ()) -> int:
        """The pid of the shepherd started for ``task_dir``; LauncherError
        when none was (TaskClaimed: its ``pid`` file was there already)."""
        with trio.move_on_after(READY_TIMEOUT):
            await self.ready.wait()
        sock = self.sock
        if sock is None:
            raise LauncherError("no shepherd launcher is running")
        seq = next(self.seqs)
        send, recv = trio.open_memory_channel[dict[str, Any]](1)
        self.pending[seq] = send
        try:
            data = json.dumps({"op": "fork", "seq": seq, "dir": task_dir, "job_id": job_id}).encode()
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", keep_fds))] if keep_fds else []
            try:
                await sock.sendmsg([data], ancillary)
            except OSError as e:
                raise LauncherError(f"the shepherd launcher is gone: {e}") from None
            try:
                reply = await recv.receive()
            except trio.EndOfChannel:
                raise LauncherError("the shepherd launcher ended before it answered") from None
        finally:
            self.pending.pop(seq, None)
        if reply.get("op") == "forked":
            pid = int(reply["pid"])
            if pid not in self.statuses:  # its end may be told before anyone waits for it
                self.status_waiters.setdefault(pid, trio.Event())
            return pid
        if reply.get("reason") == "claimed":
            raise TaskClaimed(task_dir)
        raise LauncherError(str(reply.get("reason")))

    async def exit_status(self, pid: int) -> int | None:
        """The wait status of a shepherd this launcher started and that has
        ended; None when it is not known (its launcher died meanwhile)."""
        if pid not in self.statuses:
            ev = self.status_waiters.get(pid)
            if ev is None:
                return None
            with trio.move_on_after(EXIT_STATUS_TIMEOUT):
                await ev.wait()
            self.status_waiters.pop(pid, None)
        return self.statuses.pop(pid, None)


def launcher_command(fd: int) -> tuple[list[str], dict[str, str] | None]:
    """The launcher's command line and environment.  Under an interpreter
    it runs with ``-S`` (no site: the launcher needs the standard library
    and minisge alone, found through PYTHONPATH), so that it holds less
    memory, which each shepherd's fork copies and the job's ru_maxrss
    counts; the single binary (frozen) runs it as it runs its daemons."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "-m", "minisge.execd.launcher", "--fd", str(fd)], None
    root = os.path.dirname(os.path.dirname(os.path.abspath(minisge.__file__)))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return [sys.executable, "-S", "-m", "minisge.execd.launcher", "--fd", str(fd)], dict(os.environ, PYTHONPATH=path)


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Wait for a launcher whose socket is closed (it ends at once), killing it if it does not."""
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
