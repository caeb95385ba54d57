"""The conformance suite: every case of tests/conformance/cases/ run on a
minisge cell and compared with what the real Grid Engine 8.1.9 printed for it
(captured by tests/conformance/capture.py), both sides normalised by the one
normaliser (job ids, dates, host, work directory, SGE_ROOT, and a case's
masks of machine values).

A case marked ``differs: <reason>`` differs on purpose: minisge's output must
equal its own expected text (``<name>.minisge.out/.err``) AND the peer's
capture must still differ from it, so that a difference that is gone is
noticed.  ``CONFORMANCE_ACCEPT=1`` writes minisge's output of the differing
cases as their expected text (to review with git diff, never blindly).

The cell is configured like the peer (all.q with 2 slots, PEs make, mpi and
smp, submit users cfuser1 and cfuser2) and shared by all cases: each case
deletes its jobs and puts back what it changes.
"""

from __future__ import annotations

import difflib
import os
import pwd
import re
import socket
import subprocess
import sys
import tempfile

import pytest
from cellutil import WAIT, Cell, ensure_user, run_as
from golden import read_golden, write_golden

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "conformance"))

from case import ENV, USERS, Case, Result, accounting_records, all_cases, execd_spool_dir, execute, normalise_side

pytestmark = pytest.mark.root

# the first job id of the cell: an id never equals another number of the output (a slot count,
# a task id, a uid); the normaliser keeps columns alike whatever the ids' lengths
FIRST_JOB_ID = 500000
# 8.1.9's mpi PE as `qconf -sp mpi` prints it (minisge's default cell has make and smp)
MPI_PE = """pe_name            mpi
slots              99999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $fill_up
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
"""


class MinisgeSide:
    """A minisge cell as a case sees it: its commands run as the case's users."""

    def __init__(self, cell: Cell):
        self.cell = cell
        self.host = cell.host
        self.root = cell.root
        self.execd_spool = execd_spool_dir(cell.run("qconf", "-sconf").out)

    def run(self, user: str, argv: list[str], cwd: str) -> Result:
        cmd, args = argv[0], argv[1:]
        if user == "root":
            env = self.cell.env(**ENV, HOME="/root", USER="root", LOGNAME="root")
            p = subprocess.run([sys.executable, "-m", f"minisge.cli.{cmd}", *args], env=env, cwd=cwd,
                               capture_output=True, text=True, timeout=WAIT)
            return Result(p.returncode, p.stdout, p.stderr)
        r = run_as(user, cmd, args, env=self.cell.env(**ENV), input=None, cwd=cwd, timeout=WAIT)
        return Result(r.rc, r.out, r.err)

    def workdir(self, user: str) -> str:
        d = tempfile.mkdtemp(prefix="case-", dir=self.cell.dir)
        pw = pwd.getpwnam(user)
        os.chown(d, pw.pw_uid, pw.pw_gid)
        os.chmod(d, 0o755)  # the setup of another user of the case runs there too
        return d

    def job_states(self) -> dict[int, str]:
        return self.cell.qstat_states()

    def in_accounting(self, job_id: int, since: int) -> bool:
        return any(int(r[8]) >= since for r in accounting_records(self.cell.accounting, job_id))


@pytest.fixture(scope="module")
def side():
    for user in USERS:
        ensure_user(user)
    c = Cell(host=socket.gethostname().split(".")[0], slots=2)
    try:
        c.minisge("init", "--hostname", c.host, "--slots", "2")
        with open(os.path.join(c.qmaster_spool, "jobseqnum"), "w") as f:
            f.write(f"{FIRST_JOB_ID - 1}\n")
        c.start()
        mpi = os.path.join(c.dir, "mpi")
        with open(mpi, "w") as f:
            f.write(MPI_PE)
        # the peer's global configuration: Debian's min_uid and min_gid, its admin user a manager
        conf = os.path.join(c.dir, "global")
        with open(conf, "w") as f:
            f.write(re.sub(r"(?m)^(min_[ug]id +)0$", r"\g<1>1000", c.run("qconf", "-sconf").out))
        for args in (("-Ap", mpi), ("-aattr", "queue", "pe_list", "mpi", "all.q"), ("-Mconf", conf),
                     ("-am", "sgeadmin")):
            r = c.run("qconf", *args)
            assert r.rc == 0, r
        yield MinisgeSide(c)
    finally:
        c.cleanup()


def _captured(case: Case) -> bool:
    return os.path.exists(case.expected("peer", "out")) and os.path.exists(case.expected("peer", "err"))


CASES = all_cases()


def _diff(expected: str, got: str) -> str:
    """A unified diff for a failure's message (- what was expected, + minisge)."""
    return "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), "expected", "minisge"))


def _shown(rc: int, out: str, err: str) -> str:
    """One text of a run, so that a failure shows a single diff."""
    return f"exit {rc}\n--- stdout\n{out}--- stderr\n{err}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, side: MinisgeSide):
    if not _captured(case):
        pytest.skip(f"{case.name}: not captured from the peer yet (tests/conformance/capture.py)")
    peer_out = read_golden(case.expected("peer", "out"))
    peer_err = read_golden(case.expected("peer", "err"))
    f = peer_out.fields
    peer_jobs = [int(j) for j in f.get("jobs", "").split()]

    def theirs(text: str) -> str:
        return normalise_side(text, jobs=peer_jobs, host=f["host"], cwd=f["cwd"], root=f["root"],
                              execd_spool=f["execd_spool"], masks=case.masks)

    o = execute(case, side)

    def mine(text: str) -> str:
        return normalise_side(text, jobs=o.jobs, host=side.host, cwd=o.cwd, root=side.root,
                              execd_spool=side.execd_spool, masks=case.masks)

    assert len(o.jobs) == len(peer_jobs), f"minisge's case made jobs {o.jobs}, the peer's {peer_jobs}"
    got = _shown(o.rc, mine(o.out), mine(o.err))
    peer = _shown(peer_out.exit, theirs(peer_out.text), theirs(peer_err.text))
    if case.differs is None:
        assert got == peer, f"{case.name}: minisge differs from 8.1.9 ({peer_out.command}):\n{_diff(peer, got)}"
        return
    own_out, own_err = case.expected("minisge", "out"), case.expected("minisge", "err")
    if os.environ.get("CONFORMANCE_ACCEPT") == "1":
        command = mine(o.command)
        write_golden(own_out, command, o.user, o.rc, mine(o.out))
        write_golden(own_err, command, o.user, o.rc, mine(o.err))
    if not os.path.exists(own_out):
        pytest.fail(f"{case.name}: differs, but minisge's own text is not written down: run with CONFORMANCE_ACCEPT=1 "
                    f"and review it\n{got}")
    mo, me = read_golden(own_out), read_golden(own_err)
    own = _shown(mo.exit, mo.text, me.text)
    assert got == own, f"{case.name}: minisge's own text changed:\n{_diff(own, got)}"
    assert peer != got, f"{case.name}: minisge now prints what 8.1.9 does: drop `differs:` ({case.differs})"
