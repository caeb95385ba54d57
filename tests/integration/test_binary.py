"""The single binary's tarball (packaging/build.sh) as a lab installs it:
every command of the table is a link in its bin/, the daemons and the
shepherds' launcher run as the binary itself, and its share/man holds a page
for every command.  Runs only when MINISGE_TEST_BINARY names the tarball's
bin/ directory (.ci/run builds the binary and sets it, then runs this file
and a subset of the other integration tests through the binary)."""

from __future__ import annotations

import os
import subprocess

import pytest
from cellutil import BINARY, Cell, touch, until_file, wait_for

from minisge.cli.commands import COMMANDS

pytestmark = [pytest.mark.root, pytest.mark.skipif(not BINARY, reason="MINISGE_TEST_BINARY is not set")]


def the_binary() -> str:
    return os.path.realpath(os.path.join(BINARY, "minisge"))


def exe_of(pid: int) -> str:
    return os.path.realpath(f"/proc/{pid}/exe")


def test_every_command_of_the_table_is_a_link_to_the_one_binary():
    """bin/minisge is the binary (its libraries in bin/_internal/), every
    other name of the table a link to it, and nothing else is there."""
    binary = the_binary()
    assert binary == os.path.join(os.path.realpath(BINARY), "minisge")
    assert not os.path.islink(binary) and os.access(binary, os.X_OK)
    for name in set(COMMANDS) - {"minisge"}:
        link = os.path.join(BINARY, name)
        assert os.path.islink(link) and os.readlink(link) == "minisge", name
    extra = set(os.listdir(BINARY)) - set(COMMANDS) - {"_internal"}
    assert not extra, f"programs that the table does not name: {sorted(extra)}"


def test_every_command_answers_as_itself():
    """Each link runs its own command: ``-help`` prints that command's usage
    (Grid Engine's commands print their name and version on the first line)."""
    for name in COMMANDS:
        if name in ("minisge", "qrsh"):
            continue  # minisge's usage and qrsh -help are checked below
        if name == "sge_share_mon":  # 8.1.9's has no -help (getopt): a bad option prints its usage, exit 1
            p = subprocess.run([os.path.join(BINARY, name), "-Z"], capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            assert p.returncode == 1 and p.stderr.splitlines()[1].startswith("usage: sge_share_mon "), p
            continue
        p = subprocess.run([os.path.join(BINARY, name), "-help"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0, (name, p.stderr)
        assert p.stdout.splitlines()[1].startswith(f"usage: {name} "), (name, p.stdout[:200])
    p = subprocess.run([os.path.join(BINARY, "minisge"), "-help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "start" in p.stdout, p


def test_the_tarball_has_a_manual_page_for_every_command():
    man1 = os.path.join(os.path.dirname(BINARY), "share", "man", "man1")
    for name in COMMANDS:
        assert os.path.isfile(os.path.join(man1, f"{name}.1")), name
    man5 = os.path.join(os.path.dirname(BINARY), "share", "man", "man5")
    assert os.path.isfile(os.path.join(man5, "queue_conf.5"))


def parent_of(pid: int) -> int:
    """The parent process id of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def processes_of(c: Cell) -> list[tuple[int, str, list[bytes]]]:
    """(pid, comm, argv) of every process whose environment names cell ``c``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if f"SGE_ROOT={c.root}".encode() not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        found.append((int(entry), comm, argv))
    return found


def test_the_daemon_the_shepherds_launcher_and_the_shepherds_are_the_binary(users):
    """The daemon and the launcher run as the binary, and a batch job's
    shepherd is the C shepherd the binary carries (in _internal/, beside
    its plan's module), named as 8.1.9's is."""
    c = Cell().start()
    try:
        binary = the_binary()
        assert exe_of(c.daemon_pid()) == binary
        done = os.path.join(c.work, "done")
        job = c.submit("-b", "y", until_file(c, done), user=users[0].pw_name)

        def shepherd() -> list[tuple[int, str, list[bytes]]]:
            # the shepherd, not its child in the instant between fork and the job's exec
            found = [p for p in processes_of(c) if p[1] == "sge_shepherd"]
            pids = {p[0] for p in found}
            return [p for p in found if parent_of(p[0]) not in pids]

        (pid, _, argv), = wait_for(shepherd, what=f"the shepherd of job {job}")
        assert argv == [f"sge_shepherd-{job}".encode(), b"-bg"], argv
        assert exe_of(pid) == os.path.join(os.path.dirname(binary), "_internal", "minisge", "execd", "sge_shepherd")
        launchers = [p for p in processes_of(c) if b"minisge.execd.launcher" in p[2]]
        assert launchers and all(exe_of(p[0]) == binary for p in launchers)
        touch(done)
        rec = c.wait_records(job)[0]
        assert rec[11] == "0" and rec[12] == "0", rec  # failed, exit_status
    finally:
        c.cleanup()
