"""qsub(1) ``-binding``: which cores of its host a job is bound to.

A host's topology is a list of cores, each ``(socket, core, cpus)`` (its
operating system processor ids), in socket and core order.  A request is
``[set|env|pe] linear:N[:S,C]``, ``[set|env|pe] striding:N:step[:S,C]`` or
``[set|env|pe] explicit:S,C[:S,C...]``; :func:`parse` reads it and
:func:`select_cores` picks the cores not already bound to another job:

- ``linear:N``: N consecutive free cores, from the first socket with free
  cores (``:S,C`` starts at socket S, core C);
- ``striding:N:step``: N cores ``step`` apart, from core 0 (or ``S,C``);
- ``explicit:S,C:...``: those cores.

No choice (too few free cores, a core the host does not have) means no
binding: the job runs unbound, as in Grid Engine 8.1.9.  The mode says what
is done with the choice: ``set`` binds the job (the shepherd's CPU
affinity), ``env`` only puts the processor ids in ``SGE_BINDING``, ``pe``
writes ``S,C:S,C`` into the host's line of the pe_hostfile.  8.1.9 on the
peer: ``qsub -binding linear:1`` runs with ``Cpus_allowed_list 0`` and
``SGE_BINDING=0``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import NamedTuple

#: one core of a host: (socket, core, its processor ids)
Core = tuple[int, int, tuple[int, ...]]

_SPEC = re.compile(r"^(?:(set|env|pe) )?(linear|striding|explicit)((?::[^:]+)*)$")


class Binding(NamedTuple):
    mode: str  # set, env or pe
    strategy: str  # linear, striding or explicit
    amount: int  # cores wanted (linear, striding)
    step: int  # striding's step
    start: tuple[int, int] | None  # (socket, core) to start at
    cores: tuple[tuple[int, int], ...]  # explicit's (socket, core) pairs


def _pair(text: str) -> tuple[int, int]:
    s, _, c = text.partition(",")
    return int(s), int(c)


def parse(spec: str | None) -> Binding | None:
    """The request ``spec`` as qsub recorded it, or None (none, or not one
    minisge can read: the job runs unbound)."""
    m = _SPEC.match((spec or "").strip())
    if not m:
        return None
    mode, strategy = m.group(1) or "set", m.group(2)
    fields = [f for f in m.group(3).split(":") if f]
    try:
        if strategy == "explicit":
            pairs = tuple(_pair(f) for f in fields)
            return Binding(mode, strategy, len(pairs), 1, None, pairs) if pairs else None
        if strategy == "linear" and fields and 1 <= len(fields) <= 2:
            start = _pair(fields[1]) if len(fields) == 2 else None
            return Binding(mode, strategy, int(fields[0]), 1, start, ())
        if strategy == "striding" and 2 <= len(fields) <= 3:
            start = _pair(fields[2]) if len(fields) == 3 else None
            return Binding(mode, strategy, int(fields[0]), int(fields[1]), start, ())
    except ValueError:
        return None
    return None


def select_cores(binding: Binding, topology: Sequence[Core], busy: Collection[int]) -> list[Core] | None:
    """The cores ``binding`` takes on a host of ``topology`` whose processors
    ``busy`` are bound to other jobs already; None when it cannot have them."""
    free = [c for c in topology if not set(c[2]) & set(busy)]
    index = {(s, c): i for i, (s, c, _p) in enumerate(topology)}
    if binding.amount < 1:
        return None
    if binding.strategy == "explicit":
        wanted = [index.get(p) for p in binding.cores]
        if any(i is None for i in wanted) or len(set(wanted)) != len(wanted):
            return None
        chosen = [topology[i] for i in wanted if i is not None]
        return chosen if all(c in free for c in chosen) else None
    if binding.start is not None:
        first = index.get(binding.start)
        if first is None:
            return None
        step = binding.step if binding.strategy == "striding" else 1
        chosen = [topology[i] for i in range(first, len(topology), step)][: binding.amount]
        ok = len(chosen) == binding.amount and all(c in free for c in chosen)
        return chosen if ok else None
    if binding.strategy == "striding":
        chosen = [topology[i] for i in range(0, len(topology), binding.step)][: binding.amount]
        ok = len(chosen) == binding.amount and all(c in free for c in chosen)
        return chosen if ok else None
    # linear: consecutive free cores, from the first socket that has free cores
    for i in range(len(topology)):
        run = topology[i: i + binding.amount]
        if len(run) == binding.amount and all(c in free for c in run):
            return list(run)
    return None


def processors(cores: Sequence[Core]) -> list[int]:
    """The processor ids of ``cores``, in order."""
    return [p for _s, _c, cpus in cores for p in cpus]


def sge_binding(cores: Sequence[Core]) -> str:
    """``SGE_BINDING``: the processor ids, blank separated (8.1.9: ``0``)."""
    return " ".join(str(p) for p in processors(cores))


def pe_hostfile_field(cores: Sequence[Core]) -> str:
    """The pe_hostfile's fourth field of mode ``pe``: ``S,C:S,C``."""
    return ":".join(f"{s},{c}" for s, c, _p in cores)


