"""Capture what the real Grid Engine 8.1.9 prints for the conformance cases.

Run by hand, as root, where the peer runs (/work/shared/peers/sge-peer-setup.sh)::

    python tests/conformance/capture.py [--missing] [--until HH:MM] [NAME-PREFIX ...]

For each case (all, or those whose ``<command>/<name>`` starts with a given
prefix) it runs the setup and the command with 8.1.9's commands
(/usr/bin/<command>) as the case's user, in a fresh work directory, with the
fixed environment of case.ENV, and writes ``<name>.out`` and ``<name>.err``
beside the case: golden files whose header has the exact command line, the
user, the exit code and what the comparison must normalise (the peer's job
ids, host, work directory and SGE_ROOT).  Every job a case submits is deleted
at its end.  The peer is shared: a case marked ``quiet: yes`` is captured
only while the peer is calm (its scheduler runs, no other user's job runs, no
queue is in a load alarm), a case whose jobs must run only while jobs can
start; what the peer did not let through is tried again every 20 s until
``--until`` (today's HH:MM), and reported.  ``--missing``: only the cases
not captured yet.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import case as case_module
from case import ENV, USERS, Case, Result, accounting_records, all_cases, execd_spool_dir, execute, wait_until
from golden import write_golden

PEER_ROOT = "/var/lib/gridengine"
PEER_ACCOUNTING = os.path.join(PEER_ROOT, "default", "common", "accounting")
# what a calm peer never prints (a queue's load alarm shows only after a scheduling run)
UNCALM = re.compile(r"overloaded|\balarm\b|scheduler is not available")
BIN = "/usr/bin"


class Peer:
    """The real 8.1.9: its commands in /usr/bin, its users real Unix users."""

    def __init__(self) -> None:
        self.host = socket.gethostname().split(".")[0]
        self.root = PEER_ROOT
        self.dirs: list[str] = []
        self.execd_spool = execd_spool_dir(self.run("root", ["qconf", "-sconf"], "/").out)

    def env(self, user: str) -> dict[str, str]:
        home = pwd.getpwnam(user).pw_dir
        return dict(ENV, HOME=home, USER=user, LOGNAME=user)

    def run(self, user: str, argv: list[str], cwd: str) -> Result:
        cmd = [os.path.join(BIN, argv[0]), *argv[1:]]
        if user == "root":
            p = subprocess.run(cmd, env=self.env(user), cwd=cwd, capture_output=True, timeout=300)
        else:
            pw = pwd.getpwnam(user)
            p = subprocess.run(cmd, env=self.env(user), cwd=cwd, capture_output=True, timeout=300,
                               user=pw.pw_uid, group=pw.pw_gid, extra_groups=[])
        return Result(p.returncode, p.stdout.decode(errors="surrogateescape"),
                      p.stderr.decode(errors="surrogateescape"))

    def workdir(self, user: str) -> str:
        d = tempfile.mkdtemp(prefix="conformance-")
        pw = pwd.getpwnam(user)
        os.chown(d, pw.pw_uid, pw.pw_gid)
        os.chmod(d, 0o755)  # the setup of another user of the case runs there too
        self.dirs.append(d)
        return d

    def job_states(self) -> dict[int, str]:
        r = self.run("root", ["qstat", "-u", "*"], "/")
        states: dict[int, str] = {}
        for line in r.out.splitlines()[2:]:
            parts = line.split()
            states.setdefault(int(parts[0]), parts[4])
        return states

    def foreign_running(self, mine: set[int]) -> set[int]:
        # running, transferring, suspended: anything but a waiting job ("qw", "hqw", "Eqw")
        return {j for j, s in self.job_states().items() if j not in mine and "q" not in s}

    def alarmed(self) -> bool:
        """Whether a queue instance is in a load or suspend alarm (state a or A)."""
        r = self.run("root", ["qstat", "-f", "-u", "nobody"], "/")
        for line in r.out.splitlines():
            f = line.split()
            if len(f) >= 6 and "@" in f[0] and set(f[5]) & set("aA"):
                return True
        return False

    def scheduling(self) -> bool:
        return self.run("root", ["qconf", "-sss"], "/").rc == 0

    def dispatching(self) -> bool:
        """The scheduler runs and no queue is in alarm: a job of a case can start."""
        return self.scheduling() and not self.alarmed()

    def calm(self, mine: set[int]) -> bool:
        """The scheduler runs, no other user's job runs and no queue is in
        alarm: what a cell-wide view shows is the case's."""
        return self.dispatching() and not self.foreign_running(mine)

    def delete_leftovers(self) -> None:
        """Jobs of the suite's users that an interrupted capture left behind."""
        if self.run("root", ["qdel", "-u", ",".join(USERS)], "/").rc == 0:
            wait_until(lambda: not self.run("root", ["qstat", "-u", ",".join(USERS)], "/").out, "leftover jobs gone")

    def in_accounting(self, job_id: int, since: int) -> bool:
        # the file, not qacct -j: 8.1.9's job numbers start again after a new install
        return any(int(r[8]) >= since for r in accounting_records(PEER_ACCOUNTING, job_id))

    def cleanup(self) -> None:
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def capture(case: Case, peer: Peer) -> bool:
    """Capture ``case`` if the peer lets it now; whether it was captured."""
    peer.delete_leftovers()
    ready = {"yes": lambda: peer.calm(set()), "jobs": lambda: peer.scheduling() and not peer.foreign_running(set()),
             "": lambda: peer.dispatching() if case.waits else True}[case.quiet]()
    if not ready:
        print(f"  {case.name}: the peer is not calm now, later", flush=True)
        return False
    try:
        o = execute(case, peer)
    except AssertionError as e:
        print(f"  {case.name}: {e}, later", flush=True)
        return False
    if case.quiet == "yes" and (not peer.calm(set(o.jobs)) or UNCALM.search(o.out + o.err)) or \
            case.quiet == "jobs" and peer.foreign_running(set(o.jobs)):
        print(f"  {case.name}: another job ran or a load alarm came meanwhile, later", flush=True)
        return False
    fields = {"jobs": " ".join(map(str, o.jobs)), "host": peer.host, "cwd": o.cwd, "root": peer.root,
              "execd_spool": peer.execd_spool}
    write_golden(case.expected("peer", "out"), o.command, o.user, o.rc, o.out, fields)
    write_golden(case.expected("peer", "err"), o.command, o.user, o.rc, o.err, fields)
    print(f"{case.name}: exit {o.rc}, {len(o.out.splitlines())} + {len(o.err.splitlines())} lines", flush=True)
    return True


