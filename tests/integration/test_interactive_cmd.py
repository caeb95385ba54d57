"""Interactive jobs (qrsh without -inherit, qrsh's login form, qlogin), qsh's
refusal and qping, through a real cell: the job runs under the execd's
shepherd as a real user, its data come back over the direct stream, the
login form on a real pty (python's pty module).  What 8.1.9 printed is in
tests/golden/qrsh, qlogin, qsh, qping (captured from the peer as sgetest)."""

from __future__ import annotations

import importlib
import io
import os
import pty
import pwd
import re
import select
import signal
import subprocess
import sys
import time

import pytest
from cellutil import WAIT, Cell, ensure_user, set_queue, touch, until_file
from golden import normalise, read_golden

USER = "msgeuser1"
# fields of accounting(5)
QNAME, JOB_NAME, OWNER, JOB_NUMBER, FAILED, EXIT, CATEGORY = 0, 4, 3, 5, 11, 12, 39

pytestmark = pytest.mark.root


@pytest.fixture
def cell():
    ensure_user(USER)
    c = Cell(slots=1).start()
    try:
        yield c
    finally:
        c.cleanup()


def _record(c: Cell, job_id: int) -> list[str]:
    return c.wait_records(job_id)[0]


def _job_ids(c: Cell) -> list[int]:
    return sorted(c.qstat_states())


def on_pty(c: Cell, cmd: str, argv: list[str], typed: bytes, prompt: bytes = b"$ ") -> tuple[int, bytes]:
    """Run command ``cmd`` as USER with a pty as its terminal; type ``typed``
    once ``prompt`` was seen; (exit status, all it wrote)."""
    pw = pwd.getpwnam(USER)
    mod = importlib.import_module(f"minisge.cli.{cmd}")
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        rc = 1
        try:
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
            os.environ.clear()
            os.environ.update(c.env(), HOME=pw.pw_dir, USER=USER, LOGNAME=USER, SHELL=pw.pw_shell, TERM="xterm")
            os.chdir(c.work)
            sys.stdin = io.TextIOWrapper(os.fdopen(0, "rb", closefd=False))  # not pytest's capture
            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), write_through=True)
            rc = mod.main(argv)
        finally:
            os._exit(rc or 0)
    out = b""
    typed_yet = False
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the child is gone
                break
            if not data:
                break
            out += data
        if not typed_yet and prompt in out:
            os.write(fd, typed)
            typed_yet = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out


# ---------------------------------------------------------------- the command form


def test_qrsh_relays_stdin_stdout_stderr_and_the_exit_status(cell):
    r = cell.run("qrsh", "-noshell", "/bin/sh", "-c", 'cat; echo "to err" >&2; id -un; pwd; echo $JOB_SCRIPT; exit 3',
                 user=USER, input="from stdin\n")
    assert r.rc == 3, r
    home = pwd.getpwnam(USER).pw_dir
    assert r.out == f"from stdin\n{USER}\n{home}\nQRSH\n"
    assert r.err == "to err\n"
    rec = _record(cell, 1)
    # as 8.1.9 writes it (job 409 of the peer): named after the command, failed 0, the exit status, "-I y"
    assert (rec[JOB_NAME], rec[OWNER], rec[FAILED], rec[EXIT], rec[CATEGORY]) == ("sh", USER, "0", "3", "-I y")


def test_qrsh_joins_the_command_for_the_login_shell_as_rsh_does(cell):
    # 8.1.9 (checked on the peer): "qrsh sh -c "echo err >&2; echo out"" runs "sh -c echo err >&2" then "echo out"
    r = cell.run("qrsh", "sh", "-c", "echo err >&2; echo out; exit 4", user=USER)
    assert (r.rc, r.out, r.err) == (4, "out\n", "\n"), r


def test_qrsh_now_n_and_nostdin(cell):
    r = cell.run("qrsh", "-now", "n", "-nostdin", "/bin/cat", user=USER, input="not read\n")
    assert (r.rc, r.out, r.err) == (0, "", ""), r
    assert _record(cell, 1)[CATEGORY] == "NONE"  # not immediate: no "-I y"


def test_qrsh_that_cannot_start_at_once_is_refused(cell):
    flag = os.path.join(cell.work, "go")
    job = cell.submit(until_file(cell, flag))
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the batch job runs")
    r = cell.run("qrsh", "/bin/true", user=USER)
    assert (r.rc, r.out, r.err) == (1, "", 'Your "qrsh" request could not be scheduled, try again later.\n'), r
    touch(flag)
    cell.wait_records(job)
    assert cell.records_of(2) == []  # the refused job never ran: no record
    assert 2 not in cell.qstat_states()


