"""Job control in the execd: suspend, resume and terminate a task's job.

The qmaster's ``suspend`` / ``resume`` / ``terminate`` messages
(:func:`minisge.rules.job_control.parse_method`) carry the queue's method, already parsed:
``{"signal": n}`` is sent to the job's process group (the job's pid, which
the shepherd made a group leader, file ``job_pid``), ``{"command": line}``
is the absolute path of a command run as the job owner with the special
variables of queue_conf(5) (``$host $job_owner $job_id $job_name $queue
$job_pid``) put into its words (:func:`minisge.execd.shepherd.expand_command`).
A ``-notify`` job gets the notify signal (SIGUSR1 before a suspend, SIGUSR2
before a kill) and the method only ``notify`` seconds later; a resume in
between cancels the pending suspend, a terminate replaces it.

``terminate`` also writes the ``signal`` file, which keeps a job whose
prolog still runs from being started, and kills the running procedure
(prolog, PE start: file ``proc_pid``), so a qdel during a prolog ends it.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import trio

from minisge.execd.shepherd import VariableError, expand_command
from minisge.execd.task_dir import TaskKey, killpg, read_config, read_int, write_file
from minisge.formats.procedure_variables import PROLOG_EPILOG_VARIABLES
from minisge.rules.job_control import DEFAULT_METHOD, signal_number

log = logging.getLogger("minisge.execd")

# queue_conf(5) suspend_method: the variables a method's command line may use
METHOD_VARIABLES = frozenset(PROLOG_EPILOG_VARIABLES | {"job_pid"})

# the signal of each action when its method names none (queue_conf(5))
DEFAULT_SIGNAL: dict[str, int] = {action: signal_number(name) or signal.SIGKILL
                                  for action, name in DEFAULT_METHOD.items()}


@attrs.define
class TaskControl:
    """The control state of one task."""

    stopped: bool = False  # its job is stopped by a suspend
    pending: trio.CancelScope | None = None  # a suspend waiting its notify time


class ExecdJobControl:
    """Suspend, resume and terminate of the tasks of one execd; the notify
    timers and method commands run in its nursery (:meth:`run`, started by
    the execd's)."""

    def __init__(self, job_dir: Callable[[int, int], str]):
        self.job_dir = job_dir  # where a task's shepherd works
        self.tasks: dict[TaskKey, TaskControl] = {}
        self.nursery: trio.Nursery | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def start_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self.nursery is not None, "ExecdJobControl.run has not started"
        self.nursery.start_soon(fn, *args)

    def forget(self, key: TaskKey) -> None:
        """The task has ended: its state goes (a notify timer with it)."""
        st = self.tasks.pop(key, None)
        if st is not None and st.pending is not None:
            st.pending.cancel()

    def handle(self, msg: Mapping[str, Any]) -> None:
        """Apply a suspend, resume or terminate message to a task of this execd."""
        key: TaskKey = (int(msg["job_id"]), int(msg["task_id"]))
        action = msg["op"]
        d = self.job_dir(*key)
        if not os.path.isdir(d):
            return
        st = self.tasks.setdefault(key, TaskControl())
        if st.pending is not None:  # a suspend still waiting its notify time
            st.pending.cancel()
            st.pending = None
            if action == "resume":
                return  # never stopped: nothing to continue
        if action == "terminate":
            write_file(os.path.join(d, "signal"), f"{int(signal.SIGKILL)}\n")
            proc = read_int(os.path.join(d, "proc_pid"))
            if not killpg(proc, signal.SIGKILL) and proc:  # a running prolog or PE start procedure
                try:
                    os.kill(proc, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        notify = float(msg.get("notify") or 0)
        job_pid = read_int(os.path.join(d, "job_pid"))
        if notify > 0 and msg.get("notify_signal") and job_pid and not st.stopped:
            killpg(job_pid, int(msg["notify_signal"]))
            st.pending = trio.CancelScope()
            self.start_soon(self.after_notify, key, msg, st.pending, notify)
            return
        self.apply(key, msg)

    async def after_notify(self, key: TaskKey, msg: Mapping[str, Any], scope: trio.CancelScope, delay: float) -> None:
        """Apply ``msg`` once the notify time has passed, unless cancelled."""
        with scope:
            await trio.sleep(delay)
            st = self.tasks.get(key)
            if st is not None and st.pending is scope:
                st.pending = None
            self.apply(key, msg)

    def apply(self, key: TaskKey, msg: Mapping[str, Any]) -> None:
        """Run the method of ``msg`` now."""
        action = msg["op"]
        d = self.job_dir(*key)
        st = self.tasks.setdefault(key, TaskControl())
        method = msg.get("method") or {}
        job_pid = read_int(os.path.join(d, "job_pid"))
        if "command" in method:
            self.start_soon(run_method_command, d, method["command"], job_pid)
        else:
            sig = int(method.get("signal") or DEFAULT_SIGNAL.get(action, signal.SIGKILL))
            killpg(job_pid, sig)
            if action == "terminate" and st.stopped and sig != signal.SIGKILL:
                killpg(job_pid, signal.SIGCONT)  # a stopped job would not see it
        if action == "suspend":
            st.stopped = True
        elif action == "resume":
            st.stopped = False
        elif action == "terminate":
            self.tasks.pop(key, None)


def method_argv(command: str, variables: Mapping[str, Any], job_pid: int | None) -> list[str]:
    """The argv of a method's command line (queue_conf(5) suspend_method)."""
    values = dict(variables, job_pid=str(job_pid) if job_pid else None)
    return expand_command(command, values, METHOD_VARIABLES)


# Appends the method's output to the job's output files when they exist and
# the job owner may write them, as the job owner: the shell opens them after
# the ids have changed (a file the owner replaced by a link to a file of
# root's is opened with the owner's rights), else /dev/null; the method runs
# either way.  $1 and $2 are the files, the rest the command.
APPEND_OUTPUT = ('o=$1 e=$2; shift 2; '
                 '[ -n "$o" ] && [ -e "$o" ] && ( : >>"$o" ) 2>/dev/null || o=/dev/null; '
                 '[ -n "$e" ] && [ -e "$e" ] && ( : >>"$e" ) 2>/dev/null || e=/dev/null; '
                 'exec "$@" >>"$o" 2>>"$e"')


class MethodProcess:
    """How a method's command runs: as the job owner, in the job's
    environment and working directory, its output appended to the job's
    output files (to /dev/null without ``output``: a PE task's output files
    are FIFOs).  The files are opened by the method's own process once it
    is the job owner (:data:`APPEND_OUTPUT`), never by the execd."""

    def __init__(self, job_dir: str, command: str, job_pid: int | None, output: bool):
        cfg = read_config(job_dir)
        method = method_argv(command, cfg.get("variables") or {}, job_pid)
        if not method or not os.access(method[0], os.X_OK):
            raise FileNotFoundError(f"cannot execute {method[0] if method else command!r}")
        files = [str(cfg.get(key) or "") if output else "" for key in ("stdout_path", "stderr_path")]
        self.argv = ["/bin/sh", "-c", APPEND_OUTPUT, "sh", *files, *method]
        self.env: dict[str, str] = cfg.get("env") or {}
        self.cwd = cfg["cwd"] if cfg.get("cwd") and os.path.isdir(cfg["cwd"]) else "/"
        self.ids: dict[str, Any] = {}
        if os.getuid() == 0:
            self.ids = {"user": cfg["uid"], "group": cfg["gid"], "extra_groups": cfg.get("groups") or [cfg["gid"]]}


async def run_method_command(job_dir: str, command: str, job_pid: int | None, output: bool = True) -> None:
    """Run a method's command (queue_conf(5) suspend_method, ...) to its end."""
    try:
        proc = MethodProcess(job_dir, command, job_pid, output)
    except (OSError, ValueError, VariableError) as e:
        log.warning("method %r of %s not run: %s", command, job_dir, e)
        return
    try:
        await trio.run_process(proc.argv, env=proc.env, cwd=proc.cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **proc.ids)
    except OSError as e:
        log.warning("method %r of %s failed: %s", command, job_dir, e)
