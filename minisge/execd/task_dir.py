"""A task's directory in the execd spool, and what the execd keeps of a running task.

Grid Engine's execd and shepherd talk through files in
``active_jobs/<job>.<task>/`` (a PE task's: ``pe_tasks/<job>.<task>/<id>/``).
The execd writes ``config`` before it asks for the shepherd and ``signal``
(a signal to send once the job has a pid); the shepherd launcher creates
``pid`` (exclusively, before the fork: the mark that a shepherd was
started, :mod:`minisge.execd.launcher`) and the shepherd writes its pid
into it, then ``job_pid``, ``proc_pid`` (a running procedure), ``error``,
``usage`` and, last, ``exit_status``, the end marker
(:mod:`minisge.execd.shepherd`); the execd adds ``limit`` when it kills
for a limit, and ``kept`` when it keeps the directory of a task whose end
is recorded (sge_conf(5) execd_params KEEP_ACTIVE).  The helpers here are the one place those files are read and
written; they are small and local, so they are plain (blocking) calls.

A task's directory may be a recycled one (:func:`recycle`): the files of
an acknowledged task renamed to *spare* names (``.spare-config``,
``.spare-pid``, ...: :data:`SPARES`), so that the next task writes each of
its usual files into a spare and renames it into place instead of creating
a new file.  A new inode is the dear part of a small file here (an ext4
without a journal scans the inodes deleted in the last seconds at every
creation: 0.3 ms and more at a few hundred tasks a second); a rename is
not.  A spare keeps its blocks too: it is overwritten and cut to what was
written (:func:`write_fd`), never emptied first, as freeing a block costs
a discard on a disk mounted with ``discard`` (~0.1 ms each, several a
task).  ``.spare-pid`` is cut to one blank (:data:`NO_PID`), not emptied:
a ``pid`` file without a number is the mark of a claimed task whose
shepherd has not written its pid yet, and the shepherd writes its pid
over the blank and cuts the file to it (:func:`write_pid`).  A
spare's old content is never read: every file is read only under its
own name, renamed into place once whole.  Where no spare is there (a new
directory, a PE task's), the file is created as before: the spare is only
ever a faster way to the same file.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import stat
import time
from typing import Any

from minisge.rules import exit_codes

TaskKey = tuple[int, int]  # (job id, array task id)

PID_FILE = "pid"  # the shepherd's pid; created before the fork (see the module doc)
CONFIG_FILE = "config"
END_MARKER = "exit_status"
KEPT_MARKER = "kept"  # sge_conf(5) execd_params KEEP_ACTIVE: an ended task's directory kept after its end was recorded
USAGE_FILE = "usage"
JOB_PID_FILE = "job_pid"
# the files every task writes, and the names of their spares in a recycled directory (see the module doc)
SPARES = {name: f".spare-{name}" for name in (CONFIG_FILE, PID_FILE, JOB_PID_FILE, USAGE_FILE, END_MARKER)}
SPARE_NAMES = frozenset(SPARES.values())
NO_PID = b" "  # a recycled pid file's content until its shepherd writes its pid: no number, and its block kept


def spare_of(path: str) -> str | None:
    """The spare name of a task's file (None for a file that has none)."""
    head, name = os.path.split(path)
    spare = SPARES.get(name)
    return None if spare is None else os.path.join(head, spare)


def open_spare(path: str) -> tuple[int, str] | None:
    """The spare of ``path`` opened for writing (its old content still in
    it, to be overwritten and cut: :func:`write_fd`), with its name; None
    when there is none (a new directory, or its spare was taken)."""
    spare = spare_of(path)
    if spare is None:
        return None
    try:
        return os.open(spare, os.O_WRONLY | os.O_NOFOLLOW), spare
    except FileNotFoundError:
        return None


