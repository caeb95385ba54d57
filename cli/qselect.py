"""qselect: print the queue instances that match the options (Grid Engine 8.1 qselect(1)).

``qselect [-help] [-l resource_list] [-pe pe_list] [-q wc_queue_list]
[-qs {a|c|d|o|s|u|A|C|D|E|S}] [-U user_list]``

One queue instance a line (``all.q@vm``), in cluster queue then host
order, for scripts such as ``qmod -d $(qselect -l arch=lx-amd64)``.  The
qmaster selects (op ``qselect``, :func:`minisge.qmaster.host_views.qselect`);
the exit status is 1 when nothing was selected, as 8.1.9's.  Standard
library and the client only.
"""

from __future__ import annotations

import sys

from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: qstat_usage in qselect mode: on stdout for -help, on stderr before a bad option
USAGE = """SGE 8.1.9
usage: qselect [options]
        [-help]                           print this help
        [-l resource_list]                request the given resources
        [-pe pe_list]                     select only queues with one of these parallel environments
        [-q wc_queue_list]                print information on given queue
        [-qs {a|c|d|o|s|u|A|C|D|E|S}]     selects queues which are in the given state(s)
        [-U user_list]                    select only queues where these users have access

pe_list                  pe[,pe,...]
job_identifier_list      [job_id|job_name|pattern]{, [job_id|job_name|pattern]}
resource_list            resource[=value][,resource[=value],...]
user_list                user|*|@group[,user|*|@group],...]
resource_attributes      resource,resource,...
wc_cqueue                wildcard expression matching a cluster queue
wc_host                  wildcard expression matching a host
wc_hostgroup             wildcard expression matching a hostgroup
wc_qinstance             wc_cqueue@wc_host
wc_qdomain               wc_cqueue@wc_hostgroup
wc_queue_list            wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list            wc_queue[,wc_queue,...]
"""

#: option -> key of the request; each takes the next word (a comma list)
WITH_ARG = {"-l": "requests", "-pe": "pes", "-q": "queues", "-qs": "states", "-U": "users"}
QUEUE_STATES = "acdosuACDES"


class CommandLineError(Exception):
    """A command line qselect refuses: the text, and whether the usage comes first."""

    def __init__(self, text: str, usage: bool = False):
        super().__init__(text)
        self.text = text
        self.usage = usage


def parse_args(argv: list[str]) -> dict[str, Any]:
    """qselect's command line: ``{"help": bool, key: value}`` with the keys of :data:`WITH_ARG`."""
    opts: dict[str, Any] = {"help": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            opts["help"] = True
        elif a in WITH_ARG:
            if i + 1 >= len(argv):
                raise CommandLineError(f"{a} option must have argument")
            i += 1
            value = argv[i]
            key = WITH_ARG[a]
            if key == "states":
                for letter in value:
                    if letter not in QUEUE_STATES:
                        raise CommandLineError(f"error: unknown queue state: {letter} found in string: {value}\n"
                                               f"unknown queue state: {letter} found in string: {value}")
                opts["states"] = opts.get("states", "") + value
            elif key == "requests":
                opts.setdefault("requests", []).append(value)
            else:
                opts.setdefault(key, []).extend(w for w in value.split(",") if w)
        else:
            raise CommandLineError(f'invalid option argument "{a}"', usage=True)
        i += 1
    return opts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
    except CommandLineError as err:
        sys.stderr.write((USAGE if err.usage else "") + err.text + "\n")
        return 1
    if opts.pop("help"):
        sys.stdout.write(USAGE)
        return 0
    reply = call({"op": operations.QSELECT, **opts}, unreachable=SAYS_LISTING)
    if not reply.get("ok"):
        sys.stderr.write(str(reply.get("error", "")) + "\n")
        return int(reply.get("rc", 1))
    queues = reply.get("queues") or []
    sys.stdout.write("".join(f"{q}\n" for q in queues))
    return 0 if queues else 1


if __name__ == "__main__":
    sys.exit(main())
