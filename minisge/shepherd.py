"""The shepherd: the per-job agent between the execd and the job.

Grid Engine's sge_shepherd(8) runs as a process of its own per job, so a job
outlives an execd restart.  minisge keeps that property without paying an
interpreter start per job: the execd *forks* the shepherd (no exec), the
shepherd calls ``setsid``, forks the job (which drops to the job owner's
uid/gid and execs the shell or binary), waits for it with ``wait4`` and
writes its results as files into the job's directory under the execd spool
(``active_jobs/<job>.<task>/``), as Grid Engine's shepherd does:

``pid``          the shepherd's pid
``job_pid``      the job's pid (also its process group)
``exit_status``  the shepherd's failure state (``failed``), 0 when the job ran
``usage``        ``key=value`` lines: exit_status, signal, start_time,
                 end_time, ru_wallclock, ru_utime, ru_stime, ru_maxrss, ...
``error``        the first failure's message, when there was one

The execd learns of the end through a pidfd and reads the files; after a
restart it finds finished jobs by their ``exit_status`` file.  The config is
the JSON file ``config`` written by the execd before the fork.

Pure helpers (command-line construction, the usage file) are kept apart from
``run()``, which is only ever called in the forked child.
"""

from __future__ import annotations

import json
import os
import signal
import time

# failed codes (SGE-FACTS §1b)
SSTATE_BEFORE_JOB = 11
SSTATE_OPEN_OUTPUT = 26
SSTATE_NO_SHELL = 27
SSTATE_NO_CWD = 28
ESSTATE_NO_EXITSTATUS = 19

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


def _open_output(path: str, flags: int = os.O_WRONLY | os.O_CREAT | os.O_APPEND) -> int:
    return os.open(path, flags, 0o644)


def _exec_job(cfg: dict, errpipe_w: int) -> None:
    """In the job child: become the owner, set up files and exec. Never returns."""
    try:
        os.setpgid(0, 0)
        uid, gid = cfg["uid"], cfg["gid"]
        if os.getuid() == 0:
            os.setgroups(cfg.get("groups") or [gid])
            os.setgid(gid)
            os.setuid(uid)
        stage = SSTATE_NO_CWD
        os.chdir(cfg["cwd"])
        stage = SSTATE_OPEN_OUTPUT
        stdin_path = cfg.get("stdin_path") or "/dev/null"
        fd_in = os.open(stdin_path, os.O_RDONLY)
        fd_out = _open_output(cfg["stdout_path"])
        fd_err = fd_out if cfg.get("merge") else _open_output(cfg["stderr_path"])
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        for fd in {fd_in, fd_out, fd_err}:
            if fd > 2:
                os.close(fd)
        stage = SSTATE_NO_SHELL
        argv = job_argv(cfg)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execve(argv[0], argv, cfg["env"])
    except BaseException as e:  # report to the shepherd and die
        try:
            os.write(errpipe_w, f"{locals().get('stage', SSTATE_BEFORE_JOB)} {e}".encode()[:1000])
        finally:
            os._exit(127)


def run(job_dir: str) -> None:
    """The shepherd proper, in the forked child. Never returns."""
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        with open(os.path.join(job_dir, "config"), encoding="utf-8") as f:
            cfg = json.load(f)
        write_file(os.path.join(job_dir, "pid"), f"{os.getpid()}\n")
        r, w = os.pipe()
        os.set_inheritable(w, False)
        start = time.time()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _exec_job(cfg, w)
        os.close(w)
        write_file(os.path.join(job_dir, "job_pid"), f"{pid}\n")
        # a signal the execd sent before the job's pid was known (qdel at once)
        try:
            with open(os.path.join(job_dir, "signal"), encoding="ascii") as f:
                os.killpg(pid, int(f.read().strip() or signal.SIGKILL))
        except (FileNotFoundError, ValueError, ProcessLookupError):
            pass
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
        end = time.time()
        failed = 0
        if err:
            stage, _, msg = err.decode(errors="replace").partition(" ")
            failed = int(stage) if stage.isdigit() else SSTATE_BEFORE_JOB
            write_file(os.path.join(job_dir, "error"), msg + "\n")
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        exit_status = 128 + sig if sig else os.WEXITSTATUS(status)
        usage = {
            "exit_status": exit_status,
            "signal": sig,
            "start_time": f"{start:.6f}",
            "end_time": f"{end:.6f}",
            "ru_wallclock": f"{end - start:.6f}",
            "ru_utime": f"{ru.ru_utime:.6f}",
            "ru_stime": f"{ru.ru_stime:.6f}",
        }
        for name in USAGE_FIELDS:
            usage[name] = getattr(ru, name, 0)  # ru_ismrss is not in struct rusage
        write_file(os.path.join(job_dir, "usage"), format_usage(usage))
        write_marker(os.path.join(job_dir, "exit_status"), f"{failed}\n")
        code = 0
    except BaseException as e:
        code = 1
        try:
            import traceback

            with open(os.path.join(job_dir, "shepherd_error"), "w", encoding="utf-8") as f:
                f.write(traceback.format_exc())
        except BaseException:
            pass
    finally:
        os._exit(code)
