"""Speed of one scheduling pass (issue 5: the scheduler), without a daemon.

A cell made by ``minisge init`` in a temporary directory, grown in memory to
100 hosts × 2 cluster queues (all.q, seq_no 0, and b.q, seq_no 1) of 4 slots
each, the first half of the hosts full of running jobs; then N pending jobs
of mixed requests (plain, ``-l h_vmem=2G``, ``-pe smp 2-4``, ``-q b.q``, ``-P``,
four owners: a handful of categories).  It prints the medians of a few runs:

- ``snapshot``: ``ConfigState.snapshot`` building the scheduler's view from
  the qmaster's job table (the job table as the qmaster holds it in memory),
  as ``Qmaster.schedule`` makes it for a pass after a pass: the jobs counted
  through the job index, only those it filed since the pass before looked at
  (none here); ``--afresh``: every job looked at, as before the job index told
  the count which jobs changed (the figures of earlier notes);
- ``schedule``: one pass of ``scheduler.schedule`` over that snapshot
  (ordering by sge_priority(5), categories, placement);
- the number of dispatches and of pending tasks in the snapshot;
- ``+K new``: the same after K more jobs were submitted before each pass
  (``--submit K``, 10 by default; the snapshot's time includes filing them).

Both run with the garbage collector paused, as ``Qmaster.schedule`` runs a
pass (``minisge.qmaster.qmaster.gc_paused``).

    python bench/bench_scheduler.py [--jobs 1000,10000,100000] [--runs 5] [--afresh] [--submit K] [--profile N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from minisge import scheduler
from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats import host_conf, hostgroup, queue_conf
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.job import Grant, Job, Task
from minisge.qmaster.job_index import JobIndex
from minisge.qmaster.qmaster import gc_paused
from minisge.qmaster.spool import QmasterSpool

HOSTS = 100
SLOTS = 4
OWNERS = ("alice", "bob", "carol", "dave")


def make_config(root: str) -> tuple[ConfigState, dict]:
    """The configuration of a 100-host cell, loaded from a real spool."""
    cell = Cell(root)
    init_cell(cell, "host000", slots=SLOTS, env={})
    config = ConfigState(QmasterSpool(cell), "host000")
    config.load()
    hosts = [f"host{i:03d}" for i in range(HOSTS)]
    config.hostgroups["@allhosts"] = hostgroup.parse(f"group_name @allhosts\nhostlist {' '.join(hosts)}\n")
    for h in hosts:
        config.exec_hosts[h] = host_conf.template(h)
        config.load_values[h] = {"np_load_avg": f"{(hash(h) % 100) / 100:.2f}", "load_avg": "0.5"}
    path, text = config.spool.load_objects("cqueues")["all.q"]
    config.cqueues["b.q"] = queue_conf.parse(
        text.replace("qname                 all.q", "qname                 b.q")
            .replace("seq_no                0", "seq_no                1"), path)
    return config, {h: object() for h in hosts}


def make_jobs(n_pending: int) -> dict[int, Job]:
    """Running jobs filling the first half of the hosts, then ``n_pending``
    pending jobs in five request kinds and four owners."""
    jobs: dict[int, Job] = {}
    number = 0
    t0 = 1_700_000_000.0
    for i in range(HOSTS // 2):
        for cq in ("all.q", "b.q"):
            for _ in range(SLOTS):
                number += 1
                jobs[number] = Job(number, f"r{number}", "alice", 1000, "users", 100, t0, {"binary": True},
                                   pending=[], tasks={1: Task(1, start_time=t0 + 1,
                                                             granted=[Grant(cq, f"host{i:03d}", 1)])})
    kinds = (
        {},
        {"hard_resources": {"h_vmem": "2G"}},
        {"pe": {"name": "smp", "ranges": [[2, 4]]}},
        {"hard_queues": ["b.q"]},
        {"project": "p1"},
    )
    for k in range(n_pending):
        number += 1
        spec = dict(kinds[k % len(kinds)], binary=True)
        owner = OWNERS[(k // len(kinds)) % len(OWNERS)]
        jobs[number] = Job(number, f"p{number}", owner, 1000, "users", 100, t0 + 10 + k, spec, pending=[1])
    return jobs


def median_time(fn, runs: int) -> tuple[float, float, object]:
    """Median wall-clock and CPU (process) time of ``fn`` over ``runs`` calls:
    on a shared machine the CPU time shows the code's cost, the wall clock
    what other work added."""
    walls, cpus, out = [], [], None
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--afresh", action="store_true", help="every job looked at in every snapshot")
    ap.add_argument("--submit", type=int, default=10,
                    help="then a pass after each of this many new submissions (0: none)")
    ap.add_argument("--profile", type=int, default=0,
                    help="profile one pass (after a first one) with this many pending jobs")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config, execds = make_config(os.path.join(tmp, "root"))
        now = 1_700_100_000.0
        if args.profile:
            import cProfile
            import pstats

            jobs = make_jobs(args.profile)
            snap = config.snapshot(jobs, execds, now=now)
            scheduler.schedule(snap)  # the steady state: a pass after a pass
            cProfile.runctx("config.snapshot(jobs, execds, now=now); scheduler.schedule(snap)",
                            globals(), locals(), os.path.join(tmp, "prof"))
            pstats.Stats(os.path.join(tmp, "prof")).sort_stats("cumulative").print_stats(25)
            return
        print(f"{HOSTS} hosts x 2 queues x {SLOTS} slots, half of the hosts busy; medians of {args.runs} runs"
              f"{'; every job looked at in every snapshot' if args.afresh else ''}")
        print("wall clock (CPU time)")
        print(f"{'pending jobs':>12} {'snapshot':>18} {'schedule':>18} {'total':>10} {'dispatched':>10} {'in snap':>8}")
        for n in (int(x) for x in args.jobs.split(",")):
            jobs = make_jobs(n)
            index = JobIndex()
            index.add_all(jobs.values())

            def snapshot(jobs=jobs, index=index):
                if args.afresh:
                    return config.snapshot(jobs, execds, now=now)
                counted = config.running_jobs_of(index.considered, index.take_changed())
                return config.snapshot(index.considered, execds, now=now, counted=counted)

            with gc_paused():  # as Qmaster.schedule runs a pass
                t_snap, c_snap, snap = median_time(snapshot, args.runs)
                t_sched, c_sched, plan = median_time(lambda snap=snap: scheduler.schedule(snap), args.runs)
            print(f"{n:>12} {t_snap * 1000:>7.1f}ms ({c_snap * 1000:>6.1f}ms) {t_sched * 1000:>7.1f}ms "
                  f"({c_sched * 1000:>6.1f}ms) {(t_snap + t_sched) * 1000:>8.1f}ms {len(plan.dispatches):>10} "
                  f"{len(snap.pending):>8}")
            if args.submit and not args.afresh:
                new_jobs(jobs, index, args.submit)
                with gc_paused():
                    t_snap, c_snap, snap = median_time(
                        lambda jobs=jobs, index=index: (new_jobs(jobs, index, args.submit), snapshot())[1], args.runs)
                    t_sched, c_sched, plan = median_time(lambda snap=snap: scheduler.schedule(snap), args.runs)
                print(f"{f'+{args.submit} new':>12} {t_snap * 1000:>7.1f}ms ({c_snap * 1000:>6.1f}ms) "
                      f"{t_sched * 1000:>7.1f}ms ({c_sched * 1000:>6.1f}ms) {(t_snap + t_sched) * 1000:>8.1f}ms "
                      f"{len(plan.dispatches):>10} {len(snap.pending):>8}")


def new_jobs(jobs: dict[int, Job], index: JobIndex, k: int) -> None:
    """``k`` more pending jobs, filed in the index as the qmaster files a submission."""
    number = max(jobs)
    for _ in range(k):
        number += 1
        jobs[number] = job = Job(number, f"p{number}", "alice", 1000, "users", 100, 1_700_000_010.0 + number,
                                 {"binary": True}, pending=[1])
        index.add(job)


if __name__ == "__main__":
    main()
