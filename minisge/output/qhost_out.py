"""``qhost`` output, byte-exact with Grid Engine 8.1.9 (standard library only).

The qmaster answers a qhost request with plain dicts
(:func:`minisge.qmaster.host_views.qhost`); these functions print them as
8.1.9's qhost does (``sge_qhost.c``, ``qstat_printing.c``).

Host dict (the global host first, then the execution hosts by name)::

    name       str
    values     {arch, num_proc, m_socket, m_core, m_thread, load_avg,
                mem_total, mem_used, swap_total, swap_used: the reported
                text, or None: printed "-"}
    resources  [(dominance, name, value text)]   -F only (those it names)
    queues     [queue dict]                      -q and -j only

Queue dict: ``name`` (the cluster queue), ``qinstance`` ("all.q@vm"),
``qtype`` ("BIP"), ``resv``, ``used``, ``total``, ``states`` and ``jobs``,
the tasks running there (-j), each::

    job_number int   task_number int|None (an array job's task)   prio float
    name owner state str   start_time int|None   submission_time int
    slots int (in this queue instance)   master bool (its master queue)
    slot_adjust bool (master queue of a PE with job_is_first_task FALSE:
    one line more)

``-j`` prints a line per slot: ``MASTER`` for the first of the master queue,
``SLAVE`` for the others, the job's columns on the first line of each queue
instance only.  Dates are printed in local time.
"""

from __future__ import annotations

import time

from minisge.output.resource_value import scaled_column
from minisge.output.text import printable

TYPE_CHECKING = False  # not typing's: the commands must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

HEAD = "%-23s %-13.13s%4.4s %4.4s %4.4s %4.4s %5.5s %7.7s %7.7s %7.7s %7.7s\n"
HEAD_NCB = "%-23s %-13.13s%4.4s %5.5s %7.7s %7.7s %7.7s %7.7s\n"
TITLES = ("HOSTNAME", "ARCH", "NCPU", "NSOC", "NCOR", "NTHR", "LOAD", "MEMTOT", "MEMUSE", "SWAPTO", "SWAPUS")
INDENT = "   "
JOB_HEADER = (INDENT + "job-ID  prior   name       user         state submit/start at     "
              "queue      master ja-task-ID \n" + INDENT + "-" * 94 + "\n")
XML_NAMESPACE = "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qhost/qhost.xsd"


class Options:
    """What the command line asks to see."""

    def __init__(self, *, binding: bool = True, resources: Sequence[str] | None = None,
                 queues: bool = False, jobs: bool = False) -> None:
        self.binding = binding  # NSOC NCOR NTHR (-ncb: without)
        self.resources = resources  # -F [names]: None without -F, [] for all
        self.queues = queues
        self.jobs = jobs


def _ctime(epoch: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(int(epoch)))


def host_columns(host: Mapping[str, Any], binding: bool = True) -> list[str]:
    """The printed values of a host's line (and of its -xml hostvalues)."""
    v = host.get("values") or {}

    def plain(key: str) -> str:
        raw = v.get(key)
        return "-" if raw is None else _integer_text(str(raw))

    cols = [v.get("arch") or "-", plain("num_proc")]
    if binding:
        cols += [plain("m_socket"), plain("m_core"), plain("m_thread")]
    cols.append(scaled_column(v.get("load_avg"), 2))
    cols += [scaled_column(v.get(k), 1) for k in ("mem_total", "mem_used", "swap_total", "swap_used")]
    return cols


def _integer_text(raw: str) -> str:
    """An INT load value as sge_get_dominant_stringval prints it (``%d``)."""
    try:
        return str(int(float(raw)))
    except ValueError:
        return raw


def _resource_lines(rows: Sequence[Sequence[str]], named: bool) -> str:
    out = []
    for i, (dom, name, value) in enumerate(rows):
        # sge_print_resources: a -F with names announces the first one
        prefix = "    Host Resource(s):   " if named and i == 0 else ""
        out.append(f"{prefix}{INDENT}{dom}:{name}={value}\n")
    return "".join(out)


def _queue_line(q: Mapping[str, Any]) -> str:
    slots = f"{q.get('resv', 0)}/{q.get('used', 0)}/{q.get('total', 0)} "
    return f"{INDENT}{q['name']:<20} {q.get('qtype', '')[:5]:<5} {slots[:14]:<14}{q.get('states', '')}\n"


def job_lines(jobs: Iterable[Mapping[str, Any]]) -> Iterable[tuple[Mapping[str, Any], str, bool]]:
    """(job, MASTER|SLAVE, print its columns) for each line of a queue instance's jobs."""
    last: tuple[int, int | None] | None = None
    for job in jobs:
        lines = int(job.get("slots", 1)) + (1 if job.get("slot_adjust") else 0)
        for i in range(lines):
            key = (int(job["job_number"]), job.get("task_number"))
            different = key != last
            last = key
            yield job, "MASTER" if job.get("master") and different and i == 0 else "SLAVE", different


