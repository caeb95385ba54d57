"""The load values an execd reports (the host's ``load_values``), read from /proc and /sys.

Names, units and order as Grid Engine 8.1.9's execd reports them on Linux
(``qconf -se HOST`` prints them in this order): ``arch``, ``num_proc``,
``mem_total``/``swap_total``/``virtual_total`` in MiB with an ``M``
suffix, the topology (``m_topology``, ``m_socket``, ``m_core``,
``m_thread``), ``load_avg`` (= ``load_medium``, the 5-minute figure),
``load_short``/``load_medium``/``load_long``, the ``*_free`` and
``*_used`` memory, ``cpu`` (the percentage of CPU time spent in user,
nice and system mode since the previous report), ``m_topology_inuse`` and
the ``np_`` load figures divided by the number of processors.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence

# Grid Engine's architecture string of this host (the ``arch`` load value, $SGE_ARCH)
ARCH = "lx-amd64" if os.uname().machine == "x86_64" else f"lx-{os.uname().machine}"

#: /proc/stat's first four cpu columns: user, nice, system, idle (8.1.9 reads these, CPUSTATES 4)
CPU_STATES = 4


def _meminfo(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            out[parts[0].rstrip(":")] = int(parts[1]) / 1024.0  # kB -> MiB
    return out


class Topology:
    """The host's processors as hwloc's topology string shows them:
    ``S`` per socket, ``C`` per core, and ``T`` per hardware thread when a
    core has more than one (``SCC``: one socket of two single-thread cores;
    ``SCTTCTT``: two cores of two threads)."""

    def __init__(self, cpus: Iterable[tuple[int, int]]):
        """``cpus``: (socket id, core id) of each logical processor."""
        sockets: dict[int, dict[int, int]] = {}
        for socket, core in cpus:
            cores = sockets.setdefault(socket, {})
            cores[core] = cores.get(core, 0) + 1
        self.sockets = [list(cores[c] for c in sorted(cores)) for _, cores in sorted(sockets.items())]

    @property
    def string(self) -> str:
        return "".join("S" + "".join("C" + ("T" * t if t > 1 else "") for t in cores) for cores in self.sockets)

    @property
    def socket_count(self) -> int:
        return len(self.sockets)

    @property
    def core_count(self) -> int:
        return sum(len(cores) for cores in self.sockets)

    @property
    def thread_count(self) -> int:
        return sum(sum(cores) for cores in self.sockets)


def cpu_ticks(stat_text: str) -> tuple[int, ...]:
    """The first :data:`CPU_STATES` counters of /proc/stat's ``cpu`` line."""
    for line in stat_text.splitlines():
        words = line.split()
        if words and words[0] == "cpu":
            return tuple(int(w) for w in words[1:1 + CPU_STATES])
    return ()


