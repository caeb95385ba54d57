"""The table of commands: every program minisge installs, in one place.

Everything that lists the commands reads this table: the single binary's
entry (``packaging/entry.py``: which module a name runs), its PyInstaller
spec (``packaging/minisge.spec``: the hidden imports), the links of its
tarball (``packaging/links.py``), ``minisge -help`` and ``minisge NAME``, and
the launchers ``setup.py`` writes for ``pip install`` (read with ``ast``: one
``#!python`` script per command that imports its module and runs ``main``,
lighter than pip's console scripts, which import ``re`` first).

Standard library only (every command imports it when run as ``minisge NAME``).
"""

from __future__ import annotations


class Command:
    """A program: the module whose ``main(argv) -> int`` it runs, and one line
    of help (a plain class: ``typing`` is not loaded by the commands)."""

    __slots__ = ("module", "help")

    def __init__(self, module: str, help: str) -> None:
        self.module = module
        self.help = help

    def __repr__(self) -> str:
        return f"Command({self.module!r}, {self.help!r})"


COMMANDS: dict[str, Command] = {
    "minisge": Command("minisge.cli.minisge", "create, start, stop and inspect a cell"),
    "qsub": Command("minisge.cli.qsub", "submit a batch job"),
    "qstat": Command("minisge.cli.qstat", "show the status of jobs and queues"),
    "qdel": Command("minisge.cli.qdel", "delete jobs"),
    "qhold": Command("minisge.cli.qhold", "put jobs on hold"),
    "qrls": Command("minisge.cli.qrls", "release held jobs"),
    "qalter": Command("minisge.cli.qalter", "change submitted jobs"),
    "qresub": Command("minisge.cli.qresub", "submit copies of submitted jobs"),
    "qmod": Command("minisge.cli.qmod", "change the state of queues and jobs"),
    "qacct": Command("minisge.cli.qacct", "report and account for finished jobs"),
    "qconf": Command("minisge.cli.qconf", "show and change the cell's configuration"),
    "qquota": Command("minisge.cli.qquota", "show the usage of resource quotas"),
    "qhost": Command("minisge.cli.qhost", "show the execution hosts, their load, queues and jobs"),
    "qselect": Command("minisge.cli.qselect", "print the queue instances that match the options"),
    "qrsub": Command("minisge.cli.qrsub", "submit an advance reservation"),
    "qrstat": Command("minisge.cli.qrstat", "show advance reservations"),
    "qrdel": Command("minisge.cli.qrdel", "delete advance reservations and their jobs"),
    "qrsh": Command("minisge.cli.qrsh", "run a command or a login shell as an interactive job; -inherit: "
                                        "a task of a parallel job on a granted host"),
    "qlogin": Command("minisge.cli.qlogin", "an interactive login session on a host the scheduler picks"),
    "qsh": Command("minisge.cli.qsh", "an interactive X11 session (not supported: says so)"),
    "qping": Command("minisge.cli.qping", "is the qmaster or an execd up, and how is it doing"),
    "sge_share_mon": Command("minisge.cli.sge_share_mon", "print the share tree with its shares, targets and usage"),
}

# What the single binary runs as ``minisge -m NAME ARGS``, as ``python -m NAME
# ARGS`` would (the ``minisge`` command starts its daemons with
# ``sys.executable -m minisge.daemon``, and in the binary sys.executable is
# the binary itself): NAME -> the module whose ``main(argv) -> int`` runs.
RUNNABLE_MODULES: dict[str, str] = {
    "minisge.daemon": "minisge.daemon.__main__",
    "minisge.offline": "minisge.offline",
    "minisge.web": "minisge.web.__main__",  # minisge web's server
    "minisge.replay": "minisge.replay.__main__",  # minisge replay: the qmaster's scheduler in simulated time
    "minisge.execd.launcher": "minisge.execd.launcher",  # the execd's shepherd launcher
}
