"""Throughput of a cell, in the style of Flux's ``throughput.py``: submit N
``/bin/true`` jobs as fast as possible and report the submit rate and the
end-to-end throughput (first submit to last accounting record) apart.

Starts a private all-in-one cell in a temporary SGE_ROOT (as bench_cell.py)
and runs each scenario ``--runs`` times, printing medians (and the spread):

- ``one connection``: N held jobs submitted as qsub submits them, over one
  Unix connection, one request after the other (the figure of bench_cell.py's
  "submitted over one connection"), then pipelined: up to ``--window``
  requests sent ahead of their replies; with ``--backlog B`` after B held
  jobs were submitted (``--backlog-pending``: B pending jobs, not held, in a
  disabled all.q: each submission then wakes a pass over them), with the
  daemon's CPU time per request;
- ``connections``: M processes, each with its own connection, each
  submitting N/M held jobs: what the group commit gives to concurrent clients;
- ``qsub clients``: M processes each running a loop of K ``qsub -h -b y
  /bin/true`` commands (50 × 200 in the issue), all accepted; with
  ``--peer`` the same with the real Grid Engine's qsub as user sgetest;
- ``array``: one ``qsub -t 1-N`` of ``/bin/true``, submit to the last
  accounting record; with ``--peer`` the real Grid Engine's too (its own
  accounting file), with ``--peer-array`` tasks (it runs about two a second);
- ``jobs``: N ``/bin/true`` jobs submitted over M connections (not held),
  submit rate and submit to the last accounting record.

Every job is on disk (fsynced, with its directory entry) before its "yes".

    python bench/throughput.py [--jobs 2000] [--clients 50] [--per-client 20] [--runs 3] [--peer]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_cell import size, wait_records  # the accounting file, counted as bench_cell counts it

from minisge import protocol
from minisge.formats import submit_options

BIN = os.path.dirname(sys.executable)
PEER_ENV = dict(os.environ, SGE_ROOT="/var/lib/gridengine", SGE_CELL="default")
PEER_BIN = "/usr/lib/gridengine"
PEER_ACCOUNTING = "/var/lib/gridengine/default/common/accounting"
HELD = {"job_name": "tp", "binary": True, "command": "/bin/true", "args": [], "hold": True, "cwd": "/tmp"}
#: qsub -b y -o /dev/null -j y /bin/true, as qsub sends it
RUNNING = submit_options.parse_submission(["-b", "y", "-o", "/dev/null", "-j", "y", "/bin/true"], cwd="/tmp",
                                          env={}, home="/tmp", user=pwd.getpwuid(os.getuid()).pw_name,
                                          hostname=os.uname().nodename.split(".")[0])
for _k in ("sync", "sync_start", "terse", "warnings", "verify"):
    RUNNING.pop(_k, None)


def cmd(name: str) -> str:
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        raise SystemExit(f"{path} not found: pip install . first")
    return path


def submit_over_connection(sock_path: str, n: int, req: dict) -> None:
    """``n`` submissions over one connection, one after the other."""
    sock = protocol.connect_unix(sock_path)
    try:
        for _ in range(n):
            r = protocol.request(sock, {"op": "submit", "request": req})
            assert r["ok"], r
    finally:
        sock.close()


def submit_pipelined(sock_path: str, n: int, req: dict, window: int = 64) -> None:
    """``n`` submissions over one connection, up to ``window`` sent ahead of
    their replies (the daemon syncs those in flight together)."""
    sock = protocol.connect_unix(sock_path)
    msg = {"op": "submit", "request": req}
    sent = got = 0
    try:
        while got < n:
            while sent < n and sent - got < window:
                protocol.send(sock, msg)
                sent += 1
            r = protocol.recv(sock)
            assert r["ok"], r
            got += 1
    finally:
        sock.close()


def in_processes(target, args_list) -> float:
    """Run ``target(*args)`` for each of ``args_list`` in its own process,
    all started together; the wall time until the last is done."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=target, args=a) for a in args_list]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    return time.perf_counter() - t0


def qsub_loop(argv: list[str], env: dict, k: int, user: str | None) -> None:
    if user is not None:
        pw = pwd.getpwnam(user)
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    for _ in range(k):
        p = subprocess.run(argv, env=env, capture_output=True, cwd="/tmp")
        if p.returncode != 0:
            sys.stderr.write(p.stderr.decode())
            os._exit(1)


