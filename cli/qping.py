"""qping: is a daemon of the cell up, and how is it doing (qping(1)).

``qping [-i interval] [-info] [-f] [-noalias] [-tcp] host port name id``:
without -info, a line each interval (1 s) while the endpoint is up, until
qping is killed; -info prints the status once and exits; -f prints it at
every interval.  8.1.9 speaks commlib to the daemon itself; minisge's
daemons speak no commlib, so qping asks the qmaster (``qping`` of the
protocol catalogue, :mod:`minisge.qmaster.ping`), which answers for itself
and for the execds linked to it.  The lines keep 8.1.9's shapes; the
status's values are minisge's (see qping(1)).  The traffic dumps
(-dump, -dump_tag, -nonewline) and -ssl have no meaning without commlib:
refused.

Standard library and minisge.protocol only.
"""

from __future__ import annotations

import socket
import sys
import time

from minisge import protocol
from minisge.protocol import operations
from minisge.protocol.client import NoQmaster, call, comm_failure

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USAGE = """\
SGE 8.1.9
usage: qping [-help] [-noalias] [-ssl|-tcp] [ [ [-i <interval>] [-info] [-f] ] | [ [-dump_tag tag [param] ] [-dump] [-nonewline] ] ] <host> <port> <name> <id>
   -i         : set ping interval time
   -info      : show full status information and exit
   -f         : show full status information on each ping interval
   -noalias   : ignore $SGE_ROOT/SGE_CELL/common/host_aliases file
   -ssl       : use SSL framework
   -tcp       : use TCP framework
   -dump      : dump communication traffic (see "communication traffic output options" for additional information)
                   (provides the same output like -dump_tag MSG)
   -dump_tag  : dump communication traffic (see "communication traffic output options" for additional information)
                   tag=MSG               - show protocol messages like -dump
                   <debug level>         - ERROR, WARNING, INFO, DEBUG or DPRINTF
   -nonewline : dump output will not have a linebreak within a message
   -help      : show this info
   host       : host name of running component
   port       : port number of running component
   name       : name of running component (e.g.: "qmaster" or "execd")
   id         : id of running component (e.g.: 1 for daemons)

example:
   qping -info clustermaster 5000 qmaster 1

communication traffic output options:
   The environment variable SGE_QPING_OUTPUT_FORMAT can be used to hide columns and
   to set default column width. For hostname output the parameter hn is used.
   SGE_QPING_OUTPUT_FORMAT="h:1 h:4 w:1:20"
   will hide the columns 1 and 4 and set the width of column 1 to 20 characters.
       h:X   -> hide column X
       s:X   -> show column X
       w:X:Y -> set width of column X to Y
       hn:X  -> set hostname output parameter X. X values are "long" or "short"

   available columns are:

   nr active name      description
   == ====== ====      ===========
   01 yes    time      time of debug output creation
   02 yes    local     endpoint service name where debug client is connected
   03 yes    d.        message direction
   04 yes    remote    name of participating communication endpoint
   05 yes    format    message data format
   06 yes    ack type  message acknowledge type
   07 yes    msg tag   message tag information
   08 yes    msg id    message id
   09 yes    msg rid   message response id
   10 yes    msg len   message length
   11 yes    msg time  time when message was sent/received
   12  no    msg dump  message content dump (xml/bin/cull)
   13  no    info      additional information
   14 yes    msg ltime commlib linger time
   15 yes    con count number of connections
"""  # noqa: E501 - Grid Engine 8.1.9's help text, as it is
NO_ARGUMENT = "ERROR! no option argument\n"
NOT_SUPPORTED = "error: qping {} is not supported by minisge: its daemons speak no commlib\n"
_REFUSED = ("got select error: Connection refused\n", 'got select error: closing "{ep}"\n')


def stamp(t: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(t))


