"""The qmaster's outbox: messages to execds, now or after the next flush."""

from __future__ import annotations

from minisge.qmaster.outbox import ExecdLink, Outbox


class Link(ExecdLink):
    def __init__(self, host: str):
        self.host = host
        self.got: list[dict] = []

    async def send(self, msg: dict) -> None:
        self.got.append(msg)


async def test_posted_messages_go_out_in_order_on_delivery():
    h1, h2 = Link("h1"), Link("h2")
    box = Outbox({"h1": h1, "h2": h2})
    box.post("h1", {"op": "ack_end", "n": 1})
    box.post("h2", {"op": "suspend"})
    box.post("h1", {"op": "ack_end", "n": 2})
    assert h1.got == [] and h2.got == []  # nothing before the flush
    await box.deliver()
    assert h1.got == [{"op": "ack_end", "n": 1}, {"op": "ack_end", "n": 2}]
    assert h2.got == [{"op": "suspend"}]
    await box.deliver()
    assert len(h1.got) == 2  # delivered once


async def test_a_message_for_a_host_without_link_is_dropped():
    links: dict[str, ExecdLink] = {}
    box = Outbox(links)
    assert await box.send("gone", {"op": "start"}) is False
    box.post("gone", {"op": "ack_end"})
    await box.deliver()
    assert box.take() == []
    links["gone"] = link = Link("gone")  # the registry is the qmaster's: a new link is seen
    assert await box.send("gone", {"op": "start"}) is True
    assert link.got == [{"op": "start"}]


def test_take_empties_the_outbox():
    box = Outbox({})
    box.post("h1", {"op": "terminate"})
    assert box.take() == [("h1", {"op": "terminate"})]
    assert box.take() == []
