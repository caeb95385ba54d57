"""Who a uid or gid is, by the names the password and group databases give
(a number the databases do not know stays a number, as in Grid Engine).

The entries are read through :mod:`minisge.name_service`, which keeps
them a few seconds (the qmaster asks for every request it answers)."""

from __future__ import annotations

from minisge.name_service import group_entry, passwd_entry


def user_name(uid: int) -> str:
    try:
        return passwd_entry(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return group_entry(gid).gr_name
    except KeyError:
        return str(gid)
