"""Job control in the execd: suspend, resume and terminate a task's job.

The qmaster's ``suspend`` / ``resume`` / ``terminate`` messages
(:mod:`minisge.job_control`) carry the queue's method, already parsed:
``{"signal": n}`` is sent to the job's process group (the job's pid, which
the shepherd made a group leader, file ``job_pid``), ``{"command": line}``
is the absolute path of a command run as the job owner with the special
variables of queue_conf(5) (``$host $job_owner $job_id $job_name $queue
$job_pid``) put into its words (:func:`minisge.shepherd.expand_command`).
A ``-notify`` job gets the notify signal (SIGUSR1 before a suspend, SIGUSR2
before a kill) and the method only ``notify`` seconds later; a resume in
between cancels the pending suspend, a terminate replaces it.

``terminate`` also writes the ``signal`` file, which keeps a job whose
prolog still runs from being started, and kills the running procedure
(prolog, PE start: file ``proc_pid``), so a qdel during a prolog ends it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess

import trio

from minisge import shepherd
from minisge.formats.sge_conf import PROLOG_EPILOG_VARIABLES

log = logging.getLogger("minisge.execd")

# queue_conf(5) suspend_method: the variables a method's command line may use
METHOD_VARIABLES = frozenset(PROLOG_EPILOG_VARIABLES | {"job_pid"})


def _state(execd) -> dict:
    """Per-task control state kept on the execd: ``{key: {"stopped": bool,
    "pending": CancelScope|None}}``."""
    st = getattr(execd, "_job_control", None)
    if st is None:
        st = execd._job_control = {}
    return st


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _killpg(pid: int | None, sig: int) -> bool:
    if not pid:
        return False
    try:
        os.killpg(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


async def handle(execd, msg: dict) -> None:
    """Apply a suspend, resume or terminate message to a task of this execd."""
    key = (msg["job_id"], msg["task_id"])
    action = msg["op"]
    d = execd.job_dir(*key)
    if not os.path.isdir(d):
        return
    st = _state(execd).setdefault(key, {"stopped": False, "pending": None})
    pending = st.get("pending")
    if pending is not None:  # a suspend still waiting its notify time
        pending.cancel()
        st["pending"] = None
        if action == "resume":
            return  # never stopped: nothing to continue
    if action == "terminate":
        shepherd.write_file(os.path.join(d, "signal"), f"{int(signal.SIGKILL)}\n")
        proc = _read_int(os.path.join(d, "proc_pid"))
        if not _killpg(proc, signal.SIGKILL) and proc:  # a running prolog or PE start procedure
            try:
                os.kill(proc, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    notify = float(msg.get("notify") or 0)
    job_pid = _read_int(os.path.join(d, "job_pid"))
    if notify > 0 and msg.get("notify_signal") and job_pid and not st["stopped"]:
        _killpg(job_pid, int(msg["notify_signal"]))
        execd.nursery.start_soon(_after_notify, execd, key, msg, notify)
        return
    await _apply(execd, key, msg)


async def _after_notify(execd, key, msg: dict, delay: float) -> None:
    st = _state(execd).setdefault(key, {"stopped": False, "pending": None})
    with trio.CancelScope() as scope:
        st["pending"] = scope
        await trio.sleep(delay)
        st["pending"] = None
        await _apply(execd, key, msg)


async def _apply(execd, key, msg: dict) -> None:
    """Run the method of ``msg`` now."""
    action = msg["op"]
    d = execd.job_dir(*key)
    st = _state(execd).setdefault(key, {"stopped": False, "pending": None})
    method = msg.get("method") or {}
    job_pid = _read_int(os.path.join(d, "job_pid"))
    if "command" in method:
        execd.nursery.start_soon(run_method_command, d, method["command"], job_pid)
    else:
        sig = int(method.get("signal") or {"suspend": signal.SIGSTOP, "resume": signal.SIGCONT}.get(action, signal.SIGKILL))
        _killpg(job_pid, sig)
        if action == "terminate" and st["stopped"] and sig != signal.SIGKILL:
            _killpg(job_pid, signal.SIGCONT)  # a stopped job would not see it
    if action == "suspend":
        st["stopped"] = True
    elif action == "resume":
        st["stopped"] = False
    elif action == "terminate":
        _state(execd).pop(key, None)


def method_argv(command: str, variables: dict, job_pid: int | None) -> list[str]:
    """The argv of a method's command line (queue_conf(5) suspend_method)."""
    values = dict(variables, job_pid=str(job_pid) if job_pid else None)
    return shepherd.expand_command(command, values, METHOD_VARIABLES)


async def run_method_command(job_dir: str, command: str, job_pid: int | None, output: bool = True) -> None:
    """Run a method's command as the job owner, in the job's environment and
    working directory, its output appended to the job's output files (to
    /dev/null with ``output`` False: a PE task's output files are FIFOs)."""
    try:
        with open(os.path.join(job_dir, "config"), encoding="utf-8") as f:
            cfg = json.load(f)
        argv = method_argv(command, cfg.get("variables") or {}, job_pid)
    except (OSError, ValueError, shepherd.VariableError) as e:
        log.warning("method %r of %s not run: %s", command, job_dir, e)
        return
    kw: dict = {}
    if os.getuid() == 0:
        kw = {"user": cfg["uid"], "group": cfg["gid"], "extra_groups": cfg.get("groups") or [cfg["gid"]]}
    files = []
    try:
        for key in ("stdout_path", "stderr_path"):
            path = cfg.get(key) if output else None
            try:
                files.append(open(path, "ab") if path and os.path.exists(path) else None)
            except OSError:
                files.append(None)
        out = files[0] or subprocess.DEVNULL
        err = files[1] or subprocess.DEVNULL
        cwd = cfg.get("cwd") if cfg.get("cwd") and os.path.isdir(cfg["cwd"]) else "/"
        await trio.run_process(argv, env=cfg.get("env") or {}, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                               check=False, **kw)
    except OSError as e:
        log.warning("method %r of %s failed: %s", command, job_dir, e)
    finally:
        for f in files:
            if f is not None:
                f.close()
