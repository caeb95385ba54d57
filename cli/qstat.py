"""qstat: show the status of jobs and queues (Grid Engine 8.1 qstat(1)).

``qstat [-ext] [-explain a|c|A|E] [-f] [-F [res,...]] [-g c|d|t] [-help]
[-j [job_list]] [-l res_list] [-ne] [-ncb] [-pe pe_list] [-q wc_queue_list]
[-qs states] [-r] [-s states] [-t] [-u user_list] [-U user_list] [-urg]
[-pri] [-xml] [-fmt plain|json|xml]``

The qmaster sends plain dicts (``op`` ``qstat``, ``qstat_full``,
``job_detail``, see :mod:`minisge.qmaster.views`); the qmaster selects for
``-l`` and ``-U`` (:mod:`minisge.qmaster.qstat_select`: it knows the complex
list and the access lists), this module for ``-s``, ``-q``, ``-qs``,
``-pe``, ``-ne``, and prints them with
:mod:`minisge.output.qstat_out` (``-fmt json``, ``-json``:
:mod:`minisge.output.json_views`).  Standard library, the client, the output
module and :mod:`minisge.formats.wc_queue` only (no trio, no attrs), so that it
starts as fast as the interpreter.
"""

from __future__ import annotations

import posix  # not os (minisge.cell says why)
import pwd
import sys

import minisge  # its formats and output (wc_queue, wildcard, job_detail_out, json_views, qstat_out): when used
from minisge.cell import Cell, environment, join_path
from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call

from . import load_when_used

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from minisge.formats import wc_queue, wildcard  # noqa: F401  (formats.NAME: loaded when used)
    from minisge.output import job_detail_out, json_views, qstat_out  # noqa: F401  (output.NAME: loaded when used)

#: qstat's usage text (qstat_usage), printed on stdout by -help and on
#: stderr, followed by the reason, for a bad command line.
USAGE_8_1_9 = """SGE 8.1.9
usage: qstat [options]
        [-ext]                            view additional attributes
        [-explain a|c|A|E]                show reason for queue c(onfiguration ambiguous), a(larm), suspend A(larm), E(rror) state
        [-f]                              full output
        [-F [resource_attributes]]        full output and show (selected) resources of queue(s)
        [-g c]                            display cluster queue summary
        [-g d]                            display all job-array tasks (do not group)
        [-g t]                            display all parallel job tasks (do not group)
        [-help]                           print this help
        [-j [job_identifier_list]]        show scheduler job information
        [-l resource_list]                request the given resources
        [-ne]                             hide empty queues
        [-ncb]                            suppress additional binding specific parameters
        [-pe pe_list]                     select only queues with one of these parallel environments
        [-q wc_queue_list]                print information on given queue
        [-qs {a|c|d|o|s|u|A|C|D|E|S}]     selects queues which are in the given state(s)
        [-r]                              show requested resources of job(s)
        [-s {p|r|s|z|hu|ho|hs|hd|hj|ha|h|a}] show pending, running, suspended, zombie jobs,
                                          jobs with a user/operator/system/array-dependency hold, 
                                          jobs with a start time in future or any combination only.
                                          h is an abbreviation for huhohshdhjha
                                          a is an abbreviation for prsh
        [-t]                              show task information (implicitly -g t)
        [-u user_list]                    view jobs of this user list
        [-U user_list]                    select only queues where these users have access
        [-urg]                            display job urgency information
        [-pri]                            display job priority information
        [-xml]                            display the information in XML format

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
"""  # noqa: E501, W291 - Grid Engine 8.1.9's help text, as it is

#: -fmt (Open Cluster Scheduler 9's spelling and words), after -f as there.
FMT_USAGE = "        [-fmt plain|json|xml]             specifies the display output format\n"
USAGE = USAGE_8_1_9.replace("full output\n", "full output\n" + FMT_USAGE, 1)

