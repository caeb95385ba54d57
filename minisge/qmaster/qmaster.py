"""The qmaster: the cell's state, its requests and its events.

It owns the jobs and the configuration, spools every change before it
answers, wakes the scheduler (coalesced) on every change that could start a
job, sends dispatched tasks to execds and turns their reports into
accounting records and job states.  Requests come from local commands over
the Unix socket (the caller identified by SO_PEERCRED) and from execds, in
process or over TCP; both speak :mod:`minisge.protocol`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import fnmatch
import functools
import gc
import itertools
import logging
import math
import os
import time
import typing
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import cattrs
import trio
import trio.lowlevel

from minisge import scheduler
from minisge.cell import Cell
from minisge.formats import submit_options
from minisge.formats.accounting import AccountingRecord
from minisge.formats.errors import FormatError
from minisge.formats.sge_types import is_decimal
from minisge.qmaster import accounting_writer, job_dependencies, job_modify, job_targets, submit_checks
from minisge.qmaster.advance_reservations import AdvanceReservations
from minisge.qmaster.config_state import ConfigState, RequestError
from minisge.qmaster.finished_jobs import FinishedJobs
from minisge.qmaster.job import ERROR, RESCHEDULING, RUNNING, Grant, Job, SharedSpec, Task
from minisge.qmaster.job_control import JobControl, end_of_rescheduled, rerun_outcome
from minisge.qmaster.job_facts import execution_time
from minisge.qmaster.job_index import JobIndex
from minisge.qmaster.job_journal import JOURNAL_LIMIT
from minisge.qmaster.load_control import LoadControl
from minisge.qmaster.outbox import ExecdLink, Outbox
from minisge.qmaster.pe_tasks import PeTasks
from minisge.qmaster.range_list import RangeList, TaskSelection
from minisge.qmaster.share_usage import ShareUsage
from minisge.qmaster.spool import GroupCommit, QmasterSpool, SpoolError, sync_paths
from minisge.qmaster.spool_backlog import SpoolBacklog
from minisge.qmaster.unknown_hosts import UnknownHosts, stale_report
from minisge.qmaster.users import group_name, user_name
from minisge.rules import exit_codes
from minisge.rules import job_control as rules_job_control
from minisge.rules.job_control import JOB_ACTIONS, QMOD_ACTIONS, QUEUE_ACTIONS
from minisge.scheduler import reservation, schedd_message

log = logging.getLogger("minisge.qmaster")

_conv = cattrs.Converter()
# Task.suspended_by, Job.ad_held: JSON lists in the spool
_conv.register_unstructure_hook_func(lambda t: t is set or typing.get_origin(t) is set, sorted)
# Job.spec: the request, JSON's own types as it came (checked at the qmaster's socket), written
# as it is: cattrs would walk and copy it whole, value by value, at every write of the job
_conv.register_unstructure_hook_func(lambda t: t == dict[str, Any], lambda spec: spec)
# Job.pending: [[lo, hi, step], ...]; a spool of before the ranges has the ids
_conv.register_unstructure_hook(RangeList, lambda r: [list(x) for x in r.ranges()])
_conv.register_structure_hook(RangeList, lambda v, _t: RangeList.of_ids(v) if v and isinstance(v[0], int)
                              else RangeList([tuple(x) for x in v], step=v[0][2] if v else 1))

# a line in the log every this many jobs read from the spool at the start (its
# progress: ``minisge start`` waits as long as the daemon's log grows)
LOAD_PROGRESS = 10_000

# a burst of events (a loop of qsub calls, many tasks ending at once) gives one
# scheduling pass: after a wake-up the loop lets the other ready tasks run for
# this many scheduling rounds before it takes its snapshot
COALESCE_CHECKPOINTS = 3


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Run a pass (snapshot and schedule) with the cyclic garbage collector
    paused: a pass makes an object or two per pending task and holds them
    all, so with 100,000 pending jobs the collector would otherwise walk
    them (and the qmaster's job table) again and again, for half the time.
    The pass makes no garbage cycles worth collecting on the spot."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Qmaster:
    """The cell's state and its components; the daemons' roles run it."""

    def __init__(self, cell: Cell, host: str, clock: Callable[[], float] = time.time):
        self.cell = cell
        self.host = host
        self.clock = clock
        self.spool = QmasterSpool(cell)
        self.config = ConfigState(self.spool, host)
        self.share_usage = ShareUsage(self.spool, self.config)  # sge_share_tree(5): the tree and the users' usage
        self.jobs: dict[int, Job] = {}
        # which jobs a pass looks at (not the held ones), the immediate ones, the coming -a times
        self.index = JobIndex()
        # the requests like jobs share (job.SharedSpec), by their JSON text, each while a job holds it
        self.request_shapes: weakref.WeakValueDictionary[str, SharedSpec] = weakref.WeakValueDictionary()
        self.last_job_id = 0
        self.execds: dict[str, ExecdLink] = {}  # the connected execds by host
        # the host group a new execution host joins when its execd first registers (a split cell's
        # bootstrap: execd_joins @allhosts; minisge.daemon.cell_init), or None
        self.execd_joins = cell.bootstrap().get("execd_joins") or None
        self.wake_scheduler = trio.Event()  # set by changed(); the scheduler loop waits for it
        self.job_waiters: dict[int, list[trio.MemorySendChannel[dict[str, Any]]]] = {}
        self.pending_reasons: dict[int, list[str]] = {}  # the last pass's reasons per job
        self.global_messages: list[str] = []  # the last pass's global messages (qstat -j)
        self.job_reservations: dict[int, scheduler.ScheduleEntry] = {}  # the last pass's -R y reservations
        self.admin_uid = os.getuid()
        self.boot_time = clock()
        self.dirty: dict[int, Job] = {}  # changed jobs flush() is to spool
        self.submitting: dict[int, Job] = {}  # new jobs waiting for their group commit (submit_in_group)
        self.group_commit = GroupCommit()  # its committer runs in the nursery of the daemon role
        # task ends appended to the accounting file, synced by the flush or the daemon's syncer
        self.accounting_sync = accounting_writer.AccountingSync(cell.accounting)
        self.acks_after: dict[tuple[int, int], int] = {}  # an end's acknowledgement: after this record is synced
        self.unsynced_acks: list[tuple[str, dict[str, Any]]] = []  # delivered after a flush, waiting for the sync
        self.acks_tried_at = -1  # the accounting syncs made when the unsynced acks were last tried (held_acks)
        # the online usage of running tasks, by execd host, as its last load report had it
        self.online_usage: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
        # the components, each holding its own state
        self.outbox = Outbox(self.execds)  # messages to execds, some sent after the next flush
        self.pe_tasks = PeTasks(self)  # slave tasks started by qrsh -inherit
        self.job_control = JobControl(self)  # suspend, resume, terminate, reschedule
        self.load_control = LoadControl(self)  # load reports, alarms, suspend_interval timer
        self.unknown_hosts = UnknownHosts(self)  # reschedule_unknown
        self.reservations = AdvanceReservations(self)  # qrsub(1): advance reservations
        self.finished = FinishedJobs(lambda: self.config.global_conf.finished_jobs)  # qstat -s z
        # what could not be written yet (a full or read-only spool), written again by its timer
        self.backlog = SpoolBacklog(self.write_job, self.append_record,
                                    lambda: self.config.qi_states_unsaved, self.config.save_qi_states)

    # ------------------------------------------------------------ loading
    def load(self) -> None:
        self.config.load()
        self.share_usage.load()
        self.reservations.load()
        self.last_job_id = self.spool.read_jobseqnum()
        shapes = self.request_shapes  # like jobs share one request
        started = time.monotonic()
        with gc_paused():  # (the collector would walk the growing job table again and again)
            for path, data in self.spool.load_jobs():
                job = Job.plain_from_spool(data, shapes) or self._job_of(path, data)
                self.jobs[job.number] = job
                self.last_job_id = max(self.last_job_id, job.number)
                if len(self.jobs) % LOAD_PROGRESS == 0:  # minisge start waits while the log grows
                    log.info("reading the job database: %d entries so far", len(self.jobs))
        job_dependencies.after_load(self.jobs)
        self.index.add_all(self.jobs.values())
        log.info("read job database with %d entries in %d seconds", len(self.jobs), time.monotonic() - started)

    @staticmethod
    def _job_of(path: str, data: dict[str, Any]) -> Job:
        """A spooled job of any shape (running tasks, task holds...); FormatError for a bad file."""
        for t in (data.get("tasks") or {}).values():  # spool files of before suspended_by
            if t.pop("suspended", False):
                t.setdefault("suspended_by", ["job"])
        try:
            return _conv.structure(data, Job)
        except (cattrs.BaseValidationError, KeyError, TypeError, ValueError) as e:
            raise FormatError(f"not a job: {describe_structure_error(e)}", path, 1) from None

    def write_job(self, job: Job, sync: bool = True) -> None:
        """Spool the job, or remove its file once it is done; SpoolError when
        the spool cannot take it (a request then changes nothing).

        ``sync=False`` for the transitions of running tasks (dispatch, end):
        the write is still atomic, so a killed qmaster finds the old or the
        new state, and either is recovered (the execd reports a task it
        runs or ran; an end already in the accounting file is not written
        twice); only an operating-system crash can lose it.
        """
        if job.number in self.jobs:  # every change of a job is written: the index files it again
            self.index.update(job)
        if job.is_done():
            self.spool.delete_job(job.number)
        else:
            self.spool.write_job(job.number, _conv.unstructure(job), sync=sync)
        self.backlog.job_saved(job.number)

    def save_job(self, job: Job, sync: bool = True) -> bool:
        """Spool the job after one of the qmaster's own transitions (an end, a
        release, a job control action): these cannot be refused, so a job the
        spool cannot take now is kept in the backlog and written later; False then.
        A done job leaves the qmaster either way."""
        if job.is_done():
            self.job_left(job)
        try:
            self.write_job(job, sync)
        except SpoolError as err:
            self.backlog.job_unsaved(job, err)
            return False
        return True

    def store_online_usage(self, host: str, usage: Iterable[Mapping[str, Any]]) -> None:
        """An execd's usage report (with its load report): the usage of each
        task it runs, replacing what it reported before."""
        self.online_usage[host] = {
            (int(u["job_id"]), int(u["task_id"])): {
                **{k: float(u[k]) for k in ("cpu", "mem", "io", "vmem", "maxvmem")},
                **({"binding": str(u["binding"])} if u.get("binding") else {})}  # qstat -j: binding N
            for u in usage}

    def usage_of(self, job: Job, task: Task) -> dict[str, Any] | None:
        """The last online usage of a running task (qstat -j, qstat -ext), None before its execd reported any."""
        if task.master is None:
            return None
        return self.online_usage.get(task.master.host, {}).get((job.number, task.task_id))

    def job_left(self, job: Job) -> None:
        """A done job leaves the qmaster's jobs for its finished jobs (qstat -s z)."""
        if self.jobs.pop(job.number, None) is not None:
            self.index.remove(job)
            self.finished.job_left(job)

    def append_record(self, record: AccountingRecord, sync: bool = True) -> None:
        accounting_writer.append(self.cell.accounting, record, sync=sync)
        if not sync:
            self.accounting_sync.appended_one()

    @property
    def accounting_unsynced(self) -> bool:
        """Task ends appended to the accounting file, not yet synced."""
        return self.accounting_sync.unsynced

    def sync_accounting(self) -> bool:
        """The records appended unsynced (task ends) on disk: one fdatasync
        for all of them (the flush, before any of their ends is acknowledged
        to its execd), unless the daemon's syncer does it
        (:class:`minisge.qmaster.accounting_writer.AccountingSync`).  False
        when the file cannot be synced: the acknowledgements wait (:meth:`deliver`)."""
        if not self.accounting_sync.unsynced or self.accounting_sync.running:
            return True
        try:
            self.accounting_sync.sync_now()
        except OSError:
            log.exception("cannot sync the accounting file: the ends written are acknowledged later")
            return False
        return True

    def account(self, record: AccountingRecord, sync: bool = True) -> None:
        """Append an accounting record; one the file cannot take now (or that
        would pass records still waiting) waits in the backlog, in order.
        With sge_conf(5) ``reporting_params accounting=false`` no record is
        written at all.  ``sync=False`` for a task's end: written at once
        (qacct sees it before the task leaves qstat), synced with the
        pass's others by :meth:`flush`, before the end is acknowledged."""
        if not self.config.accounting:
            return
        if record.arid and not record.ar_submission_time:  # accounting(5): the reservation's submission time
            record = record._replace(ar_submission_time=self.reservations.submission_time(record.arid))
        if self.backlog.records:
            self.backlog.record_unwritten(record)
            return
        try:
            self.append_record(record, sync)
        except OSError as err:
            self.backlog.record_unwritten(record, err)

    def changed(self) -> None:
        """Something happened that may let a job start: wake the scheduler."""
        self.wake_scheduler.set()

    async def wait_changed(self, not_before: float = -math.inf) -> None:
        """Wait until something changed (the scheduler loop), and no sooner
        than ``not_before`` (trio's clock: the pause after the loop's last
        pass), letting a burst of changes gather into one pass.  A change
        that comes after ``not_before`` waits for no timer: a deadline that
        expires costs trio a cancellation (an exception raised and caught)."""
        await self.wake_scheduler.wait()
        if trio.current_time() < not_before:
            await trio.sleep_until(not_before)  # the changes meanwhile gather too
        for _ in range(COALESCE_CHECKPOINTS):
            await trio.lowlevel.checkpoint()
        self.wake_scheduler = trio.Event()

    # ------------------------------------------------------------ rights
    def is_manager(self, uid: int) -> bool:
        return uid == 0 or uid == self.admin_uid or user_name(uid) in self.config.managers

    def is_operator(self, uid: int) -> bool:
        return self.is_manager(uid) or user_name(uid) in self.config.operators

    # ------------------------------------------------------------ submit
    def submit(self, req: dict, uid: int, gid: int,
               holds: tuple[bool, bool, bool] | None = None) -> dict:
        """A new job, spooled (fsynced) before it is taken: qresub's copies
        (with their ``holds``: user, operator, system) and a qmaster driven
        outside its daemon; qsub's go through :meth:`submit_in_group`."""
        job, reply = self.new_job(req, uid, gid, holds)
        try:
            for write in self.new_job_writes(job, sync=True):
                write()
            self.spool.write_jobseqnum(job.number)
        except SpoolError as err:
            self.reject_unwritten(job, err)
        self.accept_job(job)
        return reply

    async def submit_in_group(self, req: dict, uid: int, gid: int, queued: Callable[[], None] | None = None) -> dict:
        """qsub: a new job, answered only once its files (job, script,
        jobseqnum) are on disk, as 8.1.9 answers after spooling.  They are
        written and made durable by the group commit (``spool.py:GroupCommit``,
        in its thread) together with the submissions that come with it,
        jobseqnum once for them all.  Until then the job is nobody's to see:
        not in qstat, not in a scheduling pass, not a -hold_jid target; it
        only counts for max_jobs and max_u_jobs.  A job with -hold_jid or
        -hold_jid_ad is spooled and taken at once (synced, as :meth:`submit`):
        what it waits for must not change between its check and its taking.
        A write or sync that fails rejects the job and removes its files.
        ``queued`` is called once the job is numbered and waits for its commit
        (the connection may begin its next request)."""
        if req.get("hold_jid") or req.get("hold_jid_ad"):
            return self.submit(req, uid, gid)
        job, reply = self.new_job(req, uid, gid)
        self.submitting[job.number] = job
        if queued is not None:
            queued()
        error: SpoolError | None = None
        try:
            await self.group_commit.durable(*self.new_job_commit(job))
        except SpoolError as err:
            error = err
        except BaseException:
            del self.submitting[job.number]
            raise
        self.take_submitted(job, error)
        return reply

    def queue_submission(self, req: dict, uid: int, gid: int, answer: Callable[[dict | RequestError], None]) -> None:
        """:meth:`submit_in_group` for a caller that does not wait (the group
        commit's committer runs, the request has no -hold_jid): the job is
        checked and numbered now (RequestError when it is refused), and
        ``answer`` gets its reply once it is on disk, or the RequestError
        that rejects it when it could not be written."""
        job, reply = self.new_job(req, uid, gid)
        self.submitting[job.number] = job

        def committed(err: SpoolError | None) -> None:
            try:
                self.take_submitted(job, err)
            except RequestError as refusal:
                answer(refusal)
                return
            except Exception:  # a bug: the caller is answered all the same, never left waiting
                log.exception("taking job %d after its group commit failed", job.number)
                answer(RequestError("internal error while handling 'submit'"))
                return
            answer(reply)

        writes, once = self.new_job_commit(job)
        self.group_commit.add(writes, once, committed)

    def new_job_commit(self, job: Job) -> tuple[list[Callable[[], str]], dict[str, Callable[[], object]]]:
        """What the group commit makes durable of a new job: its writes, and
        jobseqnum once a batch (rewriting a file costs ext4 a write-out, auto_da_alloc)."""
        return self.new_job_writes(job, sync=False), {
            self.spool.jobseqnum_path: functools.partial(self.spool.write_jobseqnum, job.number)}

    def take_submitted(self, job: Job, err: SpoolError | None) -> None:
        """The group commit's word on a new job: on disk, it joins the cell's
        jobs; not written (``err``), it is rejected (RequestError)."""
        del self.submitting[job.number]
        if err is not None:
            self.reject_unwritten(job, err)
        self.accept_job(job)

    def new_job(self, req: dict, uid: int, gid: int,
                holds: tuple[bool, bool, bool] | None = None) -> tuple[Job, dict]:
        """The checks of a submission and its job, numbered (the number taken:
        the next submission gets the one after), not spooled; the job and
        its reply.  RequestError when it is refused."""
        gconf = self.config.global_conf
        if uid < gconf.min_uid:
            raise RequestError(
                f"Unable to run job: job rejected: your user id {uid} is lower than minimum user id "
                f"{gconf.min_uid} of cluster configuration\nExiting.",
            )
        if gid < gconf.min_gid:
            raise RequestError(
                f"Unable to run job: job rejected: your group id {gid} is lower than minimum group id "
                f"{gconf.min_gid} of cluster configuration\nExiting.",
            )
        if self.config.cell_owner_only and uid != self.admin_uid:
            raise RequestError(
                f"Unable to run job: job rejected: this cell runs as user {user_name(self.admin_uid)} "
                "and accepts its jobs alone\nExiting."
            )
        arr = req.get("array")  # more tasks than sge_conf(5) max_aj_tasks: refused by RequestHandler.op_submit
        self.config.check_request(req)
        self.config.normalise_request(req)
        owner, group = user_name(uid), group_name(gid)  # asked of the databases once
        self.config.check_submitter(owner, group, req)
        h_rt = (req.get("hard_resources") or {}).get("h_rt")
        for refusal in (submit_checks.checkpoint_refusal(req.get("checkpoint"), (), req.get("checkpoint_when"),
                                                         req.get("checkpoint_interval")),
                        self.reservations.job_refusal(req.get("ar"), owner, group, h_rt, self.clock()),
                        submit_checks.priority_refusal(int(req.get("priority") or 0), self.is_operator(uid))):
            if refusal:
                raise RequestError(f"Unable to run job: {refusal}\nExiting.")
        verify = req.get("verify_level") or "n"
        self.check_job_limits(owner, verify)
        job_id = self.last_job_id + 1
        if job_id > 9999999:  # Grid Engine wraps its job ids
            job_id = 1
        warnings: list[str] = []
        if verify != "n":
            try:
                warning = self.verify_job(req, job_id, owner, uid, gid, verify)
            except RequestError:
                self.consume_job_id(job_id)  # 8.1.9 numbers the job before it verifies it
                raise
            if warning:
                warnings.append(warning)
        now = self.clock()
        tasks = RangeList.of_array(arr[0], arr[1], arr[2]) if arr else RangeList.of_array(1, 1, 1)
        try:
            preds = job_dependencies.resolve(req.get("hold_jid") or [], owner, job_id, self.jobs)
            ad_refs = req.get("hold_jid_ad") or []
            ad_preds = job_dependencies.resolve(ad_refs, owner, job_id, self.jobs)
            job_dependencies.check_array_dependency(tuple(arr) if arr else None, bool(ad_refs),
                                                    [self.jobs[n] for n in ad_preds])
        except job_dependencies.DependencyError as e:
            raise RequestError(f"Unable to run job: {e}\nExiting.") from e
        job = Job(
            number=job_id,
            name=req["job_name"],
            owner=owner,
            uid=uid,
            group=group,
            gid=gid,
            submission_time=now,
            execution_time=execution_time(req.get("start_time"), now),
            spec=req,
            pending=tasks,
            user_hold=bool(req.get("hold")),
            predecessors=preds,
            priority=int(req.get("priority") or 0),
            ad_predecessors=ad_preds,
        )
        if holds is not None:
            job.user_hold, job.operator_hold, job.system_hold = holds
        if ad_preds:  # none: no task waits (the defaults)
            job_dependencies.init_array_holds(job, self.jobs)
        self.last_job_id = job_id
        reply: dict[str, Any] = {"job_id": job_id, "name": job.name, "array": arr}
        if warnings:
            reply["warnings"] = warnings
        return job, reply

    def new_job_writes(self, job: Job, sync: bool) -> list[Callable[[], str]]:
        """The writes of a new job, each returning its path: its script (kept
        in job_scripts/, not twice) and its file, fsynced or not (``sync``);
        SpoolError from a write refused."""
        writes: list[Callable[[], str]] = []
        script = job.spec.get("script")
        if script is not None and not job.spec.get("binary"):
            writes.append(functools.partial(self.spool.write_script, job.number, script, owner=job.uid, sync=sync))
            job.spec = dict(job.spec)
            job.spec["script"] = None
        writes.append(functools.partial(self.spool.write_job, job.number, _conv.unstructure(job), sync=sync, new=True))
        return writes

    def reject_unwritten(self, job: Job, err: SpoolError) -> typing.NoReturn:
        """A new job the spool did not take: nothing of it stays, in memory or
        on disk; its number is given again when no later one was given."""
        with contextlib.suppress(SpoolError):
            self.spool.delete_job(job.number)
        if self.last_job_id == job.number:
            self.last_job_id = job.number - 1
        raise RequestError(f"Unable to run job: {err}\njob {job.number} was rejected because it couldn't be written"
                           "\nExiting.") from None

    def accept_job(self, job: Job) -> None:
        """A new job, on disk, joins the cell's jobs."""
        self.jobs[job.number] = job
        self.index.add(job)
        log.debug("job %d submitted by %s", job.number, job.owner)  # as 8.1.9, whose messages file says nothing
        if job.number in self.index.considered or job.number in self.index.immediate:
            self.changed()  # a job held as a whole cannot start, nor change what a pass does: none for it

    def consume_job_id(self, job_id: int) -> None:
        """A job id given to a request that did not become a job (qsub -w v,
        -w p, a -w e refusal): the next job gets the one after, as in 8.1.9."""
        self.last_job_id = job_id
        with contextlib.suppress(SpoolError):
            self.spool.write_jobseqnum(job_id)

    def check_job_limits(self, owner: str, verify: str) -> None:
        """sge_conf(5) max_jobs (every job in the cell) and max_u_jobs (the
        user's, not asked for qsub -w v): a job over either is refused, and
        qsub exits 25 (STATUS_NOTOK_DOAGAIN: try again later)."""
        gconf = self.config.global_conf
        if gconf.max_jobs and len(self.jobs) + len(self.submitting) >= gconf.max_jobs:
            raise RequestError(f"Unable to run job: job rejected: only {gconf.max_jobs} jobs are allowed per cluster"
                               "\nExiting.", rc=25)
        if gconf.max_u_jobs and verify != "v":
            count = sum(1 for jobs in (self.jobs, self.submitting) for j in jobs.values() if j.owner == owner)
            if count >= gconf.max_u_jobs:
                raise RequestError(f"Unable to run job: job rejected: only {gconf.max_u_jobs} jobs are allowed per "
                                   f"user (current job count: {count})\nExiting.", rc=25)

    def verify_job(self, req: dict[str, Any], job_id: int, owner: str, uid: int, gid: int,
                   level: str) -> str | None:
        """qsub -w e|w|v|p (qsub(1)): could the job run?  ``e``, ``w`` and ``v``
        ask of the cell as if it were empty (resources free, load and queue
        states not looked at), ``p`` of the cell as it is now.  ``e`` refuses a
        job that could not, ``w`` submits it with a warning (returned), ``v``
        and ``p`` only report and never submit (a RequestError, exit 0 when
        a queue was found).  Each reason names the job by ``job_id``, as 8.1.9."""
        probe = Job(number=job_id, name=req.get("job_name") or "", owner=owner, uid=uid, group=group_name(gid),
                    gid=gid, submission_time=0.0, spec=req, pending=RangeList.of_array(1, 1, 1))
        if level == "p":
            # the running jobs book their slots and consumables; only the probe is pending
            jobs = {n: j for n, j in self.jobs.items() if j.tasks}
            jobs[job_id] = probe
            snap = self.config.snapshot(jobs, self.execds, now=self.clock())  # states, not load alarms
            snap = dataclasses.replace(snap, pending=tuple(t for t in snap.pending if t.job_id == job_id))
            plan = scheduler.schedule(snap)
            reasons = None if plan.dispatches else list(plan.reasons.get(job_id, []))
        else:
            reasons = self.empty_cell_reasons(probe)
        if reasons is None:
            if level in ("v", "p"):
                raise RequestError("verification: found suitable queue(s)", rc=0)
            return None
        if level == "w":
            return "warning: no suitable queues"
        if level == "e":
            raise RequestError("Unable to run job: error: no suitable queues\nExiting.")
        said = "".join(f"Job {job_id} {r}\n" for r in reasons[:1])
        raise RequestError(f"Unable to run job: {said}verification: no suitable queues\nExiting.")

    # ------------------------------------------------------------ delete
    def find_jobs(self, target: str) -> list[Job]:
        """The jobs a job id, name or name pattern names (qstat -j, qmod)."""
        parsed = job_targets.parse(target)
        return job_targets.jobs_named(self.jobs.values(), parsed) if parsed is not None else []

    def may_force_deletion(self, uid: int) -> bool:
        """qdel -f: a manager, or anyone with qmaster_params ENABLE_FORCED_QDEL."""
        return self.is_manager(uid) or bool(self.config.global_conf.qmaster_params.get("ENABLE_FORCED_QDEL"))

    async def delete(self, targets: list[str], uid: int, users: list[str] | None = None,
                     force: bool = False) -> tuple[list[str], int]:
        """qdel: returns the lines to print and the exit code (sge_gdi_del_job:
        each job_tasks on its own; ``users`` narrows them, or alone names
        every job of those users; a name without ``-u`` the caller's jobs)."""
        caller = user_name(uid)
        if force and not self.may_force_deletion(uid):
            return [f'"{caller}" - forcing a job deletion requires manager privileges'], 1
        lines: list[str] = []
        rc = 0
        named: list[job_targets.JobTasks | None] = [job_targets.parse(t) for t in targets] if targets else [None]
        for target in named:
            if target is None and targets:
                continue  # the command checked the syntax: a range that is none names nothing
            if target is None:
                found = [j for j in sorted(self.jobs.values(), key=lambda j: j.number)
                         if "*" in (users or ()) or job_targets.owner_named(users or [], j.owner)]
            else:
                owners = users if users else (None if target.is_id else [caller])
                found = job_targets.jobs_named(self.jobs.values(), target, owners)
            acted = 0
            for job in found:
                if job.owner != caller and not self.is_operator(uid):
                    lines.append(f"{caller} - you do not have the necessary privileges to delete the job "
                                 f'"{job.number}"')
                    rc = 1
                    acted += 1
                    continue
                done, ok, count = await self._delete_job(job, target.tasks if target else None, caller, force)
                lines.extend(done)
                acted += count
                rc = rc if ok else 1
            if not acted:
                lines.append(job_targets.nothing_named(target, users, caller))
                rc = 1
        return lines, rc

    async def _delete_job(self, job: Job, tasks: TaskSelection | None, caller: str,
                          force: bool = False) -> tuple[list[str], bool, int]:
        """One job's tasks (all, or those ``tasks`` names) deleted: the pending
        ones leave at once (no record: they never ran, as in Grid Engine), the
        running ones are killed and leave when they end (at once when
        ``force``d, accounted then).  O(tasks named).  The lines, whether
        the spool took it (all or nothing), and how many tasks it touched."""
        before = copy.deepcopy(job)
        if tasks is None:
            gone, job.pending = job.pending, RangeList(step=job.pending.step)
            deleted: list[int] = []
        else:
            gone = job.pending.take(tasks)
            deleted = list(gone)
        job.ad_held = {t for t in job.ad_held if t not in gone}
        for tid in [t for t in job.restarted_pending if t in gone]:
            del job.restarted_pending[tid]
        for tid in [t for t in job.task_holds if t in gone]:
            del job.task_holds[tid]
        count = len(gone)
        lines = []
        kills = []
        forced = []
        errors = []
        for task in sorted((t for t in job.tasks.values() if tasks is None or t.task_id in tasks),
                           key=lambda t: t.task_id):
            count += 1
            ref = f"job-array task {job.number}.{task.task_id}" if job.is_array else f"job {job.number}"
            if task.state == ERROR:
                job.tasks.pop(task.task_id)
                errors.append(task.task_id)
                continue
            if force:
                job.tasks.pop(task.task_id)
                forced.append(task)
                lines.append(f"{caller} forced the deletion of {ref}")  # 8.1.9 prints no "warning:"
                continue
            if task.delete_requested:
                lines.append(f"job {job.number} is already in deletion")
                continue
            task.delete_requested = True
            lines.append(f"{caller} has registered the {ref} for deletion")
            if task.state == RESCHEDULING:  # its run is already being killed
                continue
            kills.append(task)
        try:
            self.write_job(job)
        except SpoolError as err:
            job.restore(before)
            self.index.update(job)  # filed as it was
            return [str(err), f"deletion of job {job.number} was rejected because it couldn't be written"], False, 1
        if job.is_done():
            self.job_left(job)
        for task in forced:  # 8.1.9 writes the record of a forced deletion at once: ended now, failed 0,
            # exit status 0, no wallclock or usage (as captured beside the peer)
            record = accounting_writer.record_for(job, task, {}, 0, self.host,
                                                  *self.config.accounting_facts(job, task))
            self.account(record._replace(end_time=int(self.clock()), ru_wallclock=0))
        self.release_dependents(job, itertools.chain(gone, errors, (t.task_id for t in forced)))
        # the kills go out once the deletion is spooled: the queue's terminate_method
        # (default SIGKILL), SIGUSR2 first for -notify; and their slave tasks, on every host
        for task in [*kills, *forced]:
            await self.send_to_execd(task, self.job_control.control_message(job, task, "terminate"))
            await self.pe_tasks.kill(job.number, task.task_id)
        if tasks is not None:
            deleted = sorted([*deleted, *errors])
            if len(deleted) > 1:
                lines.append(f"{caller} has deleted job-array tasks {job_targets.task_ids_text(deleted)} "
                             f"of job {job.number}")
            elif deleted:
                lines.append(f"{caller} has deleted job-array task {job.number}.{deleted[0]}")
        elif gone or errors:
            lines.append(f"{caller} has deleted job {job.number}")
        self.notify_waiters(job)
        self.changed()
        return lines, True, count

    def release_dependents(self, job: Job, task_ids: Iterable[int] = ()) -> None:
        """Tasks of ``job`` left (ended, deleted): the tasks of -hold_jid_ad
        successors that waited for them, and once ``job`` is gone the jobs
        held by -hold_jid or -hold_jid_ad on it, go on
        (:mod:`minisge.qmaster.job_dependencies`)."""
        changed: dict[int, Job] = {}
        dependents = self.index.dependents.values()  # the jobs that wait for any, not every job
        changed.update((j.number, j) for j in job_dependencies.tasks_left(job, task_ids, self.jobs, dependents))
        if job.is_done():
            changed.update((j.number, j) for j in job_dependencies.job_left(job, self.jobs, dependents))
        for j in changed.values():
            self.save_job(j)
        self.changed()

    # ------------------------------------------------------------ hold
    def hold(self, targets: list[str], uid: int, kind: str = "u", release: bool = False,
             users: list[str] | None = None) -> tuple[list[str], int]:
        """qhold / qrls (qalter -h): ``kind`` is a subset of ``uos`` (user,
        operator, system); of the jobs ``targets`` names, or with ``users``
        every job of those users.  A task whose holds do not change says
        nothing; the exit code is that of the first refusal (8.1.9's)."""
        caller = user_name(uid)
        lines: list[str] = []
        rcs: list[int] = []
        named: list[tuple[job_targets.JobTasks | None, list[Job], str]] = []
        if users:
            named.append((None, [j for j in sorted(self.jobs.values(), key=lambda j: j.number)
                                 if "*" in users or job_targets.owner_named(users, j.owner)],
                          f"The job * of user(s) {','.join(users)} does not exist"))
        else:
            for t in targets:
                target = job_targets.parse(t)
                found = job_targets.jobs_named(self.jobs.values(), target) if target is not None else []
                named.append((target, found, f'denied: job "{target.ref if target else t}" does not exist'))
        for target, found, missing in named:
            if not found:
                lines.append(missing)
                rcs.append(3)
            for job in found:
                if job.owner != caller and not self.is_operator(uid):
                    lines.append(f'denied: "{caller}" must be at least owner of job {job.number} '
                                 "to change job attributes")
                    rcs.append(18)
                    continue
                tasks = target.tasks if target is not None else None
                changed: list[str] = []
                denied: list[str] = []

                def change(job: Job = job, tasks: TaskSelection | None = tasks, changed: list[str] = changed,
                           denied: list[str] = denied) -> None:
                    changed.extend(_hold_changes(job, tasks, kind, not release, caller, self.is_operator(uid),
                                                 self.is_manager(uid), denied))

                refused = self.alter_job(job, change)
                if refused:
                    lines.extend(refused)
                    rcs.append(1)
                    continue
                lines.extend(changed)
                rcs.extend(10 for _ in denied)
        self.changed()
        return lines, (rcs[0] if rcs else 0)

    def alter_job(self, job: Job, change: Callable[[], None]) -> list[str]:
        """Apply ``change`` to the job and spool it; all or nothing: when the
        spool does not take it, the job is as it was and the lines say so
        (8.1.9's answer to a job change its spool did not take)."""
        before = copy.deepcopy(job)
        try:
            change()
        except BaseException:  # a change refused half-way (qalter) leaves the job as it was
            job.restore(before)
            raise
        try:
            self.write_job(job)
        except SpoolError as err:
            job.restore(before)
            self.index.update(job)  # filed as it was
            return [str(err), f"alteration of job {job.number} was rejected because it couldn't be written"]
        return []

    # ------------------------------------------------------------ qalter, qresub
    def qalter(self, req: dict[str, Any], uid: int) -> tuple[list[str], int]:
        """qalter: the jobs of the job_task_list (ids, names, name patterns) or
        of the -u users changed (minisge.qmaster.job_modify), each all or
        nothing; a request stops at its first refusal, as in 8.1.9."""
        caller = job_modify.Caller(user_name(uid), self.host, self.is_operator(uid), self.is_manager(uid))
        lines: list[str] = []
        rc = 0
        users = req.get("users")
        if users is not None:
            groups = [(",".join(users), sorted((j for j in self.jobs.values() if "*" in users or j.owner in users),
                                               key=lambda j: j.number))]
        else:
            groups = [(t, self.find_alter_jobs(t.split(".", 1)[0])) for t in req.get("targets") or []]
        for ref, found in groups:
            if not found:
                lines.append(f'denied: job "{ref}" does not exist' if users is None else
                             f"The job * of user(s) {ref} does not exist")
                rc = 1
            for job in found:
                if job.owner != caller.name and not caller.operator:
                    lines.append(f'denied: "{caller.name}" must be at least owner of job {job.number} '
                                 "to change job attributes")
                    rc = 1
                    break
                said, ok = self.modify_job(job, req, caller)
                lines.extend(said)
                if not ok:
                    rc = 1
                    break
        self.changed()
        return lines, rc

    def find_alter_jobs(self, ref: str) -> list[Job]:
        """The jobs a qalter job reference names: an id, or a name or name pattern."""
        if is_decimal(ref):
            j = self.jobs.get(int(ref))
            return [j] if j else []
        return sorted((j for j in self.jobs.values() if fnmatch.fnmatchcase(j.name, ref)), key=lambda j: j.number)

    def modify_job(self, job: Job, req: dict[str, Any], caller: job_modify.Caller) -> tuple[list[str], bool]:
        """One job changed by a qalter request: its lines, and False when refused."""
        said: list[str] = []
        fine = True

        def change() -> None:
            nonlocal said, fine
            job.own_spec()  # qalter changes the job's request, not the others' that share it
            said, fine = job_modify.modify(job, req.get("changes") or {}, req.get("context_ops") or [],
                                           req.get("hold"), caller, self.config, self.jobs, self.unsuitable)
            if "start_time" in (req.get("changes") or {}):  # -a: read as at submission, now
                job.execution_time = execution_time(job.spec.get("start_time"), self.clock())
        try:
            refused = self.alter_job(job, change)
        except job_modify.Verified as v:
            return v.lines, True
        except job_modify.ModifyRefused as e:
            return e.lines, False
        if refused:
            return refused, False
        log.info("%s@%s modified job %d", caller.name, caller.host, job.number)
        return said, fine

    def unsuitable(self, job: Job) -> list[str] | None:
        """qalter -w: None when a queue of the empty cell would take the job, else the scheduler's reasons."""
        probe = Job(number=job.number, name=job.name, owner=job.owner, uid=job.uid, group=job.group, gid=job.gid,
                    submission_time=0.0, spec=job.spec, pending=RangeList.of_array(1, 1, 1))
        return self.empty_cell_reasons(probe)

    def empty_cell_reasons(self, probe: Job) -> list[str] | None:
        """Could ``probe`` run if the cell were empty?  (qsub(1) -w: resources
        are assumed free, load and states are not looked at.)  None when it
        could, else the scheduler's reasons why not."""
        snap = self.config.snapshot({probe.number: probe}, {}, states=False)
        plan = scheduler.schedule(snap)
        return None if plan.dispatches else list(plan.reasons.get(probe.number, []))

    def resubmit(self, targets: list[str], uid: int, hold: str | None) -> tuple[list[str], int]:
        """qresub: a new job for each job named, a copy of it (its script too)
        as it was submitted, changed by -h; its owner's, whoever asks (the
        owner or a manager)."""
        caller = job_modify.Caller(user_name(uid), self.host, self.is_operator(uid), self.is_manager(uid))
        lines: list[str] = []
        for target in targets:
            number = int(target) if is_decimal(target) else 0
            job = self.jobs.get(number)
            if job is None:
                lines.append(f'job "{number}" does not exist')
                return lines, 4
            if job.owner != caller.name and not caller.manager:
                lines.append(f"job rejected: {caller.name}@{self.host} is not allowed to resubmit jobs of user "
                             f"{job.owner}")
                return lines, 4
            spec = copy.deepcopy(job.spec)
            spec["hold"] = False
            if not spec.get("binary") and spec.get("script") is None:
                try:
                    spec["script"] = self.spool.read_script(job.number)
                except OSError as err:
                    lines.append(f"can't read script of job {job.number}: {err.strerror or err}")
                    return lines, 4
            probe = Job(number=job.number, name=job.name, owner=job.owner, uid=job.uid, group=job.group,
                        gid=job.gid, submission_time=0.0, spec=spec, pending=RangeList.of_array(1, 1, 1),
                        priority=job.priority)
            try:
                lines.extend(job_modify.modify(probe, {}, [], hold, caller, self.config, self.jobs,
                                               self.unsuitable)[0])
            except job_modify.ModifyRefused as e:
                lines.extend(e.lines)
                return lines, 4
            try:
                res = self.submit(spec, job.uid, job.gid,
                                  holds=(probe.user_hold, probe.operator_hold, probe.system_hold))
            except RequestError as e:
                lines.append(str(e))
                return lines, e.rc
            lines.append(f'Your job {submit_options.job_id_text(res["job_id"], res["array"])} '
                         f'("{res["name"]}") has been submitted')
        return lines, 0

    # ------------------------------------------------------------ qmod
    async def qmod(self, req: dict, uid: int) -> tuple[list[str], int]:
        """qmod -d/-e (disable/enable), -c (clear queue error), -cj (clear job error)."""
        caller = user_name(uid)
        action = req.get("action")
        if action in QMOD_ACTIONS:  # -s/-us/-r and their -j/-q forms
            return self.qmod_job_control(req, uid)
        lines: list[str] = []
        rc = 0
        for t in req.get("targets") or []:
            # -cj names jobs; -c queues, else jobs; -cq, -d, -e queues (sge_gdi_qmod)
            qis = [] if action == "cj" else self.config.match_qinstances(t)
            if not qis and (action == "cj" or (action == "c" and is_decimal(t.split(".", 1)[0]))):
                target = job_targets.parse(t)
                found = job_targets.jobs_named(self.jobs.values(), target) if target is not None else []
                if found:
                    out, ok = self.qmod_clear_jobs(found, target, uid, caller)
                    lines.extend(out)
                    rc = rc if ok else 1
                    continue
            if not qis:
                ref = t.split(".", 1)[0]
                lines.append(f'invalid queue or job "{ref}"' if action == "cj" else f'invalid queue "{t}"')
                rc = 1
                continue
            for qi in qis:
                if not self.is_operator(uid) and caller not in self.config.owners_of(qi):
                    lines.append(f'{caller} - you have no permission to modify queue "{qi}"')
                    rc = 1
                    continue
                lines.append(self.qmod_queue_state(qi, str(action), caller))
                rc = 1 if lines[-1] == unwritten_qi_state(qi) else rc
        self.changed()
        return lines, rc

    def qmod_queue_state(self, qi: str, action: str, caller: str) -> str:
        """qmod -d, -e, -c/-cq of one queue instance: 8.1.9's line."""
        states = self.config.qi_states.get(qi, "")
        word = {"d": "disabled", "e": "enabled"}.get(action, "no error")
        if action in ("d", "e"):
            already = (action == "d") == ("d" in states)
        else:
            already = "E" not in states
        if already:
            return f'Queue instance "{qi}" is already in the specified state: {word}'
        try:
            if action == "d":
                self.config.add_qi_state(qi, "d")
            elif action == "e":
                self.config.remove_qi_state(qi, "d")
            else:
                self.config.clear_queue_error(qi)
        except SpoolError:
            return unwritten_qi_state(qi)
        return f'{caller}@{self.host} changed state of "{qi}" ({word})'

    def qmod_clear_jobs(self, found: list[Job], target: job_targets.JobTasks | None, uid: int,
                        caller: str) -> tuple[list[str], bool]:
        """qmod -cj (or -c naming no queue) of the jobs one job_tasks names."""
        lines: list[str] = []
        ok = True
        for job in found:
            if job.owner != caller and not self.is_operator(uid):
                lines.append(f'{caller} - you have no permission to modify job "{job.number}"')
                ok = False
                continue
            out, cleared = self.clear_job_errors(job, target.tasks if target else None, caller)
            if out is None:
                lines.append(f'invalid queue or job "{job.number}"')
                ok = False
                continue
            lines.extend(out)
            ok = ok and cleared
        return lines, ok

    def clear_job_errors(self, job: Job, tasks: TaskSelection | None, caller: str) -> tuple[list[str] | None, bool]:
        """qmod -cj of one job's tasks (all, or those ``tasks`` names): a task
        in error (Eqw) is pending again; 8.1.9's line for each task named
        (sge_change_job_state); None when the range names no task."""
        ids = sorted({*(t for t in job.tasks if tasks is None or t in tasks)})
        enrolled = [job.tasks[t] for t in ids]
        lines = []
        for task in enrolled:
            ref = rules_job_control.TaskRef(job.number, task.task_id, job.is_array)
            lines.append(rules_job_control.clear_error_message(caller, self.host, ref, task.state == ERROR))
        if tasks is None and job.is_array:
            if not enrolled and job.pending:
                lines.append(f"Modify operation can not be applied on job {job.number} in pending/hold state")
        else:
            pending = list(job.pending) if tasks is None else list(job.pending.select(tasks))
            lines.extend(rules_job_control.not_applicable(rules_job_control.TaskRef(job.number, tid, True))
                         for tid in pending)
            if not pending and not enrolled:
                return None, False
        errors = [t for t in enrolled if t.state == ERROR]
        if not errors:
            return lines, True

        def requeue() -> None:
            for task in errors:
                del job.tasks[task.task_id]
                job.requeue(task.task_id)

        refused = self.alter_job(job, requeue)
        return (refused, False) if refused else (lines, True)

    def qmod_job_control(self, req: dict[str, Any], uid: int) -> tuple[list[str], int]:
        """qmod -s/-us/-r (jobs or queues), -sj/-usj/-rj (jobs), -sq/-usq/-rq
        (queues): who may, and which jobs and queue instances are meant; the
        actions are :class:`minisge.qmaster.job_control.JobControl`'s."""
        caller = user_name(uid)
        action = req["action"]
        job_action = JOB_ACTIONS.get(action, "")  # "" where the option names no job
        queue_action = QUEUE_ACTIONS.get(action, "")
        force = bool(req.get("force"))
        lines: list[str] = []
        rc = 0
        for target in req.get("targets") or []:
            jobs: list[tuple[Job, TaskSelection | None]] = []
            if job_action:
                split = _split_task_target(target)
                if split is not None:
                    jobs = [(j, split[1]) for j in self.find_jobs(split[0])]
            qis = self.config.match_qinstances(target) if queue_action and not jobs else []
            if not jobs and not qis:
                lines.append(f'invalid queue or job "{target}"' if job_action else f'invalid queue "{target}"')
                rc = 1
                continue
            for job, task_ids in jobs:
                if job.owner != caller and not self.is_operator(uid):
                    lines.append(f'{caller} - you have no permission to modify job "{job.number}"')
                    rc = 1
                    continue
                lines.extend(self.job_control.qmod_job(job, task_ids, job_action, caller, force))
            for qi in qis:
                if not self.is_operator(uid) and caller not in self.config.owners_of(qi):
                    lines.append(f'{caller} - you have no permission to modify queue "{qi}"')
                    rc = 1
                    continue
                lines.extend(self.job_control.qmod_queue(qi, queue_action, caller, force))
        self.changed()
        return lines, rc

    # ------------------------------------------------------------ job control
    def queue_rerun(self, task: Task) -> str:
        """queue_conf(5) ``rerun`` of the task's (master) queue instance."""
        m = task.master
        conf = self.config.cqueues.get(m.cqueue) if m is not None else None
        return self.config.qvalue(conf, "rerun", m.host) if conf is not None and m is not None else "FALSE"

    def suspend_task(self, job: Job, task: Task, cause: str) -> None:
        """Add a suspension cause (job, queue, threshold, subordinate); the job
        is stopped when it is the first (minisge.qmaster.job_control)."""
        self.job_control.suspend_task(job, task, cause)

    def resume_task(self, job: Job, task: Task, cause: str) -> None:
        """Remove a suspension cause; the job continues when none is left."""
        self.job_control.resume_task(job, task, cause)

    # ------------------------------------------------------------ scheduling
    def schedule(self) -> list[tuple[Job, Task]]:
        """One scheduling pass over the jobs it may start or that hold
        something (``job_index.py:JobIndex``: a held job is not looked at),
        its dispatches applied; the tasks it started (spooled by :meth:`flush`)."""
        now = self.clock()
        jobs = self.indexed_jobs()
        with gc_paused():
            counted = self.config.running_jobs_of(jobs, self.index.take_changed())
            snap = self.config.snapshot(jobs, self.execds, now=now, explain=self.explains_pending(),
                                        counted=counted)
            snap = self.load_control.apply(snap, counted)  # thresholds, subordination: states a A S, suspend/resume
            snap = self.with_tickets(snap, now, jobs)
            if self.reservations.ars:
                snap = dataclasses.replace(snap, reservations=self.reservations.snapshot())
            plan = scheduler.schedule(snap)
        # sched_conf(5) schedd_job_info: the reasons of which jobs are kept
        self.pending_reasons = schedd_message.kept_reasons(plan.reasons, snap.pending,
                                                           self.config.sched_conf.schedd_job_info)
        self.global_messages = plan.global_messages
        self.job_reservations = {r.job_id: r for r in plan.reservations}
        if self.config.sched_conf.monitor:
            self.write_schedule(snap, plan)
        started = []
        for d in plan.dispatches:
            job = self.jobs[d.job_id]
            if not job.pending.discard(d.task_id):
                continue
            job.forget_task_hold(d.task_id)
            task = Task(
                task_id=d.task_id,
                state=RUNNING,
                start_time=now,
                granted=[Grant(q, h, n, dict(d.resource_maps[i]) if d.resource_maps else {})
                         for i, (q, h, n) in enumerate(d.granted)],
                granted_pe=d.pe or "",
                restarted=job.restarted_pending.pop(d.task_id, 0),
            )
            job.add_task(task)
            started.append((job, task))
        for job, _ in started:
            self.dirty[job.number] = job
        if started:
            self.load_control.dispatched()  # a superordinated queue instance may have filled up
        self.drop_unscheduled_immediate({job.number for job, _ in started})
        return started

    def indexed_jobs(self) -> dict[int, Job]:
        """The jobs a pass considers (``job_index.py:JobIndex.considered``),
        the jobs changed and not yet written (marked for :meth:`flush`) filed
        again first: every other change of a job was written, and filed then."""
        for job in self.dirty.values():
            if job.number in self.jobs:
                self.index.update(job)
        return self.index.considered

    def explains_pending(self) -> bool:
        """sched_conf(5) schedd_job_info: does a pass find why the jobs it
        cannot start wait (``false``: it does not look)."""
        return self.config.sched_conf.schedd_job_info_enabled

    def write_schedule(self, snap: scheduler.Snapshot, plan: scheduler.Plan) -> None:
        """sched_conf(5) params MONITOR=1: the pass's schedule appended to
        $SGE_ROOT/$SGE_CELL/common/schedule (running, starting and reserving
        jobs, one line per resource: :func:`minisge.scheduler.reservation:schedule_lines`)."""
        lines = reservation.schedule_lines(snap, reservation.pass_entries(snap, plan))
        try:
            with open(self.cell.common_file("schedule"), "a", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        except OSError as e:
            log.warning("cannot write the schedule file: %s", e)

    def ticket_input(self, now: float, free_slots: int,
                     jobs: Mapping[int, Job] | None = None) -> tuple[Any, tuple[Any, ...]] | None:
        """The ticket policies' input (sge_priority(5)) at ``now``: the share
        tree, usage, shares; the tasks of ``jobs`` (all the jobs by default;
        a held job with no task has none to weigh)."""
        return self.share_usage.ticket_input(self.jobs if jobs is None else jobs, now, self.config.sched_conf,
                                             self.config.projects, free_slots, self.usage_of)

    def with_tickets(self, snap: scheduler.Snapshot, now: float,
                     jobs: Mapping[int, Job] | None = None) -> scheduler.Snapshot:
        """The snapshot with the ticket policies' input (ntckts of the dispatch
        order), of ``jobs`` (the pass's: :meth:`ticket_input`)."""
        free = sum(max(0, qi.slots - qi.used) for qi in snap.qinstances)
        found = self.ticket_input(now, free, jobs)
        if found is None:
            return snap
        return dataclasses.replace(snap, tickets=found[0], ticket_tasks=found[1])

    def drop_unscheduled_immediate(self, started: set[int]) -> None:
        """qsub -now y (an immediate job): its one chance is the first pass
        after its submission; the tasks it did not start leave the job
        (never ran: no accounting record) and a job left with none is gone.
        Its waiting qsub hears ``scheduled`` (``started``: jobs this pass
        dispatched) or the job's end."""
        for job in list(self.index.immediate.values()):
            if job.number in started:
                self.notify_waiters(job, event="scheduled")
            if not job.pending:
                continue
            job.pending = RangeList(step=job.pending.step)
            job.ad_held.clear()
            job.restarted_pending.clear()
            log.info("immediate job %d could not be scheduled: deleted", job.number)
            if job.is_done():
                self.save_job(job)
            else:
                self.dirty[job.number] = job
            self.release_dependents(job)
            self.notify_waiters(job)

    def next_execution_time(self) -> float | None:
        """The earliest qsub -a execution time still to come of a job with a
        pending task, or start or end time of an advance reservation (the
        scheduler loop runs a pass then), or None."""
        job_time = self.index.next_execution_time(self.jobs, self.clock())
        ar_time = self.reservations.next_event_time()
        return min((t for t in (job_time, ar_time) if t is not None), default=None)

    def reservation_jobs(self, ar_id: int) -> list[Job]:
        """The jobs submitted into advance reservation ``ar_id`` (qsub -ar)."""
        return [j for j in self.jobs.values() if int(j.spec.get("ar") or 0) == ar_id and not j.is_done()]

    async def delete_reservation_jobs(self, ar_id: int, caller: str, force: bool) -> int:
        """qrdel, or an advance reservation's end: its jobs deleted (``force``:
        running ones at once, accounted then); how many are left running."""
        for job in sorted(self.reservation_jobs(ar_id), key=lambda j: j.number):
            await self._delete_job(job, None, caller, force)
        return len(self.reservation_jobs(ar_id))

    def ack_task_end(self, host: str, job_id: int, task_id: int) -> None:
        """Acknowledge an end to the execd once it is spooled (flush): only then
        may the execd drop the task's directory."""
        self.acks_after[(job_id, task_id)] = self.accounting_sync.appended  # its record, if any, is one of these
        self.outbox.post(host, {"op": "ack_end", "job_id": job_id, "task_id": task_id})

    def flush(self, started: Iterable[tuple[Job, Task]] = ()) -> list[tuple[Job, Task]]:
        """Spool the jobs changed since the last flush: one atomic write each,
        however many of its tasks started or ended.  Called by the scheduler
        loop before it sends start messages, so a dispatch is on disk before
        the task runs, and before it delivers the outbox's posted messages.
        Of the pass's dispatches ``started``, those whose job the spool did
        not take are undone (pending again); the others are returned.
        The accounting records of the ends since the last flush are synced
        first, all at once (:meth:`sync_accounting`)."""
        self.sync_accounting()
        self.share_usage.spool_usage(self.clock())  # once a second at most (ShareUsage.run_timer: the rest)
        dirty, self.dirty = self.dirty, {}
        unsaved = {job.number for job in self.journal_jobs([job for job in dirty.values() if job.number in self.jobs])
                   if not self.save_job(job, sync=False)}
        kept = []
        for job, task in started:
            if job.number in unsaved:
                job.tasks.pop(task.task_id, None)
                job.requeue(task.task_id, task.restarted)
            else:
                kept.append((job, task))
        return kept

    def journal_jobs(self, jobs: list[Job]) -> list[Job]:
        """The running jobs' transitions of a pass spooled as journal lines,
        one write for all (:mod:`minisge.qmaster.job_journal`); the jobs still
        to be written whole: the done ones (their files go), and all of them
        when the journal did not take its lines."""
        lines = [job for job in jobs if not job.is_done()]
        if not lines:
            return jobs
        journal = self.spool.journal
        entries = []
        for job in lines:
            data = _conv.unstructure(job)
            del data["spec"]  # a line never needs the request: a change of it is written whole
            entries.append((self.spool.next_seq(), job.number, data))
        try:
            journal.append(entries)
        except OSError as err:
            journal.failed("append", f"cannot append to the job journal ({err.strerror}): the jobs are written whole")
            return jobs
        journal.worked("append")
        for job in lines:
            self.index.update(job)  # (as write_job does for every change)
            self.backlog.job_saved(job.number)
            journal.journaled.add(job.number)
        if journal.size > JOURNAL_LIMIT:
            self.compact_journal()
        return [job for job in jobs if job.is_done()]

    def settle_journal(self) -> None:
        """The daemon's, after :meth:`load`: the job journal's torn end cut
        off and its lines written into their jobs' files
        (:mod:`minisge.qmaster.job_journal`).  Not :meth:`load`'s: a reader
        of a running cell's spool (``python -m minisge.offline``) writes
        nothing."""
        try:
            self.spool.journal.cut_torn_end()
        except OSError as err:
            self.spool.journal.failed("cut", f"cannot cut the torn end off the job journal: {err}")
        if self.spool.journal.journaled:
            self.compact_journal()

    def compact_journal(self) -> None:
        """The jobs of the journal's lines written whole and synced, then the
        journal emptied (:mod:`minisge.qmaster.job_journal`); when a write or
        the sync fails the journal stays as it is (its lines still hold) and
        the next pass tries again."""
        try:
            paths = []
            for number in sorted(self.spool.journal.journaled):
                job = self.jobs.get(number)
                if job is not None and not job.is_done():
                    paths.append(self.spool.write_job(number, _conv.unstructure(job), sync=False))
                    self.backlog.job_saved(number)
            sync_paths(paths)
            self.spool.journal.empty()
        except OSError as err:
            self.spool.journal.failed("compact", f"cannot compact the job journal: {err} (kept, tried again)")
            return
        self.spool.journal.worked("compact")

    async def deliver(self) -> None:
        """Send the posted messages (the scheduler loop, after its flush); an
        acknowledgement of an end whose record is not yet synced waits for
        the sync (:meth:`send_synced_acks`), one whose job the spool did not
        take waits in the backlog."""
        for host, msg in self.held_acks() + self.outbox.take():
            if msg.get("op") == "ack_end":
                await self.send_ack(host, msg)
            else:
                await self.outbox.send(host, msg)

    async def send_synced_acks(self) -> None:
        """The accounting syncer synced: the acknowledgements that waited for
        it go out now, without a pass (they were delivered once, after the
        flush that wrote their job)."""
        for host, msg in self.held_acks():
            await self.send_ack(host, msg)

    def held_acks(self) -> list[tuple[str, dict[str, Any]]]:
        """The acknowledgements that waited for a sync of the accounting file,
        taken to be sent again (:meth:`send_ack`) when a sync was made since
        they were last tried; none while no sync was (every one of them
        would wait again: a stream of ends is not walked once a pass)."""
        synced = self.accounting_sync.synced
        if synced == self.acks_tried_at:
            return []
        self.acks_tried_at = synced
        held, self.unsynced_acks = self.unsynced_acks, []
        return held

    async def send_ack(self, host: str, msg: dict[str, Any]) -> None:
        key = (int(msg["job_id"]), int(msg["task_id"]))
        # its record (one of those appended before it was posted; when not known, all so far) on disk?
        if not self.accounting_sync.is_synced(self.acks_after.get(key, self.accounting_sync.appended)):
            self.unsynced_acks.append((host, msg))  # not yet: after the sync that makes it so
            return
        self.acks_after.pop(key, None)
        if self.backlog.holds_ack(key[0]):
            self.backlog.hold_ack(host, msg)
        else:
            await self.outbox.send(host, msg)

    def released(self, acks: list[tuple[str, dict[str, Any]]]) -> None:
        """The backlog's timer wrote what it could: the acknowledgements it
        released are posted, and the scheduler loop is woken (it delivers
        them, and dispatches what waited) once something went out."""
        for host, msg in acks:
            self.outbox.post(host, msg)
        if acks or self.backlog.empty:  # not a pass a second while the disk stays full
            self.changed()

    def reconcile_host(self, host: str, known: set[tuple[int, int]]) -> None:
        """An execd (re)registered knowing the tasks ``known`` (running, or ended
        and not yet acknowledged).  A task this qmaster dispatched to it that it
        does not know never started (the start message was lost with a crash):
        it goes back to pending, to run once, its restart count kept (a rerun
        after exit 99 still sees RESTARTED=1, as 8.1.9's JAT_job_restarted)."""
        for job in list(self.jobs.values()):
            lost = [t for t in job.tasks.values()
                    if t.state in (RUNNING, RESCHEDULING) and t.master is not None and t.master.host == host
                    and (job.number, t.task_id) not in known]
            for t in lost:
                if t.state == RESCHEDULING:  # qmod -r while its host was away
                    end_of_rescheduled(job, t)
                    continue
                log.warning("task %d.%d was never started on %s: back to pending", job.number, t.task_id, host)
                del job.tasks[t.task_id]
                if not t.delete_requested:  # its restart count kept (JAT_job_restarted is the task's)
                    job.requeue(t.task_id, t.restarted)
            if lost:
                self.save_job(job)
                self.release_dependents(job, [t.task_id for t in lost])
        self.changed()

    async def send_to_execd(self, task: Task, msg: dict[str, Any]) -> None:
        if task.master is not None:
            await self.outbox.send(task.master.host, msg)

    async def start_task(self, job: Job, task: Task) -> None:
        self.notify_waiters(job, event="started", task_id=task.task_id)  # qsub -sync r
        if task.master is None or task.master.host not in self.execds:
            return
        msg = self.config.start_message(job, task, self.spool.script_path(job.number))
        await self.outbox.send(task.master.host, msg)

    # ------------------------------------------------------------ execd reports
    def task_finished(self, report: dict) -> None:
        job = self.jobs.get(report["job_id"])
        if job is None:
            return
        task = job.tasks.get(report["task_id"])
        if task is None:
            return
        if stale_report(task, report):  # rescheduled while that host was unknown
            return
        if task.state == RESCHEDULING:  # qmod -r: accounted when it was pushed
            end_of_rescheduled(job, task)
            if job.is_done():  # deleted meanwhile
                self.save_job(job)
                self.notify_waiters(job)
            else:
                self.dirty[job.number] = job
            self.release_dependents(job, [task.task_id])
            self.changed()
            return
        outcome = exit_codes.job_outcome(report, self.config.forbid_reschedule, self.config.forbid_apperror,
                                         deleted=task.delete_requested)
        outcome = rerun_outcome(outcome, job, task, self.queue_rerun(task))
        record = accounting_writer.record_for(job, task, report, outcome.failed, self.host,
            *self.config.accounting_facts(job, task))
        if not (task.start_time < self.boot_time and accounting_writer.already_written(self.cell.accounting, record)):
            self.account(record, sync=False)  # synced by the next flush, before the end is acknowledged
            self.share_usage.job_finished(job.owner, job.spec.get("project") or None, record.cpu, record.mem,
                                          record.io, self.clock(), self.config.sched_conf)
        del job.tasks[task.task_id]
        if outcome.requeue and not task.delete_requested:
            # Rq and RESTARTED=1 only for a reschedule (exit 99); a re-queue after a
            # queue or host failure leaves the job as it was (qw), as in 8.1.9
            job.requeue(task.task_id, exit_codes.restarted_after(task.restarted, outcome.failed))
        elif outcome.job_error and not task.delete_requested:
            task.state = ERROR
            task.error_reason = outcome.reason
            task.granted = []
            job.add_task(task)
        if outcome.queue_error and task.master is not None:
            m = task.master
            qis = self.config.match_qinstances(f"*@{m.host}") if outcome.host_error else [m.qinstance]
            for qi in qis:
                self.config.set_queue_error(qi, exit_codes.queue_error_message(qi.split("@")[0], job.number, m.host))
            self.config.spool_qi_states()
        if job.is_done():
            self.save_job(job)  # gone from the spool (an unlink) and from qstat
        else:
            self.dirty[job.number] = job  # spooled by flush(), with the pass's dispatches
        self.release_dependents(job, [task.task_id])
        self.notify_waiters(job, dict(report, deleted=task.delete_requested, failed=outcome.failed,
                                      requeued=outcome.requeue and not task.delete_requested))
        self.changed()

    # ------------------------------------------------------------ -sync y
    def add_waiter(self, job_id: int) -> trio.MemoryReceiveChannel[dict[str, Any]]:
        send, recv = trio.open_memory_channel[dict[str, Any]](100000)
        self.job_waiters.setdefault(job_id, []).append(send)
        return recv

    def notify_waiters(self, job: Job, report: dict[str, Any] | None = None, event: str | None = None,
                       task_id: int = 0) -> None:
        """Tell the waiting qsub -sync y|r / -now y of a task's end (``report``),
        the job's end, or another ``event``: ``scheduled`` (-now y), ``started``
        (-sync r: task ``task_id`` was dispatched, its start message sent)."""
        for ch in self.job_waiters.get(job.number, []):
            try:
                if event is not None:
                    ch.send_nowait({"event": event, "task_id": task_id})
                    continue
                if report is not None and not report.get("requeued"):
                    ch.send_nowait({"event": "task_end", "task_id": report["task_id"],
                                    "exit_status": report.get("exit_status", 0),
                                    "signal": report.get("signal", 0), "failed": report.get("failed", 0),
                                    "deleted": bool(report.get("deleted"))})
                if job.is_done() or job.number not in self.jobs:
                    ch.send_nowait({"event": "job_end"})
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        if job.is_done():
            self.job_waiters.pop(job.number, None)



def describe_structure_error(err: Exception) -> str:
    """What is wrong with a job file, in one line (cattrs groups its errors)."""
    if isinstance(err, cattrs.BaseValidationError):
        notes = [f"{e}" for e in err.exceptions]
        return "; ".join(notes) or str(err)
    return str(err)


def _hold_changes(job: Job, tasks: TaskSelection | None, kinds: str, on: bool, caller: str,
                  operator: bool, manager: bool, denied: list[str]) -> list[str]:
    """Set or clear the holds ``kinds`` of a job's pending tasks (all, or
    those ``tasks`` names) as 8.1.9 does (mod_task_attributes): the tasks
    are visited in turn (all: those without a hold, then those with a user,
    an operator, a system hold), a task whose holds would change checks the
    caller's right to every kind asked; the first it lacks is refused for
    that task (a line, which ``denied`` gets too) and dropped from the
    kinds asked for the tasks after it.  The lines, in order."""
    mask = set(kinds)
    lines: list[str] = []
    verb = "set" if on else "remove"

    def visit(tid: int) -> None:
        old = job.task_hold_letters(tid) if job.is_array else job.hold_letters
        new = "".join(k for k in "uos" if (k in old or (on and k in mask)) and not (not on and k in mask))
        if new == old:
            return
        for kind, allowed, who, what in (("s", manager, "manager", "manager"), ("o", operator, "operator", "operator")):
            if kind in mask and not allowed:
                mask.discard(kind)
                lines.append(f'denied: "{caller}" must be {who} to {verb} {what} hold')
                denied.append(lines[-1])
                return
        job.set_hold_letters(tid if job.is_array else None, new)
        lines.append(f"modified hold of job-array task {job.number}.{tid}" if job.is_array
                     else f"modified hold of job {job.number}")

    if tasks is not None:
        for tid in job.pending.select(tasks):
            visit(tid)
    else:
        for held in ("", "u", "o", "s"):  # JB_ja_n_h_ids, JB_ja_u_h_ids, JB_ja_o_h_ids, JB_ja_s_h_ids
            for tid in [t for t in job.pending if (held in job.task_hold_letters(t) if held
                                                   else not job.task_hold_letters(t))]:
                visit(tid)
    if not job.is_array and job.tasks and (tasks is None or 1 in tasks):
        visit(1)  # a job that runs: its hold, for when it is pending again
    job.normalise_holds()
    return lines


def unwritten_qi_state(qi: str) -> str:
    """8.1.9's answer to a queue instance state its spool did not take."""
    return f'Queue instance state of "{qi}" not modified: Spooling framework failed'


def _split_task_target(target: str) -> tuple[str, TaskSelection | None] | None:
    """qmod's job targets: ``5``, ``5.3``, ``5.1-4:2``, ``name`` → (job
    reference, the tasks named or None for all); None for a task range that is none."""
    ref, dot, rng = target.partition(".")
    if not dot or not is_decimal(ref):
        return target, None
    tasks = TaskSelection.parse(rng)
    return (ref, tasks) if tasks is not None else None
