"""qhost: show the execution hosts, their load, queues and jobs (Grid Engine 8.1 qhost(1)).

``qhost [-F [resource,...]] [-h hostlist] [-help] [-j] [-l attr=val,...]
[-ncb] [-q] [-u user,...] [-xml] [-fmt plain|json|xml]``

The qmaster sends the hosts as plain dicts (op ``qhost``, see
:mod:`minisge.qmaster.host_views`); :mod:`minisge.output.qhost_out` prints
them.  Standard library, the client and the output module only.
"""

from __future__ import annotations

import sys

from minisge.output import json_views, qhost_out
from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: qhost_usage, on stdout for -help, on stderr before a command line error
USAGE_8_1_9 = """SGE 8.1.9
usage: qhost [options]
  [-F [resource_attribute]]  show (selected) resources
  [-h hostlist]              display only selected hosts
  [-help]                    print this help
  [-j]                       display jobs hosted by host
  [-l attr=val,...]          request the given resources
  [-ncb]                     suppress host topology based information
  [-q]                       display queues hosted by host
  [-u user[,user,...]]       show only jobs for user
  [-xml]                     display the information in XML format
"""

#: -fmt (Open Cluster Scheduler 9's spelling and words), before -F as there.
FMT_USAGE = "  [-fmt plain|json|xml]      specifies the display output format\n"
USAGE = USAGE_8_1_9.replace("  [-F ", FMT_USAGE + "  [-F ", 1)
FORMATS = ("plain", "json", "xml")

FLAGS = ("-help", "-ncb", "-q", "-j", "-xml", "-json")
WITH_ARGS = ("-h", "-l", "-u")  # one word or more up to the next option


class CommandLineError(Exception):
    """A command line qhost refuses: the text, and whether the usage comes first."""

    def __init__(self, text: str, usage: bool = False):
        super().__init__(text)
        self.text = text
        self.usage = usage


class Args:
    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.resources: list[str] | None = None  # -F [names]
        self.hosts: list[str] | None = None
        self.requests: list[str] | None = None
        self.users: list[str] | None = None
        self.fmt = "plain"  # -fmt plain|json|xml, -xml, -json: the last one counts


def _words(text: str) -> list[str]:
    return [w for w in text.split(",") if w]


def parse_args(argv: list[str]) -> Args:
    """qhost's command line (sge_parse_cmdline_qhost): -F takes the words up
    to the next option, maybe none; -h, -l and -u at least one."""
    args = Args()
    i = 0
    while i < len(argv):
        a = argv[i]
        following = []
        while i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            following.append(argv[i + 1])
            i += 1
        if a in ("-xml", "-json") and not following:
            args.fmt = a[1:]
        elif a in FLAGS and not following:
            args.flags.add(a)
        elif a == "-fmt":
            if len(following) != 1:
                raise CommandLineError("error: -fmt option must have argument" if not following
                                       else f'error: invalid option argument "{following[1]}"',
                                       usage=bool(following))
            if following[0] not in FORMATS:
                raise CommandLineError(f'error: invalid option argument "{following[0]}"', usage=True)
            args.fmt = following[0]
        elif a == "-F":
            args.resources = (args.resources or []) + [n for w in following for n in _words(w)]
        elif a in WITH_ARGS:
            if not following:
                raise CommandLineError(f"error: {a} option must have argument")
            if a == "-h":
                args.hosts = (args.hosts or []) + [n for w in following for n in _words(w)]
            elif a == "-l":
                args.requests = (args.requests or []) + following
            else:
                args.users = (args.users or []) + [n for w in following for n in _words(w)]
        else:
            bad = a if a not in FLAGS else following[0]
            raise CommandLineError(f'error: invalid option argument "{bad}"', usage=True)
        i += 1
    return args


def request(args: Args) -> dict[str, Any]:
    req: dict[str, Any] = {"op": operations.QHOST}
    if args.hosts is not None:
        req["hosts"] = args.hosts
    if args.requests is not None:
        req["requests"] = args.requests
    if args.resources is not None:
        req["resources"] = args.resources
    if "-q" in args.flags:
        req["queues"] = True
    if "-j" in args.flags or args.users is not None:
        req["jobs"] = True  # -u shows the jobs of those users
    if args.users is not None:
        req["users"] = args.users
    return req


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
    except CommandLineError as err:
        sys.stderr.write((USAGE if err.usage else "") + err.text + "\n")
        return 1
    if "-help" in args.flags:
        sys.stdout.write(USAGE)
        return 0
    reply = call(request(args), unreachable=SAYS_LISTING)
    if not reply.get("ok"):
        sys.stderr.write(str(reply.get("error", "")) + "\n")
        return int(reply.get("rc", 1))
    if reply.get("unknown_host"):
        sys.stderr.write(USAGE + f"error: {reply['unknown_host']}\n")
        return 1
    opts = qhost_out.Options(binding="-ncb" not in args.flags, resources=args.resources,
                             queues="-q" in args.flags, jobs="-j" in args.flags or args.users is not None)
    hosts = reply.get("hosts") or []
    if args.fmt == "json":
        doc = json_views.qhost_view(hosts, opts.queues, opts.jobs, args.resources is not None)
        sys.stdout.flush()
        sys.stdout.buffer.write(json_views.dumps(doc))
        return 0
    fmt = qhost_out.format_xml if args.fmt == "xml" else qhost_out.format_text
    sys.stdout.write(fmt(hosts, opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
