"""settings.sh and settings.csh (minisge.daemon.settings_files) put the
installation's commands and manual pages first, as Grid Engine's do, read by
real shells; every manual page of man/ is installed (pyproject's data-files)
and found by man(1) through them; the spool version (minisge.daemon.spool_version)
of a new cell, and the upgrade of a cell of version 1."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tomllib

import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.daemon.settings_files import install_man_dir, settings_csh, settings_sh
from minisge.daemon.spool_version import (
    SPOOL_VERSION,
    SpoolVersionError,
    check_spool_version,
    read_spool_version,
    upgrade_cell,
)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN, MAN = "/opt/mini sge/bin", "/opt/mini sge/share/man"  # a blank: the paths are quoted


def _sh(shell: str, script: str, env: dict[str, str]) -> list[str]:
    p = subprocess.run([shell, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_settings_sh_puts_the_commands_and_pages_first_once(shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"no {shell}")
    path = tmp_path / "settings.sh"
    path.write_text(settings_sh(Cell("/srv/c", "lab"), 7001, 7002, BIN, MAN))
    script = f'. "{path}"; . "{path}"; echo "$PATH"; echo "$MANPATH"; echo "$SGE_ROOT $SGE_CELL $SGE_QMASTER_PORT"'
    empty = _sh(shell, script, {"PATH": "/usr/bin:/bin"})
    assert empty == [f"{BIN}:/usr/bin:/bin", f"{MAN}:", "/srv/c lab 7001"]  # "MAN:": then the system's pages
    kept = _sh(shell, script, {"PATH": "/usr/bin:/bin", "MANPATH": "/usr/share/man"})
    assert kept[1] == f"{MAN}:/usr/share/man"


def test_settings_csh_does_the_same_for_csh(tmp_path):
    csh = shutil.which("tcsh") or shutil.which("csh")
    if not csh:
        pytest.skip("no csh")
    path = tmp_path / "settings.csh"
    path.write_text(settings_csh(Cell("/srv/c", "lab"), 7001, 7002, BIN, MAN))
    script = f'source "{path}"; echo "$PATH"; echo "$MANPATH"; echo "$SGE_ROOT $SGE_CELL $SGE_EXECD_PORT"'
    assert _sh(csh, script, {"PATH": "/usr/bin:/bin"}) == [f"{BIN}:/usr/bin:/bin", f"{MAN}:", "/srv/c lab 7002"]
    assert _sh(csh, script, {"PATH": "/usr/bin:/bin", "MANPATH": "/usr/share/man"})[1] == f"{MAN}:/usr/share/man"


def test_every_page_of_man_is_installed():
    with open(os.path.join(TOP, "pyproject.toml"), "rb") as f:
        data_files = tomllib.load(f)["tool"]["setuptools"]["data-files"]
    installed = {os.path.join(target, os.path.basename(page)) for target, patterns in data_files.items()
                 for pattern in patterns for page in glob.glob(os.path.join(TOP, pattern))}
    pages = {os.path.join("share", os.path.relpath(p, TOP)) for p in glob.glob(os.path.join(TOP, "man", "*", "*"))}
    assert pages and installed == pages


def test_man_finds_minisges_pages_through_settings_sh(tmp_path):
    if not shutil.which("man"):
        pytest.skip("no man")
    man_dir = install_man_dir()
    assert man_dir is not None  # this installation's pages: share/man, or the source tree's man/ (editable)
    path = tmp_path / "settings.sh"
    path.write_text(settings_sh(Cell("/srv/c"), 7001, 7002, "/nonexistent/bin", man_dir))
    found = _sh("sh", f'. "{path}"; man -w minisge qsub; man -w 5 queue_conf', {"PATH": "/usr/bin:/bin"})
    assert found == [os.path.join(man_dir, "man1", "minisge.1"), os.path.join(man_dir, "man1", "qsub.1"),
                     os.path.join(man_dir, "man5", "queue_conf.5")]


def test_a_new_cell_has_this_spool_version_and_an_old_one_is_upgraded(tmp_path):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", 1, env={"SGE_QMASTER_PORT": "7001", "SGE_EXECD_PORT": "7002"})
    assert read_spool_version(cell)[0] == SPOOL_VERSION
    assert upgrade_cell(cell) == []  # nothing to do
    # as minisge made cells before the version file
    os.unlink(cell.common_file("spool_version"))
    os.unlink(cell.common_file("settings.csh"))
    with open(cell.settings, "w") as f:
        f.write(f"export SGE_ROOT={cell.root}\nexport SGE_CELL=default\nexport SGE_CLUSTER_NAME=p7001\n"
                "export SGE_QMASTER_PORT=7001\nexport SGE_EXECD_PORT=7002\n")
    assert read_spool_version(cell) == (1, "")
    assert upgrade_cell(cell) == [f"upgraded the cell's files in {cell.path} to spool version {v}"
                                  for v in range(2, SPOOL_VERSION + 1)]
    assert read_spool_version(cell)[0] == SPOOL_VERSION
    with open(cell.settings) as f:
        assert "PATH=" in f.read()
    assert (cell.qmaster_port({}), cell.execd_port({})) == (7001, 7002)
    assert os.path.exists(cell.common_file("settings.csh"))


@pytest.mark.parametrize("text", ["spool_version 99\n", "spool_version two\n", "",
                                  "spool_version 2\nspool_version 3\n"])
def test_a_newer_or_unreadable_version_is_refused(tmp_path, text):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", 1)
    with open(cell.common_file("spool_version"), "w") as f:
        f.write(text)
    with pytest.raises(SpoolVersionError):
        check_spool_version(cell)
    with pytest.raises(SpoolVersionError):
        upgrade_cell(cell)


def test_settings_export_the_drmaa_library(tmp_path):
    """settings.sh and settings.csh export DRMAA_LIBRARY_PATH, this
    installation's libdrmaa.so (minisge/drmaa/README.md), when it is built."""
    lib = "/opt/minisge dir/lib/libdrmaa.so"
    sh = tmp_path / "settings.sh"
    sh.write_text(settings_sh(Cell("/srv/c"), 7001, 7002, BIN, MAN, lib))
    assert _sh("sh", f'. "{sh}"; echo "$DRMAA_LIBRARY_PATH"', {"PATH": "/usr/bin:/bin"}) == [lib]
    assert "DRMAA_LIBRARY_PATH" not in settings_sh(Cell("/srv/c"), 7001, 7002, BIN, MAN, None)
    csh = shutil.which("tcsh") or shutil.which("csh")
    if csh:
        path = tmp_path / "settings.csh"
        path.write_text(settings_csh(Cell("/srv/c"), 7001, 7002, BIN, MAN, lib))
        assert _sh(csh, f'source "{path}"; echo "$DRMAA_LIBRARY_PATH"', {"PATH": "/usr/bin:/bin"}) == [lib]
