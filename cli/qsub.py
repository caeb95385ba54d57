"""qsub: submit a batch job.  See qsub(1); options are parsed by
:mod:`minisge.submit_options`, and the job goes to the qmaster in one request.

Standard library, the protocol and the option parser only: a loop of
thousands of ``qsub`` calls must not pay for trio or attrs.
"""

from __future__ import annotations

import os
import sys

from minisge import submit_options
from minisge.cell import Cell
from minisge.client import NoQmaster, connect
from minisge import protocol


def _signal_name(num: int) -> str:
    import signal

    try:
        return signal.Signals(num).name
    except ValueError:
        return str(num)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ)
    try:
        import pwd

        pw = pwd.getpwuid(os.getuid())
        user, home = pw.pw_name, pw.pw_dir
    except KeyError:
        user, home = env.get("USER", ""), env.get("HOME", "/")
    cell = Cell.from_env()
    try:
        cwd = os.getcwd()
    except FileNotFoundError:
        cwd = env.get("PWD", "/")
    from minisge.cell import short_hostname

    hostname = short_hostname()
    env.setdefault("HOST", hostname)
    try:
        req = submit_options.parse_submission(
            argv,
            cwd=cwd,
            env=env,
            home=home,
            user=user,
            hostname=hostname,
            cell_root=cell.path,
            stdin_reader=sys.stdin.read,
            read_file=submit_options.read_text_file,
        )
    except submit_options.SubmitError as e:
        for w in e.warnings:
            sys.stdout.write(w + "\n")
        sys.stderr.write(e.message + "\n")
        return e.exit_code
    for w in req.get("warnings") or ():
        sys.stdout.write(w + "\n")
    if req.get("help"):
        sys.stdout.write(submit_options.USAGE)
        return 0
    if req.get("verify"):
        sys.stderr.write('qsub: Unsupported: "-verify" is not supported in this version\n')
        return 5
    sync = bool(req.pop("sync", False))
    terse = bool(req.pop("terse", False))
    for k in ("warnings", "verify"):
        req.pop(k, None)
    try:
        sock = connect(cell, timeout=None if sync else 60)
    except NoQmaster as e:
        sys.stderr.write(f"{e}\n")
        return 1
    try:
        replies = protocol.iter_replies(sock, {"op": "submit", "request": req, "sync": sync})
        first = next(replies)
        if not first.get("ok"):
            rc = first.get("rc", 1)
            # "verification: found suitable queue(s)" (-w v) is news, not an error
            (sys.stdout if rc == 0 else sys.stderr).write(first.get("error", "Unable to run job.") + "\n")
            return rc
        sys.stdout.write(submit_options.submitted_message(first["job_id"], first["name"], first.get("array"), terse) + "\n")
        sys.stdout.flush()
        if not sync:
            return 0
        final = first
        for final in replies:
            pass
        return _sync_result(final, first["job_id"], bool(first.get("array")), terse)
    except protocol.ProtocolError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    finally:
        sock.close()


def _sync_result(final: dict, job_id: int, is_array: bool, terse: bool) -> int:
    """What ``qsub -sync y`` prints for each task's end, and its exit status."""
    rc = 0
    tasks = final.get("tasks") or []
    if not tasks:
        sys.stderr.write(f"Unable to run job {job_id}\n")
        return 0
    for t in tasks:
        ident = f"{job_id}.{t['task_id']}" if is_array else str(job_id)
        if t.get("deleted"):
            sys.stderr.write(f"Unable to run job {ident}\n")
            continue
        if t.get("signal") or (t.get("failed") in (37, 100) and t.get("exit_status", 0) > 128):
            sig = t.get("signal") or t.get("exit_status", 0) - 128
            sys.stderr.write(f"Job {ident} exited because of signal {_signal_name(sig)}\n")
            rc = 1
            continue
        code = int(t.get("exit_status", 0))
        msg = f"Job {ident} exited with exit code {code}.\n"
        if code == 0:
            if not terse:
                sys.stdout.write(msg)
        else:
            sys.stderr.write(msg)
            rc = code
    return rc


if __name__ == "__main__":
    sys.exit(main())
