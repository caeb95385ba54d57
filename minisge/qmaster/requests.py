"""The qmaster's answers to requests from commands and reports from execds.

One handler per operation of :mod:`minisge.protocol.catalogue`, looked up by
its name: ``handlers`` for the commands' requests (``COMMAND``), each
returning the final reply (a dict) and maybe sending intermediate ones
(``qsub -sync y``); ``execd_handlers`` for the execds' reports (``EXECD``;
``register`` and ``relay`` belong to the TCP link, :mod:`minisge.qmaster.execd_links`).
Every message is checked against the catalogue before a handler sees it: a
bad request gets an error reply naming the field, a bad report is logged and
dropped.  Who asks is the peer the protocol layer established: the kernel's
``Credentials`` for local commands (or an execd's word on them, relayed).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from minisge.formats import submit_options
from minisge.protocol import Credentials, catalogue, error_reply, ok_reply
from minisge.protocol import trio_streams as protocol_trio
from minisge.protocol.trio_streams import DropLog
from minisge.qmaster import host_views, ping, qconf, views
from minisge.qmaster.config_state import RequestError
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.users import user_name
from minisge.scheduler import quota

log = logging.getLogger("minisge.requests")

Reply = dict[str, Any]
SendMore = Callable[[Reply], Awaitable[None]]
CommandHandler = Callable[[Reply, Credentials, SendMore], Awaitable[Reply]]
ReportHandler = Callable[[Reply], Awaitable[None]]


class RequestHandler:
    def __init__(self, qm: Qmaster, shutdown: Callable[[], None] | None = None, role: str = "allinone"):
        self.qm = qm
        self.shutdown = shutdown  # what op ``shutdown`` calls: the cancellation of the daemon that owns us
        self.role = role  # the daemon that owns us: "allinone" (with its execd) or "qmaster" (minisge status)
        self.dropped = DropLog(log, "execd report")
        self.refused = DropLog(log, "request", verb="refused")
        self.handlers: dict[str, CommandHandler] = {
            catalogue.PING: self.op_ping,
            catalogue.SHUTDOWN: self.op_shutdown,
            catalogue.SUBMIT: self.op_submit,
            catalogue.QSTAT: self.op_qstat,
            catalogue.QSTAT_FULL: self.op_qstat_full,
            catalogue.JOB_DETAIL: self.op_job_detail,
            catalogue.QDEL: self.op_qdel,
            catalogue.QHOLD: self.op_qhold,
            catalogue.QCONF: self.op_qconf,
            catalogue.QMOD: self.op_qmod,
            catalogue.PE_TASK: self.op_pe_task,
            catalogue.QQUOTA: self.op_qquota,
            catalogue.SHARE_MON: self.op_share_mon,
            catalogue.QALTER: self.op_qalter,
            catalogue.QRESUB: self.op_qresub,
            catalogue.QHOST: self.op_qhost,
            catalogue.QSELECT: self.op_qselect,
            catalogue.QRSUB: self.op_qrsub,
            catalogue.QRSTAT: self.op_qrstat,
            catalogue.QRDEL: self.op_qrdel,
            catalogue.QPING: self.op_qping,
        }
        self.execd_handlers: dict[str, ReportHandler] = {
            catalogue.TASK_END: self.on_task_end,
            catalogue.LOAD: self.on_load,
            catalogue.PE_TASK_OUTPUT: self.on_pe_task_report,
            catalogue.PE_TASK_END: self.on_pe_task_report,
        }

    async def __call__(self, request: Reply, peer: object, send_more: SendMore) -> Reply:
        """A command's request (local, or relayed by an execd): checked, then handled."""
        if not isinstance(peer, Credentials):
            return error_reply("error: the qmaster takes requests from commands only", rc=1)
        try:
            op = catalogue.validate(request, catalogue.COMMAND)
        except catalogue.Invalid as err:
            self.refused.note(f"of uid {peer.uid}: {err}")
            return catalogue.refusal(err)
        if not overlaps(request):  # it sees what every earlier request of its connection did
            await protocol_trio.earlier_requests_answered()
        try:
            return await self.handlers[op.name](request, peer, send_more)
        except RequestError as e:
            return error_reply(str(e), rc=e.rc)

    # ------------------------------------------------------------ execd
    async def execd_report(self, msg: Reply) -> None:
        """An execd's report: checked, then handled (:meth:`handle_report`); a
        bad one is logged and dropped."""
        try:
            op = catalogue.validate(msg, catalogue.EXECD)
        except catalogue.Invalid as err:
            self.dropped.note(f"from execd {msg.get('host')!r}: {err}")
            return
        await self.handle_report(op.name, msg)

    async def handle_report(self, name: str, msg: Reply) -> None:
        """A report known to be well formed, of operation ``name``: checked
        by the execd's TCP link (``execd_links.py:serve_execd``), or made by
        the execd of this very process (``minisge.daemon.allinone``), whose
        messages never cross a process boundary and are our own code's, as
        the qmaster's own data is (the tests of the split cell see them
        checked at the socket).  A name that is no report is dropped, a
        fault in handling it is logged, never fatal to the daemon."""
        handler = self.execd_handlers.get(name)
        if handler is None:
            self.dropped.note(f"from execd {msg.get('host')!r}: {name!r} is not a report")
            return
        try:
            await handler(msg)
        except Exception:
            log.exception("handling %r from execd %s failed", name, msg.get("host"))

    async def on_load(self, msg: Reply) -> None:
        # stored once, whatever the link; wakes the scheduler when a threshold is crossed
        self.qm.load_control.store_report(str(msg["host"]), msg["values"])
        self.qm.store_online_usage(str(msg["host"]), msg.get("usage") or ())

    async def on_pe_task_report(self, msg: Reply) -> None:
        await self.qm.pe_tasks.from_execd(msg)

    async def on_task_end(self, msg: Reply) -> None:
        report = await self.qm.pe_tasks.master_end(msg)  # None: held until its slave tasks ended
        if report is None:
            return
        self.qm.task_finished(report)
        # acknowledged even when unknown (already recorded before a restart),
        # so the execd can drop the task's directory; sent once spooled
        self.qm.ack_task_end(str(report.get("host")), report["job_id"], report["task_id"])
        self.qm.changed()

    # ------------------------------------------------------------ commands
    async def op_ping(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        return ok_reply(host=self.qm.host, cell=self.qm.cell.name, jobs=len(self.qm.jobs), role=self.role,
                        started=self.qm.boot_time, execds=host_views.execd_links(self.qm),
                        admin_user=user_name(self.qm.admin_uid))

    async def op_shutdown(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        if not self.qm.is_manager(peer.uid):
            raise RequestError("denied: only a manager may shut down the cell")
        if self.shutdown is not None:
            self.shutdown()
        return ok_reply()

    def begin(self, request: Reply, peer: object, answer: Callable[[Reply], None]) -> bool:
        """A command's request taken at once, without a task of its own
        (minisge.protocol.trio_streams, ``Begin``): a plain submission of a
        local command (:func:`overlaps`) is checked, numbered and queued for
        the group commit, and ``answer`` gets its reply once its job is on
        disk (``Qmaster.queue_submission``), or its refusal now.  False for
        any other request: ``__call__`` answers it."""
        if request.get("op") != catalogue.SUBMIT or not isinstance(peer, Credentials) \
                or not self.qm.group_commit.running:
            return False
        try:
            catalogue.validate(request, catalogue.COMMAND)
        except catalogue.Invalid as err:
            self.refused.note(f"of uid {peer.uid}: {err}")
            answer(catalogue.refusal(err))
            return True
        if not overlaps(request):
            return False

        def answered(outcome: Reply | RequestError) -> None:
            answer(ok_reply(**outcome) if isinstance(outcome, dict) else error_reply(str(outcome), rc=outcome.rc))

        try:
            spec = request["request"]
            self.check_submission(spec)
            self.qm.queue_submission(spec, peer.uid, peer.gid, answered)
        except RequestError as e:
            answer(error_reply(str(e), rc=e.rc))
        return True

    def check_submission(self, spec: Reply) -> None:
        """What refuses a submission whatever the cell holds: 8.1.9's refusals,
        max_aj_tasks (RequestError)."""
        reason = submit_options.qmaster_rejection(spec)  # 8.1.9's refusals whatever the cell
        if reason is None:
            reason = too_many_tasks(spec.get("array"), self.qm.config.global_conf.max_aj_tasks)
        if reason is not None:
            raise RequestError(f"Unable to run job: {reason}\nExiting.")

    async def op_submit(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        spec = req["request"]
        self.check_submission(spec)
        res = await self.qm.submit_in_group(
            spec, peer.uid, peer.gid, protocol_trio.let_next_request_begin if overlaps(req) else None)
        immediate = bool(spec.get("now"))
        to_end, to_start = bool(req.get("sync")), bool(req.get("sync_start"))
        if not to_end and not to_start and not immediate:
            return ok_reply(**res)
        waiter = self.qm.add_waiter(res["job_id"])
        await send_more(ok_reply(**res))
        ends = []
        async with waiter:
            if immediate:  # -now y: the one pass decides (Qmaster.drop_unscheduled_immediate)
                scheduled = False
                async for ev in waiter:
                    scheduled = ev["event"] == "scheduled"
                    if scheduled or ev["event"] == "job_end":
                        break
                if not (to_end or to_start) or not scheduled:
                    return ok_reply(job_id=res["job_id"], scheduled=scheduled)
                await send_more(ok_reply(job_id=res["job_id"], scheduled=True))
            if to_start:  # -sync r: the first task dispatched, or the job's end before any
                started = 0
                async for ev in waiter:
                    if ev["event"] == "started":
                        started = ev["task_id"]
                        break
                    if ev["event"] == "job_end":
                        break
                if not to_end or not started:
                    return ok_reply(job_id=res["job_id"], started=started)
                await send_more(ok_reply(job_id=res["job_id"], started=started))
            async for ev in waiter:
                if ev["event"] == "task_end":
                    ends.append(ev)
                elif ev["event"] == "job_end":
                    break
        return ok_reply(job_id=res["job_id"], tasks=ends)

    async def op_qstat(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        return ok_reply(**views.job_list(self.qm, req, peer.uid))

    async def op_qstat_full(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        return ok_reply(**views.full_list(self.qm, req, peer.uid))

    async def op_job_detail(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        return ok_reply(**views.job_detail(self.qm, req.get("ids") or [], peer.uid, bool(req.get("xml"))))

    async def op_qdel(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        # qdel -f of a user who may not force deletes as without it (the command then waits a minute)
        force = bool(req.get("force")) and self.qm.may_force_deletion(peer.uid)
        lines, rc = await self.qm.delete(req.get("targets") or [], peer.uid, req.get("users"), force)
        return ok_reply(lines=lines, rc=rc, forced=force)

    async def op_qhold(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        lines, rc = self.qm.hold(req.get("targets") or [], peer.uid, req.get("hold", "u"), req.get("release", False),
                                 req.get("users"))
        return ok_reply(lines=lines, rc=rc)

    async def op_qalter(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qalter(1): change submitted jobs (minisge.qmaster.job_modify)."""
        lines, rc = self.qm.qalter(req, peer.uid)
        return ok_reply(lines=lines, rc=rc)

    async def op_qresub(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qresub(1): new jobs copied from submitted ones."""
        lines, rc = self.qm.resubmit(req["targets"], peer.uid, req.get("hold"))
        return ok_reply(lines=lines, rc=rc)

    async def op_qconf(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        out, err, rc = qconf.handle(self.qm, req, peer.uid)
        if not str(req.get("cmd", "")).startswith("-s"):  # a show changes nothing
            self.qm.changed()
        return ok_reply(out=out, err=err, rc=rc)

    async def op_qmod(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        out, rc = await self.qm.qmod(req, peer.uid)
        return ok_reply(lines=out, rc=rc)

    async def op_qping(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qping(1): the qmaster answers for itself and its execds (minisge.qmaster.ping)."""
        qm = self.qm
        now = qm.clock()
        ep = ping.Endpoint(str(req["host"]), int(req["port"]), str(req["name"]), int(req["id"]))
        execds = {ping.short(h): (link.since or qm.boot_time) for h, link in qm.execds.items()}
        return ok_reply(now=now, **ping.answer(ep, qmaster_host=qm.host, qmaster_port=qm.cell.qmaster_port(),
                                               execd_port=qm.cell.execd_port(), execds=execds,
                                               boot_time=qm.boot_time, now=now, clients=len(qm.execds)))

    async def op_pe_task(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qrsh -inherit: a slave task of a running parallel job (minisge.qmaster.pe_tasks)."""
        return await self.qm.pe_tasks.run(req, peer, send_more)

    async def op_qquota(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qquota(1): the usage of the enabled resource quota sets, as rows
        the command prints (minisge.scheduler.quota.report); the selection defaults
        to the calling user."""
        def names(key: str) -> tuple:
            return tuple(str(x) for x in (req.get(key) or ()))

        query = quota.QquotaQuery(
            users=names("users"), projects=names("projects"), pes=names("pes"),
            queues=names("queues"), hosts=names("hosts"), resources=names("resources"),
        )
        ctx = self.qm.config.quota_context(self.qm.jobs)
        rows = quota.report(ctx, query, user_name(peer.uid))
        return ok_reply(rows=quota.rows_to_wire(rows))

    async def op_share_mon(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """sge_share_mon(1): the share tree's nodes (minisge.qmaster.share_usage:ShareUsage.monitor);
        no tree: 8.1.9's ``No share tree``, exit status 2."""
        qm = self.qm
        rows = qm.share_usage.monitor(qm.jobs, qm.clock(), qm.config.sched_conf, qm.config.projects,
                                      bool(req.get("decay")))
        if rows is None:
            return error_reply("No share tree", rc=2)
        return ok_reply(rows=rows)

    async def op_qhost(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qhost(1): the hosts as minisge.qmaster.host_views.qhost sees them."""
        return ok_reply(**host_views.qhost(self.qm, req, peer.uid))

    async def op_qselect(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qselect(1): the names of the queue instances its options select."""
        return ok_reply(**host_views.qselect(self.qm, req, peer.uid))

    async def op_qrsub(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qrsub(1): an advance reservation (minisge.qmaster.advance_reservations)."""
        lines, rc = self.qm.reservations.submit(req, peer.uid, peer.gid)
        return ok_reply(lines=lines, rc=rc)

    async def op_qrstat(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qrstat(1): the advance reservations asked for."""
        return ok_reply(**self.qm.reservations.view(req.get("ids"), req.get("users"), peer.uid))

    async def op_qrdel(self, req: Reply, peer: Credentials, send_more: SendMore) -> Reply:
        """qrdel(1): advance reservations deleted, with their jobs."""
        lines, rc = await self.qm.reservations.delete(req.get("targets") or [], req.get("users"), peer.uid,
                                                      peer.gid, bool(req.get("force")))
        return ok_reply(lines=lines, rc=rc)


def overlaps(request: Reply) -> bool:
    """A plain submission (no -sync, -now, -hold_jid, -hold_jid_ad): what
    may begin before the earlier requests of its connection are answered,
    and let the next begin while it waits for its group commit (a client
    that pipelines its submissions gets them synced together)."""
    if request.get("op") != catalogue.SUBMIT or request.get("sync") or request.get("sync_start"):
        return False
    spec = request.get("request") or {}
    return not (spec.get("now") or spec.get("hold_jid") or spec.get("hold_jid_ad"))


def too_many_tasks(array: list[int] | None, max_aj_tasks: int) -> str | None:
    """sge_conf(5) max_aj_tasks: an array job of more tasks is refused (0: no limit),
    in 8.1.9's words."""
    if not array or not max_aj_tasks:
        return None
    first, last, step = array
    if len(range(first, last + 1, step)) > max_aj_tasks:
        return f"job rejected: you tried to submit a job with more than {max_aj_tasks} tasks"
    return None
