"""sge_rsmap(5) of Open Cluster Scheduler: the value of a resource map in a host's complex_values.

A complex of type RSMAP (complex(5)) counts like any consumable and also
names its instances.  A host offers them in its complex_values as::

    gpu=2(0 1)          two instances, named 0 and 1
    gpu=2(GPU0 GPU1)    named GPU0 and GPU1
    gpu=4(0-3)          an integer range, expanded when read: 0 1 2 3
    gpu=8(0 0 0 0 1 1 1 1)  a repeated name: shares of one device
    gpu=4               the short form: named 0 to 3, written gpu=4(0 1 2 3)

The amount must equal the number of instances named.  A name may hold any
character but white space, ``,``, ``=``, ``(``, ``)``, ``[`` and ``]``.
Open Cluster Scheduler's per-instance characteristics (``gpu0[memory=80G]``,
Gridware Cluster Scheduler only) are not supported and refused.

Grid Engine 8.1.9 has no RSMAP type: its ``qconf -Mc`` refuses the line
(``unknown complex attribute type "RSMAP"``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from attrs import frozen

from minisge.formats.sge_types import SpecifierError

#: sge_rsmap(5): an identifier holds no white space, ``,``, ``=``, ``(``, ``)``, ``[``, ``]``
_ID = re.compile(r"[^\s,=()\[\]]+")
_RANGE = re.compile(r"(\d+)-(\d+)")
_VALUE = re.compile(r"\s*(\d+)\s*(?:\((.*)\))?\s*", re.DOTALL)

#: the most instances the short form (``gpu=4``) makes: qmaster_params MAX_RSMAP_IDS's default
MAX_SHORT_FORM_IDS = 512


@frozen
class ResourceMap:
    """A host's instances of one resource map, in their configured order."""

    ids: tuple[str, ...]

    @property
    def amount(self) -> int:
        return len(self.ids)

    def free(self, taken: Iterable[str]) -> list[str]:
        """The instances not taken (a repeated name counts once per occurrence), in order."""
        left = Counter(taken)
        out = []
        for i in self.ids:
            if left[i] > 0:
                left[i] -= 1
            else:
                out.append(i)
        return out


def _expand(spec: str) -> list[str]:
    m = _RANGE.fullmatch(spec)
    if m is None:
        if _ID.fullmatch(spec) is None:
            raise SpecifierError(f'invalid resource map id "{spec}"')
        return [spec]
    lo, hi = int(m.group(1)), int(m.group(2))
    if hi < lo:
        raise SpecifierError(f'invalid resource map id range "{spec}"')
    if hi - lo >= MAX_SHORT_FORM_IDS:
        raise SpecifierError(f'resource map id range "{spec}" names more than {MAX_SHORT_FORM_IDS} ids')
    return [str(n) for n in range(lo, hi + 1)]


def parse(text: str, name: str = "") -> ResourceMap:
    """A resource map value (``2(0 1)``, ``4(0-3)``, ``4``) of the map ``name``;
    :class:`SpecifierError` in Open Cluster Scheduler's words if bad."""
    m = _VALUE.fullmatch(text)
    if m is None:
        raise SpecifierError(f'RSMAP "{name}" value "{text}" is not amount(id id ...)')
    amount = int(m.group(1))
    if m.group(2) is None:
        if amount > MAX_SHORT_FORM_IDS:
            raise SpecifierError(f'the RSMAP value "{text}" needs to define IDs')
        return ResourceMap(tuple(str(n) for n in range(amount)))
    ids: list[str] = []
    for spec in m.group(2).split():
        if "[" in spec or "]" in spec:
            raise SpecifierError(f'RSMAP "{name}" id "{spec.partition("[")[0]}": '
                                 "per-instance characteristics are not available in minisge")
        ids += _expand(spec)
    if len(ids) != amount:
        raise SpecifierError(f'RSMAP "{name}" value "{text}" has amount {amount} but {len(ids)} elements')
    return ResourceMap(tuple(ids))


def write(rmap: ResourceMap) -> str:
    """The long form, as Open Cluster Scheduler stores and shows it: ``2(0 1)``."""
    return f"{rmap.amount}({' '.join(rmap.ids)})"


def amount_text(text: str) -> str:
    """The amount of a resource map value as a number's text (``2(0 1)`` -> ``2``);
    any other value unchanged."""
    head, paren, _rest = text.partition("(")
    return head.strip() if paren else text


def id_text(ids: Sequence[str]) -> str:
    """The granted instances as ``SGE_HGR_<name>`` shows them: separated by one space."""
    return " ".join(ids)


def device_indices(ids: Sequence[str]) -> str | None:
    """``CUDA_VISIBLE_DEVICES`` for granted instances named by device index
    (``0 1`` -> ``0,1``; a repeated index once); None if a name is not an index."""
    if not ids or not all(i.isdigit() for i in ids):
        return None
    return ",".join(dict.fromkeys(str(int(i)) for i in ids))


def job_environment(granted: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """What a job learns of the instances granted on its host: ``SGE_HGR_<name>``
    for each resource map (sge_rsmap(5), as Open Cluster Scheduler's execd
    sets it) and, for a map whose name holds ``gpu`` and whose instances are
    named by device index, ``CUDA_VISIBLE_DEVICES`` (minisge's own: Open
    Cluster Scheduler leaves that to a prolog or wrapper)."""
    env = {}
    for name, ids in sorted(granted.items()):
        if not ids:
            continue
        env[f"SGE_HGR_{name}"] = id_text(ids)
        devices = device_indices(ids) if "gpu" in name.lower() else None
        if devices is not None:
            env["CUDA_VISIBLE_DEVICES"] = devices
    return env
