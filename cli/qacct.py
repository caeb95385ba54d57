"""qacct: report and account for Grid Engine usage (Grid Engine 8.1 qacct(1)).

``qacct [-ar [id]] [-A [account]] [-b begin] [-d days] [-D [department]]
[-e end] [-E] [-f acctfile] [-g [group]] [-h [host]] [-help]
[-j [job_id|job_name|pattern]] [-l attr=val] [-m] [-o [owner]] [-u [owner]]
[-pe [pe]] [-P [project]] [-q [queue]] [-slots [n]] [-t task_range]
[-efficiency]``

``-efficiency`` is minisge's own (not in 8.1.9's usage text, which -help
prints unchanged): the records selected as a report per job of how well it
used what it asked for (:mod:`minisge.output.efficiency`).

Reads the accounting file directly, as Grid Engine's qacct does (no
daemon): ``$SGE_ROOT/$SGE_CELL/common/accounting`` unless ``-f``.  Records
are selected as qacct.c's sge_read_rusage does and printed with
:mod:`minisge.output.qacct_out`.  The line splitter here uses the field
names of :mod:`minisge.formats.accounting` but only the standard library,
so the command starts fast.
"""

from __future__ import annotations

import fnmatch
import grp
import os
import sys
import time
from collections.abc import Iterator

from minisge.cell import Cell
from minisge.formats import accounting
from minisge.output import efficiency, json_views, qacct_out
from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: An accounting record: accounting(5) field name -> text or number.
    Record = dict[str, Any]

USAGE_8_1_9 = """SGE 8.1.9
usage: qacct [options]
 [-ar [ar_id]]                     list [matching] advance reservations
 [-A [account_string]]             list [matching] account
 [-b begin_time]                   jobs started after
 [-d days]                         jobs started during the last d days
 [-D [department]]                 list [matching] department
 [-e end_time]                     jobs started before
 [-E]                              select job end time, not start
 [[-f] acctfile]                   use alternate accounting file
 [-g [groupid|groupname]]          list [matching] group
 [-h [host]]                       list [matching] host
 [-help]                           display this message
 [-j [job_id|job_name|pattern]]    list all [matching] jobs
 [-l attr=val,...]                 request given complex attributes
 [-m]                              list only master tasks
 [-o [owner]]                      list [matching] owner
 [-u [owner]]                      list [matching] owner
 [-pe [pe_name]]                   list [matching] parallel environment
 [-P [project]]                    list [matching] project
 [-q [queue]]                      list [matching] queue
 [-slots [slots]]                  list [matching] job slots
 [-t taskid[-taskid[:step]]]       list all [matching] tasks (requires -j option)

 begin_time, end_time              [[CC]YYMMDDhhmm[.SS]
 queue                             [cluster_queue|queue_instance|queue_domain|pattern]
"""

#: -fmt, as Open Cluster Scheduler 9 spells it for its other commands (its qacct has none);
#: JSON for -j only
FMT_USAGE = " [-fmt plain|json]                 specifies the display output format (json: with -j)\n"
USAGE = USAGE_8_1_9.replace(" [-g ", FMT_USAGE + " [-g ", 1)

#: accounting(5) field names, in file order (as minisge.formats.accounting).
FIELD_NAMES = (
    "qname", "hostname", "group", "owner", "job_name", "job_number",
    "account", "priority", "submission_time", "start_time", "end_time",
    "failed", "exit_status", "ru_wallclock", "ru_utime", "ru_stime",
    "ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss",
    "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock",
    "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw",
    "project", "department", "granted_pe", "slots", "task_number", "cpu",
    "mem", "io", "category", "iow", "pe_taskid", "maxvmem", "arid",
    "ar_submission_time",
)
_STRINGS = frozenset(("qname", "hostname", "group", "owner", "job_name", "account",
                      "project", "department", "granted_pe", "category", "pe_taskid"))
