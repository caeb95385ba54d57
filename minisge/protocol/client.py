"""What every command does to reach its cell: find it, connect, ask.

Standard library and :mod:`minisge.protocol` only.  A command talks to the
qmaster's Unix socket; where none is on this host (a host that runs only an
execd) it goes through the local execd's socket, which relays it.
"""

from __future__ import annotations

import sys

from minisge import protocol
from minisge.cell import Cell, join_path, short_hostname

TYPE_CHECKING = False  # not typing's: see minisge.protocol.wire
if TYPE_CHECKING:
    from minisge.protocol.wire import Message


class NoQmaster(Exception):
    """No daemon of the cell answers on this host: ``str()`` is the whole
    text a command prints (:meth:`Unreachable.report` prints it the way a
    given command of 8.1.9 does)."""

    def __init__(self, cell: Cell, host: str, port: int) -> None:
        self.cell, self.host, self.port = cell, host, port
        super().__init__(f"{self.hint}\n{COMMLIB_REFUSED}\n{self.send_error}")

    @property
    def hint(self) -> str:
        """minisge's own first line: where the cell is, what to run."""
        return f"minisge: no cell running in {self.cell.path}: run 'minisge start'"

    @property
    def send_error(self) -> str:
        return f'unable to send message to qmaster using port {self.port} on host "{self.host}": got send error'


#: 8.1.9's first line when no qmaster listens
COMMLIB_REFUSED = "error: commlib error: got select error (Connection refused)"


class Unreachable:
    """How a command of 8.1.9 says that no qmaster answers (measured on the
    peer with a port nobody listens on): commlib's line on stderr, then
    "unable to send message ..." with a prefix and a suffix of the command's,
    on stderr or stdout, and an exit status.  minisge puts its hint
    (:attr:`NoQmaster.hint`) first, on stderr.  A plain class: the commands
    load no typing."""

    __slots__ = ("prefix", "suffix", "on_stdout", "rc")

    def __init__(self, prefix: str = "", suffix: str = "", on_stdout: bool = False, rc: int = 1) -> None:
        self.prefix, self.suffix, self.on_stdout, self.rc = prefix, suffix, on_stdout, rc

    def report(self, err: NoQmaster) -> int:
        """Print ``err`` as this command does; the exit status."""
        sys.stderr.write(f"{err.hint}\n{COMMLIB_REFUSED}\n")
        sys.stderr.flush()
        (sys.stdout if self.on_stdout else sys.stderr).write(f"{self.prefix}{err.send_error}{self.suffix}\n")
        return self.rc


#: qconf (and the default): both lines on stderr, exit 1
SAYS_QCONF = Unreachable()
#: qstat, qhost, qselect, qquota: "error: unable to send ...", exit 1
SAYS_LISTING = Unreachable(prefix="error: ")
#: qsub: "Unable to run job: unable to send ... got send error" and "Exiting."
SAYS_QSUB = Unreachable(prefix="Unable to run job: ", suffix="\nExiting.")
#: qdel, qmod, qalter: the second line on stdout, exit 1
SAYS_CHANGE = Unreachable(on_stdout=True)
#: qhold, qrls, qresub: the second line on stdout, exit 11
SAYS_HOLD = Unreachable(on_stdout=True, rc=11)


def connect(cell: Cell | None = None, timeout: float | None = 30.0) -> protocol.ClientSocket:
    cell = cell or Cell.from_env()
    for path in (cell.socket_path, join_path(cell.execd_spool(_host()), "execd.sock")):
        try:
            return protocol.connect_unix(path, timeout)
        except (FileNotFoundError, ConnectionRefusedError):
            continue
        except OSError:
            continue
    host, port = qmaster_address(cell)
    raise NoQmaster(cell, host, port)


def _host() -> str:
    return short_hostname()


def qmaster_address(cell: Cell) -> tuple[str, int]:
    """The qmaster's host and port as a command names them in its errors
    (``SGE_QMASTER_PORT``, else the cell's settings.sh, else 6444)."""
    try:
        port = cell.qmaster_port()
    except (ValueError, OSError):
        port = 6444
    try:
        host = cell.act_qmaster()
    except (OSError, UnicodeDecodeError):
        host = ""
    return host or _host(), port


def comm_failure(err: BaseException, cell: Cell | None = None) -> str:
    """What a command prints when its connection to the qmaster fails in the
    middle of a request, in Grid Engine 8.1.9's commlib words (measured: the
    qmaster gone while ``qsub -sync y`` waits, a connection reset, a send into
    a closed connection, no answer in time); a broken frame is said as it is."""
    host, port = qmaster_address(cell or Cell.from_env())
    if isinstance(err, protocol.ConnectionClosed):
        return f'error: commlib error: got read error (closing "{host}/qmaster/1")'
    if isinstance(err, ConnectionResetError):
        return "error: commlib error: got select error (Connection reset by peer)"
    if isinstance(err, BrokenPipeError):
        return f'error: unable to send message to qmaster using port {port} on host "{host}": got send error'
    if isinstance(err, TimeoutError):
        return (f'error: unable to send message to qmaster using port {port} on host "{host}": '
                "got message acknowledge error")
    if isinstance(err, OSError):
        return f"error: commlib error: got select error ({err.strerror or err})"
    return f"error: {err}"


def call(msg: Message, cell: Cell | None = None, timeout: float | None = 30.0,
         unreachable: Unreachable = SAYS_QCONF) -> Message:
    """One request, one reply; exits like Grid Engine when the qmaster is not
    there (as ``unreachable`` says, minisge's hint first) or the connection
    fails before the reply (a message, exit status 1)."""
    try:
        sock = connect(cell, timeout)
    except NoQmaster as e:
        sys.exit(unreachable.report(e))
    try:
        return protocol.request(sock, msg)
    except (OSError, protocol.ProtocolError) as e:
        sys.stderr.write(comm_failure(e, cell) + "\n")
        sys.exit(1)
    finally:
        sock.close()


def refused(reply: Message) -> int | None:
    """A reply that says no: its error printed to stderr, its exit status
    returned; None for a reply that says yes (the caller prints it)."""
    if reply.get("ok"):
        return None
    sys.stderr.write(reply.get("error", "") + "\n")
    return int(reply.get("rc", 1))


def print_lines(reply: Message) -> int:
    """What most commands print of a reply: its error, or its lines on stdout;
    the exit status the qmaster gave."""
    rc = refused(reply)
    if rc is not None:
        return rc
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    return int(reply["rc"])
