"""What one shepherd costs: the Python shepherd forked from a launcher-like
process, the C shepherd started by posix_spawn with its plan, and the job
alone, for a ``-b y /bin/true`` task (``/bin/sh -c /bin/true``, as 8.1.9 runs
a binary job).

Each task gets a directory with the spare files a recycled one has (no new
inode for its results, as in a running execd), its ``config`` as the execd
writes it, and its ``pid`` file claimed as the launcher claims it; the
figure is the CPU time of the shepherd and its job per task (getrusage of
the reaped children, which the machine's other load moves little), their
page faults, and the wall time per task, each the median of ``--runs``.
The plan is made before the timing, as the launcher makes it before the
spawn (its cost is the launcher's: see ``bench/bench_array.py --cell``).

    python bench/bench_shepherd.py [--tasks 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial

from minisge.execd import launcher, shepherd_plan
from minisge.execd.task_dir import SPARES, create_pid_file


def config(work: str) -> dict[str, object]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "SHELL": "/bin/sh", "JOB_ID": "1",
           "JOB_NAME": "true", "QUEUE": "all.q", "ENVIRONMENT": "BATCH", "TMPDIR": "/tmp"}
    return {"job_id": 1, "task_id": 1, "uid": os.getuid(), "gid": os.getgid(), "cwd": work,
            "stdout_path": "/dev/null", "stderr_path": "/dev/null", "stdin_path": "/dev/null", "merge": True,
            "shell": "/bin/sh", "shell_start_mode": "posix_compliant", "binary": True, "command": "/bin/true",
            "args": [], "env": env, "sge_env": {}, "procedures": {}, "limits": {}, "host_slots": 1}


def task_dirs(work: str, n: int, cfg: dict[str, object]) -> list[str]:
    base = tempfile.mkdtemp(dir=work)
    dirs = []
    text = json.dumps(cfg)
    for i in range(n):
        d = os.path.join(base, str(i))
        os.mkdir(d)
        for spare in SPARES.values():
            open(os.path.join(d, spare), "w").close()
        with open(os.path.join(d, "config"), "w") as f:
            f.write(text)
        dirs.append(d)
    return dirs


def timed(n: int, one: Callable[[int], None]) -> tuple[float, float, float]:
    """(children's CPU ms, page faults, wall ms) per task of ``n`` calls of ``one``."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    for i in range(n):
        one(i)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    return cpu / n * 1e3, (r1.ru_minflt - r0.ru_minflt) / n, wall / n * 1e3


def job_alone(argv: list[str], i: int) -> None:
    os.waitpid(os.posix_spawn(argv[0], argv, {}), 0)


def python_shepherd(dirs: list[str], area: tuple[int, int] | None, i: int) -> None:
    """As the launcher forks it."""
    fd = create_pid_file(dirs[i])
    pid = os.fork()
    if pid == 0:
        launcher.become_shepherd(dirs[i], 1, fd, [], area)
    os.close(fd)
    os.waitpid(pid, 0)


def c_shepherd(binary: str, dirs: list[str], plans: list[bytes | None], i: int) -> None:
    """As the launcher spawns it."""
    fd = create_pid_file(dirs[i])
    plan = plans[i]
    assert plan is not None
    pid = launcher.spawn_shepherd(binary, 1, fd, plan, [])
    os.close(fd)
    os.waitpid(pid, 0)


def check(d: str) -> None:
    with open(os.path.join(d, "exit_status")) as f:
        assert f.read() == "0 0 0\n", d


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=300)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="bench-shepherd-")
    binary = shepherd_plan.binary()
    area = launcher.argv_area()
    gc.freeze()  # as the launcher does before it forks
    try:
        cfg = config(work)
        results: dict[str, list[tuple[float, float, float]]] = {"job alone": [], "Python shepherd": []}
        if binary:
            results["C shepherd"] = []
        for _ in range(args.runs):
            results["job alone"].append(timed(args.tasks, partial(job_alone, ["/bin/sh", "-c", "/bin/true"])))
            dirs = task_dirs(work, args.tasks, cfg)
            results["Python shepherd"].append(timed(args.tasks, partial(python_shepherd, dirs, area)))
            check(dirs[-1])
            if binary:
                dirs = task_dirs(work, args.tasks, cfg)
                plans = [shepherd_plan.plan(d, cfg) for d in dirs]
                results["C shepherd"].append(timed(args.tasks, partial(c_shepherd, binary, dirs, plans)))
                check(dirs[-1])
        print(f"{args.tasks} tasks of /bin/sh -c /bin/true, median of {args.runs} runs, load "
              f"{open('/proc/loadavg').read().split()[0]}; CPU and page faults of the shepherd and its job:")
        alone = statistics.median(r[0] for r in results["job alone"])
        for name, runs in results.items():
            cpu, faults, wall = (statistics.median(r[k] for r in runs) for k in range(3))
            extra = "" if name == "job alone" else f"  (the shepherd's own: {cpu - alone:.2f} ms)"
            print(f"  {name:<16} CPU {cpu:5.2f} ms  faults {faults:4.0f}  wall {wall:5.2f} ms{extra}")
        if not binary:
            print("  (the C shepherd was not built)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
