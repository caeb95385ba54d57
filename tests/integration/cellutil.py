"""Real cells for integration tests: a temporary SGE_ROOT, the real daemon
started with ``minisge start`` (or the separate roles), and the real commands
run as processes — as root, or as a real Unix test user.

Test users: the commands import nothing but the standard library and
minisge, so a user's command runs as a *forked* child of the test process
that drops to the user's uid/gid before it calls the command's ``main``:
the daemon sees the user through SO_PEERCRED exactly as it would a login
shell's ``qsub`` (the test interpreter lives under /root, which other users
cannot exec).

The single binary: with ``MINISGE_TEST_BINARY`` set to the ``bin/`` directory
of an unpacked tarball (packaging/build.sh; .ci/run sets it for a subset of
these tests), every command and daemon runs through the binary's links
instead, and a test user's command is that program exec'd as the user (the
directory must be one the test users may read and execute).
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import importlib
import io
import os
import pwd
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from minisge.protocol import tls

TEST_USERS = ("msgeuser1", "msgeuser2")

# the bin/ directory of the single binary's tarball, or "" (the source tree's Python)
BINARY = os.environ.get("MINISGE_TEST_BINARY", "")


def command_line(cmd: str, *args: str) -> list[str]:
    """How a test runs command ``cmd`` (``minisge``, ``qsub`` ...): through
    the single binary's link when MINISGE_TEST_BINARY names one, else
    ``python -m minisge.cli.CMD`` with the test's own interpreter."""
    if BINARY:
        return [os.path.join(BINARY, cmd), *args]
    return [sys.executable, "-m", f"minisge.cli.{cmd}", *args]

# How long a test waits for a condition, a command or a daemon before it
# fails.  Generous: a wait ends as soon as its condition holds, so the bound
# costs nothing when all is well, and the machine may be loaded many times
# over (CI runners, helpers side by side).  Tests wait on conditions, never
# for a fixed time.
WAIT = 120.0


USERS_LOCK = "/run/minisge-test-users.lock"


