"""Turning a finished task into its accounting(5) record, and appending it.

The record is appended (written) before the job leaves the qmaster (Grid
Engine buffers it for ``accounting_flush_time``, 15 s by default, which is
why tools poll qacct in a loop: minisge has no such gap), and synced
before the task's end is acknowledged to its execd: by the qmaster's flush,
or, in a daemon, by :class:`AccountingSync` in a worker thread while the
daemon goes on.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import trio
import trio.lowlevel

from minisge.formats import accounting
from minisge.formats.submit_options import format_ranges
from minisge.qmaster.job import Job, Task
from minisge.rules import exit_codes

log = logging.getLogger("minisge.qmaster")

SYNC_RETRY = 1.0  # seconds before a sync that failed (a full or failing disk) is tried again
# seconds the records of a stream of ends gather before the syncer syncs them all at once, when
# it synced less than this ago: one fdatasync and one worker thread's turn for several ends (an
# end waits for it only in its acknowledgement to the execd, not in qstat or qacct)
SYNC_GATHER = 0.02


def category(job: Job, acls: Sequence[str] = (), project_considered: bool = False) -> str:
    """Grid Engine's job category (accounting(5) ``category``), the requests
    that group jobs as pseudo options in 8.1.9's order: ``-U`` the access
    lists of the owner that queues, hosts or PEs refer to (``acls``), ``-q``,
    ``-masterq``, ``-l``, ``-soft -l``, ``-pe``, ``-I y`` of an immediate
    job, ``-P`` when queues or hosts refer to projects
    (``project_considered``).  TIME requests are in seconds (the qmaster
    keeps them so), so a category holds no ``:`` that is not the user's; the
    ``-l`` names are the complexes' full names, sorted."""
    s = job.spec
    parts = []
    if acls:
        parts.append("-U " + ",".join(acls))
    if s.get("hard_queues"):
        parts.append("-q " + ",".join(s["hard_queues"]))
    if s.get("master_queues"):
        parts.append("-masterq " + ",".join(s["master_queues"]))
    if s.get("hard_resources"):  # by name, as 8.1.9 sorts them
        parts.append("-l " + ",".join(f"{k}={v}" for k, v in sorted(s["hard_resources"].items())))
    if s.get("soft_resources"):
        parts.append("-soft -l " + ",".join(f"{k}={v}" for k, v in sorted(s["soft_resources"].items())))
    if s.get("pe"):
        parts.append(f"-pe {s['pe']['name']} {format_ranges(s['pe']['ranges'])}")
    if s.get("now"):
        parts.append("-I y")
    if s.get("project") and project_considered:
        parts.append(f"-P {s['project']}")
    if s.get("ar"):  # qsub -ar: 8.1.9 writes it last
        parts.append(f"-ar {int(s['ar'])}")
    return " ".join(parts) or "NONE"


def record_for(job: Job, task: Task, report: dict[str, Any], failed: int,
               default_host: str, category_text: str, queue_priority: int) -> accounting.AccountingRecord:
    """The record of one run of ``task``: ``category_text`` is the job's
    category (:func:`category`), ``queue_priority`` the queue_conf(5)
    ``priority`` of the task's master queue, which 8.1.9 records as the
    job's priority (its -p is not recorded)."""
    zeroed = exit_codes.accounted_without_times(failed)
    never_started = exit_codes.accounted_as_never_started(failed)
    usage: dict[str, Any]
    if zeroed or never_started:
        # Grid Engine 8.1.9 writes the record of an attempt re-queued after a
        # failed prolog, PE start or epilog with zero times, status and usage;
        # that of a job whose output could not be opened likewise, but with
        # its submission time
        usage, report = {}, dict(report, exit_status=0)
    else:
        usage = report.get("usage") or {}

    def f(name: str) -> float:
        try:
            return float(usage.get(name, 0) or 0)
        except ValueError:
            return 0.0

    if zeroed or never_started:
        start = end = 0
    else:
        start = int(f("start_time")) if usage.get("start_time") else int(task.start_time)
        end = int(f("end_time")) if usage.get("end_time") else start
    utime, stime = f("ru_utime"), f("ru_stime")
    ran = exit_codes.usage_valid(failed)
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
        priority=queue_priority,
        submission_time=0 if zeroed else int(job.submission_time),
        start_time=start if (ran or zeroed or never_started) else int(task.start_time),
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
        category=category_text,
        iow=0.0,
        pe_taskid="NONE",
        maxvmem=f("maxvmem"),
        arid=int(job.spec.get("ar") or 0),
        ar_submission_time=0,
        resource_map=task.resource_map_text(),  # minisge's 46th field (sge_rsmap(5))
    )


