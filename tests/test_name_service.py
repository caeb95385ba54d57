"""The name service's entries (minisge.name_service): the databases' own,
kept a few seconds, and a number they do not know asked again."""

from __future__ import annotations

import grp
import pwd

import pytest

from minisge import name_service
from minisge.execd.shepherd_config import home_and_shell
from minisge.qmaster.users import group_name, user_name


def unknown_id() -> int:
    n = 4_000_000
    while True:
        try:
            pwd.getpwuid(n)
            grp.getgrgid(n)
        except KeyError:
            return n
        n += 1


def test_the_entries_are_the_databases_and_kept(monkeypatch):
    first = name_service.passwd_entry(0)
    assert first == pwd.getpwuid(0)
    assert name_service.passwd_entry(0) is first  # kept
    assert name_service.group_entry(0) == grp.getgrgid(0)
    assert user_name(0) == pwd.getpwuid(0).pw_name and group_name(0) == grp.getgrgid(0).gr_name
    assert home_and_shell(0) == (first.pw_dir, first.pw_shell or "/bin/sh")
    monkeypatch.setattr(name_service, "TTL", 0.0)  # the time kept is over: read again
    assert name_service.passwd_entry(0) is not first


def test_a_number_not_known_is_not_kept(monkeypatch):
    n = unknown_id()
    asked: list[int] = []
    lookup = pwd.getpwuid
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: asked.append(uid) or lookup(uid))
    for _ in range(2):
        with pytest.raises(KeyError):
            name_service.passwd_entry(n)
    assert asked == [n, n]  # asked again
    assert user_name(n) == str(n) and group_name(n) == str(n)
    assert home_and_shell(n) == ("/", "/bin/sh")