def main(argv: list[str]) -> int:
    if os.getuid() != 0:
        print("capture.py runs as root (it runs the cases as their users)", file=sys.stderr)
        return 1
    missing = "--missing" in argv
    until = time.time()
    if "--until" in argv:  # --until HH:MM: try again what the busy peer did not let through, until then
        hh, mm = argv[argv.index("--until") + 1].split(":")
        now = time.localtime()
        until = time.mktime((*now[:3], int(hh), int(mm), 0, *now[6:]))
        argv = argv[: argv.index("--until")] + argv[argv.index("--until") + 2:]
    prefixes = [a for a in argv if not a.startswith("--")]
    for user in USERS:
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", user], check=True)
    case_module.WAIT = 300.0  # the peer is shared: a running job may wait for a free slot
    cases = [c for c in all_cases() if not prefixes or any(c.name.startswith(p) for p in prefixes)]
    if missing:
        cases = [c for c in cases if not os.path.exists(c.expected("peer", "out"))]
    # the cases that need no job to run first: the shared peer's slots may be busy for a while
    cases.sort(key=lambda c: (bool(c.waits), bool(c.quiet)))
    peer = Peer()
    try:
        while True:
            cases = [c for c in cases if not capture(c, peer)]
            if not cases or time.time() >= until:
                break
            time.sleep(20)
    finally:
        peer.cleanup()
    for c in cases:
        print(f"{c.name}: NOT captured", flush=True)
    return 1 if cases else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