def cpu_percent(new: Sequence[int], old: Sequence[int]) -> float:
    """8.1.9's ``cpu`` load value: the share of user, nice and system time
    in the ticks between two readings, each state's share rounded to a
    tenth of a percent as its ``percentages()`` does (``old`` all zero:
    since boot)."""
    if len(new) < CPU_STATES:
        return 0.0
    old = list(old) + [0] * (CPU_STATES - len(old))
    diffs = [max(0, n - o) for n, o in zip(new[:CPU_STATES], old[:CPU_STATES], strict=True)]
    total = sum(diffs) or 1
    half = total // 2
    shares = [((d * 1000 + half) // total) / 10 for d in diffs]
    return shares[0] + shares[1] + shares[2]


def load_values(loadavg_text: str, meminfo_text: str, nproc: int, arch: str,
                topology: Topology | None = None, cpu: float = 0.0) -> dict[str, str]:
    """Pure: the load values from the text of /proc/loadavg and /proc/meminfo,
    the processors' topology and the ``cpu`` percentage, in 8.1.9's order."""
    short, medium, long_ = (float(x) for x in loadavg_text.split()[:3])
    m = _meminfo(meminfo_text)
    mem_total = m.get("MemTotal", 0.0)
    mem_free = m.get("MemAvailable", m.get("MemFree", 0.0))
    swap_total = m.get("SwapTotal", 0.0)
    swap_free = m.get("SwapFree", 0.0)
    n = max(nproc, 1)
    topo = topology or Topology((0, c) for c in range(n))

    def mb(x: float) -> str:
        return f"{x:.6f}M"

    return {
        "arch": arch,
        "num_proc": str(nproc),
        "mem_total": mb(mem_total),
        "swap_total": mb(swap_total),
        "virtual_total": mb(mem_total + swap_total),
        "m_topology": topo.string,
        "m_socket": str(topo.socket_count),
        "m_core": str(topo.core_count),
        "m_thread": str(topo.thread_count),
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
        "cpu": f"{cpu:.6f}",
        "m_topology_inuse": topo.string,  # the execd marks the cores -binding took (Execd.report_load)
        "np_load_avg": f"{medium / n:.6f}",
        "np_load_short": f"{short / n:.6f}",
        "np_load_medium": f"{medium / n:.6f}",
        "np_load_long": f"{long_ / n:.6f}",
    }


def read_topology(sys_cpu: str = "/sys/devices/system/cpu") -> Topology | None:
    """This host's topology from sysfs (None when sysfs does not say)."""
    cpus = []
    for path in sorted(glob.glob(os.path.join(sys_cpu, "cpu[0-9]*", "topology"))):
        try:
            with open(os.path.join(path, "physical_package_id"), encoding="ascii") as f:
                socket = int(f.read().strip())
            with open(os.path.join(path, "core_id"), encoding="ascii") as f:
                core = int(f.read().strip())
        except (OSError, ValueError):
            return None
        cpus.append((max(socket, 0), core))
    return Topology(cpus) if cpus else None


def read_cores(sys_cpu: str = "/sys/devices/system/cpu",
               allowed: Iterable[int] | None = None) -> list[tuple[int, int, tuple[int, ...]]]:
    """This host's cores for core binding (:mod:`minisge.rules.core_binding`):
    (socket, core, processor ids), sockets and cores numbered from 0 in
    sysfs order, only the processors in ``allowed`` (the execd's own CPU
    affinity by default); one socket of single-processor cores when sysfs
    does not say."""
    cpus = sorted(os.sched_getaffinity(0) if allowed is None else allowed)
    found: dict[int, dict[int, list[int]]] = {}
    for cpu in cpus:
        path = os.path.join(sys_cpu, f"cpu{cpu}", "topology")
        try:
            with open(os.path.join(path, "physical_package_id"), encoding="ascii") as f:
                socket = max(int(f.read().strip()), 0)
            with open(os.path.join(path, "core_id"), encoding="ascii") as f:
                core = int(f.read().strip())
        except (OSError, ValueError):
            return [(0, i, (cpu,)) for i, cpu in enumerate(cpus)]
        found.setdefault(socket, {}).setdefault(core, []).append(cpu)
    return [(s, c, tuple(found[sid][cid])) for s, sid in enumerate(sorted(found))
            for c, cid in enumerate(sorted(found[sid]))]


class LoadReader:
    """Reads the load values, remembering the cpu counters of the previous
    reading (the ``cpu`` value is a share of the time between two reports)."""

    def __init__(self, arch: str = ARCH):
        self.arch = arch
        self.previous_ticks: tuple[int, ...] = ()
        self.topology = read_topology()

    def read(self) -> dict[str, str]:
        """The load values of this host now (a few small /proc files)."""
        try:
            # the C library's getloadavg, as 8.1.9's execd (glibc's has more
            # digits than /proc/loadavg: load_avg=2.300293)
            la = " ".join(repr(x) for x in os.getloadavg())
        except OSError:
            with open("/proc/loadavg", encoding="ascii") as f:
                la = f.read()
        with open("/proc/meminfo", encoding="ascii") as f:
            mi = f.read()
        try:
            with open("/proc/stat", encoding="ascii") as f:
                ticks = cpu_ticks(f.read())
        except OSError:
            ticks = ()
        cpu = cpu_percent(ticks, self.previous_ticks)
        self.previous_ticks = ticks
        values = load_values(la, mi, os.cpu_count() or 1, self.arch, self.topology, cpu)
        values.update(fixed_values(os.environ.get("MINISGE_LOAD_OVERRIDE", "")))
        return values


def read_load_values(arch: str = ARCH) -> dict[str, str]:
    """The load values of this host now (``cpu`` since boot: use a
    :class:`LoadReader` for reports that follow one another)."""
    return LoadReader(arch).read()


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