class RunningTask:
    """A task whose shepherd the execd follows (a job's or a PE task's).
    A plain class (no attrs): this module is imported by the shepherd
    launcher, whose every page each fork copies."""

    __slots__ = ("dir", "pid", "limits", "host_slots", "h_rt", "started", "tmpdir", "stopped", "job_id", "cpus",
                 "spawned")

    def __init__(self, dir: str, pid: int | None, limits: dict[str, float] | None = None, host_slots: int = 1,
                 h_rt: float | None = None, started: float | None = None, tmpdir: str | None = None,
                 stopped: bool = False, job_id: int = 0, cpus: tuple[int, ...] = ()):
        self.dir = dir  # its directory
        self.pid = pid  # its shepherd's pid (None: a recovered task whose shepherd never wrote it)
        self.limits: dict[str, float] = limits if limits is not None else {}  # queue_conf(5) RESOURCE LIMITS
        self.host_slots = host_slots  # the slots it holds on this host: per-slot limits are multiplied by them
        self.h_rt = h_rt  # the job's wall clock limit from the start message
        self.started = time.monotonic() if started is None else started  # for the wall clock
        self.tmpdir = tmpdir  # its TMPDIR, removed at its end
        self.stopped = stopped  # suspended (a PE task follows its job)
        self.job_id = job_id  # for the shepherd's process title
        self.cpus = cpus  # the processors its -binding took (no other job is bound to them)
        self.spawned = False  # its shepherd is the execd's own child (the C one, spawned), reaped by it

    def __repr__(self) -> str:
        return f"RunningTask(dir={self.dir!r}, pid={self.pid!r})"

    def wallclock_limits(self) -> dict[str, float]:
        """Its limits with the start message's h_rt folded in."""
        lim = dict(self.limits)
        if self.h_rt is not None:
            lim["h_rt"] = min(lim.get("h_rt", float("inf")), float(self.h_rt))
        return lim


def signal_number(name: str) -> int:
    """``KILL``, ``TERM``, ... as a signal number; SIGKILL for an unknown name."""
    return int(signal.Signals.__members__.get(f"SIG{name}", signal.SIGKILL))


# ---------------------------------------------------------------- writing
def write_file(path: str, text: str, mode: int = 0o644) -> None:
    """Write with one write(2): the small result files are read only after the
    shepherd has ended, except ``exit_status``, the end marker, which is
    renamed into place (see :func:`write_marker`).  A file with a spare in
    the directory is written as :func:`write_marker` writes (into the spare,
    then renamed: no new file)."""
    spare = open_spare(path)
    if spare is not None:
        write_fd(spare[0], text, mode)
        os.rename(spare[1], path)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    write_fd(fd, text, mode)


def write_fd(fd: int, text: str, mode: int) -> None:
    """``text`` into the file ``fd`` (new, or a spare: overwritten from its
    start and cut to ``text``), which is closed."""
    try:
        os.fchmod(fd, mode)  # also a file left from before with other modes
        data = text.encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def write_marker(path: str, text: str, mode: int = 0o644) -> None:
    """Atomically: a reader sees no file or the whole of it (written into
    the file's spare when the directory has one, else into ``NAME.tmp``,
    then renamed into place)."""
    spare = open_spare(path)
    if spare is None:
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    else:
        fd, tmp = spare
    write_fd(fd, text, mode)
    os.rename(tmp, path)


TASK_DIR_MODE = 0o711  # the job, run as its owner, reaches $PE_HOSTFILE and its FIFOs; nobody lists the files
CONFIG_MODE = 0o600  # the config holds the job's environment (-v, -V): the daemon's alone


