"""The line layer shared by the flat-file formats.

Reading: backslash-newline continuation (the backslash and the newline become
one space before anything else is interpreted), ``#`` comment lines, blank
lines, and ``name value`` attribute lines with their line numbers.

Writing: ``name`` padded to a value column, and Grid Engine's own line
breaking of long lines (split on white space and commas at 80 columns, a
`` \\`` at the end of a broken line and the continuation indented to the
value column).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from minisge.formats.errors import FormatError

MAX_LINE_LENGTH = 80

# the comment header Grid Engine's classic spooling writes before an object
# (sge_spool.c sge_spoolmsg_write)
SPOOL_HEADER = "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n"


def strip_header(text: str) -> str:
    """Drop the ``# Version`` comment header a spooled object starts with."""
    if text.startswith(SPOOL_HEADER):
        return text[len(SPOOL_HEADER):]
    return text


class Line(NamedTuple):
    lineno: int  # 1-based number of the first physical line
    text: str  # the logical line, continuations joined with a space


def logical_lines(
    text: str, keep_comments: bool = False, keep_blank: bool = False, join: str = "space"
) -> Iterator[Line]:
    """Join continued lines; drop comment and blank lines unless asked.

    ``join="space"`` follows the man pages: the backslash and the newline
    become one space.  ``join="ge"`` follows Grid Engine's flat-file scanner
    (``sge_spooling_flatfile_scanner.l``): the white space around the break
    goes too, and the pieces are joined by nothing after a comma, else by one
    space, so a value broken by ``add_line_breaks`` reads back unchanged.
    """
    if join == "ge":
        yield from _logical_lines_ge(text, keep_comments, keep_blank)
        return
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    i = 0
    n = len(physical)
    while i < n:
        start = i
        parts = []
        cur = physical[i].rstrip("\r")
        while cur.endswith("\\") and i + 1 < n:
            parts.append(cur[:-1])
            i += 1
            cur = physical[i].rstrip("\r")
        if cur.endswith("\\"):  # a backslash on the very last line
            cur = cur[:-1]
        parts.append(cur)
        i += 1
        joined = " ".join(parts)
        stripped = joined.strip()
        if not stripped:
            if keep_blank:
                yield Line(start + 1, joined)
            continue
        if stripped.startswith("#") and not keep_comments:
            continue
        yield Line(start + 1, joined)


def _logical_lines_ge(text: str, keep_comments: bool, keep_blank: bool) -> Iterator[Line]:
    """``logical_lines`` with Grid Engine's own joining of continued lines."""
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    i = 0
    n = len(physical)
    while i < n:
        start = i
        cur = physical[i].rstrip("\r")
        joined = ""
        while True:
            bare = cur.rstrip(" \t\r")
            if not bare.endswith("\\") or i + 1 >= n:
                if bare.endswith("\\"):  # a backslash on the very last line
                    cur = bare[:-1]
                joined = _ge_join(joined, cur) if joined else cur
                i += 1
                break
            piece = bare[:-1]
            joined = _ge_join(joined, piece) if joined else piece
            i += 1
            cur = physical[i].rstrip("\r")
        stripped = joined.strip()
        if not stripped:
            if keep_blank:
                yield Line(start + 1, joined)
            continue
        if stripped.startswith("#") and not keep_comments:
            continue
        yield Line(start + 1, joined)


def _ge_join(left: str, right: str) -> str:
    """Join two pieces of a continued line as Grid Engine's scanner does."""
    left = left.rstrip(" \t\r")
    right = right.lstrip(" \t\r")
    if left.endswith(",") or not left:
        return left + right
    return left + " " + right


class Attribute(NamedTuple):
    lineno: int
    name: str
    value: str  # the rest of the line, outer white space stripped ("" if none)


