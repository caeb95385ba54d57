"""Where one task's cycle goes on a running cell: the chain of a slot from
one task's end to its next task's start, and the task's own life.

Runs ``bench/bench_array.py --cell`` (one array of ``--tasks`` ``/bin/true``
tasks on ``--slots`` slots) with the all-in-one daemon's per-task steps
timed: a ``sitecustomize`` module in a temporary directory, put on the
daemon's PYTHONPATH, wraps these methods of the daemon (in its process, at
their first import; nothing of minisge is changed on disk) and writes each
call's clock (``time.perf_counter``) to a file when the daemon ends:

- ``Execd.start`` in and out (the task's directory, config and TMPDIR);
- ``LimitWatch.follow`` in and out: the shepherd spawned (the plan made and
  posix_spawn returned), then its end seen (its pidfd readable);
- ``Execd.report_end``: the end report sent;
- ``Qmaster.task_finished``: the end recorded;
- ``Qmaster.schedule`` in and out: a scheduling pass.

Printed, the median and mean of each step over the tasks (the first and last
100 left out): the task's life (shepherd spawned to its end seen: the
shepherd's start, the job, the shepherd's end), the execd's start, the
spawn, the end to its report, and the slot's way back: from a task's end seen
to the end recorded, to the next pass, through the pass, to the next task's
start; with the tasks per pass.  On ``--slots`` slots a slot's cycle is the
task's life plus that way back plus the start and the spawn, and the rate is
about ``slots`` over that cycle while the daemon's loop is not saturated.
Wall-clock figures: they move with the machine's load (the rate is printed
beside them); the wrappers themselves cost the daemon a few microseconds a
call.

Then the daemon's main thread's CPU per task, step by step
(``time.thread_time`` around each of :data:`CPU_STEPS` in the injected
module: the pass, the job files, the end recorded, the execd's start, the
spawn, the end read, the directory's and TMPDIR's recycling), and what the
steps leave of the main thread's CPU from the first start to the last end
recorded (the trio loop, the messages, each shepherd's watch, the
acknowledgements).  These are the costs in the running cell, where the
jobs and shepherds share the cores and their caches: two to three times
what the same calls cost in a loop of their own.

    python bench/bench_cycle.py [--tasks 2000] [--slots 2]
"""

from __future__ import annotations

