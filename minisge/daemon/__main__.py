"""``python -m minisge.daemon``: the daemons' processes, as the ``minisge``
command starts them (its cell-manager commands run this module, so that the
command itself never loads trio or the daemons: ``minisge status`` stays a
light command).

    python -m minisge.daemon init --hostname H [--slots N] [--split]
                                                               lay the cell down
    python -m minisge.daemon allinone --hostname H             qmaster, scheduler and execd in one
                                                               process (``minisge start``)
    python -m minisge.daemon qmaster --hostname H              the qmaster and its scheduler
    python -m minisge.daemon execd --hostname H --qmaster HOST:PORT
                                                               an execution daemon

The cell is ``$SGE_ROOT/$SGE_CELL``.  The daemons run in the foreground until
SIGTERM; started by systemd (``$NOTIFY_SOCKET``), each tells it when it is
ready (:mod:`minisge.daemon.readiness`).  The single binary runs this module
as ``minisge -m minisge.daemon``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import trio

from minisge.cell import Cell
from minisge.daemon.allinone import run_allinone
from minisge.daemon.cell_init import init_cell
from minisge.daemon.process import raise_descriptor_limit, setup_logging
from minisge.daemon.readiness import Readiness
from minisge.daemon.roles import run_execd, run_qmaster
from minisge.daemon.spool_version import SpoolVersionError, check_spool_version, upgrade_cell
from minisge.formats.errors import FormatError
from minisge.protocol import KeyFileError

log = logging.getLogger("minisge.daemon")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m minisge.daemon")
    sub = p.add_subparsers(dest="role", required=True)
    for role in ("init", "allinone", "qmaster", "execd"):
        sp = sub.add_parser(role)
        sp.add_argument("--hostname", required=True)
        if role == "init":
            sp.add_argument("--slots", type=int, default=None)
            sp.add_argument("--split", action="store_true")
        if role == "execd":
            sp.add_argument("--qmaster", required=True, help="HOST:PORT of the qmaster")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cell = Cell.from_env()
    readiness = Readiness.from_environ()  # READY=1 to systemd once the role serves
    if args.role != "init":
        raise_descriptor_limit()
    if args.role == "init":
        try:
            for line in init_cell(cell, args.hostname, args.slots, split=args.split):
                print(line)
        except FileExistsError as e:
            print(f"minisge: {e}", file=sys.stderr)
            return 1
    elif args.role in ("allinone", "qmaster"):
        setup_logging(cell.messages)
        try:
            for line in upgrade_cell(cell):
                log.info("%s", line)
        except SpoolVersionError as e:  # a newer minisge's cell: said, and the spool left as it is
            log.error("cannot start: %s", e)
            print(f"minisge: cannot start: {e}", file=sys.stderr)
            return 1
        try:
            trio.run(run_allinone if args.role == "allinone" else run_qmaster, cell, args.hostname, readiness)
        except (FormatError, KeyFileError) as e:  # the spool or the key does not load: in the messages file too
            log.error("cannot start: %s", e)
            print(f"minisge: cannot start: {e}", file=sys.stderr)
            return 1
    else:
        host, _, port = args.qmaster.rpartition(":")
        spool = cell.execd_spool(args.hostname)
        os.makedirs(spool, exist_ok=True)
        setup_logging(os.path.join(spool, "messages"))
        try:
            check_spool_version(cell)
        except SpoolVersionError as e:
            log.error("cannot start: %s", e)
            print(f"minisge: cannot start: {e}", file=sys.stderr)
            return 1
        try:
            trio.run(run_execd, cell, args.hostname, (host, int(port)), readiness)
        except KeyFileError as e:  # no cell key or certificate copied to this host
            log.error("cannot start: %s", e)
            print(f"minisge: cannot start: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
