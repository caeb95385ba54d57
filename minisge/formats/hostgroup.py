"""hostgroup(5): host groups (``qconf -shgrp``/``-Ahgrp``/``-shgrp_tree``).

A host group file has two attributes, both required::

    group_name @allhosts
    hostlist vm @subgroup

``group_name`` is ``@`` and an ``object_name`` (sge_types(5)).  ``hostlist``
holds host names and ``@group`` references (subgroups), separated by white
space only, or NONE.  Grid Engine keeps the order (and duplicates) as given.

:func:`resolve` expands a group to its hosts; :func:`tree` draws it as
``qconf -shgrp_tree`` does.  Both refuse cycles and unknown subgroups with
:class:`HostGroupError`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from minisge.formats.access_list import check_object_name, is_none
from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import SpecifierError

ATTRIBUTES = ("group_name", "hostlist")
NAME_WIDTH = 0  # one space after each name, as qconf -shgrp prints
TREE_INDENT = "   "
RESERVED_HOST_NAMES = ("template", "all", "default", "unknown", "none")


class HostGroupError(ValueError):
    """A host group set that cannot be resolved: a cycle or a missing group."""


@attrs.frozen
class HostGroup:
    """A named list of hosts and subgroups."""

    name: str  # with the leading "@"
    hostlist: tuple[str, ...] = ()

    @property
    def subgroups(self) -> tuple[str, ...]:
        return tuple(h for h in self.hostlist if h.startswith("@"))

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(h for h in self.hostlist if not h.startswith("@"))


def template(name: str) -> HostGroup:
    """What ``qconf -ahgrp NAME`` offers: an empty group (hostlist NONE)."""
    return HostGroup(name=name)


# --- names -------------------------------------------------------------------


def check_group_name(name: str) -> None:
    """sge_types(5) ``hostgroup_name := @object_name``; raises SpecifierError."""
    if not name.startswith("@"):
        raise SpecifierError(f'host group name "{name}" is not valid: it must begin with "@"')
    try:
        check_object_name(name[1:])
    except SpecifierError as err:
        raise SpecifierError(f'host group name "{name}" is not valid: {err}') from None


def check_host_name(name: str) -> None:
    """sge_types(5) ``host_name``: a host's name; the reserved names
    template, all, default, unknown, none are refused (global is allowed,
    it names the cluster-wide host entry)."""
    if name.lower() in RESERVED_HOST_NAMES:
        raise SpecifierError(f'"{name}" is a reserved name, not a host name')
    bad = set(name) & set(",/:=@\"'\\[]{}|()%*?")
    if bad:
        raise SpecifierError(f'"{name}" is not a host name: it contains {"".join(sorted(bad))!r}')
    if not name.isprintable() or not name.isascii() or any(c.isspace() for c in name):
        raise SpecifierError(f'"{name}" is not a host name')


def _parse_hostlist(value: str, path: str, line: int) -> tuple[str, ...]:
    """hostlist: host names and @groups separated by white space, or NONE."""
    items = value.split()
    if len(items) == 1 and is_none(items[0]):
        return ()
    for item in items:
        if is_none(item):
            raise FormatError('attribute "hostlist": NONE cannot be combined with other hosts', path, line)
        if "," in item:
            raise FormatError(
                f'attribute "hostlist": "{item}": only white space separates host list entries', path, line
            )
        try:
            if item.startswith("@"):
                check_group_name(item)
            else:
                check_host_name(item)
        except SpecifierError as err:
            raise FormatError(f'attribute "hostlist": {err}', path, line) from None
    return tuple(items)


# --- parse and write ---------------------------------------------------------


def parse(text: str, path: str = "<input>") -> HostGroup:
    """A hostgroup(5) file, as ``qconf -Ahgrp`` reads it."""
    a = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES, join="ge")
    name = a["group_name"]
    try:
        check_group_name(name.value)
    except SpecifierError as err:
        raise FormatError(str(err), path, name.lineno) from None
    hostlist = _parse_hostlist(a["hostlist"].value, path, a["hostlist"].lineno)
    if name.value in hostlist:
        raise FormatError(
            f'Hostgroup "{name.value}" in specification of "{name.value}" would create a cycle',
            path,
            a["hostlist"].lineno,
        )
    return HostGroup(name=name.value, hostlist=hostlist)


def write(group: HostGroup) -> str:
    """The text ``qconf -shgrp NAME`` prints."""
    hostlist = " ".join(group.hostlist) if group.hostlist else "NONE"
    return write_attributes([("group_name", group.name), ("hostlist", hostlist)], NAME_WIDTH)


# --- resolution --------------------------------------------------------------


def _group(groups: Mapping[str, HostGroup], name: str, parent: str | None) -> HostGroup:
    try:
        return groups[name]
    except KeyError:
        where = f' (in "{parent}")' if parent else ""
        raise HostGroupError(f'host group "{name}" does not exist{where}') from None


def resolve(groups: Mapping[str, HostGroup], name: str) -> frozenset[str]:
    """All hosts of group ``name``, subgroups expanded (hostgroup(5): an "@" entry is a subgroup).

    Raises :class:`HostGroupError` on a cycle or an unknown group.
    """
    hosts: set[str] = set()

    def walk(gname: str, path: tuple[str, ...], parent: str | None) -> None:
        if gname in path:
            raise HostGroupError(
                f'Hostgroup "{gname}" in specification of "{path[-1]}" would create a cycle'
            )
        group = _group(groups, gname, parent)
        for entry in group.hostlist:
            if entry.startswith("@"):
                walk(entry, path + (gname,), gname)
            else:
                hosts.add(entry)

    walk(name, (), None)
    return frozenset(hosts)


def find_cycle(groups: Mapping[str, HostGroup]) -> tuple[str, ...] | None:
    """A chain of group names that leads back to its start, or None.

    Unknown subgroups are ignored here (see :func:`resolve`)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(name: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        if state.get(name) == 1:
            return path[path.index(name):] + (name,)
        if state.get(name) == 2 or name not in groups:
            return None
        state[name] = 1
        for sub in groups[name].subgroups:
            found = visit(sub, path + (name,))
            if found:
                return found
        state[name] = 2
        return None

    for name in groups:
        found = visit(name, ())
        if found:
            return found
    return None


def tree(groups: Mapping[str, HostGroup], name: str) -> str:
    """The text ``qconf -shgrp_tree NAME`` prints: the group, then each
    member indented three spaces per level, subgroups expanded in place."""
    out: list[str] = []

    def walk(gname: str, depth: int, path: tuple[str, ...], parent: str | None) -> None:
        if gname in path:
            raise HostGroupError(
                f'Hostgroup "{gname}" in specification of "{path[-1]}" would create a cycle'
            )
        group = _group(groups, gname, parent)
        out.append(TREE_INDENT * depth + gname + "\n")
        for entry in group.hostlist:
            if entry.startswith("@"):
                walk(entry, depth + 1, path + (gname,), gname)
            else:
                out.append(TREE_INDENT * (depth + 1) + entry + "\n")

    walk(name, 0, (), None)
    return "".join(out)