def pe_hostfile_with_cores(hostfile: str, host: str, cores: Sequence[Core]) -> str:
    """The pe_hostfile with ``host``'s lines carrying ``S,C:S,C`` (mode
    ``pe``) in their fourth field instead of ``UNDEFINED``."""
    out = []
    for line in hostfile.splitlines(keepends=True):
        fields = line.split()
        if fields[:1] == [host] and len(fields) >= 3:
            line = " ".join([*fields[:3], pe_hostfile_field(cores)]) + "\n"
        out.append(line)
    return "".join(out)


def topology_string(topology: Sequence[Core], bound: Collection[int]) -> str:
    """The host's topology as 8.1.9 writes it (``S`` a socket, ``C`` a core,
    ``T`` each of its hardware threads when it has more than one) with the
    cores holding a processor of ``bound`` in lower case: ``ScC`` is the
    first of two cores taken (8.1.9's ``qstat -j`` binding line of a
    ``-binding linear:1`` job, and ``m_topology_inuse``)."""
    out = []
    socket = None
    for s, _c, cpus in topology:
        if s != socket:
            out.append("S")
            socket = s
        taken = bool(set(cpus) & set(bound))
        core = "C" + ("T" * len(cpus) if len(cpus) > 1 else "")
        out.append(core.lower() if taken else core)
    return "".join(out)


#: BN_type of a mode (8.1.9's binding_type_t)
_BN_TYPES = {"pe": 1, "env": 2, "set": 3}


def bn_fields(binding: Binding) -> list[tuple[str, int | str]]:
    """The request as 8.1.9 keeps it (its BN_* fields, ``qstat -j -xml``'s
    JB_binding, peer's captures in tests/golden/qstat_-j_JOBID_-xml.binding*):
    ``linear:1`` is strategy ``linear_automatic`` (no start given),
    ``linear:2:0,1`` ``linear`` with socket 0 and core offset 1; ``striding``
    the same with its step; ``explicit`` has n 0 and its pairs in
    BN_parameter_explicit.  BN_type: pe 1, env 2, set 3."""
    b = binding
    socket, core = b.start or (0, 0)
    if b.strategy == "explicit":
        strategy, amount = "explicit", 0
    else:
        strategy, amount = b.strategy + ("" if b.start else "_automatic"), b.amount
    fields: list[tuple[str, int | str]] = [
        ("BN_strategy", strategy), ("BN_type", _BN_TYPES[b.mode]), ("BN_parameter_n", amount),
        ("BN_parameter_socket_offset", socket), ("BN_parameter_core_offset", core),
        ("BN_parameter_striding_step_size", b.step if b.strategy == "striding" else 0)]
    if b.strategy == "explicit":
        fields.append(("BN_parameter_explicit", "explicit:" + ":".join(f"{s},{c}" for s, c in b.cores)))
    return fields