@contextlib.contextmanager
def users_lock() -> Iterator[None]:
    """Held around useradd/userdel: the test workers (pytest -n) create and
    remove users side by side, and useradd fails outright ("cannot lock
    /etc/passwd") when another one holds the password files."""
    fd = os.open(USERS_LOCK if os.path.isdir("/run") else USERS_LOCK.replace("/run", "/tmp"),
                 os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def ensure_user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    with users_lock():
        try:
            return pwd.getpwnam(name)  # another worker made it meanwhile
        except KeyError:
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", name], capture_output=True)
            return pwd.getpwnam(name)


def kill_cell_processes(root: str) -> None:
    """SIGKILL every process whose environment names this cell's SGE_ROOT:
    shepherds (forked from the daemon) and jobs a test left running or
    stopped (a suspended job would otherwise outlive the test)."""
    marker = f"SGE_ROOT={root}".encode()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            os.kill(int(entry), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


@dataclass
class Result:
    rc: int
    out: str
    err: str


class Cell:
    def __init__(self, host: str = "testhost", slots: int = 2, environ: dict[str, str] | None = None):
        self.dir = tempfile.mkdtemp(prefix="minisge-test-")
        self.environ = environ or {}  # more of the environment of the daemons and commands
        os.chmod(self.dir, 0o755)
        self.root = os.path.join(self.dir, "root")
        self.host = host
        self.slots = slots
        self.procs: list[subprocess.Popen] = []
        self.work = os.path.join(self.dir, "work")
        os.makedirs(self.work)
        os.chmod(self.work, 0o777 | 0o1000)

    # ------------------------------------------------------------ environment
    def env(self, **extra) -> dict:
        e = dict(os.environ)
        for k in ("SGE_QMASTER_PORT", "SGE_EXECD_PORT", "SGE_CELL"):
            e.pop(k, None)
        # the daemons and commands keep the bytecode they compile (a cell's start compiles
        # the editable sources anew when told not to: 2.4 s instead of 0.6 s)
        e.pop("PYTHONDONTWRITEBYTECODE", None)
        e["SGE_ROOT"] = self.root
        # the machine's real load must not put all.q (np_load_avg=1.75) in alarm
        e.setdefault("MINISGE_LOAD_OVERRIDE", "np_load_avg=0.000000")
        # qdel -f of a user who may not force: its twelve dots, not its minute (cli/qdel.py)
        e.setdefault("MINISGE_QDEL_DOT_SECONDS", "0.05")
        e.update(self.environ)
        e.update(extra)
        return e

    @property
    def common(self) -> str:
        return os.path.join(self.root, "default", "common")

    @property
    def qmaster_spool(self) -> str:
        return os.path.join(self.root, "default", "spool", "qmaster")

    @property
    def accounting(self) -> str:
        return os.path.join(self.common, "accounting")

    def tls(self) -> ssl.SSLContext:
        """A TLS context with the cell certificate, to talk to the qmaster's TCP port as an execd does."""
        return tls.client_context(os.path.join(self.common, "cell_tls.pem"))

    # ------------------------------------------------------------ daemons
    def minisge(self, *args: str, check: bool = True) -> Result:
        p = subprocess.run(command_line("minisge", *args), env=self.env(),
                           capture_output=True, text=True, timeout=WAIT)
        if check and p.returncode != 0:
            raise AssertionError(f"minisge {' '.join(args)} failed: {p.stdout}{p.stderr}")
        return Result(p.returncode, p.stdout, p.stderr)

    def start(self) -> Cell:
        try:
            self.minisge("start", "--hostname", self.host, "--slots", str(self.slots))
        except BaseException:  # whatever did start is not left running (the caller's cleanup never comes)
            self.cleanup()
            raise
        return self

    def start_crashing_before_shepherd(self, n: int) -> int:
        """Init and start the cell with the execd's crash hook
        (``MINISGE_TEST_CRASH_BEFORE_SHEPHERD``): its daemon kills itself
        when about to ask for its ``n``-th shepherd, after that task's
        directory was made.  The daemon's pid."""
        self.minisge("init", "--hostname", self.host, "--slots", str(self.slots))
        p = subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "start", "--hostname", self.host],
                           env=self.env(MINISGE_TEST_CRASH_BEFORE_SHEPHERD=str(n)), capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 0, p
        return self.daemon_pid()

    def daemon_pid(self) -> int:
        with open(os.path.join(self.qmaster_spool, "qmaster.pid")) as f:
            return int(f.read())

    def spawn(self, *args: str, log: str) -> subprocess.Popen:
        out = open(os.path.join(self.dir, log), "ab")
        p = subprocess.Popen(command_line("minisge", *args), env=self.env(),
                             stdout=out, stderr=out, start_new_session=True)
        self.procs.append(p)
        return p

    def start_roles(self, hosts=("node1", "node2"), slots: int = 2) -> Cell:
        """A qmaster (host ``master``, made with ``minisge init``) and one
        execd posing as each of ``hosts`` (all in @allhosts), over TCP;
        returns once every execd has connected; when one does not, nothing
        of the cell is left running (the caller's cleanup never comes)."""
        try:
            return self._start_roles(hosts, slots)
        except BaseException:
            self.cleanup()
            raise

    def _start_roles(self, hosts: Sequence[str], slots: int) -> Cell:
        self.minisge("init", "--hostname", "master", "--slots", str(slots))
        with open(os.path.join(self.qmaster_spool, "hostgroups", "@allhosts"), "w") as f:
            f.write("group_name @allhosts\nhostlist " + " ".join(hosts) + "\n")
        self.spawn("qmaster", "--hostname", "master", log="qmaster.log")
        self.wait_for(lambda: os.path.exists(os.path.join(self.qmaster_spool, "qmaster.pid")), what="qmaster")
        for h in hosts:
            self.spawn("execd", "--hostname", h, "--qmaster", "127.0.0.1", log=f"execd-{h}.log")
        messages = os.path.join(self.qmaster_spool, "messages")
        for h in hosts:
            self.wait_for(lambda h=h: f"execd {h} connected" in open(messages).read(), what=f"execd {h}")
        return self

    def stop(self) -> None:
        # daemons this test spawned are its children: stop and reap them here
        # (a child that has exited stays a zombie until its parent reaps it)
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(WAIT)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs.clear()
        self.minisge("stop", check=False)

    def cleanup(self) -> None:
        self.stop()
        # shepherds and jobs still running (or suspended) belong to this cell: end them
        subprocess.run(["pkill", "-f", self.dir], capture_output=True)
        kill_cell_processes(self.root)
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------ commands
    def run(self, cmd: str, *args: str, user: str | None = None, input: str | None = None,
            cwd: str | None = None, timeout: float = WAIT) -> Result:
        if user is None:
            p = subprocess.run(command_line(cmd, *args), env=self.env(),
                               capture_output=True, text=True, input=input, cwd=cwd or self.work,
                               timeout=timeout)
            return Result(p.returncode, p.stdout, p.stderr)
        return run_as(user, cmd, list(args), env=self.env(), input=input, cwd=cwd or self.work, timeout=timeout)

    def submit(self, *args: str, user: str | None = None, input: str | None = None, cwd: str | None = None) -> int:
        r = self.run("qsub", "-terse", *args, user=user, input=input, cwd=cwd)
        assert r.rc == 0, r
        return int(r.out.strip().split(".")[0])

    def accounting_records(self) -> list[list[str]]:
        try:
            with open(self.accounting) as f:
                return [ln.rstrip("\n").split(":") for ln in f if not ln.startswith("#") and len(ln) > 1]
        except FileNotFoundError:
            return []

    def records_of(self, job_id: int) -> list[list[str]]:
        return [r for r in self.accounting_records() if r[5] == str(job_id)]

    def wait_for(self, predicate, timeout: float = WAIT, what: str = "condition"):
        return wait_for(predicate, timeout, what)

    def wait_records(self, job_id: int, n: int = 1, timeout: float = WAIT) -> list[list[str]]:
        return self.wait_for(lambda: (r := self.records_of(job_id)) and len(r) >= n and r,
                             timeout, f"{n} accounting record(s) of job {job_id}")

    def qstat_states(self) -> dict[int, str]:
        r = self.run("qstat", "-u", "*")
        out = {}
        for line in r.out.splitlines()[2:]:
            parts = line.split()
            out.setdefault(int(parts[0]), parts[4])
        return out


def run_as(user: str, cmd: str, argv: list[str], *, env: dict, input: str | None, cwd: str,
           timeout: float) -> Result:
    """Run command ``cmd``'s main(argv) in a forked child that is ``user``
    (with MINISGE_TEST_BINARY: the binary's ``cmd``, exec'd as ``user``)."""
    pw = pwd.getpwnam(user)
    if BINARY:
        return run_binary_as(pw, cmd, argv, env=env, input=input, cwd=cwd, timeout=timeout)
    mod = importlib.import_module(f"minisge.cli.{cmd}")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:
            os.close(out_r)
            os.close(err_r)
            os.close(in_w)
            os.setgroups(user_groups(user))
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            os.environ.clear()
            # what a login gives the user (CI runners may have no SHELL: qsub then sends no SGE_O_SHELL)
            os.environ.update(env, HOME=pw.pw_dir, USER=user, LOGNAME=user, SHELL=pw.pw_shell)
            os.chdir(cwd)
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False))
            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
            rc = mod.main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001 - the forked child reports whatever ends it, then exits
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(rc or 0)
    os.close(out_w)
    os.close(err_w)
    os.close(in_r)
    if input:
        os.write(in_w, input.encode())
    os.close(in_w)
    out = _read_all(out_r)
    err = _read_all(err_r)
    _, status = os.waitpid(pid, 0)
    return Result(os.waitstatus_to_exitcode(status), out, err)


