"""Turning a finished task into its accounting(5) record, and appending it.

The record is appended and flushed to the disk before the job leaves the
qmaster (Grid Engine buffers it for ``accounting_flush_time``, 15 s by
default, which is why tools poll qacct in a loop: minisge has no such gap).
"""

from __future__ import annotations

import os

from minisge.formats import accounting
from minisge.job import Job, Task


# failed codes after which the task is re-queued as the queue's fault
REQUEUED_WITHOUT_TIMES = frozenset({7, 8, 10, 14, 15})


def _category(job: Job) -> str:
    """Grid Engine's job category: the requests that group jobs, as pseudo options."""
    s = job.spec
    parts = []
    if s.get("hard_resources"):
        parts.append("-l " + ",".join(f"{k}={v}" for k, v in s["hard_resources"].items()))
    if s.get("hard_queues"):
        parts.append("-q " + ",".join(s["hard_queues"]))
    if s.get("pe"):
        from minisge.submit_options import format_ranges

        parts.append(f"-pe {s['pe']['name']} {format_ranges(s['pe']['ranges'])}")
    if s.get("project"):
        parts.append(f"-P {s['project']}")
    return " ".join(parts) or "NONE"


def record_for(job: Job, task: Task, report: dict, failed: int, default_host: str) -> accounting.AccountingRecord:
    zeroed = failed in REQUEUED_WITHOUT_TIMES
    if zeroed:
        # Grid Engine 8.1.9 writes the record of an attempt re-queued after a
        # failed prolog, PE start or epilog with zero times, status and usage
        usage, report = {}, dict(report, exit_status=0)
    else:
        usage = report.get("usage") or {}

    def f(name: str) -> float:
        try:
            return float(usage.get(name, 0) or 0)
        except ValueError:
            return 0.0

    if zeroed:
        start = end = 0
    else:
        start = int(f("start_time")) if usage.get("start_time") else int(task.start_time)
        end = int(f("end_time")) if usage.get("end_time") else start
    utime, stime = f("ru_utime"), f("ru_stime")
    ran = failed == 0 or failed > 11
    m = task.master
    maxrss_kb = f("ru_maxrss")
    # accounting(5) cpu: the job's CPU time; the execd's summed /proc sample
    # ("cpu_pdc") counts processes the job's own rusage misses (a killed
    # shell's children), so the higher of both, as 8.1.9 reports it
    cpu = max(utime + stime, f("cpu_pdc"))
    return accounting.AccountingRecord(
        qname=m.cqueue if m else "UNKNOWN",
        hostname=m.host if m else default_host,
        group=job.group,
        owner=job.owner,
        job_name=job.name,
        job_number=job.number,
        account=job.spec.get("account") or "sge",
        priority=job.priority,
        submission_time=0 if zeroed else int(job.submission_time),
        start_time=start if (ran or zeroed) else int(task.start_time),
        end_time=end,
        failed=failed,
        exit_status=int(report.get("exit_status", 0)) if ran else 0,
        ru_wallclock=max(0, end - start) if ran else 0,
        ru_utime=utime,
        ru_stime=stime,
        ru_maxrss=maxrss_kb,
        ru_ixrss=int(f("ru_ixrss")),
        ru_ismrss=int(f("ru_ismrss")),
        ru_idrss=int(f("ru_idrss")),
        ru_isrss=int(f("ru_isrss")),
        ru_minflt=int(f("ru_minflt")),
        ru_majflt=int(f("ru_majflt")),
        ru_nswap=int(f("ru_nswap")),
        ru_inblock=f("ru_inblock"),
        ru_oublock=int(f("ru_oublock")),
        ru_msgsnd=int(f("ru_msgsnd")),
        ru_msgrcv=int(f("ru_msgrcv")),
        ru_nsignals=int(f("ru_nsignals")),
        ru_nvcsw=int(f("ru_nvcsw")),
        ru_nivcsw=int(f("ru_nivcsw")),
        project=job.spec.get("project") or "NONE",
        department="defaultdepartment",
        granted_pe=task.granted_pe or "NONE",
        slots=task.slots or 1,
        task_number=task.task_id if job.is_array else 0,
        cpu=cpu,
        mem=f("mem"),
        io=f("io"),
        category=_category(job),
        iow=0.0,
        pe_taskid="NONE",
        maxvmem=f("maxvmem"),
        arid=0,
        ar_submission_time=0,
    )


def append(path: str, record: accounting.AccountingRecord, sync: bool = True) -> None:
    """Append one line; the file is created with Grid Engine's header if new."""
    line = accounting.write_line(record)
    if not line.endswith("\n"):
        line += "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size == 0:
            os.write(fd, accounting.header().encode())
        os.write(fd, line.encode())
        if sync:
            os.fdatasync(fd)
    finally:
        os.close(fd)


def already_written(path: str, record: accounting.AccountingRecord, window: int = 1 << 20) -> bool:
    """Whether the last ``window`` bytes of the file hold this task's record.

    Asked only for a task that was running when the qmaster went down: its
    end may have been recorded just before, and must not be recorded twice.
    """
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - window))
            tail = f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return False
    key = (record.job_number, record.task_number, record.start_time)
    for line in tail.splitlines():
        if line.startswith("#") or line.count(":") < 44:
            continue
        try:
            r = accounting.parse_line(line)
        except Exception:
            continue
        if (r.job_number, r.task_number, r.start_time) == key:
            return True
    return False