#: Options that take an argument (qstat answers "-X option must have
#: argument" when it is missing).
_WITH_ARG = ("-explain", "-l", "-pe", "-q", "-qs", "-s", "-u", "-U", "-g", "-fmt")
_FLAGS = ("-ext", "-f", "-ne", "-ncb", "-r", "-t", "-urg", "-pri", "-xml", "-json")
#: -fmt's words and what each means: -xml's flag, or JSON
FORMATS = ("plain", "json", "xml")
_QUEUE_STATES = "acdosuACDES"
_HOLD_KINDS = "uosdja"


class CommandLineError(Exception):
    """A bad command line: ``text`` goes to stderr, after the usage text
    when ``usage`` is set; qstat exits 1."""

    def __init__(self, text: str, usage: bool = False):
        super().__init__(text)
        self.text = text
        self.usage = usage


class Args:
    """The parsed command line."""

    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.explain = ""
        self.resources: list[str] | None = None  # -F [list]
        self.group = ""  # -g c|d|t letters
        self.jobs: list[str] | None = None  # -j [list]
        self.pe: list[str] | None = None
        self.queues: list[str] | None = None
        self.queue_states = ""
        self.states = ""
        self.users: list[str] | None = None
        self.requests: list[str] | None = None  # -l resource=value,...
        self.queue_users: list[str] | None = None  # -U user,...
        self.help = False
        self.json = False  # -fmt json, -json

    @property
    def full(self) -> bool:
        return "-f" in self.flags or self.resources is not None or bool(self.explain)


def _split(text: str) -> list[str]:
    """A comma (or blank) separated list."""
    return [w for w in text.replace(",", " ").split() if w]


def parse_args(argv: list[str]) -> Args:
    """qstat's command line (qstat_cmdline.c: an option's argument is the next
    word; -F and -j take one only when it does not start with ``-``)."""
    args = Args()
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if a == "-help":
            args.help = True
        elif a == "-json":
            set_format(args, "json")
        elif a == "-xml":
            set_format(args, "xml")
        elif a in _FLAGS:
            args.flags.add(a)
        elif a == "-F":
            args.resources = []
            if nxt is not None and not nxt.startswith("-"):
                args.resources = _split(nxt)
                i += 1
        elif a == "-j":
            args.jobs = []
            if nxt is not None and not nxt.startswith("-"):
                args.jobs = _split(nxt)
                i += 1
        elif a in _WITH_ARG:
            if nxt is None:
                raise CommandLineError(f"{a} option must have argument")
            _apply(args, a, nxt)
            i += 1
        elif args.jobs is not None and not a.startswith("-"):
            args.jobs = _split(a)  # qstat -j 1 2: the last list counts
        else:
            raise CommandLineError(f'invalid option argument "{a}"', usage=True)
        i += 1
    return args


# --------------------------------------------------------------------------
# sge_qstat(5): default options


def default_files(cell_common: str, home: str | None) -> list[str]:
    """sge_qstat(5): the cell's ``common/sge_qstat``, then ``~/.sge_qstat``."""
    files = [join_path(cell_common, "sge_qstat")]
    if home:
        files.append(join_path(home, ".sge_qstat"))
    return files