def user_groups(user: str) -> list[int]:
    """The supplementary groups of ``user`` (the group database's members)."""
    return [g.gr_gid for g in grp.getgrall() if user in g.gr_mem]


def run_binary_as(pw: pwd.struct_passwd, cmd: str, argv: list[str], *, env: dict, input: str | None,
                  cwd: str, timeout: float) -> Result:
    """The single binary's command ``cmd`` run as the user ``pw``, with what a
    login gives the user, as :func:`run_as` does in-process."""
    user_env = dict(env, HOME=pw.pw_dir, USER=pw.pw_name, LOGNAME=pw.pw_name, SHELL=pw.pw_shell)
    stdin = None if input is not None else subprocess.DEVNULL  # as run_as's empty pipe
    p = subprocess.run(command_line(cmd, *argv), env=user_env, cwd=cwd, input=input, stdin=stdin,
                       capture_output=True, text=True, timeout=timeout, user=pw.pw_uid, group=pw.pw_gid,
                       extra_groups=user_groups(pw.pw_name))
    return Result(p.returncode, p.stdout, p.stderr)


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


# ---------------------------------------------------------------- test helpers
def wait_for(predicate, timeout: float = WAIT, what: str = "condition"):
    """``predicate()``'s first true value, polled until ``timeout`` seconds
    have passed (then AssertionError naming ``what``)."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def proc_state(pid: int) -> str:
    """The state letter of process ``pid`` (proc(5): R, S, T, Z ...), "" when
    there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return ""


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (no such process, or a zombie its
    parent has not reaped yet)."""
    return proc_state(pid) in ("", "Z", "X")


def script(c: Cell, name: str, body: str) -> str:
    """An executable ``#!/bin/sh`` job script ``name`` in the cell's work directory."""
    path = os.path.join(c.work, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def until_file(c: Cell, path: str) -> str:
    """An executable job script that runs until ``path`` exists: a job that
    lasts until the test lets it end (:func:`touch`), not for a time a loaded
    machine may let pass unseen."""
    return script(c, f"until-{os.path.basename(path)}.sh", f"while [ ! -e {path} ]; do sleep 0.1; done")


def touch(path: str) -> None:
    open(path, "w").close()


def set_queue(c: Cell, attr: str, value: str) -> None:
    """``qconf -mattr queue ATTR VALUE all.q``, which must succeed."""
    r = c.run("qconf", "-mattr", "queue", attr, value, "all.q")
    assert r.rc == 0, r


def user_cell_fixtures(user_name: str):
    """The fixtures ``user`` (the real Unix test user, created when missing)
    and ``cell`` (a started all-in-one cell, after the user exists), for a
    test module to bind: ``user, cell = user_cell_fixtures(USER)``."""
    import pytest

    @pytest.fixture(scope="module", name="user")
    def user_fixture():
        return ensure_user(user_name)

    @pytest.fixture(name="cell")
    def cell_fixture(user):
        c = Cell().start()
        try:
            yield c
        finally:
            c.cleanup()

    return user_fixture, cell_fixture
