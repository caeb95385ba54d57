"""qrsub: submit an advance reservation.

``qrsub [-a date_time] (-d time | -e date_time) [-A account] [-l resource_list]
[-pe pe_name slot_range] [-q wc_queue_list] [-masterq wc_queue_list] [-N name]
[-u user_list] [-m mail_options] [-M mail_list] [-he y|n] [-w e|v] [-ckpt name]``

The qmaster grants it (``Your advance reservation N has been granted``) or
says why not, as 8.1.9 does; it holds the slots (and the ``-l``
consumables) for the window, and jobs submitted with ``qsub -ar N`` run in
them.  Not supported, refused as 8.1.9 refuses an unknown option:
``-astnode``, ``-dul`` and ``-explain`` (its help lists them; 8.1.9 refuses
them too), ``-now`` (8.1.9 takes it: interactive queues only; refused here,
not ignored); the request files ``sge_ar_request``/``.sge_ar_request`` are
not read.
"""

from __future__ import annotations

import re
import sys
import time

from minisge.formats import sge_types, submit_options
from minisge.protocol import operations
from minisge.protocol.client import call, print_lines

USAGE = """\
SGE 8.1.9
usage: qrsub [options]
   [-a date_time]                           request a start time
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-d time]                                duration of time window
   [-dul listname_list]                     delete userset list(s) completely
   [-e date_time]                           request an end time
   [-help]                                  print this help
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-N name]                                specify job name
   [-now y[es]|n[o]]                        consider only interactive queues
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       print information on given queue
   [-u user_list]                           specify a list of users
                                            (not allowed in combination with job_task_list)
   [-explain]                               show reason for error state

account_string          account_name
date_time               [[CC]YY]MMDDhhmm[.SS]
listname_list           listname[,listname,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' (end, begin, error, no)
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
resource_list           resource[=value][,resource[=value],...]
slot_range              [n[-m]|[-]m] - n,m > 0
user_list               user[,user,...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
time                    hours:minutes:seconds | seconds
"""

NO_OPTION_ARGUMENT = "ERROR! no option argument"
TAKES_ARGUMENT = ("-a", "-A", "-ckpt", "-d", "-e", "-he", "-l", "-M", "-m", "-masterq", "-N", "-q", "-u", "-w")


class Refused(Exception):
    """A bad command line: the text qrsub prints on stderr."""


DATE_TIME = re.compile(r"(\d{8}|\d{10}|\d{12})(\.\d{2})?")


def _date_time(text: str) -> str:
    """``[[CC]YY]MMDDhhmm[.SS]``; 8.1.9's qrsub names -a in the refusal of
    a bad -e too."""
    ok = DATE_TIME.fullmatch(text) is not None
    if ok:
        _y, month, day, hour, minute, sec = submit_options.date_time_fields(text, time.localtime().tm_year)
        ok = 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and sec <= 60
    if not ok:
        raise Refused(f'\nInvalid format of date/hour-minute field.\nqrsub: Wrong date/time format "{text}" '
                      "specified to -a option")
    return text


def _resources(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in submit_options.split_comma_list(text):
        name, sep, value = item.partition("=")
        if not name:
            raise Refused(f'qrsub: invalid option argument "-l {text}"')
        out[name] = value if sep else "TRUE"
    return out


def parse(argv: list[str]) -> dict[str, object]:
    """qrsub's command line to its request (Refused: what to print)."""
    req: dict[str, object] = {"op": operations.QRSUB}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            return {"help": True}
        if a == "-pe":
            if i + 2 >= len(argv):
                raise Refused("qrsub: -pe option must have argument")
            name, spec = argv[i + 1], argv[i + 2]
            try:
                ranges = submit_options.parse_pe_ranges(spec)
            except submit_options.ParseError as err:
                raise Refused(f"qrsub: {err.text}") from None
            req["pe"] = {"name": name, "ranges": ranges, "text": submit_options.format_ranges(ranges)}
            i += 3
            continue
        if a == "-explain":  # in 8.1.9's usage, refused in other words than an unknown option
            raise Refused('error: invalid option argument "-explain"')
        if a not in TAKES_ARGUMENT:
            raise Refused(f'qrsub: invalid option argument "{a}"')
        if i + 1 >= len(argv):
            raise Refused(f"qrsub: {a} option must have argument")
        v = argv[i + 1]
        i += 2
        if a in ("-a", "-e"):
            req["start_time" if a == "-a" else "end_time"] = _date_time(v)
        elif a == "-d":
            try:
                sge_types.parse_time(v)
            except ValueError:
                raise Refused(f'qrsub: Wrong time format "{v}" specified to -d option') from None
            req["duration"] = v
        elif a == "-A":
            why = submit_options.account_error(v)
            if why:
                raise Refused(why)
            req["account"] = v
        elif a == "-N":
            why = submit_options.object_name_error(v)
            if why:
                raise Refused(why)
            req["name"] = v
        elif a == "-l":
            req["resources"] = {**req.get("resources", {}), **_resources(v)}  # type: ignore[dict-item]
        elif a in ("-q", "-masterq"):
            key = "queues" if a == "-q" else "master_queues"
            req[key] = [*req.get(key, []), *submit_options.split_comma_list(v)]  # type: ignore[misc]
        elif a == "-u":
            req["users"] = [*req.get("users", []), *submit_options.split_comma_list(v)]  # type: ignore[misc]
        elif a == "-m":
            if not v or any(c not in "beasn" for c in v):
                raise Refused(f'qrsub: Wrong mail options list format "{v}" specified to -m option')
            # 8.1.9 (sge_qrsub.c): each -m adds its letters; one with n clears them
            old = str(req.get("mail_options") or "")
            req["mail_options"] = "" if "n" in v else old + "".join(c for c in v if c not in old)
        elif a == "-M":  # each -M adds its addresses (FLG_LIST_MERGE)
            known: list[str] = req.get("mail_list", [])  # type: ignore[assignment]
            added = [m for m in submit_options.split_comma_list(v) if m not in known]
            req["mail_list"] = [*known, *added]
        elif a == "-he":
            if v not in ("y", "yes", "n", "no"):
                raise Refused(f'qrsub: invalid option argument "-he {v}"')
            req["error_handling"] = v.startswith("y")
        elif a == "-w":
            if v not in ("e", "v"):
                raise Refused(f'qrsub: invalid option argument "-w {v}"')
            req["verify"] = v
        elif a == "-ckpt":
            req["checkpoint"] = v
    return req


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write(USAGE + NO_OPTION_ARGUMENT + "\n")
        return 1
    try:
        req = parse(argv)
    except Refused as err:
        sys.stderr.write(f"{err}\n")
        return 1
    if req.get("help"):
        sys.stdout.write(USAGE)
        return 0
    reply = call(req)
    return print_lines(reply)


if __name__ == "__main__":
    sys.exit(main())
