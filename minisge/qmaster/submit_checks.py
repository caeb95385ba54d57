"""What the qmaster refuses in a job request because of who asks or what the
cell lacks, with Grid Engine 8.1.9's words (read from the real 8.1.9 qmaster).

Plain functions, one per rule, each returning the reason (the text after
``Unable to run job: ``) or None, so that qsub's submission
(:meth:`minisge.qmaster.qmaster.Qmaster.submit`) and qalter's alteration call
the same rule.  minisge has no checkpointing environments: every ``-ckpt``
name is unknown to it, which is what 8.1.9 says for a name it does not know.
An ``-ar`` id must name an advance reservation
(:meth:`minisge.qmaster.advance_reservations.AdvanceReservations.job_refusal`
adds who may use it and its window).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable


def priority_refusal(priority: int, is_operator: bool) -> str | None:
    """qsub(1) -p: only managers and operators may raise a job's priority above 0."""
    if priority > 0 and not is_operator:
        return "job rejected: positive submission priority requires operator privileges"
    return None


def checkpoint_refusal(name: str | None, checkpoint_objects: Container[str] = (),
                       when: str | None = None, interval: int | None = None) -> str | None:
    """qsub(1) -ckpt: the checkpointing environment must exist (checkpoint(5));
    -c ``n`` with other occasions, or with -ckpt, is refused; other -c
    occasions or an interval without -ckpt are "checkpointing denied"
    (8.1.9 on the peer: ``qsub -c s`` and ``qsub -c 10`` alone are
    refused, ``qsub -c n`` alone is accepted)."""
    if name and name not in checkpoint_objects:
        return f'job rejected: the requested checkpointing environment "{name}" does not exist'
    when = when or ""
    if "n" in when and (set(when) - {"n"} or name):
        return 'job rejected: checkpointing with "-c n" requested'
    if not name and (set(when) - {"n"} or interval):
        return "checkpointing denied"
    return None


def advance_reservation_refusal(ar_id: int | None, reservations: Container[int] = ()) -> str | None:
    """qsub(1) -ar: the advance reservation must exist (qrsub(1)); id 0 is none."""
    if ar_id and ar_id not in reservations:
        return f"the advance reservation id {ar_id} is invalid"
    return None


def slots_request_refusal(requested: Iterable[str], full_name: Callable[[str], str | None]) -> str | None:
    """qsub(1) -l slots=N (or its shortcut ``s``): 8.1.9 refuses it whether a
    PE is requested or not; slots are asked for with -pe.  ``full_name`` gives
    the complex's full name of a requested name or shortcut (None: unknown)."""
    if any(full_name(name) == "slots" for name in requested):
        return '"job" denied: use parallel environments instead of requesting slots explicitly'
    return None

