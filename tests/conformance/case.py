"""The conformance cases: one text file per case, one way to run it.

A case (``tests/conformance/cases/<command>/<name>.case``) says which user
runs which setup commands and then which command; ``capture.py`` runs it on
the real Grid Engine 8.1.9 and writes what 8.1.9 printed beside it
(``<name>.out``, ``<name>.err``: golden files with the exact command, user,
exit code, the peer's job ids, host, work directory and SGE_ROOT in their
header); ``tests/integration/test_conformance.py`` runs it on a minisge cell
and compares both after :func:`normalise_side`.  Both go through
:func:`execute`, so a case means the same thing on either side.

Directives, one a line (``#`` lines are comments)::

    user: cfuser1                  who runs setup and command (default cfuser1)
    file: job.sh #!/bin/sh\\necho hi  a file in the work directory (\\n, \\t escapes)
    setup: qsub -h -b y /bin/true  run before the command (as `user`; `setup as root: ...`
                                   or `setup as cfuser2: ...` for another); the job ids it
                                   prints become $JOB1, $JOB2... in order
    wait: running 2                until 2 of the case's jobs run
    wait: finished $JOB1           until job 1's record is in the accounting file: a record of
                                   that number submitted since the case began (the peer's
                                   accounting file holds earlier jobs of the same numbers)
    wait: gone                     until none of the case's jobs is listed
    command: qstat -s p            the command compared (as `user`; once per case)
    cleanup: qmod -e all.q         after the command, always (`cleanup as root: ...`)
    quiet: yes                     captured only while the peer is calm: its scheduler runs, no
                                   other user's job runs, no queue is in a load alarm (views of
                                   the whole cell: qstat -f, -g c, -j's scheduling info)
    quiet: jobs                    the same, but a load alarm may be (the case masks the
                                   states column it shows in)
    mask: <regex>                  its group "m" (or whole match) becomes * on both sides:
                                   values of the machine, not of Grid Engine (load, usage);
                                   say why in a comment above it
    differs: <reason>              minisge differs on purpose; its own text is in
                                   <name>.minisge.out/.err and the peer's must still differ

In command lines $JOB1... are the case's job ids, $HOST the execution host,
$CWD the work directory, $START the time the case began ([CC]YYMMDDhhmm.SS, for
qacct -b: the accounting of the case's own jobs alone).  A job id printed by the command itself (qsub)
joins the case's jobs.  Every job of a case is deleted when it ends.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))

from golden import normalise

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
USER = "cfuser1"
USER2 = "cfuser2"
USERS = (USER, USER2)
# the environment every command of a case runs with, on both sides (qsub records PATH and SHELL)
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "SHELL": "/bin/sh", "LANG": "C", "LC_ALL": "C"}
WAIT = 120.0


@dataclass
class Step:
    user: str
    line: str


@dataclass
class Case:
    path: str
    user: str = USER
    files: dict[str, str] = field(default_factory=dict)
    setup: list[Step] = field(default_factory=list)
    waits: list[tuple[int, str]] = field(default_factory=list)  # (after setup step n, condition)
    command: str = ""
    cleanup: list[Step] = field(default_factory=list)
    quiet: str = ""  # "yes", "jobs" or none
    masks: list[str] = field(default_factory=list)
    differs: str | None = None

    @property
    def name(self) -> str:
        """``<command>/<name>``, the case's id."""
        return os.path.relpath(self.path, CASES)[: -len(".case")]

    def expected(self, side: str, stream: str) -> str:
        """The path of the expected ``stream`` ("out" or "err") of ``side``
        ("peer": 8.1.9's capture, "minisge": minisge's own text where it differs)."""
        base = self.path[: -len(".case")]
        return f"{base}.{stream}" if side == "peer" else f"{base}.minisge.{stream}"


def _step(rest: str, default_user: str) -> Step:
    m = re.match(r"as (\S+):\s*(.*)", rest)
    return Step(m.group(1), m.group(2)) if m else Step(default_user, rest)


