"""Where a cell lives: ``$SGE_ROOT/$SGE_CELL`` and the paths inside it.

Grid Engine's layout (classic spooling): ``common/`` holds ``bootstrap``,
``act_qmaster``, ``settings.sh``, ``configuration``, ``sched_configuration``,
``local_conf/``, ``accounting``, ``sge_request`` and the cell key;
``spool/qmaster/`` holds one directory per object type, ``jobs/``,
``job_scripts/``, ``jobseqnum``, ``managers``, ``operators``, ``messages``
and ``qmaster.pid``; ``spool/<host>/`` is an execd's spool.

With ``SGE_ROOT`` unset a per-user default (``~/.minisge``) is used, so that
several cells, and a real Grid Engine, can run side by side.  This module is
imported by the commands: standard library only.
"""

from __future__ import annotations

import posix  # not os: with collections.abc's classes it was ~13% of a qsub's instructions (issue 14)
import pwd
import sys

try:  # os.path.normpath's own C function (CPython 3.11 on), without loading os
    from posix import _path_normpath as _normpath  # type: ignore[attr-defined]
except ImportError:  # an interpreter without it: os.path's (it loads os)
    from posixpath import normpath as _normpath

TYPE_CHECKING = False  # not typing's: the commands import this module and must start fast
if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_CELL = "default"

# --- the process's environment and paths, as os and os.path give them -------
# (the commands on their plain paths load no os; a process that loaded it gets
# os.environ itself, which may have been changed through it)


def environment() -> Mapping[str, str]:
    """The process's environment: ``os.environ`` once os is loaded, else the
    interpreter's copy decoded as os decodes it (nothing can have changed
    that copy but os)."""
    loaded = sys.modules.get("os")
    if loaded is not None:
        environ: Mapping[str, str] = loaded.environ
        return environ
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {k.decode(encoding, errors): v.decode(encoding, errors) for k, v in posix.environ.items()}


def join_path(first: str, *rest: str) -> str:
    """``os.path.join`` (POSIX): an absolute part starts the path anew."""
    path = first
    for part in rest:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def absolute_path(path: str) -> str:
    """``os.path.abspath`` (POSIX): from the working directory, normalized."""
    if not path.startswith("/"):
        path = join_path(posix.getcwd(), path)
    return _normpath(path) or "."


def path_exists(path: str) -> bool:
    """``os.path.exists``."""
    try:
        posix.stat(path)
    except (OSError, ValueError):
        return False
    return True


def home_directory() -> str:
    """``os.path.expanduser("~")``: $HOME, else the user's home of the password database."""
    home = environment().get("HOME")
    if home is None:
        try:
            home = pwd.getpwuid(posix.getuid()).pw_dir
        except KeyError:
            return "~"
    return home.rstrip("/") or "/"


def default_root() -> str:
    return join_path(home_directory(), ".minisge")


def short_hostname() -> str:
    """This host's name without its domain (uname: no socket import)."""
    return posix.uname().nodename.split(".")[0]


class Cell:
    """A cell: its root (``SGE_ROOT``) and name (``SGE_CELL``).

    A plain class (no dataclass import) because every command builds one.
    """

    __slots__ = ("root", "name")

    def __init__(self, root: str, name: str = DEFAULT_CELL):
        self.root = root
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cell) and (self.root, self.name) == (other.root, other.name)

    def __hash__(self) -> int:
        return hash((self.root, self.name))

    def __repr__(self) -> str:
        return f"Cell({self.root!r}, {self.name!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Cell:
        environ: Mapping[str, str] = environment() if env is None else env
        root = environ.get("SGE_ROOT") or default_root()
        return cls(absolute_path(root), environ.get("SGE_CELL") or DEFAULT_CELL)

    # --- common/ -------------------------------------------------------
    @property
    def path(self) -> str:
        return join_path(self.root, self.name)

    @property
    def common(self) -> str:
        return join_path(self.path, "common")

    def common_file(self, name: str) -> str:
        return join_path(self.common, name)

    @property
    def accounting(self) -> str:
        return self.common_file("accounting")

    @property
    def key_file(self) -> str:
        return self.common_file("cell_key")

    @property
    def tls_file(self) -> str:
        """The cell certificate and its private key (PEM), for TLS between hosts."""
        return self.common_file("cell_tls.pem")

    @property
    def settings(self) -> str:
        return self.common_file("settings.sh")

    # --- spool/ --------------------------------------------------------
    @property
    def qmaster_spool(self) -> str:
        return join_path(self.path, "spool", "qmaster")

    def execd_spool(self, host: str) -> str:
        return join_path(self.path, "spool", host)

    def execd_pid_file(self, host: str) -> str:
        """The pid of the execd role of ``host`` (``minisge execd stop``, ``minisge status``)."""
        return join_path(self.execd_spool(host), "execd.pid")

    @property
    def socket_path(self) -> str:
        """The qmaster's Unix socket for local commands."""
        return join_path(self.qmaster_spool, "qmaster.sock")

    @property
    def pid_file(self) -> str:
        return join_path(self.qmaster_spool, "qmaster.pid")

    @property
    def messages(self) -> str:
        return join_path(self.qmaster_spool, "messages")

    def exists(self) -> bool:
        return path_exists(self.common_file("bootstrap"))

    def bootstrap(self) -> dict[str, str]:
        """``common/bootstrap`` as {name: value} (empty if it cannot be read)."""
        values: dict[str, str] = {}
        try:
            with open(self.common_file("bootstrap"), encoding="utf-8") as f:
                for line in f:
                    name, _, value = line.strip().partition(" ")
                    if name and not name.startswith("#"):
                        values[name] = value.strip()
        except (OSError, UnicodeDecodeError):
            pass
        return values

    # --- ports and the qmaster's address --------------------------------
    def read_settings(self) -> dict[str, str]:
        """The ``export NAME=value`` pairs of ``settings.sh``."""
        out: dict[str, str] = {}
        try:
            with open(self.settings, encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if line.startswith("export "):
                        line = line[7:]
                    k, eq, v = line.partition("=")
                    if eq and k.strip().isidentifier():  # not the PATH and MANPATH lines' shell
                        out[k.strip()] = v.strip().strip('"').strip("'")
        except FileNotFoundError:
            pass
        return out

    def qmaster_port(self, env: Mapping[str, str] | None = None) -> int:
        environ: Mapping[str, str] = environment() if env is None else env
        if environ.get("SGE_QMASTER_PORT"):
            return int(environ["SGE_QMASTER_PORT"])
        return int(self.read_settings().get("SGE_QMASTER_PORT", "6444"))

    def execd_port(self, env: Mapping[str, str] | None = None) -> int:
        environ: Mapping[str, str] = environment() if env is None else env
        if environ.get("SGE_EXECD_PORT"):
            return int(environ["SGE_EXECD_PORT"])
        return int(self.read_settings().get("SGE_EXECD_PORT", "6445"))

    def act_qmaster(self) -> str:
        try:
            with open(self.common_file("act_qmaster"), encoding="utf-8") as f:
                return f.read().strip()
        except FileNotFoundError:
            return ""
