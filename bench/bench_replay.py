"""How fast ``minisge replay`` is: a synthetic SWF trace through the replay.

Writes a trace of ``--jobs`` jobs (a fixed pseudo-random workload: a job
every 0 to 20 s, 1 to 16 processors, 10 s to 15 min of run time (about 85% of 16 hosts of 16 slots), 20 users) and
a configuration of ``--hosts`` hosts of 16 slots into a temporary directory,
replays it (:func:`minisge.replay.simulate.run`, as ``minisge replay`` does)
and prints the wall time, the scheduling passes and the mean wait.

    python bench/bench_replay.py [--jobs 10000] [--hosts 16]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

from minisge.formats.swf import parse_swf
from minisge.qmaster.qmaster import gc_paused
from minisge.replay import config, metrics, simulate


def synthetic_swf(jobs: int, seed: int = 16) -> str:
    rng = random.Random(seed)
    lines = ["; synthetic trace (bench/bench_replay.py)"]
    t = 0
    for n in range(1, jobs + 1):
        t += rng.randint(0, 20)
        procs = rng.choice((1, 1, 1, 2, 4, 8, 16))
        run = rng.randint(10, 900)
        req = run + rng.randint(0, 600)
        user = rng.randint(1, 20)
        lines.append(f"{n} {t} -1 {run} {procs} -1 -1 {procs} {req} -1 1 {user} 1 -1 -1 -1 -1 -1")
    return "\n".join(lines) + "\n"


def config_toml(hosts: int) -> str:
    names = [f"node{i:02d}" for i in range(1, hosts + 1)]
    out = [f"[exec_hosts.{h}]" for h in names]
    out += ['[hostgroups."@allhosts"]', f'hostlist = "{" ".join(names)}"',
            '[queues."all.q"]', 'hostlist = "@allhosts"', "slots = 16", 'pe_list = "mpi"',
            "[pes.mpi]", "slots = 9999", 'allocation_rule = "$fill_up"',
            "[sched_conf]", 'queue_sort_method = "seqno"']
    return "\n".join(out) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=10000)
    p.add_argument("--hosts", type=int, default=16)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        toml = os.path.join(d, "bench.toml")
        with open(toml, "w", encoding="utf-8") as f:
            f.write(config_toml(args.hosts))
        trace = parse_swf(synthetic_swf(args.jobs), "synthetic.swf")
        setup = config.from_toml(toml)
        t0, c0 = time.perf_counter(), time.process_time()
        with gc_paused():
            result, replay = simulate.run(trace, setup)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = metrics.summarise(result)
    print(f"{args.jobs} jobs on {args.hosts} hosts x 16 slots: {took:.2f} s ({cpu:.2f} s of CPU; load "
          f"{os.getloadavg()[0]:.2f}), {replay.passes} passes, "
          f"mean wait {s.total.mean_wait or 0:.0f} s, utilisation {100 * (s.utilisation or 0):.1f}%")


if __name__ == "__main__":
    main()
