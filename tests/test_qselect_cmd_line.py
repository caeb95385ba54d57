"""qselect's command line (minisge.cli.qselect) against what 8.1.9 printed (tests/golden/qselect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from minisge.cli import qselect

GOLDEN = Path(__file__).parent / "golden" / "qselect"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text().partition("# ----\n")[2]


def test_help_prints_8_1_9s_usage(capsys):
    assert qselect.main(["-help"]) == 0
    assert capsys.readouterr().out == golden("qselect_-help")


@pytest.mark.parametrize("case,argv", [
    ("qselect_-x", ["-x"]),
    ("qselect_-u_sgetest", ["-u", "sgetest"]),  # qstat's options are not qselect's
    ("qselect_-s_r", ["-s", "r"]),
    ("qselect_-f", ["-f"]),
    ("qselect_-F", ["-F"]),
    ("qselect_-xml", ["-xml"]),
    ("qselect_-qs_X", ["-qs", "X"]),
    ("qselect_-q", ["-q"]),
])
def test_bad_command_lines_say_so_as_8_1_9(capsys, case, argv):
    assert qselect.main(argv) == 1
    assert capsys.readouterr().err == golden(f"{case}.stderr")


def test_the_options_accumulate():
    opts = qselect.parse_args(["-q", "a.q,b.q", "-q", "c.q", "-qs", "a", "-qs", "d", "-l", "arch=x", "-pe", "smp",
                               "-U", "u1,u2"])
    assert opts == {"help": False, "queues": ["a.q", "b.q", "c.q"], "states": "ad", "requests": ["arch=x"],
                    "pes": ["smp"], "users": ["u1", "u2"]}
