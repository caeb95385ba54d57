"""One task's start in the execd: from the start message (the dispatch) to
the job's first instruction.

Lays a cell down in a temporary SGE_ROOT, runs an execd (the real
:class:`minisge.execd.execd.Execd`, in this process, no qmaster) and hands
it ``--tasks`` start messages one after the other, each for a binary job
``/bin/date +%s.%N`` whose output is the moment the job ran; the time from
handing the message over to that moment is one task's start (the task's
directory, its config, the shepherd's start, the job's fork and exec).
Prints the median and the quartiles; the next task is started once the
previous one's end has been reported.  ``--ballast MB`` makes this process
hold that much memory besides, as a daemon with many jobs does.

    python bench/bench_task_start.py [--tasks 40] [--ballast 0]
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
from minisge.execd.execd import Execd

HOST = "benchhost"


def start_message(job_id: int, work: str) -> dict[str, Any]:
    spec = {"job_name": "date", "binary": True, "command": "/bin/date", "args": ["+%s.%N"], "cwd": work,
            "stdout_path": [{"host": None, "path": os.path.join(work, f"date.o{job_id}")}], "merge": True,
            "no_shell": True}
    return {"op": "start", "job_id": job_id, "task_id": 1, "owner": "root", "uid": os.getuid(), "gid": os.getgid(),
            "spec": spec, "queue": "all.q", "slots": 1, "nhosts": 1, "nqueues": 1, "pe": None, "pe_hostfile": None,
            "queue_shell": "/bin/sh", "shell_start_mode": "posix_compliant", "tmpdir": work,
            "script_file": None, "restarted": 0, "h_rt": None, "limits": {}, "host_slots": 1,
            "consumable_job": [], "processors": "UNDEFINED", "procedures": {}}


async def bench(cell: Cell, work: str, tasks: int) -> list[float]:
    ended: dict[int, trio.Event] = {}

    async def report(msg: dict[str, Any]) -> None:
        if msg.get("op") == "task_end":
            ev = ended.get(msg["job_id"])
            if ev is not None:
                ev.set()

    execd = Execd(cell, HOST, report)
    out = []
    async with trio.open_nursery() as nursery:
        await nursery.start(execd.run)
        for job_id in range(1, tasks + 1):
            ended[job_id] = trio.Event()
            t0 = time.time()
            await execd.handle(start_message(job_id, work))
            with trio.fail_after(30):
                await ended[job_id].wait()
            started = await trio.Path(work, f"date.o{job_id}").read_text()
            out.append(float(started.strip()) - t0)
            await execd.handle({"op": "ack_end", "job_id": job_id, "task_id": 1})
        nursery.cancel_scope.cancel()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=40)
    p.add_argument("--ballast", type=int, default=0, metavar="MB",
                   help="memory this process holds besides the execd, as a daemon with many jobs does")
    args = p.parse_args()
    ballast = [bytearray(1 << 20) for _ in range(args.ballast)]  # touched pages: what a fork copies the tables of
    tmp = tempfile.mkdtemp(prefix="minisge-bench-start-")
    try:
        root = os.path.join(tmp, "root")
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        env = dict(os.environ, SGE_ROOT=root, SGE_CELL="default")
        subprocess.run([sys.executable, "-m", "minisge.daemon", "init", "--hostname", HOST], env=env, check=True,
                       capture_output=True)
        lat = trio.run(bench, Cell(root), work, args.tasks)
        del ballast
        q = statistics.quantiles(lat, n=4)
        print(f"task start (start message to the job's first instruction), {len(lat)} tasks: "
              f"median {statistics.median(lat) * 1000:.1f} ms, quartiles {q[0] * 1000:.1f} / {q[2] * 1000:.1f} ms, "
              f"min {min(lat) * 1000:.1f} ms")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
