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
is an interactive job, and so is qlogin (minisge.cli.qlogin runs
:func:`run_interactive`): see the second half of this module.

Standard library and minisge.protocol / minisge.protocol.client only.
"""

from __future__ import annotations

import errno
import hmac
import os
import queue
import secrets
import select
import signal
import socket
import sys
import termios
import threading
import tty

from minisge import output, protocol  # output's job_detail_out and submit_verify: loaded when used
from minisge.cell import Cell
from minisge.formats import interactive_stream as stream
from minisge.formats import submit_options
from minisge.protocol import operations
from minisge.protocol.client import SAYS_QCONF, NoQmaster, call, comm_failure, connect

from .submitter import Submitter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from minisge.output import job_detail_out, submit_verify  # noqa: F401  (output.NAME: loaded when used)

USAGE = """\
SGE 8.1.9
usage: qrsh [options]
   [-ac context_list]                       add context variable(s)
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-b y[es]|n[o]]                          handle command as binary
   [-cwd]                                   use current working directory
   [-dc simple_context_list]                delete context variable(s)
   [-h]                                     place user hold on job
   [-hard]                                  consider following requests "hard"
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-hold_jid job_identifier_list]          define jobnet interdependencies
   [-hold_jid_ad job_identifier_list]       define jobnet array interdependencies
   [-inherit]                               inherit existing job environment JOB_ID for rsh
   [-js job_share]                          share tree or functional job share
   [-jsv jsv_url]                           job submission verification script to be used
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-mattr obj_nm attr_nm val obj_id_list]  modify an attribute (or element in a sublist) of an object
   [-N name]                                specify job name
   [-nostdin]                               suppress stdin for rsh
   [-noshell]                               start command without wrapping <loginshell> -c
   [-notify]                                notify job before killing/suspending it
   [-now y[es]|n[o]]                        start job immediately or not at all
   [-ot tickets]                            set job's override tickets
   [-p priority]                            define job's relative priority
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-pty y[es]|n[o]]                        start job in a pty
   [-q wc_queue_list]                       bind job to queue(s)
   [-sc context_list]                       set job context (replaces old context)
   [-soft]                                  consider following requests as soft
   [-srqs [rqs_list]]                       show resource quota set(s)
   [-sss]                                   show scheduler state
   [-v variable_list]                       export these environment variables
   [-verify]                                do not submit, just verify
   [-V]                                     export all environment variables
   [-wd working_directory]                  use working_directory
   [-@ file]                                read commandline input from file

