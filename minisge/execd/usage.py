"""The online usage of a job, read from /proc (the execd's PDC, sge_execd(8)).

Every second the execd reads the processes of each job it runs and keeps,
per task, what Grid Engine 8.1.9's Linux data collector keeps (pdc.c,
procfs.c, ptf.c):

``cpu``      user + system time of the job's processes (those gone counted
             with the last value seen), seconds;
``vmem``     the summed virtual size (``vsize``) of the live processes, bytes;
``maxvmem``  the highest ``vmem`` seen, bytes;
``mem``      the integral memory usage: per process and interval, the CPU
             time used times the mean of its virtual size at both ends, in
             GB·s (accounting(5) "integral memory usage in Gbytes cpu seconds");
``io``       the characters read and written (``rchar`` + ``wchar`` of
             /proc/PID/io), in GB as accounting(5) writes it.

A job's processes are those of the shepherd's session (the shepherd calls
setsid and every child joins it), the shepherd itself excepted; 8.1.9 marks
them with an extra group id instead.  Reading is :func:`read_processes`;
the accumulation (:class:`JobUsage`) is pure and fed with its result.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

CLK_TCK = os.sysconf("SC_CLK_TCK")
GB = 1024.0 ** 3


class Proc(NamedTuple):
    """One process as /proc shows it."""

    pid: int
    session: int
    start: int  # starttime in clock ticks: with the pid, who the process is
    cpu: float  # utime + stime, seconds
    vsize: int  # bytes
    iochars: int  # rchar + wchar, 0 when unreadable


def parse_stat(text: str) -> tuple[int, int, int, float, int] | None:
    """(pid, session, starttime, cpu seconds, vsize) of a /proc/PID/stat line
    (proc(5); the command in parentheses may hold blanks and parentheses)."""
    try:
        pid = int(text[: text.index(" ")])
        rest = text[text.rindex(")") + 2:].split()
        session = int(rest[3])
        cpu = (int(rest[11]) + int(rest[12])) / CLK_TCK
        return pid, session, int(rest[19]), cpu, int(rest[20])
    except (ValueError, IndexError):
        return None


def parse_io(text: str) -> int:
    """rchar + wchar of a /proc/PID/io text (what 8.1.9's procfs.c adds up)."""
    total = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("rchar", "wchar"):
            try:
                total += int(value)
            except ValueError:
                pass
    return total


def read_processes(sessions: set[int], proc: str = "/proc") -> dict[int, list[Proc]]:
    """The processes of the given sessions, by session, from one pass over
    ``/proc``; a session leader (the shepherd) is not one of them."""
    out: dict[int, list[Proc]] = {s: [] for s in sessions}
    if not sessions:
        return out
    try:
        names = os.listdir(proc)
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat", encoding="ascii", errors="replace") as f:
                stat = parse_stat(f.read())
        except OSError:
            continue
        if stat is None or stat[1] not in out or stat[0] == stat[1]:
            continue
        try:
            with open(f"{proc}/{name}/io", encoding="ascii") as f:
                io = parse_io(f.read())
        except OSError:
            io = 0
        out[stat[1]].append(Proc(stat[0], stat[1], stat[2], stat[3], stat[4], io))
    return out


class JobUsage:
    """The usage of one job, accumulated over samples (pdc.c on Linux)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], tuple[float, int, int]] = {}  # (pid, start) → (cpu, vsize, iochars)
        self.cpu_gone = 0.0  # CPU of processes that have ended
        self.cpu = 0.0
        self.vmem = 0
        self.maxvmem = 0
        self.mem = 0.0  # GB·s
        self.iochars = 0

    def sample(self, procs: Iterable[Proc]) -> None:
        """Add one sample of the job's live processes."""
        current: dict[tuple[int, int], tuple[float, int, int]] = {}
        cpu_live = 0.0
        vmem = 0
        for p in procs:
            key = (p.pid, p.start)
            old_cpu, old_vsize, old_io = self.seen.get(key, (0.0, 0, 0))
            self.mem += max(0.0, p.cpu - old_cpu) * (old_vsize + p.vsize) / 2 / GB
            if p.iochars > old_io:
                self.iochars += p.iochars - old_io
            current[key] = (max(p.cpu, old_cpu), p.vsize, max(p.iochars, old_io))
            cpu_live += max(p.cpu, old_cpu)
            vmem += p.vsize
        for key, (cpu, _, _) in self.seen.items():
            if key not in current:
                self.cpu_gone += cpu
        self.seen = current
        self.cpu = self.cpu_gone + cpu_live
        self.vmem = vmem
        self.maxvmem = max(self.maxvmem, vmem)

    def online(self) -> dict[str, float]:
        """The figures of a running job as qstat shows them (its execd's
        usage report): cpu seconds, mem in GB·s, io in GB, vmem and maxvmem
        in bytes."""
        return {"cpu": self.cpu, "mem": self.mem, "io": self.iochars / GB, "vmem": float(self.vmem),
                "maxvmem": float(self.maxvmem)}

    def fields(self) -> dict[str, str]:
        """The accounting(5) usage fields this collector provides."""
        return {
            "cpu_pdc": f"{self.cpu:.6f}",
            "mem": f"{self.mem:.6f}",
            "io": f"{self.iochars / GB:.6f}",
            "iow": "0.000000",
            "maxvmem": f"{float(self.maxvmem):.6f}",
        }
