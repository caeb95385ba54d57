"""The shepherd: the per-job agent between the execd and the job.

Grid Engine's sge_shepherd(8) runs as a process of its own per job, so a job
outlives an execd restart.  A batch task's shepherd is the C one,
``sge_shepherd.c``, where setup.py could build it: it runs a plan made here
(:meth:`Shepherd.procedure_child`, :meth:`Shepherd.job_child`, through
:mod:`minisge.execd.shepherd_plan`) and does what this module does, file for
file (tests/test_shepherd.py runs every case with both).  This one is the
shepherd of an interactive job, and of every task where no C compiler
built the other.  It does not pay an interpreter start per job: the
execd's shepherd launcher (a small process of its own,
:mod:`minisge.execd.launcher`) *forks* the shepherd, which
calls ``setsid`` and runs, as sge_shepherd(8) does, up to five children one
after the other: the queue's **prolog**, the PE's **start procedure**, the
**job**, the PE's **stop procedure** and the **epilog** (a PE task's
shepherd, config ``pe_task_id``, runs the job alone).  Each child drops to
its user (the job owner, or the ``user@`` prefix of a procedure) and execs
its command line directly: the special variables (``$job_id``,
``$pe_hostfile``, ...) are put into the words of the command line, never
through a shell, so a job named ``x;rm`` stays one argument.  A procedure
run as another user than the job owner gets Grid Engine's variables
alone, not the job's (:mod:`minisge.rules.procedure_environment`).

The results are files in the job's directory under the execd spool
(``active_jobs/<job>.<task>/``, :mod:`minisge.execd.task_dir`), as Grid
Engine's shepherd writes them:

``pid``          the shepherd's pid (the file made by the launcher before the fork)
``job_pid``      the job's pid (also its process group)
``exit_status``  the end marker: the shepherd's state (accounting ``failed``)
                 of the *first* failure, 0 when all went well, then the
                 job's exit status and signal when it ran
``usage``        ``key=value`` lines of the job: exit_status, signal,
                 start_time, end_time, ru_wallclock, ru_utime, ru_stime, ...
``error``        one line per failure, ``MM/DD/YYYY HH:MM:SS [euid:pid]:
                 message``; the execd reports the first

``usage`` and ``exit_status`` have their room on disk taken just before the
job is started (:class:`minisge.execd.task_dir.ReservedFile`): a job that
fills the disk does not cost its exit status.

The exit codes of the children (sge_shepherd(8), queue_conf(5), sge_pe(5),
SGE-FACTS.md §1-2; man/man5/minisge_exit_codes.5; the rules are
:mod:`minisge.rules.exit_codes`): 0 is success; 99 from
any of them asks for a reschedule (state 25; from the job only unless
FORBID_RESCHEDULE), 100 for the job error state (30; from the job only
unless FORBID_APPERROR); any other non-zero exit of a procedure is its
"failed" state (8 prolog, 10 pe_start, 13 pe_stop, 15 epilog), while the
job's other exit codes are just its exit status.  A failure stops what
follows but the epilog, which still runs (unless the prolog could not even
be started), and the PE stop procedure, which runs when the PE start
procedure did.

The config is the JSON file ``config`` written by the execd before the fork
(:func:`minisge.execd.shepherd_config.build_task_config`).  Pure helpers
(command-line construction, variable expansion) are kept apart from
:func:`run`, which is only ever called in the forked child.
"""

from __future__ import annotations

import fcntl
import os
import re
import resource
import signal
import termios
import time
import traceback
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

from minisge.execd import interactive
from minisge.execd.task_dir import END_MARKER, ReservedFile, end_marker, format_usage, read_config, write_file
from minisge.formats.procedure_variables import PROC_VARIABLES, PROLOG_EPILOG_VARIABLES
from minisge.rules import exit_codes, limits
from minisge.rules.exit_codes import (
    SSTATE_BEFORE_JOB,
    SSTATE_BEFORE_PESTART,
    SSTATE_BEFORE_PROLOG,
    SSTATE_NO_CWD,
    SSTATE_NO_SHELL,
    SSTATE_OPEN_OUTPUT,
    ProcedureStates,
)
from minisge.rules.procedure_environment import procedure_environment, runs_as_another_user


