"""A cell a lab can trust, through the real daemons and commands, as real users:

- a user's oversized request is refused before it is read, a big job script
  is not, and a user's bytes in flight are capped;
- one user's idle connections cannot take the daemon's descriptors: over its
  count they are refused, idle ones are closed after the idle timeout, and
  root, another user and a ``qsub -sync y`` waiting for its job go on;
- a TCP peer is held to small frames until it proves the cell key, and its
  refusals are logged once per address a minute;
- a command whose daemon dies mid-request says so in 8.1.9's commlib words;
- a job's spool (its -v values, its script) and its execd task directory
  are not readable by another user, also in a spool written before;
- no user text reaches qstat, qstat -j or qacct with its control characters.
"""

from __future__ import annotations

import json
import os
import pwd
import resource
import signal
import socket
import stat
import struct

import pytest
from cellutil import WAIT, Cell, ensure_user, script, touch, until_file

from minisge import cell as cell_mod
from minisge import protocol
from minisge.protocol import catalogue
from minisge.protocol.client import call

pytestmark = pytest.mark.root

USER, OTHER = "msgeuser1", "msgeuser2"
MiB = 1024 * 1024


@pytest.fixture(scope="module", autouse=True)
def users():
    return [ensure_user(USER), ensure_user(OTHER)]


@pytest.fixture
def cell():
    c = Cell().start()
    try:
        yield c
    finally:
        c.cleanup()


def header(length: int) -> bytes:
    return struct.pack(">4sBI", b"MSGE", 1, length)


def as_user(user: str, fn, *args):
    """``fn(*args)`` in a forked child that is ``user`` (the daemon sees it
    through SO_PEERCRED); its JSON result.  ``fn`` may write ``"ready\\n"`` to
    the file descriptor given as its first argument when the parent may go on:
    :class:`Child` waits for that."""
    return Child(user, fn, *args).result()


class Child:
    def __init__(self, user: str, fn, *args):
        pw = pwd.getpwnam(user)
        ready_r, ready_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(ready_r)
                os.close(out_r)
                os.setgroups([])
                os.setgid(pw.pw_gid)
                os.setuid(pw.pw_uid)
                result = fn(ready_w, *args)
                os.write(out_w, json.dumps(result).encode())
            except BaseException as e:  # noqa: BLE001 - the child reports whatever ends it
                os.write(out_w, json.dumps({"child error": repr(e)}).encode())
                code = 1
            finally:
                os._exit(code)
        os.close(ready_w)
        os.close(out_w)
        self.pid, self.ready_r, self.out_r = pid, ready_r, out_r

    def wait_ready(self) -> None:
        os.read(self.ready_r, 6)

    def result(self):
        chunks = []
        while chunk := os.read(self.out_r, 65536):
            chunks.append(chunk)
        os.close(self.out_r)
        os.close(self.ready_r)
        os.waitpid(self.pid, 0)
        return json.loads(b"".join(chunks) or b"null")