def append(path: str, record: accounting.AccountingRecord, sync: bool = True) -> None:
    """Append one line; the file is created with Grid Engine's header if new.

    All or nothing: OSError (a full or read-only file system) leaves the file
    as it was, no half line, so the record can be appended again later."""
    line = accounting.write_line(record)
    if not line.endswith("\n"):
        line += "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        # text that came as bytes that are not UTF-8 (a path, an account string: the
        # protocol carries them with surrogateescape) goes back to the file as those bytes
        data = memoryview(((accounting.header() if size == 0 else "") + line).encode("utf-8", "surrogateescape"))
        try:
            while data:  # a full disk may take part of a write before it refuses the rest
                data = data[os.write(fd, data):]
            if sync:
                os.fdatasync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def sync(path: str) -> None:
    """Whatever was appended to the file without ``sync``, on disk (fdatasync)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


# the fields of a record that a repeated report of the same run repeats unchanged
# (job_number, start_time, end_time, failed, exit_status, ru_wallclock, ru_utime,
# ru_stime, ru_maxrss, ru_minflt, ru_majflt, ru_nvcsw, ru_nivcsw, task_number: the
# shepherd's usage file and the qmaster's job), as written; not cpu, mem, io or
# maxvmem, which an execd that restarted meanwhile no longer samples
_RUN_FIELDS = (5, 9, 10, 11, 12, 13, 14, 15, 16, 21, 22, 29, 30, 35)


def _run_key(line: str) -> tuple[str, ...] | None:
    f = line.rstrip("\n").split(":")
    return tuple(f[i] for i in _RUN_FIELDS) if len(f) >= accounting.NFIELDS else None


def already_written(path: str, record: accounting.AccountingRecord, window: int = 1 << 20) -> bool:
    """Whether the last ``window`` bytes of the file hold this run's record.

    Asked only for a task that was running when the qmaster went down: its
    end may have been recorded just before, and must not be recorded twice.
    The record of an earlier run of the same task (re-run after exit 99, or
    after qmod -cj) that started in the same second is another run's: a run
    is known by its times, exit and the usage its shepherd wrote.
    """
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - window))
            tail = f.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return False
    key = _run_key(accounting.write_line(record))
    return any(_run_key(line) == key for line in tail.splitlines() if not line.startswith("#"))


class AccountingSync:
    """The records appended without a sync, counted, and made durable by one
    fdatasync for as many of them as came meanwhile.  :meth:`run` is the
    syncer, a task of the daemon's nursery: it syncs in a worker thread, so
    the daemon's loop (the next dispatches, the execd's work in a cell of
    one process) does not wait for the disk.  Without a running syncer (a
    qmaster driven outside its daemon) the qmaster's flush calls :meth:`sync_now`.
    A record numbered ``n`` (:meth:`appended_one`) is on disk once
    :meth:`is_synced` ``(n)``."""

    def __init__(self, path: str):
        self.path = path
        self.appended = 0  # records appended unsynced, ever
        self.synced = 0  # of which the first ``synced`` are on disk
        self.running = False
        self.wake = trio.Event()

    @property
    def unsynced(self) -> bool:
        return self.appended > self.synced

    def appended_one(self) -> int:
        """One more record appended unsynced: its number."""
        self.appended += 1
        self.wake.set()
        return self.appended

    def is_synced(self, n: int) -> bool:
        return n <= self.synced

    def sync_now(self) -> None:
        """Sync here (OSError when the file cannot be)."""
        mark = self.appended
        if mark > self.synced:
            sync(self.path)
            self.synced = mark

    async def run(self, synced: Callable[[], Awaitable[None]],
                  task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Sync whatever was appended, in a worker thread, as long as the
        daemon runs; ``await synced()`` after each sync (the qmaster sends
        the acknowledgements of the ends then on disk).  The thread is the
        syncer's own, woken by a queue: ``trio.to_thread`` costs the loop
        twice as much a sync (~110 against ~50 us of its CPU), and a stream
        of ends makes a sync every SYNC_GATHER."""
        token = trio.lowlevel.current_trio_token()
        syncs: queue.SimpleQueue[_SyncTurn | None] = queue.SimpleQueue()

        def syncer() -> None:
            while (turn := syncs.get()) is not None:
                try:
                    sync(self.path)
                except BaseException as err:  # noqa: BLE001 - said in the loop: an OSError logged, a bug raised
                    turn.error = err
                token.run_sync_soon(turn.done.set)

        thread = threading.Thread(target=syncer, name="accounting sync", daemon=True)
        thread.start()
        self.running = True
        try:
            task_status.started()
            last = -math.inf
            while True:
                await self.wake.wait()
                wait = last + SYNC_GATHER - trio.current_time()
                if wait > 0:
                    await trio.sleep(wait)  # a stream of ends: those of the next moments share the sync
                self.wake = trio.Event()
                mark = self.appended
                if mark <= self.synced:
                    continue
                last = trio.current_time()
                turn = _SyncTurn()
                syncs.put(turn)
                with trio.CancelScope(shield=True):  # a sync begun is finished before the daemon goes
                    await turn.done.wait()
                if isinstance(turn.error, OSError):
                    log.error("cannot sync the accounting file: the ends written are acknowledged later",
                              exc_info=turn.error)
                    await trio.sleep(SYNC_RETRY)
                    self.wake.set()
                    continue
                if turn.error is not None:
                    raise turn.error
                self.synced = max(self.synced, mark)
                await synced()
        finally:
            self.running = False
            syncs.put(None)


class _SyncTurn:
    """One sync asked of :meth:`AccountingSync.run`'s thread, and how it went."""

    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.error: BaseException | None = None
