"""The qmaster's answers to requests from commands and execds.

One method per ``op``; each returns the final reply (a dict) and may send
intermediate ones (``qsub -sync y``).  Who asks is the peer the protocol
layer established: ``Credentials`` from the kernel for local commands, a
``RemotePeer`` proven with the cell key for daemons.
"""

from __future__ import annotations

import logging

from minisge.protocol import Credentials, RemotePeer, error_reply, ok_reply
from minisge.qmaster import Qmaster, RequestError
from minisge import load_control, views

log = logging.getLogger("minisge.requests")


class RequestHandler:
    def __init__(self, qm: Qmaster):
        self.qm = qm
        self.shutdown = None

    async def __call__(self, request: dict, peer, send_more) -> dict:
        op = request.get("op")
        if isinstance(peer, RemotePeer):
            if peer.role == "execd" and op == "task_end":
                await self.execd_report(request)
                return ok_reply()
            return error_reply(f"operation {op!r} is not for a {peer.role}", rc=1)
        method = getattr(self, f"op_{op}", None)
        if method is None:
            return error_reply(f"unknown operation {op!r}", rc=1)
        try:
            return await method(request, peer, send_more)
        except RequestError as e:
            return error_reply(str(e), rc=e.rc)

    # ------------------------------------------------------------ execd
    async def execd_report(self, msg: dict) -> None:
        """An execd's report; a fault in handling it is logged, never fatal to the daemon."""
        try:
            await self._execd_report(msg)
        except Exception:
            log.exception("handling %r from execd %s failed", msg.get("op"), msg.get("host"))

    async def _execd_report(self, msg: dict) -> None:
        if msg.get("op") == "load":
            self.qm.config.load_values[msg["host"]] = dict(msg.get("values") or {})
            load_control.load_reported(self.qm)  # wakes the scheduler when a threshold is crossed
            return
        if msg.get("op") in ("pe_task_output", "pe_task_end"):
            await self.qm.pe_tasks.from_execd(msg)
            return
        if msg.get("op") == "task_end":
            msg = await self.qm.pe_tasks.master_end(msg)  # None: held until its slave tasks ended
            if msg is None:
                return
            self.qm.task_finished(msg)
            # acknowledged even when unknown (already recorded before a restart),
            # so the execd can drop the task's directory; sent once spooled
            self.qm.ack_task_end(msg.get("host"), msg["job_id"], msg["task_id"])
            self.qm.changed()

    # ------------------------------------------------------------ commands
    async def op_ping(self, req, peer: Credentials, send_more) -> dict:
        return ok_reply(host=self.qm.host, cell=self.qm.cell.name, jobs=len(self.qm.jobs))

    async def op_shutdown(self, req, peer: Credentials, send_more) -> dict:
        if not self.qm.is_manager(peer.uid):
            raise RequestError("denied: only a manager may shut down the cell")
        if self.shutdown is not None:
            self.shutdown()
        return ok_reply()

    async def op_submit(self, req, peer: Credentials, send_more) -> dict:
        spec = req.get("request")
        if not isinstance(spec, dict):
            raise RequestError("Unable to run job: bad request\nExiting.")
        waiter = None
        res = self.qm.submit(spec, peer.uid, peer.gid)
        if not req.get("sync"):
            return ok_reply(**res)
        waiter = self.qm.add_waiter(res["job_id"])
        await send_more(ok_reply(**res))
        ends = []
        async with waiter:
            async for ev in waiter:
                if ev["event"] == "task_end":
                    ends.append(ev)
                elif ev["event"] == "job_end":
                    break
        return ok_reply(job_id=res["job_id"], tasks=ends)

    async def op_qstat(self, req, peer: Credentials, send_more) -> dict:
        return ok_reply(**views.job_list(self.qm, req, peer.uid))

    async def op_qstat_full(self, req, peer: Credentials, send_more) -> dict:
        return ok_reply(**views.full_list(self.qm, req, peer.uid))

    async def op_job_detail(self, req, peer: Credentials, send_more) -> dict:
        return ok_reply(**views.job_detail(self.qm, req.get("ids") or [], peer.uid))

    async def op_qdel(self, req, peer: Credentials, send_more) -> dict:
        lines, rc = await self.qm.delete(req.get("targets") or [], peer.uid, req.get("users"))
        return ok_reply(lines=lines, rc=rc)

    async def op_qhold(self, req, peer: Credentials, send_more) -> dict:
        lines, rc = self.qm.hold(req.get("targets") or [], peer.uid, req.get("hold", "u"), req.get("release", False))
        return ok_reply(lines=lines, rc=rc)

    async def op_qconf(self, req, peer: Credentials, send_more) -> dict:
        from minisge import qconf_ops

        out, err, rc = qconf_ops.handle(self.qm, req, peer.uid)
        if not str(req.get("cmd", "")).startswith("-s"):  # a show changes nothing
            self.qm.changed()
        return ok_reply(out=out, err=err, rc=rc)

    async def op_qmod(self, req, peer: Credentials, send_more) -> dict:
        out, rc = await self.qm.qmod(req, peer.uid)
        return ok_reply(lines=out, rc=rc)

    async def op_pe_task(self, req, peer: Credentials, send_more) -> dict:
        """qrsh -inherit: a slave task of a running parallel job (minisge.pe_tasks)."""
        return await self.qm.pe_tasks.run(req, peer, send_more)

    async def op_qquota(self, req, peer: Credentials, send_more) -> dict:
        """qquota(1): the usage of the enabled resource quota sets, as rows
        the command prints (minisge.quota.report); the selection defaults
        to the calling user."""
        from minisge import quota
        from minisge.qmaster import user_name

        def names(key: str) -> tuple:
            return tuple(str(x) for x in (req.get(key) or ()))

        query = quota.QquotaQuery(
            users=names("users"), projects=names("projects"), pes=names("pes"),
            queues=names("queues"), hosts=names("hosts"), resources=names("resources"),
        )
        ctx = self.qm.config.quota_context(self.qm.jobs)
        rows = quota.report(ctx, query, user_name(peer.uid))
        return ok_reply(rows=quota.rows_to_wire(rows))
