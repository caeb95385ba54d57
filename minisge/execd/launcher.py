"""The shepherd launcher: the small process that forks the shepherds of one execd.

Grid Engine's execd starts each task's sge_shepherd(8) as a program of its
own, so a shepherd holds nothing of the daemon.  minisge's execd does not
fork its shepherds itself (a fork of the daemon would keep its listening
socket, its qmaster connection and its memory in every shepherd): it
starts this launcher once, with a clean exec (``python -m
minisge.execd.launcher --fd N``: descriptors closed but the control
socket N), and asks it, over that socket, to fork one shepherd per task.
The launcher imports only what the shepherd needs (no trio, nothing of the
daemons), so a fork of it is cheap and carries nothing else.

The control socket (a SOCK_SEQPACKET pair, one JSON object per packet):

``{"op": "fork", "seq": N, "dir": D, "job_id": J}``  (execd → launcher; a PE
    task's request carries, as SCM_RIGHTS, the descriptors its shepherd keeps:
    the write ends of its output FIFOs)
``{"op": "forked", "seq": N, "pid": P}``  the shepherd of D runs as P
``{"op": "refused", "seq": N, "reason": R}``  no shepherd was started for D
``{"op": "exited", "pid": P, "status": S}``  a shepherd ended (its wait status)

The fork is marked in the task's directory first: the launcher creates the
``pid`` file exclusively (``O_EXCL``, or a link(2) of its spare in a
recycled directory: :func:`minisge.execd.task_dir.create_pid_file`) *before* it forks, and the shepherd
writes its pid into it.  An execd recovering after a crash claims a
directory without ``pid`` the same way, so exactly one of them wins: a task
whose shepherd never started is told apart from one that started and was
lost (:mod:`minisge.execd.task_dir`, :meth:`minisge.execd.execd.Execd.recover`).

A shepherd calls ``setsid`` and outlives the launcher and the execd (the
launcher ends when its execd does: EOF on the control socket, or another
parent); its standard descriptors are /dev/null and it keeps no other
descriptor of the launcher.  ``ps`` shows it as Grid Engine's:
``sge_shepherd-JOBID -bg`` (its name, /proc/PID/comm, ``sge_shepherd``).
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import selectors
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from minisge.execd import shepherd, shepherd_plan
from minisge.execd.task_dir import PID_FILE, create_pid_file, read_config, write_pid

MAX_PACKET = 65536
MAX_FDS = 4  # descriptors one request may carry


OPEN_MAX = os.sysconf("SC_OPEN_MAX")  # above the highest descriptor this process can have


def argv_area() -> tuple[int, int] | None:
    """Where this process's argv strings are (proc(5) stat fields 48 and 49):
    read once by the launcher; its forks have them at the same addresses."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()  # from field 3 (state) on: see proc(5)
        return int(fields[45]), int(fields[46])
    except (OSError, ValueError, IndexError):
        return None


def set_process_title(name: str, title: str, area: tuple[int, int] | None = None) -> None:
    """What ``ps`` shows of this process: ``name`` as its command
    (/proc/PID/comm, 15 bytes, as prctl PR_SET_NAME sets it) and ``title`` as
    its arguments (the process's argv area, ``area`` or read from /proc,
    padded with NULs, written through /proc/self/mem; Python keeps its own
    copy of argv, so nothing reads this memory any more).  The arguments
    first: whoever finds the process by its new name sees its new arguments
    too.  Plain writes to proc(5) files: no ctypes, whose module and library
    each fork would carry and whose first call in a shepherd costs ~0.2 ms
    of copied pages.  Best effort."""
    try:
        if area is None:
            area = argv_area()
        if area is not None:
            arg_start, arg_end = area
            size = arg_end - arg_start
            if 0 < size <= 1 << 16:
                fd = os.open("/proc/self/mem", os.O_WRONLY)
                try:
                    os.pwrite(fd, title.encode()[:size - 1].ljust(size, b"\0"), arg_start)
                finally:
                    os.close(fd)
    except (OSError, ValueError, OverflowError):
        pass
    try:
        fd = os.open("/proc/self/comm", os.O_WRONLY)
        try:
            os.write(fd, name.encode()[:15])
        finally:
            os.close(fd)
    except OSError:
        pass