class Step(NamedTuple):
    """One of the procedures around the job (sge_shepherd(8))."""

    name: str  # as the error message names it: exit_status of <name> = N
    states: ProcedureStates  # its states when it cannot start, when it fails
    variables: frozenset[str]  # the $variables its command line may use


# prolog/epilog may use sge_conf(5)'s prolog variables; the PE procedures
# sge_pe(5)'s (which add $pe_hostfile, $pe, $pe_slots, $sge_cell, $sge_root).
_PE_VARIABLES = frozenset(PROC_VARIABLES)
STEPS = {
    name: Step(name, exit_codes.PROCEDURE_STATES[name], variables)
    for name, variables in (("prolog", frozenset(PROLOG_EPILOG_VARIABLES)), ("pe_start", _PE_VARIABLES),
                            ("pe_stop", _PE_VARIABLES), ("epilog", frozenset(PROLOG_EPILOG_VARIABLES)))
}

BEFORE_JOB = ("prolog", "pe_start")  # the procedures a qdel ends (the others run after the job, qdel'ed or not)

_VARIABLE = re.compile(r"\$([A-Za-z0-9_]*)")


class VariableError(Exception):
    """A command line names a variable its procedure may not use."""


def expand_command(command: str, values: Mapping[str, Any], allowed: Collection[str]) -> list[str]:
    """The argv of a procedure's command line (queue_conf(5) prolog, sge_pe(5)).

    The line is split into words at blanks first, then each ``$name`` in a
    word is replaced by its value: a value is never split nor given to a
    shell, so ``$job_name`` of a job named ``x; rm -rf ~`` is one inert
    argument.  A name is the longest run of letters, digits and ``_`` (Grid
    Engine's replace_params); one the procedure may not use, or one without
    a value, is an error with Grid Engine's message.
    """

    def value(m: re.Match[str]) -> str:
        name = m.group(1)
        if not name:
            raise VariableError("variables need at least one character")
        if name not in allowed:
            raise VariableError(f'unknown variable "{name}"')
        if values.get(name) is None:
            raise VariableError(f'can\'t get configuration value for "{name}"')
        return str(values[name])

    return [_VARIABLE.sub(value, word) for word in command.split()]


def error_line(message: str, now: float | None = None, who: str | None = None) -> str:
    """A line of the ``error`` file: ``MM/DD/YYYY HH:MM:SS [euid:pid]: message``
    (the shepherd's shepherd_error, sge_ctime format, local time); ``who``:
    the ``euid:pid`` of the process that failed, when not the shepherd (its
    child, already the job's owner, as 8.1.9's shepherd's child reports)."""
    stamp = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(now))
    return f"{stamp} [{who or f'{os.geteuid()}:{os.getpid()}'}]: {message}\n"


def setup_failure(text: str) -> tuple[int | None, str | None, str]:
    """The failed state, the ``euid:pid`` and the message a forked child
    reported before its exec (``_exec_child``)."""
    state, _, rest = text.partition(" ")
    who, _, msg = rest.partition(" ")
    if not state.isdigit() or ":" not in who:
        return None, None, text
    return int(state), who, msg


def rusage_fields(ru: resource.struct_rusage) -> dict[str, int]:
    """The getrusage(2) counters of the ``usage`` file (accounting(5) fields
    17-31); ``ru_ismrss`` is not in Linux's struct rusage: 0."""
    return {
        "ru_maxrss": ru.ru_maxrss, "ru_ixrss": ru.ru_ixrss, "ru_ismrss": 0, "ru_idrss": ru.ru_idrss,
        "ru_isrss": ru.ru_isrss, "ru_minflt": ru.ru_minflt, "ru_majflt": ru.ru_majflt, "ru_nswap": ru.ru_nswap,
        "ru_inblock": ru.ru_inblock, "ru_oublock": ru.ru_oublock, "ru_msgsnd": ru.ru_msgsnd,
        "ru_msgrcv": ru.ru_msgrcv, "ru_nsignals": ru.ru_nsignals, "ru_nvcsw": ru.ru_nvcsw, "ru_nivcsw": ru.ru_nivcsw,
    }