import argparse
import bisect
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# Written as the daemon's sitecustomize: it waits for minisge's modules to
# be imported (a thread, as the daemon imports them after site.py), wraps
# the methods, and writes the clocks at exit (and after a fork: the daemon
# is started through one).
INJECTED = r'''
import atexit, os, sys, threading, time

EVENTS = []
OUT = os.environ["MINISGE_BENCH_CYCLE_OUT"]
CPU = {}  # step -> [calls, CPU seconds of the calling thread]
SPAN = []  # the main thread's CPU clock at the first task's start and at the last end recorded

# the daemon's steps whose CPU is summed (time.thread_time, the calling thread's own CPU,
# its system calls' included): (module, class or None, function, label)
CPU_STEPS = [
    ("minisge.qmaster.qmaster", "Qmaster", "schedule", "qmaster: the pass (Qmaster.schedule)"),
    ("minisge.qmaster.qmaster", "Qmaster", "flush", "qmaster: the job files (Qmaster.flush)"),
    ("minisge.qmaster.qmaster", "Qmaster", "task_finished", "qmaster: the end recorded (Qmaster.task_finished)"),
    ("minisge.execd.execd", "Execd", "start", "execd: directory, config, TMPDIR (Execd.start)"),
    ("minisge.execd.execd", "Execd", "spawn_c_shepherd", "execd: the plan and posix_spawn (spawn_c_shepherd)"),
    ("minisge.execd.execd", None, "end_report_written", "execd: the shepherd's files read (end_report_written)"),
    ("minisge.execd.execd", "Execd", "remove_dir", "execd: the directory out (Execd.remove_dir)"),
    ("minisge.execd.execd", None, "recycle_dirs", "execd: the directories recycled (recycle_dirs)"),
    ("minisge.execd.tmpdir", "SpareTmpdirs", "set_aside", "execd: the TMPDIR set aside (SpareTmpdirs.set_aside)"),
]


def _cpu_wrap(owner, name, label):
    f = getattr(owner, name, None)
    if f is None:  # a step an older minisge does not have (bench_cycle.py run with its interpreter)
        return
    acc = CPU.setdefault(label, [0, 0.0])

    def timed(*a, **k):
        t0 = time.thread_time()
        try:
            return f(*a, **k)
        finally:
            acc[0] += 1
            acc[1] += time.thread_time() - t0
    setattr(owner, name, timed)


def _cpu_wrap_module(mod_name):
    mod = sys.modules[mod_name]
    for m, cls, name, label in CPU_STEPS:
        if m == mod_name:
            _cpu_wrap(getattr(mod, cls) if cls else mod, name, label)


def _wrap_all():
    done = set()
    while len(done) < 4:
        time.sleep(0.002)
        try:
            tmp = sys.modules.get("minisge.execd.tmpdir")
            if tmp is not None and "tmpdir" not in done:
                tmp.SpareTmpdirs  # noqa: B018 - still being imported: AttributeError
                _cpu_wrap_module("minisge.execd.tmpdir")
                done.add("tmpdir")
            lw = sys.modules.get("minisge.execd.limit_watch")
            if lw is not None and "follow" not in done:
                cls = lw.LimitWatch
                follow = cls.follow

                async def traced_follow(self, task, what, reap, _f=follow):
                    EVENTS.append((time.perf_counter(), "spawned", what))
                    r = await _f(self, task, what, reap)
                    EVENTS.append((time.perf_counter(), "ended", what))
                    return r
                cls.follow = traced_follow
                done.add("follow")
            ex = sys.modules.get("minisge.execd.execd")
            if ex is not None and "execd" not in done:
                cls = ex.Execd
                ex.recycle_dirs  # noqa: B018 - the module's last names: AttributeError while it is imported
                _cpu_wrap_module("minisge.execd.execd")
                start, report_end = cls.start, cls.report_end

                def traced_start(self, msg, _f=start):
                    if not SPAN:
                        SPAN.append(time.thread_time())
                    key = f"job {msg['job_id']}.{msg['task_id']}"
                    EVENTS.append((time.perf_counter(), "start_in", key))
                    r = _f(self, msg)
                    EVENTS.append((time.perf_counter(), "start_out", key))
                    return r

                async def traced_report_end(self, key, report, _f=report_end):
                    EVENTS.append((time.perf_counter(), "reported", f"job {key[0]}.{key[1]}"))
                    return await _f(self, key, report)
                cls.start, cls.report_end = traced_start, traced_report_end
                done.add("execd")
            qm = sys.modules.get("minisge.qmaster.qmaster")
            if qm is not None and "qmaster" not in done:
                cls = qm.Qmaster
                _cpu_wrap_module("minisge.qmaster.qmaster")
                schedule, task_finished = cls.schedule, cls.task_finished

                def traced_schedule(self, _f=schedule):
                    EVENTS.append((time.perf_counter(), "pass_in", ""))
                    r = _f(self)
                    EVENTS.append((time.perf_counter(), "pass_out", ""))
                    return r

                def traced_task_finished(self, *a, _f=task_finished, **k):
                    EVENTS.append((time.perf_counter(), "recorded", ""))
                    try:
                        return _f(self, *a, **k)
                    finally:
                        del SPAN[1:]
                        SPAN.append(time.thread_time())
                cls.schedule, cls.task_finished = traced_schedule, traced_task_finished
                done.add("qmaster")
        except AttributeError:
            continue  # a module still being imported


def _dump():
    if EVENTS:
        with open(f"{OUT}/events.{os.getpid()}", "w") as f:
            f.writelines(f"{t:.6f} {kind} {what}\n" for t, kind, what in EVENTS)
        with open(f"{OUT}/cpu.{os.getpid()}", "w") as f:
            f.writelines(f"{calls}\t{spent:.6f}\t{label}\n" for label, (calls, spent) in CPU.items())
            if len(SPAN) == 2:
                f.write(f"0\t{SPAN[1] - SPAN[0]:.6f}\tthe main thread in all\n")


def _go():
    EVENTS.clear()
    CPU.clear()
    SPAN.clear()
    threading.Thread(target=_wrap_all, daemon=True).start()


if "minisge.daemon" in " ".join(getattr(sys, "orig_argv", sys.argv)):
    _go()
    os.register_at_fork(after_in_child=_go)
    atexit.register(_dump)
'''


def load(out: str) -> list[tuple[float, str, str]]:
    files = glob.glob(os.path.join(out, "events.*"))
    if not files:
        sys.exit("the daemon wrote no events (its sitecustomize was not loaded)")
    events = []
    with open(max(files, key=os.path.getsize)) as f:
        for line in f:
            t, kind, *what = line.split(" ", 2)
            events.append((float(t), kind, what[0].strip() if what else ""))
    events.sort()
    return events


