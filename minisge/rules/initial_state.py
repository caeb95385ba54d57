"""queue_conf(5) ``initial_state``: the state a queue instance starts in.

    initial_state  default | enabled | disabled

"Defines an initial state for the queue either when adding the queue to the
system for the first time or on start-up of the sge_execd(8) on the host
on which the queue resides."  As 8.1.9 does it (sge_qinstance_qmaster.c,
sge_host_qmaster.c):

* a queue instance comes into existence (``qconf -aq/-Aq``, a host added
  to a queue's hostlist or to a host group it names): ``disabled`` sets
  ``d``, ``enabled`` clears it, ``default`` leaves the instance as it is;
* an execd starts and registers (not when it reconnects after losing its
  qmaster): the same, for every queue instance on its host;
* a qmaster restart changes nothing: the states come from the spool, so an
  instance an admin enabled stays enabled.

A queue instance that goes away (its queue deleted, its host taken out of
the hostlist) takes its states with it, so one created again later starts
from its initial_state, not from what the old one was.

These are the pure rules; the qmaster's
:class:`~minisge.qmaster.config_state.ConfigState` applies them
(``qinstances_changed``, ``execd_started``).
"""

from __future__ import annotations

from collections.abc import Iterable

DISABLED = "d"


def wants_disabled(initial_state: str | None) -> bool | None:
    """True for ``disabled``, False for ``enabled``, None for ``default``
    (or anything else: the instance keeps its state)."""
    value = (initial_state or "").strip().lower()
    if value == "disabled":
        return True
    if value == "enabled":
        return False
    return None


def apply_initial_state(states: str, initial_state: str | None) -> str:
    """The state letters of an instance after its initial_state is applied
    (only the manual ``d`` changes; E, s and the others stay)."""
    want = wants_disabled(initial_state)
    if want is None:
        return states
    if want:
        return states if DISABLED in states else states + DISABLED
    return states.replace(DISABLED, "")


def appeared(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The queue instances in ``after`` that were not in ``before``, sorted."""
    return sorted(set(after) - set(before))


def vanished(before: Iterable[str], after: Iterable[str]) -> list[str]:
    """The queue instances in ``before`` that are not in ``after``, sorted."""
    return sorted(set(before) - set(after))
