"""The soak: a mixed workload on a real cell whose daemons are killed with
SIGKILL at random moments, then a count of what became of every job.

Starts a cell in a temporary SGE_ROOT, either the all-in-one daemon
(``minisge start``, mode ``allinone``) or the separate roles (``minisge
qmaster`` and two ``minisge execd --hostname nodeN`` over TCP, mode
``roles``), and for ``--duration`` seconds submits, as root and as a test
user: single jobs, arrays (``-t 1-N``, some with ``-tc``), PE jobs (``-pe
smp 2``), held jobs released later (``-h``, ``qrls``), ``-hold_jid``
chains, jobs deleted while pending and while running; the jobs sleep a
little and exit 0, 1, 99 (once: re-run) or 100 (once: error state, cleared
with ``qmod -cj``).  Meanwhile it kills a daemon (the all-in-one daemon; in
roles mode the qmaster half the time, else one execd) with SIGKILL every
``--kill-interval`` seconds, half the time at a quiet moment and half while
that step's commands are in flight, and restarts it after a ``--down``
delay; shepherds and jobs outlive the kills.  A command that got no answer
is judged by what followed (a qsub's job is found by its unique name).

Every job appends ``JOB.TASK start NAME RESTARTED TIME`` and ``JOB.TASK end
CODE TIME`` to ``evidence/evidence.log``, so a run is seen even when
accounting is wrong.  At the end the soak waits until the cell is idle and
checks, from qsub's replies, qstat, the accounting file and that log:

- every task not deleted ran to an end with exactly one accounting record
  per run, runs counted by the failed codes (25 after exit 99, 30 after exit
  100 and qmod -cj), with the expected exit statuses: none lost, none twice;
- a deleted task has the records of the runs it had (none when deleted
  while pending), the last possibly its kill (failed 100);
- job ids are gap-free and never reused (names match ids everywhere);
- a held job did not start before its qrls, a -hold_jid successor not before
  its predecessor's end, an array never ran more tasks at once than its -tc;
- no daemon exited but by a kill, no daemon log holds a traceback or an
  ERROR line, no command printed a traceback;
- no task directory or TMPDIR is left once the cell is idle.

It prints the figures and every violation, and exits 1 on any (the cell's
directory is then kept).  The choice of actions (workload, kill targets,
in-flight or not, delays) is a function of ``--seed``; when they happen is
the clock's, so a seed is a lead, and ``actions.log`` (every command, its
answer, every kill and restart, with times) is the record to reproduce from.

    python bench/soak.py [--mode allinone|roles] [--duration 60] [--kills 20]
                         [--kill-interval 1.5,3.5] [--down 0.2,1.5] [--seed 1] [--keep]

Run as root (jobs of a test user run as that user).  Figures for today's
code: see the report of branch rel-soak.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))

from cellutil import Cell, ensure_user, kill_cell_processes, run_as

from minisge import cell as cell_paths
from minisge import protocol
from minisge.formats import accounting

TEST_USER = "msgeuser1"

JOB_SCRIPT = """#!/bin/sh
# soak job: sleep $1 seconds, then exit $2; "99once"/"100once" exit 99/100 on the first run only
t=$SGE_TASK_ID
[ "$t" = undefined ] && t=0
echo "$JOB_ID.$t start $JOB_NAME $RESTARTED $(date +%s.%N)" >> "$SOAK_DIR/evidence.log"
sleep "$1"
code=$2
case $code in
  *once)
    m="$SOAK_DIR/once/$JOB_ID.$t"
    if [ -e "$m" ]; then code=0; else : > "$m"; code=${code%once}; fi ;;
