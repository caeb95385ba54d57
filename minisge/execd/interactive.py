"""The shepherd's side of an interactive job (qrsh, qrsh's login form, qlogin).

The job's request carries ``interactive`` (qrsh(1): the command's kind, the
``host:port`` qrsh listens on, its token, -pty): the shepherd connects to
qrsh there (8.1.9's builtin mode, :mod:`minisge.protocol.interactive_stream`)
and, instead of opening the job's output files, runs the job on pipes or
on a pseudo terminal whose other ends it relays over that connection, in
the shepherd process itself, until the job has ended; then it sends the
job's exit status, which becomes qrsh's.

What the job runs (:func:`job_argv`): qrsh's command through the owner's
login shell (``<loginshell> -c "command args"``, qrsh(1)), or the command
itself with -noshell; the login form and qlogin a login shell
(``-bash``) in the owner's home directory.

Everything here runs in the forked shepherd (blocking calls, no trio).
A qrsh that goes away (its connection ends without the job's end) has the
job killed, as 8.1.9's shepherd does when it loses its qrsh.
"""

from __future__ import annotations

import errno
import fcntl
import os
import resource
import select
import signal
import socket
import struct
import termios
import time
from collections.abc import Mapping
from typing import Any

from minisge.formats import interactive_stream as stream

QRSH_COMMAND_SEPARATOR = "\xff"  # between the words of QRSH_COMMAND (8.1.9's)
CONNECT_TIMEOUT = 30.0  # seconds to reach qrsh's port
DRAIN_AFTER_EXIT = 2.0  # seconds the output of a job's leftover children is still relayed after its end


class NoConnection(Exception):
    """qrsh could not be reached: the job does not start."""


