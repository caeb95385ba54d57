"""The table of commands (cli/commands.py) is the one list of programs: the
install's scripts, the single binary's entry, spec and links, and
``minisge -help`` agree with it.  (The binary itself is not built here: too
slow; packaging/build.sh does that.)"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import runpy
import subprocess
import sys
import tomllib

import pytest

from minisge.cli.commands import COMMANDS, RUNNABLE_MODULES

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGING = os.path.join(TOP, "packaging")


def test_the_table_names_every_command_module_with_a_main():
    assert {"minisge", "qsub", "qstat", "qdel", "qacct", "qconf", "qhold", "qrls", "qmod", "qquota",
            "qrsh"} <= set(COMMANDS)
    for name, command in COMMANDS.items():
        assert command.module == f"minisge.cli.{name}"
        assert command.help and "\n" not in command.help
        assert callable(importlib.import_module(command.module).main), name


def test_the_runnable_modules_exist():
    for name, module in RUNNABLE_MODULES.items():
        assert importlib.util.find_spec(name) is not None, name
        assert importlib.util.find_spec(module) is not None, module


def test_the_installed_launchers_equal_the_table():
    """setup.py writes one launcher per command of the table (pip's console
    scripts, [project.scripts], would import re first: none are declared)."""
    with open(os.path.join(TOP, "pyproject.toml"), "rb") as f:
        assert "scripts" not in tomllib.load(f)["project"]
    with open(os.path.join(TOP, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    tree.body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call))]
    setup: dict[str, object] = {"__file__": os.path.join(TOP, "setup.py")}
    exec(compile(tree, "setup.py", "exec"), setup)
    assert setup["commands"]() == {name: c.module for name, c in COMMANDS.items()}  # type: ignore[operator]


def test_the_binary_spec_hides_every_command_and_runnable_module(tmp_path):
    """Run the spec with PyInstaller's names stubbed and look at what it
    asks the analysis to import."""
    seen: dict[str, object] = {}

    def analysis(scripts, **kw):
        seen.update(kw, scripts=scripts)
        return type("A", (), {"pure": [], "scripts": [], "binaries": [], "datas": []})()

    def anything(*args, **kw):
        return None

    spec = os.path.join(PACKAGING, "minisge.spec")
    runpy.run_path(spec, init_globals={"SPECPATH": PACKAGING, "Analysis": analysis, "PYZ": anything,
                                       "EXE": anything, "COLLECT": anything})
    hidden = set(seen["hiddenimports"])
    assert {c.module for c in COMMANDS.values()} <= hidden
    assert set(RUNNABLE_MODULES.values()) <= hidden
    assert seen["scripts"] == [os.path.join(PACKAGING, "entry.py")]


@pytest.fixture(scope="module")
def entry():
    return runpy.run_path(os.path.join(PACKAGING, "entry.py"))


def test_the_binary_called_by_a_command_name_is_that_command(entry):
    for name, command in COMMANDS.items():
        assert entry["target"]([f"/opt/minisge/bin/{name}", "-help"]) == (command.module, ["-help"])


def test_the_binary_called_minisge_is_the_minisge_command(entry):
    # minisge qsub ARGS: qsub itself, as minisge.cli.minisge:run_command runs it (without minisge's modules)
    assert entry["target"](["/opt/lib/minisge/minisge", "qsub", "-b", "y", "/bin/true"]) == (
        "minisge.cli.qsub", ["-b", "y", "/bin/true"])
    assert entry["target"](["minisge-0.1", "status"]) == ("minisge.cli.minisge", ["status"])
    assert entry["target"](["minisge", "minisge", "status"]) == ("minisge.cli.minisge", ["minisge", "status"])
    assert entry["target"](["minisge"]) == ("minisge.cli.minisge", [])


def test_the_binary_runs_a_runnable_module_for_dash_m(entry):
    for name, module in RUNNABLE_MODULES.items():
        assert entry["target"](["/opt/lib/minisge/minisge", "-m", name, "execd"]) == (module, ["execd"])
    # not a runnable module: minisge's own error
    assert entry["target"](["minisge", "-m", "os", "x"]) == ("minisge.cli.minisge", ["-m", "os", "x"])
    # qsub's own -m (mail options) stays qsub's
    assert entry["target"](["qsub", "-m", "minisge.daemon"]) == ("minisge.cli.qsub", ["-m", "minisge.daemon"])


def test_the_tarball_links_every_command(tmp_path):
    bin_dir = tmp_path / "bin"
    r = subprocess.run([sys.executable, os.path.join(PACKAGING, "links.py"), str(bin_dir), "../lib/minisge/minisge"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(bin_dir)) == sorted(COMMANDS)
    for name in COMMANDS:
        assert os.readlink(bin_dir / name) == "../lib/minisge/minisge"


def test_the_tarball_links_every_other_command_to_the_binary_beside_them(tmp_path):
    """The tarball's layout: bin/minisge is the binary, every other name a link to it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "minisge").write_text("the binary")
    r = subprocess.run([sys.executable, os.path.join(PACKAGING, "links.py"), str(bin_dir), "minisge"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(bin_dir)) == sorted(COMMANDS)
    assert not os.path.islink(bin_dir / "minisge") and (bin_dir / "minisge").read_text() == "the binary"
    for name in set(COMMANDS) - {"minisge"}:
        assert os.readlink(bin_dir / name) == "minisge"


def test_build_sh_makes_its_links_from_the_table():
    with open(os.path.join(PACKAGING, "build.sh"), encoding="utf-8") as f:
        script = f.read()
    assert '"$here/links.py" "$stage/bin"' in script
    assert "ln -s" not in script


def test_minisge_help_lists_every_command():
    r = subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "-help"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    listed = {line.split()[0]: line.split(None, 1)[1] for line in r.stdout.splitlines() if line.startswith("  ")}
    for name, command in COMMANDS.items():
        if name != "minisge":
            assert listed[name] == command.help
    for name in ("init", "start", "stop", "status", "qmaster", "execd"):
        assert name in listed


def test_minisge_name_runs_the_command():
    direct = subprocess.run([sys.executable, "-m", "minisge.cli.qstat", "-help"], capture_output=True, text=True)
    via = subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "qstat", "-help"], capture_output=True,
                         text=True)
    assert direct.stdout.startswith("SGE 8.1.9")
    assert (via.returncode, via.stdout, via.stderr) == (direct.returncode, direct.stdout, direct.stderr)


def test_minisge_double_dash_help_is_its_help():
    one = subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "-help"], capture_output=True, text=True)
    two = subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "--help"], capture_output=True, text=True)
    assert (two.returncode, two.stdout, two.stderr) == (0, one.stdout, "")