def job_argv(cfg: Mapping[str, Any]) -> list[str]:
    """The argv the job is exec'd with, by shell_start_mode (queue_conf(5)).

    ``posix_compliant`` / ``script_from_stdin``: the shell (``-S`` or the
    queue's ``shell``) runs the script; ``unix_behavior``: the script is
    exec'd itself (its ``#!`` line decides); a binary job (``-b y``) runs
    ``shell -c "command args"`` as Grid Engine does with ``-shell y``.
    """
    shell = cfg.get("shell") or "/bin/sh"
    args = list(cfg.get("args") or [])
    starter = starter_method(cfg)
    if starter:  # queue_conf(5) starter_method: run instead of the shell, with the job's arguments
        return [starter, cfg["command"] if cfg.get("binary") else cfg["script_file"], *args]
    if cfg.get("binary"):
        cmd = " ".join([cfg["command"], *args])
        if cfg.get("noshell"):
            return [cfg["command"], *args]
        return [shell, "-c", cmd]
    script = cfg["script_file"]
    mode = cfg.get("shell_start_mode", "posix_compliant")
    if mode == "unix_behavior":
        return [script, *args]
    return [shell, script, *args]


def starter_method(cfg: Mapping[str, Any]) -> str | None:
    """The queue's starter_method, None when it is ``NONE`` (queue_conf(5))."""
    m = (cfg.get("starter_method") or "").strip()
    return None if not m or m.upper() == "NONE" else m


def starter_environment(cfg: Mapping[str, Any]) -> dict[str, str]:
    """What a starter_method is told about the shell it replaces
    (queue_conf(5), builtin_starter.c): SGE_STARTER_SHELL_PATH, the
    configured or requested shell; SGE_STARTER_SHELL_START_MODE, the
    shell_start_mode; SGE_STARTER_USE_LOGIN_SHELL=true when the shell's name
    is in sge_conf(5) login_shells (8.1.9 sets it for binary jobs too)."""
    if not starter_method(cfg):
        return {}
    shell = cfg.get("shell") or "/bin/sh"
    env = {"SGE_STARTER_SHELL_PATH": shell,
           "SGE_STARTER_SHELL_START_MODE": cfg.get("shell_start_mode") or "posix_compliant"}
    if os.path.basename(shell) in (cfg.get("login_shells") or ()):
        env["SGE_STARTER_USE_LOGIN_SHELL"] = "true"
    return env


def nice_value(cfg: Mapping[str, Any]) -> int | None:
    """queue_conf(5) priority: the nice value of the task's processes (the
    shepherd's setrlimits sets it for each child); None for 0 or nonsense."""
    try:
        n = int(str(cfg.get("priority") or "0").strip())
    except ValueError:
        return None
    return max(-20, min(20, n)) or None


RLimit = tuple[int, int, int]  # (RLIMIT_x, soft, hard) for setrlimit(2)


def child_rlimits(cfg: Mapping[str, Any]) -> tuple[RLimit, ...]:
    """The setrlimit(2) triples every child of the shepherd gets (the
    shepherd's setrlimits, called for prolog, PE procedures, job and epilog
    alike): the task's limits, per slot where queue_conf(5) says so."""
    pairs = limits.rlimits(cfg.get("limits") or {}, cfg.get("host_slots") or 1,
                           frozenset(cfg.get("consumable_job") or ()))
    return tuple((limits.RLIMIT_OF[k], limits.as_rlim(soft), limits.as_rlim(hard)) for k, (soft, hard) in pairs.items())


def bound_cpus(cfg: Mapping[str, Any]) -> tuple[int, ...]:
    """qsub(1) -binding in mode ``set``: the processors the execd chose (the
    job's children, prolog and epilog included, run on them alone)."""
    binding = cfg.get("binding") or {}
    return tuple(int(p) for p in binding.get("cpus") or ()) if binding.get("mode") == "set" else ()


def set_rlimits(rlimits: Collection[RLimit]) -> None:
    """setrlimit(2) each; a hard limit above the one this process may set
    (a daemon that is not root) is lowered to it, as a failure of Grid
    Engine's pushlimit is only traced, never fatal."""
    for res, soft, hard in rlimits:
        try:
            resource.setrlimit(res, (soft, hard))
        except (OSError, ValueError):
            _, cur_hard = resource.getrlimit(res)
            if cur_hard != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > cur_hard):
                hard = cur_hard
            if soft == resource.RLIM_INFINITY or soft > hard:
                soft = hard
            try:
                resource.setrlimit(res, (soft, hard))
            except (OSError, ValueError):
                pass