def parse_case(path: str) -> Case:
    case = Case(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        value = value.strip()
        m = re.match(r"(setup|cleanup)( as \S+)$", key)
        if m:
            key, value = m.group(1), f"{m.group(2).strip()}: {value}"
        if not sep or key not in ("user", "file", "setup", "wait", "command", "cleanup", "quiet", "mask", "differs"):
            raise ValueError(f"{path}:{n}: not a directive: {line!r}")
        if key == "user":
            case.user = value
        elif key == "file":
            name, _, body = value.partition(" ")
            case.files[name] = body.replace("\\n", "\n").replace("\\t", "\t")
        elif key == "setup":
            case.setup.append(_step(value, case.user))
        elif key == "wait":
            case.waits.append((len(case.setup), value))
        elif key == "command":
            if case.command:
                raise ValueError(f"{path}:{n}: a case has one command")
            case.command = value
        elif key == "cleanup":
            case.cleanup.append(_step(value, case.user))
        elif key == "quiet":
            if value not in ("yes", "jobs"):
                raise ValueError(f"{path}:{n}: quiet: yes or jobs")
            case.quiet = value
        elif key == "mask":
            re.compile(value)
            case.masks.append(value)
        else:
            case.differs = value
    if not case.command:
        raise ValueError(f"{path}: no command")
    # setup steps name their user when given after `user:`; a `user:` line after them would surprise
    return case


def all_cases(only: str | None = None) -> list[Case]:
    """Every case, sorted by name (``only``: those whose name starts with it)."""
    found = []
    for d, _, files in os.walk(CASES):
        for fn in files:
            if fn.endswith(".case"):
                found.append(parse_case(os.path.join(d, fn)))
    found.sort(key=lambda c: c.name)
    return [c for c in found if only is None or c.name.startswith(only)]


# ------------------------------------------------------------------ running a case
@dataclass
class Result:
    rc: int
    out: str
    err: str


class Side(Protocol):
    """A Grid Engine to run a case on: the real 8.1.9 or a minisge cell."""

    host: str
    root: str
    execd_spool: str  # the global configuration's execd_spool_dir

    def run(self, user: str, argv: list[str], cwd: str) -> Result: ...

    def workdir(self, user: str) -> str: ...

    def job_states(self) -> dict[int, str]:
        """Every job listed by ``qstat -u '*'``: its id and state."""
        ...

    def in_accounting(self, job_id: int, since: int) -> bool:
        """Whether the accounting file holds a record of job ``job_id``
        submitted at ``since`` (seconds since the epoch) or later."""
        ...


@dataclass
class Outcome:
    command: str   # the exact command line run
    user: str
    rc: int
    out: str
    err: str
    jobs: list[int]
    cwd: str


#: the commands whose "Your job N ..." makes a job of the case
SUBMITTING = ("qsub", "qresub")
_SUBMITTED = re.compile(r"^Your job(?:-array)? (\d+)[ .]|^(\d+)(?:\.\d+-\d+:\d+)?$", re.MULTILINE)


def accounting_records(path: str, job_id: int) -> list[list[str]]:
    """The records of job ``job_id`` in the accounting file ``path``
    (accounting(5): one record a line, fields separated by colons)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = [ln.rstrip("\n").split(":") for ln in f if not ln.startswith("#")]
    except FileNotFoundError:
        return []
    return [r for r in lines if len(r) > 8 and r[5] == str(job_id)]


def execd_spool_dir(sconf: str) -> str:
    """execd_spool_dir of ``qconf -sconf``'s output."""
    for line in sconf.splitlines():
        if line.startswith("execd_spool_dir "):
            return line.split()[1]
    raise ValueError("no execd_spool_dir in the global configuration")


def submitted_ids(stdout: str) -> list[int]:
    """The job ids a qsub printed ("Your job 5 ...", or -terse's "5")."""
    return [int(a or b) for a, b in _SUBMITTED.findall(stdout)]


def expand(line: str, jobs: list[int], side: Side, cwd: str, start: str = "") -> list[str]:
    """A case's command line as argv, with $JOBn, $HOST, $CWD and $START filled in."""
    def job(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if n > len(jobs):
            raise AssertionError(f"${m.group(0)}: the case has {len(jobs)} jobs")
        return str(jobs[n - 1])
    line = re.sub(r"\$JOB(\d+)", job, line).replace("$HOST", side.host).replace("$CWD", cwd)
    return shlex.split(line.replace("$START", start))


def wait_until(predicate: Callable[[], bool], what: str, timeout: float | None = None) -> None:
    """Poll ``predicate`` until it holds (AssertionError after ``timeout``,
    default the module's WAIT, which capture.py raises for a busy peer)."""
    timeout = timeout or WAIT
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def _wait(cond: str, jobs: list[int], side: Side, cwd: str, began: int) -> None:
    word, _, arg = cond.partition(" ")
    if word == "running":
        n = int(arg)
        wait_until(lambda: sum(1 for j, s in side.job_states().items() if j in jobs and "r" in s) >= n,
                   f"{n} running job(s) of {jobs}")
    elif word == "finished":
        (job_id,) = (int(a) for a in expand(arg, jobs, side, cwd))
        wait_until(lambda: side.in_accounting(job_id, began), f"job {job_id}'s record in the accounting file")
    elif word == "gone":
        wait_until(lambda: not set(side.job_states()) & set(jobs), f"jobs {jobs} gone")
    else:
        raise ValueError(f"unknown wait condition {cond!r}")


def execute(case: Case, side: Side) -> Outcome:
    """Run ``case`` on ``side``: files, setup, waits, the command, cleanup,
    and every job of the case deleted and gone at the end."""
    cwd = side.workdir(case.user)
    began = int(time.time()) - 1
    start = time.strftime("%Y%m%d%H%M.%S", time.localtime(began))
    for name, body in case.files.items():
        path = os.path.join(cwd, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
        os.chmod(path, 0o755)
        pw_uid = os.stat(cwd).st_uid
        os.chown(path, pw_uid, os.stat(cwd).st_gid)
    jobs: list[int] = []
    outcome = None
    try:
        for n, step in enumerate(case.setup):
            for at, cond in case.waits:
                if at == n:
                    _wait(cond, jobs, side, cwd, began)
            r = side.run(step.user, expand(step.line, jobs, side, cwd, start), cwd)
            if r.rc != 0:
                raise AssertionError(f"{case.name}: setup {step.line!r} failed: {r}")
            if step.line.startswith(SUBMITTING):
                jobs += submitted_ids(r.out)
        for at, cond in case.waits:
            if at == len(case.setup):
                _wait(cond, jobs, side, cwd, began)
        argv = expand(case.command, jobs, side, cwd, start)
        r = side.run(case.user, argv, cwd)
        if case.command.startswith(SUBMITTING):
            jobs += submitted_ids(r.out)
        outcome = Outcome(shlex.join(argv), case.user, r.rc, r.out, r.err, list(jobs), cwd)
    finally:
        for step in case.cleanup:
            side.run(step.user, expand(step.line, jobs, side, cwd), cwd)
        if jobs:
            side.run("root", ["qdel", *map(str, jobs)], cwd)
            wait_until(lambda: not set(side.job_states()) & set(jobs), f"jobs {jobs} deleted")
    return outcome


def normalise_side(text: str, *, jobs: list[int], host: str, cwd: str, root: str, execd_spool: str,
                   masks: tuple[str, ...] | list[str] = ()) -> str:
    """``text`` of one side with that side's job ids, host, work directory,
    SGE_ROOT and execd_spool_dir replaced (golden.normalise, the one
    normaliser), then the case's masks."""
    text = normalise(text, job_ids=jobs, hosts=[host],
                     paths={cwd: "CWD", root: "SGE_ROOT", execd_spool: "EXECD_SPOOL_DIR"})
    for mask in masks:
        text = re.sub(mask, _masked, text)
    return text


def _masked(m: re.Match[str]) -> str:
    if "m" not in m.re.groupindex:
        return "*"
    start, end = m.span("m")
    whole = m.group(0)
    return whole[: start - m.start()] + "*" + whole[end - m.start():]
