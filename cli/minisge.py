"""``minisge``: lay down, start, stop and inspect a cell; run a command.

    minisge init [--slots N] [--hostname H] [--split]
                                              create the cell (from spool/)
    minisge start [--foreground] [--hostname H]
                                              create it if needed, start the
                                              all-in-one daemon, return once it answers
    minisge stop                              shut the daemon down (SIGTERM)
    minisge status                            what runs where
    minisge qmaster | execd                   one role of a cell spread over hosts
    minisge execd stop                        stop this host's execd
    minisge web [--port P] [--bind ADDR]      a live, read-only web view of the cell
    minisge replay [OPTIONS] TRACE            replay a workload trace through the
                                              scheduler in simulated time (minisge replay -help)
    minisge NAME ARGS                         a command of the table (qsub, qstat, ...)
    minisge -help                             all of this

The daemons are not this module's: ``init``, ``start``, ``qmaster`` and
``execd`` run ``python -m minisge.daemon`` (:mod:`minisge.daemon.__main__`),
in the background or in place of this process, ``web`` runs ``python -m
minisge.web`` (:mod:`minisge.web.__main__`) in its place, and ``replay`` runs
``python -m minisge.replay`` (:mod:`minisge.replay.__main__`, the qmaster's
own code), so that the command itself imports the standard library, the
protocol and the cell's paths only (no trio, no web server).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import subprocess
import sys
import time

from minisge import protocol
from minisge.cell import Cell, short_hostname
from minisge.protocol import catalogue, client
from minisge.web import DEFAULT_BIND, DEFAULT_PORT, port_number

from .commands import COMMANDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CELL_COMMANDS = {
    "init": "create the cell (SGE_ROOT/SGE_CELL) from the default configuration",
    "start": "create the cell if needed, start the all-in-one daemon, return once it answers",
    "stop": "shut the daemon down (SIGTERM); running jobs go on",
    "status": "what runs where",
    "qmaster": "run the qmaster and scheduler of a cell spread over hosts (foreground)",
    "execd": "run an execution daemon of a cell spread over hosts (foreground); execd stop: stop it",
    "web": "serve a live, read-only web view of the running cell: queues, jobs, why jobs wait (foreground)",
}

REPLAY_HELP = "replay a workload trace through the scheduler in simulated time, with metrics (replay -help)"


def _ping(cell: Cell) -> dict[str, Any] | None:
    try:
        sock = protocol.connect_unix(cell.socket_path, timeout=5)
    except OSError:
        return None
    try:
        return protocol.request(sock, {"op": catalogue.PING})
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()


def daemon_argv(role: str, *args: str) -> list[str]:
    """How to start a daemon process (also in the single binary, whose
    sys.executable is itself and which understands ``-m minisge.daemon``)."""
    return [sys.executable, "-m", "minisge.daemon", role, *args]


def daemon_env(cell: Cell) -> dict[str, str]:
    return dict(os.environ, SGE_ROOT=cell.root, SGE_CELL=cell.name)


def run_init(cell: Cell, host: str, slots: int | None, split: bool = False) -> int:
    """Lay the cell down (``python -m minisge.daemon init``, ``split``: spread
    over hosts, see :func:`minisge.daemon.cell_init.init_cell`); its exit status."""
    args = ["--hostname", host] + ([] if slots is None else ["--slots", str(slots)]) + (["--split"] if split else [])
    sys.stdout.flush()
    # cwd "/": "python -m" must not take a source tree in the current
    # directory (README's first line runs in one) for the installed package
    return subprocess.run(daemon_argv("init", *args), env=daemon_env(cell), cwd="/").returncode


def exec_daemon(cell: Cell, role: str, *args: str) -> int:
    """Become the daemon (same pid: a service manager's or a test's SIGTERM
    reaches it); returns only if it cannot be started."""
    return exec_argv(cell, daemon_argv(role, *args))


def exec_argv(cell: Cell, argv: list[str]) -> int:
    """Become the process ``argv`` in the cell's environment (exec_daemon)."""
    sys.stdout.flush()
    sys.stderr.flush()
    # cwd "/": a daemon holds no directory, and "python -m" must not pick up
    # a source tree in the current directory instead of the installed package
    os.chdir("/")
    try:
        os.execve(argv[0], argv, daemon_env(cell))
    except OSError as e:
        print(f"minisge: cannot run {argv[0]}: {e.strerror}", file=sys.stderr)
    return 1


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs.  A process that has exited but
    is not yet reaped (a zombie, state ``Z`` in /proc/PID/stat) has stopped:
    kill(pid, 0) still finds it until its parent waits for it, and the
    parent of a daemon is whoever adopted it (init, a container's pid 1
    that reaps every few seconds, a test runner)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except FileNotFoundError:
        return False  # gone since the kill(2) above
    except OSError:
        return True  # no /proc: kill(2) is all there is
    # proc(5): "pid (comm) state ...", comm may hold blanks and parentheses
    state = stat[stat.rfind(")") + 2:stat.rfind(")") + 3]
    return state not in ("Z", "X", "")


