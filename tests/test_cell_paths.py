"""minisge.cell's environment and paths without os (the commands' plain paths
load no os, issue 14): each the same as os and os.path give."""

from __future__ import annotations

import os
import posixpath
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from minisge import cell

PARTS = st.text(alphabet="ab/.", max_size=8)


@given(PARTS, st.lists(PARTS, max_size=4))
def test_join_path_is_os_path_join(first, rest):
    assert cell.join_path(first, *rest) == posixpath.join(first, *rest)


@given(PARTS)
def test_absolute_path_is_os_path_abspath(path):
    assert cell.absolute_path(path) == posixpath.abspath(path)


def test_path_exists_is_os_path_exists(tmp_path):
    for path in (str(tmp_path), str(tmp_path / "none"), "", "a\0b", str(tmp_path / "f" / "g")):
        assert cell.path_exists(path) == os.path.exists(path), path


def test_home_directory_is_expanduser(monkeypatch):
    for home in ("/home/x/", "/", "/h//"):
        monkeypatch.setenv("HOME", home)
        assert cell.home_directory() == os.path.expanduser("~")
    monkeypatch.delenv("HOME")
    assert cell.home_directory() == os.path.expanduser("~")


def test_the_environment_is_os_environ_once_os_is_loaded(monkeypatch):
    monkeypatch.setenv("MINISGE_PROBE", "changed through os")
    assert cell.environment() is os.environ


def test_the_environment_without_os_is_decoded_as_os_decodes_it(tmp_path):
    """In a process that never loads os: the same mapping os.environ would
    give, a value that is not UTF-8 included (surrogateescape)."""
    probe = ("import sys\nsys.path.insert(0, sys.argv[1])\nimport minisge.cell as c\n"
             "assert 'os' not in sys.modules\nenv = dict(c.environment())\nimport os\n"
             "assert env == dict(os.environ), (env, dict(os.environ))\n"
             "print(repr(env['MINISGE_BYTES']), c.home_directory(), c.absolute_path('x/../y'))\n")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {b"MINISGE_BYTES": b"caf\xe9", b"HOME": b"/home/probe/", b"PATH": os.environb.get(b"PATH", b"/usr/bin")}
    p = subprocess.run([sys.executable, "-I", "-S", "-c", probe, top], env=env, cwd=str(tmp_path),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"'caf\\udce9' /home/probe {tmp_path}/y\n"