def _job_line(job: Mapping[str, Any], master: str, print_jobid: bool, qinstance: str, full: bool) -> str:
    parts = [INDENT]
    if print_jobid:
        started = job.get("start_time") or job.get("submission_time") or 0
        parts.append(f"{int(job['job_number']):7d} {float(job.get('prio', 0.0)):7.5f} "
                     f"{printable(str(job['name']))[:10]:<10} {str(job['owner'])[:12]:<12} "
                     f"{str(job.get('state', ''))[:5]:<5} {_ctime(started)} ")
    else:
        parts.append(" " * 66)
    if not full:
        parts.append(f"{qinstance[:10]:<10} ")
    parts.append(f"{master[:6]:<7}")
    task = job.get("task_number")
    parts.append(str(task) if task is not None else " " * 7)
    return "".join(parts) + "\n"


def format_text(hosts: Sequence[Mapping[str, Any]], opts: Options | None = None) -> str:
    """qhost's listing."""
    opts = opts or Options()
    if not hosts:
        return ""
    fmt = HEAD if opts.binding else HEAD_NCB
    titles = TITLES if opts.binding else TITLES[:3] + TITLES[6:]
    out = [fmt % titles, "-" * (94 if opts.binding else 79) + "\n"]
    header_printed = False
    for host in hosts:
        out.append(fmt % (host["name"], *host_columns(host, opts.binding)))
        if opts.resources is not None:
            out.append(_resource_lines(host.get("resources") or (), bool(opts.resources)))
        if not (opts.queues or opts.jobs):
            continue
        for q in host.get("queues") or ():
            if opts.queues:
                out.append(_queue_line(q))
            if not opts.jobs:
                continue
            for job, master, print_jobid in job_lines(q.get("jobs") or ()):
                if not opts.queues and not header_printed:
                    out.append(JOB_HEADER)  # once per qhost, before its first job line
                    header_printed = True
                out.append(_job_line(job, master, print_jobid, q["qinstance"], opts.queues))
    return "".join(out)


def xml_escape(text: Any) -> str:
    """Grid Engine's escape_string (which writes ``<`` as ``%lt;``)."""
    return (str(text).replace("&", "&amp;").replace("<", "%lt;").replace(">", "&gt;")
            .replace("'", "&apos;").replace('"', "&quot;"))


def _xml_job(job: Mapping[str, Any], master: str, q: Mapping[str, Any], full: bool) -> str:
    jid = xml_escape(job["job_number"])

    def value(name: str, text: Any) -> str:
        return f"   <jobvalue jobid='{jid}' name='{name}'>{text}</jobvalue>\n"

    out = [f" <job name='{jid}'>\n", value("priority", f"'{float(job.get('prio', 0.0)):f}'"),
           value("qinstance_name", xml_escape(q["qinstance"])), value("job_name", xml_escape(job["name"])),
           value("job_owner", xml_escape(job["owner"])), value("job_state", xml_escape(job.get("state", "")))]
    if job.get("start_time"):
        out.append(value("start_time", int(job["start_time"])))
    else:
        out.append(value("submit_time", int(job.get("submission_time") or 0)))
    if not full:
        out.append(value("queue_name", xml_escape(q["qinstance"])))
    out.append(value("pe_master", master))
    if job.get("task_number") is not None:
        out.append(value("taskid", job["task_number"]))
    out.append(" </job>\n")
    return "".join(out)


def format_xml(hosts: Sequence[Mapping[str, Any]], opts: Options | None = None) -> str:
    """qhost -xml."""
    opts = opts or Options()
    names = ["arch_string", "num_proc"] + (["m_socket", "m_core", "m_thread"] if opts.binding else []) + [
        "load_avg", "mem_total", "mem_used", "swap_total", "swap_used"]
    out = ["<?xml version='1.0'?>\n", f'<qhost xmlns:xsd="{XML_NAMESPACE}">\n']
    for host in hosts:
        out.append(f" <host name='{xml_escape(host['name'])}'>\n")
        for name, text in zip(names, host_columns(host, opts.binding), strict=True):
            out.append(f"   <hostvalue name='{name}'>{xml_escape(text)}</hostvalue>\n")
        if opts.resources is not None:
            for dom, name, value in host.get("resources") or ():
                out.append(f"   <resourcevalue name='{xml_escape(name)}' dominance='{xml_escape(dom)}'>"
                           f"{xml_escape(value)}</resourcevalue>\n")
        for q in host.get("queues") or ():
            if opts.queues:
                qn = xml_escape(q["name"])
                out.append(f" <queue name='{qn}'>\n")
                for key, text in (("qtype_string", xml_escape(q.get("qtype", ""))),
                                  ("slots_used", q.get("used", 0)), ("slots", q.get("total", 0)),
                                  ("slots_resv", q.get("resv", 0)),
                                  ("state_string", xml_escape(q.get("states", "")))):
                    out.append(f"   <queuevalue qname='{qn}' name='{key}'>{text}</queuevalue>\n")
                out.append(" </queue>\n")
            if opts.jobs:
                for job, master, _ in job_lines(q.get("jobs") or ()):
                    out.append(_xml_job(job, master, q, opts.queues))
        out.append(" </host>\n")
    out.append("</qhost>\n")
    return "".join(out)
