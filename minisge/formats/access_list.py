"""access_list(5): user access lists and departments (``qconf -su``/``-Au``).

A file holds five attributes, all required (as ``qconf -Au`` demands)::

    name    arusers
    type    ACL
    fshare  0
    oticket 0
    entries NONE

``qconf -su`` pads the names to column 8 and breaks long ``entries`` lines
at commas.  ``type`` is ACL, DEPT or both (``ACL,DEPT`` / ``DEPT ACL`` are
read; Grid Engine always writes ``ACL DEPT``).  ``entries`` are user names
and ``@group`` names (primary UNIX groups).

Also here, because every object that refers to access lists uses it:
:func:`parse_name_list` for ``user_lists``/``xuser_lists``/``acl``/``xacl``
style attributes, and :func:`contains`, the membership rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, split_list, write_attributes
from minisge.formats.sge_types import SpecifierError

ATTRIBUTES = ("name", "type", "fshare", "oticket", "entries")
NAME_WIDTH = 8  # "oticket" + one space, as qconf -su prints
TYPES = ("ACL", "DEPT")
NONE = "NONE"


@attrs.frozen
class AccessList:
    """One userset: an access list, a department, or both."""

    name: str
    type: str = "ACL"  # "ACL", "DEPT" or "ACL DEPT"
    fshare: int = 0
    oticket: int = 0
    entries: tuple[str, ...] = ()

    @property
    def is_acl(self) -> bool:
        return "ACL" in self.type.split()

    @property
    def is_dept(self) -> bool:
        return "DEPT" in self.type.split()


def template(name: str) -> AccessList:
    """The userset ``qconf -au USER NAME`` starts from: an ACL, no shares."""
    return AccessList(name=name)


# --- sge_types(5) object_name and unsigned 32-bit values ---------------------

_KEY_FIRST_CHARS = {".": "Dot", "#": "Hash"}
_KEY_FORBIDDEN_CHARS = {
    "\n": "Return",
    "\t": "Tabulator",
    "\r": "Carriage return",
    " ": "Space",
    "/": "Slash",
    ":": "Colon",
    "'": "Quote",
    '"': "Double quote",
    "\\": "Backslash",
    "[": "Brackets",
    "]": "Brackets",
    "{": "Braces",
    "}": "Braces",
    "|": "Pipe",
    "(": "Parenthesis",
    ")": "Parenthesis",
    "@": "At",
    "%": "Percent",
    ",": "Comma",
}
_KEY_KEYWORDS = ("NONE", "ALL", "TEMPLATE")
MAX_OBJECT_NAME = 512
U_LONG32_MAX = 2**32 - 1
_ULONG_RE = re.compile(r"[+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\Z")


def check_object_name(text: str) -> None:
    """sge_types(5) ``object_name``: up to 512 printing ASCII characters, none
    of SPACE / : ' \\ [ ] { } | ( ) @ % , " (Grid Engine also refuses a
    leading ``.`` or ``#`` and the keywords NONE, ALL, TEMPLATE).

    Raises :class:`SpecifierError` in Grid Engine's own words.
    """
    if not text:
        raise SpecifierError("empty objectname")
    if len(text) > MAX_OBJECT_NAME:
        raise SpecifierError(f"string is longer than {MAX_OBJECT_NAME}, this is not allowed for objectnames")
    if text[0] in _KEY_FIRST_CHARS:
        raise SpecifierError(f"{_KEY_FIRST_CHARS[text[0]]} ('{text[0]}') not allowed as first character of objectname")
    for ch, what in _KEY_FORBIDDEN_CHARS.items():
        if ch in text:
            shown = f" ('{ch}')" if ch.isprintable() and ch != " " else ""
            raise SpecifierError(f"{what}{shown} not allowed in objectname")
    for ch in text:
        if not ch.isprintable() or not ch.isascii():
            raise SpecifierError(f"character {ch!r} not allowed in objectname")
    if text.upper() in _KEY_KEYWORDS:
        raise SpecifierError(f'Keyword ("{text.upper()}") not allowed as objectname')


def parse_ulong32(text: str) -> int:
    """An unsigned 32-bit value as Grid Engine's flat files read it.

    Like C ``strtod``: decimal (``010`` is ten), hexadecimal ``0x10``, a
    fraction or exponent if the value is whole (``1e3``, ``1.0``).  Negative,
    fractional, too large or trailing text is refused.
    """
    t = text.strip()
    if t.startswith("-"):
        raise SpecifierError(f'"{text}" must be a positive number')
    if not _ULONG_RE.match(t):
        raise SpecifierError(f'error parsing unsigned long value from string "{text}"')
    body = t.lstrip("+")
    if body[:2] in ("0x", "0X"):
        value = int(body, 16)
    else:
        dec = float(body)
        if not math.isfinite(dec) or dec != int(dec):
            raise SpecifierError(f'"{text}" is not an u_long32 value')
        value = int(dec)
    if value > U_LONG32_MAX:
        raise SpecifierError(f'"{text}" is not an u_long32 value')
    return value


# --- shared value parsers -------------------------------------------------


def is_none(value: str) -> bool:
    """NONE, in any case, as Grid Engine reads it."""
    return value.upper() == NONE


def parse_name_list(attr: str, value: str, path: str, line: int) -> tuple[str, ...]:
    """A list of object names (access lists, projects) or NONE.

    The man pages call these comma-separated; Grid Engine's reader splits them
    at white space.  Both separate here.  NONE stands alone; each name must be
    a valid ``object_name`` (sge_types(5)).
    """
    items = split_list(value)
    if not items:
        raise FormatError(f'missing value for attribute "{attr}"', path, line)
    if len(items) == 1 and is_none(items[0]):
        return ()
    for item in items:
        if is_none(item):
            raise FormatError(f'attribute "{attr}": NONE cannot be combined with other names', path, line)
        try:
            check_object_name(item)
        except SpecifierError as err:
            raise FormatError(f'attribute "{attr}": invalid name "{item}": {err}', path, line) from None
    return tuple(items)


def check_not_in_both(
    included: tuple[str, ...], excluded: tuple[str, ...], what: str, path: str, line: int
) -> None:
    """The qmaster's rule for an object's user_lists/xuser_lists (acl/xacl):
    no userset may be named in both."""
    for name in included:
        if name in excluded:
            raise FormatError(f'denied: multiple occurrences of userset "{name}" in {what}', path, line)


def write_name_list(names: Iterable[str], sep: str = " ") -> str:
    """Names joined as Grid Engine writes them, or NONE for none."""
    names = tuple(names)
    return sep.join(names) if names else NONE


def parse_ulong_attr(attr: str, value: str, path: str, line: int) -> int:
    """An unsigned 32-bit attribute (fshare, oticket, slots ...)."""
    try:
        return parse_ulong32(value)
    except SpecifierError as err:
        raise FormatError(f'attribute "{attr}": {err}', path, line) from None


# --- type and entries ------------------------------------------------------


def parse_type(value: str, path: str = "<input>", line: int = 0) -> str:
    """``ACL``, ``DEPT`` or both, comma- or space-separated, any case."""
    seen: list[str] = []
    for word in split_list(value):
        spec = word.upper()
        if spec not in TYPES:
            raise FormatError(f'unknown specifier "{word}" for userset type', path, line)
        if spec in seen:
            raise FormatError(f'specifier "{spec}" given twice for userset type', path, line)
        seen.append(spec)
    if not seen:
        raise FormatError('missing value for attribute "type"', path, line)
    return " ".join(t for t in TYPES if t in seen)


def _check_entry(entry: str, path: str, line: int) -> None:
    """A user name, or ``@`` and a primary UNIX group name."""
    name = entry[1:] if entry.startswith("@") else entry
    what = "group" if entry.startswith("@") else "user"
    if not name:
        raise FormatError(f'attribute "entries": "{entry}" lacks a {what} name', path, line)
    bad = set(name) & set(" \t/:'\"\\[]{}|()@%,")
    if bad or not name.isprintable():
        ch = "".join(sorted(bad)) or "a control character"
        raise FormatError(f'attribute "entries": invalid {what} name "{name}" (contains {ch!r})', path, line)


def parse_entries(value: str, path: str = "<input>", line: int = 0) -> tuple[str, ...]:
    """``entries``: users and ``@group``s, comma-separated, or NONE.

    Grid Engine keeps a blank inside an entry (``u1 u2`` becomes one user
    named "u1 u2", who never matches); here white space separates too.
    """
    items = split_list(value)
    if not items:
        raise FormatError('missing value for attribute "entries"', path, line)
    if len(items) == 1 and is_none(items[0]):
        return ()
    for item in items:
        if is_none(item):
            raise FormatError('attribute "entries": NONE cannot be combined with other entries', path, line)
        _check_entry(item, path, line)
    return tuple(items)


# --- parse and write ---------------------------------------------------------


def parse(text: str, path: str = "<input>") -> AccessList:
    """An access_list(5) file, as ``qconf -Au`` reads it."""
    attrs_ = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES, join="ge")
    name = attrs_["name"]
    try:
        check_object_name(name.value)
    except SpecifierError as err:
        raise FormatError(f'invalid userset name "{name.value}": {err}', path, name.lineno) from None
    return AccessList(
        name=name.value,
        type=parse_type(attrs_["type"].value, path, attrs_["type"].lineno),
        fshare=parse_ulong_attr("fshare", attrs_["fshare"].value, path, attrs_["fshare"].lineno),
        oticket=parse_ulong_attr("oticket", attrs_["oticket"].value, path, attrs_["oticket"].lineno),
        entries=parse_entries(attrs_["entries"].value, path, attrs_["entries"].lineno),
    )


def write(acl: AccessList) -> str:
    """The text ``qconf -su NAME`` prints."""
    return write_attributes(
        [
            ("name", acl.name),
            ("type", acl.type),
            ("fshare", str(acl.fshare)),
            ("oticket", str(acl.oticket)),
            ("entries", write_name_list(acl.entries, ",")),
        ],
        NAME_WIDTH,
    )


def contains(acl: AccessList, user: str, groups: Iterable[str] = ()) -> bool:
    """Is ``user`` (whose UNIX group names are ``groups``) in ``acl``?

    access_list(5): an entry is a user name, or ``@group`` matching the
    user's group.  The man page counts the primary group only; pass just
    that one to follow it.
    """
    if user in acl.entries:
        return True
    return any("@" + g in acl.entries for g in groups)


def has_access(
    user: str,
    groups: Iterable[str],
    user_lists: Iterable[str],
    xuser_lists: Iterable[str],
    acls: Mapping[str, AccessList],
) -> bool:
    """The user_lists/xuser_lists rule of sge_pe(5), host_conf(5) and
    queue_conf(5): a user in any ``xuser_lists`` list is denied (even if also
    in ``user_lists``); with ``user_lists`` empty (NONE) everyone else may;
    otherwise only members of at least one ``user_lists`` list may.

    ``acls`` maps list names to lists; a name it lacks counts as an empty list.
    """
    groups = tuple(groups)

    def member(names: Iterable[str]) -> bool:
        return any(name in acls and contains(acls[name], user, groups) for name in names)

    if member(xuser_lists):
        return False
    user_lists = tuple(user_lists)
    return not user_lists or member(user_lists)
