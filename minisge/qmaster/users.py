"""Who a uid or gid is, by the names the password and group databases give
(a number the databases do not know stays a number, as in Grid Engine).

A lookup reads the databases (``/etc/passwd`` through NSS: tens of
microseconds), and the qmaster asks for every request it answers, so a
name found is kept for a few seconds, as a name service cache would
(nscd keeps one for ten minutes); a number not found is asked again."""

from __future__ import annotations

import grp
import pwd
import time
from collections.abc import Callable

#: how long a name found is kept, in seconds
NAME_TTL = 5.0

_found: dict[tuple[str, int], tuple[float, str]] = {}


def _name(kind: str, number: int, lookup: Callable[[int], str]) -> str:
    now = time.monotonic()
    kept = _found.get((kind, number))
    if kept is not None and now - kept[0] < NAME_TTL:
        return kept[1]
    try:
        name = lookup(number)
    except KeyError:
        return str(number)
    if len(_found) > 4096:
        _found.clear()
    _found[(kind, number)] = (now, name)
    return name


def user_name(uid: int) -> str:
    return _name("u", uid, lambda n: pwd.getpwuid(n).pw_name)


def group_name(gid: int) -> str:
    return _name("g", gid, lambda n: grp.getgrgid(n).gr_name)