def med(xs: list[float]) -> str:
    if len(xs) == 1:
        return f"{xs[0]:8.0f}/s"
    return f"{statistics.median(xs):8.0f}/s (min {min(xs):.0f}, max {max(xs):.0f})"


class MiniCell:
    """A private all-in-one cell."""

    def __init__(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="minisge-throughput-")
        self.env = dict(os.environ, SGE_ROOT=os.path.join(self.tmp, "root"))
        for k in ("SGE_CELL", "SGE_QMASTER_PORT", "SGE_EXECD_PORT"):
            self.env.pop(k, None)
        # the machine's load (its other work, the benchmark's own clients) must not put all.q
        # (np_load_avg=1.75) in alarm: that would measure the load threshold, not the cell
        self.env.setdefault("MINISGE_LOAD_OVERRIDE", "np_load_avg=0.000000")
        self.accounting = os.path.join(self.env["SGE_ROOT"], "default", "common", "accounting")
        self.socket = os.path.join(self.env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.sock")

    def start(self, slots: int) -> None:
        subprocess.run([cmd("minisge"), "start", "--slots", str(slots)], env=self.env, check=True,
                       capture_output=True)

    def daemon_cpu(self) -> float:
        """The daemon's CPU time so far (user and system), in seconds."""
        with open(os.path.join(self.env["SGE_ROOT"], "default", "spool", "qmaster", "qmaster.pid")) as f:
            pid = int(f.read())
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def qdel_all(self) -> None:
        subprocess.run([cmd("qdel"), "-u", "*"], env=self.env, capture_output=True)

    def stop(self) -> None:
        subprocess.run([cmd("minisge"), "stop"], env=self.env, capture_output=True)
        try:  # the daemon's last word on its group commit (spool.py:GroupCommit)
            with open(os.path.join(self.env["SGE_ROOT"], "default", "spool", "qmaster", "messages")) as f:
                shared = [ln.split("spool group commit: ", 1)[1].split() for ln in f if "spool group commit: " in ln]
        except OSError:
            shared = []
        if shared:
            units, syncs = int(shared[-1][0]), int(shared[-1][3])
            print(f"group commit over the whole run: {units} requests in {syncs} syncs, "
                  f"{units / max(1, syncs):.1f} a sync")
        shutil.rmtree(self.tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2000, help="jobs per scenario (N)")
    ap.add_argument("--clients", type=int, default=50, help="concurrent clients (M)")
    ap.add_argument("--per-client", type=int, default=20, help="qsub calls per client (K)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--window", type=int, default=64, help="submissions in flight over the pipelined connection")
    ap.add_argument("--slots", type=int, default=4, help="slots of the cell's one host")
    ap.add_argument("--backlog", type=int, default=0, help="held jobs in the cell before the one-connection runs")
    ap.add_argument("--backlog-pending", action="store_true",
                    help="the backlog pending in a disabled all.q instead of held")
    ap.add_argument("--only", default="", help="comma separated scenarios: one,connections,qsub,array,jobs")
    ap.add_argument("--peer", action="store_true", help="the real Grid Engine too, where it applies")
    ap.add_argument("--peer-array", type=int, default=20, help="tasks of the real Grid Engine's array")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(","))) or {"one", "connections", "qsub", "array", "jobs"}

    cell = MiniCell()
    cell.start(args.slots)
    try:
        print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[0]}; "
              f"N={args.jobs}, M={args.clients}, K={args.per_client}, {args.runs} runs, medians")
        if "one" in only:
            rates, cpus = [], []
            req = HELD
            if args.backlog:  # kept between the runs (the cell grows by N a run), deleted after them
                if args.backlog_pending:
                    subprocess.run([cmd("qmod"), "-d", "all.q"], env=cell.env, check=True, capture_output=True)
                    req = {k: v for k, v in HELD.items() if k != "hold"}
                submit_pipelined(cell.socket, args.backlog, req, args.window)
            for _ in range(args.runs):
                c0 = cell.daemon_cpu()
                t0 = time.perf_counter()
                submit_over_connection(cell.socket, args.jobs, req)
                rates.append(args.jobs / (time.perf_counter() - t0))
                cpus.append((cell.daemon_cpu() - c0) / args.jobs * 1000)
                if not args.backlog:
                    cell.qdel_all()
            if args.backlog:
                cell.qdel_all()
                subprocess.run([cmd("qmod"), "-e", "all.q"], env=cell.env, capture_output=True)
            kind = f"after {args.backlog} {'pending' if args.backlog_pending else 'held'}, " if args.backlog else ""
            print(f"one connection, {args.jobs} {'pending' if req is not HELD else 'held'} jobs, {kind}"
                  f"one after the other: {med(rates)}, daemon CPU {statistics.median(cpus):.2f} ms each")
            rates = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                submit_pipelined(cell.socket, args.jobs, HELD, args.window)
                rates.append(args.jobs / (time.perf_counter() - t0))
                cell.qdel_all()
            print(f"one connection, {args.jobs} held jobs, {args.window} in flight:   {med(rates)}")
        if "connections" in only:
            rates = []
            per = max(1, args.jobs // args.clients)
            for _ in range(args.runs):
                t = in_processes(submit_over_connection, [(cell.socket, per, HELD)] * args.clients)
                rates.append(per * args.clients / t)
                cell.qdel_all()
            print(f"{args.clients} connections × {per} held jobs:           {med(rates)}")
        if "qsub" in only:
            argv = [cmd("qsub"), "-h", "-b", "y", "/bin/true"]
            pargv = [f"{PEER_BIN}/qsub", "-h", "-b", "y", "/bin/true"]
            n = args.clients * args.per_client
            ours, peer = [], []
            for _ in range(args.runs):
                ours.append(n / in_processes(qsub_loop, [(argv, cell.env, args.per_client, None)] * args.clients))
                cell.qdel_all()
                if args.peer:
                    peer.append(n / in_processes(qsub_loop,
                                                 [(pargv, PEER_ENV, args.per_client, "sgetest")] * args.clients))
                    subprocess.run([f"{PEER_BIN}/qdel", "-u", "sgetest"], env=PEER_ENV, capture_output=True)
            print(f"{args.clients} clients × {args.per_client} qsub -h (all accepted): minisge {med(ours)}"
                  + (f"   Grid Engine {med(peer)}" if peer else ""))
        if "array" in only:
            rates = []
            for _ in range(args.runs):
                since = size(cell.accounting)
                t0 = time.perf_counter()
                subprocess.run([cmd("qsub"), "-t", f"1-{args.jobs}", "-b", "y", "-o", "/dev/null", "-j", "y",
                                "/bin/true"], env=cell.env, check=True, capture_output=True, cwd="/tmp")
                rates.append(args.jobs / (wait_records(cell.accounting, since, args.jobs) - t0))
            line = f"{args.jobs}-task array of /bin/true, submit to last record: minisge {med(rates)}"
            if args.peer:
                since = size(PEER_ACCOUNTING)
                t0 = time.perf_counter()
                subprocess.run(["su", "sgetest", "-c", f"{PEER_BIN}/qsub -t 1-{args.peer_array} -b y -o /dev/null "
                                "-j y /bin/true"], env=PEER_ENV, check=True, capture_output=True, cwd="/tmp")
                t1 = wait_records(PEER_ACCOUNTING, since, args.peer_array)
                line += f"   Grid Engine ({args.peer_array} tasks, one run) {args.peer_array / (t1 - t0):.1f}/s"
            print(line)
        if "jobs" in only:
            subs, ends = [], []
            per = max(1, args.jobs // args.clients)
            for _ in range(args.runs):
                since = size(cell.accounting)
                t0 = time.perf_counter()
                t = in_processes(submit_over_connection, [(cell.socket, per, RUNNING)] * args.clients)
                subs.append(per * args.clients / t)
                ends.append(per * args.clients / (wait_records(cell.accounting, since, per * args.clients) - t0))
            print(f"{per * args.clients} /bin/true jobs over {args.clients} connections: submitted {med(subs)}, "
                  f"submit to last record {med(ends)}")
    finally:
        cell.stop()


if __name__ == "__main__":
    main()
