"""The qmaster's messages to its execds.

A message goes out at once (:meth:`Outbox.send`: a start, a kill for qdel)
or is posted (:meth:`Outbox.post`) and delivered by the scheduler loop after
its next flush (:meth:`Outbox.deliver`): an acknowledged task end may only
let the execd drop the task's directory once the end is spooled, and a
suspend or resume decided in synchronous code is spooled before the execd
acts.  The links themselves (in process or over TCP) are the qmaster's
registry of connected execds; a message for a host with no link is dropped
(its execd reconciles when it registers again).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("minisge.qmaster")

Message = dict[str, Any]


class ExecdLink:
    """How the qmaster reaches one execd (in process or over TCP)."""

    host: str
    address: str = "in the qmaster's process"  # where it connected from (minisge status)
    since: float = 0.0  # when it connected (seconds since the epoch; 0: as long as the qmaster; status, qping)

    async def send(self, msg: Message) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class Outbox:
    """Messages for the execds: sent now, or posted for after the next flush."""

    def __init__(self, links: Mapping[str, ExecdLink]):
        self.links = links
        self._posted: list[tuple[str, Message]] = []

    def post(self, host: str, msg: Message) -> None:
        """Queue ``msg`` for the execd of ``host`` (sent by :meth:`deliver`)."""
        self._posted.append((host, msg))

    def take(self) -> list[tuple[str, Message]]:
        """The posted messages, in order, removed from the outbox."""
        posted, self._posted = self._posted, []
        return posted

    async def send(self, host: str, msg: Message) -> bool:
        """Send ``msg`` to the execd of ``host`` now; False when it has no link."""
        link = self.links.get(host)
        if link is None:
            log.debug("no execd link to %s: %s dropped", host, msg.get("op"))
            return False
        await link.send(msg)
        return True

    async def deliver(self) -> None:
        """Send every posted message (the scheduler loop, after its flush)."""
        for host, msg in self.take():
            await self.send(host, msg)
