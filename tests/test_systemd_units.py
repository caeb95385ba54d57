"""The systemd units of packaging/systemd/: what each one runs and how, and
that ``systemd-analyze verify`` accepts them (with their ExecStart pointed
at a program that exists here, as an installation does; skipped only where
systemd-analyze is absent).  That the daemons send READY=1 is
tests/integration/test_service_readiness.py."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = os.path.join(TOP, "packaging", "systemd")
INSTALLED = "/opt/minisge/bin/minisge"  # where the units expect the tarball's minisge

# unit -> the minisge command line its ExecStart runs
EXPECTED = {
    "minisge.service": ["start", "--foreground"],
    "minisge-qmaster.service": ["qmaster"],
    "minisge-execd.service": ["execd"],
}


def read_unit(name: str) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    unit.read(os.path.join(UNITS, name))
    return unit


def test_the_three_units_are_there():
    assert sorted(n for n in os.listdir(UNITS) if n.endswith(".service")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_unit_waits_for_readiness_restarts_and_names_the_cell(name):
    service = read_unit(name)["Service"]
    assert service["Type"] == "notify" and service["NotifyAccess"] == "main"
    assert service["Restart"] == "on-failure"
    environment = service["Environment"].split()
    assert "SGE_CELL=default" in environment
    assert any(v.startswith("SGE_ROOT=/") for v in environment)
    assert service["EnvironmentFile"] == "-/etc/minisge/minisge.env"
    assert service["ExecStart"].split() == [INSTALLED, *EXPECTED[name]]
    if name != "minisge-qmaster.service":
        # runs jobs: stopping the daemon must not kill them (the next start picks them up)
        assert service["KillMode"] == "process"


def test_the_environment_file_names_the_cell():
    with open(os.path.join(UNITS, "minisge.env")) as f:
        settings = dict(ln.strip().split("=", 1) for ln in f if ln.strip() and not ln.startswith("#"))
    assert settings == {"SGE_ROOT": "/var/lib/minisge", "SGE_CELL": "default"}


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verify_accepts_the_units(tmp_path):
    # ExecStart must name an executable that exists: point it at a stand-in
    program = tmp_path / "bin" / "minisge"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    paths = []
    for name in EXPECTED:
        with open(os.path.join(UNITS, name)) as f:
            text = f.read()
        assert INSTALLED in text
        unit = tmp_path / name
        unit.write_text(text.replace(INSTALLED, str(program)))
        paths.append(str(unit))
    # Documentation=man:minisge(1): verify runs man(1), which finds the source tree's page
    env = dict(os.environ, MANPATH=os.path.join(TOP, "man"))
    p = subprocess.run(["systemd-analyze", "verify", *paths], capture_output=True, text=True, env=env,
                       timeout=120)
    # any warning (an unknown key, a value it cannot parse) is a failure too
    assert p.returncode == 0 and p.stderr == "" and p.stdout == "", p
