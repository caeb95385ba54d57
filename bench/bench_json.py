"""``qstat -fmt json`` against the text view at 10,000 jobs (issue 17, item 2).

Starts a private all-in-one cell in a temporary SGE_ROOT, submits N held jobs
over one connection (as qsub sends them), then times, call by call in turns,
``qstat`` against ``qstat -fmt json`` and ``qstat -f`` against ``qstat -f
-fmt json`` (and ``-ext``), and prints the medians of the wall time and of
the command's own CPU time (user+system of the child), and the output sizes.

    python bench/bench_json.py [--jobs 10000] [--calls 15]

Measured 2026-11-23 on the 2-core development machine shared with other work
(load average 4 to 7), 10,000 held jobs, medians of 7 calls (wall includes the
qmaster's answer; cpu is the command's own):

    qstat               text 3785 ms wall, 436 ms cpu, 1084 KiB | json 3666 ms, 409 ms, 1220 KiB
    qstat -f            text 3732 ms wall, 432 ms cpu,  782 KiB | json 3812 ms, 401 ms, 1220 KiB
    qstat -ext          text 6934 ms wall, 693 ms cpu, 1856 KiB | json 6881 ms, 667 ms, 3104 KiB

(an earlier run, 11 calls, load 4: qstat 2248/2110 ms wall, 455/404 ms cpu;
qstat -f 2608/2580 ms, 469/430 ms).  The JSON view costs the command no more
CPU than the text; the wall time is the qmaster's reply either way.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from minisge import protocol  # noqa: E402 - the source tree's, beside the installed commands


def cmd(name: str) -> str:
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: pip install . first")
    return path


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, the child's CPU seconds, bytes printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, cwd="/tmp")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert p.returncode == 0, p.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if b"-fmt" in b" ".join(a.encode() for a in argv):
        json.loads(p.stdout)  # valid, or the bench fails
    return wall, cpu, len(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args()

    # a timeout's SIGTERM still stops the cell (the finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="minisge-bench-json-")
    env = dict(os.environ, SGE_ROOT=os.path.join(tmp, "root"))
    for k in ("SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT"):
        env.pop(k, None)
    subprocess.run([cmd("minisge"), "start", "--slots", "2"], env=env, check=True, capture_output=True)
    try:
        print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[0]}")
        sock = protocol.connect_unix(os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.sock"))
        req = {"job_name": "pend", "binary": True, "command": "/bin/true", "args": [], "hold": True, "cwd": "/tmp"}
        t0 = time.perf_counter()
        for _ in range(args.jobs):
            r = protocol.request(sock, {"op": "submit", "request": req})
            assert r["ok"], r
        print(f"{args.jobs} held jobs submitted over one connection in {time.perf_counter() - t0:.1f} s")
        time.sleep(1.0)

        pairs = [([], ["-fmt", "json"]), (["-f"], ["-f", "-fmt", "json"]),
                 (["-ext"], ["-ext", "-fmt", "json"])]
        for text_args, json_args in pairs:
            runs: dict[str, list[tuple[float, float, int]]] = {"text": [], "json": []}
            for _ in range(args.calls):  # in turns, so that a busy moment hurts both alike
                runs["text"].append(timed([cmd("qstat"), *text_args], env))
                runs["json"].append(timed([cmd("qstat"), *json_args], env))
            line = []
            for kind, argv in (("text", text_args), ("json", json_args)):
                wall = statistics.median(r[0] for r in runs[kind]) * 1000
                cpu = statistics.median(r[1] for r in runs[kind]) * 1000
                size = runs[kind][0][2]
                line.append(f"qstat {' '.join(argv) or '(plain)'}: wall {wall:.0f} ms, cpu {cpu:.0f} ms, "
                            f"{size / 1024:.0f} KiB")
            print(" | ".join(line))
    finally:
        subprocess.run([cmd("minisge"), "stop"], env=env, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