class ReservedFile:
    """A result file whose room is taken when the shepherd starts, so that a
    disk filled meanwhile (by the job, say) cannot cost it: ``NAME.tmp`` is
    made and ``size`` bytes allocated now; :meth:`commit` writes the text
    into that room, cuts the file to it and renames it into place (a reader
    sees no file or the whole of it).  When nothing could be reserved (the
    disk was full already), :meth:`commit` writes as :func:`write_marker`."""

    def __init__(self, path: str, size: int = 4096, reserve: bool = True):
        self.path = path
        self.tmp = path + ".tmp"
        self.fd: int | None = None
        self.size = size
        if not reserve:
            return
        try:
            spare = open_spare(path)
            if spare is None:
                fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            else:
                fd, self.tmp = spare
                os.fchmod(fd, 0o644)
        except OSError:
            return
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError:
            os.close(fd)
            return
        self.fd = fd

    @classmethod
    def unreserved(cls, path: str) -> ReservedFile:
        """One whose room was never taken (written as :func:`write_marker`)."""
        return cls(path, 0, reserve=False)

    def commit(self, text: str) -> None:
        data = text.encode()
        fd, self.fd = self.fd, None
        if fd is None or len(data) > self.size:
            if fd is not None:
                os.close(fd)
            write_marker(self.path, text)
            return
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
        os.rename(self.tmp, self.path)


def write_config(task_dir: str, cfg: dict[str, Any]) -> None:
    """The shepherd's config, whole or not at all (a crash or a full disk
    in the middle leaves no half config behind)."""
    write_marker(os.path.join(task_dir, CONFIG_FILE), json.dumps(cfg), CONFIG_MODE)


def create_pid_file(task_dir: str) -> int:
    """Create the task's ``pid`` file exclusively and open it for writing:
    FileExistsError when it is there already.  In a recycled directory its
    spare gets the name by a link(2), exclusive as ``O_EXCL`` is, and then
    loses its spare name."""
    path = os.path.join(task_dir, PID_FILE)
    spare = open_spare(path)
    if spare is None:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    fd, spare_path = spare
    try:
        os.utime(fd)  # its content as recycle left it (no number); its mtime: when the task was claimed
        os.link(spare_path, path)
        os.unlink(spare_path)
        os.fchmod(fd, 0o644)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_pid(fd: int, text: bytes) -> None:
    """A ``pid`` file's content (the shepherd's pid and a newline, or
    :data:`NO_PID`) over what the file held, the file cut to it: a
    recycled one keeps its block (see the module doc)."""
    os.pwrite(fd, text, 0)
    os.ftruncate(fd, len(text))


def claim(task_dir: str) -> bool:
    """Mark the task as one whose shepherd will never start: create its
    ``pid`` file exclusively, as the launcher does before it forks; False
    when it is there already (a shepherd was started, or is being)."""
    try:
        os.close(create_pid_file(task_dir))
    except FileExistsError:
        return False
    return True