account_string          account_name
complex_list            complex[,complex,...]
context_list            variable[=value][,variable[=value],...]
job_identifier_list     {job_id|job_name|reg_exp}[,{job_id|job_name|reg_exp},...]
jsv_url                 [script:][username@]path
rqs_list                rqs_name[,rqs_name,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' `s'
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
working_directory       path
priority                -1023 - 1024
resource_list           resource[=value][,resource[=value],...]
simple_context_list     variable[,variable,...]
slot_range              [n[-m]|[-]m] - n,m > 0
variable_list           variable[=value][,variable[=value],...]
obj_nm                  "queue"|"exechost"|"pe"|"ckpt"|"hostgroup"|"resource_quota"
attr_nm                 (see man pages)
obj_id_list             objectname [ objectname ...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
"""
INHERIT_USAGE = 'error: usage with "-inherit" option: "qrsh -inherit ... <host> <command> [args]"\n'
_FLAGS = frozenset({"-nostdin", "-noshell", "-cwd", "-h", "-clear"})


def sge_o_env(env: dict[str, str]) -> dict[str, str]:
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


def parse(argv: list[str], env: dict[str, str]) -> tuple[dict[str, Any] | None, str, int]:
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
        elif a in WITH_ARG:
            i += 1
        elif a in _FLAGS:
            pass
        elif a == "-help":
            return None, "", -1
        else:
            return None, f'error: invalid option argument "{a}"\n', 1
        i += 1
    if not inherit:  # an interactive job: main runs it (run_interactive)
        return None, "error: qrsh without -inherit is an interactive job\n", 1
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
    return {"op": operations.PE_TASK, "job_id": int(job), "task_id": task_id, "host": rest[0], "command": rest[1:],
            "env": task_env, "verbose": verbose}, "", 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts, _ = split_command(argv)
    if "-inherit" not in opts and "-help" not in opts:
        return run_interactive("qrsh", argv)
    request, error, rc = parse(argv, dict(os.environ))
    if request is None:
        if rc == -1:
            sys.stdout.write(USAGE)  # 8.1.9's, every option it lists; minisge runs -inherit alone
            return 0
        sys.stderr.write(error)
        return rc
    try:
        sock = connect()
    except NoQmaster as e:
        return SAYS_QCONF.report(e)
    out = sys.stdout.buffer
    err = sys.stderr.buffer
    sys.stdout.flush()
    try:
        for reply in _replies(sock, request):
            if reply is None:
                return 1
            if not reply.get("ok"):
                sys.stderr.write(str(reply.get("error", "")) + "\n")
                return 1
            if not protocol.is_final(reply):
                stream = err if reply.get("stream") == "err" else out
                stream.write(str(reply.get("data") or "").encode("latin-1"))
                stream.flush()
                continue
            if request["verbose"]:
                sys.stderr.write(f"pe task {reply.get('pe_task_id')} ended with exit status "
                                 f"{reply.get('exit_status')}\n")
            if reply.get("failed") and reply.get("error"):
                sys.stderr.write(f"error: {reply['error']}\n")
            return int(reply.get("exit_status", 0)) & 0xFF
    except BrokenPipeError:  # our own output went away
        return 1
    finally:
        sock.close()
    return 1


def _replies(sock: protocol.ClientSocket, request: dict[str, Any]) -> Iterator[dict[str, Any] | None]:
    """The replies to ``request``; a failed connection is said (8.1.9's
    commlib words) and ends them with None."""
    replies = protocol.iter_replies(sock, request)
    while True:
        try:
            reply = next(replies)
        except StopIteration:
            return
        except (OSError, protocol.ProtocolError) as e:
            sys.stderr.write(comm_failure(e) + "\n")
            yield None
            return
        yield reply


# ================================================================ interactive jobs (qrsh, qlogin)

# options of qrsh(1) that take an argument (to find where the command starts)
WITH_ARG = frozenset({
    "-A", "-ac", "-ar", "-binding", "-ckpt", "-dc", "-dl", "-e", "-hold_jid", "-hold_jid_ad", "-i", "-js",
    "-jsv", "-l", "-m", "-masterq", "-N", "-now", "-o", "-P", "-p", "-pe", "-q", "-R", "-S", "-sc", "-t",
    "-u", "-v", "-w", "-wd", "-j", "-b", "-pty", "-M", "-a", "-c", "-C", "-display", "-tc", "-@", "-ot",
    "-astnode", "-he",
})
# qrsh's own switches (not qsub's): acted on here, not by the job request parser
OWN_FLAGS = frozenset({"-nostdin", "-noshell", "-verbose"})
# qsub's switches qrsh does not know (8.1.9: "error: Unknown option -t"; -ot, though its -help lists it)
UNKNOWN = frozenset({"-t", "-sync", "-terse", "-ot"})
LOGIN_NAMES = {"qrsh": "QRLOGIN", "qlogin": "QLOGIN"}
ACCEPT_TIMEOUT = 30.0  # seconds a connection may take to say its token


class Interrupted(Exception):
    """qrsh got SIGINT, SIGTERM or SIGHUP."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the options, the command and its arguments) of qrsh's words."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if not a.startswith("-") or a == "-":
            break
        i += 2 if a in WITH_ARG else 1
    return argv[:i], argv[i:]


def own_switches(opts: list[str]) -> tuple[list[str], dict[str, bool]]:
    """qrsh's own flags taken out of the options, and the -pty choice (None: the default)."""
    rest, own = [], {}
    i = 0
    while i < len(opts):
        a = opts[i]
        if a in OWN_FLAGS:
            own[a] = True
        else:
            rest.append(a)
            if a in WITH_ARG and i + 1 < len(opts):
                rest.append(opts[i + 1])
                i += 1
        i += 1
    return rest, own


def interactive_request(kind: str, argv: list[str], env: dict[str, str], *, cwd: str, home: str, user: str,
                        hostname: str, cell_root: str, port: str, token: str) -> dict[str, Any]:
    """The job request of ``qrsh``/``qlogin`` ARGV (raises submit_options.SubmitError)."""
    opts, command = split_command(argv)
    opts, own = own_switches(opts)
    if opts[-1:] == ["-ot"]:  # 8.1.9 wants the argument before it refuses the switch
        raise submit_options.SubmitError("error: -ot option must have argument", 1)
    for a in opts:
        if a in UNKNOWN:
            raise submit_options.SubmitError(f"error: Unknown option {a}", 1)
    if kind == "qlogin" and command:  # qlogin takes no command
        raise submit_options.SubmitError(f'error: invalid option argument "{command[0]}"', 1)
    login = not command
    words = list(opts)
    if "-now" not in words:
        words = ["-now", "y", *words]
    words += ["-b", "y"] + (command if command else [LOGIN_NAMES[kind]])
    req = submit_options.parse_submission(words, cwd=cwd, env=env, home=home, user=user, hostname=hostname,
                                          cell_root=cell_root, stdin_reader=lambda: "", read_file=_read_file)
    pty = req.pop("pty", None)
    req["pty"] = None
    req["no_shell"] = bool(own.get("-noshell"))
    req["restart"] = False  # 8.1.9: an interactive job is never restarted ("restart: n")
    req["args"] = []  # the words travel in QRSH_COMMAND alone, as 8.1.9 keeps them (no job_args)
    req["stdout_path"] = [{"host": None, "path": "/dev/null"}]
    req["stderr_path"] = [{"host": None, "path": "/dev/null"}]
    job_env = dict(req.get("env") or {})
    term = env.get("TERM") or job_env.get("TERM")
    if term:
        job_env["TERM"] = term
    else:  # 8.1.9 (peer): with no TERM in qrsh's environment the job's env_list is empty
        job_env.pop("TERM", None)
    job_env["QRSH_PORT"] = port
    if command:
        job_env["QRSH_COMMAND"] = "\xff".join(command)  # 8.1.9's separator of the words
    req["env"] = job_env
    req["interactive"] = {"kind": kind, "login": login, "pty": login if pty is None else bool(pty),
                          "port": port, "token": token}
    req["nostdin"] = bool(own.get("-nostdin"))
    return req


def _read_file(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupted(signum)


def run_interactive(kind: str, argv: list[str]) -> int:
    """qrsh (``kind`` "qrsh") or qlogin: submit, wait, relay; the command's exit status."""
    who = Submitter()
    env, user, home, cell, cwd, hostname = who.env, who.user, who.home, who.cell, who.cwd, who.hostname
    listener = socket.create_server(("", 0), family=socket.AF_INET)
    token = secrets.token_hex(16)
    try:
        req = interactive_request(kind, argv, env, cwd=cwd, home=home, user=user, hostname=hostname,
                                  cell_root=cell.path, port=f"{hostname}:{listener.getsockname()[1]}", token=token)
    except submit_options.SubmitError as e:
        listener.close()
        for w in e.warnings:
            sys.stdout.write(w + "\n")
        sys.stderr.write(e.message + "\n")
        return e.exit_code
    nostdin = bool(req.pop("nostdin", False))
    for w in req.pop("warnings", None) or ():
        sys.stdout.write(w + "\n")
    if req.get("verify"):  # shown as 8.1.9 shows it (as qsub -verify), nothing is sent
        listener.close()
        view = output.submit_verify.verify_view(req)
        view["env_list"] = [(k, v) for k, v in view["env_list"] if k == "TERM"]  # QRSH_* come with the job
        view["restart"] = False
        view["job_type"] = ["binary", "immediate"] if req.get("now") else ["binary"]
        sys.stdout.write(output.job_detail_out.format_job_detail(view).split("\n", 1)[1])
        return 0
    for k in ("verify", "sync", "sync_start", "terse"):
        req.pop(k, None)
    session = Waiting(kind, req, listener, token, cell, nostdin)
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        return session.run()
    except Interrupted as e:
        return session.interrupted(e.signum)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        session.close()


class Waiting:
    """One interactive job from its submission to its end, as qrsh sees it."""

    def __init__(self, kind: str, req: dict[str, Any], listener: socket.socket, token: str, cell: Cell,
                 nostdin: bool):
        self.kind = kind
        self.req = req
        self.listener = listener
        self.token = token
        self.cell = cell
        self.nostdin = nostdin
        self.job_id: int | None = None
        self.replies: queue.Queue[dict[str, Any] | BaseException | None] = queue.Queue()
        self.wake_r, self.wake_w = os.pipe()
        self.qmaster: protocol.ClientSocket | None = None
        self.conn: socket.socket | None = None
        self.saved_tty: list[Any] | None = None
        self.reader = stream.FrameReader()  # of the shepherd's connection
        self.early: list[tuple[bytes, bytes]] = []  # frames that came with the token

    # ------------------------------------------------------------ submission
    def run(self) -> int:
        try:
            self.qmaster = connect(self.cell, timeout=None)
        except NoQmaster as e:
            sys.stderr.write(f"{e}\n")
            return 1
        threading.Thread(target=self._read_replies, daemon=True).start()
        first = self._next_reply()
        if isinstance(first, BaseException) or first is None:
            return self._lost(first)
        if not first.get("ok"):
            rc = int(first.get("rc", 1))
            sys.stderr.write(str(first.get("error", "Unable to run job.")) + "\n")
            return rc
        self.job_id = int(first["job_id"])
        if self.kind == "qlogin":
            sys.stdout.write(submit_options.submitted_message(self.job_id, first["name"], None, False) + "\n")
            sys.stdout.flush()
            sys.stderr.write("waiting for interactive job to be scheduled ...\n")
            sys.stderr.flush()
        return self._wait_for_shepherd()

    def _read_replies(self) -> None:
        assert self.qmaster is not None
        try:
            for reply in protocol.iter_replies(self.qmaster, {"op": operations.SUBMIT, "request": self.req,
                                                              "sync": True}):
                self.replies.put(reply)
                os.write(self.wake_w, b"r")
        except (OSError, protocol.ProtocolError) as e:
            self.replies.put(e)
        else:
            self.replies.put(None)
        try:
            os.write(self.wake_w, b"r")
        except OSError:
            pass

    def _next_reply(self) -> dict[str, Any] | BaseException | None:
        while True:
            try:
                return self.replies.get(timeout=0.5)
            except queue.Empty:
                continue

    def _lost(self, why: BaseException | None) -> int:
        if why is not None:
            sys.stderr.write(comm_failure(why, self.cell) + "\n")
        return 1

    def _wait_for_shepherd(self) -> int:
        """Until the job's shepherd connects (or the job cannot start).  A
        connection waiting is taken before the replies: a command that ran
        while qrsh had no CPU (a busy host) connected, wrote its output and
        its exit status into the connection and ended before qrsh looked,
        so that its end came too; it did start, and its output is there."""
        while True:
            ready, _, _ = select.select([self.listener.fileno(), self.wake_r], [], [])
            if self.listener.fileno() in ready:
                host = self._accept()
                if host is not None:
                    if self.kind == "qlogin":
                        sys.stderr.write(f"Your interactive job {self.job_id} has been successfully scheduled.\n"
                                         f"Establishing builtin session to host {host} ...\n")
                        sys.stderr.flush()
                    return self._relay()
            if self.wake_r in ready:
                os.read(self.wake_r, 64)
                while not self.replies.empty():
                    reply = self.replies.get()
                    if isinstance(reply, BaseException) or reply is None:
                        return self._lost(reply if isinstance(reply, BaseException) else None)
                    if reply.get("scheduled") is False:  # -now y: its one pass did not start it
                        self.job_id = None
                        sys.stderr.write(f'Your "{self.kind}" request could not be scheduled, try again later.\n')
                        return 1
                    if protocol.is_final(reply) and "tasks" in reply:  # it ended without connecting
                        self.job_id = None
                        sys.stderr.write("\nCould not start interactive job.\n")
                        return 1

    def _accept(self) -> str | None:
        """A connection that says the job's token: the shepherd's host; else None."""
        conn, _ = self.listener.accept()
        conn.settimeout(ACCEPT_TIMEOUT)
        reader = stream.FrameReader()
        try:
            frames: list[tuple[bytes, bytes]] = []
            while not frames:
                data = conn.recv(4096)
                if not data:
                    raise OSError("closed")
                frames = reader.feed(data)
        except (OSError, stream.StreamError):
            conn.close()
            return None
        kind, payload = frames[0]
        token, _, host = payload.decode(errors="replace").partition(" ")
        if kind != stream.TOKEN or not hmac.compare_digest(token, self.token):
            conn.close()
            return None
        conn.settimeout(None)
        self.conn = conn
        self.reader = reader
        self.early = frames[1:]
        return host or "?"

    # ------------------------------------------------------------ the session
    def _relay(self) -> int:
        conn = self.conn
        assert conn is not None
        use_pty = bool(self.req["interactive"]["pty"])
        stdin_open = not self.nostdin
        if self.nostdin:
            conn.sendall(stream.frame(stream.STDIN_EOF))
        if use_pty and os.isatty(0):
            self.saved_tty = termios.tcgetattr(0)
            tty.setraw(0)
            self._send_winsize()
            signal.signal(signal.SIGWINCH, lambda s, f: self._send_winsize())
        pending = list(self.early)
        while True:
            for kind, payload in pending:
                if kind == stream.STDOUT:
                    _write_all(1, payload)
                elif kind == stream.STDERR:
                    _write_all(2, payload)
                elif kind == stream.EXIT:
                    self.job_id = None  # ended: nothing to delete
                    try:
                        return int(payload.decode() or "1") & 0xFF
                    except ValueError:
                        return 1
            pending = []
            reads = [conn] + ([0] if stdin_open else [])
            try:
                ready, _, _ = select.select(reads, [], [])
            except InterruptedError:
                continue
            if 0 in ready:
                try:
                    data = os.read(0, 65536)
                except OSError:
                    data = b""
                if data:
                    conn.sendall(stream.frame(stream.STDIN, data))
                else:
                    stdin_open = False
                    conn.sendall(stream.frame(stream.STDIN_EOF))
            if conn in ready:
                try:
                    data = conn.recv(65536)
                    pending = self.reader.feed(data) if data else []
                except (OSError, stream.StreamError):
                    data = b""
                if not data:
                    self._restore_tty()
                    sys.stderr.write("error: ending connection before all data received\n")
                    return 1

    def _send_winsize(self) -> None:
        if self.conn is None:
            return
        try:
            size = os.get_terminal_size(0)
            self.conn.sendall(stream.frame(stream.WINSIZE, f"{size.lines} {size.columns}".encode()))
        except OSError:
            pass

    def _restore_tty(self) -> None:
        if self.saved_tty is not None:
            try:
                termios.tcsetattr(0, termios.TCSADRAIN, self.saved_tty)
            except termios.error:
                pass
            self.saved_tty = None

    # ------------------------------------------------------------ the end
    def interrupted(self, signum: int) -> int:
        """SIGINT/SIGTERM/SIGHUP: a job still waiting is deleted; a running
        one is killed by its shepherd when the connection ends (close)."""
        self._restore_tty()
        if self.conn is None and self.job_id is not None:
            sys.stderr.write("\nRequest for interactive job has been canceled.\n")
            try:
                call({"op": operations.QDEL, "targets": [str(self.job_id)]}, self.cell)
            except (NoQmaster, OSError, protocol.ProtocolError):
                pass
        return 128 + signum

    def close(self) -> None:
        self._restore_tty()
        for s in (self.conn, self.listener, self.qmaster):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        for fd in (self.wake_r, self.wake_w):
            try:
                os.close(fd)
            except OSError:
                pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                select.select([], [fd], [])
                continue
            raise
        view = view[n:]


if __name__ == "__main__":
    sys.exit(main())