def _open_output(path: str, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    return os.open(path, flags, 0o644)


class Child(NamedTuple):
    """What one child of the shepherd is: who runs what, where, with which files."""

    argv: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    groups: list[int]
    cwd: str
    stdin_path: str
    stdout_path: str
    stderr_path: str
    merge: bool
    exec_state: int  # the failed state when the exec itself fails
    owner: tuple[int, int, list[int]]  # (uid, gid, groups) of the job owner, who opens the files
    rlimits: tuple[RLimit, ...] = ()  # queue_conf(5) RESOURCE LIMITS
    nice: int | None = None  # queue_conf(5) priority
    # an interactive job (minisge.execd.interactive): its three descriptors, made
    # by the shepherd, instead of the files; on a pty it leads a session of its own
    fds: tuple[int, int, int] | None = None
    terminal: bool = False
    exec_path: str | None = None  # what is exec'd, when not argv[0] (a login shell's "-bash")
    cpus: tuple[int, ...] = ()  # qsub -binding (mode set): the processors it may run on


def _exec_child(child: Child, errpipe_w: int) -> None:
    """In the forked child: its own process group, the working directory and
    the three files opened as the job owner (a ``user@`` procedure writes to
    the job's files too), then the child's own ids, default signals, exec.
    Never returns; a failure goes to the shepherd through ``errpipe_w`` as
    ``state message``."""
    stage = SSTATE_BEFORE_JOB
    root = os.getuid() == 0
    try:
        if child.terminal:  # its own session, the pty its controlling terminal
            os.setsid()
            assert child.fds is not None
            fcntl.ioctl(child.fds[0], termios.TIOCSCTTY, 0)
        else:
            os.setpgid(0, 0)
        if child.nice:  # as root still: a negative nice value needs it
            os.setpriority(os.PRIO_PROCESS, 0, child.nice)
        if child.cpus:
            os.sched_setaffinity(0, child.cpus)
        if root:
            take_owner_ids(child)
        stage = SSTATE_NO_CWD
        os.chdir(child.cwd)
        stage = SSTATE_OPEN_OUTPUT
        if child.fds is not None:
            fd_in, fd_out, fd_err = child.fds
        else:
            fd_in = os.open(child.stdin_path or "/dev/null", os.O_RDONLY)
            fd_out = _open_output(child.stdout_path)
            fd_err = fd_out if child.merge else _open_output(child.stderr_path)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        for fd in {fd_in, fd_out, fd_err}:
            if fd > 2:
                os.close(fd)
        stage = child.exec_state
        if root:
            os.seteuid(0)
            os.setgroups(child.groups or [child.gid])
            os.setgid(child.gid)
            os.setuid(child.uid)
        for sig in CHILD_DEFAULT_SIGNALS:
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        set_rlimits(child.rlimits)  # last: an address space limit may be below this process's
        os.execve(child.exec_path or child.argv[0], child.argv, child.env)
    except BaseException as e:  # noqa: BLE001 - a forked child must never return into the daemon's code
        # report to the shepherd and die
        try:
            text = setup_error_text(child, stage, e, os.geteuid(), os.getpid())
            os.write(errpipe_w, text.encode(errors="replace")[:1000])
        finally:
            os._exit(127)


def setup_error_text(child: Child, stage: int, e: BaseException, euid: int, pid: int) -> str:
    """``state euid:pid message`` of a child's failed set-up (read back by
    :func:`setup_failure`), in 8.1.9's words for the stage it failed at."""
    what = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
    if stage == SSTATE_NO_CWD:
        msg = f'error: can\'t chdir to {child.cwd}: {what}'
    elif stage == SSTATE_OPEN_OUTPUT:
        # 8.1.9's words for an output file (as observed); an input file likewise
        filename = e.filename if isinstance(e, OSError) and e.filename else child.stdout_path
        kind = "input" if filename == child.stdin_path else "output"
        msg = f'error: can\'t open {kind} file "{filename}": {what}'
    elif stage == SSTATE_NO_SHELL and isinstance(e, FileNotFoundError) and child.argv:
        msg = f'unable to find shell "{child.argv[0]}"'  # 8.1.9's words (as observed)
    else:
        msg = f"execvp({child.argv[0]}) failed: {what}" if child.argv else str(e)
    return f"{stage} {euid}:{pid} {msg}"


# what a child gets back to their defaults before its exec (the shepherd ignores some of them)
CHILD_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1,
                         signal.SIGUSR2, signal.SIGCHLD, signal.SIGHUP)


