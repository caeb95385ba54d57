"""``minisge``: lay down, start, stop and inspect a cell.

    minisge init [--slots N] [--hostname H]   create the cell (from spool/)
    minisge start [--foreground] [--hostname H]
                                              create it if needed, start the
                                              all-in-one daemon, return once it answers
    minisge stop                              shut the daemon down (SIGTERM)
    minisge status                            what runs where
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

from minisge.cell import Cell, short_hostname


def _ping(cell: Cell) -> dict | None:
    from minisge import protocol

    try:
        sock = protocol.connect_unix(cell.socket_path, timeout=5)
    except OSError:
        return None
    try:
        return protocol.request(sock, {"op": "ping"})
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        sock.close()


def _pid(cell: Cell) -> int | None:
    try:
        with open(cell.pid_file, encoding="utf-8") as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
        return pid
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        return None


def cmd_init(args, cell: Cell) -> int:
    from minisge.cell_init import init_cell

    try:
        for line in init_cell(cell, args.hostname, args.slots):
            print(line)
    except FileExistsError as e:
        print(f"minisge: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_start(args, cell: Cell) -> int:
    if not cell.exists():
        from minisge.cell_init import init_cell

        for line in init_cell(cell, args.hostname, args.slots):
            print(line)
    if _ping(cell) is not None:
        print(f"minisge: cell {cell.name} in {cell.root} is already running (pid {_pid(cell)})")
        return 0
    if args.foreground:
        return _run_foreground(cell, args.hostname)
    log = open(os.path.join(cell.qmaster_spool, "daemon.out"), "ab")
    if getattr(sys, "frozen", False):  # the single binary
        cmd = [sys.executable, "start", "--foreground", "--hostname", args.hostname]
    else:
        cmd = [sys.executable, "-m", "minisge.cli.minisge", "start", "--foreground", "--hostname", args.hostname]
    env = dict(os.environ, SGE_ROOT=cell.root, SGE_CELL=cell.name)
    # cwd "/": a daemon holds no directory, and "python -m" must not pick up
    # a source tree in the current directory instead of the installed package
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                            env=env, cwd="/")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"minisge: the daemon exited with status {proc.returncode}; see {cell.messages}", file=sys.stderr)
            return 1
        if _ping(cell) is not None:
            print(f"minisge: cell {cell.name} started on {args.hostname} (pid {proc.pid})")
            print(f"minisge: to use it: . {cell.settings}")
            return 0
        time.sleep(0.02)
    print("minisge: the daemon did not answer within 30 s", file=sys.stderr)
    return 1


def _run_foreground(cell: Cell, host: str) -> int:
    import trio

    from minisge.daemon import run_allinone, setup_logging

    setup_logging(cell.messages)
    trio.run(run_allinone, cell, host)
    return 0


def cmd_stop(args, cell: Cell) -> int:
    pid = _pid(cell)
    if pid is None:
        print(f"minisge: no daemon runs for cell {cell.name} in {cell.root}", file=sys.stderr)
        return 1
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            print(f"minisge: cell {cell.name} stopped")
            return 0
        time.sleep(0.02)
    print(f"minisge: pid {pid} did not stop within 30 s", file=sys.stderr)
    return 1


def cmd_status(args, cell: Cell) -> int:
    if not cell.exists():
        print(f"minisge: no cell {cell.name} in {cell.root}")
        return 1
    reply = _ping(cell)
    if reply is None:
        print(f"cell {cell.name} in {cell.root}: not running")
        return 1
    print(f"cell {cell.name} in {cell.root}: qmaster, scheduler and execd running on {reply['host']} (pid {_pid(cell)}), {reply['jobs']} jobs")
    return 0


def _qmaster_address(args, cell: Cell) -> tuple[str, int]:
    if args.qmaster:
        host, _, port = args.qmaster.partition(":")
        return host, int(port) if port else cell.qmaster_port()
    return cell.act_qmaster() or short_hostname(), cell.qmaster_port()


def cmd_qmaster(args, cell: Cell) -> int:
    import trio

    from minisge.daemon import setup_logging
    from minisge.remote import run_qmaster

    if not cell.exists():
        from minisge.cell_init import init_cell

        for line in init_cell(cell, args.hostname, args.slots):
            print(line)
    setup_logging(cell.messages)
    trio.run(run_qmaster, cell, args.hostname)
    return 0


def cmd_execd(args, cell: Cell) -> int:
    import trio

    from minisge.daemon import setup_logging
    from minisge.remote import run_execd

    spool = cell.execd_spool(args.hostname)
    os.makedirs(spool, exist_ok=True)
    setup_logging(os.path.join(spool, "messages"))
    trio.run(run_execd, cell, args.hostname, _qmaster_address(args, cell))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="minisge", description="A Grid Engine for a few workstations.")
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("init", "start", "stop", "status", "qmaster", "execd"):
        sp = sub.add_parser(name)
        sp.add_argument("--hostname", default=short_hostname())
        if name == "execd":
            sp.add_argument("--qmaster", default=None, help="HOST[:PORT] of the qmaster (default: act_qmaster)")
        if name in ("init", "start", "qmaster"):
            sp.add_argument("--slots", type=int, default=None, help="slots of all.q (default: the number of cores)")
        if name == "start":
            sp.add_argument("--foreground", action="store_true", help="stay attached (for systemd and tests)")
    args = p.parse_args(argv)
    cell = Cell.from_env()
    commands = {"init": cmd_init, "start": cmd_start, "stop": cmd_stop, "status": cmd_status,
                "qmaster": cmd_qmaster, "execd": cmd_execd}
    return commands[args.command](args, cell)


if __name__ == "__main__":
    sys.exit(main())
