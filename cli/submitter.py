"""Who submits, from where: what qsub, qrsh and qlogin read of the calling
process before they parse their options (qsub(1): the SGE_O_* variables,
the home and user of the password database, the current directory).

Standard library and the cell's paths only."""

from __future__ import annotations

import posix  # not os (minisge.cell says why)
import pwd

from minisge.cell import Cell, environment, short_hostname
from minisge.formats import submit_options


class Submitter:
    """The submitting process: its environment (without what Python set for
    itself), user, home, cell, working directory and host name."""

    __slots__ = ("env", "user", "home", "cell", "cwd", "hostname")

    def __init__(self) -> None:
        self.env = submit_options.submitter_environment(environment())  # not what Python set for itself
        try:
            pw = pwd.getpwuid(posix.getuid())
            self.user, self.home = pw.pw_name, pw.pw_dir
        except KeyError:
            self.user, self.home = self.env.get("USER", ""), self.env.get("HOME", "/")
        self.cell = Cell.from_env()
        try:
            self.cwd = posix.getcwd()
        except FileNotFoundError:
            self.cwd = self.env.get("PWD", "/")
        self.hostname = short_hostname()
        self.env.setdefault("HOST", self.hostname)
