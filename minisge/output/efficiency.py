"""``qacct -efficiency``: how well jobs used what they asked for, from their
accounting records alone (minisge's own; neither 8.1.9 nor Open Cluster
Scheduler 9 has it).

Input: accounting records as plain dicts keyed by accounting(5) field names
(as :mod:`minisge.output.qacct_out` takes them); the command selects them.
Per job (all its records: array tasks, re-runs, PE tasks):

* CPU efficiency: ``cpu / (ru_wallclock x slots)`` summed over its runs (a
  PE task's record adds its cpu, the master's record holds the wallclock
  and the slots);
* peak memory: the largest ``maxvmem`` of a run against its hard
  ``h_vmem`` and ``mem_free`` request (from the ``-l`` of its ``category``;
  both are per slot, so the request counts times the run's slots);
* wall time: the longest run's ``ru_wallclock`` against its ``h_rt``.

:func:`job_figures` computes them (numbers, for tests and the total);
:func:`format_efficiency` prints one block per job, and a total block when
there is more than one job.  Standard library and :mod:`minisge.formats.sge_types` only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from minisge.formats.sge_types import SpecifierError, parse_number
from minisge.output.qacct_out import SEPARATOR, format_memory
from minisge.output.text import printable

__all__ = ["MEMORY_REQUESTS", "category_requests", "format_efficiency", "job_figures"]

#: The -l names (and the default complex's shortcuts) whose request is set
#: against the peak memory, by their full name.
MEMORY_REQUESTS = {"h_vmem": "h_vmem", "mem_free": "mem_free", "mf": "mem_free"}
_TIME_REQUESTS = {"h_rt": "h_rt"}


def category_requests(category: str) -> dict[str, float]:
    """The hard ``-l`` requests of an accounting ``category`` that the report
    weighs (``h_vmem``, ``mem_free``, ``h_rt``), by full name, in bytes or
    seconds: ``"-l h_rt=60,h_vmem=1G -pe smp 2"`` → ``{"h_rt": 60.0,
    "h_vmem": 1073741824.0}``.  ``-soft -l`` requests and values that are no
    number (or INFINITY) are left out."""
    words = category.split(" ")
    out: dict[str, float] = {}
    for i, word in enumerate(words[:-1]):
        if word != "-l" or (i > 0 and words[i - 1] == "-soft"):
            continue
        for pair in words[i + 1].split(","):
            name, _, text = pair.partition("=")
            full = MEMORY_REQUESTS.get(name) or _TIME_REQUESTS.get(name)
            if full is None:
                continue
            try:
                value = parse_number(text)
            except SpecifierError:
                continue
            if math.isfinite(value) and value > 0:
                out[full] = value
    return out


def _is_master(r: Mapping[str, Any]) -> bool:
    return str(r.get("pe_taskid") or "NONE") == "NONE"


def job_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figures of one job's records: ``job_number``, ``job_name``,
    ``owner``, ``tasks`` (the task ids accounted), ``slots`` (the most a run had),
    ``cpu``, ``wallclock`` (summed over runs), ``slot_seconds`` (wallclock x
    slots, summed), ``cpu_efficiency`` (a fraction, None without slot
    time), ``maxvmem`` (the largest), ``longest`` (the longest run's
    wallclock), and ``used``: per request weighed (``h_vmem``,
    ``mem_free``, ``h_rt``) ``(requested, fraction used)``, the fraction the
    largest of its runs (memory per slot times the run's slots)."""
    masters = [r for r in records if _is_master(r)] or list(records)
    first = records[0]
    cpu = sum(float(r.get("cpu") or 0) for r in records)
    slot_seconds = sum(float(r.get("ru_wallclock") or 0) * max(int(r.get("slots") or 1), 1) for r in masters)
    used: dict[str, tuple[float, float]] = {}
    for r in records:
        requests = category_requests(str(r.get("category") or ""))
        slots = max(int(r.get("slots") or 1), 1)
        for name, value in requests.items():
            if name == "h_rt":
                if not _is_master(r):
                    continue
                fraction = float(r.get("ru_wallclock") or 0) / value
            else:
                fraction = float(r.get("maxvmem") or 0) / (value * slots)
            if name not in used or fraction > used[name][1]:
                used[name] = (value, fraction)
    return {
        "job_number": int(first.get("job_number") or 0),
        "job_name": str(first.get("job_name") or ""),
        "owner": str(first.get("owner") or ""),
        "tasks": sorted({int(r.get("task_number") or 0) for r in masters}),
        "slots": max(max(int(r.get("slots") or 1), 1) for r in masters),
        "cpu": cpu,
        "wallclock": sum(float(r.get("ru_wallclock") or 0) for r in masters),
        "slot_seconds": slot_seconds,
        "cpu_efficiency": cpu / slot_seconds if slot_seconds > 0 else None,
        "maxvmem": max(float(r.get("maxvmem") or 0) for r in records),
        "longest": max(float(r.get("ru_wallclock") or 0) for r in masters),
        "used": used,
    }


