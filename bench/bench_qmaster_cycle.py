"""The qmaster's own CPU per task of a big array, without the execd.

Runs the qmaster (:class:`minisge.qmaster.qmaster.Qmaster`, its
:class:`minisge.qmaster.requests.RequestHandler` and the all-in-one daemon's
link to its execd, :class:`minisge.daemon.allinone.InProcessExecd`) in this
process on a fresh cell in a temporary directory, its spool and accounting
file on the real disk and its accounting syncer running as in the daemon,
with a stand-in execd that takes the messages and does nothing: a
``--tasks`` array on ``--slots`` slots, where each pass (the scheduler
loop's work: schedule, flush, start messages, delivery) is followed by the
end report of the oldest running task, as the execd sends it.  What the
all-in-one daemon spends per task apart from the execd's own work and the
trio loop's, and a figure the machine's other load hardly moves: the main
thread's CPU time (``time.thread_time``) per task, and the process's
(its threads: the accounting syncer's), the median of ``--runs`` arrays;
``--profile`` prints a cProfile of one more run.

    python bench/bench_qmaster_cycle.py [--tasks 2000] [--slots 2] [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections import deque
from typing import Any

import trio

from minisge.cell import Cell
from minisge.daemon.allinone import InProcessExecd

try:  # the all-in-one daemon's way of its execd's reports
    from minisge.daemon.allinone import own_execd_report
except ImportError:  # a tree of before it (to compare): RequestHandler.execd_report
    own_execd_report = None  # type: ignore[assignment]
from minisge.daemon.cell_init import init_cell
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.requests import RequestHandler

HOST = "benchhost"

#: the usage file of a shepherd of /bin/true, as the execd reads it (task_dir.parse_usage: strings)
USAGE = {"exit_status": "0", "signal": "0", "start_time": "1795500000.123456", "end_time": "1795500000.125456",
         "ru_wallclock": "0.002", "ru_utime": "0.001", "ru_stime": "0.000712", "ru_maxrss": "1536",
         "ru_ixrss": "0", "ru_ismrss": "0", "ru_idrss": "0", "ru_isrss": "0", "ru_minflt": "92", "ru_majflt": "0",
         "ru_nswap": "0", "ru_inblock": "0", "ru_oublock": "0", "ru_msgsnd": "0", "ru_msgrcv": "0",
         "ru_nsignals": "0", "ru_nvcsw": "2", "ru_nivcsw": "0", "cpu": "0.001712", "mem": "0.0", "io": "0.0",
         "iow": "0.0", "maxvmem": "0"}


class StandInExecd:
    """Takes the qmaster's messages; keeps the tasks it was told to start."""

    def __init__(self, host: str):
        self.host = host
        self.running: deque[dict[str, Any]] = deque()

    async def handle(self, msg: dict[str, Any]) -> None:
        if msg["op"] == "start":
            self.running.append(msg)


def request(tasks: int, cwd: str) -> dict[str, Any]:
    return {"job_name": "true", "binary": True, "command": "/bin/true", "args": [], "cwd": cwd,
            "array": [1, tasks, 1], "hard_resources": {}, "soft_resources": {}, "hard_queues": [],
            "soft_queues": [], "master_queues": [], "hold_jid": [], "hold_jid_ad": [], "env": {}, "o_env": {}}


async def one_array(tasks: int, slots: int, tmp: str, profile: cProfile.Profile | None) -> tuple[float, float]:
    """The main thread's and the process's CPU seconds per task of one array, submit to last end."""
    cell = Cell(os.path.join(tmp, "root"))
    list(init_cell(cell, HOST, slots, env={}))
    qm = Qmaster(cell, HOST)
    qm.load()
    handler = RequestHandler(qm)
    execd = StandInExecd(HOST)
    qm.execds[HOST] = InProcessExecd(execd)  # type: ignore[arg-type]  # (the execd's handle alone is used)
    qm.config.register_execd(HOST)
    async with trio.open_nursery() as nursery:
        await nursery.start(qm.accounting_sync.run, qm.send_synced_acks)
        began = time.thread_time()
        began_process = time.process_time()
        if profile is not None:
            profile.enable()
        qm.submit(request(tasks, tmp), os.getuid(), os.getgid())
        ended = 0
        while ended < tasks:
            started = qm.flush(qm.schedule())
            for job, task in started:
                await qm.start_task(job, task)
            await qm.deliver()
            if execd.running:
                msg = execd.running.popleft()
                report = {"op": "task_end", "job_id": msg["job_id"], "task_id": msg["task_id"], "host": HOST,
                          "failed": 0, "exit_status": 0, "signal": 0, "usage": dict(USAGE),
                          "dispatched": msg["dispatched"]}
                if own_execd_report is not None:
                    await own_execd_report(handler, report)
                else:
                    await handler.execd_report(report)
                ended += 1
            await trio.lowlevel.checkpoint()
        qm.flush()
        await qm.deliver()
        if profile is not None:
            profile.disable()
        spent = time.thread_time() - began
        spent_process = time.process_time() - began_process
        nursery.cancel_scope.cancel()
    return spent / tasks, spent_process / tasks


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=2000)
    p.add_argument("--slots", type=int, default=2)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--profile", action="store_true", help="a cProfile of one more run, by its own time")
    args = p.parse_args()
    figures: list[tuple[float, float]] = []
    for i in range(args.runs):
        tmp = tempfile.mkdtemp(prefix="bench-qmaster-cycle-")
        try:
            figures.append(trio.run(one_array, args.tasks, args.slots, tmp, None))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"run {i + 1}: {args.tasks}-task array on {args.slots} slots: CPU per task: main thread "
              f"{figures[-1][0] * 1e6:.1f} us, process {figures[-1][1] * 1e6:.1f} us", flush=True)
    print(f"median of {args.runs}: CPU per task: main thread {statistics.median(f[0] for f in figures) * 1e6:.1f} us, "
          f"process {statistics.median(f[1] for f in figures) * 1e6:.1f} us")
    if args.profile:
        prof = cProfile.Profile()
        tmp = tempfile.mkdtemp(prefix="bench-qmaster-cycle-")
        try:
            trio.run(one_array, args.tasks, args.slots, tmp, prof)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(40)


if __name__ == "__main__":
    main()
