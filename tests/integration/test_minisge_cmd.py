"""The ``minisge`` command starts its daemons as ``python -m minisge.daemon``
(the command itself loads no trio): in the background (``start``) or in its
own place (``start --foreground``, ``qmaster``: the same process, so that a
service manager's SIGTERM reaches the daemon)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from cellutil import Cell

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="root only (jobs run as test users)")


@pytest.fixture
def cell_dir():
    c = Cell(host="fghost")
    try:
        yield c
    finally:
        c.cleanup()


def test_start_in_the_foreground_becomes_the_daemon_and_sigterm_stops_it(cell_dir):
    c = cell_dir
    p = c.spawn("start", "--foreground", "--hostname", c.host, "--slots", "1", log="fg.log")
    c.wait_for(lambda: os.path.exists(os.path.join(c.qmaster_spool, "qmaster.pid")) and c.minisge(
        "status", check=False).rc == 0, 60, "the daemon")
    assert c.daemon_pid() == p.pid
    assert f"running on {c.host} (pid {p.pid})" in c.minisge("status").out
    job = c.submit("-b", "y", "/bin/true")
    assert c.wait_records(job, timeout=60)
    p.send_signal(signal.SIGTERM)
    assert p.wait(60) == 0
    assert c.minisge("status", check=False).out.endswith("not running\n")
    with open(os.path.join(c.dir, "fg.log")) as f:
        assert f.read().startswith(f"cell default created in {c.root} (qmaster {c.host}")


def test_init_twice_refuses_the_existing_cell(cell_dir):
    c = cell_dir
    first = c.minisge("init", "--hostname", c.host)
    assert first.out.startswith(f"cell default created in {c.root}")
    again = c.minisge("init", "--hostname", c.host, check=False)
    assert (again.rc, again.out, again.err) == (1, "", f"minisge: cell {c.root}/default already exists\n")


def test_start_runs_the_daemon_in_the_background(cell_dir):
    c = cell_dir.start()
    r = c.minisge("status")
    assert f"qmaster, scheduler and execd running on {c.host} (pid {c.daemon_pid()})" in r.out
    with open(f"/proc/{c.daemon_pid()}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    assert argv[1:4] == [b"-m", b"minisge.daemon", b"allinone"]


def test_init_and_start_from_a_folder_holding_another_minisge_use_the_installed_one(cell_dir, tmp_path):
    # the README's first line runs in the source tree, whose minisge/ is not the
    # installed package (spool/ becomes minisge.default_spool only when installed):
    # the daemons must not pick up a minisge/ of the current directory
    c = cell_dir
    decoy = tmp_path / "minisge"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the minisge of the current directory')\n")
    for args in (["init", "--hostname", c.host], ["start", "--hostname", c.host]):
        # -P: the command itself does not look in its current directory either
        p = subprocess.run([sys.executable, "-P", "-m", "minisge.cli.minisge", *args], env=c.env(),
                           cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
    assert f"running on {c.host}" in c.minisge("status").out