esac
echo "$JOB_ID.$t end $code $(date +%s.%N)" >> "$SOAK_DIR/evidence.log"
exit $code
"""

KILLED = (100, 137)  # qdel of a running job: failed 100 "assumedly after job", exit 128+SIGKILL
# the last line of a traceback: the exception
ERROR_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|ExceptionGroup|Interrupt|Exit)(: |$)")


@dataclass
class Submission:
    seq: int
    name: str
    user: str
    kind: str  # single, array, pe, held, chain, del_pending, del_running
    exit: str  # "0", "1", "99once", "100once"
    sleep: float
    ntasks: int = 0  # 0: no array
    tc: int | None = None
    held: bool = False
    hold_jid: list[int] = field(default_factory=list)
    job_id: int | None = None
    answer: str = ""  # "ok", "refused" (cell down: not submitted), "unknown" (no answer)
    deleted: str | None = None  # "pending", "running", "uncertain"
    released: bool = False
    release_uncertain: bool = False  # a qrls got no answer: it may have gone through
    delete_answered: bool = False  # a qdel got an answer (the job is deleted, or gone)
    cleared: int = 0  # qmod -cj given

    @property
    def tasks(self) -> list[int]:
        return list(range(1, self.ntasks + 1)) if self.ntasks else [0]

    def expected(self) -> list[tuple[int, int]]:
        """(failed, exit_status) of each accounting record of one task left alone."""
        if self.exit == "99once":
            return [(25, 99), (0, 0)]
        if self.exit == "100once":
            return [(30, 100), (0, 0)]
        return [(0, int(self.exit))]


@dataclass
class Daemon:
    name: str  # "daemon" (all-in-one), "qmaster", "node1", "node2"
    proc: object = None  # the Popen of a role; None for the all-in-one daemon (detached by minisge start)
    pid: int | None = None
    down_until: float | None = None  # killed; restart due then
    fired: float | None = None  # when the SIGKILL went (soak time), until it is noted
    failed_restarts: int = 0


class Soak:
    def __init__(self, args):
        self.args = args
        self.work_rng = random.Random(f"work-{args.seed}")
        self.kill_rng = random.Random(f"kill-{args.seed}")
        self.cell = Cell(host="soakhost", slots=args.slots)
        self.dir = self.cell.dir
        self.evidence_dir = os.path.join(self.dir, "evidence")
        os.makedirs(os.path.join(self.evidence_dir, "once"))
        for d in (self.evidence_dir, os.path.join(self.evidence_dir, "once")):
            os.chmod(d, 0o777)
        self.evidence_file = os.path.join(self.evidence_dir, "evidence.log")
        with open(self.evidence_file, "w"):
            pass
        os.chmod(self.evidence_file, 0o666)  # every job appends to it, root's and the test user's
        self.tmpdir = os.path.join(self.dir, "tmp")
        os.makedirs(self.tmpdir)
        os.chmod(self.tmpdir, 0o755)
        self.script = os.path.join(self.cell.work, "soakjob.sh")
        with open(self.script, "w") as f:
            f.write(JOB_SCRIPT)
        os.chmod(self.script, 0o755)
        self.log = open(os.path.join(self.dir, "actions.log"), "w", buffering=1)
        self.subs: list[Submission] = []
        self.by_id: dict[int, Submission] = {}
        self.by_name: dict[str, Submission] = {}
        self.deferred: list[tuple[int, str, Submission]] = []  # (due step, action, submission)
        self.daemons: dict[str, Daemon] = {}
        self.kills: list[tuple[float, str, int, float]] = []  # (t, daemon, pid, down seconds)
        self.violations: list[str] = []
        self.self_exits: dict[str, list[str]] = defaultdict(list)  # daemon -> when it died unkilled
        self.notes: Counter = Counter()
        self.client_errors: list[str] = []
        self.step = 0
        self.armed: Daemon | None = None  # the daemon a kill is on its way to
        self.t0 = time.monotonic()
        self.users = ["root", TEST_USER]

    # ------------------------------------------------------------ log
    def now(self) -> float:
        return time.monotonic() - self.t0

    def note(self, text: str) -> None:
        self.log.write(f"{self.now():8.3f} {time.time():.3f} {text}\n")

    def violation(self, text: str) -> None:
        self.violations.append(text)
        self.note(f"VIOLATION {text}")

    # ------------------------------------------------------------ daemons
    def start_cell(self) -> None:
        if self.args.mode == "allinone":
            self.cell.start()
            self.daemons["daemon"] = Daemon("daemon", pid=self.cell.daemon_pid())
        else:
            self.cell.start_roles(hosts=("node1", "node2"), slots=self.args.slots)
            for p in self.cell.procs:
                name = "qmaster" if "qmaster" in p.args else p.args[p.args.index("--hostname") + 1]
                self.daemons[name] = Daemon(name, proc=p, pid=p.pid)
        pids = ", ".join(f"{d.name} pid {d.pid}" for d in self.daemons.values())
        self.note(f"cell started ({self.args.mode}): {pids}")
        # the jobs' TMPDIRs in a directory of the soak's own, to count the ones left behind
        r = self.command("root", "qconf", "-mattr", "queue", "tmpdir", self.tmpdir, "all.q")
        assert r.rc == 0, r

    def alive(self, d: Daemon) -> bool:
        if d.proc is not None:
            return d.proc.poll() is None
        try:
            os.kill(d.pid, 0)
        except ProcessLookupError:
            return False
        with open(f"/proc/{d.pid}/stat") as f:  # a zombie is dead
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"

    def check_daemons(self) -> None:
        for d in self.daemons.values():
            if d.down_until is None and not self.alive(d):
                rc = d.proc.returncode if d.proc is not None else "?"
                self.note(f"EXIT {d.name} pid {d.pid} exited by itself (status {rc})")
                self.self_exits[d.name].append(f"t={self.now():.1f}s pid {d.pid} status {rc}")
                d.down_until = time.monotonic()  # restart it, and go on

    def kill(self, d: Daemon, delay: float = 0.0) -> None:
        """SIGKILL ``d`` now, or ``delay`` seconds from now by SIGALRM, when the
        next workload commands are in flight (a kill inside a request);
        :meth:`killed` notes it once it is dead."""
        d.down_until = float("inf")  # no other kill, no restart before killed()
        self.armed = d
        if delay <= 0:
            self.fire()
        else:
            signal.signal(signal.SIGALRM, lambda _sig, _frame: self.fire())
            signal.setitimer(signal.ITIMER_REAL, delay)  # not inherited by the forked commands

    def fire(self) -> None:
        d = self.armed
        if d is not None and d.fired is None:
            os.kill(d.pid, signal.SIGKILL)
            d.fired = self.now()

    def killed(self) -> None:
        d = self.armed
        if d is None:
            return
        while d.fired is None:  # the alarm is due any moment
            time.sleep(0.005)
        if d.proc is not None:
            d.proc.wait()
        else:
            while self.alive(d):
                time.sleep(0.01)
        down = self.kill_rng.uniform(*self.args.down)
        self.kills.append((d.fired, d.name, d.pid, down))
        self.note(f"KILL {d.name} pid {d.pid} at t={d.fired:.3f}; restart in {down:.2f}s")
        d.down_until = time.monotonic() + down
        d.fired = None
        self.armed = None

    def restart(self, d: Daemon) -> None:
        c = self.cell
        if d.name == "daemon":
            t = self.now()
            r = c.minisge("start", "--hostname", c.host, check=False)
            if r.rc != 0:
                self.restart_failed(d, t, (r.out + r.err).strip().replace("\n", " / "))
                return
            d.pid = c.daemon_pid()
        elif d.name == "qmaster":
            t = self.now()
            d.proc = c.spawn("qmaster", "--hostname", "master", log="qmaster.log")
            d.pid = d.proc.pid
            if not self.wait(lambda: self.qmaster_answers() or d.proc.poll() is not None, 30) or d.proc.poll():
                d.proc.kill()
                d.proc.wait()
                self.restart_failed(d, t, f"status {d.proc.returncode}")
                return
        else:
            d.proc = c.spawn("execd", "--hostname", d.name, "--qmaster", "127.0.0.1", log=f"execd-{d.name}.log")
            d.pid = d.proc.pid
        d.down_until = None
        d.failed_restarts = 0
        self.note(f"RESTART {d.name} pid {d.pid}")

    def restart_failed(self, d: Daemon, t: float, why: str) -> None:
        """One violation for the first failed try after a kill; try again a second later."""
        if not d.failed_restarts:
            self.violation(f"{d.name} did not start again at t={t:.1f}s (tried for {self.now() - t:.1f}s): {why}")
        d.failed_restarts += 1
        self.notes["restarts that failed"] += 1
        self.note(f"RESTART of {d.name} failed: {why}")
        d.down_until = time.monotonic() + 1.0

    def qmaster_answers(self) -> bool:
        try:
            sock = protocol.connect_unix(cell_paths.Cell(self.cell.root).socket_path, timeout=2)
        except OSError:
            return False
        try:
            return bool(protocol.request(sock, {"op": "ping"}).get("ok"))
        except (OSError, protocol.ProtocolError):
            return False
        finally:
            sock.close()

    def restarts_due(self, all_now: bool = False) -> None:
        for d in self.daemons.values():
            if d.down_until is not None and (all_now or time.monotonic() >= d.down_until):
                self.restart(d)

    @staticmethod
    def wait(pred, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return True
            time.sleep(0.05)
        return False

    # ------------------------------------------------------------ commands
    def command(self, user: str, cmd: str, *args: str):
        r = run_as(user, cmd, list(args), env=self.cell.env(), input=None, cwd=self.cell.work, timeout=60)
        text = r.out + r.err
        if "Traceback" in text:
            self.client_errors.append(f"{cmd}: {text.strip().splitlines()[-1]}")
            self.note(f"TRACEBACK of {cmd}")
        self.note(f"{user}$ {cmd} {' '.join(args)} -> rc {r.rc}: {text.strip()[:200]!r}")
        return r

    @staticmethod
    def refused(r) -> bool:
        """The command could not reach the qmaster at all: nothing was asked.
        (A connection that failed in the middle of the request, "got read
        error", "Connection reset by peer", "acknowledge error", may have
        been acted on: that is no refusal.)"""
        return r.rc != 0 and "commlib error: got select error (Connection refused)" in r.err

    def qsub(self, sub: Submission, *opts: str) -> None:
        args = ["-terse", "-N", sub.name, "-j", "y", "-o", self.cell.work, "-v", f"SOAK_DIR={self.evidence_dir}"]
        if sub.ntasks:
            args += ["-t", f"1-{sub.ntasks}"]
        if sub.tc:
            args += ["-tc", str(sub.tc)]
        if sub.held:
            args.append("-h")
        if sub.hold_jid:
            args += ["-hold_jid", ",".join(str(j) for j in sub.hold_jid)]
        args += [*opts, self.script, f"{sub.sleep:.1f}", sub.exit]
        self.subs.append(sub)
        self.by_name[sub.name] = sub
        r = self.command(sub.user, "qsub", *args)
        m = re.fullmatch(r"(\d+)(\.\d+-\d+:\d+)?", r.out.strip())
        if r.rc == 0 and m:
            sub.answer = "ok"
            self.adopt(sub, int(m.group(1)))
        elif self.refused(r):
            sub.answer = "refused"
        elif r.rc != 0 and r.err.startswith("Unable to run job"):
            sub.answer = "rejected"
            self.violation(f"qsub of {sub.name} rejected: {r.err.strip()}")
        else:
            sub.answer = "unknown"  # the qmaster may or may not have it: found by name later

    def adopt(self, sub: Submission, job_id: int) -> None:
        other = self.by_id.get(job_id)
        if other is not None and other is not sub:
            self.violation(f"job id {job_id} given twice: to {other.name} and to {sub.name}")
            return
        sub.job_id = job_id
        self.by_id[job_id] = sub

    def qdel(self, sub: Submission, user: str) -> None:
        """qdel, and what it says of the job: deleted while "pending" (no task
        was running), while "running", or "uncertain" (no answer: asked again
        until one comes)."""
        r = self.command(user, "qdel", str(sub.job_id))
        # an array with tasks running and tasks pending gets both lines, as from 8.1.9
        # ("registered the job-array task 40.1 for deletion" ... "has deleted job 40"):
        # "registered" decides, then a run of its tasks may end in the kill
        if r.rc == 0 and "registered the job" in r.out:
            sub.deleted = "running" if sub.deleted in (None, "pending", "running") else sub.deleted
        elif r.rc == 0 and "has deleted job" in r.out:
            sub.deleted = "pending" if sub.deleted in (None, "pending") else sub.deleted
        elif self.refused(r) or "does not exist" in r.out + r.err:
            pass  # not asked, or already gone (deleted by an unanswered qdel, or ended)
        else:
            sub.deleted = "uncertain"
            self.deferred.append((self.step + 2, "qdel", sub))
            return
        sub.delete_answered = sub.deleted is not None or not self.refused(r)

    def qrls(self, sub: Submission) -> None:
        if self.evidence_runs().get(sub.job_id) and not sub.release_uncertain:
            self.violation(f"held job {sub.job_id} ({sub.name}) started before its qrls")
        r = self.command(self.work_rng.choice([sub.user, "root"]), "qrls", str(sub.job_id))
        if r.rc == 0:
            sub.released = True
        elif not self.refused(r):
            sub.release_uncertain = True

    # ------------------------------------------------------------ the workload
    def new_sub(self, kind: str, **kw) -> Submission:
        seq = len(self.subs) + 1
        return Submission(seq=seq, name=f"s{seq}", user=self.work_rng.choice(self.users), kind=kind, **kw)

    def workload_step(self, backlog: int) -> None:
        rng = self.work_rng
        self.step += 1
        due = [(s, a, sub) for (s, a, sub) in self.deferred if s <= self.step]
        self.deferred = [x for x in self.deferred if x[0] > self.step]
        for _s, action, sub in due:
            self.deferred_action(action, sub)
        kind = rng.choices(["single", "array", "pe", "held", "chain", "del_pending", "del_running", "del_any"],
                           weights=[30, 12, 10, 10, 8, 8, 6, 6])[0]
        if backlog > self.args.max_backlog and kind not in ("del_any",):
            self.notes["steps skipped (backlog)"] += 1
            return
        if kind == "single":
            code = rng.choices(["0", "1", "99once", "100once"], weights=[50, 20, 15, 15])[0]
            self.qsub(self.new_sub(kind, exit=code, sleep=rng.uniform(0, 2)))
        elif kind == "array":
            n = rng.randint(2, 8)
            tc = rng.choice([None, 2, 3])
            code = rng.choices(["0", "1", "99once"], weights=[60, 20, 20])[0]
            self.qsub(self.new_sub(kind, exit=code, sleep=rng.uniform(0, 1), ntasks=n, tc=tc))
        elif kind == "pe":
            code = rng.choices(["0", "1", "99once"], weights=[60, 20, 20])[0]
            self.qsub(self.new_sub(kind, exit=code, sleep=rng.uniform(0, 2)), "-pe", "smp", "2")
        elif kind == "held":
            sub = self.new_sub(kind, exit=rng.choice(["0", "1"]), sleep=rng.uniform(0, 1), held=True)
            self.qsub(sub)
            self.deferred.append((self.step + rng.randint(2, 8), "qrls", sub))
        elif kind == "chain":
            prev: Submission | None = None
            for _ in range(rng.randint(2, 3)):
                sub = self.new_sub(kind, exit=rng.choice(["0", "1", "99once"]), sleep=rng.uniform(0, 1),
                                   hold_jid=[prev.job_id] if prev is not None and prev.job_id else [])
                if prev is not None and not prev.job_id:
                    break  # the predecessor was not accepted (cell down): the chain ends here
                self.qsub(sub)
                prev = sub
        elif kind == "del_pending":
            sub = self.new_sub(kind, exit="0", sleep=0.5, held=True)
            self.qsub(sub)
            self.deferred.append((self.step + rng.randint(1, 4), "qdel", sub))
        elif kind == "del_running":
            sub = self.new_sub(kind, exit="0", sleep=30)
            self.qsub(sub)
            self.deferred.append((self.step + 1, "qdel_when_running", sub))
        elif kind == "del_any":
            live = [s for s in self.subs[-20:] if s.job_id and s.deleted is None and s.kind not in ("chain",)]
            if live:
                sub = rng.choice(live)
                self.qdel(sub, rng.choice([sub.user, "root"]))

    def deferred_action(self, action: str, sub: Submission) -> None:
        if sub.job_id is None:
            if sub.answer == "unknown":
                self.deferred.append((self.step + 3, action, sub))  # may be adopted from qstat
            return
        if action == "qrls":
            if sub.deleted is None:
                self.qrls(sub)
                if not sub.released:
                    self.deferred.append((self.step + 2, action, sub))
        elif action == "qdel":
            if not sub.delete_answered:
                self.qdel(sub, self.work_rng.choice([sub.user, "root"]))
            if sub.deleted is None and not sub.delete_answered:
                self.deferred.append((self.step + 2, action, sub))
        elif action == "qdel_when_running":
            if sub.job_id in self.evidence_runs() or sub.seq + 40 < len(self.subs):
                self.qdel(sub, self.work_rng.choice([sub.user, "root"]))
                if sub.deleted is None and not sub.delete_answered:
                    self.deferred.append((self.step + 2, action, sub))
            else:
                self.deferred.append((self.step + 1, action, sub))

    # ------------------------------------------------------------ what the cell says
    def qstat(self) -> list[tuple[int, str, str]] | None:
        """(job id, name, state) of every line of ``qstat -u '*'``; None when it fails."""
        r = self.command("root", "qstat", "-u", "*")
        if r.rc != 0:
            return None
        out = []
        for line in r.out.splitlines()[2:]:
            p = line.split()
            if len(p) >= 5 and p[0].isdigit():
                out.append((int(p[0]), p[2], p[4]))
        return out

    def look_at_qstat(self, lines: list[tuple[int, str, str]]) -> None:
        """Adopt jobs whose qsub got no answer; clear the error state of the
        jobs that exit 100 on purpose; flag any other error state."""
        for job_id, name, state in lines:
            sub = self.by_id.get(job_id)
            if sub is None:
                sub = self.by_name.get(name)
                if sub is not None and sub.job_id is None:
                    self.note(f"adopt job {job_id} as {name} (its qsub got no answer)")
                    self.notes["jobs accepted without an answer"] += 1
                    self.adopt(sub, job_id)
                elif sub is None:
                    self.violation(f"job {job_id} ({name}) in qstat was never submitted by the soak")
                    self.by_id[job_id] = Submission(0, name, "?", "phantom", "0", 0, job_id=job_id)
                    continue
            if "E" in state and sub is not None:
                if sub.exit != "100once":
                    self.violation(f"job {job_id} ({sub.name}, exit {sub.exit}) in error state {state}")
                    self.qdel(sub, "root")
                elif sub.cleared < 4:
                    r = self.command(self.work_rng.choice([sub.user, "root"]), "qmod", "-cj", str(job_id))
                    if r.rc == 0:
                        sub.cleared += 1

    # ------------------------------------------------------------ evidence
    def evidence(self) -> list[tuple[int, int, str, str]]:
        """(job, task, "start"|"end", rest) of each line the jobs wrote, in order."""
        out = []
        try:
            with open(self.evidence_file) as f:
                for line in f:
                    p = line.split()
                    if len(p) >= 2 and "." in p[0]:
                        j, t = p[0].split(".", 1)
                        out.append((int(j), int(t), p[1], " ".join(p[2:])))
        except FileNotFoundError:
            pass
        return out

    def evidence_runs(self) -> dict[int, int]:
        return Counter(j for j, _t, what, _r in self.evidence() if what == "start")

    # ------------------------------------------------------------ the soak
    def run(self) -> int:
        a = self.args
        ensure_user(TEST_USER)
        self.start_cell()
        next_kill = time.monotonic() + self.kill_rng.uniform(*a.kill_interval)
        end = time.monotonic() + a.duration
        backlog = 0
        while time.monotonic() < end:
            self.check_daemons()
            self.restarts_due()
            if (len(self.kills) < a.kills and time.monotonic() >= next_kill
                    and all(d.down_until is None for d in self.daemons.values())):
                names = sorted(self.daemons)  # roles: the qmaster half the time, else an execd
                if "qmaster" in names and self.kill_rng.random() < 0.5:
                    names = ["qmaster"]
                target = self.daemons[self.kill_rng.choice([n for n in names if n != "qmaster"] or names)]
                # half the kills at a quiet moment, half while this step's commands are in flight
                in_flight = self.kill_rng.random() < 0.5
                self.kill(target, delay=self.kill_rng.uniform(0.001, 0.08) if in_flight else 0.0)
            lines = self.qstat()
            if lines is not None:
                backlog = len(lines)
                self.look_at_qstat(lines)
            self.workload_step(backlog)
            if self.armed is not None:
                target = self.armed
                self.killed()
                next_kill = target.down_until + self.kill_rng.uniform(*a.kill_interval)
            time.sleep(self.work_rng.uniform(*a.step))
        self.note("workload over: draining")
        self.restarts_due(all_now=True)
        idle = self.drain()
        if idle:
            self.check_leftovers()
        self.wall = self.now()
        self.check(idle)
        return self.report()

    def drain(self) -> bool:
        """Release, clear and wait until the cell is idle; False when it never is."""
        deadline = time.monotonic() + self.args.drain
        while time.monotonic() < deadline:
            self.check_daemons()
            self.restarts_due(all_now=True)
            for sub in self.subs:
                if sub.job_id and sub.held and not sub.released and sub.deleted is None:
                    self.qrls(sub)
                if sub.job_id and sub.deleted == "uncertain" and not sub.delete_answered:
                    self.qdel(sub, "root")
            lines = self.qstat()
            if lines is not None:
                self.look_at_qstat(lines)
                if not lines:
                    return True
            time.sleep(0.5)
        lines = self.qstat() or []
        self.violation(f"the cell is not idle {self.args.drain:.0f} s after the workload: "
                       + ", ".join(f"{j} {n} {s}" for j, n, s in lines[:30]))
        return False

    def leftovers(self) -> list[str]:
        """Task directories and TMPDIRs still there (an idle cell has none once its ends are acknowledged)."""
        spool = os.path.join(self.cell.root, "default", "spool")
        out = [os.path.join(host, "active_jobs", t) for host in sorted(os.listdir(spool)) if host != "qmaster"
               for t in sorted(os.listdir(os.path.join(spool, host, "active_jobs")))
               if os.path.isdir(os.path.join(spool, host, "active_jobs"))]
        return out + [os.path.join("tmp", t) for t in sorted(os.listdir(self.tmpdir))]

    def check_leftovers(self) -> None:
        self.wait(lambda: not self.leftovers(), 30)
        left = self.leftovers()
        if left:
            self.violation(f"{len(left)} task directories or TMPDIRs left 30 s after the cell went idle: "
                           + " ".join(left[:20]))

    # ------------------------------------------------------------ the count
    def records(self) -> list[accounting.AccountingRecord]:
        try:
            with open(self.cell.accounting) as f:
                text = f.read()
        except FileNotFoundError:
            return []
        out = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.startswith("#") or len(line) <= 1:
                continue
            try:
                out.append(accounting.parse_line(line, self.cell.accounting, i))
            except accounting.FormatError as e:
                self.violation(f"accounting line {i} unreadable: {e}")
        return out

    def check(self, idle: bool) -> None:
        records = self.records()
        events = self.evidence()
        # jobs whose qsub got no answer: known by name from accounting and the jobs' own lines
        names = {r.job_number: r.job_name for r in records}
        names.update({j: rest.split()[0] for j, _t, what, rest in events if what == "start" and rest})
        for job_id, name in sorted(names.items()):
            sub = self.by_name.get(name)
            if job_id not in self.by_id and sub is not None and sub.job_id is None:
                self.adopt(sub, job_id)
                self.notes["jobs accepted without an answer"] += 1
        for r in records:
            if r.job_number not in self.by_id:
                self.violation(f"accounting record of job {r.job_number} ({r.job_name}) the soak never submitted")
                self.by_id[r.job_number] = Submission(0, r.job_name, "?", "phantom", "0", 0, job_id=r.job_number)
        # ids: gap-free, never reused
        ids = sorted(self.by_id)
        if ids:
            gaps = sorted(set(range(1, ids[-1] + 1)) - set(ids))
            unaccounted = [s for s in self.subs if s.answer == "unknown" and s.job_id is None]
            if gaps:
                self.violation(f"job ids missing: {gaps[:20]} ({len(unaccounted)} qsub calls got no answer "
                               "and left no job)")
        for r in records:
            sub = self.by_id[r.job_number]
            if r.job_name != sub.name:
                self.violation(f"job id {r.job_number} reused: a record of {r.job_name}, submitted as {sub.name}")
        for j, _t, what, rest in events:
            sub = self.by_id.get(j)
            if what == "start" and sub is not None and rest.split()[:1] != [sub.name]:
                self.violation(f"job id {j} reused: job {rest.split()[:1]} ran, submitted as {sub.name}")
        # per task
        recs: dict[tuple[int, int], list] = defaultdict(list)
        for r in records:
            recs[(r.job_number, r.task_number)].append(r)
        starts: Counter = Counter()
        ends: Counter = Counter()
        restarted: dict[tuple[int, int], list[str]] = defaultdict(list)  # RESTARTED of each run
        for j, t, what, rest in events:
            (starts if what == "start" else ends)[(j, t)] += 1
            if what == "start":
                restarted[(j, t)].append((rest.split() + ["", ""])[1])
        self.restarted = restarted
        seen_keys = set(recs) | set(starts)
        self.figures = Counter()
        for sub in self.subs:
            if sub.answer == "refused" or sub.job_id is None:
                continue
            self.figures["jobs"] += 1
            for t in sub.tasks:
                key = (sub.job_id, t)
                seen_keys.discard(key)
                self.figures["tasks"] += 1
                self.check_task(sub, t, recs.get(key, []), starts[key], ends[key])
        for key in sorted(seen_keys):
            self.violation(f"task {key[0]}.{key[1]} ran or was accounted but was never submitted as such")
        self.check_order(events)
        self.check_logs()
        for name, exits in self.self_exits.items():
            more = f" and {len(exits) - 3} more" if len(exits) > 3 else ""
            self.violation(f"{name} exited by itself {len(exits)} time(s): {'; '.join(exits[:3])}{more}")

    def check_task(self, sub: Submission, t: int, recs: list, starts: int, ends: int) -> None:
        tid = f"{sub.job_id}.{t} ({sub.name}, {sub.kind}, exit {sub.exit}"
        tid += f", deleted {sub.deleted})" if sub.deleted else ")"
        got = [(r.failed, r.exit_status) for r in recs]
        ran = [r for r in recs if r.failed == 0 or r.failed > 11]  # the job itself started (SGE-FACTS §1b)
        want = sub.expected()
        if sub.deleted:
            # what ran before the qdel is as for any task (a prefix of the expected records,
            # one per start); "running" or no answer: the last may be the kill (failed 100),
            # also of a run killed between its dispatch and its start
            prefix = got == want[:len(got)] and starts == len(got)
            killed = (sub.deleted != "pending" and bool(got) and got[-1][0] == KILLED[0]
                      and got[:-1] == want[:len(got) - 1] and starts in (len(got) - 1, len(got)))
            if starts > len(ran):
                self.violation(f"{tid}: {starts} start(s) but records {got}: a run without its record")
                self.figures["lost"] += 1
            elif not (prefix or killed):
                self.violation(f"{tid}: {starts} start(s), records {got}, expected a prefix of {want}"
                               + (" or a kill" if sub.deleted != "pending" else ""))
                self.figures["twice" if len(got) > len(want) or starts > len(want) else "wrong outcome"] += 1
            else:
                self.figures["deleted, killed" if killed else "deleted, not killed"] += 1
            return
        if len(recs) < len(want) or starts < len(want):
            self.violation(f"{tid}: lost: {starts} start(s), records {got}, expected {want}")
            self.figures["lost"] += 1
        elif len(recs) > len(want) or starts > len(want):
            self.violation(f"{tid}: ran twice: {starts} start(s), records {got}, expected {want}")
            self.figures["twice"] += 1
        elif got != want:
            self.violation(f"{tid}: records {got}, expected {want}")
            self.figures["wrong outcome"] += 1
        else:
            self.figures["finished"] += 1
        if ends != starts:
            self.violation(f"{tid}: {starts} start(s) but {ends} end(s) in the jobs' own log")
        runs = self.restarted.get((sub.job_id, t), [])
        if sub.exit == "99once" and runs and runs != ["0", "1"][:len(runs)]:
            # a reschedule after exit 99 makes the next run RESTARTED=1 (qsub(1) -r, sge_shepherd(8))
            self.violation(f"{tid}: RESTARTED of its runs {runs}, expected ['0', '1']")
        if sub.kind == "pe" and any((r.granted_pe, r.slots) != ("smp", 2) for r in recs):
            self.violation(f"{tid}: PE records {[(r.granted_pe, r.slots) for r in recs]}, expected smp 2")

    def check_order(self, events) -> None:
        """-hold_jid: a successor starts after its predecessor's last end; -tc: never more tasks at once."""
        first_start: dict[int, int] = {}
        last_end: dict[int, int] = {}
        running: Counter = Counter()
        peak: Counter = Counter()
        for i, (j, _t, what, _r) in enumerate(events):
            if what == "start":
                first_start.setdefault(j, i)
                running[j] += 1
                peak[j] = max(peak[j], running[j])
            else:
                last_end[j] = i
                running[j] -= 1
        for sub in self.subs:
            if sub.job_id is None:
                continue
            if sub.tc and peak[sub.job_id] > sub.tc:
                self.violation(f"array {sub.job_id} ({sub.name}) -tc {sub.tc} ran {peak[sub.job_id]} tasks at once")
            for pred in sub.hold_jid:
                p = self.by_id.get(pred)
                if p is None or p.deleted or sub.job_id not in first_start:
                    continue
                if pred not in last_end or first_start[sub.job_id] < last_end[pred]:
                    self.violation(f"job {sub.job_id} ({sub.name}) started before its -hold_jid {pred} ended")

    def daemon_logs(self) -> list[str]:
        c = self.cell
        paths = [os.path.join(c.qmaster_spool, "messages"), os.path.join(c.qmaster_spool, "daemon.out")]
        paths += [os.path.join(c.root, "default", "spool", h, "messages") for h in ("node1", "node2", c.host)]
        paths += [os.path.join(self.dir, f) for f in sorted(os.listdir(self.dir)) if f.endswith(".log")
                  and f != "actions.log"]
        return [p for p in paths if os.path.exists(p)]

    def check_logs(self) -> None:
        """Tracebacks and ERROR lines of every daemon log, grouped by what failed."""
        self.tracebacks: list[str] = []  # one per "Traceback" line (a chained or grouped one counts too)
        self.internal: list[str] = []
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for p in self.daemon_logs():
            name = os.path.relpath(p, self.dir)
            with open(p, errors="replace") as f:
                lines = f.read().splitlines()
            for i, line in enumerate(lines):
                if "Traceback (most recent call last)" in line:  # also inside an exception group's "  | "
                    # after a log line, its message (without the time); then the exception
                    where = lines[i - 1].split("|", 1)[1] if i and lines[i - 1][:2].isdigit() else ""
                    error = next((x.strip(" |") for x in lines[i + 1:] if ERROR_LINE.match(x.strip(" |"))), "")
                    self.tracebacks.append(f"{name}:{i + 1}")
                    groups[(name, f"{where[:160]} {error[:200]}".strip())].append(i + 1)
                if "|ERROR|" in line or "|CRITICAL|" in line:
                    self.internal.append(f"{name}: {line[:200]}")
                if "was never started on" in line:
                    self.notes["dispatches re-queued as never started"] += 1
        for (name, what), where in groups.items():
            at = ", ".join(str(n) for n in where[:8]) + (" ..." if len(where) > 8 else "")
            self.violation(f"{len(where)} traceback line(s) in {name} (lines {at}): {what}")
        for e in self.internal:
            self.violation(f"internal error in {e}")
        for e, n in Counter(self.client_errors).items():
            self.violation(f"command traceback ({n}x): {e}")

    def report(self) -> int:
        f = self.figures
        kills = Counter(name for _t, name, _p, _d in self.kills)
        answers = Counter(s.answer for s in self.subs)
        print(f"soak: mode {self.args.mode}, seed {self.args.seed}, wall {self.wall:.1f} s, dir {self.dir}")
        print("args: " + " ".join(sys.argv[1:]))
        print(f"kills: {len(self.kills)} (" + ", ".join(f"{k} {v}" for k, v in sorted(kills.items())) + ")")
        print(f"qsub calls: {len(self.subs)} (accepted {answers['ok']}, refused while down {answers['refused']}, "
              f"no answer {answers['unknown']}, rejected {answers['rejected']})")
        print(f"jobs: {f['jobs']}, tasks: {f['tasks']}; finished {f['finished']}, deleted "
              f"{f['deleted, not killed'] + f['deleted, killed']} (killed running {f['deleted, killed']})")
        print(f"lost {f['lost']}, twice {f['twice']}, wrong outcome {f['wrong outcome']}, "
              f"internal errors {len(self.internal)}, tracebacks {len(self.tracebacks)}, "
              f"command tracebacks {len(self.client_errors)}")
        for k, v in sorted(self.notes.items()):
            print(f"{k}: {v}")
        print("kill times: " + " ".join(f"{t:.2f}:{n}" for t, n, _p, _d in self.kills))
        if self.violations:
            print(f"VIOLATIONS ({len(self.violations)}):")
            for v in self.violations:
                print(f"  {v}")
        else:
            print("no violations")
        return 1 if self.violations else 0

    def cleanup(self) -> None:
        self.log.close()
        if self.args.keep or self.violations:
            self.cell.stop()
            kill_cell_processes(self.cell.root)
            print(f"kept {self.dir} (actions.log, evidence/, root/)")
        else:
            self.cell.cleanup()


def pair(text: str) -> tuple[float, float]:
    lo, _, hi = text.partition(",")
    return float(lo), float(hi or lo)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("allinone", "roles"), default="allinone")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of workload (then the drain)")
    p.add_argument("--kills", type=int, default=20, help="at most this many kills")
    p.add_argument("--kill-interval", type=pair, default=(1.5, 3.5), help="MIN,MAX seconds between kills")
    p.add_argument("--down", type=pair, default=(0.2, 1.5), help="MIN,MAX seconds a killed daemon stays down")
    p.add_argument("--step", type=pair, default=(0.2, 0.6), help="MIN,MAX seconds between workload steps")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--slots", type=int, default=4, help="slots of all.q (per host)")
    p.add_argument("--max-backlog", type=int, default=40, help="no submissions while qstat shows more lines")
    p.add_argument("--drain", type=float, default=120.0, help="seconds the cell has to become idle at the end")
    p.add_argument("--keep", action="store_true", help="keep the cell's directory")
    args = p.parse_args(argv)
    if os.getuid() != 0:
        p.error("run as root (jobs of a test user run as that user)")
    soak = Soak(args)
    try:
        rc = soak.run()
    finally:
        soak.cleanup()
    return rc


if __name__ == "__main__":
    sys.exit(main())
