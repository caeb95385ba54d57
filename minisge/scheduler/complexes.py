"""The complex list as the scheduler asks it (complex(5)): by name or shortcut.

Named for Grid Engine's complex list (``qconf -sc``): the attributes a job
requests with ``-l``, with what a pass needs of them found once when the
list is loaded -- the consumables, the FORCED attributes and the EXCL
(exclusive) consumables -- so that no pass recomputes or caches them.
"""

from __future__ import annotations

from minisge.formats.complex import ComplexAttr, ComplexList, Relop, Requestable
from minisge.formats.complex import compare as compare_values
from minisge.formats.sge_types import parse_number


class ComplexIndex:
    """The complex list by name and by shortcut (a name wins over a shortcut)."""

    __slots__ = ("_by", "clist", "exclusive", "forced", "resource_maps", "_consumables")

    def __init__(self, clist: ComplexList) -> None:
        self.clist = clist
        self._by: dict[str, ComplexAttr] = {}
        for a in clist.attrs:
            self._by.setdefault(a.shortcut, a)
        for a in clist.attrs:
            self._by[a.name] = a
        self._consumables = tuple(a for a in clist.attrs if a.is_consumable)
        #: complex(5) requestable FORCED: only jobs that request them may use an object offering them
        self.forced = tuple(a for a in clist.attrs if a.requestable is Requestable.FORCED)
        #: complex(5) relop EXCL: consumables of exclusive scheduling
        self.exclusive = tuple(a for a in self._consumables if a.relop is Relop.EXCL)
        #: sge_rsmap(5) type RSMAP: consumables whose instances are granted by name
        self.resource_maps = tuple(a for a in self._consumables if a.type.is_resource_map)

    def get(self, name: str) -> ComplexAttr | None:
        """The attribute of that name, else of that shortcut, else None."""
        return self._by.get(name)

    def consumables(self) -> tuple[ComplexAttr, ...]:
        """The consumable attributes (YES or JOB)."""
        return self._consumables

    def compare(self, name: str, requested: str, offered: str) -> bool:
        """complex(5): does ``-l name=requested`` hold against ``offered``?"""
        return compare_values(self._by[name], requested, offered)

    def numeric(self, name: str, text: str) -> float:
        """A value of a numeric attribute as a number (sge_types(5) specifiers)."""
        return parse_number(text)
