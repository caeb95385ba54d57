"""The run plan of the C shepherd (``sge_shepherd.c``), made from a task's config.

A batch task's shepherd is ``sge_shepherd``, a small C program, when it was
built (``setup.py``; a host without a C compiler runs the Python shepherd,
:mod:`minisge.execd.shepherd`, for every task, as an interactive job's
always does).  It does not read the JSON config: the execd (or, for a PE
task, the shepherd launcher) hands it this plan, made here with the Python
shepherd's own functions, so
that each rule keeps its one home: what each child runs and how
(:meth:`minisge.execd.shepherd.Shepherd.procedure_child`,
:meth:`~minisge.execd.shepherd.Shepherd.job_child`: argv, environment, ids,
files, limits, nice value, processors), and what each of its exit codes
means (:mod:`minisge.rules.exit_codes`).  What the C program holds is the
run sequence, a child's set-up and the result files' formats, which
``tests/test_shepherd.py`` checks against the Python shepherd's, case by
case.

The plan is a sequence of NUL-terminated ``key=value`` strings (a value
holds anything but NUL, as argv and environment strings do): the task's
keys, then each step present as ``step=NAME``, its keys, ``end``; a key that
may repeat (``arg``, ``env``, ``rlimit``) is one string per item.
"""

from __future__ import annotations

import os
import resource
from typing import Any

from minisge.execd.shepherd import STEPS, Child, Shepherd
from minisge.rules import exit_codes
from minisge.rules.exit_codes import (
    JOB_START,
    SSTATE_BEFORE_JOB,
    SSTATE_BEFORE_PESTART,
    SSTATE_BEFORE_PROLOG,
    SSTATE_NO_CWD,
    SSTATE_NO_SHELL,
    SSTATE_OPEN_OUTPUT,
)

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sge_shepherd")

RESCHEDULE, APPERROR = exit_codes.RESCHEDULE_EXIT_STATUS, exit_codes.APPERROR_EXIT_STATUS


def binary() -> str | None:
    """The C shepherd's path, None when it was not built."""
    return BINARY if os.access(BINARY, os.X_OK) else None


def _ids(ids: list[int]) -> str:
    return ",".join(str(int(i)) for i in ids)


def _rlim(value: int) -> str:
    return "inf" if value == resource.RLIM_INFINITY else str(int(value))


def _child_words(child: Child) -> list[str]:
    words = [f"uid={child.uid}", f"gid={child.gid}", f"groups={_ids(child.groups)}",
             f"owner_uid={child.owner[0]}", f"owner_gid={child.owner[1]}", f"owner_groups={_ids(child.owner[2])}",
             f"cwd={child.cwd}", f"stdin={child.stdin_path}", f"stdout={child.stdout_path}",
             f"stderr={child.stderr_path}", f"merge={int(child.merge)}", f"exec_state={child.exec_state}"]
    if child.exec_path:
        words.append(f"exec={child.exec_path}")
    words += [f"arg={a}" for a in child.argv]
    words += [f"env={k}={v}" for k, v in child.env.items()]
    words += [f"rlimit={res} {_rlim(soft)} {_rlim(hard)}" for res, soft, hard in child.rlimits]
    if child.nice:
        words.append(f"nice={child.nice}")
    if child.cpus:
        words.append(f"cpus={_ids(list(child.cpus))}")
    return words


def plan(task_dir: str, cfg: dict[str, Any]) -> bytes | None:
    """The plan of the task in ``task_dir``; None when the C shepherd cannot
    run it (an interactive job; a string with a NUL, which no exec takes)."""
    if cfg.get("interactive"):
        return None
    shepherd = Shepherd(task_dir, cfg)
    words = [f"dir={task_dir}", f"pe={int(bool(cfg.get('pe')))}",
             f"pe_task={int(cfg.get('pe_task_id') is not None)}", f"state_before_job={SSTATE_BEFORE_JOB}",
             f"state_no_cwd={SSTATE_NO_CWD}", f"state_open_output={SSTATE_OPEN_OUTPUT}",
             f"state_no_shell={SSTATE_NO_SHELL}", f"state_before_prolog={SSTATE_BEFORE_PROLOG}",
             f"state_before_pestart={SSTATE_BEFORE_PESTART}"]
    for name in ("prolog", "pe_start", "job", "pe_stop", "epilog"):
        if name == "job":
            forbid = bool(cfg.get("forbid_reschedule")), bool(cfg.get("forbid_apperror"))
            words += ["step=job", f"who={JOB_START}", f"state_before={SSTATE_BEFORE_JOB}", "state_failed=0",
                      f"state_99={exit_codes.job_state(RESCHEDULE, *forbid)}",
                      f"state_100={exit_codes.job_state(APPERROR, *forbid)}"]
            words += _child_words(shepherd.job_child())
            words.append("end")
            continue
        child = shepherd.procedure_child(name)
        if child is None:
            continue
        states = STEPS[name].states
        words += [f"step={name}", f"who={name}", f"state_before={states.before}", f"state_failed={states.failed}",
                  f"state_99={exit_codes.procedure_state(name, RESCHEDULE)}",
                  f"state_100={exit_codes.procedure_state(name, APPERROR)}"]
        if isinstance(child, str):
            words.append(f"error={child}")
        else:
            words += _child_words(child)
        words.append("end")
    text = "\0".join(words)
    if text.count("\0") != len(words) - 1:  # a word with a NUL of its own
        return None
    return (text + "\0").encode("utf-8", "surrogateescape")  # one encode: 2 against 17 us a task
