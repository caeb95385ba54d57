"""The password and group databases' entries (read through NSS: tens of
microseconds each), kept a few seconds as a name service cache would (nscd
keeps one for ten minutes): the qmaster asks who a uid or gid is for every
request it answers (``minisge.qmaster.users``), the execd a user's home and
shell at every task's start (``minisge.execd.shepherd_config:home_and_shell``).
A number the databases do not know raises KeyError and is asked again."""

from __future__ import annotations

import grp
import pwd
import time
from collections.abc import Callable
from typing import Any

#: how long an entry found is kept, in seconds
TTL = 5.0

_kept: dict[tuple[str, int], tuple[float, Any]] = {}


def _entry(kind: str, number: int, lookup: Callable[[int], Any]) -> Any:
    now = time.monotonic()
    kept = _kept.get((kind, number))
    if kept is not None and now - kept[0] < TTL:
        return kept[1]
    found = lookup(number)  # KeyError: not known (not kept)
    if len(_kept) > 4096:
        _kept.clear()
    _kept[(kind, number)] = (now, found)
    return found


def passwd_entry(uid: int) -> pwd.struct_passwd:
    """``pwd.getpwuid(uid)``, kept :data:`TTL` seconds."""
    found: pwd.struct_passwd = _entry("u", uid, pwd.getpwuid)
    return found


def group_entry(gid: int) -> grp.struct_group:
    """``grp.getgrgid(gid)``, kept :data:`TTL` seconds."""
    found: grp.struct_group = _entry("g", gid, grp.getgrgid)
    return found
