"""The version of a cell's files (``common/spool_version``) and the upgrades
of an older cell's files, which the qmaster (or the all-in-one daemon) runs
when it starts.

The file holds one line ``spool_version N`` (and a comment naming the
minisge that wrote it).  A cell without it was made before the file
existed: version 1.  Version 2 adds ``PATH`` and ``MANPATH`` to
``settings.sh``, ``settings.csh`` and the file itself.  Version 3 keeps the
running jobs' transitions in the job journal (``jobs/.journal``,
:mod:`minisge.qmaster.job_journal`): a minisge of before it would read the
job files alone, older than the jobs, so it must not start such a cell.
A version newer than this minisge's, or a file that does not say one, stops
the daemon before it reads the spool, with a message that says what to
run; an execd on another host only checks (the qmaster owns the cell's files).
"""

from __future__ import annotations

from collections.abc import Callable

import minisge
from minisge.cell import Cell
from minisge.daemon.settings_files import write_settings
from minisge.qmaster.spool import atomic_write

#: the version of the files this minisge writes
SPOOL_VERSION = 3
#: a cell with no ``spool_version`` file (made by minisge 0.1.0 before it existed)
UNVERSIONED = 1
FILE = "spool_version"


class SpoolVersionError(Exception):
    """The cell's files are not of a version this minisge reads: the text says what to run."""


def _path(cell: Cell) -> str:
    return cell.common_file(FILE)


def _readable() -> str:
    return f"this minisge {minisge.__version__} reads spool versions {UNVERSIONED} to {SPOOL_VERSION}"


def read_spool_version(cell: Cell) -> tuple[int, str]:
    """The cell's spool version and the minisge that wrote it ("" if unsaid);
    SpoolVersionError if the file says no version."""
    try:
        with open(_path(cell), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return UNVERSIONED, ""
    except (OSError, UnicodeDecodeError) as e:
        raise SpoolVersionError(f"cannot read {_path(cell)}: {e}") from e
    writer = ""
    for line in lines:
        if line.startswith("# written by "):
            writer = line.removeprefix("# written by ").strip()
    values = [ln.split() for ln in lines if ln.strip() and not ln.startswith("#")]
    if len(values) == 1 and len(values[0]) == 2 and values[0][0] == "spool_version" and values[0][1].isdigit():
        return int(values[0][1]), writer
    said = "; ".join(" ".join(v) for v in values) or "nothing"
    raise SpoolVersionError(
        f"{_path(cell)} says {said!r}, not 'spool_version N' ({_readable()}): start the cell with the minisge "
        f"that made it, or write the line back ('spool_version {SPOOL_VERSION}' for a cell of this minisge)")


def write_spool_version(cell: Cell, version: int = SPOOL_VERSION) -> None:
    atomic_write(_path(cell), f"# the version of this cell's files; minisge upgrades older ones when it starts\n"
                              f"# written by minisge {minisge.__version__}\n"
                              f"spool_version {version}\n")


def check_spool_version(cell: Cell) -> int:
    """The cell's spool version if this minisge reads it; SpoolVersionError
    (saying what to run) if it is newer or unreadable."""
    version, writer = read_spool_version(cell)
    if version > SPOOL_VERSION:
        by = f" by {writer}" if writer else ""
        raise SpoolVersionError(
            f"the cell in {cell.path} has spool version {version} (written{by}), newer than {_readable()}: "
            f"start it with the minisge that made it ('. {cell.settings}' puts it first in PATH, then "
            f"'minisge start'), or install that minisge here")
    return version


def _settings_with_paths(cell: Cell) -> None:
    """1 -> 2: settings.sh puts the installation's commands and manual pages
    first in PATH and MANPATH, settings.csh beside it (the ports kept)."""
    settings = cell.read_settings()
    write_settings(cell, int(settings.get("SGE_QMASTER_PORT", "6444")), int(settings.get("SGE_EXECD_PORT", "6445")))


def _job_journal(cell: Cell) -> None:
    """2 -> 3: nothing to convert: a cell of version 2 has no job journal,
    and its job files, without a write's sequence number, are older than
    any line the journal will have."""


#: version N -> what makes a cell of version N one of version N + 1
UPGRADES: dict[int, Callable[[Cell], None]] = {
    1: _settings_with_paths,
    2: _job_journal,
}


def upgrade_cell(cell: Cell) -> list[str]:
    """Bring an older cell's files to SPOOL_VERSION, one version at a time
    (each step recorded in the file at once); what was done, for the log.
    SpoolVersionError if the cell is newer or its file unreadable."""
    version = check_spool_version(cell)
    done = []
    while version < SPOOL_VERSION:
        UPGRADES[version](cell)
        version += 1
        write_spool_version(cell, version)
        done.append(f"upgraded the cell's files in {cell.path} to spool version {version}")
    return done