NOT_EXECUTED = 127 << 8  # the wait status of a forked child whose set-up or exec failed (its os._exit(127))


def no_rusage() -> resource.struct_rusage:
    """The usage of a child that never ran (made when needed: a struct_rusage
    kept in a module's globals makes CPython 3.11 print a SystemError at exit,
    once the type is torn down before it)."""
    return resource.struct_rusage((0.0, 0.0) + (0,) * 14)


def take_owner_ids(child: Child) -> None:
    """As root: the job owner's supplementary groups and effective ids, the
    set-up before the working directory and the files are opened as the owner
    (a forked child's, or the shepherd's own before a spawn, undone after)."""
    uid, gid, groups = child.owner
    os.setgroups(groups or [gid])
    os.setegid(gid)
    os.seteuid(uid)


def spawnable(child: Child) -> bool:
    """Can ``child`` be started by :func:`spawn_child` (posix_spawn: no copy of
    the shepherd's memory): nothing of its set-up needs code of ours between
    the fork and the exec (no rlimits, nice value, binding, terminal nor
    descriptors of an interactive session)."""
    return not (child.rlimits or child.nice or child.cpus or child.terminal or child.fds is not None)


def spawn_child(child: Child) -> tuple[int | None, str]:
    """Start a :func:`spawnable` child with ``posix_spawn`` (vfork and exec:
    the shepherd's pages are neither copied nor made copy-on-write).  The
    set-up ``_exec_child`` does in a forked child is done here on the
    shepherd itself, which is the task's alone, and undone after: as the
    job owner (effective ids), the working directory and the three files;
    then the child's real ids, which ``POSIX_SPAWN_RESETIDS`` makes its
    effective ones too before the exec (the exec makes them its saved ones:
    the job holds no root id).  (pid, "") once it exec'd; (None, ``state
    euid:pid message``) when its set-up or exec failed."""
    stage = SSTATE_BEFORE_JOB
    root = os.getuid() == 0
    groups = os.getgroups() if root else []
    cwd = os.getcwd()
    fds: list[int] = []
    try:
        try:
            if root:
                take_owner_ids(child)
            stage = SSTATE_NO_CWD
            os.chdir(child.cwd)
            stage = SSTATE_OPEN_OUTPUT
            fds.append(os.open(child.stdin_path or "/dev/null", os.O_RDONLY | os.O_CLOEXEC))
            fds.append(_open_output(child.stdout_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC))
            if not child.merge:
                fds.append(_open_output(child.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC))
            stage = child.exec_state
            if root:
                os.seteuid(0)
                os.setgroups(child.groups or [child.gid])
                os.setresgid(child.gid, 0, 0)
                os.setresuid(child.uid, 0, 0)
            actions = [(os.POSIX_SPAWN_DUP2, fds[0], 0), (os.POSIX_SPAWN_DUP2, fds[1], 1),
                       (os.POSIX_SPAWN_DUP2, fds[-1] if not child.merge else fds[1], 2)]
            pid = os.posix_spawn(child.exec_path or child.argv[0], child.argv, child.env, file_actions=actions,
                                 setpgroup=0, resetids=root, setsigmask=(), setsigdef=CHILD_DEFAULT_SIGNALS)
        finally:
            if root:
                os.setresuid(0, 0, 0)
                os.setresgid(0, 0, 0)
                os.setgroups(groups)
            os.chdir(cwd)
            for fd in fds:
                os.close(fd)
    except OSError as e:
        # who failed, as a forked child names itself: the job owner opening its files, then the child's user
        euid = (child.uid if stage == child.exec_state else child.owner[0]) if root else os.geteuid()
        return None, setup_error_text(child, stage, e, euid, os.getpid())
    return pid, ""


