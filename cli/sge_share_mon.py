"""sge_share_mon: print the share tree with its shares, targets and usage
(Grid Engine 8.1 sge_share_mon(1)).

``sge_share_mon [-c count] [-d delimiter] [-f field,...] [-h] [-i interval]
[-l delimiter] [-m output_mode] [-n] [-o output_file] [-r delimiter]
[-s string_format] [-t] [-u] [-x] [node_names ...]``

The qmaster computes the nodes (op ``share_mon``:
:meth:`minisge.qmaster.share_usage.ShareUsage.monitor`); this module prints
them as 8.1.9 does (sge_sharetree_printing.c): one line per node, every field
followed by the delimiter, ``name=`` before each with ``-n``, doubles as
``%f``; a collection every ``-i`` seconds, ``-c`` times (default: until
interrupted), the record delimiter between collections.  ``-o`` appends to
the file (8.1.9 opens it in mode ``a`` unless ``-m`` says otherwise, though
its usage says ``w``).  Standard library and the client only.
"""

from __future__ import annotations

import getopt
import re
import sys
import time

from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call, refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

USAGE = """usage: sge_share_mon [-cdfhilmnorsux] [node_names ...]

   -c count          number of collections (default is infinite)
   -d delimiter      delimiter between columns (default is <TAB>)
   -f field[,field]  list of fields to print
   -h                print a header containing the field names
   -i interval       collection interval in seconds (default is 15)
   -l delimiter      delimiter between nodes (default is <CR>)
   -m output_mode    output file fopen mode (default is "w")
   -n                use name=value format
   -o output_file    output file
   -r delimiter      delimiter between collection records (default is <CR>)
   -s string_format  format of displayed strings (default is %s)
   -t                show formatted times
   -u                show decayed usage (since timestamp) in nodes
   -x                exclude non-leaf nodes

"""

#: the fields in 8.1.9's order: name -> (kind, key of a node row)
FIELDS: dict[str, tuple[str, str]] = {
    "curr_time": ("date", "curr_time"), "usage_time": ("date", "usage_time"),
    "node_name": ("string", "path"), "user_name": ("string", "user"), "project_name": ("string", "project"),
    "shares": ("ulong", "shares"), "job_count": ("ulong", "job_count"), "level%": ("double", "level"),
    "total%": ("double", "total"), "long_target_share": ("double", "long_target"),
    "short_target_share": ("double", "short_target"), "actual_share": ("double", "actual"),
    "usage": ("double", "usage"), "cpu": ("double", "cpu"), "mem": ("double", "mem"), "io": ("double", "io"),
    "ltcpu": ("double", "ltcpu"), "ltmem": ("double", "ltmem"), "ltio": ("double", "ltio"),
}
OPTIONS = "i:c:f:d:hl:m:no:r:s:tux"


class Format:
    """How nodes print (8.1.9's format_t)."""

    def __init__(self) -> None:
        self.name_format = False
        self.delim = "\t"
        self.line_delim = "\n"
        self.rec_delim = "\n"
        self.str_format = "%s"
        self.fields: list[str] | None = None
        self.format_times = False

    def chosen(self) -> list[str]:
        """The known fields of ``-f`` in its order (unknown ones are skipped), else all."""
        if self.fields is None:
            return list(FIELDS)
        return [f for f in self.fields if f in FIELDS]

    def string(self, value: str) -> str:
        try:
            return self.str_format % value
        except (TypeError, ValueError):
            return self.str_format


def header(fmt: Format) -> str:
    """``-h``: the field names, each followed by the delimiter, then the line and record delimiters."""
    return "".join(f + fmt.delim for f in fmt.chosen()) + fmt.line_delim + fmt.rec_delim


def field_text(name: str, row: Mapping[str, Any], fmt: Format) -> str:
    kind, key = FIELDS[name]
    value = row.get(key) or 0 if kind != "string" else row.get(key) or ""
    if kind == "ulong":
        text = str(int(value))
    elif kind == "date":
        t = int(value)
        text = fmt.string(time.ctime(t)) if t and fmt.format_times else str(t)
    elif kind == "double":
        text = f"{float(value):f}"
    else:
        text = fmt.string(str(value))
    return (f"{name}=" if fmt.name_format else "") + text + fmt.delim


def nodes_text(rows: list[dict[str, Any]], fmt: Format, now: int, leaves_only: bool,
               names: list[str]) -> str:
    """One collection: a line per node (leaves only with ``-x``; only the
    named ones when node names are given)."""
    out = []
    fields = fmt.chosen()
    for row in rows:
        if leaves_only and not row.get("leaf"):
            continue
        if names and row.get("path") not in names:
            continue
        row = {**row, "curr_time": now}
        if fields:
            out.append("".join(field_text(f, row, fmt) for f in fields) + fmt.line_delim)
    return "".join(out)


def _number(text: str) -> int | None:
    """sscanf's ``%d``: a leading integer, the rest ignored."""
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    prog = sys.argv[0] if sys.argv and sys.argv[0] else "sge_share_mon"
    if prog.endswith(".py"):  # python -m minisge.cli.sge_share_mon
        prog = "sge_share_mon"
    fmt = Format()
    interval, count, show_header, decay, leaves_only = 15, -1, False, False, False
    ofile: str | None = None
    mode = "a"
    err = 0
    try:
        opts, names = getopt.gnu_getopt(argv, OPTIONS)
    except getopt.GetoptError as e:
        what = "option requires an argument" if "requires argument" in e.msg else "invalid option"
        sys.stderr.write(f"{prog}: {what} -- '{e.opt}'\n" + USAGE)
        return 1
    for o, a in opts:
        if o == "-i":
            n = _number(a)
            if n is None:
                sys.stderr.write(f"{a} is not a valid interval")
                err += 1
            else:
                interval = n
        elif o == "-c":
            n = _number(a)
            if n is None:
                sys.stderr.write(f"{a} is not a valid count")
                err += 1
            else:
                count = n
        elif o == "-f":
            fmt.fields = a.split(",")
        elif o == "-o":
            ofile = a
        elif o == "-d":
            fmt.delim = a
        elif o == "-h":
            show_header = True
        elif o == "-m":
            mode = a
        elif o == "-n":
            fmt.name_format = True
        elif o == "-l":
            fmt.line_delim = a
        elif o == "-r":
            fmt.rec_delim = a
        elif o == "-s":
            fmt.str_format = a
        elif o == "-t":
            fmt.format_times = True
        elif o == "-u":
            decay = True
        elif o == "-x":
            leaves_only = True
    if err:
        sys.stderr.write(USAGE)
        return 1
    text = header(fmt) if show_header else ""
    while count == -1 or count > 0:
        if count > 0:
            count -= 1
        reply = call({"op": operations.SHARE_MON, "decay": decay}, unreachable=SAYS_LISTING)
        rc = refused(reply)
        if rc is not None:
            return rc
        text += nodes_text(reply.get("rows") or [], fmt, int(time.time()), leaves_only, names)
        if count and fmt.rec_delim:
            text += fmt.rec_delim
        if ofile is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            try:
                with open(ofile, mode.replace("b", ""), encoding="utf-8") as f:
                    f.write(text)
            except (OSError, ValueError) as e:
                reason = e.strerror if isinstance(e, OSError) else "Invalid argument"
                sys.stderr.write(f"can't open file {ofile}: {reason}\n")
                return 1
        text = ""
        if count:
            time.sleep(interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