def test_qrsh_needs_an_interactive_queue(cell):
    set_queue(cell, "qtype", "BATCH")
    r = cell.run("qrsh", "/bin/true", user=USER)
    assert (r.rc, r.err) == (1, 'Your "qrsh" request could not be scheduled, try again later.\n'), r
    set_queue(cell, "qtype", "INTERACTIVE")
    assert cell.run("qrsh", "/bin/true", user=USER).rc == 0


def test_qrsh_refuses_what_8_1_9_refuses(cell):
    for case in ("qrsh/qrsh_-t", "qrsh/qrsh_-sync", "tickets/qrsh_-ot", "tickets/qrsh_-ot.no_arg",
                 "tickets/qlogin_-ot"):
        g = read_golden(case + ".stderr")
        r = cell.run(*g.command.split(), user=USER)
        assert (r.rc, r.err) == (g.exit, g.text), (case, r)


def _running_qrsh(cell: Cell, *argv: str) -> subprocess.Popen[bytes]:
    """qrsh (as root) in the background, once its job runs."""
    p = subprocess.Popen([sys.executable, "-m", "minisge.cli.qrsh", *argv], env=cell.env(), cwd=cell.work,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cell.wait_for(lambda: "r" in cell.qstat_states().values(), what="the interactive job runs")
    return p


def test_qdel_of_a_running_qrsh_ends_it_with_the_jobs_status(cell):
    flag = os.path.join(cell.work, "started")
    p = _running_qrsh(cell, "-noshell", "/bin/sh", "-c", f"touch {flag}; exec sleep 600")
    cell.wait_for(lambda: os.path.exists(flag), what="the job started")
    r = cell.run("qstat")
    assert re.search(r"^\s+1 \S+ sh\s+root\s+r ", r.out, re.MULTILINE), r.out
    assert cell.run("qdel", "1").rc == 0
    out, err = p.communicate(timeout=WAIT)
    # 8.1.9 (peer): qrsh says nothing and exits 137; the record has failed 100, exit status 137
    assert (p.returncode, out, err) == (137, b"", b"")
    rec = _record(cell, 1)
    assert (rec[FAILED], rec[EXIT]) == ("100", "137")


def test_sigint_of_qrsh_ends_its_job(cell):
    flag = os.path.join(cell.work, "started")
    p = _running_qrsh(cell, "-noshell", "/bin/sh", "-c", f"touch {flag}; exec sleep 600")
    cell.wait_for(lambda: os.path.exists(flag), what="the job started")
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=WAIT)
    assert p.returncode == 128 + signal.SIGINT
    rec = _record(cell, 1)  # the shepherd lost its qrsh and killed the job
    assert rec[EXIT] == "137"


def test_sigint_of_a_waiting_qrsh_deletes_its_job(cell):
    flag = os.path.join(cell.work, "go")
    job = cell.submit(until_file(cell, flag))
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the batch job runs")
    p = subprocess.Popen([sys.executable, "-m", "minisge.cli.qrsh", "-now", "n", "/bin/true"], env=cell.env(),
                         cwd=cell.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cell.wait_for(lambda: cell.qstat_states().get(job + 1) == "qw", what="the interactive job waits")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=WAIT)
    assert err == b"\nRequest for interactive job has been canceled.\n"
    cell.wait_for(lambda: job + 1 not in cell.qstat_states(), what="the job is deleted")
    touch(flag)


# ---------------------------------------------------------------- the login form


def test_qrsh_login_form_on_a_pty(cell):
    rc, out = on_pty(cell, "qrsh", [], b"tty; echo name=$JOB_NAME; exit 7\n")
    assert rc == 7, out
    text = out.decode(errors="replace")
    assert re.search(r"/dev/pts/\d+\r\nname=QRLOGIN\r\n", text), text
    assert not text.startswith("Your job")  # qrsh says nothing of its job (8.1.9)
    rec = _record(cell, 1)
    assert (rec[JOB_NAME], rec[EXIT], rec[CATEGORY]) == ("QRLOGIN", "7", "-I y")


def test_qlogin_says_what_8_1_9_says(cell):
    rc, out = on_pty(cell, "qlogin", [], b"echo hello; exit 5\n")
    assert rc == 5, out
    lines = out.decode(errors="replace").split("\r\n")
    # 8.1.9 (peer, job 415): these four lines, then the session
    assert lines[:4] == ['Your job 1 ("QLOGIN") has been submitted',
                         "waiting for interactive job to be scheduled ...",
                         "Your interactive job 1 has been successfully scheduled.",
                         f"Establishing builtin session to host {cell.host} ..."], lines
    assert "hello" in lines
    assert _record(cell, 1)[JOB_NAME] == "QLOGIN"