def report(events: list[tuple[float, str, str]], skip: int = 100) -> None:
    tasks: dict[str, dict[str, float]] = {}
    for t, kind, what in events:
        if what:
            tasks.setdefault(what, {})[kind] = t
    order = sorted(tasks.values(), key=lambda d: d.get("start_in", 0.0))[skip:-skip or None]

    def line(name: str, values: list[float]) -> None:
        if values:
            print(f"  {name:<48} median {statistics.median(values) * 1e3:6.3f} ms   "
                  f"mean {statistics.mean(values) * 1e3:6.3f} ms")

    def span(a: str, b: str) -> list[float]:
        return [d[b] - d[a] for d in order if a in d and b in d]

    print("a task:")
    line("its life (shepherd spawned to its end seen)", span("spawned", "ended"))
    line("Execd.start (directory, config, TMPDIR)", span("start_in", "start_out"))
    line("its spawn (start's end to the shepherd spawned)", span("start_out", "spawned"))
    line("its end seen to its report sent", span("ended", "reported"))
    ends = [d["ended"] for d in order if "ended" in d]
    times = {kind: [t for t, k, _ in events if k == kind] for kind in ("recorded", "pass_in", "pass_out", "start_in")}

    def after(kind: str, t: float | None) -> float | None:
        if t is None:
            return None
        seq = times[kind]
        i = bisect.bisect_left(seq, t)
        return seq[i] if i < len(seq) else None

    legs: list[list[float]] = [[], [], [], [], []]
    for t in ends:
        rec = after("recorded", t)
        pin = after("pass_in", rec)
        pout = after("pass_out", pin)
        nxt = after("start_in", pout)
        if rec is None or pin is None or pout is None or nxt is None:
            continue
        for leg, v in zip(legs, (rec - t, pin - rec, pout - pin, nxt - pout, nxt - t), strict=True):
            leg.append(v)
    print("a slot's way back, from a task's end seen:")
    line("to the end recorded (Qmaster.task_finished)", legs[0])
    line("to the next pass's start", legs[1])
    line("the pass (Qmaster.schedule)", legs[2])
    line("to the next task's start (Execd.start)", legs[3])
    line("in all: a task's end seen to the next start", legs[4])
    passes = len(times["pass_in"])
    print(f"tasks per pass: {len(tasks) / max(1, passes):.2f} ({len(tasks)} tasks, {passes} passes)")


def report_cpu(out: str, tasks: int) -> None:
    """The daemon's main thread's CPU per task, step by step, and what the
    steps leave (the trio loop, the messages between qmaster and execd, the
    watch of each shepherd, the acknowledgements, the accounting syncer's turns)."""
    files = glob.glob(os.path.join(out, "cpu.*"))
    if not files:
        return
    steps: list[tuple[str, int, float]] = []
    whole = None
    with open(max(files, key=os.path.getsize)) as f:
        for line in f:
            calls, spent, label = line.rstrip("\n").split("\t", 2)
            if label == "the main thread in all":
                whole = float(spent)
            else:
                steps.append((label, int(calls), float(spent)))
    print("the daemon's main thread, CPU per task (time.thread_time: its system calls' included):")
    for label, calls, spent in steps:
        print(f"  {label:<58} {spent / tasks * 1e6:7.1f} us  ({calls / tasks:.2f} calls a task)")
    if whole is not None:
        rest = whole - sum(spent for _, _, spent in steps)
        print(f"  {'the rest (loop, messages, watches, acknowledgements)':<58} {rest / tasks * 1e6:7.1f} us")
        print(f"  {'in all, the first start to the last end recorded':<58} {whole / tasks * 1e6:7.1f} us")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=2000)
    p.add_argument("--slots", type=int, default=2)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="bench-cycle-")
    try:
        with open(os.path.join(work, "sitecustomize.py"), "w") as f:
            f.write(INJECTED)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [work, os.environ.get("PYTHONPATH")])),
                   MINISGE_BENCH_CYCLE_OUT=work)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        here = os.path.dirname(os.path.abspath(__file__))
        run = subprocess.run([sys.executable, os.path.join(here, "bench_array.py"), "--cell", "--runs", "1",
                              "--tasks", str(args.tasks), "--slots", str(args.slots)],
                             env=env, capture_output=True, text=True)
        if run.returncode:
            sys.exit(run.stdout + run.stderr)
        print(run.stdout.strip().splitlines()[-1].replace("median of 1: ", ""))
        report(load(work))
        report_cpu(work, args.tasks)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
