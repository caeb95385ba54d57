"""``python -m minisge.web [--port P] [--bind ADDR]``: the web view's
server process, as ``minisge web`` starts it (in its place, as the roles:
the ``minisge`` command itself never loads trio or the server).

The server is hypercorn (``hypercorn.trio.serve``): a maintained ASGI
server that runs on trio, as the daemons do, so the view is written with
trio's nursery and cancellation like the rest of minisge; HTTP/1.1 (with
h11), HTTP/2, keep-alive and the streaming that Server-Sent Events need are
its, not ours.  The application is :class:`minisge.web.app.WebView`.

The listening socket is made here (:func:`listening_socket`) and handed to
hypercorn (``fd://``), so that a port in use is said plainly before the
server starts.  SIGTERM or SIGINT stop it.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from minisge.cell import Cell
from minisge.web import DEFAULT_BIND, DEFAULT_PORT, port_number
from minisge.web.app import CellWatch, WebView
from minisge.web.identity import is_loopback

IDENTITY_NOTE = ("minisge web: {bind} is not a loopback address: a user is known by the owner of the "
                 "connection's socket on this host (as identd), so browsers of this host are served "
                 "and connections from other hosts are refused")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="minisge web")
    p.add_argument("--port", type=port_number, default=DEFAULT_PORT)
    p.add_argument("--bind", default=DEFAULT_BIND)
    return p.parse_args(argv)


def listening_socket(bind: str, port: int) -> socket.socket:
    """A TCP socket listening on ``bind``:``port`` (OSError if it cannot)."""
    family, kind, proto, _, address = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        # a restart finds the port free though connections of the last run linger (TIME_WAIT);
        # a server listening on it still makes bind fail
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def allowed_hosts(bind: str) -> set[str]:
    """The names a request's Host header may give (besides an IP address):
    this host's and the bind address."""
    return {n for n in ("localhost", bind.lower(), socket.gethostname().lower(), socket.getfqdn().lower()) if n}


async def serve_view(sock: socket.socket, cell: Cell, bind: str) -> None:
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.accesslog = None
    config.errorlog = "-"
    config.graceful_timeout = 1.0  # the event streams never end by themselves
    app = WebView(CellWatch(cell), allowed_hosts(bind))

    async def stopped() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                return

    await serve(app, config, shutdown_trigger=stopped)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cell = Cell.from_env()
    try:
        sock = listening_socket(args.bind, args.port)
    except OSError as e:
        print(f"minisge web: cannot listen on {args.bind} port {args.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    host = f"[{args.bind}]" if ":" in args.bind else args.bind
    if not is_loopback(args.bind):
        print(IDENTITY_NOTE.format(bind=args.bind), file=sys.stderr)
    print(f"minisge web: cell {cell.name} in {cell.root} on http://{host}:{sock.getsockname()[1]}/", flush=True)
    trio.run(serve_view, sock, cell, args.bind)
    return 0


if __name__ == "__main__":
    sys.exit(main())
