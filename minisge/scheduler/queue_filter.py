"""The queue instances a pass drops for every job, and the global messages that say so.

Named for the "FILTER QUEUES" step of Grid Engine's pass (sge_sched_thread.c
``scheduler_method`` and ``dispatch_jobs``, the ``sge_split_*`` functions of
sge_select_queue.c): before it looks at any job, 8.1.9 sets aside, in this
order and with these messages (msg_schedd.h), the queue instances that

1. are suspended (``s``), subordinated (``S``), in error (``E``), ambiguous
   (``c``) or of an unknown host (``u``): "dropped because it is temporarily
   not available" (minisge also counts calendar suspension ``C`` and orphaned
   ``o`` here; it sets neither);
2. are in suspend alarm (``A``): "is in suspend alarm: WHY";
3. are in load alarm (``a``): "dropped because it is overloaded: WHY";
4. are disabled, by a calendar (``D``) and then by hand (``d``): "dropped
   because it is disabled";
5. have no free slot: "dropped because it is full";

and when nothing is left, "All queues dropped because of overload or full".
During the pass every queue instance a dispatch fills up is "dropped because
it is full" too.  These are the global messages ``qstat -j`` prints under
"scheduling info:" before each job's own; :func:`drop_reason` is also the
reason a job gets for such an instance.
"""

from __future__ import annotations

from collections.abc import Iterable

from minisge.scheduler.snapshot import QInstance

#: states that make a queue instance "temporarily not available"
NOT_AVAILABLE = frozenset("sSEcuCo")
#: the states of :func:`drop_reason`, for a quick test
DROPPING = NOT_AVAILABLE | frozenset("aAdD")

ALL_DROPPED = "All queues dropped because of overload or full"


def not_available_message(name: str) -> str:
    return f'queue instance "{name}" dropped because it is temporarily not available'


def suspend_alarm_message(name: str, why: str) -> str:
    return f'queue instance "{name}" is in suspend alarm: {why}'


def overload_message(name: str, why: str) -> str:
    return f'queue instance "{name}" dropped because it is overloaded: {why}'


def disabled_message(name: str) -> str:
    return f'queue instance "{name}" dropped because it is disabled'


def full_message(name: str) -> str:
    return f'queue instance "{name}" dropped because it is full'


def drop_reason(qi: QInstance) -> str | None:
    """Why every job finds ``qi`` unavailable because of its states (the
    first of the steps above that drops it; being full is the booking's
    question), or None."""
    states = qi.states
    if not states or DROPPING.isdisjoint(states):
        return None
    if not NOT_AVAILABLE.isdisjoint(states):
        return not_available_message(qi.name)
    if "A" in states:
        return suspend_alarm_message(qi.name, qi.suspend_alarm)
    if "a" in states:
        return overload_message(qi.name, qi.load_alarm)
    return disabled_message(qi.name)


def _step(qi: QInstance) -> int:
    """The step (1-5 above, 0: kept) that drops ``qi`` at the start of a pass."""
    states = qi.states
    if states and not DROPPING.isdisjoint(states):
        if not NOT_AVAILABLE.isdisjoint(states):
            return 1
        if "A" in states:
            return 2
        if "a" in states:
            return 3
        return 4 if "D" in states else 5
    return 6 if qi.used >= qi.slots else 0


def dropped_at_start(qinstances: Iterable[QInstance]) -> tuple[list[str], set[str]]:
    """The global messages of the start of a pass, in Grid Engine's order,
    and the names of the instances dropped (``ALL_DROPPED`` ends the
    messages when no instance is left)."""
    by_step: list[list[QInstance]] = [[] for _ in range(7)]
    kept = 0
    for qi in qinstances:
        step = _step(qi)
        if step:
            by_step[step].append(qi)
        else:
            kept += 1
    messages: list[str] = []
    for step, dropped in enumerate(by_step):
        for qi in dropped:
            if step == 6:
                messages.append(full_message(qi.name))
            else:
                why = drop_reason(qi)
                assert why is not None  # every state step has a reason
                messages.append(why)
    names = {qi.name for step in by_step for qi in step}
    if not kept:
        messages.append(ALL_DROPPED)
    return messages, names