def recycle(task_dir: str) -> bool:
    """Make an acknowledged task's directory a spare one for another task:
    each of its :data:`SPARES` files (a plain file with one name) renamed
    to its spare name (the pid file's cut to :data:`NO_PID`), every other
    file removed; False (the caller deletes it) when it holds a directory.
    The directory is read once, and each operation is relative to a
    descriptor of it (no walk of the spool's path for each): ~90 against
    ~115 us of CPU a directory (``bench/bench_recycle.py``)."""
    dfd = os.open(task_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        # what each entry is, all read before anything is changed: a file with two names (a crash
        # between the pid file's link and its spare's unlink) loses both, whatever their order
        with os.scandir(dfd) as entries:
            found = [(e.name, e.stat(follow_symlinks=False) if e.name in SPARES or e.name in SPARE_NAMES else None,
                      e.is_dir(follow_symlinks=False)) for e in entries]
        for name, st, is_dir in found:
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                if name in (PID_FILE, SPARES[PID_FILE]):  # no number: the mark of a claim not yet written
                    fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
                    try:
                        write_pid(fd, NO_PID)
                    finally:
                        os.close(fd)
                spare = SPARES.get(name)
                if spare is not None:  # over a spare of that name still there: the newer file is kept
                    os.rename(name, spare, src_dir_fd=dfd, dst_dir_fd=dfd)
            elif is_dir:
                return False
            else:
                os.unlink(name, dir_fd=dfd)
    finally:
        os.close(dfd)
    return True


def secure_spool(spool: str) -> None:
    """The task directories an earlier execd left in ``spool`` (``active_jobs/*``,
    ``pe_tasks/*/*``) get ``TASK_DIR_MODE`` and their configs ``CONFIG_MODE``."""
    for pattern in ("active_jobs/*", "pe_tasks/*/*"):
        for d in glob.glob(os.path.join(glob.escape(spool), pattern)):
            try:
                if not stat.S_ISDIR(os.lstat(d).st_mode):
                    continue
                os.chmod(d, TASK_DIR_MODE)
                config = os.path.join(d, "config")
                if os.path.isfile(config) and not os.path.islink(config):
                    os.chmod(config, CONFIG_MODE)
            except OSError:
                continue  # gone meanwhile


def format_usage(usage: dict[str, Any]) -> str:
    return "".join(f"{k}={v}\n" for k, v in usage.items())


# ---------------------------------------------------------------- reading
def read_bytes(path: str, limit: int | None = None) -> bytes:
    """A small file's bytes, its first ``limit`` when given (one open, a
    read or two, a close: no buffered text stream, as the execd reads
    several at every task's end and each shepherd its config);
    FileNotFoundError when it is not there."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        size = 0
        while (limit is None or size < limit) and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if limit is None else data[:limit]


def read_small(path: str, limit: int | None = None) -> str:
    """A small result file's text (:func:`read_bytes`)."""
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def read_int(path: str) -> int | None:
    """The number a pid file holds; None when it is missing or not a number."""
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def read_config(task_dir: str) -> dict[str, Any]:
    """The task's config (UTF-8 JSON, as :func:`write_config` wrote it)."""
    cfg: dict[str, Any] = json.loads(read_bytes(os.path.join(task_dir, CONFIG_FILE)))
    return cfg


def parse_usage(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def is_kept(task_dir: str) -> bool:
    """Is this the directory of a task whose end the qmaster recorded, kept
    for KEEP_ACTIVE (nothing left to report)?"""
    return os.path.exists(os.path.join(task_dir, KEPT_MARKER))


def keep(task_dir: str) -> None:
    """Mark an ended task's directory as kept (execd_params KEEP_ACTIVE)."""
    write_file(os.path.join(task_dir, KEPT_MARKER), "")


def has_ended(task_dir: str) -> bool:
    """Has the shepherd written its end marker?"""
    return os.path.exists(os.path.join(task_dir, END_MARKER))


def end_marker(failed: int, usage: dict[str, Any] | None) -> str:
    """The text of ``exit_status``: the shepherd's state, then the job's exit
    status and signal when it ran (``failed [exit_status signal]``), so that
    the end marker alone says how the job ended."""
    if usage is None:
        return f"{failed}\n"
    return f"{failed} {int(usage.get('exit_status', 0))} {int(usage.get('signal', 0))}\n"


def read_results(task_dir: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the shepherd left: the report to send to the qmaster (``config``:
    the task's config when the caller has it, else it is read)."""
    return _read_results(task_dir, config)[0]


def _read_results(task_dir: str, config: dict[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """:func:`read_results`, and whether the end marker was there."""
    report: dict[str, Any] = {}
    marker: list[str] = []
    ended = True
    try:
        marker = read_small(os.path.join(task_dir, END_MARKER)).split()
        report["failed"] = int(marker[0])
    except FileNotFoundError:
        ended = False
        report["failed"] = exit_codes.ESSTATE_NO_EXITSTATUS
    except (ValueError, IndexError):
        report["failed"] = exit_codes.ESSTATE_NO_EXITSTATUS
    try:
        usage = parse_usage(read_small(os.path.join(task_dir, "usage")))
        report["usage"] = usage
        report["exit_status"] = int(usage.get("exit_status", 0))
        report["signal"] = int(usage.get("signal", 0))
    except FileNotFoundError:
        report["usage"] = {}
        if len(marker) == 3 and marker[1].isdigit() and marker[2].isdigit():  # the job's end, without its usage
            report["exit_status"], report["signal"] = int(marker[1]), int(marker[2])
    try:
        first = read_small(os.path.join(task_dir, "error"), 65536).replace("\r\n", "\n").replace("\r", "\n")
        report["error"] = first.split("\n", 1)[0].strip()  # its first line
    except FileNotFoundError:
        pass
    try:
        report["limit"] = read_small(os.path.join(task_dir, "limit")).strip()
    except FileNotFoundError:
        pass
    try:  # which run of the task this was (the qmaster's dispatch time): a late report of an
        dispatched = (config if config is not None else read_config(task_dir)).get("dispatched")  # earlier
    except (OSError, ValueError):  # run must not end a later one
        dispatched = None
    if isinstance(dispatched, (int, float)):
        report["dispatched"] = dispatched
    return report, ended


def end_report(task_dir: str, died_through_signal: bool, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The results of a shepherd that has ended.  One gone without its end
    marker (killed, or its host went down and the execd restarted) gets
    the lost state (:func:`minisge.rules.exit_codes.lost_shepherd_state`),
    written down, so the end is reported at the next connection too; when
    even that cannot be written (a full disk), the state is in the report
    alone (:func:`has_ended` stays False)."""
    return end_report_written(task_dir, died_through_signal, config)[0]


def end_report_written(task_dir: str, died_through_signal: bool,
                       config: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
    """:func:`end_report`, and whether its end marker is on disk now (what
    :func:`has_ended` would say after it, known without asking the disk
    again: the marker was read, or written)."""
    report, ended = _read_results(task_dir, config)
    if ended:
        return report, True
    state = exit_codes.lost_shepherd_state(died_through_signal)
    report["failed"] = state  # what the marker says once written: the rest of the report is as read
    try:
        write_marker(os.path.join(task_dir, END_MARKER), f"{state}\n")
    except OSError:
        return report, False
    return report, True


def recovered_task(task_dir: str) -> RunningTask:
    """A task an earlier execd started: its shepherd's pid, its limits, host
    slots, h_rt and TMPDIR (its config) and when it started (its ``pid``
    file), for the wall clock."""
    task = RunningTask(task_dir, read_int(os.path.join(task_dir, PID_FILE)))
    try:
        cfg = read_config(task_dir)
        task.limits = dict(cfg.get("limits") or {})
        task.host_slots = int(cfg.get("host_slots") or 1)
        task.h_rt = cfg.get("h_rt")
        task.tmpdir = cfg.get("tmpdir")
        task.job_id = int(cfg.get("job_id") or 0)
        task.cpus = tuple((cfg.get("binding") or {}).get("cpus") or ())
        age = max(0.0, time.time() - os.stat(os.path.join(task_dir, PID_FILE)).st_mtime)
        task.started = time.monotonic() - age
    except (OSError, ValueError):
        pass  # no config or pid file: the shepherd never ran; nothing to watch
    return task


# ---------------------------------------------------------------- signals
def signal_dir(task_dir: str, signum: int, note: bool = True) -> None:
    """Signal the process group of the job (or PE task) whose shepherd
    works in ``task_dir``.  With ``note`` the ``signal`` file is written
    first: the shepherd reads it once it has written ``job_pid``, so a
    signal sent before the pid is known is not lost (a warning such as
    s_rt's SIGUSR1 is not noted)."""
    if not os.path.isdir(task_dir):
        return
    if note:
        try:
            write_file(os.path.join(task_dir, "signal"), f"{int(signum)}\n")
        except OSError:
            pass  # a full disk: the signal still goes to a job that has a pid
    killpg(read_int(os.path.join(task_dir, "job_pid")), signum)


def killpg(pid: int | None, signum: int) -> bool:
    """Signal the process group ``pid`` leads; False when there is none (or
    it is not ours to signal)."""
    if not pid:
        return False
    try:
        os.killpg(pid, signum)
        return True
    except (ProcessLookupError, PermissionError):
        return False
