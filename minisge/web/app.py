"""The web view's ASGI application: one page, its data as JSON and as a
stream of Server-Sent Events, for the local user at the other end.

Routes (GET only; the view changes nothing):

- ``/``: the page (``page.html`` of this package: plain HTML and JavaScript,
  no build step), which opens ``/api/events`` and draws each document;
- ``/api/cell``: the document (:func:`minisge.web.view.document`) once, as JSON;
- ``/api/events``: ``text/event-stream``, a ``data:`` event with the
  document whenever it changes (looked at every :attr:`WebView.interval`
  seconds), a comment line every :data:`KEEPALIVE` seconds otherwise.

Every request is answered for the local user owning the client's socket
(:func:`minisge.web.identity.socket_owner`); one whose owner cannot be
found gets a 403 and nothing of the cell.  A ``Host`` header that names
neither this host nor the address the server listens on is refused too
(421): a page of another site that a browser was tricked into sending here
(DNS rebinding: a name of the attacker's that resolves to this host) would
otherwise read the user's view.  An IP address is always a right Host (the
browser was pointed at this host itself).

The cell is asked through the protocol, as the commands ask it
(:func:`ask`: ping, ``qconf -sm``, ``qstat -f -u '*'``, ``qstat -j`` of the
pending jobs), never through its spool; one look serves every stream
(:class:`CellWatch`).
"""

from __future__ import annotations

import importlib.resources
import json
import math
import pwd
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

import trio

from minisge import protocol
from minisge.cell import Cell
from minisge.protocol import catalogue, client
from minisge.web.identity import is_address, socket_owner
from minisge.web.view import CellState, document, pending_job_ids

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: seconds between two looks at the cell while someone watches
INTERVAL = 1.0
#: seconds of an unchanged cell after which a stream sends a comment (proxies and browsers keep it open)
KEEPALIVE = 15.0
#: seconds a request to the qmaster may take
ASK_TIMEOUT = 10.0

NOT_KNOWN = ("minisge web: cannot tell which local user owns this connection (its socket is not one of this "
             "host's: only users of this host, over TCP, are served)")


def ask(cell: Cell) -> CellState:
    """One look at the cell through its socket (blocking: run in a thread)."""
    try:
        sock = client.connect(cell, timeout=ASK_TIMEOUT)
    except client.NoQmaster as e:
        return CellState(error=e.hint)
    try:
        ping = protocol.request(sock, {"op": catalogue.PING})
        managers = protocol.request(sock, {"op": catalogue.QCONF, "cmd": "-sm"})
        full = protocol.request(sock, {"op": catalogue.QSTAT_FULL, "users": ["*"], "detail": False})
        if not full.get("ok"):
            return CellState(error=str(full.get("error", "")))
        jobs = list(full.get("jobs") or ())
        detail = protocol.request(sock, {"op": catalogue.JOB_DETAIL, "ids": pending_job_ids(jobs)})
    except (OSError, protocol.ProtocolError) as e:
        return CellState(error=client.comm_failure(e, cell))
    finally:
        sock.close()
    return CellState(
        cell=str(ping.get("cell", cell.name)), host=str(ping.get("host", "")),
        admin_user=str(ping.get("admin_user", "")),
        managers=frozenset(str(managers.get("out", "")).split()) if managers.get("rc") == 0 else frozenset(),
        queues=list(full.get("queue_info") or ()), jobs=jobs,
        reasons=dict(detail.get("reasons") or {}) if detail.get("ok") else {},
        global_messages=list(detail.get("global") or ()) if detail.get("ok") else [])


class CellWatch:
    """The latest look at the cell, taken again when a reader finds it older
    than ``interval`` seconds: streams share one look, and nobody watching
    costs the qmaster nothing."""

    def __init__(self, cell: Cell, interval: float = INTERVAL,
                 asker: Callable[[Cell], CellState] = ask) -> None:
        self.cell, self.interval, self.asker = cell, interval, asker
        self.lock = trio.Lock()
        self.state = CellState(error="not asked yet")
        self.taken = -math.inf

    async def current(self) -> CellState:
        async with self.lock:
            if trio.current_time() - self.taken >= self.interval:
                self.state = await trio.to_thread.run_sync(self.asker, self.cell, abandon_on_cancel=True)
                self.taken = trio.current_time()
            return self.state


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def page() -> bytes:
    return importlib.resources.files("minisge.web").joinpath("page.html").read_bytes()


def encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8",
                                                                                               "backslashreplace")


class WebView:
    """The ASGI application (``hosts``: the names a ``Host`` header may give,
    lower case, without the port)."""

    def __init__(self, watch: CellWatch, hosts: Iterable[str], keepalive: float = KEEPALIVE) -> None:
        self.watch, self.hosts, self.keepalive = watch, frozenset(hosts), keepalive
        self.page = page()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return  # websockets: none here (hypercorn closes them)
        await self.http(scope, receive, send)

    def host_allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers") or ():
            if name == b"host":
                host = value.decode("latin-1").lower()
                host = host[1:host.find("]")] if host.startswith("[") else host.rpartition(":")[0] or host
                return host in self.hosts or is_address(host)
        return True  # HTTP/1.0 without Host: the connection's own check still holds

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET":
            return await respond(send, 405, b"minisge web is read-only: GET only\n", [(b"allow", b"GET")])
        if not self.host_allowed(scope):
            return await respond(send, 421, b"minisge web: this Host is not this server's\n")
        client_end, server_end = scope.get("client"), scope.get("server")
        uid = socket_owner(tuple(client_end), tuple(server_end)) if client_end and server_end else None
        if uid is None:
            return await respond(send, 403, NOT_KNOWN.encode() + b"\n")
        user = user_name(uid)
        path = scope["path"]
        if path == "/":
            return await respond(send, 200, self.page, [(b"content-type", b"text/html; charset=utf-8")])
        if path == "/api/cell":
            doc = document(await self.watch.current(), uid, user)
            return await respond(send, 200, encode(doc) + b"\n", [(b"content-type", b"application/json")])
        if path == "/api/events":
            return await self.events(uid, user, receive, send)
        return await respond(send, 404, b"minisge web: no such page\n")

    async def events(self, uid: int, user: str, receive: Receive, send: Send) -> None:
        """The stream of documents, until the client goes."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]})
        async with trio.open_nursery() as nursery:
            async def until_gone() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                nursery.cancel_scope.cancel()

            nursery.start_soon(until_gone)
            last, since = b"", trio.current_time()
            while True:
                data = encode(document(await self.watch.current(), uid, user))
                if data != last:
                    await send({"type": "http.response.body", "body": b"data: " + data + b"\n\n", "more_body": True})
                    last, since = data, trio.current_time()
                elif trio.current_time() - since >= self.keepalive:
                    await send({"type": "http.response.body", "body": b": unchanged\n\n", "more_body": True})
                    since = trio.current_time()
                await trio.sleep(self.watch.interval)


async def respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = headers or [(b"content-type", b"text/plain; charset=utf-8")]
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff")]})
    await send({"type": "http.response.body", "body": body})
