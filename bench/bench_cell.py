"""Speed of a running cell (issue: a running cell), beside the real Grid Engine.

Starts a private all-in-one cell in a temporary SGE_ROOT and prints medians:

- ``qsub`` wall time per call (a held ``-b y /bin/true``, so nothing runs),
  and ``qstat`` wall time with no jobs; with ``--peer`` the same for the real
  Grid Engine's C binaries in the same go (as the user ``sgetest``, pair by pair);
- dispatch latency on an idle cell: from the start of ``qsub`` to the job's
  first instruction (the job writes the clock);
- end to end throughput: N ``/bin/true`` jobs from a loop of ``qsub`` calls,
  and as one array, from the first submit to the last accounting record;
- the daemon's memory (RSS) idle and with 10,000 pending jobs (submitted over
  one connection, one after the other), then 2,000 more with 64 in flight;
- with ``--spooled N`` (e.g. 100000): the daemon's memory and ``qstat``'s
  time with N pending jobs, written into the stopped cell's spool as the
  qmaster writes them (copies of the spool file of one held job that a real
  ``qsub -h -b y /bin/true`` submitted, under new numbers), then loaded by the
  daemon at its start, as after a restart (``--only-spooled``: that alone).

    python bench/bench_cell.py [--jobs 1000] [--calls 30] [--peer] [--spooled 100000 [--only-spooled]]
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)


def cmd(name: str) -> str:
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: pip install . first")
    return path


def run(argv, env, user=None, input=None) -> tuple[float, subprocess.CompletedProcess]:
    pre = None
    if user is not None:
        pw = pwd.getpwnam(user)

        def pre():
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)

    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, text=True, preexec_fn=pre, input=input, cwd="/tmp")
    return time.perf_counter() - t0, p


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def size(path: str) -> int:
    """The accounting file's size now: where the records of what comes next begin."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


