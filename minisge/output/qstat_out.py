"""``qstat`` output, byte-exact with Grid Engine 8.1.9 (standard library only).

The qmaster answers a qstat request with plain dicts; these functions print
them exactly as Grid Engine's qstat does.  Selecting jobs and queues (``-u``,
``-s``, ``-q``, ``-l``, ``-pe``...) is the command's work: the functions print
what they are given, in Grid Engine's order (see "Order" below).

Job dict (one per job; ``-j`` uses more keys, see :func:`format_job_detail`)::

    job_number       int
    name             str      job name (cut to 10 columns in listings)
    owner            str
    submission_time  int      epoch seconds
    slots            int      slots requested (printed on pending lines); 1
    array            bool     submitted with -t (prints the ja-task-ID column)
    prio             float    normalized priority, 0..1 ("prior"); 0.0
    state            str      state letters ("qw", "hqw", "r", "Eqw", ...)
    queue            str|None queue instance "all.q@host" when running
    start_time       int      epoch seconds, for a running job
    tasks            list     array jobs: one dict per task (see below); a
                              job without "tasks" is its own single task
    -ext:  ntckts project department tickets override_tickets otickets
           ftickets stickets share, and per task cpu (s) mem (GB s) io (GB)
           (None = no usage reported: "NA" on running lines)
    -pri:  nurg nppri ntckts priority (the POSIX -p value)
    -urg:  nurg urg rrcontr wtcontr dlcontr deadline (epoch, 0 = none)
    -r:    pe, pe_range (str, "2" or "2-4"), granted_pe, checkpoint,
           hard_resources [(name, value, urgency contribution)],
           default_requests [(name, value)], soft_resources [(name, value)],
           hard_queues, soft_queues, master_queues [str],
           predecessors_requested [str], predecessors [int],
           ad_predecessors_requested [str], ad_predecessors [int],
           binding (str, "NONE")
    job_is_first_task bool  False when its granted PE says so (-g t: the
                            master queue gets a MASTER line beside its slots)

Task dict (enrolled array task, or a block of pending tasks)::

    task_number  int          or  ranges [(start, end, step)] for a block
    state, queue, start_time, prio, cpu, mem, io   as for the job
    granted      [(queue instance, slots), ...]  first = master queue;
                 default [(queue, slots)]
    slots        int          granted slots in total (default: sum of granted)

A pending line of an array job collapses all its pending tasks that share a
state into one range list (``2-8:1``, ``1-10:3``, ``4,5``); ``-g d`` prints
one line per task.  Running tasks get one line each.

Queue instance dict (``-f``, ``-F``, ``-explain``, ``-f -xml``)::

    name      "all.q@vm"      qtype "BIP"    resv used total  int
    load_avg  float|None      arch  str|None states str ("" for none)
    messages  [str]           alarm/explain lines ("\\t" + line)
    resources [(dominance, name, value)]  -F lines ("hl", "arch", "lx-amd64")

Cluster queue dict (``-g c``): name load(None = -NA-) used resv available
total temp_disabled manual_intervention, and for ``-ext`` suspend_manual
suspend_threshold suspend_on_subordinate suspend_calendar unknown load_alarm
disabled_manual disabled_calendar ambiguous orphaned error.

Order: running lines come queue instance by queue instance (the ``queues``
order given, by default cluster queue then host name), and within a queue in
the order of ``jobs``; pending lines follow, sorted by priority (highest
first) then job number, as sgeee_sort_jobs does.

Dates are printed in local time, as Grid Engine does (the TZ of the caller).
"""

from __future__ import annotations

import time

from minisge.output.resource_value import format_memory
from minisge.output.text import printable, xml_escape

TYPE_CHECKING = False  # not typing's (nor collections'): qsub and qstat must not pay for importing them
if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Mapping, Sequence
    from typing import Any

__all__ = [
    "Options",
    "compress_task_ids",
    "compress_task_runs",
    "format_task_ranges",
    "format_job_list",
    "format_full",
    "format_cluster_summary",
    "format_xml",
    "format_memory",
]

QUEUE_WIDTH = 30
_PENDING_BANNER = " - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS"
_FINISHED_BANNER = " --  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  --  "
_HASHES_EXT = "#" * 110
_XML_HEAD = ("<?xml version='1.0'?>\n"
             '<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/'
             'util/resources/schemas/qstat/qstat.xsd">\n')


class Options:
    """The display switches of a qstat run.

    ``ext`` (-ext), ``pri`` (-pri), ``urg`` (-urg), ``tasks`` (-t, which
    implies ``group_tasks``), ``group_tasks`` (-g t: one line per slot with
    MASTER/SLAVE), ``expand_arrays`` (-g d), ``resources`` (-r),
    ``queue_width`` (SGE_LONG_QNAMES; 30 by default, at least 10).
    """

    __slots__ = ("ext", "pri", "urg", "tasks", "group_tasks", "expand_arrays",
                 "resources", "queue_width", "full")

    def __init__(self, *, ext: bool = False, pri: bool = False, urg: bool = False,
                 tasks: bool = False, group_tasks: bool = False,
                 expand_arrays: bool = False, resources: bool = False,
                 queue_width: int = QUEUE_WIDTH) -> None:
        self.ext = ext
        self.pri = pri
        self.urg = urg
        self.tasks = tasks
        self.group_tasks = group_tasks or tasks
        self.expand_arrays = expand_arrays
        self.resources = resources
        self.queue_width = queue_width
        self.full = False

    @property
    def show_time(self) -> bool:
        """The submit/start column is hidden by -ext alone."""
        return (not self.ext) or self.tasks or self.urg or self.pri


