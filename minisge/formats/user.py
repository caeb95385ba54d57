"""user(5): a user object as the qmaster spools it, with its share tree usage.

``qconf -suser`` prints the first five attributes; the spool file adds what
the ticket policies keep of the user (sge_share_tree(5): the usage is
decayed by ``halftime`` and kept in the user object, per project in
``project``)::

    name alice
    oticket 0
    fshare 0
    delete_time 0
    default_project NONE
    usage cpu=12.000000,mem=0.500000,io=0.000000,finished_jobs=3.000000
    usage_time_stamp 1795451453
    project NONE

A project's usage is written ``project NAME:cpu=...,finished_jobs=...``
(several projects separated by spaces).

>>> u = parse(write_spool(User("alice", usage=(("cpu", 12.0), ("finished_jobs", 3.0)), usage_time_stamp=5)))
>>> u.usage, u.usage_time_stamp
((('cpu', 12.0), ('finished_jobs', 3.0)), 5)
"""

from __future__ import annotations

import attrs

from minisge.formats.access_list import parse_ulong_attr
from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes

ATTRIBUTES = ("name", "oticket", "fshare", "delete_time", "default_project")
SPOOL_ATTRIBUTES = (*ATTRIBUTES, "usage", "usage_time_stamp", "project")

#: a usage list: ((name, value), ...)
UsageList = tuple[tuple[str, float], ...]


@attrs.frozen
class User:
    """A user: override tickets, functional shares, and its decayed usage."""

    name: str
    oticket: int = 0
    fshare: int = 0
    delete_time: int = 0
    default_project: str | None = None
    usage: UsageList = ()
    usage_time_stamp: int = 0
    project_usage: tuple[tuple[str, UsageList], ...] = ()


def _usage(text: str, path: str, lineno: int) -> UsageList:
    if text.upper() == "NONE":
        return ()
    out = []
    for item in text.split(","):
        name, sep, value = item.partition("=")
        try:
            out.append((name.strip(), float(value)))
        except ValueError:
            raise FormatError(f'invalid usage "{item}"', path, lineno) from None
        if not sep or not name.strip():
            raise FormatError(f'invalid usage "{item}"', path, lineno)
    return tuple(out)


def write_usage(usage: UsageList) -> str:
    return ",".join(f"{n}={v:.6f}" for n, v in usage) if usage else "NONE"


def parse(text: str, path: str = "<input>") -> User:
    """A user file (``qconf -Auser``'s five attributes, or the spool's eight)."""
    a = read_attributes(text, path, known=SPOOL_ATTRIBUTES, required=ATTRIBUTES)
    projects: list[tuple[str, UsageList]] = []
    if "project" in a and a["project"].value.upper() != "NONE":
        for item in a["project"].value.split():
            name, _sep, rest = item.partition(":")
            projects.append((name, _usage(rest or "NONE", path, a["project"].lineno)))
    dp = a["default_project"].value
    return User(
        name=a["name"].value,
        oticket=parse_ulong_attr("oticket", a["oticket"].value, path, a["oticket"].lineno),
        fshare=parse_ulong_attr("fshare", a["fshare"].value, path, a["fshare"].lineno),
        delete_time=parse_ulong_attr("delete_time", a["delete_time"].value, path, a["delete_time"].lineno),
        default_project=None if dp.upper() == "NONE" else dp,
        usage=_usage(a["usage"].value, path, a["usage"].lineno) if "usage" in a else (),
        usage_time_stamp=(parse_ulong_attr("usage_time_stamp", a["usage_time_stamp"].value, path,
                                           a["usage_time_stamp"].lineno) if "usage_time_stamp" in a else 0),
        project_usage=tuple(projects),
    )


def write(user: User) -> str:
    """The text ``qconf -suser NAME`` prints."""
    return write_attributes([
        ("name", user.name), ("oticket", str(user.oticket)), ("fshare", str(user.fshare)),
        ("delete_time", str(user.delete_time)), ("default_project", user.default_project or "NONE"),
    ], 0, wrap=False)


def write_spool(user: User) -> str:
    """The spool file: :func:`write` and the usage."""
    projects = " ".join(f"{n}:{write_usage(u)}" for n, u in user.project_usage) or "NONE"
    return write(user) + write_attributes([
        ("usage", write_usage(user.usage)), ("usage_time_stamp", str(user.usage_time_stamp)),
        ("project", projects)], 0, wrap=False)