def info_block(reply: dict[str, Any], now: float) -> str:
    """The status as 8.1.9's ``qping -info`` prints it (SIRM lines)."""
    start = float(reply.get("start_time") or 0)
    return (f"{stamp(now)}:\n"
            "SIRM version:             0.1\n"
            "SIRM message id:          1\n"
            f"start time:               {stamp(start)} ({int(start)})\n"
            f"run time [s]:             {int(now - start)}\n"
            "messages in read buffer:  0\n"
            "messages in write buffer: 0\n"
            f"no. of connected clients: {reply.get('clients', 0)}\n"
            "status:                   0\n"
            f"info:                     {reply.get('info', '')}\n"
            "Monitor:                  disabled\n\n\n")


def parse(argv: list[str]) -> tuple[dict[str, Any] | None, str, int]:
    """(the options, what to print on stderr, rc) of qping's words."""
    opts: dict[str, Any] = {"interval": 1.0, "info": False, "full": False}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            return None, "", -1
        if a == "-info":
            opts["info"] = True
        elif a == "-f":
            opts["full"] = True
        elif a in ("-noalias", "-tcp"):  # minisge has no host_aliases file; TCP is all it knows
            pass
        elif a == "-i":
            i += 1
            try:
                opts["interval"] = max(1.0, float(argv[i]))
            except (IndexError, ValueError):
                return None, USAGE + NO_ARGUMENT, 1
        elif a in ("-ssl", "-dump", "-dump_tag", "-nonewline"):
            return None, NOT_SUPPORTED.format(a), 1
        elif a.startswith("-") and len(rest) < 4:
            return None, USAGE + NO_ARGUMENT, 1
        else:
            rest.append(a)
        i += 1
    if len(rest) != 4:
        return None, USAGE + NO_ARGUMENT, 1
    opts.update(host=rest[0], port=rest[1], name=rest[2], id=rest[3])
    return opts, "", 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts, err, rc = parse(argv)
    if opts is None:
        if rc == -1:
            sys.stdout.write(USAGE)
            return 0
        sys.stderr.write(err)
        return rc
    port = int(opts["port"]) if str(opts["port"]).isdigit() and 0 < int(opts["port"]) < 65536 else 0
    ident = int(opts["id"]) if str(opts["id"]).isdigit() else 0
    endpoint = f"{opts['host']}/{opts['name']}/{ident}"
    if not port:
        sys.stdout.write(f"endpoint {endpoint} at port 0: no valid port number\n")
        return 1
    request = {"op": operations.QPING, "host": opts["host"], "port": port, "name": opts["name"], "id": ident}
    while True:
        try:
            reply = call(request)
        except NoQmaster as e:
            sys.stderr.write(f"{e}\n")
            return 1
        except (OSError, protocol.ProtocolError) as e:
            sys.stderr.write(comm_failure(e) + "\n")
            return 1
        if not reply.get("ok"):
            sys.stderr.write(str(reply.get("error", "")) + "\n")
            return 1
        state = reply["state"]
        if state != "up":
            return _failed(state, reply, endpoint, opts["host"], port)
        now = float(reply["now"])
        if opts["info"] or opts["full"]:
            sys.stdout.write(info_block(reply, now))
        else:
            up = int(now - float(reply.get("start_time") or now))
            sys.stdout.write(f"{stamp(now)} endpoint {endpoint} at port {port} is up for {up} seconds\n")
        sys.stdout.flush()
        if opts["info"]:
            return 0
        time.sleep(opts["interval"])


def _failed(state: str, reply: dict[str, Any], endpoint: str, host: str, port: int) -> int:
    """8.1.9's words when the endpoint is not there."""
    if state == "unknown":
        try:
            socket.getaddrinfo(host.encode("ascii", "replace"), None)  # bytes: no idna codec needed
        except OSError:
            sys.stderr.write(f"could not resolve hostname {host}\n")
            return 1
        state = "refused"
    if state == "denied":
        sys.stderr.write(f'access denied: local endpoint "{reply.get("local")}" doesn\'t match requested '
                         f'endpoint "{endpoint}"\n')
        sys.stdout.write(f"endpoint {endpoint} at port {port}: can't find connection\n")
        return 1
    sys.stderr.write(_REFUSED[0] + _REFUSED[1].format(ep=endpoint))
    sys.stdout.write(f"endpoint {endpoint} at port {port}: got send error\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
