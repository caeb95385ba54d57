"""qsub: submit a batch job.  See qsub(1); options are parsed by
:mod:`minisge.formats.submit_options`, and the job goes to the qmaster in one request.

Standard library, the protocol and the option parser only: a loop of
thousands of ``qsub`` calls must not pay for trio or attrs.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # not signal: its enum costs a command milliseconds at start-up
import sys

import minisge  # its output (job_detail_out, submit_verify): loaded when used (minisge.WHEN_USED)
from minisge import protocol
from minisge.formats import submit_options
from minisge.protocol import operations
from minisge.protocol.client import SAYS_QSUB, NoQmaster, comm_failure, connect, qmaster_address

from .submitter import Submitter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minisge.output import job_detail_out, submit_verify  # noqa: F401  (output.NAME: loaded when used)


def read_text_file(path: str) -> str:
    """The ``read_file`` of the option parser: a file's text (undecodable bytes kept)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def _signal_names() -> dict[int, str]:
    """signal.Signals' names by number, without the enum: of two names for a
    number (SIGABRT and SIGIOT) the first in the alphabet, as the enum has it."""
    names: dict[int, str] = {}
    for name, num in sorted(((k, v) for k, v in vars(_signal).items()
                             if k.isupper() and k.startswith("SIG") and not k.startswith("SIG_")),
                            key=lambda kv: (kv[1], kv[0])):
        names.setdefault(num, name)
    return names


def _signal_name(num: int) -> str:
    return _signal_names().get(num, str(num))


#: qsub -pty y: refused (a batch job has no terminal; qrsh and qlogin give one)
PTY_REFUSED = "Unable to run job: -pty yes is not supported for batch jobs\nExiting."


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    who = Submitter()
    env, user, home, cell, cwd, hostname = who.env, who.user, who.home, who.cell, who.cwd, who.hostname
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
            read_file=read_text_file,
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
    if req.get("pty"):
        # 8.1.9 accepts -pty y for a batch job and then never starts its script (checked
        # on the peer: the job stays in state t until h_rt or qdel ends it)
        sys.stderr.write(PTY_REFUSED + "\n")
        return 1
    if req.get("verify"):  # shown as 8.1.9 shows it, nothing is sent
        view = minisge.output.submit_verify.verify_view(req)
        sys.stdout.write(minisge.output.job_detail_out.format_job_detail(view).split("\n", 1)[1])
        return 0
    sync = bool(req.pop("sync", False))  # -sync y|x: wait for the end
    sync_start = bool(req.pop("sync_start", False))  # -sync r: wait for the start
    immediate = bool(req.get("now"))
    terse = bool(req.pop("terse", False))
    for k in ("warnings", "verify"):
        req.pop(k, None)
    try:
        sock = connect(cell, timeout=None if sync or sync_start else 60)
    except NoQmaster as e:
        return SAYS_QSUB.report(e)
    first: dict[str, Any] | None = None
    try:
        replies = protocol.iter_replies(sock, {"op": operations.SUBMIT, "request": req, "sync": sync,
                                                   "sync_start": sync_start})
        first = next(replies)
        for w in first.get("warnings") or ():  # qsub -w w
            sys.stdout.write(w + "\n")
        if not first.get("ok"):
            rc = int(first.get("rc", 1))
            # "verification: found suitable queue(s)" (-w v) is news, not an error
            (sys.stdout if rc == 0 else sys.stderr).write(first.get("error", "Unable to run job.") + "\n")
            return rc
        sys.stdout.write(submit_options.submitted_message(first["job_id"], first["name"], first.get("array"), terse)
                         + "\n")
        sys.stdout.flush()
        if immediate:  # -now y: the qmaster answers once the job's one pass is over
            sys.stderr.write("Waiting for immediate job to be scheduled.\n")
            sys.stderr.flush()
            scheduled = next(replies)
            if not scheduled.get("scheduled"):
                sys.stderr.write("\nYour qsub request could not be scheduled; try again later.\n")
                return 1
            sys.stderr.write(f"\nYour immediate job {submit_options.job_id_text(first['job_id'], first.get('array'))}"
                             " has been successfully scheduled.\n")
        if sync_start:
            started = next(replies)
            ident = str(first["job_id"])
            if not started.get("started"):  # the job ended (qdel) before any task started
                sys.stderr.write(f"Unable to run job {ident}\n")
                return 1
            if first.get("array"):
                ident += f".{started['started']}"
            sys.stdout.write(f"Job {ident} has started.\n")  # Open Cluster Scheduler's words
            sys.stdout.flush()
        if not sync:
            return 0
        final = first
        for reply in replies:  # the last reply tells how the job ended
            final = reply
        return _sync_result(final, first["job_id"], bool(first.get("array")), terse)
    except (OSError, protocol.ProtocolError) as e:  # the qmaster went away, or answered nothing in time
        sys.stderr.write(comm_failure(e, cell) + "\n")
        if first is None:  # 8.1.9's words when the submission got no answer
            host, port = qmaster_address(cell)
            sys.stderr.write(f'Unable to run job: unable to contact qmaster using port {port} on host "{host}"\n'
                             "Exiting.\n")
        return 1
    finally:
        sock.close()


def _sync_result(final: dict[str, Any], job_id: int, is_array: bool, terse: bool) -> int:
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
