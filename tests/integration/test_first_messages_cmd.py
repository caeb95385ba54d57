"""The first messages a newcomer meets (issue 13, item 8).

With no cell running, every command that needs the qmaster says so in
minisge's words first (``minisge: no cell running in $SGE_ROOT/$SGE_CELL:
run 'minisge start'``), then exactly what 8.1.9 prints when no qmaster
answers, on the same streams, with 8.1.9's exit status (captured from the
peer with a port nobody listens on: tests/golden/no_qmaster/)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from cellutil import Cell
from golden import normalise, read_golden

CASES = ["qstat", "qsub", "qdel", "qconf", "qhost", "qhold", "qrls", "qmod", "qalter", "qselect", "qquota",
         "qresub", "qacct"]


def _run(argv: list[str], env: dict[str, str], cwd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("cmd", CASES)
def test_a_command_with_no_cell_says_to_start_one_then_what_8_1_9_says(cmd, tmp_path):
    out, err = read_golden(f"no_qmaster/{cmd}"), read_golden(f"no_qmaster/{cmd}.stderr")
    command = out.command.removeprefix("SGE_QMASTER_PORT=1 ").split()
    root = str(tmp_path / "root")
    env = dict(os.environ, SGE_ROOT=root, SGE_QMASTER_PORT="1", HOME=str(tmp_path))
    env.pop("SGE_CELL", None)
    p = _run([f"minisge.cli.{command[0]}", *command[1:]], env, str(tmp_path))
    host = socket.gethostname().split(".")[0]
    assert p.returncode == out.exit
    assert normalise(p.stdout, hosts=[host]) == normalise(out.text, hosts=["vm"])
    # minisge's own line comes first (8.1.9 has no such hint); the rest is 8.1.9's
    hint = f"minisge: no cell running in {root}/default: run 'minisge start'\n"
    assert p.stderr.startswith(hint)
    assert normalise(p.stderr.removeprefix(hint), hosts=[host]) == normalise(err.text, hosts=["vm"])


@pytest.mark.skipif(os.getuid() != 0, reason="root only (the cell's jobs run as test users)")
def test_start_tells_where_the_log_is_and_how_to_use_the_cell():
    c = Cell(host="msghost")
    try:
        r = c.minisge("start", "--hostname", c.host, "--slots", "1")
        spool = os.path.join(c.root, "default", "spool", "qmaster")
        assert r.out.splitlines()[-3:] == [
            f"minisge: cell default started on msghost (pid {c.daemon_pid()})",
            f"minisge: its log: {spool}/messages",
            f"minisge: to use it: . {c.common}/settings.sh",
        ]
    finally:
        c.cleanup()


def test_help_lists_every_subcommand_with_one_line(tmp_path):
    env = dict(os.environ, SGE_ROOT=str(tmp_path / "root"), HOME=str(tmp_path))
    helps = [_run(["minisge.cli.minisge", flag], env, str(tmp_path)) for flag in ("-help", "--help", "-h")]
    assert [(h.returncode, h.stderr) for h in helps] == [(0, "")] * 3
    assert helps[0].stdout == helps[1].stdout == helps[2].stdout
    lines = helps[0].stdout.splitlines()
    for name in ("init", "start", "stop", "status", "qmaster", "execd", "qsub", "qstat", "qconf", "qacct"):
        line = next((ln for ln in lines if ln.split()[:1] == [name]), None)
        assert line is not None and len(line.split()) > 2, (name, lines)