_CATEGORY = FIELD_NAMES.index("category")
_REQUIRED = FIELD_NAMES.index("department") + 1  # qacct needs the fields up to here


class Usage(Exception):
    """A bad command line: the message (if any), then the usage on stderr; exit 1."""


class Options:
    """What the command line selects (qacct.c's sge_qacct_options)."""

    def __init__(self) -> None:
        self.flags: set[str] = set()  # summary columns given bare: hostname qname ...
        self.values: dict[str, object] = {}  # columns given with a value
        self.queues: list[str] = []
        self.job_flag = False
        self.job_number = 0
        self.job_name: str | None = None
        self.tasks: tuple[int, int, int] | None = None
        self.begin: float | None = None
        self.end: float | None = None
        self.days: int | None = None
        self.by_end_time = False
        self.master_only = False
        self.file: str | None = None
        self.requests: list[str] = []  # -l attr=val,...: the queue instances the jobs ran in must offer them
        self.help = False
        self.json = False  # -fmt json, -json
        self.efficiency = False  # -efficiency (minisge's own): the efficiency report

    @property
    def job_listing(self) -> bool:
        return self.job_flag or bool(self.job_number) or self.job_name is not None


# --------------------------------------------------------------------------
# command line


def _optional(argv: list[str], i: int) -> str | None:
    """The optional argument of an option: the next word unless it starts with '-'."""
    if i + 1 < len(argv) and not argv[i + 1].startswith("-"):
        return argv[i + 1]
    return None


def _leading_uint(text: str) -> int | None:
    """sscanf ``%u``: the leading digits, None when there are none."""
    digits = ""
    for c in text.lstrip():
        if not c.isdigit():
            break
        digits += c
    return int(digits) if digits else None


def parse_task_range(text: str) -> tuple[int, int, int]:
    """``n``, ``n-m`` or ``n-m:s`` (range_list_parse_from_string, first range)."""
    first = text.split(",")[0]
    body, _, step_text = first.partition(":")
    start_text, dash, end_text = body.partition("-")
    try:
        start = int(start_text)
        end = int(end_text) if dash else start
        step = int(step_text) if step_text else 1
    except ValueError:
        raise Usage(f"invalid list of task id ranges: {text}") from None
    if start <= 0 or end < start or step < 0:
        raise Usage(f"invalid list of task id ranges: {text}")
    return start, end, step or 1


def parse_date_time(text: str) -> float:
    """``[[CC]YY]MMDDhhmm[.SS]`` in local time (sge_types(5) date_time)."""
    main, dot, secs = text.partition(".")
    if not main.isdigit() or len(main) not in (8, 10, 12) or (dot and not (secs.isdigit() and len(secs) == 2)):
        raise Usage()
    now = time.localtime()
    if len(main) == 12:
        year = int(main[:4])
    elif len(main) == 10:
        yy = int(main[:2])
        year = (2000 if yy < 70 else 1900) + yy
    else:
        year = now.tm_year
    month, day, hour, minute = (int(main[-8:-6]), int(main[-6:-4]), int(main[-4:-2]), int(main[-2:]))
    second = int(secs) if dot else 0
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 60):
        raise Usage()
    return time.mktime((year, month, day, hour, minute, second, 0, 0, -1))


_VALUE_OPTIONS = {"-o": "owner", "-u": "owner", "-P": "project", "-D": "department",
                  "-pe": "granted_pe", "-h": "hostname", "-g": "group"}


