"""qrsh: start a task in a running parallel job (``qrsh -inherit``).

``qrsh -inherit [-nostdin] [-verbose] [-v var[=value],...] [-V] host command [args]``

qrsh(1): the job is the one named by ``$JOB_ID`` (and ``$SGE_TASK_ID``); the
command runs as a task of it under the execd of ``host``, which must be a
host granted to the job, in a PE with ``control_slaves TRUE`` (sge_pe(5)).
With -inherit the other options are ignored but -verbose, -v and -V
("-v PWD" replaces -cwd).  The task's stdout and stderr come back on
qrsh's own, as they are written; qrsh exits with the command's exit status.
Standard input is not passed on (as with -nostdin).

qrsh without -inherit (an interactive job, ``qrsh [options] [command]``)
is not supported by minisge: it says so and exits 1.

Standard library and minisge.protocol / minisge.client only.
"""

from __future__ import annotations

import os
import sys

from minisge import protocol
from minisge.client import NoQmaster, connect

INHERIT_USAGE = 'error: usage with "-inherit" option: "qrsh -inherit ... <host> <command> [args]"\n'
NOT_SUPPORTED = ("error: qrsh without -inherit (an interactive job) is not supported by minisge; "
                 "use qsub, or qrsh -inherit inside a parallel job\n")
# options that take an argument (qrsh(1)); ignored with -inherit but -v
_WITH_ARG = frozenset({
    "-A", "-ac", "-ar", "-binding", "-ckpt", "-dc", "-dl", "-e", "-hold_jid", "-i", "-js", "-jsv",
    "-l", "-m", "-masterq", "-N", "-now", "-o", "-P", "-p", "-pe", "-q", "-R", "-S", "-sc", "-t", "-u", "-v",
    "-w", "-wd", "-j", "-b", "-pty", "-M", "-a", "-c", "-C", "-display", "-tc",
})
_FLAGS = frozenset({"-nostdin", "-noshell", "-cwd", "-h", "-clear"})


def sge_o_env(env: dict) -> dict:
    """The SGE_O_* variables qrsh puts into the task's environment, from its
    own (qrsh -inherit on 8.1.9 passes them as a submitting client does)."""
    out = {}
    for name in ("HOME", "LOGNAME", "MAIL", "PATH", "SHELL"):
        if env.get(name) is not None:
            out[f"SGE_O_{name}"] = env[name]
    try:
        out["SGE_O_WORKDIR"] = os.getcwd()
    except OSError:
        pass
    out["SGE_O_HOST"] = os.uname().nodename.split(".", 1)[0]
    return out


def parse(argv: list[str], env: dict) -> tuple[dict | None, str, int]:
    """(request, error text, rc): the ``pe_task`` request, or why not."""
    inherit = False
    verbose = False
    variables: dict[str, str] = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-"):
            break
        if a == "-inherit":
            inherit = True
        elif a == "-verbose":
            verbose = True
        elif a == "-V":
            variables.update({k: v for k, v in env.items()})
        elif a == "-v":
            i += 1
            if i >= len(argv):
                return None, 'error: ERROR! -v option must have argument\n', 1
            for item in argv[i].split(","):
                if not item:
                    continue
                name, eq, value = item.partition("=")
                if eq:
                    variables[name] = value
                elif name in env:
                    variables[name] = env[name]
        elif a in _WITH_ARG:
            i += 1
        elif a in _FLAGS:
            pass
        elif a == "-help":
            return None, "", -1
        else:
            return None, f'error: ERROR! invalid option argument "{a}"\n', 1
        i += 1
    if not inherit:
        return None, NOT_SUPPORTED, 1
    job = env.get("JOB_ID")
    if job is None:
        return None, 'error: "qrsh" called with option "-inherit", but "JOB_ID" not set in environment\n', 1
    if not job.isdigit():
        return None, f'error: invalid "JOB_ID" {job}\n', 1
    rest = argv[i:]
    if len(rest) < 2:
        return None, INHERIT_USAGE, 1
    task = env.get("SGE_TASK_ID", "undefined")
    task_id = int(task) if task.isdigit() else 1
    task_env = sge_o_env(env)
    task_env.update(variables)
    return {"op": "pe_task", "job_id": int(job), "task_id": task_id, "host": rest[0], "command": rest[1:],
            "env": task_env, "verbose": verbose}, "", 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    request, error, rc = parse(argv, dict(os.environ))
    if request is None:
        if rc == -1:
            sys.stdout.write("usage: qrsh -inherit [-nostdin] [-verbose] [-v var[=value],...] [-V] host command [args]\n")
            return 0
        sys.stderr.write(error)
        return rc
    try:
        sock = connect()
    except NoQmaster as e:
        sys.stderr.write(f"{e}\n")
        return 1
    out = sys.stdout.buffer
    err = sys.stderr.buffer
    sys.stdout.flush()
    try:
        for reply in protocol.iter_replies(sock, request):
            if not reply.get("ok"):
                sys.stderr.write(str(reply.get("error", "")) + "\n")
                return 1
            if not protocol.is_final(reply):
                stream = err if reply.get("stream") == "err" else out
                stream.write(str(reply.get("data") or "").encode("latin-1"))
                stream.flush()
                continue
            if request["verbose"]:
                sys.stderr.write(f"pe task {reply.get('pe_task_id')} ended with exit status {reply.get('exit_status')}\n")
            if reply.get("failed") and reply.get("error"):
                sys.stderr.write(f"error: {reply['error']}\n")
            return int(reply.get("exit_status", 0)) & 0xFF
    except protocol.ProtocolError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    except BrokenPipeError:
        return 1
    finally:
        sock.close()
    return 1


if __name__ == "__main__":
    sys.exit(main())
