"""Compare variants of minisge on the array figure, interleaved, in a noisy machine.

A variant is the working tree as committed (``base``) or with a patch applied
(``NAME=PATH``, a ``git diff`` of Python files: a change to the C shepherd
would need a rebuild, which this script does not do).  Each round runs
``bench/bench_array.py --cell`` once per variant, in a shuffled order, each
patch applied before its run and taken back after it, so that the host's
drift (here ±7-15 % over minutes) falls on every variant alike; then it
prints, per variant, the median rate, the median of its ratios to the base
of the same round, in how many rounds it was faster, and the daemon's median
CPU per task.  The ratio is the figure to read: a change of a few per cent
shows only over several rounds.

    python bench/ab_array.py [--rounds 4] [--slots 2] [--tasks 1000] [--runs 3] NAME=PATCH ...

The tree must have no uncommitted change (a patch is applied to it); it is
left as it was, also after an interruption.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = "base"
# bench_array.py's summary line: "median of 3: 447.0 tasks/s (...); CPU per task: daemon 1.59 ms ..."
SUMMARY = re.compile(r"median of \d+: ([0-9.]+) tasks/s.*?daemon ([0-9.]+) ms")


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def one_run(slots: int, tasks: int, runs: int) -> tuple[float, float]:
    """(tasks/s, daemon ms per task) of one bench_array.py --cell."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # the daemon's own .pyc
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_array.py"), "--cell", "--tasks",
                        str(tasks), "--runs", str(runs), "--slots", str(slots)],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    m = SUMMARY.search(p.stdout)
    if p.returncode != 0 or m is None:
        raise SystemExit(f"bench_array.py failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return float(m.group(1)), float(m.group(2))


def run_variant(patch: str | None, slots: int, tasks: int, runs: int) -> tuple[float, float]:
    if patch is None:
        return one_run(slots, tasks, runs)
    applied = git("apply", patch)
    if applied.returncode != 0:
        raise SystemExit(f"cannot apply {patch}: {applied.stderr.strip()}")
    try:
        return one_run(slots, tasks, runs)
    finally:
        if git("apply", "-R", patch).returncode != 0:
            raise SystemExit(f"cannot take {patch} back: the tree is left with it applied")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3, help="arrays per bench_array.py run (its median is taken)")
    ap.add_argument("variants", nargs="+", metavar="NAME=PATCH")
    args = ap.parse_args()
    variants: dict[str, str | None] = {BASE: None}
    for v in args.variants:
        name, eq, path = v.partition("=")
        if not eq or not name or name in variants or not os.path.isfile(path):
            ap.error(f"{v!r}: NAME=PATCH, a new name and a patch file")
        variants[name] = os.path.abspath(path)
    if git("status", "--porcelain", "--untracked-files=no").stdout.strip():
        raise SystemExit("the tree has uncommitted changes: commit or stash them first")
    rounds: list[dict[str, tuple[float, float]]] = []
    for r in range(args.rounds):
        order = list(variants)
        random.shuffle(order)
        got = {name: run_variant(variants[name], args.slots, args.tasks, args.runs) for name in order}
        rounds.append(got)
        print(f"round {r + 1}: " + "  ".join(f"{n} {got[n][0]:.1f}/s {got[n][1]:.2f} ms" for n in variants),
              flush=True)
    print(f"{args.rounds} rounds, {args.slots} slots, {args.tasks}-task arrays, median of {args.runs} each; "
          f"load {open('/proc/loadavg').read().split()[0]}")
    for name in variants:
        ratios = [g[name][0] / g[BASE][0] for g in rounds]
        print(f"  {name:<12} {statistics.median(g[name][0] for g in rounds):7.1f} tasks/s   ratio to {BASE} "
              f"{statistics.median(ratios):.3f} (faster in {sum(x > 1 for x in ratios)} of {len(ratios)})   "
              f"daemon {statistics.median(g[name][1] for g in rounds):.2f} ms a task")


if __name__ == "__main__":
    main()