def close_descriptors(keep: Sequence[int]) -> None:
    """Standard descriptors on /dev/null, every other one closed but ``keep``."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd != null:
            os.dup2(null, fd)
    low = 3
    for fd in sorted(k for k in keep if k >= 3):  # the gaps between the ones kept (close_range(2) each)
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, max(low, OPEN_MAX))
    for fd in keep:
        os.set_inheritable(fd, False)  # the shepherd's own; its children must not get them


def become_shepherd(task_dir: str, job_id: int, pid_fd: int, keep: Sequence[int],
                    area: tuple[int, int] | None = None) -> None:
    """In the forked child: the pid into the ``pid`` file the launcher
    created, nothing of the launcher kept, then the shepherd. Never returns."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            write_pid(pid_fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # a full disk: the shepherd runs without it (a recovering execd then counts it lost)
        os.close(pid_fd)
        close_descriptors(keep)
        set_process_title("sge_shepherd", f"sge_shepherd-{job_id} -bg", area)
    except BaseException:  # noqa: BLE001 - a forked child must end in os._exit, whatever happened
        os._exit(1)
    shepherd.run(task_dir)


def spawn_shepherd(binary: str, job_id: int, pid_fd: int | None, plan: bytes, keep: Sequence[int],
                   env: Mapping[bytes, bytes] | None = None) -> int:
    """posix_spawn the C shepherd (``sge_shepherd.c``, its descriptors:
    3 the ``pid`` file, 4 the plan in a memfd, 5.. ``keep``; it opens
    /dev/null on 0-2 itself), in a session of its own, named as 8.1.9's:
    ``sge_shepherd-JOBID -bg``.  With no ``pid_fd`` the shepherd claims the
    task itself (the execd's way: a claim made before the spawn would
    outlive an execd killed in between, and its task would be counted lost
    instead of started again).  ``env``: the caller's environment as it was
    when it started (a copy of os.environb made once: read through
    os.environ, each of its variables is decoded again at every spawn);
    None: os.environ.  Each file action costs the caller's thread, which
    waits for the exec, a system call in the child and a lookup of the
    descriptor limit: there is one for each descriptor handed over, and
    none to move them first unless one is where another goes."""
    memfd = os.memfd_create("sge_shepherd-plan", os.MFD_CLOEXEC)
    high: list[int] = []
    try:
        view = memoryview(plan + f"keep={len(keep)}\0claim={int(pid_fd is None)}\0".encode())
        while view:
            view = view[os.write(memfd, view):]
        os.lseek(memfd, 0, os.SEEK_SET)
        sources = [memfd, *keep] if pid_fd is None else [pid_fd, memfd, *keep]
        first = 4 if pid_fd is None else 3
        if any(fd < first + len(sources) for fd in sources):
            # above every target first: no dup2 overwrites a source not yet copied
            sources = high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in sources]
        actions = [(os.POSIX_SPAWN_DUP2, fd, first + i) for i, fd in enumerate(sources)]
        # the execd's environment, as 8.1.9's shepherd has it (its children's is in the plan)
        return os.posix_spawn(binary, [f"sge_shepherd-{job_id}", "-bg"], os.environ if env is None else env,
                              file_actions=actions, setsid=True,
                              setsigdef=(signal.SIGCHLD, signal.SIGINT, signal.SIGPIPE), setsigmask=())
    finally:
        for fd in high:
            os.close(fd)
        os.close(memfd)