# --------------------------------------------------------------------------
# small value formats


def _ctime(epoch: float) -> str:
    """sge_ctime: ``MM/DD/YYYY HH:MM:SS`` in local time."""
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(int(epoch)))


def reservation_message(start: float, granted: Iterable[tuple[str, str, int]]) -> str:
    """``qstat -j``'s scheduling info line of a ``-R y`` job the last pass
    reserved for (minisge's own: 8.1.9's ``qstat -j`` does not say it; its
    schedule file does): when it is to start and where."""
    where = ",".join(f"{cqueue}@{host}={n}" for cqueue, host, n in granted)
    return f"resources reserved for the job from {_ctime(start)} in {where}"


def _ctime_xml(epoch: float) -> str:
    """sge_ctimeXML: ``YYYY-MM-DDTHH:MM:SS`` in local time."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(int(epoch)))


def _opti8(value: float) -> str:
    """OPTI_PRINT8: ``%8.0f`` or, above 99999999, ``%8.3g``; then a blank."""
    value = float(value)
    if value > 99999999:
        return _c_g3(value, 8) + " "
    return f"{value:8.0f} "


def _c_g3(value: float, width: int = 0) -> str:
    """C's ``%.3g`` (Python's ``g`` writes the exponent the same way)."""
    return f"{value:{width}.3g}"


def _cut(text: Any, width: int) -> str:
    """printf ``%-W.Ws``: cut to ``width`` then left-justify (a user's text without its control characters)."""
    return f"{printable(text)[:width]:<{width}}"


# --------------------------------------------------------------------------
# task id ranges


def format_task_ranges(ranges: Iterable[Sequence[int]]) -> str:
    """range_list_print_to_string: ``a-b:s`` per range, joined by ``,``; a
    one-task range is ``a``, a two-task range ``a,b``."""
    parts = []
    for start, end, step in ranges:
        if start == end:
            parts.append(f"{start}")
        elif start + step == end:
            parts.append(f"{start},{end}")
        else:
            parts.append(f"{start}-{end}:{step}")
    return ",".join(parts)


def compress_task_ids(ids: Iterable[int]) -> list[tuple[int, int, int]]:
    """Task ids to ranges the way Grid Engine does (range_list_insert_id in
    ascending order, then range_list_compress): ``1 2 3`` → ``1-3:1``,
    ``1 4 7 10`` → ``1-10:3``."""
    runs: list[list[int]] = []
    for task in sorted(set(int(i) for i in ids)):
        if runs and runs[-1][1] + runs[-1][2] == task:
            runs[-1][1] = task
        else:
            runs.append([task, task, 1])
    return compress_task_runs((lo, hi) for lo, hi, _ in runs)


def compress_task_runs(runs: Iterable[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """:func:`compress_task_ids` of ids given as their maximal runs of
    consecutive ids ``(first, last)``, ascending: what a million ids in one
    run cost is one run (range_list_compress over the inserted ranges)."""
    merged: list[list[int]] = []
    for s2, e2 in runs:
        st2 = 1
        if not merged:
            merged.append([s2, e2, st2])
            continue
        s1, e1, st1 = merged[-1]
        if e1 + st1 == s2 and st1 == st2:
            merged[-1] = [s1, e2, st1]
        elif s1 == e1 and st1 == 1 and e1 == s2 - st2:
            merged[-1] = [s1, e2, st2]
        elif s2 == e2 and st2 == 1 and e1 + st1 == e2:
            merged[-1] = [s1, e2, st1]
        elif s1 == e1 and s2 == e2 and st1 == st2 == 1:
            merged[-1] = [s1, s2, s2 - s1]
        else:
            merged.append([s2, e2, st2])
    return [(a, b, c) for a, b, c in merged]


# --------------------------------------------------------------------------
# from jobs to lines


class JobRow:
    """One printed job line (Grid Engine's job_summary_t)."""

    __slots__ = ("job", "task", "print_jobid", "queue", "master", "slots", "task_id",
                 "running", "state", "time", "values")

    def __init__(self, job: Mapping[str, Any], task: Mapping[str, Any], *, print_jobid: bool = True,
                 queue: str | None = None, master: str | None = None, slots: int = 1,
                 task_id: str | None = None, running: bool = False) -> None:
        self.job = job
        self.task = task
        self.print_jobid = print_jobid
        self.queue = queue
        self.master = master
        self.slots = slots
        self.task_id = task_id
        self.running = running
        self.state = str(_val(task, job, "state", ""))
        self.time = _val(task, job, "start_time", 0) if running else job.get("submission_time", 0)

    def get(self, key: str, default: Any = 0) -> Any:
        return _val(self.task, self.job, key, default)


def _val(task: Mapping[str, Any], job: Mapping[str, Any], key: str, default: Any) -> Any:
    """A value of the task, else of the job, else ``default``."""
    if key in task and task[key] is not None:
        return task[key]
    value = job.get(key)
    return default if value is None else value


def _tasks(job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tasks = job.get("tasks")
    return list(tasks) if tasks else [job]


def granted_queues(task: Mapping[str, Any], job: Mapping[str, Any]) -> list[tuple[str, int]]:
    granted = task.get("granted")
    if granted:
        return [(str(q), int(s)) for q, s in granted]
    queue = _val(task, job, "queue", None)
    return [(queue, int(_val(task, job, "slots", 1)))] if queue else []


def _is_running(task: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    return bool(granted_queues(task, job))


def _default_queue_order(names: Iterable[str]) -> list[str]:
    """Queue instances sorted by cluster queue, then host (seq_no all 0)."""
    return sorted(set(names), key=lambda n: tuple(n.split("@", 1)) if "@" in n else (n, ""))


def listing_queue_order(jobs: Sequence[Mapping[str, Any]], queues: Sequence[str] | None) -> list[str]:
    """The order of the running lines of a listing: ``queues`` as given, or
    the queue instances the jobs run in, by cluster queue then host."""
    if queues is not None:
        return [str(q) for q in queues]
    return _default_queue_order(q for job in jobs for task in _tasks(job) for q, _ in granted_queues(task, job))


def running_rows(jobs: Sequence[Mapping[str, Any]], queue_names: Sequence[str],
                  opts: Options) -> list[tuple[str, JobRow]]:
    """Running lines, queue by queue (qstat_handle_running_jobs)."""
    rows: list[tuple[str, JobRow]] = []
    # the running tasks once, in the order of ``jobs`` (a big listing is mostly pending jobs)
    running = [(job, task, granted) for job in jobs if _may_run(job) for task in _tasks(job)
               if (granted := granted_queues(task, job))]
    for qname in queue_names:
        for job, task, granted in running:
            total = sum(s for _, s in granted)
            for index, (gq, gslots) in enumerate(granted):
                if gq != qname:
                    continue
                master = index == 0
                rows.extend((qname, r) for r in _lines_for_grant(
                    job, task, gq, gslots, total, master, opts))
    return rows


def _may_run(job: Mapping[str, Any]) -> bool:
    """The job has a task that may be running (a job without ``tasks`` runs
    when it has a queue; a pending job without tasks has none)."""
    return bool(job.get("tasks") or job.get("granted") or job.get("queue"))


def _lines_for_grant(job: Mapping[str, Any], task: Mapping[str, Any], queue: str, slots: int, total: int,
                     master: bool, opts: Options) -> list[JobRow]:
    """The lines one granted queue of a running task gets."""
    task_id = str(task["task_number"]) if "task_number" in task else None
    if not opts.group_tasks:
        if not master and not opts.full:
            return []
        per_line = slots if opts.full else total
        return [JobRow(job, task, queue=queue, slots=per_line, task_id=task_id, running=True)]
    adjust = 1 if master and job.get("granted_pe") and not job.get("job_is_first_task", True) else 0
    lines = []
    for i in range(slots + adjust):
        lines.append(JobRow(job, task, print_jobid=(i == 0), queue=queue,
                          master="MASTER" if master and i == 0 else "SLAVE",
                          slots=1, task_id=task_id, running=True))
    return lines


def _pending_sort_key(job: Mapping[str, Any]) -> tuple[float, int]:
    if not _may_run(job):  # the usual pending job: its own single task
        return (-float(_val(job, job, "prio", 0.0)), int(job["job_number"]))
    pending = [t for t in _tasks(job) if not _is_running(t, job)]
    prio = _val(pending[0], job, "prio", 0.0) if pending else job.get("prio", 0.0)
    return (-float(prio), int(job["job_number"]))


def pending_rows(jobs: Sequence[Mapping[str, Any]], opts: Options) -> list[JobRow]:
    """Pending lines (handle_pending_jobs): tasks of a job that share a state
    and their holds are grouped into one line with their range list, unless -g d."""
    rows: list[JobRow] = []
    for job in sorted(jobs, key=_pending_sort_key):
        slots = int(job.get("slots", 1) or 1)
        if not job.get("tasks"):
            if not _may_run(job):
                rows.append(JobRow(job, job, slots=slots))
            continue
        pending = [t for t in _tasks(job) if not _is_running(t, job)]
        groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for task in pending:  # one line per state and kind of hold (job_create_hold_id_lists)
            key = (str(_val(task, job, "state", "")), str(_val(task, job, "holds", "")))
            groups.setdefault(key, []).append(task)
        for tasks in groups.values():
            ids: list[int] = []
            for task in tasks:
                if "ranges" in task:
                    for start, end, step in task["ranges"]:
                        ids.extend(range(int(start), int(end) + 1, int(step)))
                else:
                    ids.append(int(task["task_number"]))
            if opts.expand_arrays:
                for tid in sorted(ids):
                    rows.append(JobRow(job, tasks[0], slots=slots, task_id=str(tid)))
            else:
                explicit = [t for t in tasks if "ranges" in t]
                if len(tasks) == 1 and explicit:
                    text = format_task_ranges(explicit[0]["ranges"])
                else:
                    text = format_task_ranges(compress_task_ids(ids))
                rows.append(JobRow(job, tasks[0], slots=slots, task_id=text))
    return rows


def finished_rows(finished: Sequence[Mapping[str, Any]]) -> list[JobRow]:
    """The lines of ``-s z``: one per finished job, in the order they
    finished, an array's task ranges in its ja-task-ID column."""
    rows = []
    for job in finished:
        tasks = job.get("tasks") or ()
        text = ",".join(format_task_ranges(t["ranges"]) for t in tasks if "ranges" in t) or None
        rows.append(JobRow(job, job, slots=int(job.get("slots", 1) or 1), task_id=text))
    return rows


# --------------------------------------------------------------------------
# the job table


def _job_header(opts: Options) -> str:
    """The two header lines of a job listing (job_stdout_job)."""
    w = opts.queue_width
    usage = "cpu        mem     io      "
    head = (
        f"{'job-ID':<7.7} prior  "
        + (" nurg   " if opts.pri or opts.urg else "")
        + (" npprior" if opts.pri else "")
        + (" ntckts " if opts.pri or opts.ext else "")
        + (" urg      rrcontr  wtcontr  dlcontr " if opts.urg else "")
        + ("  ppri" if opts.pri else "")
        + f" {'name':<10} {'user':<12} "
        + ("project          department " if opts.ext else "")
        + f"{'state':<5} "
        + ("submit/start at     " if opts.show_time else "")
        + (" deadline           " if opts.urg else "")
        + (usage if opts.ext else "")
        + ("tckts ovrts otckt ftckt stckt share " if opts.ext else "")
        + f"{'queue':<{w}.{w}} "
        + ("master" if opts.group_tasks else "slots")
        + " ja-task-ID "
        + ("task-ID state " + usage + "stat failed " if opts.tasks else "")
    )
    rule = ("-" * 93 + "-" * (w - 10) + ("-" if opts.group_tasks else "")
            + ("-" * 79 if opts.ext else "") + ("-" * 53 if opts.tasks else "")
            + ("-" * 64 if opts.urg else "") + ("-" * 35 if opts.pri else ""))
    return head + "\n" + rule + "\n"


def _job_line(row: JobRow, opts: Options, times: dict[Any, str] | None = None) -> str:
    """One job line, field by field as job_stdout_job prints it; ``times``:
    the dates (and names) already printed by this listing (many jobs share a second)."""
    show = row.print_jobid
    if show and not (opts.pri or opts.urg or opts.ext):
        return _plain_line(row, opts, times)
    out: list[str] = []
    blank8 = " " * 8
    out.append(f"{int(row.job['job_number']):7d} " if show else blank8)
    out.append(f"{float(row.get('prio', 0.0)):7.5f} " if show else blank8)
    if opts.pri or opts.urg:
        out.append(f"{float(row.get('nurg', 0.0)):7.5f} " if show else blank8)
    if opts.pri:
        out.append(f"{float(row.get('nppri', 0.0)):7.5f} " if show else blank8)
    if opts.pri or opts.ext:
        out.append(f"{float(row.get('ntckts', 0.0)):7.5f} " if show else blank8)
    if opts.urg:
        if show:
            out.extend(_opti8(row.get(k, 0)) for k in ("urg", "rrcontr", "wtcontr", "dlcontr"))
        else:
            out.append(" " * 36)
    if opts.pri:
        out.append(f"{int(row.get('priority', 0)):5d} " if show else " " * 18)
    if show:
        out.append(_cut(row.job.get("name", ""), 10) + " ")
        out.append(_cut(row.job.get("owner", ""), 12) + " ")
    else:
        out.append(" " * 24)
    if opts.ext:
        if show:
            out.append(_cut(row.get("project", None) or "NA", 16) + " ")
            out.append(_cut(row.get("department", None) or "NA", 10) + " ")
        else:
            out.append(" " * 28)
    out.append(_cut(row.state, 5) + " " if show else " " * 6)
    if opts.show_time:
        if not show:
            out.append(" " * 20)
        elif times is None:
            out.append(_ctime(row.time) + " ")
        else:
            text = times.get(row.time)
            if text is None:
                text = times[row.time] = _ctime(row.time)
            out.append(text + " ")
    if opts.urg:
        deadline = row.get("deadline", 0)
        out.append(_ctime(deadline) + " " if show and deadline else " " * 20)
    if opts.ext:
        out.append(_ext_usage(row))
    if not opts.full:
        w = opts.queue_width
        out.append(f"{(row.queue or '')[:w]:<{w}} ")
    if opts.group_tasks:
        out.append(f"{row.master[:6]:<7}" if row.master else " " * 7)
    else:
        out.append(f"{row.slots:5d} ")
    is_array = bool(row.job.get("array") or row.job.get("tasks"))
    out.append(row.task_id if row.task_id and is_array else " " * 7)
    out.append("\n")
    return "".join(out)


def _plain_line(row: JobRow, opts: Options, times: dict[Any, str] | None) -> str:
    """:func:`_job_line` of a first line without the -ext/-pri/-urg columns
    (a plain listing of many jobs: the same text, at less cost)."""
    job = row.job
    text = times.get(row.time) if times is not None else None
    if text is None:
        text = _ctime(row.time)
        if times is not None:
            times[row.time] = text
    if opts.full:
        queue = ""
    else:
        w = opts.queue_width
        queue = f"{(row.queue or '')[:w]:<{w}} "
    if opts.group_tasks:
        slots = f"{row.master[:6]:<7}" if row.master else "       "
    else:
        slots = f"{row.slots:5d} "
    is_array = bool(job.get("array") or job.get("tasks"))
    who = (job.get("name", ""), job.get("owner", ""), row.state)  # shared by many jobs of a listing
    columns = times.get(who) if times is not None else None
    if columns is None:
        columns = f"{_cut(who[0], 10)} {_cut(who[1], 12)} {_cut(who[2], 5)}"
        if times is not None:
            times[who] = columns
    return (f"{int(job['job_number']):7d} {float(row.get('prio', 0.0)):7.5f} {columns} {text} {queue}{slots}"
            f"{row.task_id if row.task_id and is_array else '       '}\n")


def _ext_usage(row: JobRow) -> str:
    """The -ext columns: cpu mem io, then the tickets and share."""
    na = "NA" if row.running else ""
    cpu = row.task.get("cpu") if row.task is not row.job else row.job.get("cpu")
    mem = row.task.get("mem") if row.task is not row.job else row.job.get("mem")
    io = row.task.get("io") if row.task is not row.job else row.job.get("io")
    parts = []
    if cpu is None:
        parts.append(f"{na:<10} ")
    else:
        secs = int(cpu)
        days, secs = divmod(secs, 86400)
        hours, secs = divmod(secs, 3600)
        minutes, secs = divmod(secs, 60)
        parts.append(f"{days}:{hours:02d}:{minutes:02d}:{secs:02d} ")
    parts.append(f"{na:<7} " if mem is None else f"{float(mem):<5.5f} ")
    parts.append(f"{na:<7} " if io is None else f"{float(io):<5.5f} ")
    for key in ("tickets", "override_tickets", "otickets", "ftickets", "stickets"):
        parts.append(f"{int(row.get(key, 0)):5d} ")
    parts.append(f"{float(row.get('share', 0.0)):<5.2f} ")
    return "".join(parts)


def _resource_lines(row: JobRow) -> str:
    """The -r block under a job line (job_stdout_* handlers of qstat.c)."""
    job = row.job
    indent = " " * 7
    out = [f"{indent}Full jobname:     {printable(job.get('name', ''))}\n"]
    if row.queue and row.running:
        master_queue = granted_queues(row.task, job)[0][0] if granted_queues(row.task, job) else row.queue
        out.append(f"{indent}Master Queue:     {master_queue}\n")
    if job.get("pe"):
        out.append(f"{indent}Requested PE:     {job['pe']} {job.get('pe_range', '')}\n")
    if row.running and job.get("granted_pe"):
        total = sum(s for _, s in granted_queues(row.task, job))
        out.append(f"{indent}Granted PE:       {job['granted_pe']} {total}\n")
    if job.get("checkpoint"):
        out.append(f"{indent}Checkpoint Env.:  {job['checkpoint']}\n")
    out.append(f"{indent}Hard Resources:   ")
    hard = list(job.get("hard_resources") or ())
    for i, (name, value, contribution) in enumerate(hard):
        out.append(("" if i == 0 else " " * 25) + f"{name}={printable(value or '')} ({float(contribution):f})\n")
    if not hard:
        out.append("\n")
    for name, value in job.get("default_requests") or ():
        out.append(f"{indent}{name}={printable(value)} (default)\n")
    out.append(f"{indent}Soft Resources:   ")
    soft = list(job.get("soft_resources") or ())
    for i, (name, value) in enumerate(soft):
        out.append(("" if i == 0 else " " * 25) + f"{name}={printable(value or '')}\n")
    if not soft:
        out.append("\n")
    for key, label, conv in (
        ("hard_queues", "Hard requested queues", str),
        ("soft_queues", "Soft requested queues", str),
        ("master_queues", "Master task hard requested queues", str),
        ("predecessors_requested", "Predecessor Jobs (request)", str),
        ("predecessors", "Predecessor Jobs", int),
        ("ad_predecessors_requested", "Predecessor Array Jobs (request)", str),
        ("ad_predecessors", "Predecessor Array Jobs", int),
    ):
        values = job.get(key)
        if values:
            out.append(f"{indent}{label}: " + ", ".join(printable(conv(v)) for v in values) + "\n")
    out.append(f"{indent}Binding:          {printable(job.get('binding') or 'NONE')}\n")
    return "".join(out)


def _render_rows(rows: Iterable[JobRow], opts: Options, times: dict[Any, str] | None = None) -> str:
    times = {} if times is None else times  # local time in this process: one call's cache, never the module's
    return "".join(_row_text(row, opts, times) for row in rows)


def _row_text(row: JobRow, opts: Options, times: dict[Any, str]) -> str:
    """A job line, and its -r block under it."""
    if opts.resources and row.print_jobid:
        return _job_line(row, opts, times) + _resource_lines(row)
    return _job_line(row, opts, times)


def _options(opts: Options | None, kw: Mapping[str, Any]) -> Options:
    if opts is None:
        opts = Options(**kw)
    elif kw:
        raise TypeError("give either an Options object or keyword switches, not both")
    return opts


def format_job_list(jobs: Sequence[Mapping[str, Any]], queues: Sequence[str] | None = None,
                    opts: Options | None = None, finished: Sequence[Mapping[str, Any]] = (),
                    brief: BriefJobs | None = None, **switches: Any) -> str:
    """The default ``qstat`` listing (also ``-ext -pri -urg -t -g t -g d -r``).

    ``jobs``: job dicts (module docstring); ``queues``: queue instance names in
    Grid Engine's order (default: cluster queue, then host); ``finished``:
    the finished jobs of ``-s z``, after the pending ones; ``brief``: more
    pending jobs, each a plain one as the values of :data:`BRIEF_KEYS`
    (without -ext/-pri/-urg/-r).  Prints nothing at all when there is no job line.
    """
    opts = _options(opts, switches)
    opts.full = False
    names = listing_queue_order(jobs, queues)
    running = [row for _, row in running_rows(jobs, names, opts)]
    pending = pending_rows(jobs, opts)
    rows = finished_rows(finished)
    if not (running or pending or brief or rows):
        return ""
    return (_job_header(opts) + _render_rows(running, opts) + _render_pending(pending, brief, opts)
            + _render_rows(rows, opts))


#: A plain pending job (no array, no task of its own) as a list of these
#: values (the keys of its job dict; ``array`` false): a :class:`BriefJobs`' row.
BRIEF_KEYS = ("job_number", "name", "owner", "submission_time", "slots", "prio", "state", "holds")


def brief_job(row: Sequence[Any]) -> dict[str, Any]:
    """The job dict of a :data:`BRIEF_KEYS` row."""
    return dict(zip(BRIEF_KEYS, row, strict=True), array=False)


class BriefJobs:
    """A long queue's plain pending jobs as the qmaster sends them (the
    ``brief_jobs`` of a listing, minisge.protocol.catalogue.BRIEF_JOBS):
    the listing shapes they share, each ``[name, owner, slots, prio, state,
    holds]`` (few: like jobs have one), and per job, in job number order,
    its number, its submission time and the index of its shape, three by
    three in one flat list of ints (``columns``): a reply of 10,000 jobs is
    30,000 ints to encode and decode, and a line is its number and date
    around its shape's text."""

    __slots__ = ("shapes", "numbers", "times", "kinds")

    def __init__(self, shapes: Sequence[Sequence[Any]], columns: Sequence[int]):
        self.shapes = [list(x) for x in shapes]
        self.numbers: Sequence[int] = columns[0::3]
        self.times: Sequence[int] = columns[1::3]
        self.kinds: Sequence[int] = columns[2::3]

    @classmethod
    def of_rows(cls, rows: Iterable[Sequence[Any]]) -> BriefJobs:
        """The :data:`BRIEF_KEYS` rows (in job number order) as brief jobs."""
        shapes: dict[tuple[Any, ...], int] = {}
        columns: list[int] = []
        for number, name, owner, submitted, slots, prio, state, holds in rows:
            kind = shapes.setdefault((name, owner, slots, prio, state, holds), len(shapes))
            columns += (number, submitted, kind)
        return cls([list(k) for k in shapes], columns)

    def wire(self) -> dict[str, Any]:
        """The reply's value (catalogue BRIEF_JOBS)."""
        columns: list[int] = [0] * (3 * len(self.numbers))
        columns[0::3], columns[1::3], columns[2::3] = self.numbers, self.times, self.kinds
        return {"shapes": self.shapes, "columns": columns}

    def __len__(self) -> int:
        return len(self.numbers)

    def rows(self) -> list[list[Any]]:
        """Each job as its :data:`BRIEF_KEYS` row."""
        return [[n, *sh[:2], t, *sh[2:]] for n, t, sh in
                zip(self.numbers, self.times, (self.shapes[k] for k in self.kinds), strict=True)]

    def kept(self, holds: Callable[[str], bool] | None, hidden: Container[int]) -> BriefJobs:
        """The jobs whose shape's holds ``holds`` keeps (None: all) and that
        ``hidden`` does not name."""
        shapes_kept = [holds is None or holds(str(sh[5])) for sh in self.shapes]
        if all(shapes_kept) and not hidden:
            return self
        out = BriefJobs(self.shapes, ())
        picked = [i for i, (n, k) in enumerate(zip(self.numbers, self.kinds, strict=True))
                  if shapes_kept[k] and n not in hidden]
        out.numbers = [self.numbers[i] for i in picked]
        out.times = [self.times[i] for i in picked]
        out.kinds = [self.kinds[i] for i in picked]
        return out


def _render_pending(rows: Sequence[JobRow], brief: BriefJobs | None, opts: Options) -> str:
    """The pending lines of ``rows`` (in order) and of the ``brief`` jobs
    merged into them by priority (highest first) then job number, as
    :func:`pending_rows` orders them, each brief job's line as
    :func:`_plain_line` would print its job dict."""
    if not brief:
        return _render_rows(rows, opts)
    memo: dict[Any, Any] = {}
    shapes = brief.shapes
    prios = [-float(sh[3] or 0.0) for sh in shapes]
    numbers, kinds = brief.numbers, brief.kinds
    order: Iterable[int]
    if len({prios[k] for k in set(kinds)}) > 1:
        order = sorted(range(len(numbers)), key=lambda i: (prios[kinds[i]], numbers[i]))
    elif list(numbers) != sorted(numbers):  # one priority for all (a held queue): by number alone
        order = sorted(range(len(numbers)), key=numbers.__getitem__)
    else:
        order = range(len(numbers))
    lines = _brief_lines(brief, order, opts, memo)
    if not rows:
        return "".join(lines)
    out = []
    r = 0
    for i, line in zip(order, lines, strict=True):
        key = (prios[kinds[i]], int(numbers[i]))
        while r < len(rows) and _pending_sort_key(rows[r].job) < key:
            out.append(_row_text(rows[r], opts, memo))
            r += 1
        out.append(line)
    out.extend(_row_text(row, opts, memo) for row in rows[r:])
    return "".join(out)


def _brief_lines(brief: BriefJobs, order: Iterable[int], opts: Options, memo: dict[Any, Any]) -> list[str]:
    """The lines of brief pending jobs (``order``: their indices in
    listing order): each as :func:`_plain_line` prints its job dict, the
    text of each shape (priority, name, owner, state, slots) made once."""
    tail = "" if opts.full else f"{'':<{opts.queue_width}} "
    heads, tails = [], []
    for name, owner, slots, prio, state, _holds in brief.shapes:
        heads.append(f" {float(prio or 0.0):7.5f} {_cut(name, 10)} {_cut(owner, 12)} {_cut(state, 5)} ")
        tails.append(" " + tail + ("       " if opts.group_tasks else f"{int(slots or 1):5d} ") + "       \n")
    numbers, times, kinds = brief.numbers, brief.times, brief.kinds
    jobs = zip(numbers, times, kinds, strict=True) if isinstance(order, range) else \
        ((numbers[i], times[i], kinds[i]) for i in order)
    out = []
    line_tail, last = "", None  # all but the number: the same from job to job of one shape and second
    for number, submitted, k in jobs:
        if (submitted, k) != last:
            when = memo.get(submitted)
            if when is None:
                when = memo[submitted] = _ctime(submitted)
            line_tail, last = heads[k] + when + tails[k], (submitted, k)
        out.append(f"{number:7d}{line_tail}")
    return out


# --------------------------------------------------------------------------
# qstat -f


def _queue_header(opts: Options, load_name: str) -> str:
    w = opts.queue_width
    return (f"{'queuename':<{w}.{w}} {'qtype':<5} {'resv/used/tot.':<14} "
            f"{load_name[:8]:<8} {'arch':<13} states\n")


def _queue_line(queue: Mapping[str, Any], opts: Options) -> str:
    """A queue instance line of ``qstat -f`` (qstat_stdout_queue_summary)."""
    w = opts.queue_width
    rule = "-" * 81 + ("-" * 108 if opts.ext else "") + "-" * max(0, w - 30) + "\n"
    used = f"{int(queue.get('resv', 0))}/{int(queue.get('used', 0))}/{int(queue.get('total', 0))} "
    load = queue.get("load_avg")
    load_text = "-NA- " if load is None else f"{float(load):2.2f} "
    arch = queue.get("arch")
    arch_text = "-NA- " if arch is None else f"{arch} "
    states = queue.get("states")
    line = (f"{str(queue['name'])[:w]:<{w}} {_cut(queue.get('qtype', ''), 5)} "
            f"{_cut(used, 14)} {_cut(load_text, 8)} {_cut(arch_text, 13)} "
            f"{'NA' if states is None else states}\n")
    extra = "".join(f"\t{printable(m)}\n" for m in queue.get("messages") or ())
    extra += "".join(f"\t{d}:{n}={printable(v)}\n" for d, n, v in queue.get("resources") or ())
    return rule + line + extra


def _pending_banner(opts: Options, text: str = _PENDING_BANNER) -> str:
    hashes = "#" * 76 + (_HASHES_EXT if opts.ext else "")
    return f"\n{hashes}\n{text}\n{hashes}\n"


def format_full(queues: Sequence[Mapping[str, Any]], jobs: Sequence[Mapping[str, Any]],
                opts: Options | None = None, load_name: str = "load_avg",
                finished: Sequence[Mapping[str, Any]] = (), brief: BriefJobs | None = None,
                **switches: Any) -> str:
    """``qstat -f`` (and ``-F``, ``-explain``, ``-f -r``...): every queue
    instance with its jobs, then the pending jobs under their ``####`` banner,
    then the ``finished`` ones (``-s z``) under theirs.
    ``queues`` are queue instance dicts in display order; ``brief``: more
    pending jobs as in :func:`format_job_list`."""
    opts = _options(opts, switches)
    opts.full = True
    names = [str(q["name"]) for q in queues]
    running = running_rows(jobs, names, opts)
    out = []
    if queues:
        out.append(_queue_header(opts, load_name))
    for queue in queues:
        out.append(_queue_line(queue, opts))
        out.append(_render_rows((r for q, r in running if q == queue["name"]), opts))
    pending = pending_rows(jobs, opts)
    if pending or brief:
        out.append(_pending_banner(opts))
        out.append(_render_pending(pending, brief, opts))
    if finished:
        out.append(_pending_banner(opts, _FINISHED_BANNER))
        out.append(_render_rows(finished_rows(finished), opts))
    return "".join(out)


def format_cluster_summary(cqueues: Sequence[Mapping[str, Any]], ext: bool = False,
                           queue_width: int = QUEUE_WIDTH) -> str:
    """``qstat -g c``: one line per cluster queue (cqueue_summary_stdout_*)."""
    w = queue_width
    head = (f"{'CLUSTER QUEUE':<{w}.{w}} {'CQLOAD':>7} {'USED':>6} {'RES':>6} {'AVAIL':>6} "
            f"{'TOTAL':>6} {'aoACDS':>6} {'cdsuE':>6}  ")
    state_keys = ("suspend_manual", "suspend_threshold", "suspend_on_subordinate",
                  "suspend_calendar", "unknown", "load_alarm", "disabled_manual",
                  "disabled_calendar", "ambiguous", "orphaned", "error")
    if ext:
        head += " ".join(f"{c:>5}" for c in ("s", "A", "S", "C", "u", "a", "d", "D", "c", "o", "E"))
    rule = "-" * 80 + ("-" * 66 if ext else "") + "-" * max(0, w - 36)
    out = [head + "\n", rule + "\n"]
    for cq in cqueues:
        load = cq.get("load")
        line = f"{str(cq['name'])[:w]:<{w}} "
        line += f"{'-NA-':>7} " if load is None else f"{float(load):7.2f} "
        for key in ("used", "resv", "available", "total", "temp_disabled",
                    "manual_intervention"):
            line += f"{int(cq.get(key, 0)):6d} "
        if ext:
            line += "".join(f"{int(cq.get(k, 0)):5d} " for k in state_keys)
        out.append(line + "\n")
    return "".join(out)


# --------------------------------------------------------------------------
# qstat -xml


def _xml_job(row: JobRow, opts: Options, indent: str, section: str) -> str:
    """A ``<job_list>`` element (qstat_xml_job)."""
    fields: list[tuple[str, Any]] = [("JB_job_number", int(row.job["job_number"])),
                                     ("JAT_prio", f"{float(row.get('prio', 0.0)):.5f}")]
    if opts.ext or opts.pri:
        fields.append(("JAT_ntix", f"{float(row.get('ntckts', 0.0)):.5f}"))
    if opts.pri:
        fields.append(("JB_nppri", f"{float(row.get('nppri', 0.0)):.5f}"))
    if opts.urg or opts.pri:
        fields.append(("JB_nurg", f"{float(row.get('nurg', 0.0)):.5f}"))
    if opts.urg:
        for key, tag in (("rrcontr", "JB_rrcontr"), ("wtcontr", "JB_wtcontr"),
                         ("dlcontr", "JB_dlcontr")):
            value = float(row.get(key, 0))
            fields.append((tag, _c_g3(value) if value > 99999999 else f"{value:.0f}"))
    if opts.pri:
        fields.append(("JB_priority", int(row.get("priority", 0))))
    fields += [("JB_name", row.job.get("name", "")), ("JB_owner", row.job.get("owner", ""))]
    if opts.ext:
        fields += [("JB_project", row.get("project", None)),
                   ("JB_department", row.get("department", None))]
    fields.append(("state", row.state))
    if opts.show_time:
        tag = "JAT_start_time" if row.running else "JB_submission_time"
        fields.append((tag, _ctime_xml(row.time)))
    if opts.urg and row.get("deadline", 0):
        fields.append(("JB_deadline", _ctime_xml(row.get("deadline", 0))))
    if opts.ext:
        for key, tag in (("cpu", "cpu_usage"), ("mem", "mem_usage"), ("io", "io_usage")):
            usage = row.task.get(key) if row.task is not row.job else row.job.get(key)
            if usage is not None:
                fields.append((tag, f"{float(usage):.5f}"))
        fields += [("tickets", int(row.get("tickets", 0))),
                   ("JB_override_tickets", int(row.get("override_tickets", 0))),
                   ("JB_jobshare", int(float(row.get("share", 0.0)))),
                   ("otickets", int(row.get("otickets", 0))),
                   ("ftickets", int(row.get("ftickets", 0))),
                   ("stickets", int(row.get("stickets", 0))),
                   ("JAT_share", f"{float(row.get('share', 0.0)):.5f}")]
    if not opts.full:
        fields.append(("queue_name", row.queue or ""))
    if opts.group_tasks:
        fields.append(("master", row.master or ""))
    fields.append(("slots", row.slots))
    if row.task_id and (row.job.get("array") or row.job.get("tasks")):
        fields.append(("tasks", row.task_id))
    inner = indent + "  "
    # A missing value is an empty element (<queue_name></queue_name>).
    body = "".join(f"{inner}<{tag}>{'' if value is None else xml_escape(value)}</{tag}>\n"
                   for tag, value in fields)
    return f'{indent}<job_list state="{section}">\n{body}{indent}</job_list>\n'


def _xml_queue(queue: Mapping[str, Any], rows: Iterable[JobRow], opts: Options) -> str:
    """A ``<Queue-List>`` element of ``qstat -f -xml``."""
    fields: list[tuple[str, Any]] = [
        ("name", queue["name"]), ("qtype", queue.get("qtype", "")),
        ("slots_used", int(queue.get("used", 0))), ("slots_resv", int(queue.get("resv", 0))),
        ("slots_total", int(queue.get("total", 0)))]
    if queue.get("load_avg") is not None:
        fields.append(("load_avg", f"{float(queue['load_avg']):.5f}"))
    if queue.get("arch") is not None:
        fields.append(("arch", queue["arch"]))
    if queue.get("states"):
        fields.append(("state", queue["states"]))
    body = "".join(f"      <{t}>{xml_escape(v)}</{t}>\n" for t, v in fields)
    for message in queue.get("messages") or ():
        body += f"      <message>{xml_escape(message)}</message>\n"
    for dom, name, value in queue.get("resources") or ():
        body += (f'      <resource name="{xml_escape(name)}" type="{xml_escape(dom)}">'
                 f"{xml_escape(value)}</resource>\n")
    body += "".join(_xml_job(r, opts, "      ", "running") for r in rows)
    return f"    <Queue-List>\n{body}    </Queue-List>\n"


def format_xml(jobs: Sequence[Mapping[str, Any]], queues: Sequence[Mapping[str, Any]] | Sequence[str] | None = None,
               full: bool = False, opts: Options | None = None, finished: Sequence[Mapping[str, Any]] = (),
               **switches: Any) -> str:
    """``qstat -xml`` and, with ``full=True``, ``qstat -f -xml``.

    Without ``full``, ``queues`` may be queue instance names (their order);
    with it, queue instance dicts as for :func:`format_full`.
    """
    opts = _options(opts, switches)
    opts.full = full
    out = [_XML_HEAD, "  <queue_info>\n"]
    if full:
        qdicts = [q for q in queues or () if isinstance(q, dict)]
        running = running_rows(jobs, [str(q["name"]) for q in qdicts], opts)
        for queue in qdicts:
            out.append(_xml_queue(queue, (r for q, r in running if q == queue["name"]), opts))
    else:
        names = listing_queue_order(jobs, [str(q) for q in queues] if queues is not None else None)
        out.extend(_xml_job(r, opts, "    ", "running")
                   for _, r in running_rows(jobs, names, opts))
    out.append("  </queue_info>\n  <job_info>\n")
    out.extend(_xml_job(r, opts, "    ", "pending") for r in pending_rows(jobs, opts))
    out.extend(_xml_job(r, opts, "    ", "zombie") for r in finished_rows(finished))
    out.append("  </job_info>\n</job_info>\n")
    return "".join(out)
