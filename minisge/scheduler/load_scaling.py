"""host_conf(5) ``load_scaling``: a host's load values as the cell weighs them.

Named for the host attribute.  Grid Engine scales the load values of a host
before it compares them with load and suspend thresholds, sorts queue
instances by load (``load_formula``, ``np_load_avg`` included: it is a load
value like any other) or matches ``-l`` requests against them, and ``qstat
-f``/``-F`` show the scaled values (8.1.9's ``correct_capacities``); ``qconf
-se`` and ``qhost`` show what the execd reported.  A value is scaled when it
is of a numeric complex attribute (INT, DOUBLE, TIME, MEMORY, BOOL) and
reads as a number; it is kept to three decimals and written with six, as
8.1.9's ``qstat -F`` prints it (``hl:load_avg=3.719000``).  Pure: the
qmaster calls it on its load reports.
"""

from __future__ import annotations

from collections.abc import Mapping

from minisge.formats.sge_types import SpecifierError, parse_number
from minisge.scheduler.complexes import ComplexIndex


def scale(value: float, factor: float) -> str:
    """A scaled load value as Grid Engine keeps it (``%8.3f``, read back, shown with ``%f``)."""
    return f"{float(f'{value * factor:8.3f}'):f}"


def scaled_load(load: Mapping[str, str], factors: Mapping[str, float], cx: ComplexIndex) -> Mapping[str, str]:
    """``load`` with every numeric value that ``factors`` names multiplied
    by its factor; ``load`` itself when nothing is scaled."""
    if not factors:
        return load
    out = dict(load)
    for name, factor in factors.items():
        text = load.get(name)
        attr = cx.get(name)
        if text is None or attr is None or attr.name != name or not attr.type.is_numeric:
            continue
        try:
            out[name] = scale(parse_number(text), factor)
        except SpecifierError:
            continue
    return out