def parse_args(argv: list[str]) -> Options:
    """qacct's command line, option by option as qacct.c reads it."""
    o = Options()
    i = 0
    while i < len(argv):
        a = argv[i]
        value = _optional(argv, i)
        if a in _VALUE_OPTIONS:
            field = _VALUE_OPTIONS[a]
            if value is None:
                o.flags.add(field)
            else:
                o.values[field] = _group_name(value) if a == "-g" else value
                i += 1
        elif a == "-q":
            o.flags.add("qname")
            if value is not None:
                o.flags.add("hostname")  # as qacct.c does: -q queue also sets the host column
                o.queues.append(value)
                i += 1
        elif a == "-j":
            if value is None:
                o.job_flag = True
            else:
                number = _leading_uint(value)
                if number:
                    o.job_number = number
                else:
                    o.job_number, o.job_name = 0, value
                i += 1
        elif a == "-t":
            if value is None:
                raise Usage("-t option must have a list of task id ranges")
            o.tasks = parse_task_range(value)
            i += 1
        elif a in ("-b", "-e"):
            if i + 1 >= len(argv):
                raise Usage()
            when = parse_date_time(argv[i + 1])
            if a == "-b":
                o.begin = when
            else:
                o.end = when
            i += 1
        elif a == "-d":
            if i + 1 >= len(argv) or _leading_uint(argv[i + 1]) is None:
                raise Usage()
            o.days = _leading_uint(argv[i + 1])
            i += 1
        elif a == "-slots":
            if value is None:
                o.flags.add("slots")
            else:
                o.values["slots"] = _leading_uint(value) or 0
                if not o.values["slots"]:
                    del o.values["slots"]
                i += 1
        elif a == "-ar":
            if value is None:
                o.flags.add("arid")
            else:
                number = _leading_uint(value)
                if number is None:
                    raise Usage("ERROR! -ar option must have a positive integer value")
                if number:
                    o.values["arid"] = number
                i += 1
        elif a == "-A":
            if value is None:
                o.flags.add("account")
            else:
                o.values["account"] = value
                i += 1
        elif a == "-l":
            if i + 1 >= len(argv):
                raise Usage()
            o.requests += [w for w in argv[i + 1].replace(",", " ").split() if w]
            i += 1
        elif a == "-f":
            if i + 1 >= len(argv):
                raise Usage()
            o.file = argv[i + 1]
            i += 1
        elif a == "-fmt":
            if value not in ("plain", "json"):
                raise Usage(f'error: invalid option argument "{value or a}"')
            o.json = value == "json"
            i += 1
        elif a == "-json":
            o.json = True
        elif a == "-E":
            o.by_end_time = True
        elif a == "-m":
            o.master_only = True
        elif a == "-efficiency":
            o.efficiency = True
        elif a == "-help":
            o.help = True
            return o
        else:
            raise Usage()
        i += 1
    return o


def _group_name(text: str) -> str:
    """``-g gid``: the group's name when the number is a known gid."""
    gid = _leading_uint(text)
    if gid is None:
        return text
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return text


# --------------------------------------------------------------------------
# reading


def _number(text: str, floating: bool) -> float | int:
    """atol/atof: the leading number of ``text``, 0 when there is none."""
    text = text.strip()
    end = 0
    seen_dot = seen_digit = False
    while end < len(text):
        c = text[end]
        if c.isdigit():
            seen_digit = True
        elif c in "+-" and end == 0:
            pass
        elif c == "." and floating and not seen_dot:
            seen_dot = True
        elif c in "eE" and floating and seen_digit and end + 1 < len(text):
            tail = text[end + 1:]
            exp = 1 if tail[0] in "+-" else 0
            while exp < len(tail) and tail[exp].isdigit():
                exp += 1
            if exp > (1 if tail[0] in "+-" else 0):
                end += 1 + exp
            break
        else:
            break
        end += 1
    if not seen_digit:
        return 0.0 if floating else 0
    value = float(text[:end])
    return value if floating else int(value)


_FLOATS = frozenset(("ru_utime", "ru_stime", "cpu", "mem", "io", "iow", "maxvmem"))


