"""What a big array job costs the qmaster: submit, scheduling passes, ends, qdel.

Runs the qmaster's own code (:class:`minisge.qmaster.qmaster.Qmaster`) in this
process on a fresh cell in a temporary directory, its spool on the real disk,
with a stand-in execd link that takes the start and kill messages, and prints
the wall time of each step for an array of ``--tasks`` tasks:

- submit (the request checked, the job spooled);
- the first scheduling pass (snapshot, plan, dispatches, the spool flush);
- a pass after one task ended (its end recorded, one task dispatched): what
  every pass of a running array costs;
- ``qdel`` of a range of pending tasks, then of the whole job;

and the size of the job's spool file, and of a pass's journal line while
it runs (its file is not written then: ``minisge/qmaster/job_journal.py``).

With ``--cell`` it times the whole cycle instead, as ``bench/bench_cell.py``
does: a private all-in-one cell (``minisge start --slots 2``, all.q's
load_thresholds NONE: the machine's other load does not hold it) in a temporary
SGE_ROOT, ``qsub -t 1-N -b y /bin/true``, from the submit to the last
accounting record; ``--runs`` arrays one after the other, the median printed
with the machine's load, and the CPU time per task of each part from
/proc/PID/stat: the daemon (and of that, its system time: its system calls),
the shepherd launcher (its own: the forks of Python shepherds), and the
shepherds with their jobs (the reaped children of the daemon, which spawns
the C shepherds, and of the launcher); and the page faults per task of the
launcher and of the shepherds with their jobs, a figure the machine's other
load does not move (most are the pages a fork shares and a write then copies);
and how the machine's CPUs were used meanwhile (/proc/stat: user, system,
idle): where the idle share is small, the machine's CPU is what bounds the
rate, not a wait of the daemon's.

    python bench/bench_array.py [--tasks 75000] [--slots 4]
    python bench/bench_array.py --cell [--tasks 1000] [--runs 5] [--slots 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import trio

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.outbox import ExecdLink
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.spool import job_relpath

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cell import size, wait_records  # the accounting file, counted as bench_cell counts it

HOST = "benchhost"


class Taker(ExecdLink):
    """Takes the qmaster's messages (starts, kills) and counts them."""

    def __init__(self, host: str):
        self.host = host
        self.sent: list[dict[str, Any]] = []

    async def send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)


def request(tasks: int, cwd: str) -> dict[str, Any]:
    return {"job_name": "big", "binary": True, "command": "/bin/true", "args": [], "cwd": cwd,
            "array": [1, tasks, 1], "hard_resources": {}, "soft_resources": {}, "hard_queues": [],
            "soft_queues": [], "master_queues": [], "hold_jid": [], "hold_jid_ad": [], "env": {}, "o_env": {}}


def file_size(path: str) -> int:
    return os.stat(path).st_size


def last_line_size(path: str) -> int:
    """The length of a file's last line, its newline included."""
    with open(path, "rb") as f:
        return len(f.read().splitlines()[-1]) + 1


def cpu_counters() -> list[int]:
    """The machine's CPU time so far, in clock ticks, by kind (proc(5)
    /proc/stat's first line: user, nice, system, idle, iowait, irq, softirq, steal)."""
    with open("/proc/stat") as f:
        return [int(v) for v in f.readline().split()[1:9]]


def machine_shares(before: list[int], after: list[int]) -> tuple[float, float, float]:
    """The shares (%) of the machine's CPU time between two :func:`cpu_counters`
    that were user (with nice), system (with irq and softirq) and idle (with iowait);
    steal counts with none of them."""
    d = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(d) or 1
    return (100 * (d[0] + d[1]) / total, 100 * (d[2] + d[5] + d[6]) / total, 100 * (d[3] + d[4]) / total)


