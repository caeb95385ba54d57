"""The README's first line, as it stands, run by a new user in a copy of this
source tree with the machine's own ``python3`` (issue 13, item 1): it makes
the virtual environment ~/.minisge, installs minisge into it (pip, from
PyPI: needs the network), starts a cell and runs a first job; a new login
shell then finds the commands and the manual pages through the cell's
settings.sh.  Slow (an install); bench/fresh_debian.sh does the same on a
debootstrapped Debian 12."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import pytest
from cellutil import WAIT, kill_cell_processes, users_lock

pytestmark = [pytest.mark.root, pytest.mark.slow]

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_lines() -> list[str]:
    with open(os.path.join(TOP, "README.md"), encoding="utf-8") as f:
        quick_start = f.read().split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", quick_start, re.S)
    assert block is not None
    return block.group(1).strip().splitlines()


def as_user(user: str, command: str, timeout: float = WAIT * 2) -> subprocess.CompletedProcess[str]:
    """``command`` in a login shell of ``user`` (su -: the login's PATH and HOME)."""
    try:
        return subprocess.run(["su", "-", user, "-c", command], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{command}: no end within {timeout} s; it said: {e.stdout!r} {e.stderr!r}") from None


@pytest.fixture
def newcomer():
    """A new Unix user with a home of its own, removed afterwards."""
    base = tempfile.mkdtemp(prefix="minisge-newcomer-")
    os.chmod(base, 0o755)
    name = f"msgenew{os.getpid() % 100000}"
    home = os.path.join(base, "home")
    with users_lock():
        subprocess.run(["useradd", "-m", "-d", home, "-s", "/bin/sh", name], check=True, capture_output=True)
    try:
        yield name, home
    finally:
        as_user(name, "~/.minisge/bin/minisge stop", timeout=WAIT)
        kill_cell_processes(os.path.join(home, ".minisge"))
        with users_lock():
            subprocess.run(["userdel", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _cell_state(user: str, home: str) -> str:
    """qstat -f, qstat -j 1 and the end of the daemon's log: why a first job did not end."""
    settings = ". ~/.minisge/default/common/settings.sh"
    said = [as_user(user, f"{settings} && {cmd}", timeout=WAIT) for cmd in ("qstat -f", "qstat -j 1")]
    try:
        with open(os.path.join(home, ".minisge", "default", "spool", "qmaster", "messages")) as f:
            log = f.read()[-4000:]
    except OSError as err:
        log = str(err)
    return "".join(f"\n--- {r.args[-1]}\n{r.stdout}{r.stderr}" for r in said) + f"\n--- messages\n{log}"


def test_the_readme_has_the_two_lines_ci_runs():
    first, second = readme_lines()  # .ci/run runs the second
    assert "minisge start" in first and "qsub" in first and "pytest" in second


def test_the_first_line_installs_starts_a_cell_and_runs_a_job(newcomer):
    user, home = newcomer
    probe = as_user(user, "python3 -m venv --help >/dev/null && python3 -c 'import ensurepip'")
    if probe.returncode != 0:
        pytest.skip(f"this machine's python3 has no venv with pip for a user: {probe.stderr.strip()}")
    src = os.path.join(home, "minisge")
    shutil.copytree(TOP, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                                            "__pycache__", ".pytest_cache", ".hypothesis"))
    subprocess.run(["chown", "-R", f"{user}:", src], check=True)
    first = readme_lines()[0]
    # as every test's cell (cellutil.Cell.env): the machine's real load, with the other
    # tests beside this one, must not put all.q in alarm (np_load_avg=1.75), which would
    # keep the first job pending (README, "When jobs stay in qw")
    try:
        r = as_user(user, f"export MINISGE_LOAD_OVERRIDE=np_load_avg=0.000000; cd minisge && {first}")
    except AssertionError as e:  # no end: say what the cell thought of the job
        raise AssertionError(f"{e}\n{_cell_state(user, home)}") from None
    assert r.returncode == 0, r.stdout + r.stderr + _cell_state(user, home)
    assert r.stdout.splitlines()[-1] == "Job 1 exited with exit code 0."
    with open(os.path.join(home, "echo.o1")) as f:
        assert f.read() == "hello from minisge\n"
    # a new login: settings.sh gives the commands and the manual pages
    r = as_user(user, ". ~/.minisge/default/common/settings.sh && command -v qsub && command -v qstat && "
                      "command -v minisge && "
                      "man -w minisge qsub && man -w 5 queue_conf && qstat -f")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    env = os.path.join(home, ".minisge")
    assert lines[:6] == [f"{env}/bin/qsub", f"{env}/bin/qstat", f"{env}/bin/minisge",
                         f"{env}/share/man/man1/minisge.1", f"{env}/share/man/man1/qsub.1",
                         f"{env}/share/man/man5/queue_conf.5"]
    assert lines[6].startswith("queuename")