def parse_record(line: str) -> Record | None:
    """One accounting line as a dict keyed by accounting(5) field names, or
    None when it is not a record (fewer fields than qacct needs)."""
    fields = line.split(":")
    if len(fields) < _REQUIRED:
        return None
    resource_map = ""
    if len(fields) > len(FIELD_NAMES) and accounting.is_resource_map_field(fields[-1]):
        resource_map = fields.pop()  # minisge's 46th field (sge_rsmap(5))
    if len(fields) > len(FIELD_NAMES):  # a ':' inside the category
        extra = len(fields) - len(FIELD_NAMES)
        fields = (fields[:_CATEGORY] + [":".join(fields[_CATEGORY:_CATEGORY + extra + 1])]
                  + fields[_CATEGORY + extra + 1:])
    record: Record = {}
    for name, text in zip(FIELD_NAMES, fields, strict=False):  # a short record: defaults below
        if name in _STRINGS:
            record[name] = text
        else:
            record[name] = _number(text, name in _FLOATS)
    for name in FIELD_NAMES[len(fields):]:
        record[name] = "NONE" if name == "granted_pe" else ("" if name in _STRINGS else 0)
    record["resource_map"] = resource_map
    return record


def read_records(path: str) -> Iterator[Record]:
    """The records of the file, with qacct's "ignoring invalid entry" for
    lines that are not records (comments and short lines are skipped)."""
    # lines end at "\n" alone, as 8.1.9's fgets reads them: a "\r" in a field is no line break
    with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if len(line) <= 1 or line.startswith("#"):
                continue
            record = parse_record(line)
            if record is None:
                sys.stderr.write(f"error: ignoring invalid entry in line {lineno}\n")
                continue
            yield record


# --------------------------------------------------------------------------
# selection


def _time_window(o: Options) -> tuple[float | None, float | None]:
    """-b, -e and -d combined as qacct.c does (-d counts from -b, back from
    -e, or back from now)."""
    begin, end = o.begin, o.end
    span = (o.days or 0) * 24 * 3600
    if end is None:
        end = begin + span if (o.days is not None and begin is not None) else None
    if begin is None:
        if o.end is not None and o.days is not None:
            begin = o.end - span
        elif o.days is not None:
            begin = time.time() - span
    return begin, end


def _queue_patterns(queues: list[str]) -> list[str]:
    """-q queue → qinstance patterns: ``cq`` → ``cq@*``, ``cq@`` → ``cq@*``."""
    out = []
    for q in queues:
        if "@" not in q:
            out.append(q + "@*")
        elif q.endswith("@"):
            out.append(q + "*")
        else:
            out.append(q)
    return out


def selected(r: Record, o: Options, window: tuple[float | None, float | None],
             patterns: list[str]) -> bool:
    """sge_read_rusage: whether a record matches every selection given."""
    v = o.values
    if "hostname" in v and str(v["hostname"]).lower() != r["hostname"].lower():
        return False
    if patterns and not any(fnmatch.fnmatchcase(f"{r['qname']}@{r['hostname']}", p) for p in patterns):
        return False
    for field in ("group", "owner", "account", "project", "department", "granted_pe"):
        if field in v and v[field] != r[field]:
            return False
    if not o.job_flag and (o.job_number or o.job_name is not None):
        if r["job_number"] != o.job_number and not (
                o.job_name is not None and fnmatch.fnmatchcase(r["job_name"], o.job_name)):
            return False
    when = r["end_time"] if o.by_end_time else r["start_time"]
    begin, end = window
    if begin is not None and when < begin:
        return False
    if end is not None and when > end:
        return False
    if "slots" in v and v["slots"] != r["slots"]:
        return False
    if not o.job_flag and o.tasks:
        start, stop, step = o.tasks
        task = r["task_number"]
        if task < start or task > stop or (task - start) % step:
            return False
    if "arid" in v and v["arid"] != r["arid"]:
        return False
    if o.master_only and r["pe_taskid"] not in ("", "NONE"):
        return False
    return True