class Shepherd:
    """The run sequence of one task (sge_shepherd(8)), in the forked shepherd."""

    def __init__(self, job_dir: str, cfg: dict[str, Any]):
        self.dir = job_dir
        self.cfg = cfg
        self.failed = 0  # the first failure's state
        self.job_status: int | None = None  # the job's exit status once it ran
        self.usage: dict[str, Any] | None = None
        # the files the end cannot do without, their room taken once the job runs
        self.reserved: dict[str, ReservedFile] = {}

    def reserve(self) -> None:
        """Take the room of ``usage`` and the end marker (just before the
        job is started: it may fill the disk at once)."""
        self.reserved = {name: ReservedFile(self.path(name), size) for name, size in (("usage", 4096),
                                                                                     (END_MARKER, 64))}

    # ------------------------------------------------------------ results
    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def fail(self, state: int, message: str, who: str | None = None) -> None:
        """shepherd_error: record a failure. The first one decides the
        ``failed`` state and the reason; every message goes to ``error``."""
        if not self.failed:
            self.failed = state
        try:
            fd = os.open(self.path("error"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, error_line(message, who=who).encode(errors="replace"))
            finally:
                os.close(fd)
        except OSError:
            pass  # a full disk: the state still goes into the end marker

    def signalled(self) -> bool:
        """Did the execd ask for the job's end (qdel) before the job started?"""
        return os.path.exists(self.path("signal"))

    # ------------------------------------------------------------ children
    def child(self, argv: list[str], env: dict[str, str], who: Mapping[str, Any], stdout: str, stderr: str,
              exec_state: int) -> Child:
        cfg = self.cfg
        return Child(argv=argv, env=env, uid=who["uid"], gid=who["gid"], groups=who.get("groups") or [],
                     cwd=cfg["cwd"], stdin_path=cfg.get("stdin_path") or "/dev/null",
                     stdout_path=stdout, stderr_path=stderr, merge=bool(cfg.get("merge")), exec_state=exec_state,
                     owner=(cfg["uid"], cfg["gid"], cfg.get("groups") or []),
                     rlimits=child_rlimits(cfg), nice=nice_value(cfg), cpus=bound_cpus(cfg))

    def spawn(self, child: Child, on_pid: Callable[[int], None] | None = None,
              relay: interactive.Session | None = None) -> tuple[int, resource.struct_rusage, str]:
        """Fork and exec ``child``, wait for it: (wait status, rusage, setup
        error text as ``state euid:pid message``, empty when it exec'd).
        An interactive job's ``relay`` moves its data while it runs."""
        if relay is None and spawnable(child):
            spawned, err_text = spawn_child(child)
            if spawned is None:
                return NOT_EXECUTED, no_rusage(), err_text
            if on_pid is not None:
                on_pid(spawned)
            while True:
                try:
                    _, status, ru = os.wait4(spawned, 0)
                    return status, ru, ""
                except InterruptedError:
                    continue
        r, w = os.pipe()
        os.set_inheritable(w, False)
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _exec_child(child, w)
        os.close(w)
        if not child.terminal:  # a session leader makes its own group (setsid)
            try:  # the child does it too: whoever is first, the group exists before its pid is told
                os.setpgid(pid, pid)
            except (PermissionError, ProcessLookupError):
                pass  # the child has exec'd already (its own group made) or is gone
        if on_pid is not None:
            on_pid(pid)
        if relay is not None:
            return relay.relay(pid, r)
        err = b""
        while True:
            chunk = os.read(r, 1024)
            if not chunk:
                break
            err += chunk
        os.close(r)
        while True:
            try:
                _, status, ru = os.wait4(pid, 0)
                break
            except InterruptedError:
                continue
        return status, ru, err.decode(errors="replace")

    def procedure_started(self, pid: int, before_job: bool) -> None:
        """A procedure's pid goes to ``proc_pid``, so a qdel (the execd's
        terminate) kills it; a qdel already asked for kills a procedure
        before the job (prolog, PE start) at once.  The ones after the job
        (PE stop, epilog) run after a qdel too: they clean up after it."""
        try:
            write_file(self.path("proc_pid"), f"{pid}\n")
        except OSError:
            pass  # a full disk: it runs without
        if before_job and self.signalled():
            os.kill(pid, signal.SIGKILL)  # its group may not exist yet

    def procedure_child(self, name: str) -> Child | str | None:
        """What the prolog, pe_start, pe_stop or epilog runs (its environment
        without SGE_JOBEXIT_STAT, which it gets once the job ran); None when
        it is not configured; the message of why it cannot be started."""
        proc = (self.cfg.get("procedures") or {}).get(name)
        if not proc:
            return None
        step = STEPS[name]
        if proc.get("error"):  # e.g. the user@ prefix names no user
            return str(proc["error"])
        try:
            key = "pe_variables" if name.startswith("pe_") else "variables"
            argv = expand_command(proc["command"], self.cfg.get(key) or {}, step.variables)
        except VariableError as e:
            return str(e)
        env = procedure_environment(self.cfg["env"], self.cfg.get("sge_env") or {},
                                    runs_as_another_user(proc["uid"], self.cfg["uid"]))
        if name.startswith("pe_"):
            out, err = self.cfg["pe_stdout_path"], self.cfg["pe_stderr_path"]
        else:
            out, err = self.cfg["stdout_path"], self.cfg["stderr_path"]
        return self.child(argv, env, proc, out, err, step.states.before)

    def run_procedure(self, name: str) -> int:
        """Run the prolog, pe_start, pe_stop or epilog if configured: 0 when
        it is not or succeeded, ``before`` when it could not be started,
        ``failed`` when it exited non-zero (its state is recorded)."""
        child = self.procedure_child(name)
        if child is None:
            return 0
        states = STEPS[name].states
        if isinstance(child, str):
            self.fail(states.before, child)
            return states.before
        if self.job_status is not None:  # after the job: PE stop and epilog (submit(1))
            child.env["SGE_JOBEXIT_STAT"] = str(self.job_status)
        before_job = name in BEFORE_JOB
        if before_job and self.signalled():  # a qdel before it started: as if it was killed at once
            return states.failed
        status, _, setup_error = self.spawn(child, lambda pid: self.procedure_started(pid, before_job))
        try:
            os.unlink(self.path("proc_pid"))
        except FileNotFoundError:
            pass
        if setup_error:
            state, who, msg = setup_failure(setup_error)
            self.fail(state or states.before, msg, who)
            return states.before
        code = exit_code(status)
        if code == 0:
            return 0
        if before_job and self.signalled():
            # killed by a qdel (minisge.execd.job_control): no failure of the queue;
            # the job is not started and ends as deleted before it ran
            return states.failed
        self.fail(exit_codes.procedure_state(name, code), exit_codes.exit_status_message(name, code))
        return states.failed

    def job_child(self) -> Child:
        """What a batch job runs (queue_conf(5) shell_start_mode, starter_method)."""
        cfg = self.cfg
        env = dict(cfg["env"], **starter_environment(cfg))
        return self.child(job_argv(cfg), env, cfg, cfg["stdout_path"], cfg["stderr_path"], SSTATE_NO_SHELL)

    def run_job(self) -> None:
        """Start the job itself, wait for it, keep its usage; exit 99/100
        are failures as :func:`minisge.rules.exit_codes.job_state` says."""
        cfg = self.cfg

        def started(pid: int) -> None:
            try:
                write_file(self.path("job_pid"), f"{pid}\n")
            except OSError:
                pass  # a full disk: the job runs without (a qdel cannot find it)
            # a signal the execd sent before the job's pid was known (qdel at once)
            try:
                with open(self.path("signal"), encoding="ascii") as f:
                    os.killpg(pid, int(f.read().strip() or signal.SIGKILL))
            except (FileNotFoundError, ValueError, ProcessLookupError):
                pass

        session = None
        if cfg.get("interactive"):  # qrsh, qlogin: the job's data goes to and from qrsh
            try:
                session = interactive.Session.connect(cfg["interactive"], cfg["env"].get("HOSTNAME", ""))
            except interactive.NoConnection:
                # qrsh is gone (8.1.9: its qrsh_starter, the job, exits 1): no fault of the host or queue
                now = f"{time.time():.6f}"
                self.usage = {"exit_status": 1, "signal": 0, "start_time": now, "end_time": now,
                              "ru_wallclock": "0.000000"}
                self.job_status = 1
                return
        if session is None:
            child = self.job_child()
        else:
            path, argv = interactive.job_argv(cfg)
            env = dict(cfg["env"], **starter_environment(cfg))
            child = self.child(argv, env, cfg, "/dev/null", "/dev/null", SSTATE_NO_SHELL)
            child = child._replace(fds=session.child_fds(), terminal=session.use_pty, exec_path=path)
        self.reserve()  # before the job runs: a job that fills the disk at once cannot outrun it
        start = time.time()
        status, ru, setup_error = self.spawn(child, started, session)
        end = time.time()
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = exit_code(status)
        if session is not None:
            session.finish(1 if setup_error else code)
        self.usage = {
            "exit_status": code,
            "signal": sig,
            "start_time": f"{start:.6f}",
            "end_time": f"{end:.6f}",
            "ru_wallclock": f"{end - start:.6f}",
            "ru_utime": f"{ru.ru_utime:.6f}",
            "ru_stime": f"{ru.ru_stime:.6f}",
        }
        self.usage.update(rusage_fields(ru))
        if setup_error:
            state, who, msg = setup_failure(setup_error)
            self.fail(state or SSTATE_BEFORE_JOB, msg, who)
            return
        self.job_status = code
        job_state = exit_codes.job_state(code, bool(cfg.get("forbid_reschedule")), bool(cfg.get("forbid_apperror")))
        if job_state:
            self.fail(job_state, exit_codes.exit_status_message(exit_codes.JOB_START, code))

    # ------------------------------------------------------------ the sequence
    def run_sequence(self) -> None:
        """prolog → PE start → job → PE stop → epilog (shepherd.c main).

        A failed prolog skips PE start, job and PE stop; a failed PE start
        skips the job; the PE stop procedure runs whenever the PE start
        procedure could be started, and the epilog runs unless the prolog
        could not be started.  A qdel during the prolog skips the job.
        A PE task's shepherd runs the job alone (exec_job.c: no prolog,
        epilog nor PE procedure for a PE task)."""
        if self.cfg.get("pe_task_id") is not None:
            if not self.signalled():
                self.run_job()
            return
        prolog = self.run_procedure("prolog")
        if not prolog and not self.signalled():
            is_pe = bool(self.cfg.get("pe"))
            pe_start = self.run_procedure("pe_start") if is_pe else 0
            if not pe_start and not self.signalled():
                self.run_job()
            if is_pe and pe_start != SSTATE_BEFORE_PESTART:
                self.run_procedure("pe_stop")
        if prolog != SSTATE_BEFORE_PROLOG:
            self.run_procedure("epilog")

    def finish(self) -> None:
        """Write ``usage`` (zeros when the job never ran) and the end marker,
        into their reserved room; the end marker is written even when
        ``usage`` cannot be (it says the job's exit status too)."""
        usage = self.usage or {"exit_status": 0, "signal": 0, "start_time": "0", "end_time": "0", "ru_wallclock": "0"}
        try:
            self.reserved.get("usage", ReservedFile.unreserved(self.path("usage"))).commit(format_usage(usage))
        finally:
            marker = self.reserved.get(END_MARKER, ReservedFile.unreserved(self.path(END_MARKER)))
            marker.commit(end_marker(self.failed, self.usage))


def exit_code(status: int) -> int:
    """A wait status as Grid Engine reports it (:func:`minisge.rules.exit_codes.exit_status`)."""
    if os.WIFSIGNALED(status):
        return exit_codes.exit_status(0, os.WTERMSIG(status))
    return exit_codes.exit_status(os.WEXITSTATUS(status), 0)


def run(job_dir: str) -> None:
    """The shepherd proper, in the forked child. Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        cfg = read_config(job_dir)
        shepherd = Shepherd(job_dir, cfg)
        shepherd.run_sequence()
        shepherd.finish()
        code = 0
    except BaseException:  # noqa: BLE001 - the forked shepherd must end in os._exit, whatever happened
        code = 1
        note_crash(job_dir, traceback.format_exc())
    finally:
        os._exit(code)


def note_crash(job_dir: str, text: str) -> None:
    """The shepherd failed: its traceback goes to ``shepherd_error`` (the
    execd reports the task as lost), or to the daemon's stderr when even
    that cannot be written."""
    try:
        write_file(os.path.join(job_dir, "shepherd_error"), text)
    except OSError as e:
        try:
            os.write(2, f"shepherd in {job_dir}: {text}(cannot write shepherd_error: {e})\n".encode(errors="replace"))
        except OSError:
            pass  # no file and no stderr: the missing exit_status still reports the task as lost