def test_pty_y_gives_a_command_a_terminal(cell):
    r = cell.run("qrsh", "-pty", "y", "-noshell", "/usr/bin/tty", user=USER)
    assert r.rc == 0 and re.fullmatch(r"/dev/pts/\d+\r?\n", r.out), r
    r = cell.run("qrsh", "-noshell", "/usr/bin/tty", user=USER)  # the command form: no pty by default
    assert (r.rc, r.out) == (1, "not a tty\n"), r


# ---------------------------------------------------------------- helps, qsh


@pytest.mark.parametrize("case", ["qlogin/qlogin_-help", "qsh/qsh_-help", "qping/qping_-help"])
def test_help_as_8_1_9(cell, case):
    g = read_golden(case)
    r = cell.run(*g.command.split(), user=USER)
    assert (r.rc, r.out) == (g.exit, g.text)


@pytest.mark.parametrize("case,display", [("qsh/qsh.no_display", None), ("qsh/qsh.empty_display", "")])
def test_qsh_without_a_display_as_8_1_9(cell, case, display):
    g = read_golden(case + ".stderr")
    env = cell.env()
    env.pop("DISPLAY", None)
    if display is not None:
        env["DISPLAY"] = display
    p = subprocess.run([sys.executable, "-m", "minisge.cli.qsh"], env=env, capture_output=True, text=True,
                       timeout=WAIT)
    assert (p.returncode, p.stderr) == (g.exit, g.text)


def test_qsh_with_a_display_is_refused(cell):
    p = subprocess.run([sys.executable, "-m", "minisge.cli.qsh"], env=cell.env(DISPLAY=":0"), capture_output=True,
                       text=True, timeout=WAIT)
    # minisge on purpose: no X clients on the execution hosts (qsh(1))
    assert p.returncode == 1
    assert p.stderr.startswith("error: qsh is not supported by minisge")
    assert cell.qstat_states() == {}


# ---------------------------------------------------------------- qping


def _ports(cell: Cell) -> tuple[str, str]:
    settings = open(os.path.join(cell.common, "settings.sh")).read()
    qm = re.search(r"SGE_QMASTER_PORT=(\d+)", settings)
    ex = re.search(r"SGE_EXECD_PORT=(\d+)", settings)
    assert qm and ex
    return qm.group(1), ex.group(1)


def _numbers(text: str) -> str:
    """The status's values differ by nature: run times, starts, counts."""
    text = re.sub(r"\(\d+\)", "(N)", text)
    text = re.sub(r"(run time \[s\]: +)\d+", r"\1N", text)
    text = re.sub(r"(no\. of connected clients: )\d+", r"\1N", text)
    text = re.sub(r"is up for \d+ seconds", "is up for N seconds", text)
    return re.sub(r"(info: +).*", r"\1INFO", text)


def test_qping_info_has_8_1_9s_lines(cell):
    qm_port, execd_port = _ports(cell)
    for case, port, name in (("qping/qping_-info_qmaster", qm_port, "qmaster"),
                             ("qping/qping_-info_execd", execd_port, "execd")):
        g = read_golden(case)
        r = cell.run("qping", "-info", cell.host, port, name, "1", user=USER)
        assert r.rc == g.exit == 0, r
        assert _numbers(normalise(r.out, hosts=[cell.host])) == _numbers(normalise(g.text, hosts=["vm"]))
        assert re.search(r"^info: +(MAIN|execd): R \(\d+\.\d\d\) \| OK$", r.out, re.MULTILINE), r.out


def test_qping_plain_lines(cell):
    qm_port, _ = _ports(cell)
    g = read_golden("qping/qping.plain")
    p = subprocess.Popen([sys.executable, "-m", "minisge.cli.qping", cell.host, qm_port, "qmaster", "1"],
                         env=cell.env(), stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    first = p.stdout.readline()
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=WAIT)
    want = g.text.splitlines(keepends=True)[0]
    assert _numbers(normalise(first, hosts=[cell.host])) == _numbers(normalise(want, hosts=["vm"])).replace(
        "6444", qm_port)


def test_qping_failures_as_8_1_9(cell):
    qm_port, _ = _ports(cell)
    cases = (("qping/qping_-info.wrong_name", [cell.host, qm_port, "execd", "1"], {"6444": qm_port}),
             ("qping/qping_-info.refused", [cell.host, "6449", "qmaster", "1"], {}),
             ("qping/qping_-info.unknown_host", ["nohost", qm_port, "qmaster", "1"], {}),
             ("qping/qping.bad_port", [cell.host, "x", "qmaster", "1"], {}))
    for case, args, ports in cases:
        g = read_golden(case)
        r = cell.run("qping", "-info", *args, user=USER)
        want_out = normalise(g.text, hosts=["vm"])
        for a, b in ports.items():
            want_out = want_out.replace(a, b)
        assert (r.rc, normalise(r.out, hosts=[cell.host])) == (g.exit, want_out), (case, r)
        try:
            err = normalise(read_golden(case + ".stderr").text, hosts=["vm"])
        except FileNotFoundError:
            err = ""
        assert normalise(r.err, hosts=[cell.host]) == err, (case, r)
    for case in ("qping/qping.no_args", "qping/qping.bogus_option"):
        g = read_golden(case + ".stderr")
        r = cell.run(*g.command.split(), user=USER)
        assert (r.rc, r.err) == (g.exit, g.text), (case, r)


