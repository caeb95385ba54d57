"""Which resource limits a job runs under (queue_conf(5) RESOURCE LIMITS).

Pure rules, no I/O: the qmaster computes a task's limits for its start
message (:func:`job_limits`), the shepherd turns them into setrlimit(2)
pairs for every child it starts (:func:`rlimits`), and the execd checks the
job's summed usage against them (:func:`check_usage`, :func:`wallclock_action`).

The rules, from queue_conf(5) and as Grid Engine 8.1.9 applies them:

* a limit is the queue's value, or the job's ``-l`` hard request of it when
  it has one: a request above the queue's limit does not fit the queue (the
  scheduler never dispatches it there), so the request is the lower value
  (qmaster ``reduce_queue_limit``);
* ``h_rt``: SIGKILL when the wall clock passes it; ``s_rt``: SIGUSR1 (the job
  may catch it), then, as queue_conf(5) says, SIGKILL once the queue's
  ``notify`` time has passed after it (8.1.9 itself only repeats SIGUSR1
  every 90 s and never aborts: we follow the page, see the module's notes);
* ``s_cpu``/``h_cpu``, ``s_vmem``/``h_vmem``, ``s_data``/``h_data``,
  ``s_stack``/``h_stack`` are per slot: multiplied by the slots the task
  holds on the host (for a job that requests them as a consumable of type
  JOB, not); ``s_fsize``/``h_fsize``, ``s_core``/``h_core`` and
  ``s_rss``/``h_rss`` are not (setrlimits.c);
* each is a setrlimit(2) pair: RLIMIT_CPU (soft → SIGXCPU, hard → SIGKILL),
  RLIMIT_AS for vmem, RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_RSS,
  RLIMIT_FSIZE (SIGXFSZ); a few minimums keep the job startable (10 MB of
  memory, 1 MB of stack, 2 s of CPU, 15 kB of file size), a soft limit above
  its hard one is lowered to it;
* the execd also sums the CPU time and the virtual memory of all the job's
  processes every second: above ``h_cpu``/``h_vmem`` the job is killed
  (SIGKILL; accounted as failed 37 "qmaster enforced h_rt, h_cpu, or h_vmem
  limit", exit status 137, as the real 8.1.9 writes it), above
  ``s_cpu``/``s_vmem`` it gets SIGXCPU.
"""

from __future__ import annotations

import math
import resource
from collections.abc import Mapping
from typing import NamedTuple

from minisge.formats.sge_types import SpecifierError, parse_number

INF = math.inf

# the limits of queue_conf(5), in the order of its template
TIME_LIMITS = ("s_rt", "h_rt", "s_cpu", "h_cpu")
MEMORY_LIMITS = ("s_fsize", "h_fsize", "s_data", "h_data", "s_stack", "h_stack",
                 "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")
LIMIT_NAMES = TIME_LIMITS + MEMORY_LIMITS

# setrlimits.c: limits multiplied by the slots on the host (unless a
# consumable of type JOB the job requests); the others are per process
PER_SLOT = frozenset({"cpu", "vmem", "data", "stack"})

# setrlimits.h: the least a limit is set to, so the job can start at all
MINIMUM = {"vmem": 10 * 1024 * 1024, "data": 10 * 1024 * 1024, "rss": 10 * 1024 * 1024,
           "stack": 1024 * 1024, "cpu": 2, "fsize": 15 * 1024}

# limit name (without s_/h_) → setrlimit resource; vmem is the address space
RLIMIT_OF = {
    "cpu": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "data": resource.RLIMIT_DATA,
    "stack": resource.RLIMIT_STACK,
    "core": resource.RLIMIT_CORE,
    "vmem": resource.RLIMIT_AS,
    "rss": resource.RLIMIT_RSS,
}

# execd_ck_to_do.c: a signal for a wall clock limit is repeated this often
SIGNAL_REPEAT = 90

# key of a task's limits: the queue's ``notify`` time, after which a job
# warned for s_rt is aborted (queue_conf(5) RESOURCE LIMITS)
S_RT_NOTIFY = "s_rt_notify"


def value_of(text: str | None) -> float:
    """A limit's text as a number (seconds or bytes); INFINITY, nothing or
    an unreadable value is no limit."""
    if text is None or str(text).strip() == "":
        return INF
    try:
        return parse_number(str(text).strip())
    except SpecifierError:
        return INF