def run_command(_ready, env, cwd, cmd, argv):
    """A command's main(argv) in this (forked, user's) process: [rc, stdout, stderr]."""
    import contextlib
    import importlib
    import io

    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = importlib.import_module(f"minisge.cli.{cmd}").main(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
    return [rc or 0, out.getvalue(), err.getvalue()]


def start_command(c: Cell, user: str, cmd: str, *argv: str) -> Child:
    """A command run as ``user`` that goes on while the test does (``qsub -sync y``), forked
    from the test's one thread: it holds no pipe of a command the test runs meanwhile."""
    env = dict(c.env(), HOME=pwd.getpwnam(user).pw_dir, USER=user, LOGNAME=user)
    return Child(user, run_command, env, c.work, cmd, list(argv))


def socket_path(c: Cell) -> str:
    return os.path.join(c.qmaster_spool, "qmaster.sock")


def read_reply(sock: socket.socket) -> str:
    """The error a daemon told a connection before it closed it ("" if none)."""
    try:
        msg = protocol.recv(sock)
    except (OSError, protocol.ProtocolError) as e:
        return f"no reply: {type(e).__name__}"
    return str(msg.get("error", ""))


# ---------------------------------------------------------------- frames


def test_a_users_oversized_request_is_refused_unread_and_a_big_script_is_not(cell):
    def oversized(_ready, path):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(WAIT)
        s.connect(path)
        s.sendall(header(2 * MiB) + b'{"op":"qstat","users":["' + b"u" * 1000)
        return read_reply(s)

    refusal = as_user(USER, oversized, socket_path(cell))
    assert refusal == f"protocol error: frame of {2 * MiB} bytes is over the limit of {MiB} for 'qstat'"
    big = os.path.join(cell.work, "big.sh")
    with open(big, "w") as f:
        f.write("#!/bin/sh\n" + "# padding\n" * (300 * 1024) + "exit 0\n")  # 3 MiB
    job = cell.submit(big, user=USER)
    assert cell.wait_records(job)[0][12] == "0"  # exit_status
    assert cell.run("qstat").rc == 0


def test_a_users_bytes_in_flight_are_capped(cell):
    def three_big_submissions(ready, path):
        socks, replies = [], []
        for _ in range(3):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(WAIT)
            s.connect(path)
            try:
                s.sendall(header(60 * MiB) + b'{"op":"submit","request":{"script":"' + b"x" * MiB)
            except OSError:
                pass  # refused (and closed) before all was sent: the refusal is still to be read
            socks.append(s)
        os.write(ready, b"ready\n")
        replies.append(read_reply(socks[2]))
        with socket.socket(socket.AF_UNIX) as s:  # a small request of the same user still fits
            s.settimeout(WAIT)
            s.connect(path)
            replies.append(protocol.request(s, {"op": catalogue.PING})["ok"])
        for s in socks:
            s.close()
        return replies

    child = Child(USER, three_big_submissions, socket_path(cell))
    child.wait_ready()
    assert cell.run("qstat", "-f").rc == 0  # root meanwhile
    third, small = child.result()
    uid = pwd.getpwnam(USER).pw_uid
    assert third.startswith(f"error: request refused: uid {uid} has {120 * MiB} bytes of requests in flight")
    assert small is True


# ---------------------------------------------------------------- connections


@pytest.fixture
def limited_cell(monkeypatch):
    """A cell whose Unix socket closes idle connections after 8 s and gives a
    user 20 connections (MINISGE_IDLE_TIMEOUT, MINISGE_USER_CONNECTIONS: the
    daemon's environment, read at its start)."""
    monkeypatch.setenv("MINISGE_IDLE_TIMEOUT", "8")
    monkeypatch.setenv("MINISGE_USER_CONNECTIONS", "20")
    c = Cell().start()
    try:
        yield c
    finally:
        c.cleanup()


def open_idle_connections(ready, path, n):
    """``n`` connections that ask nothing; what each was told before it was closed."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(WAIT)
        s.connect(path)
        socks.append(s)
    os.write(ready, b"ready\n")
    told = [read_reply(s) for s in socks]
    for s in socks:
        s.close()
    return told


REFUSED = "error: commlib error: max. connection count reached"
IDLE = "error: commlib error: closing idle connection after 8 s without a request"


def test_one_user_cannot_exhaust_the_daemons_connections(limited_cell):
    c = limited_cell
    go = os.path.join(c.work, "go")
    waiter = start_command(c, USER, "qsub", "-sync", "y", "-b", "y", until_file(c, go))
    try:
        c.wait_for(lambda: "r" in c.qstat_states().values(), what="the -sync job running")
        child = Child(USER, open_idle_connections, socket_path(c), 30)
        child.wait_ready()
        assert c.run("qstat", "-u", "*").rc == 0  # root, while the user holds its connections
        assert c.run("qstat", "-u", "*", user=OTHER).rc == 0  # another user too
        told = child.result()
        refused = [t for t in told if t.startswith(REFUSED)]
        idle = [t for t in told if t == IDLE]
        assert len(refused) + len(idle) == 30, told
        assert refused and len(idle) <= 19  # the qsub -sync y holds one of the user's 20
        uid = pwd.getpwnam(USER).pw_uid
        assert refused[0] == f"{REFUSED} (uid {uid} holds 20 connections)"
        # the qsub -sync y outlived the idle timeout: it has a request in progress
        assert os.waitpid(waiter.pid, os.WNOHANG) == (0, 0)
    finally:
        touch(go)
    rc, out, err = waiter.result()
    assert rc == 0 and "exited with exit code 0" in out, (rc, out, err)
    messages = open(os.path.join(c.qmaster_spool, "messages")).read()
    assert messages.count(f"refused a connection of uid {uid}") in (1, 2)  # a line per user a minute, not 11
    # root is not counted: all its connections are let in, and closed when idle
    assert as_user("root", open_idle_connections, socket_path(c), 30) == [IDLE] * 30


def test_the_daemon_raises_its_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 1024:
        pytest.skip(f"the hard limit of open files is {hard}: nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # what `minisge start` and its daemon inherit
    try:
        c = Cell().start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        with open(f"/proc/{c.daemon_pid()}/limits") as f:
            line = next(ln for ln in f if ln.startswith("Max open files"))
        assert line.split()[3:5] == [str(hard), str(hard)]
    finally:
        c.cleanup()


# ---------------------------------------------------------------- TCP before the handshake


@pytest.fixture
def roles():
    c = Cell(host="master").start_roles(("node1",), slots=1)
    try:
        yield c
    finally:
        c.cleanup()


def qmaster_port(c: Cell) -> int:
    for line in open(os.path.join(c.common, "settings.sh")):
        if "SGE_QMASTER_PORT=" in line:
            return int(line.split("=")[1])
    raise AssertionError("no port")


def refused_hello(c: Cell, port: int, data: bytes) -> bytes:
    """Connect (in TLS with the cell certificate, as an execd), read the hello,
    send ``data``; what came back before the close."""
    with c.tls().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=WAIT)) as s:
        protocol.recv(s)
        s.sendall(data)
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except OSError:
            pass
        return got


def test_a_tcp_peer_is_held_to_small_frames_and_its_refusals_to_a_line_a_minute(roles):
    port = qmaster_port(roles)
    messages = os.path.join(roles.qmaster_spool, "messages")
    refusal = refused_hello(roles, port, header(MiB) + b'{"op":"auth","role":"execd"')
    assert b"authentication with the cell key failed" in refusal
    roles.wait_for(lambda: "over the limit of 4096" in open(messages).read(), what="the refusal logged")
    for _ in range(30):  # a peer without the key, again and again
        refused_hello(roles, port, protocol.encode({"op": "auth", "role": "execd", "name": "x", "nonce": "0" * 64,
                                             "proof": "0" * 64}))
    job = roles.submit("-b", "y", "/bin/true")  # the cell goes on
    roles.wait_records(job)
    assert open(messages).read().count("refused connection from 127.0.0.1") in (1, 2)  # a line a minute, not 31


# ---------------------------------------------------------------- commands whose daemon fails


def test_qsub_sync_says_in_commlib_words_that_the_qmaster_went_away(cell):
    go = os.path.join(cell.work, "go")
    waiter = start_command(cell, USER, "qsub", "-sync", "y", "-b", "y", until_file(cell, go))
    try:
        cell.wait_for(lambda: "r" in cell.qstat_states().values(), what="the -sync job running")
        os.kill(cell.daemon_pid(), signal.SIGKILL)
        rc, out, err = waiter.result()
    finally:
        touch(go)
    assert rc == 1
    assert err == 'error: commlib error: got read error (closing "testhost/qmaster/1")\n', (out, err)
    assert "Traceback" not in out + err


# ---------------------------------------------------------------- the spool's modes


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def readable_by(user: str, paths: list[str]) -> dict[str, str]:
    def probe(_ready, paths):
        out = {}
        for p in paths:
            try:
                if os.path.isdir(p):
                    os.listdir(p)
                else:
                    with open(p, "rb") as f:
                        f.read(1)
                out[p] = "read"
            except OSError as e:
                out[p] = type(e).__name__
        return out

    return as_user(user, probe, paths)


def test_another_user_cannot_read_a_jobs_spool_or_its_script(cell):
    go = os.path.join(cell.work, "go")
    secret = script(cell, "secret.sh", f"# SECRET=hunter2\nwhile [ ! -e {go} ]; do sleep 0.1; done")
    job = cell.submit("-v", "SECRET=hunter2", secret, user=USER)
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the job running")
    spool = cell.qmaster_spool
    job_file = os.path.join(spool, "jobs", "00", "0000", f"{job:04d}")
    script_copy = os.path.join(spool, "job_scripts", str(job))
    task = os.path.join(cell.root, "default", "spool", "testhost", "active_jobs", f"{job}.1")
    secrets = [job_file, os.path.join(spool, "jobs"), script_copy, os.path.join(spool, "job_scripts"),
               os.path.join(task, "config"), task]
    assert set(readable_by(OTHER, secrets).values()) == {"PermissionError"}
    assert readable_by(USER, [script_copy]) == {script_copy: "read"}  # its owner's (the job runs it)
    # 8.1.9 shows another user's env_list in qstat -j: so does minisge
    assert "SECRET=hunter2" in cell.run("qstat", "-j", str(job), user=OTHER).out

    # a spool written before: the next start gives it the modes
    cell.minisge("stop")
    for path, old in ((job_file, 0o644), (os.path.join(spool, "jobs"), 0o755), (script_copy, 0o755),
                      (os.path.join(spool, "jobs", "00"), 0o755), (os.path.join(spool, "jobs", "00", "0000"), 0o755),
                      (os.path.join(spool, "job_scripts"), 0o755), (os.path.join(task, "config"), 0o644),
                      (task, 0o755)):
        os.chmod(path, old)
    os.chown(script_copy, 0, 0)
    assert readable_by(OTHER, [job_file]) == {job_file: "read"}
    cell.start()
    assert set(readable_by(OTHER, secrets).values()) == {"PermissionError"}
    assert (mode(job_file), mode(script_copy), mode(os.path.join(task, "config")), mode(task)) == (
        0o600, 0o700, 0o600, 0o711)
    assert os.stat(script_copy).st_uid == pwd.getpwnam(USER).pw_uid
    touch(go)
    assert cell.wait_records(job)[0][12] == "0"


# ---------------------------------------------------------------- control characters


def test_no_user_text_reaches_qstat_or_qacct_with_its_control_characters(cell):
    weird = os.path.join(cell.work, "w\nd\x1b[2J")
    os.makedirs(weird)
    reply = call({"op": catalogue.SUBMIT, "request": {
        "job_name": "crafted", "binary": True, "command": "/bin/true", "args": ["a\nowner: root"],
        "cwd": weird, "env": {"X": "1\nforged: line", "Y": "\x1b]0;owned\x07"},
        "stdout_path": [{"host": None, "path": "/dev/null\rz"}], "hold": True,
    }}, cell=cell_mod.Cell(cell.root))
    assert reply["ok"], reply
    job = reply["job_id"]
    for args in (("-j", str(job)), ("-u", "*"), ("-r", "-u", "*"), ("-f", "-u", "*"), ("-j", str(job), "-xml")):
        r = cell.run("qstat", *args, user=OTHER)
        assert r.rc == 0, r
        assert not any(c in r.out for c in "\x1b\x07\r"), (args, r.out)
    out = cell.run("qstat", "-j", str(job)).out.splitlines()
    assert "env_list:                   X=1\\nforged: line,Y=\\x1b]0;owned\\x07" in out
    assert "job_args:                   a\\nowner: root" in out
    assert f"cwd:                        {cell.work}/w\\nd\\x1b[2J" in out
    assert not any(line.startswith(("forged", "owner: root", "d")) for line in out)

    # an accounting file written before (or by anyone with the admin's rights) cannot forge qacct's lines
    done = cell.submit("-b", "y", "/bin/true", user=USER)
    fields = list(cell.wait_records(done)[0])
    fields[4:7] = ["evil\x1b[2Jname", "99", "acc\rount"]
    with open(cell.accounting, "a") as f:
        f.write(":".join(fields) + "\n")
    r = cell.run("qacct", "-j", "99")
    assert r.rc == 0 and "\x1b" not in r.out and "\r" not in r.out, r
    assert "jobname      evil\\x1b[2Jname" in r.out

    # qsub refuses what 8.1.9 refuses, in its words
    for option, value, words in (("-N", "a\nb", "Return not allowed in objectname"),
                                 ("-A", "a:b", "Colon (':') not allowed in objectname"),
                                 ("-A", "a\nb", "Return not allowed in objectname")):
        r = cell.run("qsub", option, value, "-b", "y", "/bin/true", user=USER)
        assert (r.rc, r.err) == (1, f"Unable to run job: {words}\nExiting.\n"), (option, r)