def _pid(cell: Cell) -> int | None:
    try:
        with open(cell.pid_file, encoding="utf-8") as f:
            pid = int(f.read().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if _running(pid) else None


def _said_since(path: str, offset: int) -> str:
    """What the daemon wrote to ``path`` (its stdout and stderr) after ``offset``."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""


def _size(path: str) -> int:
    """The size of a file (-1: none)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def cmd_init(args: argparse.Namespace, cell: Cell) -> int:
    return run_init(cell, args.hostname, args.slots, args.split)


def cmd_start(args: argparse.Namespace, cell: Cell) -> int:
    if not cell.exists():
        rc = run_init(cell, args.hostname, args.slots)
        if rc != 0:
            return rc
    if _ping(cell) is not None:
        print(f"minisge: cell {cell.name} in {cell.root} is already running (pid {_pid(cell)})")
        return 0
    if args.foreground:
        return exec_daemon(cell, "allinone", "--hostname", args.hostname)
    daemon_out = os.path.join(cell.qmaster_spool, "daemon.out")
    with open(daemon_out, "ab") as log:
        said_before = log.tell()  # what the daemon says from here on is this start's
        # cwd "/": as exec_daemon
        proc = subprocess.Popen(daemon_argv("allinone", "--hostname", args.hostname), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True, env=daemon_env(cell), cwd="/")
    # 30 s for an answer, counted again whenever the daemon's log grows (reading a
    # spool of 100,000 jobs takes longer: it logs its progress, Qmaster.load)
    deadline = time.monotonic() + 30
    logged = _size(cell.messages)
    while time.monotonic() < deadline:
        if _size(cell.messages) != logged:
            logged = _size(cell.messages)
            deadline = time.monotonic() + 30
        if proc.poll() is not None:
            sys.stderr.write(_said_since(daemon_out, said_before))  # why, in the daemon's words
            print(f"minisge: the daemon exited with status {proc.returncode}; see {cell.messages}", file=sys.stderr)
            return 1
        if _ping(cell) is not None:
            print(f"minisge: cell {cell.name} started on {args.hostname} (pid {proc.pid})")
            print(f"minisge: its log: {cell.messages}")
            print(f"minisge: to use it: . {cell.settings}")
            return 0
        time.sleep(0.02)
    print("minisge: the daemon did not answer within 30 s", file=sys.stderr)
    return 1


def _stop(pid: int | None, what: str) -> int:
    """SIGTERM to ``pid`` and wait (30 s at most) until it is gone."""
    if pid is None:
        print(f"minisge: no {what} runs", file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGTERM)
    except PermissionError:  # a root-run cell shared by a lab: its users may not stop it
        print(f"minisge: the daemon of {what} (pid {pid}) is not yours: "
              "only its owner or root can stop it (a manager can: qconf -km)", file=sys.stderr)
        return 1
    deadline = time.monotonic() + 30
    pause = 0.002  # the daemon is usually gone within milliseconds: look often at first
    while time.monotonic() < deadline:
        if not _running(pid):
            print(f"minisge: {what} stopped")
            return 0
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    print(f"minisge: pid {pid} did not stop within 30 s", file=sys.stderr)
    return 1


def cmd_stop(args: argparse.Namespace, cell: Cell) -> int:
    pid = _pid(cell)
    if pid is None:
        print(f"minisge: no daemon runs for cell {cell.name} in {cell.root}", file=sys.stderr)
        if _execd_pid(cell, args.hostname) is not None:
            print(f"minisge: the execd of {args.hostname} runs here: minisge execd stop", file=sys.stderr)
        return 1
    return _stop(pid, f"cell {cell.name}")


def _execd_pid(cell: Cell, host: str) -> int | None:
    try:
        with open(cell.execd_pid_file(host), encoding="utf-8") as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return pid if _running(pid) else None


def _uptime(since: float) -> str:
    """How long since ``since`` (seconds since the epoch), as [D+]H:MM:SS."""
    seconds = max(0, int(time.time() - since))
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600}:{rest // 60 % 60:02d}:{rest % 60:02d}"
    return f"{days}+{text}" if days else text


def _started(path: str) -> float | None:
    """When a daemon wrote its pid file."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _ping_execd(cell: Cell, host: str) -> dict[str, Any] | None:
    """The qmaster's answer to a ping relayed by the execd of ``host`` on this machine."""
    path = os.path.join(cell.execd_spool(host), "execd.sock")
    try:
        sock = protocol.connect_unix(path, timeout=15)
    except OSError:
        return None
    try:
        reply = protocol.request(sock, {"op": catalogue.PING})
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()
    return reply if reply.get("ok") else None


def status_lines(cell: Cell, reply: dict[str, Any] | None, qmaster_pid: int | None, host: str,
                 execd_pid: int | None) -> list[str]:
    """What ``minisge status`` prints: the qmaster (from its answer to a ping,
    ``reply``), each execd connected to it, and the execd of ``host`` on this
    machine (``execd_pid``)."""
    lines = []
    if reply is not None:
        role = reply.get("role", "allinone")
        jobs = f"{reply['jobs']} jobs"
        if role == "allinone":
            head = f"cell {cell.name} in {cell.root}: qmaster, scheduler and execd running on {reply['host']}"
        else:
            head = f"cell {cell.name} in {cell.root}: qmaster and scheduler running on {reply['host']}"
        where = f"pid {qmaster_pid}" if qmaster_pid is not None else "on another host"
        lines.append(f"{head} ({where}), {jobs}")
        more = [] if role == "allinone" else [f"port {cell.qmaster_port()}"]
        started = reply.get("started")
        if isinstance(started, (int, float)):
            more.append(f"up {_uptime(started)}")
        if qmaster_pid is not None:
            more.append(f"log {cell.messages}")
        if more:
            lines.append("  " + ", ".join(more))
        execds = [e for e in reply.get("execds", []) if isinstance(e, dict)]
        for e in execds:
            since = e.get("since") or started
            up = f", up {_uptime(since)}" if isinstance(since, (int, float)) else ""
            place = "in the qmaster's process" if role == "allinone" else f"connected from {e.get('address')}"
            lines.append(f"  execd {e.get('host')}: {place}{up}, slots {e.get('used', 0)}/{e.get('slots', 0)} used")
        if not execds and role != "allinone":
            lines.append("  no execd connected: start one on each execution host (minisge execd)")
    if execd_pid is not None:
        since = _started(cell.execd_pid_file(host))
        up = f", up {_uptime(since)}" if since is not None else ""
        lines.append(f"execd {host} running on this machine (pid {execd_pid}{up}), "
                     f"qmaster {cell.act_qmaster() or '?'} port {cell.qmaster_port()}")
        lines.append(f"  log {os.path.join(cell.execd_spool(host), 'messages')}")
        if reply is None:
            lines.append("  the qmaster does not answer through it")
    return lines


def cmd_status(args: argparse.Namespace, cell: Cell) -> int:
    if not cell.exists():
        print(f"minisge: no cell {cell.name} in {cell.root}")
        return 1
    reply = _ping(cell)
    qmaster_pid = _pid(cell) if reply is not None else None
    execd_pid = _execd_pid(cell, args.hostname)
    if reply is None and execd_pid is not None:
        reply = _ping_execd(cell, args.hostname)
    if reply is None and execd_pid is None:
        print(f"cell {cell.name} in {cell.root}: not running")
        return 1
    for line in status_lines(cell, reply, qmaster_pid, args.hostname, execd_pid):
        print(line)
    return 0


def _qmaster_address(args: argparse.Namespace, cell: Cell) -> tuple[str, int]:
    if args.qmaster:
        host, _, port = args.qmaster.partition(":")
        return host, int(port) if port else cell.qmaster_port()
    return cell.act_qmaster() or short_hostname(), cell.qmaster_port()


def cmd_qmaster(args: argparse.Namespace, cell: Cell) -> int:
    if not cell.exists():
        rc = run_init(cell, args.hostname, args.slots, split=True)
        if rc != 0:
            return rc
    return exec_daemon(cell, "qmaster", "--hostname", args.hostname)


def cmd_execd(args: argparse.Namespace, cell: Cell) -> int:
    if args.action == "stop":
        return _stop(_execd_pid(cell, args.hostname), f"execd {args.hostname}")
    host, port = _qmaster_address(args, cell)
    return exec_daemon(cell, "execd", "--hostname", args.hostname, "--qmaster", f"{host}:{port}")


def cmd_web(args: argparse.Namespace, cell: Cell) -> int:
    """The web view's server in place of this process, once the cell answers
    (none: the commands' first line, minisge's hint)."""
    try:
        client.connect(cell, timeout=15).close()
    except client.NoQmaster as e:
        print(e.hint, file=sys.stderr)
        return 1
    return exec_argv(cell, [sys.executable, "-m", "minisge.web", "--port", str(args.port), "--bind", args.bind])


def run_replay(argv: list[str]) -> int:
    """``minisge replay ARGS``: ``python -m minisge.replay`` (the qmaster's code
    in simulated time, which this command does not load), its exit status.
    It runs from "/" (``python -m`` must not take a source tree in the current
    directory for the installed package) and is told this directory, for the
    relative paths of its arguments."""
    sys.stdout.flush()
    argv_run = [sys.executable, "-m", "minisge.replay", "--cwd", os.getcwd(), *argv]
    try:
        return subprocess.run(argv_run, cwd="/").returncode
    except KeyboardInterrupt:
        return 130


def help_text() -> str:
    """``minisge -help``: the cell's commands, then the table of commands."""
    width = max(len(n) for n in [*CELL_COMMANDS, *COMMANDS])
    lines = ["usage: minisge COMMAND [ARGS]", "", "the cell:"]
    lines += [f"  {name:<{width}}  {text}" for name, text in CELL_COMMANDS.items()]
    lines += [f"  {'replay':<{width}}  {REPLAY_HELP}"]
    lines += ["", "Grid Engine commands (minisge NAME ARGS, or NAME ARGS where they are installed):"]
    lines += [f"  {name:<{width}}  {c.help}" for name, c in COMMANDS.items() if name != "minisge"]
    return "\n".join(lines)


def run_command(name: str, argv: list[str]) -> int:
    """``minisge qsub ARGS``: a command of the table, in this process."""
    rc: int = importlib.import_module(COMMANDS[name].module).main(argv)
    return rc


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS and argv[0] != "minisge":
        return run_command(argv[0], argv[1:])
    if argv[:1] == ["replay"]:
        return run_replay(argv[1:])
    if argv[:1] in (["-help"], ["-h"], ["--help"]):
        print(help_text())
        return 0
    p = argparse.ArgumentParser(prog="minisge", description="A Grid Engine for a few workstations.",
                                epilog="minisge -help lists every command.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in CELL_COMMANDS.items():
        sp = sub.add_parser(name, help=text, description=text)
        if name != "web":
            sp.add_argument("--hostname", default=short_hostname())
        if name == "execd":
            sp.add_argument("action", nargs="?", choices=["stop"],
                            help="stop: stop the execd of --hostname on this machine (SIGTERM; its jobs go on)")
            sp.add_argument("--qmaster", default=None, help="HOST[:PORT] of the qmaster (default: act_qmaster)")
        if name in ("init", "start", "qmaster"):
            sp.add_argument("--slots", type=int, default=None, help="slots of all.q (default: the number of cores)")
        if name == "init":
            sp.add_argument("--split", action="store_true",
                            help="a cell spread over hosts: this host runs the qmaster only, and each new "
                                 "execd joins @allhosts (what minisge qmaster makes)")
        if name == "web":
            sp.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                            help=f"the TCP port to listen on (default {DEFAULT_PORT})")
            sp.add_argument("--bind", default=DEFAULT_BIND,
                            help=f"the address to listen on (default {DEFAULT_BIND}: this host's browsers only); "
                                 "users are the owners of the connections' sockets on this host, whatever the "
                                 "address")
        if name == "start":
            sp.add_argument("--foreground", action="store_true", help="stay attached (for systemd and tests)")
    # Grid Engine's -help after a cell command too (minisge web -help)
    args = p.parse_args([("--help" if a == "-help" else a) for a in argv])
    cell = Cell.from_env()
    commands = {"init": cmd_init, "start": cmd_start, "stop": cmd_stop, "status": cmd_status,
                "qmaster": cmd_qmaster, "execd": cmd_execd, "web": cmd_web}
    return commands[args.command](args, cell)


if __name__ == "__main__":
    sys.exit(main())