def timed(label: str, fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    print(f"{label:<44} {time.perf_counter() - t0:9.3f} s")
    return out


async def main(tasks: int, slots: int, tmp: str) -> None:
    cell = Cell(os.path.join(tmp, "root"))
    init_cell(cell, HOST, slots, env={})
    qm = Qmaster(cell, HOST)
    qm.load()
    taker = Taker(HOST)
    qm.execds[HOST] = taker
    qm.config.register_execd(HOST)
    uid = os.getuid()
    gid = os.getgid()
    print(f"array of {tasks} tasks, {slots} slots")
    res = timed("submit", qm.submit, request(tasks, tmp), uid, gid)
    job_id = res["job_id"]
    spool_file = os.path.join(cell.qmaster_spool, job_relpath(job_id))
    print(f"{'spool file after submit':<44} {file_size(spool_file):9d} bytes")

    def one_pass() -> int:
        started = qm.schedule()
        qm.flush()
        return len(started)

    n = timed("first pass (dispatch, flush)", one_pass)
    print(f"{'  tasks dispatched':<44} {n:9d}")
    job = qm.jobs[job_id]
    first = min(job.tasks)
    report = {"op": "task_end", "host": HOST, "job_id": job_id, "task_id": first, "exit_status": 0,
              "failed": 0, "usage": {}}

    def end_and_pass() -> int:
        qm.task_finished(report)
        return one_pass()

    n = timed("one task ended, next pass", end_and_pass)
    print(f"{'  tasks dispatched':<44} {n:9d}")
    # a running job's changes are journal lines, its file is left (minisge/qmaster/job_journal.py)
    print(f"{'journal line of a pass while running':<44} {last_line_size(qm.spool.journal.path):9d} bytes")
    t0 = time.perf_counter()
    lines, rc = await qm.delete([f"{job_id}.{tasks // 2}-{tasks}"], uid)
    print(f"{'qdel of half the pending tasks (a range)':<44} {time.perf_counter() - t0:9.3f} s")
    t0 = time.perf_counter()
    lines, rc = await qm.delete([str(job_id)], uid)
    print(f"{'qdel of the job':<44} {time.perf_counter() - t0:9.3f} s")
    assert rc == 0, lines


def cpu_ticks(pid: int) -> tuple[int, int]:
    """(utime + stime, cutime + cstime) of a process, in clock ticks (proc(5)):
    its own CPU and that of its children it has reaped."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def faults(pid: int) -> tuple[int, int]:
    """(minflt, cminflt) of a process (proc(5) fields 10 and 11): its page
    faults and those of its children it has reaped, a count the machine's
    other load does not change (a fork's copied pages are most of them)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[8])


def system_ticks(pid: int) -> int:
    """stime of a process, in clock ticks: its CPU in the kernel (its system calls)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[12])


def launcher_pid(daemon: int) -> int | None:
    """The daemon's shepherd launcher (a child running minisge.execd.launcher)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == daemon and b"minisge.execd.launcher" in cmd:
            return int(name)
    return None


def cell_runs(tasks: int, slots: int, runs: int, tmp: str) -> None:
    """The array's end-to-end figure on a running cell, ``runs`` times."""
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, SGE_ROOT=os.path.join(tmp, "root"))
    for k in ("SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT"):
        env.pop(k, None)
    acct = os.path.join(env["SGE_ROOT"], "default", "common", "accounting")
    subprocess.run([os.path.join(bindir, "minisge"), "start", "--slots", str(slots)], env=env, check=True,
                   capture_output=True)
    try:
        # the machine's other load (np_load_avg) must not hold the array back
        subprocess.run([os.path.join(bindir, "qconf"), "-rattr", "queue", "load_thresholds", "NONE", "all.q"],
                       env=env, check=True, capture_output=True)
        with open(Cell(env["SGE_ROOT"]).pid_file) as f:
            daemon = int(f.read())
        tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
        rates = []
        cpus: list[tuple[float, ...]] = []
        shares: list[tuple[float, float, float]] = []  # the machine's CPUs during each array
        for i in range(runs):
            load = open("/proc/loadavg").read().split()[0]
            since = size(acct)
            launcher = launcher_pid(daemon)
            d0, dc0 = cpu_ticks(daemon)
            df0 = faults(daemon)[1]
            s0 = system_ticks(daemon)
            l0 = cpu_ticks(launcher) if launcher else (0, 0)
            f0 = faults(launcher) if launcher else (0, 0)
            m0 = cpu_counters()
            t0 = time.perf_counter()
            subprocess.run([os.path.join(bindir, "qsub"), "-t", f"1-{tasks}", "-b", "y", "-o", "/dev/null", "-j", "y",
                            "/bin/true"], env=env, check=True, capture_output=True, cwd="/tmp")
            t1 = wait_records(acct, since, tasks)
            shares.append(machine_shares(m0, cpu_counters()))
            rates.append(tasks / (t1 - t0))
            time.sleep(0.2)  # the last shepherds reaped by the launcher
            d1, dc1 = cpu_ticks(daemon)
            df1 = faults(daemon)[1]
            s1 = system_ticks(daemon)
            l1 = cpu_ticks(launcher) if launcher else (0, 0)
            f1 = faults(launcher) if launcher else (0, 0)
            # the shepherds are the daemon's children (the C one, spawned) or the launcher's (forked)
            cpu = ((d1 - d0) * tick_ms / tasks, (l1[0] - l0[0]) * tick_ms / tasks,
                   (l1[1] - l0[1] + dc1 - dc0) * tick_ms / tasks, (s1 - s0) * tick_ms / tasks,
                   (f1[0] - f0[0]) / tasks, (f1[1] - f0[1] + df1 - df0) / tasks)
            cpus.append(cpu)
            print(f"run {i + 1}: {tasks}-task array of /bin/true, submit to last accounting record "
                  f"{t1 - t0:6.2f} s  {rates[-1]:7.1f} tasks/s  (load {load}); CPU per task: daemon {cpu[0]:.2f} ms "
                  f"(system {cpu[3]:.2f}), launcher {cpu[1]:.2f} ms, shepherd + job {cpu[2]:.2f} ms; page faults "
                  f"per task: launcher {cpu[4]:.0f}, shepherd + job {cpu[5]:.0f}; the machine's CPUs: user "
                  f"{shares[-1][0]:.0f} %, system {shares[-1][1]:.0f} %, idle {shares[-1][2]:.0f} %", flush=True)
        med = [statistics.median(c[k] for c in cpus) for k in range(6)]
        user, system, idle = (statistics.median(x[k] for x in shares) for k in range(3))
        print(f"median of {runs}: {statistics.median(rates):.1f} tasks/s ({slots} slots, {os.cpu_count()} cores); "
              f"CPU per task: daemon {med[0]:.2f} ms (system {med[3]:.2f}), launcher {med[1]:.2f} ms, "
              f"shepherd + job {med[2]:.2f} ms; page faults per task: launcher {med[4]:.0f}, "
              f"shepherd + job {med[5]:.0f}; the machine's CPUs: user {user:.0f} %, system {system:.0f} %, "
              f"idle {idle:.0f} %")
    finally:
        subprocess.run([os.path.join(bindir, "minisge"), "stop"], env=env, capture_output=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=None, help="75000; 1000 with --cell")
    p.add_argument("--slots", type=int, default=None, help="4; 2 with --cell")
    p.add_argument("--cell", action="store_true", help="the whole cycle on a running cell, end to end")
    p.add_argument("--runs", type=int, default=5, help="with --cell: arrays timed, the median printed")
    args = p.parse_args()
    if args.cell:
        tmp = tempfile.mkdtemp(prefix="bench-array-cell-")
        try:
            cell_runs(args.tasks or 1000, args.slots or 2, args.runs, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        sys.exit(0)
    args.tasks = args.tasks or 75000
    args.slots = args.slots or 4
    tmp = tempfile.mkdtemp(prefix="bench-array-")
    try:
        trio.run(main, args.tasks, args.slots, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0)
