"""Requests sent ahead over one connection (minisge.protocol.trio_streams):
a handler's ``begin`` takes a request at once and answers it later, the
replies still go in the order of the requests, the replies ready together
go in one send, and a bad frame after them closes that connection only,
after their replies."""

from __future__ import annotations

import logging

import pytest
import trio

from minisge import protocol
from minisge.protocol import trio_streams as pt
from minisge.protocol.daemon_wire import FrameDecoder


class CountingStream(trio.abc.Stream):
    """A daemon's end of a connection (a socket stream) that records each send."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.inner = trio.SocketStream(sock)
        self.socket = sock
        self.sends: list[bytes] = []

    async def send_all(self, data) -> None:
        self.sends.append(bytes(data))
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes=None):
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


class Batching:
    """Takes ``submit`` at once and answers the submissions taken so far
    all together when told (:meth:`commit`), as a group commit does; any
    other request through its coroutine, after the earlier ones' answers."""

    def __init__(self) -> None:
        self.taken: list[tuple[dict, object]] = []
        self.arrived = trio.Event()
        self.expect = 0
        self.more = trio.Event()  # one more taken

    def begin(self, request, peer, answer) -> bool:
        if request["op"] == "boom":
            raise RuntimeError("begin bug")
        if request["op"] != "submit":
            return False
        self.taken.append((request, answer))
        self.more.set()
        if len(self.taken) >= self.expect:
            self.arrived.set()
        return True

    async def until_taken(self, n: int) -> None:
        """Until ``n`` requests wait for their commit."""
        with trio.fail_after(10):
            while len(self.taken) < n:
                self.more = trio.Event()
                await self.more.wait()

    def commit(self) -> None:
        taken, self.taken = self.taken, []
        for request, answer in taken:
            answer(protocol.ok_reply(n=request["n"]))  # type: ignore[operator]

    async def __call__(self, request, peer, send_more):
        await pt.earlier_requests_answered()
        return protocol.ok_reply(op=request["op"])


async def serve_pair(nursery, handler):
    """A connected pair: the daemon's end served with ``handler``, and ours."""
    ours, theirs = trio.socket.socketpair()
    stream = CountingStream(theirs)
    nursery.start_soon(pt.serve_local, stream, handler)
    return stream, trio.SocketStream(ours)


async def read_frames(stream: trio.SocketStream, n: int) -> list[dict]:
    decoder = FrameDecoder()
    got: list[dict] = []
    while len(got) < n:
        data = await stream.receive_some(65536)
        if not data:
            decoder.eof()
            break
        got += decoder.feed(data)
    return got


def frames_in(data: bytes) -> int:
    return len(FrameDecoder().feed(data))


async def test_replies_ready_together_go_in_one_send_in_the_order_of_the_requests(nursery):
    handler = Batching()
    handler.expect = 20
    daemon, client = await serve_pair(nursery, handler)
    await client.send_all(b"".join(protocol.encode({"op": "submit", "n": k}) for k in range(20))
                          + protocol.encode({"op": "qstat"}))
    with trio.fail_after(10):
        await handler.arrived.wait()
    assert daemon.sends == []  # none is answered before its commit, nor the qstat after them
    handler.commit()
    with trio.fail_after(10):
        replies = await read_frames(client, 21)
    assert [r.get("n") for r in replies[:20]] == list(range(20)) and replies[20] == {"ok": True, "op": "qstat"}
    assert frames_in(daemon.sends[0]) >= 20 and len(daemon.sends) <= 2, [frames_in(s) for s in daemon.sends]
    await client.aclose()


async def test_a_request_begun_later_is_answered_after_the_earlier_ones(nursery):
    handler = Batching()
    handler.expect = 2
    daemon, client = await serve_pair(nursery, handler)
    # the qstat between the submissions waits for the first one's answer before it is handled
    await client.send_all(protocol.encode({"op": "submit", "n": 0}) + protocol.encode({"op": "qstat"})
                          + protocol.encode({"op": "submit", "n": 1}))
    await handler.until_taken(1)
    await trio.sleep(0.05)
    assert len(handler.taken) == 1 and daemon.sends == []
    handler.commit()
    await handler.until_taken(1)  # then the qstat is answered, and the second submission begun
    handler.commit()
    with trio.fail_after(10):
        replies = await read_frames(client, 3)
    assert replies == [{"ok": True, "n": 0}, {"ok": True, "op": "qstat"}, {"ok": True, "n": 1}]
    await client.aclose()


async def test_a_bad_frame_after_requests_sent_ahead_closes_after_their_replies(nursery, caplog):
    handler = Batching()
    handler.expect = 3
    daemon, client = await serve_pair(nursery, handler)
    await client.send_all(b"".join(protocol.encode({"op": "submit", "n": k}) for k in range(3))
                          + b"GET / HTTP/1.0\r\n\r\n")
    with trio.fail_after(10):
        await handler.arrived.wait()
    await trio.sleep(0.05)
    handler.commit()
    with trio.fail_after(10):
        replies = await read_frames(client, 5)
    assert [r.get("n") for r in replies[:3]] == [0, 1, 2]
    assert replies[3]["ok"] is False and "bad magic" in replies[3]["error"] and len(replies) == 4
    assert "closing connection from pid" in caplog.text


async def test_a_fault_in_begin_gets_an_error_reply_and_the_connection_goes_on(nursery, caplog):
    handler = Batching()
    handler.expect = 1
    daemon, client = await serve_pair(nursery, handler)
    with caplog.at_level(logging.ERROR):
        await client.send_all(protocol.encode({"op": "boom"}) + protocol.encode({"op": "qstat"}))
        with trio.fail_after(10):
            replies = await read_frames(client, 2)
    assert replies == [{"ok": False, "error": "internal error while handling 'boom'", "rc": 1},
                       {"ok": True, "op": "qstat"}]
    assert "begin bug" in caplog.text
    await client.aclose()


@pytest.mark.parametrize("in_flight", [pt.MAX_IN_FLIGHT + 10])
async def test_no_more_requests_are_begun_than_the_limit_in_flight(nursery, in_flight):
    handler = Batching()
    handler.expect = pt.MAX_IN_FLIGHT
    daemon, client = await serve_pair(nursery, handler)
    await client.send_all(b"".join(protocol.encode({"op": "submit", "n": k}) for k in range(in_flight)))
    with trio.fail_after(10):
        await handler.arrived.wait()
    await trio.sleep(0.05)
    assert len(handler.taken) == pt.MAX_IN_FLIGHT  # the rest wait, unread, until some are answered
    handler.commit()
    await handler.until_taken(in_flight - pt.MAX_IN_FLIGHT)
    handler.commit()
    with trio.fail_after(10):
        replies = await read_frames(client, in_flight)
    assert [r["n"] for r in replies] == list(range(in_flight))
    await client.aclose()