def test_qstat_j_of_a_running_qrsh_as_8_1_9(cell):
    g = read_golden("qrsh/qstat_-j.qrsh_sleep_30")
    held = cell.submit("-h", "-b", "y", "/bin/true")  # job 1: the qrsh job is 2 (1 is its task's number too)
    flag = os.path.join(cell.work, "never")
    env = cell.env(TERM="xterm", LOGNAME="root", PATH="/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games",
                   SHELL="/bin/bash")
    p = subprocess.Popen([sys.executable, "-m", "minisge.cli.qrsh", "sleep", "30"], env=env, cwd="/tmp",
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        cell.wait_for(lambda: cell.qstat_states().get(2) == "r", what="the interactive job runs")
        r = cell.run("qstat", "-j", "2")
    finally:
        cell.run("qdel", "2", str(held))
        p.communicate(timeout=WAIT)
    assert not os.path.exists(flag)

    def norm(text: str, job: int, hosts: list[str], user: str, home: str) -> str:
        text = normalise(text, job_ids=[job], hosts=hosts, users={user: "USER"}, paths={home: "HOME"})
        text = re.sub(r"^((?:uid|gid): +)\d+$", r"\1ID", text, flags=re.MULTILINE)
        text = re.sub(r"QRSH_PORT=HOST:\d+", "QRSH_PORT=HOST:PORT", text)
        # minisge on purpose: the words of QRSH_COMMAND are separated by U+00FF (UTF-8), 8.1.9 by the byte 0xff
        text = text.replace("\udcff", "<FF>").replace("\xff", "<FF>")
        # scheduling info: 8.1.9 says "There are no messages available" (qstat -j's scheduling info is not ours)
        return re.sub(r"^scheduling info:.*\n", "", text, flags=re.MULTILINE)

    here = os.uname().nodename.split(".")[0]  # qrsh's host (sge_o_host, QRSH_PORT), the cell's execd is testhost
    assert norm(r.out, 2, [cell.host, here], "root", "/root") == norm(g.text, 413, ["vm"], "sgetest", "/home/sgetest")


def test_a_job_whose_qrsh_is_gone_ends_with_exit_1_and_leaves_the_queue_alone(cell):
    flag = os.path.join(cell.work, "go")
    job = cell.submit(until_file(cell, flag))
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the batch job runs")
    p = subprocess.Popen([sys.executable, "-m", "minisge.cli.qrsh", "-now", "n", "/bin/true"], env=cell.env(),
                         cwd=cell.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cell.wait_for(lambda: cell.qstat_states().get(job + 1) == "qw", what="the interactive job waits")
    p.kill()  # SIGKILL: qrsh cannot delete its job
    p.communicate(timeout=WAIT)
    touch(flag)
    rec = _record(cell, job + 1)  # it ran, found no qrsh at QRSH_PORT: exit 1, as 8.1.9's qrsh_starter
    assert (rec[FAILED], rec[EXIT]) == ("0", "1")
    assert " E" not in cell.run("qstat", "-f").out.split("\n", 2)[2]


@pytest.mark.parametrize("case,term", [("qrsh_-verify", "xterm"), ("qrsh_-verify.no_term", None)])
def test_qrsh_verify_shows_the_job_and_sends_nothing(cell, monkeypatch, case, term):
    # the job's TERM is qrsh's own (the captures' note says which); with none, 8.1.9's env_list is empty
    if term:
        monkeypatch.setenv("TERM", term)
    else:
        monkeypatch.delenv("TERM", raising=False)
    g = read_golden(f"qrsh/{case}")
    here = os.uname().nodename.split(".")[0]
    pw = pwd.getpwnam(USER)
    r = cell.run("qrsh", "-verify", "echo", "hi", user=USER, cwd="/tmp")
    assert r.rc == g.exit == 0, r

    def norm(text: str, hosts: list[str], user: str, home: str) -> str:
        text = normalise(text, hosts=hosts, users={user: "USER"}, paths={home: "HOME"})
        text = re.sub(r"^(sge_o_(?:path|shell|log_name):).*\n", "", text, flags=re.MULTILINE)  # the user's own
        return re.sub(r"^(env_list: +TERM=).*", r"\1TERM", text, flags=re.MULTILINE)

    assert norm(r.out, [here], USER, pw.pw_dir) == norm(g.text, ["vm"], "sgetest", "/home/sgetest")
    assert cell.qstat_states() == {}
