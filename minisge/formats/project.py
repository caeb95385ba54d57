"""project(5): projects (``qconf -sprj``/``-Aprj``).

All five attributes are required (as ``qconf -Aprj`` demands); ``qconf
-sprj`` writes each name and one space, no padding::

    name hp_prj
    oticket 100
    fshare 25
    acl arusers
    xacl deadlineusers defaultdepartment

``acl``/``xacl`` are lists of access list names (access_list(5)), written
space-separated, or NONE.
"""

from __future__ import annotations

import attrs

from minisge.formats.access_list import (
    check_not_in_both,
    check_object_name,
    parse_name_list,
    parse_ulong_attr,
    write_name_list,
)
from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import SpecifierError

ATTRIBUTES = ("name", "oticket", "fshare", "acl", "xacl")
NAME_WIDTH = 0  # one space after every name


@attrs.frozen
class Project:
    """A project: override tickets, functional shares and who may use it."""

    name: str
    oticket: int = 0
    fshare: int = 0
    acl: tuple[str, ...] = ()
    xacl: tuple[str, ...] = ()


def template(name: str) -> Project:
    """What ``qconf -aprj`` offers: no tickets, no shares, open to all."""
    return Project(name=name)


def parse(text: str, path: str = "<input>") -> Project:
    """A project(5) file, as ``qconf -Aprj`` reads it."""
    a = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES, join="ge")
    name = a["name"]
    try:
        check_object_name(name.value)
    except SpecifierError as err:
        raise FormatError(f'invalid project name "{name.value}": {err}', path, name.lineno) from None
    acl = parse_name_list("acl", a["acl"].value, path, a["acl"].lineno)
    xacl = parse_name_list("xacl", a["xacl"].value, path, a["xacl"].lineno)
    check_not_in_both(acl, xacl, f'project "{name.value}"', path, a["xacl"].lineno)
    return Project(
        name=name.value,
        oticket=parse_ulong_attr("oticket", a["oticket"].value, path, a["oticket"].lineno),
        fshare=parse_ulong_attr("fshare", a["fshare"].value, path, a["fshare"].lineno),
        acl=acl,
        xacl=xacl,
    )


def write(project: Project) -> str:
    """The text ``qconf -sprj NAME`` prints."""
    return write_attributes(
        [
            ("name", project.name),
            ("oticket", str(project.oticket)),
            ("fshare", str(project.fshare)),
            ("acl", write_name_list(project.acl)),
            ("xacl", write_name_list(project.xacl)),
        ],
        NAME_WIDTH,
    )


def allows(project: Project, user_lists_of_user: frozenset[str] | set[str]) -> bool:
    """project(5) acl/xacl: may a user who is in the access lists
    ``user_lists_of_user`` submit to ``project``?

    In any xacl list: no.  acl NONE: yes.  Otherwise only if in an acl list.
    """
    if any(name in user_lists_of_user for name in project.xacl):
        return False
    return not project.acl or any(name in user_lists_of_user for name in project.acl)