def read_default_options(paths: list[str]) -> list[str]:
    """The option words of the default files that exist, in order; a ``#``
    starts a comment to the end of its line (8.1.9 skips both a comment line
    and a comment after options)."""
    words: list[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError:
            continue  # a file that is not there is no error
        for line in text.split("\n"):
            words += line.split("#", 1)[0].split()
    return words


def option_groups(words: list[str]) -> list[list[str]]:
    """Words grouped by option: each option with its argument (``-F`` and
    ``-j`` take one only when it does not start with ``-``)."""
    groups: list[list[str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else None
        if w in _WITH_ARG and nxt is not None:
            groups.append([w, nxt])
            i += 2
        elif w in ("-F", "-j") and nxt is not None and not nxt.startswith("-"):
            groups.append([w, nxt])
            i += 2
        elif groups and groups[-1][0] == "-j" and not w.startswith("-"):
            groups[-1].append(w)  # qstat -j 1 2
            i += 1
        else:
            groups.append([w])
            i += 1
    return groups


def with_defaults(argv: list[str], defaults: list[str]) -> list[str]:
    """The command line followed by the default options it does not give
    itself (qstat.c: an option on the command line replaces every
    occurrence of the same option in the files)."""
    given = {_FORMAT_OPTIONS.get(g[0], g[0]) for g in option_groups(argv)}
    return argv + [w for g in option_groups(defaults) if _FORMAT_OPTIONS.get(g[0], g[0]) not in given for w in g]


#: -fmt, -xml and -json are one option for the default files: the command line's replaces the files'
_FORMAT_OPTIONS = {"-xml": "-fmt", "-json": "-fmt"}


def _home() -> str | None:
    try:
        return pwd.getpwuid(posix.getuid()).pw_dir
    except KeyError:
        return environment().get("HOME")


def set_format(args: Args, fmt: str) -> None:
    """``-fmt plain|json|xml`` (``-xml``, ``-json``): the last one given counts."""
    args.flags.discard("-xml")
    args.json = fmt == "json"
    if fmt == "xml":
        args.flags.add("-xml")


def _apply(args: Args, option: str, value: str) -> None:
    """An option with its argument."""
    if option == "-fmt":
        if value not in FORMATS:
            raise CommandLineError(f'invalid option argument "{value}"', usage=True)
        set_format(args, value)
    elif option == "-s":
        args.states += _check_job_states(value)
    elif option == "-g":
        for letter in value:
            if letter not in "cdt":
                raise CommandLineError(f"wrong character '{letter}' for -g option")
        args.group += value
    elif option in ("-explain", "-qs"):
        for letter in value:
            if letter not in _QUEUE_STATES or (option == "-explain" and letter not in "acAE"):
                raise CommandLineError(
                    f"error: unknown queue state: {letter} found in string: {value}\n"
                    f"unknown queue state: {letter} found in string: {value}")
        if option == "-explain":
            args.explain += value
        else:
            args.queue_states += value
    elif option == "-u":
        args.users = (args.users or []) + _split(value)
    elif option == "-q":
        args.queues = (args.queues or []) + _split(value)
    elif option == "-pe":
        args.pe = (args.pe or []) + _split(value)
    elif option == "-l":
        args.requests = (args.requests or []) + _split(value)
    elif option == "-U":
        args.queue_users = (args.queue_users or []) + _split(value)


def _check_job_states(value: str) -> str:
    """``-s {p|r|s|z|hu|ho|hs|hd|hj|ha|h|a}``: expanded to single letters,
    holds as ``h`` + kind (``h`` alone = every hold, ``a`` = ``prsh``)."""
    out = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "h":
            if i + 1 < len(value) and value[i + 1] in _HOLD_KINDS:
                out.append("h" + value[i + 1])
                i += 1
            else:
                out.extend("h" + k for k in _HOLD_KINDS)
        elif c == "a":
            out.extend(["p", "r", "s"] + ["h" + k for k in _HOLD_KINDS])
        elif c in "prsz":
            out.append(c)
        else:
            raise CommandLineError("ERROR! wrong argument to -s option", usage=True)
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------
# selection


def _is_running(task: dict[str, Any]) -> bool:
    return bool(task.get("granted") or task.get("queue"))


def _task_selected(job: dict[str, Any], task: dict[str, Any], states: str) -> bool:
    """Whether ``-s`` keeps a task (an empty selection keeps all)."""
    if not states:
        return True
    state = str(task.get("state", ""))
    if _is_running(task):
        suspended = any(c in state for c in "sST")
        return ("s" in states) if suspended else ("r" in states)
    if "p" in states:
        return True
    holds = task.get("holds", job.get("holds", "h" if "h" in state else ""))  # a task's own: -hold_jid_ad
    return any(("h" + k) in states for k in holds)


def _queue_matches(name: str, patterns: list[str]) -> bool:
    """sge_types(5) ``wc_queue_list``: ``cq``, ``cq@host``, wildcard
    expressions (a queue domain ``cq@@hostgroup`` needs the host groups,
    which the reply does not carry: it names nothing here)."""
    cq, _, host = name.partition("@")
    return minisge.formats.wc_queue.list_matches(patterns, cq, host)


def select_jobs(jobs: list[dict[str, Any]], states: str, queues: set[str] | None,
                hide_pending: set[int] | frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """Jobs with only the tasks ``-s`` and ``-q`` keep (running tasks in
    the selected queue instances; pending tasks are in no queue and stay,
    but those of the jobs in ``hide_pending``: with ``-l``/``-U`` they fit no
    instance shown); jobs left without a task are dropped."""
    def keep(job: dict[str, Any], task: dict[str, Any]) -> bool:
        if not _is_running(task) and job.get("job_number") in hide_pending:
            return False
        return (_task_selected(job, task, states)
                and (queues is None or not _is_running(task) or _granted_queue(task) in queues))

    out = []
    for job in jobs:
        if not job.get("tasks"):
            if keep(job, job):
                out.append(job)
            continue
        kept = [t for t in job["tasks"] if keep(job, t)]
        if kept:
            job = dict(job)
            job["tasks"] = kept
            out.append(job)
    return out


def reply_brief(reply: dict[str, Any]) -> qstat_out.BriefJobs | None:
    """A listing's ``brief_jobs`` (catalogue BRIEF_JOBS), if any (none: None, as an empty one prints)."""
    brief = reply.get("brief_jobs")
    return minisge.output.qstat_out.BriefJobs(brief["shapes"], brief["columns"]) if brief and brief["columns"] else None


def reply_jobs(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The job dicts of a listing's reply, its ``brief_jobs`` made dicts
    again (qstat_out.BRIEF_KEYS), all in job number order."""
    jobs: list[dict[str, Any]] = list(reply.get("jobs") or ())
    brief = reply_brief(reply)
    if not brief:
        return jobs
    rows = [minisge.output.qstat_out.brief_job(row) for row in brief.rows()]
    if not jobs:
        return rows
    return sorted(jobs + rows, key=lambda j: int(j["job_number"]))  # two sorted runs


def select_brief(brief: qstat_out.BriefJobs | None, states: str,
                 hide_pending: set[int]) -> qstat_out.BriefJobs | None:
    """The brief pending jobs ``-s`` keeps, as :func:`select_jobs` keeps
    their job dicts: all with ``p`` or no selection, else those with a
    hold ``-s h...`` names; none of ``hide_pending``."""
    if brief is None:
        return None
    if not states or "p" in states:
        return brief.kept(None, hide_pending)
    return brief.kept(lambda holds: any(("h" + k) in states for k in holds), hide_pending)


def _granted_queue(task: dict[str, Any]) -> str | None:
    granted = task.get("granted")
    if granted:
        return str(granted[0][0])
    queue: str | None = task.get("queue")
    return queue


def select_queues(queues: list[dict[str, Any]], args: Args) -> list[dict[str, Any]]:
    """Queue instances kept by ``-q``, ``-qs`` and ``-pe``."""
    out = []
    for q in queues:
        if args.queues is not None and not _queue_matches(q["name"], args.queues):
            continue
        if args.queue_states and not any(c in (q.get("states") or "") for c in args.queue_states):
            continue
        if args.pe is not None:
            offered = q.get("pe_list") or []
            if not any(minisge.formats.wildcard.fnmatch(pat, pe) for pe in offered for pat in args.pe):
                continue
        out.append(q)
    return out


# --------------------------------------------------------------------------
# output


def _options(args: Args) -> qstat_out.Options:
    width = minisge.output.qstat_out.QUEUE_WIDTH
    long_names = environment().get("SGE_LONG_QNAMES")
    if long_names:
        try:
            width = max(10, int(long_names))
        except ValueError:
            pass
    return minisge.output.qstat_out.Options(ext="-ext" in args.flags, pri="-pri" in args.flags,
                                            urg="-urg" in args.flags, tasks="-t" in args.flags,
                                            group_tasks="t" in args.group, expand_arrays="d" in args.group,
                                            resources="-r" in args.flags, queue_width=width)


def _explained(queue: dict[str, Any], explain: str, wanted: list[str] | None) -> dict[str, Any]:
    """A queue dict as printed: its messages only for ``-explain`` of a state
    it is in, its resources only those ``-F`` names."""
    q = dict(queue)
    states = q.get("states") or ""
    by_letter = q.get("explain")
    if isinstance(by_letter, dict):  # the lines of the letters asked for: a, A, then c/E
        q["messages"] = [m for c in "aAcE" if c in explain for m in by_letter.get(c) or ()]
    elif not any(c in states for c in explain):
        q["messages"] = []
    if wanted:
        q["resources"] = [r for r in q.get("resources") or () if r[1] in wanted]
    return q


def cluster_summary(queues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``-g c``: per cluster queue (sge_cqueue_qstat.c): the slot-weighted
    np_load_avg, slots used/reserved/total, and the slots of instances that
    need manual intervention (cdsuE), are temporarily disabled (aoACDS) or
    available (less the used ones)."""
    out: dict[str, dict[str, Any]] = {}
    counters = {"s": "suspend_manual", "A": "suspend_threshold", "S": "suspend_on_subordinate",
                "C": "suspend_calendar", "u": "unknown", "a": "load_alarm",
                "d": "disabled_manual", "D": "disabled_calendar", "c": "ambiguous",
                "o": "orphaned", "E": "error"}
    for q in queues:
        name = q.get("cqueue") or q["name"].split("@")[0]
        cq = out.setdefault(name, {"name": name, "used": 0, "resv": 0, "total": 0,
                                   "available": 0, "temp_disabled": 0, "manual_intervention": 0,
                                   "_load": 0.0, "_load_slots": 0, "_used_available": 0,
                                   **{v: 0 for v in counters.values()}})
        slots = int(q.get("total", 0))
        used = int(q.get("used", 0))
        cq["used"] += used
        cq["resv"] += int(q.get("resv", 0))
        cq["total"] += slots
        np_load = q.get("np_load_avg")
        if np_load is not None:
            cq["_load"] += float(np_load) * slots
            cq["_load_slots"] += slots
        states = q.get("states") or ""
        if any(c in states for c in "sudcE"):
            cq["manual_intervention"] += slots
        elif any(c in states for c in "aDoSCA"):
            cq["temp_disabled"] += slots
        else:
            cq["available"] += slots
            cq["_used_available"] += used
        for letter, key in counters.items():
            if letter in states:
                cq[key] += slots
    result = []
    for cq in out.values():
        cq["load"] = cq["_load"] / cq["_load_slots"] if cq["_load_slots"] else None
        cq["available"] -= cq["_used_available"]
        result.append(cq)
    return result


def _xml_cluster_summary(cqueues: list[dict[str, Any]]) -> str:
    """``qstat -g c -xml``."""
    out = ["<?xml version='1.0'?>\n",
           '<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/'
           'util/resources/schemas/qstat/qstat.xsd">\n']
    for cq in cqueues:
        out.append("  <cluster_queue_summary>\n")
        out.append(f"    <name>{_esc(cq['name'])}</name>\n")
        if cq["load"] is not None:
            out.append(f"    <load>{cq['load']:.5f}</load>\n")
        for key in ("used", "resv", "available", "total", "temp_disabled", "manual_intervention"):
            out.append(f"    <{key}>{int(cq[key])}</{key}>\n")
        out.append("  </cluster_queue_summary>\n")
    out.append("</job_info>\n")
    return "".join(out)


def _esc(text: object) -> str:
    return (minisge.output.text.printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))


# --------------------------------------------------------------------------
# qstat -j


def show_jobs(args: Args) -> int:
    """``qstat -j [job_list]``."""
    xml = "-xml" in args.flags
    reply = _ask({"op": operations.JOB_DETAIL, "ids": args.jobs or [], **({"xml": True} if xml else {})})
    if args.json:
        return _print_job_json(args, reply)
    if not args.jobs:
        summary = [(text, ids) for text, ids in reply.get("summary") or ()]
        details = minisge.output.job_detail_out
        if xml:
            sys.stdout.write(details.format_scheduling_summary_xml(list(reply.get("global") or ())))
        else:
            sys.stdout.write(details.format_scheduling_summary(list(reply.get("global") or ()), summary))
        return 0
    jobs = reply.get("jobs") or []
    missing = reply.get("missing") or []
    if not jobs:
        if xml:
            sys.stdout.write("<?xml version='1.0'?>\n<unknown_jobs >\n" + "".join(
                f"    <ST_name>{_esc(m)}</ST_name>\n" for m in missing) + "</unknown_jobs>\n")
            return 0
        sys.stderr.write(minisge.output.job_detail_out.format_unknown_jobs(missing))
        return 1
    reasons = {int(k): v for k, v in (reply.get("reasons") or {}).items()}
    global_info = list(reply.get("global") or ())
    if xml:
        sys.stdout.write(minisge.output.job_detail_out.format_job_details_xml(jobs, global_info, reasons))
        return 0
    sys.stdout.write(minisge.output.job_detail_out.format_job_details(jobs, global_info, reasons))
    return 0


def _print_job_json(args: Args, reply: dict[str, Any]) -> int:
    """``qstat -j [jobs] -fmt json``: exit 1 when none of the jobs named exists, as the text."""
    global_info = list(reply.get("global") or ())
    if not args.jobs:
        summary = [(str(text), list(ids)) for text, ids in reply.get("summary") or ()]
        write_json(minisge.output.json_views.qstat_job_view([], global_info, summary=summary))
        return 0
    jobs = reply.get("jobs") or []
    reasons = {int(k): v for k, v in (reply.get("reasons") or {}).items()}
    write_json(minisge.output.json_views.qstat_job_view(jobs, global_info, reasons, unknown=reply.get("missing") or []))
    return 0 if jobs else 1


def write_json(doc: dict[str, Any]) -> None:
    """A JSON view on stdout, as bytes (json_views.dumps)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(minisge.output.json_views.dumps(doc))
    sys.stdout.buffer.flush()


# --------------------------------------------------------------------------


def _ask(msg: dict[str, Any]) -> dict[str, Any]:
    reply = call(msg, unreachable=SAYS_LISTING)
    if not reply.get("ok"):
        sys.stderr.write(str(reply.get("error", "")) + "\n")
        sys.exit(int(reply.get("rc", 1) or 1))
    return reply


def _empty_json(args: Args) -> None:
    """With -fmt json, a selection that keeps nothing still prints a document (without jobs)."""
    if args.json and "c" not in args.group:
        opts = _options(args)
        views = minisge.output.json_views
        write_json(views.qstat_full_view([], [], opts) if args.full else views.qstat_view([], [], opts))


def show_status(args: Args) -> int:
    """The job listing, ``-f``/``-F``/``-explain``, ``-g c`` and their -xml."""
    xml = "-xml" in args.flags
    selecting = args.requests is not None or args.queue_users is not None  # -l, -U: the qmaster selects
    need_queues = (args.full or "c" in args.group or args.queues is not None
                   or args.queue_states or args.pe is not None or selecting)
    request: dict[str, Any] = {"op": operations.QSTAT_FULL if need_queues else operations.QSTAT, "users": args.users}
    if args.requests is not None:
        request["requests"] = args.requests
    if args.queue_users is not None:
        request["queue_users"] = args.queue_users
    if args.resources is not None:
        request["resources"] = True
    if "z" in args.states:
        request["finished"] = True
    if not args.flags & {"-ext", "-pri", "-urg", "-r", "-xml"}:
        request["detail"] = False  # the listing's columns alone: a lighter reply
        request["brief"] = True  # and a plain pending job as one array (qstat_out.BRIEF_KEYS)
    reply = _ask(request)
    if reply.get("unknown_resource"):
        return 1  # 8.1.9: nothing printed
    queue_info: list[dict[str, Any]] = []
    if need_queues:
        queue_info = select_queues(list(reply.get("queue_info") or ()), args)
        if not queue_info and (args.queues is not None or args.queue_states or args.pe is not None
                               or args.queue_users is not None):
            _empty_json(args)
            return 1  # Grid Engine prints nothing when no queue instance matches
        if not queue_info and args.requests is not None:
            _empty_json(args)
            return 0  # -l: nothing printed either, but no error (8.1.9)
    if "c" in args.group:
        if args.json:
            sys.stderr.write("error: -fmt json is not supported with -g c\n")
            return 1
        cqueues = cluster_summary(queue_info or [])
        if xml:
            sys.stdout.write(_xml_cluster_summary(cqueues))
        else:
            sys.stdout.write(minisge.output.qstat_out.format_cluster_summary(cqueues, ext="-ext" in args.flags,
                                                                     queue_width=_options(args).queue_width))
        return 0
    names = {q["name"] for q in queue_info} if need_queues else None
    hidden = set(reply.get("hide_pending") or ())
    brief = None
    if args.json or xml:
        jobs = select_jobs(reply_jobs(reply), args.states, names, hidden)
    else:  # the plain pending jobs as they came: printed without a dict each
        jobs = select_jobs(list(reply.get("jobs") or ()), args.states, names, hidden)
        brief = select_brief(reply_brief(reply), args.states, hidden)
    finished = list(reply.get("finished") or ())  # -s z
    if not (jobs or brief or finished or args.full or args.json or xml):
        return 0  # no job line: the listing prints nothing at all (qstat_out.format_job_list), unloaded
    load_when_used(lambda: minisge.output.qstat_out)  # the collector off, then the listing's objects frozen
    opts = _options(args)
    if args.full:
        queues = [_explained(q, args.explain, args.resources) for q in queue_info]
        if "-ne" in args.flags:
            busy = {qname for j in jobs for t in j.get("tasks") or ()
                    for qname, _ in (t.get("granted") or ())}
            queues = [q for q in queues if q["name"] in busy]
        if args.json:
            write_json(minisge.output.json_views.qstat_full_view(queues, jobs, opts, finished))
        elif xml:
            sys.stdout.write(minisge.output.qstat_out.format_xml(jobs, queues, full=True, opts=opts, finished=finished))
        else:
            sys.stdout.write(minisge.output.qstat_out.format_full(queues, jobs, opts, finished=finished, brief=brief))
        return 0
    order = [q["name"] for q in queue_info] if need_queues else reply.get("queues")
    if args.json:
        write_json(minisge.output.json_views.qstat_view(jobs, order, opts, finished))
    elif xml:
        sys.stdout.write(minisge.output.qstat_out.format_xml(jobs, order, opts=opts, finished=finished))
    else:
        sys.stdout.write(minisge.output.qstat_out.format_job_list(jobs, order, opts, finished=finished, brief=brief))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    argv = with_defaults(argv, read_default_options(default_files(Cell.from_env().common, _home())))
    try:
        args = parse_args(argv)
    except CommandLineError as err:
        sys.stderr.write((USAGE if err.usage else "") + err.text + "\n")
        return 1
    if args.help:
        sys.stdout.write(USAGE)
        return 0
    if args.jobs is not None:
        return show_jobs(args)
    return show_status(args)


if __name__ == "__main__":
    sys.exit(main())
