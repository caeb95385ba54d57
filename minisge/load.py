"""The load values an execd reports (the host's ``load_values``), read from /proc.

Names and units as Grid Engine's execd reports them: ``load_avg`` (=
``load_medium``, the 5-minute figure), ``load_short``/``load_medium``/
``load_long``, their ``np_`` forms divided by the number of processors,
``num_proc``, ``mem_*``, ``swap_*``, ``virtual_*`` in MiB with an ``M``
suffix, ``arch``, ``cpu``.
"""

from __future__ import annotations

import os


def _meminfo(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            out[parts[0].rstrip(":")] = int(parts[1]) / 1024.0  # kB -> MiB
    return out


def load_values(loadavg_text: str, meminfo_text: str, nproc: int, arch: str) -> dict[str, str]:
    """Pure: the load values from the text of /proc/loadavg and /proc/meminfo."""
    short, medium, long_ = (float(x) for x in loadavg_text.split()[:3])
    m = _meminfo(meminfo_text)
    mem_total = m.get("MemTotal", 0.0)
    mem_free = m.get("MemAvailable", m.get("MemFree", 0.0))
    swap_total = m.get("SwapTotal", 0.0)
    swap_free = m.get("SwapFree", 0.0)
    n = max(nproc, 1)

    def mb(x: float) -> str:
        return f"{x:.6f}M"

    return {
        "arch": arch,
        "num_proc": str(nproc),
        "mem_total": mb(mem_total),
        "swap_total": mb(swap_total),
        "virtual_total": mb(mem_total + swap_total),
        "load_avg": f"{medium:.6f}",
        "load_short": f"{short:.6f}",
        "load_medium": f"{medium:.6f}",
        "load_long": f"{long_:.6f}",
        "mem_free": mb(mem_free),
        "swap_free": mb(swap_free),
        "virtual_free": mb(mem_free + swap_free),
        "mem_used": mb(mem_total - mem_free),
        "swap_used": mb(swap_total - swap_free),
        "virtual_used": mb(mem_total - mem_free + swap_total - swap_free),
        "cpu": "0.000000",
        "np_load_avg": f"{medium / n:.6f}",
        "np_load_short": f"{short / n:.6f}",
        "np_load_medium": f"{medium / n:.6f}",
        "np_load_long": f"{long_ / n:.6f}",
    }


def read_load_values(arch: str) -> dict[str, str]:
    with open("/proc/loadavg", encoding="ascii") as f:
        la = f.read()
    with open("/proc/meminfo", encoding="ascii") as f:
        mi = f.read()
    values = load_values(la, mi, os.cpu_count() or 1, arch)
    values.update(fixed_values(os.environ.get("MINISGE_LOAD_OVERRIDE", "")))
    return values


def fixed_values(text: str) -> dict[str, str]:
    """``MINISGE_LOAD_OVERRIDE=name=value,...`` in the execd's environment:
    values reported instead of the measured ones.  Not a Grid Engine
    setting: the test cells pin ``np_load_avg`` with it, so that the
    default ``load_thresholds np_load_avg=1.75`` of all.q does not hold
    their jobs back on a busy machine (a load_sensor, sge_conf(5), is the
    Grid Engine way to report chosen values)."""
    out = {}
    for item in text.split(","):
        name, eq, value = item.partition("=")
        if eq and name.strip():
            out[name.strip()] = value.strip()
    return out