class Launcher:
    """The launcher's loop: fork requests in, shepherds' pids and ends out."""

    def __init__(self, ctl: socket.socket):
        self.ctl = ctl
        self.parent = os.getppid()  # the execd: when it is gone, no new shepherd starts
        self.children: set[int] = set()
        self.argv_area = argv_area()  # where each shepherd writes its title
        self.c_shepherd = shepherd_plan.binary()  # the C shepherd, when it was built

    def send(self, msg: dict[str, Any]) -> None:
        try:
            self.ctl.send(json.dumps(msg).encode())
        except OSError:
            pass  # the execd is gone: its pending replies with it

    def fork(self, request: dict[str, Any], fds: list[int]) -> None:
        """Claim the task (create ``pid`` exclusively), then fork its shepherd."""
        seq = request.get("seq")
        try:
            task_dir = str(request["dir"])
            job_id = int(request["job_id"])
            pid_path = os.path.join(task_dir, PID_FILE)
            if os.getppid() != self.parent:  # the execd died: leave the task to the one that recovers it
                self.send({"op": "refused", "seq": seq, "reason": "the execd is gone"})
                return
            try:
                pid_fd = create_pid_file(task_dir)
            except FileExistsError:
                self.send({"op": "refused", "seq": seq, "reason": "claimed"})
                return
            try:
                pid = self.spawn_c_shepherd(task_dir, job_id, pid_fd, fds)
                if pid is None:
                    pid = os.fork()
            except OSError:
                os.close(pid_fd)
                os.unlink(pid_path)  # not started after all
                raise
            if pid == 0:
                become_shepherd(task_dir, job_id, pid_fd, fds, self.argv_area)
            os.close(pid_fd)
            self.children.add(pid)
            self.send({"op": "forked", "seq": seq, "pid": pid})
        except (OSError, KeyError, TypeError, ValueError) as e:
            self.send({"op": "refused", "seq": seq, "reason": f"cannot start the shepherd: {e}"})
        finally:
            for fd in fds:
                os.close(fd)

    def spawn_c_shepherd(self, task_dir: str, job_id: int, pid_fd: int, keep: Sequence[int]) -> int | None:
        """Start the C shepherd for the task, with its plan
        (:mod:`minisge.execd.shepherd_plan`); None when the Python shepherd is
        to be forked instead: no C shepherd was built, the task is
        interactive, or its plan could not be made (the Python shepherd
        then reports what is wrong with the config).  A C shepherd that
        cannot be started is said once on stderr and not tried again."""
        if self.c_shepherd is None:
            return None
        try:
            plan = shepherd_plan.plan(task_dir, read_config(task_dir))
        except Exception:  # noqa: BLE001 - the Python shepherd reads the config again and reports
            return None
        if plan is None:
            return None
        try:
            return spawn_shepherd(self.c_shepherd, job_id, pid_fd, plan, keep)
        except OSError as e:
            print(f"minisge: cannot start {self.c_shepherd} ({e}): shepherds are forked in Python", file=sys.stderr)
            self.c_shepherd = None
            return None

    def reap(self) -> None:
        """Collect every shepherd that has ended; tell the execd how."""
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            self.send({"op": "exited", "pid": pid, "status": status})

    def serve(self) -> None:
        """Until the execd is gone (EOF on the control socket)."""
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # the wakeup fd does the work
        sel = selectors.DefaultSelector()
        sel.register(self.ctl, selectors.EVENT_READ)
        sel.register(wake_r, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                if key.fileobj is self.ctl:
                    try:
                        data, fds, _, _ = socket.recv_fds(self.ctl, MAX_PACKET, MAX_FDS)
                    except InterruptedError:
                        continue
                    except OSError:
                        data, fds = b"", []
                    for fd in fds:  # received inheritable: a spawned shepherd gets the copies it is given alone
                        os.set_inheritable(fd, False)
                    if not data:
                        return
                    try:
                        request = json.loads(data)
                    except ValueError:
                        request = None
                    if isinstance(request, dict) and request.get("op") == "fork":
                        self.fork(request, fds)
                    else:
                        for fd in fds:
                            os.close(fd)
                else:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
            self.reap()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--fd" or not args[1].isdigit():
        print("usage: python -m minisge.execd.launcher --fd N", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a ^C at the daemon's terminal is the daemon's
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    ctl = socket.socket(fileno=int(args[1]))
    ctl.set_inheritable(False)  # a shepherd started by posix_spawn must not get it
    gc.freeze()  # what is loaded now is never collected: a shepherd's collections touch none of its pages
    Launcher(ctl).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