def read_attributes(
    text: str,
    path: str = "<input>",
    known: Iterable[str] | None = None,
    required: Iterable[str] | None = None,
    allow_empty: bool = False,
    join: str = "space",
) -> dict[str, Attribute]:
    """Parse ``name value`` lines into a dict keyed by name.

    Unknown names (when ``known`` is given), repeated names, values missing
    (unless ``allow_empty``) and missing ``required`` names are errors.
    """
    known_set = set(known) if known is not None else None
    out: dict[str, Attribute] = {}
    for ln in logical_lines(text, join=join):
        s = ln.text.strip()
        parts = s.split(None, 1)
        name = parts[0]
        value = parts[1].strip() if len(parts) > 1 else ""
        if known_set is not None and name not in known_set:
            raise FormatError(f'unknown attribute name "{name}"', path, ln.lineno)
        if name in out:
            raise FormatError(f'attribute "{name}" given more than once', path, ln.lineno)
        if not value and not allow_empty:
            raise FormatError(f'missing value for attribute "{name}"', path, ln.lineno)
        out[name] = Attribute(ln.lineno, name, value)
    if required is not None:
        for name in required:
            if name not in out:
                raise FormatError(f'missing attribute "{name}"', path, 0)
    return out


def write_attributes(pairs: Iterable[tuple[str, str]], width: int, wrap: bool = True) -> str:
    """``name`` left-justified in ``width`` columns, then the value.

    A name as long as the column or longer gets one space.  With ``wrap`` the
    result goes through :func:`add_line_breaks` as Grid Engine's flat-file
    writer does.
    """
    out = []
    for name, value in pairs:
        pad = width - len(name)
        out.append(name + " " * (pad if pad > 0 else 1) + value + "\n")
    text = "".join(out)
    return add_line_breaks(text) if wrap else text


def _isspace(c: str) -> bool:
    return c in " \t\n\r\v\f"


def add_line_breaks(text: str, max_len: int = MAX_LINE_LENGTH) -> str:
    """Break lines longer than ``max_len`` the way Grid Engine 8.1 does.

    A break is `` \\``, a newline and enough spaces to reach the second word
    of the first line (the word after the first white space or ``=`` run).
    The break point is the last white space or comma that fits; a comma stays
    at the end of the broken line, a white space is dropped.  A run with no
    break point is broken at the first white space or comma after it.
    """
    out: list[str] = []
    s = text
    pos = 0
    word = 0
    indent: str | None = None
    first_line = True
    n = len(s)

    def ch(k: int) -> str:
        return s[k] if k < n else "\0"

    while n - pos > max_len - word:
        nl = s.find("\n", pos)
        if nl != -1 and nl - pos <= max_len - word:
            out.append(s[pos : nl + 1])
            pos = nl + 1
            first_line = True
            if indent is not None:
                indent = None
                word = 0
            continue
        if indent is None:
            word = 0
            while not _isspace(ch(pos + word)) and ch(pos + word) != "=" and ch(pos + word) != "\0":
                word += 1
            while _isspace(ch(pos + word)) or ch(pos + word) == "=":
                word += 1
            indent = " \\\n" + " " * word
        if not first_line:
            while pos < n and _isspace(s[pos]):
                pos += 1
        if first_line:
            idx = max_len - 2
            while idx > word:
                c = ch(pos + idx)
                if _isspace(c) or (idx < max_len - 2 and c == ","):
                    break
                idx -= 1
        else:
            idx = max_len - word - 2
            while idx >= 1:
                c = ch(pos + idx)
                if _isspace(c) or (idx < max_len - word - 2 and c == ","):
                    break
                idx -= 1
        c = ch(pos + idx)
        if _isspace(c) and c != "\0":
            out.append(s[pos : pos + idx])
            out.append(indent)
            pos += idx + 1
            first_line = False
            continue
        if c == ",":
            out.append(s[pos : pos + idx + 1])
            out.append(indent)
            pos += idx + 1
            first_line = False
            continue
        # no break point inside the limit: take the first one after it
        idx = (max_len - 2) if first_line else (max_len - word - 2)
        while pos + idx < n:
            c = s[pos + idx]
            if _isspace(c) or c == ",":
                break
            idx += 1
        c = ch(pos + idx)
        if c == "\n":
            out.append(s[pos : pos + idx + 1])
            pos += idx + 1
            first_line = True
            word = 0
            indent = None
            continue
        if c != "\0" and _isspace(c):
            out.append(s[pos : pos + idx])
            out.append(indent)
            pos += idx + 1
            first_line = False
            continue
        if c == ",":
            out.append(s[pos : pos + idx + 1])
            out.append(indent)
            pos += idx + 1
            first_line = False
            continue
        break
    out.append(s[pos:])
    return "".join(out)


def split_list(value: str) -> list[str]:
    """A list whose elements are separated by commas and/or white space."""
    return [p for p in value.replace(",", " ").split() if p]
