"""Who a uid or gid is, by the names the password and group databases give
(a number the databases do not know stays a number, as in Grid Engine)."""

from __future__ import annotations

import grp
import pwd


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