class ComplexSelection:
    """qacct -l (qacct.c): a record counts only when the queue instance it
    ran in still exists and offers the requested attributes as in an empty
    cell (the qmaster judges, as for ``qstat -l``); records of jobs that never
    started are left out, those of instances gone are counted and reported."""

    def __init__(self, requests: list[str]):
        reply = call({"op": operations.QSTAT_FULL, "users": [], "detail": False, "requests": requests},
                     unreachable=SAYS_LISTING)
        if not reply.get("ok"):
            raise Usage(str(reply.get("error", "")))
        self.unknown = str(reply.get("unknown_resource") or "")
        self.existing = set(reply.get("queues") or ())
        self.selected = {str(q.get("name")) for q in reply.get("queue_info") or ()}
        self.ignored = 0

    def keeps(self, r: Record) -> bool:
        if not r["start_time"]:
            return False  # "skipping job that never ran"
        name = f"{r['qname']}@{r['hostname']}"
        if name not in self.existing:
            self.ignored += 1
            return False
        return name in self.selected


def _not_found(o: Options) -> str:
    if o.tasks:
        start, stop, step = o.tasks
        return qacct_out.format_tasks_not_found(o.job_number or str(o.job_name), start, stop, step)
    if o.job_number:
        return qacct_out.format_job_not_found(o.job_number)
    return qacct_out.format_job_name_not_found(str(o.job_name))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        o = parse_args(argv)
    except Usage as err:
        if str(err):
            sys.stderr.write(f"{err}\n")
        sys.stderr.write(USAGE)
        return 1
    if o.help:
        sys.stdout.write(USAGE)
        return 0
    if o.tasks and not (o.job_number or o.job_name is not None):
        sys.stderr.write("error: -t option requires -j option with an argument\n" + USAGE)
        return 1
    if o.json and not (o.job_number or o.job_name is not None):
        sys.stderr.write("error: -fmt json option requires -j option with an argument\n" + USAGE)
        return 1
    path = o.file or Cell.from_env().accounting
    complexes = None
    if o.requests:
        try:
            complexes = ComplexSelection(o.requests)
        except Usage as err:
            sys.stderr.write(f"{err}\n")
            return 1
        if complexes.unknown:
            sys.stderr.write(f'error: unknown resource "{complexes.unknown}"\n')
            return 1
    try:
        os.stat(path)
        matched = [r for r in read_records(path) if selected(r, o, _time_window(o), _queue_patterns(o.queues))]
    except OSError as err:
        sys.stderr.write(f"{path}: {err.strerror}\n")
        if o.json:  # stdout stays one JSON document
            sys.stdout.buffer.write(json_views.dumps(json_views.qacct_view([])))
            return 1
        sys.stdout.write("no jobs running since startup\n")
        return 1
    # -l filters after the rest (8.1.9: a job it leaves out is no job "not found")
    records = matched if complexes is None else [r for r in matched if complexes.keeps(r)]
    ignored = complexes.ignored if complexes is not None else 0
    if ignored:
        sys.stderr.write(f"{ignored} jobs ignored for accounting. Jobs' master queue no longer exists.\n")
    if o.json:
        sys.stdout.flush()
        sys.stdout.buffer.write(json_views.dumps(json_views.qacct_view(records)))
        if not matched:
            sys.stderr.write(_not_found(o))
            return 1
        return 0
    if o.efficiency:  # the selected records as one report per job, then a total
        sys.stdout.write(efficiency.format_efficiency(records))
        if not matched and o.job_listing and not o.job_flag:
            sys.stderr.write(_not_found(o))
            return 1
        return 0
    if o.job_listing:
        sys.stdout.write(qacct_out.format_qacct_jobs(records) + ("\n" if ignored else ""))
        if not matched and not o.job_flag:
            sys.stderr.write(_not_found(o))
            return 1
        if not o.job_flag:
            return 0
        # a bare -j (every job) ends with the summary as without -j (qacct.c)
    sys.stdout.write(("\n" if ignored else "")
                     + qacct_out.format_qacct_summary(records, by=sorted(o.flags), fixed=o.values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
