"""The shepherd: the per-job agent between the execd and the job.

Grid Engine's sge_shepherd(8) runs as a process of its own per job, so a job
outlives an execd restart.  minisge keeps that property without paying an
interpreter start per job: the execd *forks* the shepherd (no exec), the
shepherd calls ``setsid`` and runs, as sge_shepherd(8) does, up to five
children one after the other: the queue's **prolog**, the PE's **start
procedure**, the **job**, the PE's **stop procedure** and the **epilog**.
Each child drops to its user (the job owner, or the ``user@`` prefix of a
procedure) and execs its command line directly: the special variables
(``$job_id``, ``$pe_hostfile``, ...) are put into the words of the command
line, never through a shell, so a job named ``x;rm`` stays one argument.

The results are files in the job's directory under the execd spool
(``active_jobs/<job>.<task>/``), as Grid Engine's shepherd writes them:

``pid``          the shepherd's pid
``job_pid``      the job's pid (also its process group)
``exit_status``  the end marker: the shepherd's state (accounting ``failed``)
                 of the *first* failure, 0 when all went well
``usage``        ``key=value`` lines of the job: exit_status, signal,
                 start_time, end_time, ru_wallclock, ru_utime, ru_stime, ...
``error``        one line per failure, ``MM/DD/YYYY HH:MM:SS [euid:pid]:
                 message``; the execd reports the first

The exit codes of the children (sge_shepherd(8), queue_conf(5), sge_pe(5),
SGE-FACTS.md §1-2; man/man5/minisge_exit_codes.5): 0 is success; 99 from
any of them asks for a reschedule (state 25; from the job only unless
FORBID_RESCHEDULE), 100 for the job error state (30; from the job only
unless FORBID_APPERROR); any other non-zero exit of a procedure is its
"failed" state (8 prolog, 10 pe_start, 13 pe_stop, 15 epilog), while the
job's other exit codes are just its exit status.  A failure stops what
follows but the epilog, which still runs (unless the prolog could not even
be started), and the PE stop procedure, which runs when the PE start
procedure did.

The config is the JSON file ``config`` written by the execd before the fork
(:func:`minisge.execd.build_task_config`).  Pure helpers (command-line
construction, variable expansion, the usage file) are kept apart from
:func:`run`, which is only ever called in the forked child.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import time
from typing import NamedTuple

from minisge.formats.sge_conf import PROLOG_EPILOG_VARIABLES
from minisge.formats.sge_pe import PROC_VARIABLES

# failed codes (SGE-FACTS §1b, execution_states.h)
SSTATE_BEFORE_PROLOG = 7
SSTATE_PROLOG_FAILED = 8
SSTATE_BEFORE_PESTART = 9
SSTATE_PESTART_FAILED = 10
SSTATE_BEFORE_JOB = 11
SSTATE_BEFORE_PESTOP = 12
SSTATE_PESTOP_FAILED = 13
SSTATE_BEFORE_EPILOG = 14
SSTATE_EPILOG_FAILED = 15
ESSTATE_NO_EXITSTATUS = 19
SSTATE_AGAIN = 25
SSTATE_OPEN_OUTPUT = 26
SSTATE_NO_SHELL = 27
SSTATE_NO_CWD = 28
SSTATE_APPERROR = 30

# sge_shepherd(8): the exit codes that mean "reschedule" and "job error"
RESCHEDULE_EXIT_STATUS = 99
APPERROR_EXIT_STATUS = 100


class Step(NamedTuple):
    """One of the procedures around the job (sge_shepherd(8))."""

    name: str  # as the error message names it: exit_status of <name> = N
    before: int  # the state when it could not be started
    failed: int  # the state when it exited with another code than 0, 99, 100
    variables: frozenset  # the $variables its command line may use


# prolog/epilog may use sge_conf(5)'s prolog variables; the PE procedures
# sge_pe(5)'s (which add $pe_hostfile, $pe, $pe_slots, $sge_cell, $sge_root).
_PE_VARIABLES = frozenset(PROC_VARIABLES)
STEPS = {
    "prolog": Step("prolog", SSTATE_BEFORE_PROLOG, SSTATE_PROLOG_FAILED, PROLOG_EPILOG_VARIABLES),
    "pe_start": Step("pe_start", SSTATE_BEFORE_PESTART, SSTATE_PESTART_FAILED, _PE_VARIABLES),
    "pe_stop": Step("pe_stop", SSTATE_BEFORE_PESTOP, SSTATE_PESTOP_FAILED, _PE_VARIABLES),
    "epilog": Step("epilog", SSTATE_BEFORE_EPILOG, SSTATE_EPILOG_FAILED, PROLOG_EPILOG_VARIABLES),
}

_VARIABLE = re.compile(r"\$([A-Za-z0-9_]*)")


class VariableError(Exception):
    """A command line names a variable its procedure may not use."""


def expand_command(command: str, values: dict, allowed) -> list[str]:
    """The argv of a procedure's command line (queue_conf(5) prolog, sge_pe(5)).

    The line is split into words at blanks first, then each ``$name`` in a
    word is replaced by its value: a value is never split nor given to a
    shell, so ``$job_name`` of a job named ``x; rm -rf ~`` is one inert
    argument.  A name is the longest run of letters, digits and ``_`` (Grid
    Engine's replace_params); one the procedure may not use, or one without
    a value, is an error with Grid Engine's message.
    """

    def value(m: re.Match) -> str:
        name = m.group(1)
        if not name:
            raise VariableError("variables need at least one character")
        if name not in allowed:
            raise VariableError(f'unknown variable "{name}"')
        if values.get(name) is None:
            raise VariableError(f'can\'t get configuration value for "{name}"')
        return str(values[name])

    return [_VARIABLE.sub(value, word) for word in command.split()]


def error_line(message: str, now: float | None = None) -> str:
    """A line of the ``error`` file: ``MM/DD/YYYY HH:MM:SS [euid:pid]: message``
    (the shepherd's shepherd_error, sge_ctime format, local time)."""
    stamp = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(now))
    return f"{stamp} [{os.geteuid()}:{os.getpid()}]: {message}\n"


def step_state(step: Step, status: int) -> int:
    """The shepherd state for a procedure that exited with ``status`` != 0:
    99 reschedule, 100 job error, anything else the procedure's failure."""
    return {RESCHEDULE_EXIT_STATUS: SSTATE_AGAIN, APPERROR_EXIT_STATUS: SSTATE_APPERROR}.get(status, step.failed)


def job_state(status: int, forbid_reschedule: bool, forbid_apperror: bool) -> int:
    """The shepherd state after the job exited with ``status``: 99 and 100 are
    failures unless sge_conf(5) qmaster_params FORBID_RESCHEDULE /
    FORBID_APPERROR; every other exit code is just the job's exit status."""
    if status == RESCHEDULE_EXIT_STATUS and not forbid_reschedule:
        return SSTATE_AGAIN
    if status == APPERROR_EXIT_STATUS and not forbid_apperror:
        return SSTATE_APPERROR
    return 0

USAGE_FIELDS = (
    "ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss", "ru_minflt",
    "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd",
    "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw",
)


def job_argv(cfg: dict) -> list[str]:
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


def starter_method(cfg: dict) -> str | None:
    """The queue's starter_method, None when it is ``NONE`` (queue_conf(5))."""
    m = (cfg.get("starter_method") or "").strip()
    return None if not m or m.upper() == "NONE" else m


def starter_environment(cfg: dict) -> dict:
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


def nice_value(cfg: dict) -> int | None:
    """queue_conf(5) priority: the nice value of the task's processes (the
    shepherd's setrlimits sets it for each child); None for 0 or nonsense."""
    try:
        n = int(str(cfg.get("priority") or "0").strip())
    except ValueError:
        return None
    return max(-20, min(20, n)) or None


def write_file(path: str, text: str) -> None:
    """Write with one write(2): the small result files are read only after the
    shepherd has ended, except ``exit_status``, the end marker, which is
    renamed into place (see :func:`write_marker`)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_marker(path: str, text: str) -> None:
    """Atomically: a reader sees no file or the whole of it."""
    tmp = path + ".tmp"
    write_file(tmp, text)
    os.rename(tmp, path)


def format_usage(usage: dict) -> str:
    return "".join(f"{k}={v}\n" for k, v in usage.items())


def parse_usage(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out



def child_rlimits(cfg: dict) -> tuple:
    """The setrlimit(2) triples every child of the shepherd gets (the
    shepherd's setrlimits, called for prolog, PE procedures, job and epilog
    alike): the task's limits, per slot where queue_conf(5) says so."""
    from minisge import limits

    pairs = limits.rlimits(cfg.get("limits") or {}, cfg.get("host_slots") or 1, frozenset(cfg.get("consumable_job") or ()))
    return tuple((limits.RLIMIT_OF[k], limits.as_rlim(soft), limits.as_rlim(hard)) for k, (soft, hard) in pairs.items())


def set_rlimits(rlimits) -> None:
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

    argv: list
    env: dict
    uid: int
    gid: int
    groups: list
    cwd: str
    stdin_path: str
    stdout_path: str
    stderr_path: str
    merge: bool
    exec_state: int  # the failed state when the exec itself fails
    owner: tuple  # (uid, gid, groups) of the job owner, who opens the files
    rlimits: tuple = ()  # ((RLIMIT_x, soft, hard), ...): queue_conf(5) RESOURCE LIMITS
    nice: int | None = None  # queue_conf(5) priority


def _exec_child(child: Child, errpipe_w: int) -> None:
    """In the forked child: its own process group, the working directory and
    the three files opened as the job owner (a ``user@`` procedure writes to
    the job's files too), then the child's own ids, default signals, exec.
    Never returns; a failure goes to the shepherd through ``errpipe_w`` as
    ``state message``."""
    stage = SSTATE_BEFORE_JOB
    root = os.getuid() == 0
    try:
        os.setpgid(0, 0)
        if child.nice:  # as root still: a negative nice value needs it
            os.setpriority(os.PRIO_PROCESS, 0, child.nice)
        if root:
            uid, gid, groups = child.owner
            os.setgroups(groups or [gid])
            os.setegid(gid)
            os.seteuid(uid)
        stage = SSTATE_NO_CWD
        os.chdir(child.cwd)
        stage = SSTATE_OPEN_OUTPUT
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
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2,
                    signal.SIGCHLD, signal.SIGHUP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        set_rlimits(child.rlimits)  # last: an address space limit may be below this process's
        os.execve(child.argv[0], child.argv, child.env)
    except BaseException as e:  # report to the shepherd and die
        try:
            what = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if stage == SSTATE_NO_CWD:
                msg = f'error: can\'t chdir to {child.cwd}: {what}'
            elif stage == SSTATE_OPEN_OUTPUT:
                msg = f"can't open file {getattr(e, 'filename', '') or child.stdout_path}: {what}"
            else:
                msg = f"execvp({child.argv[0]}) failed: {what}" if child.argv else str(e)
            os.write(errpipe_w, f"{stage} {msg}".encode(errors="replace")[:1000])
        finally:
            os._exit(127)


class Shepherd:
    """The run sequence of one task (sge_shepherd(8)), in the forked shepherd."""

    def __init__(self, job_dir: str, cfg: dict):
        self.dir = job_dir
        self.cfg = cfg
        self.failed = 0  # the first failure's state
        self.job_status: int | None = None  # the job's exit status once it ran
        self.usage: dict | None = None

    # ------------------------------------------------------------ results
    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def fail(self, state: int, message: str) -> None:
        """shepherd_error: record a failure. The first one decides the
        ``failed`` state and the reason; every message goes to ``error``."""
        if not self.failed:
            self.failed = state
        fd = os.open(self.path("error"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, error_line(message).encode(errors="replace"))
        finally:
            os.close(fd)

    def signalled(self) -> bool:
        """Did the execd ask for the job's end (qdel) before the job started?"""
        return os.path.exists(self.path("signal"))

    # ------------------------------------------------------------ children
    def child(self, argv: list, env: dict, who: dict, stdout: str, stderr: str, exec_state: int) -> Child:
        cfg = self.cfg
        return Child(argv=argv, env=env, uid=who["uid"], gid=who["gid"], groups=who.get("groups") or [],
                     cwd=cfg["cwd"], stdin_path=cfg.get("stdin_path") or "/dev/null",
                     stdout_path=stdout, stderr_path=stderr, merge=bool(cfg.get("merge")), exec_state=exec_state,
                     owner=(cfg["uid"], cfg["gid"], cfg.get("groups") or []),
                     rlimits=child_rlimits(cfg), nice=nice_value(cfg))

    def spawn(self, child: Child, on_pid=None) -> tuple[int, object, str]:
        """Fork and exec ``child``, wait for it: (wait status, rusage, setup
        error text as ``state message``, empty when it exec'd)."""
        r, w = os.pipe()
        os.set_inheritable(w, False)
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _exec_child(child, w)
        os.close(w)
        if on_pid is not None:
            on_pid(pid)
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

    def procedure_started(self, pid: int) -> None:
        """A procedure's pid goes to ``proc_pid``, so a qdel (the execd's
        terminate) kills it; a qdel already asked for kills it at once."""
        write_file(self.path("proc_pid"), f"{pid}\n")
        if self.signalled():
            os.kill(pid, signal.SIGKILL)  # its group may not exist yet

    def run_procedure(self, name: str) -> int:
        """Run the prolog, pe_start, pe_stop or epilog if configured: 0 when
        it is not or succeeded, ``before`` when it could not be started,
        ``failed`` when it exited non-zero (its state is recorded)."""
        proc = (self.cfg.get("procedures") or {}).get(name)
        if not proc:
            return 0
        step = STEPS[name]
        if proc.get("error"):  # e.g. the user@ prefix names no user
            self.fail(step.before, proc["error"])
            return step.before
        try:
            key = "pe_variables" if name.startswith("pe_") else "variables"
            argv = expand_command(proc["command"], self.cfg.get(key) or {}, step.variables)
        except VariableError as e:
            self.fail(step.before, str(e))
            return step.before
        env = dict(self.cfg["env"])
        if self.job_status is not None:  # after the job: PE stop and epilog (submit(1))
            env["SGE_JOBEXIT_STAT"] = str(self.job_status)
        if name.startswith("pe_"):
            out, err = self.cfg["pe_stdout_path"], self.cfg["pe_stderr_path"]
        else:
            out, err = self.cfg["stdout_path"], self.cfg["stderr_path"]
        status, _, setup_error = self.spawn(self.child(argv, env, proc, out, err, step.before), self.procedure_started)
        try:
            os.unlink(self.path("proc_pid"))
        except FileNotFoundError:
            pass
        if setup_error:
            state, _, msg = setup_error.partition(" ")
            self.fail(int(state) if state.isdigit() else step.before, msg)
            return step.before
        code = exit_code(status)
        if code == 0:
            return 0
        if self.signalled() and name in ("prolog", "pe_start"):
            # killed by a qdel (minisge.execd_control): no failure of the queue;
            # the job is not started and ends as deleted before it ran
            return step.failed
        self.fail(step_state(step, code), f"exit_status of {name} = {code}")
        return step.failed

    def run_job(self) -> None:
        """Start the job itself, wait for it, keep its usage; exit 99/100
        are failures as :func:`job_state` says."""
        cfg = self.cfg
        job_pid_path = self.path("job_pid")

        def started(pid: int) -> None:
            write_file(job_pid_path, f"{pid}\n")
            # a signal the execd sent before the job's pid was known (qdel at once)
            try:
                with open(self.path("signal"), encoding="ascii") as f:
                    os.killpg(pid, int(f.read().strip() or signal.SIGKILL))
            except (FileNotFoundError, ValueError, ProcessLookupError):
                pass

        env = dict(cfg["env"], **starter_environment(cfg))
        child = self.child(job_argv(cfg), env, cfg, cfg["stdout_path"], cfg["stderr_path"], SSTATE_NO_SHELL)
        start = time.time()
        status, ru, setup_error = self.spawn(child, started)
        end = time.time()
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = exit_code(status)
        self.usage = {
            "exit_status": code,
            "signal": sig,
            "start_time": f"{start:.6f}",
            "end_time": f"{end:.6f}",
            "ru_wallclock": f"{end - start:.6f}",
            "ru_utime": f"{ru.ru_utime:.6f}",
            "ru_stime": f"{ru.ru_stime:.6f}",
        }
        for name in USAGE_FIELDS:
            self.usage[name] = getattr(ru, name, 0)  # ru_ismrss is not in struct rusage
        if setup_error:
            state, _, msg = setup_error.partition(" ")
            self.fail(int(state) if state.isdigit() else SSTATE_BEFORE_JOB, msg)
            return
        self.job_status = code
        state = job_state(code, bool(cfg.get("forbid_reschedule")), bool(cfg.get("forbid_apperror")))
        if state:
            self.fail(state, f"exit_status of job start = {code}")

    # ------------------------------------------------------------ the sequence
    def run_sequence(self) -> None:
        """prolog → PE start → job → PE stop → epilog (shepherd.c main).

        A failed prolog skips PE start, job and PE stop; a failed PE start
        skips the job; the PE stop procedure runs whenever the PE start
        procedure could be started, and the epilog runs unless the prolog
        could not be started.  A qdel during the prolog skips the job."""
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
        """Write ``usage`` (zeros when the job never ran) and the end marker."""
        usage = self.usage or {"exit_status": 0, "signal": 0, "start_time": "0", "end_time": "0", "ru_wallclock": "0"}
        write_file(self.path("usage"), format_usage(usage))
        write_marker(self.path("exit_status"), f"{self.failed}\n")


def exit_code(status: int) -> int:
    """A wait status as Grid Engine reports it: the exit code, or 128 + the
    signal number when a signal ended the process (accounting(5))."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def run(job_dir: str, shepherd_class: type["Shepherd"] | None = None) -> None:
    """The shepherd proper, in the forked child (``shepherd_class``: a
    subclass with another run sequence, e.g. a PE task's). Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        with open(os.path.join(job_dir, "config"), encoding="utf-8") as f:
            cfg = json.load(f)
        write_file(os.path.join(job_dir, "pid"), f"{os.getpid()}\n")
        shepherd = (shepherd_class or Shepherd)(job_dir, cfg)
        shepherd.run_sequence()
        shepherd.finish()
        code = 0
    except BaseException:
        code = 1
        try:
            import traceback

            with open(os.path.join(job_dir, "shepherd_error"), "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
        except BaseException:
            pass
    finally:
        os._exit(code)