def job_limits(queue_values: Mapping[str, str], requests: Mapping[str, str]) -> dict[str, float]:
    """The limits of a task in a queue instance: per name the lower of the
    queue's value and the job's hard ``-l`` request (queue_conf(5) RESOURCE
    LIMITS; 8.1.9's reduce_queue_limit). Only finite ones are returned."""
    out: dict[str, float] = {}
    for name in LIMIT_NAMES:
        limit = min(value_of(queue_values.get(name)), value_of(requests.get(name)) if name in requests else INF)
        if limit != INF:
            out[name] = limit
    return out


def _scale(value: float, factor: int) -> float:
    return value if value == INF else value * factor


def rlimits(limits: Mapping[str, float], host_slots: int = 1,
            consumable_job: frozenset[str] | set[str] = frozenset()) -> dict[str, tuple[float, float]]:
    """The setrlimit(2) pairs ``{kind: (soft, hard)}`` (``kind`` a key of
    :data:`RLIMIT_OF`, INF for RLIM_INFINITY) for the limits of a task that
    holds ``host_slots`` slots on the host (setrlimits.c): minimums first,
    s_vmem no higher than h_vmem, per-slot kinds multiplied (but those in
    ``consumable_job``), then a soft limit no higher than its hard one."""
    slots = max(1, int(host_slots or 1))
    pairs: dict[str, list[float]] = {}
    for kind in RLIMIT_OF:
        soft = limits.get(f"s_{kind}", INF)
        hard = limits.get(f"h_{kind}", INF)
        if kind in MINIMUM:
            soft, hard = max(soft, MINIMUM[kind]), max(hard, MINIMUM[kind])
        pairs[kind] = [soft, hard]
    if pairs["vmem"][0] > pairs["vmem"][1]:
        pairs["vmem"][0] = pairs["vmem"][1]
    for kind in PER_SLOT:
        soft, hard = pairs[kind]
        pairs[kind] = [soft if f"s_{kind}" in consumable_job else _scale(soft, slots),
                       hard if f"h_{kind}" in consumable_job else _scale(hard, slots)]
    out = {}
    for kind, (soft, hard) in pairs.items():
        if soft == INF and hard == INF:
            continue
        out[kind] = (min(soft, hard), hard)
    return out


def as_rlim(value: float) -> int:
    """A limit as setrlimit(2) takes it: whole units, RLIM_INFINITY for INF."""
    if value == INF:
        return resource.RLIM_INFINITY
    return int(value)


def job_totals(limits: Mapping[str, float], host_slots: int = 1) -> dict[str, float]:
    """The limits the execd checks the job's summed usage against: s_/h_cpu
    and s_/h_vmem times the slots on the host (execd_ck_to_do.c
    force_job_rlimit; queue_conf(5): "the limit is multiplied by the number
    of slots being used by the job")."""
    slots = max(1, int(host_slots or 1))
    return {n: _scale(limits[n], slots) for n in ("s_cpu", "h_cpu", "s_vmem", "h_vmem") if n in limits}


class Action(NamedTuple):
    """What the execd does about a task's usage: send ``signal`` ("KILL",
    "XCPU", "USR1"), because of ``limit``."""

    signal: str
    limit: str


def check_usage(totals: Mapping[str, float], cpu: float, vmem: float) -> Action | None:
    """The execd's check of the summed usage (force_job_rlimit): a hard
    limit exceeded kills (h_cpu before h_vmem), else a soft one exceeded
    sends SIGXCPU; None when the job is within its limits."""
    if totals.get("h_cpu", INF) < cpu:
        return Action("KILL", "h_cpu")
    if totals.get("h_vmem", INF) < vmem:
        return Action("KILL", "h_vmem")
    if totals.get("s_cpu", INF) < cpu:
        return Action("XCPU", "s_cpu")
    if totals.get("s_vmem", INF) < vmem:
        return Action("XCPU", "s_vmem")
    return None


def wallclock_action(limits: Mapping[str, float], elapsed: float, last_signal: float | None) -> Action | None:
    """The wall clock limits (queue_conf(5) RESOURCE LIMITS, execd_ck_to_do.c):
    past h_rt SIGKILL; past s_rt SIGUSR1, and SIGKILL when the ``notify``
    time (:data:`S_RT_NOTIFY`) has passed since; a warning already sent is
    repeated only after :data:`SIGNAL_REPEAT` seconds (``last_signal`` is
    the elapsed time it was sent at)."""
    s_rt = limits.get("s_rt", INF)
    if elapsed >= limits.get("h_rt", INF):
        return Action("KILL", "h_rt")
    if last_signal is not None and elapsed >= s_rt + limits.get(S_RT_NOTIFY, INF):
        return Action("KILL", "s_rt")
    if last_signal is not None and elapsed <= last_signal + SIGNAL_REPEAT:
        return None
    if elapsed >= s_rt:
        return Action("USR1", "s_rt")
    return None