def job_argv(cfg: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(the path to exec, the argv) of an interactive job."""
    conf = cfg.get("interactive") or {}
    shell = cfg.get("login_shell") or "/bin/sh"
    if conf.get("login"):  # a login shell: argv[0] "-name" (login(1))
        return shell, ["-" + os.path.basename(shell)]
    words = str((cfg.get("env") or {}).get("QRSH_COMMAND") or "")  # qrsh's words, as 8.1.9 passes them
    command = words.split(QRSH_COMMAND_SEPARATOR) if words else [str(cfg.get("command") or "")]
    if cfg.get("noshell"):
        return command[0], command
    return shell, [shell, "-c", " ".join(command)]


class Session:
    """One connection to qrsh and the ends of the job's stdin/stdout/stderr."""

    def __init__(self, sock: socket.socket, use_pty: bool):
        self.sock: socket.socket | None = sock
        self.use_pty = use_pty
        self.child_ends: list[int] = []
        self.stdin_fd: int | None = None  # where qrsh's input goes
        self.outputs: dict[int, bytes] = {}  # fd -> the frame kind its data goes out as
        self.stdin_buf = b""
        self.stdin_eof = False
        self.killed = False

    @classmethod
    def connect(cls, conf: Mapping[str, Any], host: str) -> Session:
        """Connect to qrsh (``conf``: the job's ``interactive``) and say the
        token, and ``host``, the execution host qrsh names."""
        address = stream.parse_port(str(conf.get("port") or ""))
        if address is None:
            raise NoConnection(f'bad QRSH_PORT "{conf.get("port")}"')
        try:
            sock = socket.create_connection(address, timeout=CONNECT_TIMEOUT)
            sock.settimeout(None)
            sock.sendall(stream.frame(stream.TOKEN, f'{conf.get("token") or ""} {host}'.encode()))
        except OSError as e:
            raise NoConnection(f'cannot get connection to "qrsh" at host "{address[0]}": '
                               f"{e.strerror or e}") from e
        return cls(sock, bool(conf.get("pty")))

    def child_fds(self) -> tuple[int, int, int]:
        """The job's stdin, stdout and stderr: the slave of a new pty, or three pipes."""
        if self.use_pty:
            master, slave = os.openpty()
            self.stdin_fd = master
            self.outputs = {master: stream.STDOUT}
            self.child_ends = [slave]
            return slave, slave, slave
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.stdin_fd = in_w
        self.outputs = {out_r: stream.STDOUT, err_r: stream.STDERR}
        self.child_ends = [in_r, out_w, err_w]
        return in_r, out_w, err_w

    # ------------------------------------------------------------ the relay
    def relay(self, pid: int, errpipe: int) -> tuple[int, resource.struct_rusage, str]:
        """Relay until the job ended and its output is out: (wait status,
        rusage, setup error text), as :meth:`minisge.execd.shepherd.Shepherd.spawn`."""
        for fd in self.child_ends:
            os.close(fd)
        self.child_ends = []
        err = b""
        reader = stream.FrameReader()
        status: int | None = None
        usage: resource.struct_rusage | None = None
        ended_at = 0.0
        open_errpipe: int | None = errpipe
        while True:
            if status is None:
                try:
                    wpid, st, ru = os.wait4(pid, os.WNOHANG)
                except ChildProcessError:
                    wpid, st, ru = pid, 0, resource.getrusage(resource.RUSAGE_CHILDREN)
                if wpid:
                    status, usage, ended_at = st, ru, time.monotonic()
            if status is not None and open_errpipe is None and (
                    not self.outputs or time.monotonic() - ended_at > DRAIN_AFTER_EXIT):
                break
            reads = list(self.outputs)
            if open_errpipe is not None:
                reads.append(open_errpipe)
            if self.sock is not None:
                reads.append(self.sock.fileno())
            writes = [self.stdin_fd] if self.stdin_fd is not None and self.stdin_buf else []
            try:
                ready_r, ready_w, _ = select.select(reads, writes, [], 0.2)
            except InterruptedError:
                continue
            if ready_w:
                self._write_stdin()
            for fd in ready_r:
                if fd == open_errpipe:
                    chunk = os.read(fd, 1024)
                    if chunk:
                        err += chunk
                    else:
                        os.close(fd)
                        open_errpipe = None
                elif self.sock is not None and fd == self.sock.fileno():
                    self._from_qrsh(reader, pid)
                elif fd in self.outputs:
                    self._from_job(fd)
        for fd in list(self.outputs):
            os.close(fd)
        self.outputs = {}
        if self.stdin_fd is not None and not self.use_pty:
            os.close(self.stdin_fd)
        self.stdin_fd = None
        assert status is not None and usage is not None
        return status, usage, err.decode(errors="replace")

    def _from_job(self, fd: int) -> None:
        try:
            data = os.read(fd, 65536)
        except OSError as e:  # EIO: the pty's last slave end is closed
            if e.errno != errno.EIO:
                raise
            data = b""
        if not data:
            del self.outputs[fd]
            os.close(fd)
            if fd == self.stdin_fd:  # the pty's master: its input side is gone too
                self.stdin_fd = None
            return
        self._send(stream.frame(self.outputs[fd], data))

    def _from_qrsh(self, reader: stream.FrameReader, pid: int) -> None:
        assert self.sock is not None
        try:
            data = self.sock.recv(65536)
            frames = reader.feed(data) if data else []
        except (OSError, stream.StreamError):
            data, frames = b"", []
        if not data:  # qrsh is gone: so is its job
            self._lost(pid)
            return
        for kind, payload in frames:
            if kind == stream.STDIN:
                self.stdin_buf += payload
                self._write_stdin()
            elif kind == stream.STDIN_EOF:
                self.stdin_eof = True
                if self.use_pty:  # the end of input on a terminal: its EOF character
                    self.stdin_buf += b"\x04"
                self._write_stdin()
            elif kind == stream.WINSIZE and self.use_pty and self.stdin_fd is not None:
                set_window_size(self.stdin_fd, payload)

    def _write_stdin(self) -> None:
        fd = self.stdin_fd
        if fd is None:
            self.stdin_buf = b""
            return
        try:
            if self.stdin_buf:
                os.set_blocking(fd, False)
                n = os.write(fd, self.stdin_buf)
                self.stdin_buf = self.stdin_buf[n:]
        except BlockingIOError:
            return
        except OSError:  # the job closed its stdin
            self.stdin_buf = b""
            if not self.use_pty:
                os.close(fd)
                self.stdin_fd = None
            return
        if self.stdin_eof and not self.stdin_buf and not self.use_pty:
            os.close(fd)
            self.stdin_fd = None

    def _send(self, data: bytes) -> None:
        if self.sock is None:
            return
        try:
            self.sock.sendall(data)
        except OSError:
            self.sock.close()
            self.sock = None

    def _lost(self, pid: int) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if not self.killed:
            self.killed = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def finish(self, exit_status: int) -> None:
        """Tell qrsh the job's exit status and close the connection."""
        self._send(stream.frame(stream.EXIT, str(exit_status).encode()))
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
            self.sock = None


def set_window_size(fd: int, payload: bytes) -> None:
    """TIOCSWINSZ from a ``rows cols`` frame; nonsense is ignored."""
    try:
        rows, cols = (int(x) for x in payload.split())
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    except (ValueError, OSError, struct.error):
        pass