def _line(key: str, value: str) -> str:
    """qacct's ``%-13.12s%s`` line."""
    return f"{key[:12]:<13}{value}\n"


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{fraction * 100:.1f}%"


def _requested(name: str, value: float) -> str:
    return f"{value:.0f}s" if name == "h_rt" else format_memory(value)


def _job_block(f: Mapping[str, Any]) -> str:
    tasks = f["tasks"]
    out = [
        SEPARATOR + "\n",
        _line("jobnumber", str(f["job_number"])),
        _line("jobname", printable(f["job_name"])),
        _line("owner", printable(f["owner"])),
        _line("tasks", str(len(tasks)) if tasks != [0] else "1"),
        _line("slots", str(f["slots"])),
        _line("cpu", f"{f['cpu']:.3f}s"),
        _line("ru_wallclock", f"{f['wallclock']:.3f}s"),
        _line("cpu_eff", f"{_percent(f['cpu_efficiency']):<12} cpu / (ru_wallclock x slots)"),
        _line("maxvmem", format_memory(f["maxvmem"])),
    ]
    for name in ("h_vmem", "mem_free"):
        if name in f["used"]:
            value, fraction = f["used"][name]
            out.append(_line(name, f"{_requested(name, value) + ' per slot':<20} peak {_percent(fraction)}"
                                   " of the request"))
    if "h_rt" in f["used"]:
        value, fraction = f["used"]["h_rt"]
        out.append(_line("h_rt", f"{_requested('h_rt', value):<20} longest run {f['longest']:.3f}s: "
                                 f"{_percent(fraction)} of the request"))
    return "".join(out)


def _extremes(figures: Sequence[Mapping[str, Any]], name: str) -> str | None:
    """``highest 80.0% (job 17), lowest 10.0% (job 12), 2 jobs`` over the jobs with the request."""
    having = [(f["used"][name][1], f["job_number"]) for f in figures if name in f["used"]]
    if not having:
        return None
    high, low = max(having), min(having)
    return (f"highest {_percent(high[0])} (job {high[1]}), lowest {_percent(low[0])} (job {low[1]}),"
            f" {len(having)} job{'s' if len(having) != 1 else ''} with the request")


def _total_block(figures: Sequence[Mapping[str, Any]]) -> str:
    cpu = sum(f["cpu"] for f in figures)
    slot_seconds = sum(f["slot_seconds"] for f in figures)
    owners = sorted({f["owner"] for f in figures})
    out = [
        SEPARATOR + "\n",
        _line("total", f"{len(figures)} jobs of {printable(','.join(owners))}"),
        _line("cpu", f"{cpu:.3f}s"),
        _line("slot_time", f"{slot_seconds:.3f}s"),
        _line("cpu_eff", f"{_percent(cpu / slot_seconds if slot_seconds > 0 else None):<12}"
                         " cpu / (ru_wallclock x slots), all jobs"),
    ]
    for name in ("h_vmem", "mem_free", "h_rt"):
        text = _extremes(figures, name)
        if text is not None:
            out.append(_line(name, text))
    return "".join(out)


def format_efficiency(records: Iterable[Mapping[str, Any]]) -> str:
    """The report of the records given: one block per job (in the order of
    their first record), then a total block when there is more than one."""
    by_job: dict[int, list[Mapping[str, Any]]] = {}
    for r in records:
        by_job.setdefault(int(r.get("job_number") or 0), []).append(r)
    figures = [job_figures(rs) for rs in by_job.values()]
    text = "".join(_job_block(f) for f in figures)
    if len(figures) > 1:
        text += _total_block(figures)
    return text