class AccountingTail:
    """The records appended to an accounting file from byte ``since`` on,
    counted as they come: each :meth:`count` reads only what was added
    since the one before (a poll that read the whole file again cost the
    machine being measured ~1 ms at 5,000 records, every 10 ms)."""

    def __init__(self, path: str, since: int = 0):
        self.path = path
        self.offset = since
        self.rest = b""  # a line not yet whole
        self.records = 0

    def count(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.records
        self.offset += len(data)
        *lines, self.rest = (self.rest + data).split(b"\n")
        self.records += sum(1 for ln in lines if ln and ln[:1] != b"#")
        return self.records


def wait_records(path: str, since: int, n: int, timeout: float = 900, poll: float = 0.01) -> float:
    """When (perf_counter) the file held ``n`` records after byte ``since``."""
    tail = AccountingTail(path, since)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if tail.count() >= n:
            return time.perf_counter()
        time.sleep(poll)
    raise SystemExit(f"timed out waiting for {n} accounting records in {path}")


def spool_pending(env: dict, n: int) -> tuple[int, float]:
    """Stop the cell, copy the spool file of one held job a real qsub
    submitted until ``n`` jobs are pending, start the cell (it loads them):
    the daemon's pid and the seconds its start took."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from minisge.cell import Cell
    from minisge.qmaster.spool import QmasterSpool, job_relpath

    p = subprocess.run([cmd("qsub"), "-terse", "-h", "-b", "y", "/bin/true"], env=env, capture_output=True,
                       text=True, cwd="/tmp", check=True)
    first = int(p.stdout.strip().split(".")[0])
    subprocess.run([cmd("minisge"), "stop"], env=env, check=True, capture_output=True)
    spool = QmasterSpool(Cell(env["SGE_ROOT"], "default"))
    with open(os.path.join(spool.dir, job_relpath(first))) as f:
        template = json.load(f)
    template.pop("spool_seq", None)  # each write gets its own (minisge/qmaster/job_journal.py)
    have = sum(len(files) for _d, _s, files in os.walk(os.path.join(spool.dir, "jobs")))
    number = spool.read_jobseqnum()
    for _ in range(max(0, n - have)):
        number += 1
        spool.write_job(number, dict(template, number=number), sync=False)
    spool.write_jobseqnum(number)
    t0 = time.perf_counter()
    # minisge start waits while the daemon logs its progress reading the spool (Qmaster.load)
    subprocess.run([cmd("minisge"), "start", "--slots", "2"], env=env, capture_output=True)
    while run([cmd("qstat"), "-u", "nobody"], env)[1].returncode != 0:
        if time.perf_counter() - t0 > 1800:
            raise SystemExit("the daemon did not answer within 30 minutes of its start")
        time.sleep(0.5)
    took = time.perf_counter() - t0
    return int(open(os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.pid")).read()), took


def spooled_figures(env: dict, n: int, calls: int) -> None:
    pid, took = spool_pending(env, n)
    time.sleep(1.0)
    jobs = sum(len(files) for _d, _s, files in os.walk(
        os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "jobs")))
    ts = []
    for _ in range(calls):
        t, p = run([cmd("qstat")], env)
        assert p.returncode == 0, p.stderr
        ts.append(t)
    lines = p.stdout.count("\n") - 2
    print(f"spooled: {jobs} pending jobs loaded at the daemon's start in {took:.1f} s; daemon RSS "
          f"{rss_kb(pid) / 1024:.1f} MB; qstat ({lines} lines) median of {calls}: "
          f"{statistics.median(ts) * 1000:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--pending", type=int, default=10000)
    ap.add_argument("--peer", action="store_true", help="time the real Grid Engine's qsub/qstat too")
    ap.add_argument("--spooled", type=int, default=0, help="pending jobs spooled before a restart (e.g. 100000)")
    ap.add_argument("--only-spooled", action="store_true", help="only the --spooled figures")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="minisge-bench-")
    env = dict(os.environ, SGE_ROOT=os.path.join(tmp, "root"))
    for k in ("SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT"):
        env.pop(k, None)
    acct = os.path.join(env["SGE_ROOT"], "default", "common", "accounting")
    subprocess.run([cmd("minisge"), "start", "--slots", "2"], env=env, check=True, capture_output=True)
    pid = int(open(os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.pid")).read())
    genv = dict(os.environ, SGE_ROOT="/var/lib/gridengine", SGE_CELL="default")
    try:
        print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[0]}")
        if args.only_spooled:
            spooled_figures(env, args.spooled or 100000, 5)
            return
        time.sleep(0.5)
        idle_rss = rss_kb(pid)

        # --- qsub and qstat wall time, pair by pair with the peer
        ours_q, peer_q, ours_s, peer_s = [], [], [], []
        for _ in range(args.calls):
            t, p = run([cmd("qsub"), "-h", "-b", "y", "/bin/true"], env)
            assert p.returncode == 0, p.stderr
            ours_q.append(t)
            if args.peer:
                t, p = run(["/usr/lib/gridengine/qsub", "-h", "-b", "y", "/bin/true"], genv, user="sgetest")
                assert p.returncode == 0, p.stderr
                peer_q.append(t)
        subprocess.run([cmd("qdel"), "-u", "*"], env=env, capture_output=True)
        if args.peer:
            run(["/usr/lib/gridengine/qdel", "-u", "sgetest"], genv, user="sgetest")
        time.sleep(0.3)
        for _ in range(args.calls):
            t, p = run([cmd("qstat")], env)
            ours_s.append(t)
            if args.peer:
                t, p = run(["/usr/lib/gridengine/qstat"], genv, user="sgetest")
                peer_s.append(t)

        def ms(xs):
            return f"{statistics.median(xs) * 1000:7.1f} ms"

        def versus(ours: list[float], peer: list[float]) -> str:
            if not peer:
                return ""
            ratio = statistics.median(a / b for a, b in zip(ours, peer, strict=True))
            return f"   Grid Engine {ms(peer)}   ratio {ratio:.2f}"

        print(f"qsub -h -b y /bin/true, per call (median of {args.calls}): minisge {ms(ours_q)}"
              + versus(ours_q, peer_q))
        print(f"qstat, no jobs, per call:                     minisge {ms(ours_s)}" + versus(ours_s, peer_s))

        # --- the floor: a bare interpreter on this machine, in the same go
        bare = [run([sys.executable, "-I", "-S", "-c", "pass"], env)[0] for _ in range(args.calls)]
        site = [run([sys.executable, "-c", "pass"], env)[0] for _ in range(args.calls)]
        print(f"bare interpreter start (python -I -S -c pass / python -c pass): {ms(bare)} / {ms(site)}")
        # the commands import the standard library only: under a faster
        # interpreter (Debian's python3, from a plain, non-editable install)
        plain = os.path.join(tmp, "site")
        if os.path.exists("/usr/bin/python3") and subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", plain,
                 os.path.dirname(os.path.dirname(os.path.abspath(__file__)))], capture_output=True).returncode == 0:
            penv = dict(env, PYTHONPATH=plain)
            sysq = [run(["/usr/bin/python3", "-S", "-m", "minisge.cli.qsub", "-h", "-b", "y", "/bin/true"], penv)
                    for _ in range(args.calls)]
            assert all(p.returncode == 0 for _, p in sysq), sysq[0][1].stderr
            sys_bare = [run(["/usr/bin/python3", "-I", "-S", "-c", "pass"], env)[0] for _ in range(args.calls)]
            subprocess.run([cmd("qdel"), "-u", "*"], env=env, capture_output=True)
            print(f"qsub under /usr/bin/python3 -S (plain install): {ms([t for t, _ in sysq])}"
                  f"   (that interpreter bare: {ms(sys_bare)})")
        frozen = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "dist", "minisge", "minisge")
        if os.path.exists(frozen):
            fz = [run([frozen, "qsub", "-h", "-b", "y", "/bin/true"], env)[0] for _ in range(args.calls)]
            subprocess.run([cmd("qdel"), "-u", "*"], env=env, capture_output=True)
            print(f"qsub through the single binary (dist/minisge/minisge qsub):  {ms(fz)}")

        # --- dispatch latency
        lat, lat_after = [], []
        for i in range(10):
            out = os.path.join(tmp, f"lat{i}")
            t0 = time.time()
            run([cmd("qsub"), "-b", "y", "-o", out, "-j", "y", "/bin/sh", "-c", "'date +%s.%N'"], env)
            t1 = time.time()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if os.path.exists(out) and os.path.getsize(out) > 0:
                    break
                time.sleep(0.002)
            started = float(open(out).read().strip())
            lat.append(started - t0)
            lat_after.append(started - t1)
        print(f"dispatch latency (median of 10): qsub start to job start {statistics.median(lat) * 1000:.0f} ms, "
              f"qsub's exit to job start {statistics.median(lat_after) * 1000:.0f} ms "
              f"(max {max(lat_after) * 1000:.0f} ms)")

        # --- throughput: a qsub loop, then one array
        since = size(acct)
        t0 = time.perf_counter()
        for _ in range(args.jobs):
            subprocess.run([cmd("qsub"), "-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true"], env=env,
                           capture_output=True, cwd="/tmp")
        t_sub = time.perf_counter() - t0
        t1 = wait_records(acct, since, args.jobs)
        print(f"{args.jobs} /bin/true jobs from a qsub loop: submitted in {t_sub:.1f} s, "
              f"all accounted after {t1 - t0:.1f} s ({args.jobs / (t1 - t0):.1f} jobs/s)")
        since = size(acct)
        t0 = time.perf_counter()
        subprocess.run([cmd("qsub"), "-t", f"1-{args.jobs}", "-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true"],
                       env=env, check=True, capture_output=True, cwd="/tmp")
        t1 = wait_records(acct, since, args.jobs)
        print(f"{args.jobs}-task array of /bin/true: all accounted after {t1 - t0:.1f} s "
              f"({args.jobs / (t1 - t0):.1f} tasks/s)")

        # --- memory with many pending jobs (sent as qsub sends them, over one connection)
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from minisge import protocol

        sock = protocol.connect_unix(os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.sock"))
        req = {"job_name": "pend", "binary": True, "command": "/bin/true", "args": [], "hold": True, "cwd": "/tmp"}
        t0 = time.perf_counter()
        for _ in range(args.pending):
            r = protocol.request(sock, {"op": "submit", "request": req})
            assert r["ok"], r
        t_pend = time.perf_counter() - t0
        time.sleep(0.5)
        print(f"daemon RSS: idle {idle_rss / 1024:.1f} MB, with {args.pending} pending jobs "
              f"{rss_kb(pid) / 1024:.1f} MB "
              f"(submitted over one connection in {t_pend:.1f} s, {args.pending / t_pend:.0f}/s)")
        ts = [run([cmd("qstat")], env)[0] for _ in range(5)]
        print(f"qstat with {args.pending} pending jobs (median of 5): {statistics.median(ts) * 1000:.0f} ms")
        # the same submissions sent ahead of their replies (throughput.py's pipelined figure):
        # those in flight share a sync, each still on disk before its reply
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from throughput import submit_pipelined

        n = max(1, args.pending // 5)
        t0 = time.perf_counter()
        submit_pipelined(os.path.join(env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.sock"), n, req)
        t_pipe = time.perf_counter() - t0
        print(f"{n} more submitted over one connection, 64 in flight: {t_pipe:.2f} s, {n / t_pipe:.0f}/s")
        if args.spooled:
            spooled_figures(env, args.spooled, 5)
    finally:
        subprocess.run([cmd("minisge"), "stop"], env=env, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
