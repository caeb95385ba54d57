"""What recycling an acknowledged task's directory costs the execd's loop
(:func:`minisge.execd.task_dir.recycle`): ``--dirs`` directories laid down
in a temporary spool as a task leaves them (its config, pid and job_pid,
usage, exit_status), then recycled one after the other; the CPU time per
directory (``time.thread_time``), the median of ``--runs``.

    python bench/bench_recycle.py [--dirs 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from minisge.execd.task_dir import SPARES, recycle


def lay_down(root: str, n: int) -> list[str]:
    dirs = []
    for i in range(n):
        d = os.path.join(root, f"1.{i}-{i}")
        os.makedirs(d)
        for name in SPARES:
            with open(os.path.join(d, name), "w") as f:
                f.write(f"{10000 + i}\n" if name in ("pid", "job_pid") else "x" * 300)
        dirs.append(d)
    return dirs


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dirs", type=int, default=500)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="bench-recycle-")
    try:
        per_dir = []
        for run in range(args.runs):
            dirs = lay_down(os.path.join(work, str(run), "spool", "host", "removing"), args.dirs)
            c = time.thread_time()
            for d in dirs:
                assert recycle(d)
            per_dir.append((time.thread_time() - c) / args.dirs)
        print(f"recycle: {statistics.median(per_dir) * 1e6:.1f} us of CPU a directory "
              f"(median of {args.runs} runs of {args.dirs})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
