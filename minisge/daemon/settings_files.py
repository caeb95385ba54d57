"""A cell's environment files, ``common/settings.sh`` and ``common/settings.csh``,
and where this installation's commands and manual pages are.

``. $SGE_ROOT/$SGE_CELL/common/settings.sh`` (``source .../settings.csh`` in
csh) gives a shell the cell's ``SGE_ROOT``, ``SGE_CELL``, cluster name and
ports, and puts this installation's commands first in ``PATH`` and its
manual pages first in ``MANPATH``, as Grid Engine's put ``$SGE_ROOT/bin/$ARCH``
and ``$SGE_ROOT/man`` there, and exports ``DRMAA_LIBRARY_PATH``, this
installation's libdrmaa.so (:mod:`minisge.drmaa`).  ``minisge init`` writes them; an upgrade of an
older cell (:mod:`minisge.daemon.spool_version`) writes them again.
"""

from __future__ import annotations

import os
import shlex
import sys

import minisge
from minisge.cell import Cell
from minisge.drmaa import library_path
from minisge.qmaster.spool import atomic_write


def install_bin_dir() -> str:
    """Where this installation's commands are: beside the interpreter (a
    virtual environment's or a prefix's ``bin``; the single binary's folder)."""
    return os.path.dirname(os.path.abspath(sys.executable))


def install_man_dir() -> str | None:
    """Where this installation's manual pages are (a folder with ``man1``
    and ``man5``): ``PREFIX/share/man``, where ``pip install`` puts the data
    files of pyproject.toml, beside the interpreter's prefix or its ``bin``;
    for an editable install (no data files installed), the source tree's
    ``man/``.  None if none holds minisge(1)."""
    source_tree = os.path.dirname(os.path.dirname(os.path.abspath(minisge.__file__)))
    beside_bin = os.path.join(os.path.dirname(install_bin_dir()), "share", "man")
    for d in (os.path.join(sys.prefix, "share", "man"), beside_bin, os.path.join(source_tree, "man")):
        if os.path.isfile(os.path.join(d, "man1", "minisge.1")):
            return d
    return None


def install_drmaa_library() -> str | None:
    """This installation's DRMAA library (minisge/drmaa/README.md): in the
    package (``pip install``), else ``lib/`` beside the commands' ``bin/``
    (the single binary's tarball); None if it was not built."""
    tarball = os.path.join(os.path.dirname(install_bin_dir()), "lib", "libdrmaa.so")
    for path in (library_path(), tarball):
        if os.path.isfile(path):
            return path
    return None


def settings_sh(cell: Cell, qport: int, eport: int, bin_dir: str, man_dir: str | None,
                drmaa_library: str | None = None) -> str:
    """``common/settings.sh``: ``. settings.sh`` in a Bourne shell gives the
    cell's environment and puts ``bin_dir`` first in PATH (once) and
    ``man_dir`` first in MANPATH (once each: a shell may read it twice); an
    empty MANPATH becomes ``man_dir:``, which man(1) reads as "then the
    system's pages" (Grid Engine's puts its ``arch -m`` default there)."""
    q = shlex.quote
    text = (f"export SGE_ROOT={q(cell.root)}\n"
            f"export SGE_CELL={q(cell.name)}\n"
            f"export SGE_CLUSTER_NAME=p{qport}\n"
            f"export SGE_QMASTER_PORT={qport}\n"
            f"export SGE_EXECD_PORT={eport}\n"
            "# the commands and manual pages of the minisge that made this cell\n"
            f'case ":$PATH:" in *:{q(bin_dir)}:*) ;; *) PATH={q(bin_dir)}:$PATH; export PATH ;; esac\n')
    if man_dir:
        text += f'case ":$MANPATH:" in *:{q(man_dir)}:*) ;; *) MANPATH={q(man_dir)}:$MANPATH; export MANPATH ;; esac\n'
    if drmaa_library:
        text += f"export DRMAA_LIBRARY_PATH={q(drmaa_library)}\n"
    return text


def settings_csh(cell: Cell, qport: int, eport: int, bin_dir: str, man_dir: str | None,
                 drmaa_library: str | None = None) -> str:
    """``common/settings.csh``: the same for csh and tcsh (``source settings.csh``)."""
    q = shlex.quote
    text = (f"setenv SGE_ROOT {q(cell.root)}\n"
            f"setenv SGE_CELL {q(cell.name)}\n"
            f"setenv SGE_CLUSTER_NAME p{qport}\n"
            f"setenv SGE_QMASTER_PORT {qport}\n"
            f"setenv SGE_EXECD_PORT {eport}\n"
            "# the commands and manual pages of the minisge that made this cell\n"
            f"set path = ( {q(bin_dir)} $path )\n")
    if man_dir:
        text += ("if ( $?MANPATH ) then\n"
                 f"   setenv MANPATH {q(man_dir)}:$MANPATH\n"
                 "else\n"
                 f"   setenv MANPATH {q(man_dir)}:\n"
                 "endif\n")
    if drmaa_library:
        text += f"setenv DRMAA_LIBRARY_PATH {q(drmaa_library)}\n"
    return text


def write_settings(cell: Cell, qport: int, eport: int) -> None:
    """Write ``settings.sh`` and ``settings.csh`` for this installation."""
    bin_dir, man_dir, drmaa = install_bin_dir(), install_man_dir(), install_drmaa_library()
    atomic_write(cell.settings, settings_sh(cell, qport, eport, bin_dir, man_dir, drmaa))
    atomic_write(cell.common_file("settings.csh"), settings_csh(cell, qport, eport, bin_dir, man_dir, drmaa))
