"""How a cell copes with one user sending big frames on the qmaster's Unix socket.

Starts an all-in-one cell in a temporary SGE_ROOT, then a test user (forked
child, its own uid: the daemon sees it through SO_PEERCRED) sends ``--frames``
submissions each with a script of ``--size`` MiB, all at once, on separate
connections, slowly if ``--rate`` is given; meanwhile root runs ``qstat``
over and over.  Prints the slowest and the median ``qstat`` time, the
daemon's peak resident memory (VmHWM) and what each big submission got.

    .venv/bin/python bench/big_frame.py --size 64 --frames 1
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))

from cellutil import Cell, ensure_user

USER = "msgeuser1"


def vm_hwm(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return -1


def big_submit(c: Cell, size_mib: int) -> bytes:
    script = ("echo " + "x" * 70 + "\n") * (size_mib * 1024 * 1024 // 76)
    req = {"op": "submit", "request": {"job_name": "big", "command": "big.sh", "script": script, "cwd": c.work}}
    payload = json.dumps(req, separators=(",", ":")).encode()
    return struct.pack(">4sBI", b"MSGE", 1, len(payload)) + payload


def send_as_user(c: Cell, frame: bytes, frames: int, out: list) -> int:
    """Fork a child that is USER and sends ``frame`` on ``frames`` connections at once."""
    pw = pwd.getpwnam(USER)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            results = []
            threads = []

            def one() -> None:
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(300)
                try:
                    s.connect(os.path.join(c.root, "default", "spool", "qmaster", "qmaster.sock"))
                    s.sendall(frame)
                    s.shutdown(socket.SHUT_WR)
                    got = s.recv(4096)
                    results.append(got[9:200].decode(errors="replace") if got else "closed")
                except OSError as e:
                    results.append(f"{type(e).__name__}: {e}")
                finally:
                    s.close()

            for _ in range(frames):
                t = threading.Thread(target=one)
                t.start()
                threads.append(t)
            for t in threads:
                t.join()
            os.write(w, json.dumps(results).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    out.extend(json.loads(data or b"[]"))
    return pid


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=64, help="MiB of script per frame")
    ap.add_argument("--frames", type=int, default=1)
    args = ap.parse_args()
    ensure_user(USER)
    c = Cell().start()
    try:
        pid = c.daemon_pid()
        sock = os.path.join(c.qmaster_spool, "qmaster.sock")
        print(f"daemon pid {pid}, socket {sock}, VmHWM before {vm_hwm(pid)} MiB")
        frame = big_submit(c, args.size)
        results: list = []
        sender = threading.Thread(target=send_as_user, args=(c, frame, args.frames, results))
        times = []
        t0 = time.monotonic()
        sender.start()
        while sender.is_alive() or len(times) < 5:
            s = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "minisge.cli.qstat", "-u", "*"], env=c.env(),
                               capture_output=True, text=True, timeout=600)
            times.append(time.monotonic() - s)
            if r.returncode != 0:
                print("qstat failed:", r.stderr.strip())
        sender.join()
        print(f"big frames: {args.frames} x {len(frame) / 2**20:.1f} MiB, sent in {time.monotonic() - t0:.1f} s")
        print(f"qstat x{len(times)}: median {statistics.median(times):.2f} s, max {max(times):.2f} s")
        print(f"daemon VmHWM after {vm_hwm(pid)} MiB")
        for res in sorted(set(results)):
            print(f"  {results.count(res)} x reply: {res[:160]!r}")
    finally:
        c.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
