"""Advance reservations: qrsub(1), qrstat(1), qrdel(1), and their start and end.

The qmaster's side of Grid Engine's ``sge_advance_reservation_qmaster.c``:
:class:`AdvanceReservations` holds the reservations granted, spools each in
``spool/qmaster/advance_reservations/ID`` (the classic format,
:mod:`minisge.formats.advance_reservation`) and their ids in ``arseqnum``,
decides a grant with the scheduler's pure rule
(:func:`minisge.scheduler.advance_reservation.grant`), and moves each one
through its states: ``w`` until its start time, ``r`` until its end time,
when its jobs are deleted (running ones killed) and it is gone; ``qrdel``
deletes its jobs and then it (``d`` while running jobs are being killed).
While a reserved queue instance is disabled, suspended, unknown (its execd
gone), in error or ambiguous (``dsuEc``, the states 8.1.9 counts), a waiting
reservation is in state ``W`` and a running one in ``E``; with qrsub
``-he y`` the jobs of one in ``E`` do not start (the scheduler's rule).
qrsub ``-m b|e|a`` mails (:data:`minisge.rules.mail.AR_EVENTS`: start, end
or qrdel, E and back to r) go to its ``-M`` list through sge_conf(5)
``mailer``, sent by :meth:`AdvanceReservations.run_mailer` in the
qmaster's nursery (:func:`minisge.mailer.send`).
The texts are 8.1.9's (captured beside the peer, tests/golden/qrsub|qrstat|qrdel).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import logging
import math
from collections.abc import Mapping
from typing import Any

import attrs
import trio

from minisge import scheduler
from minisge.formats import access_list, sge_types
from minisge.formats import advance_reservation as ar_format
from minisge.formats.advance_reservation import DELETED, ERROR, EXITED, RUNNING, WAITING, WARNING, AdvanceReservation
from minisge.mailer import send as send_mail
from minisge.qmaster import submit_checks
from minisge.qmaster.job_facts import deadline_time
from minisge.qmaster.spool import SpoolError
from minisge.qmaster.users import group_name, user_name
from minisge.rules import mail
from minisge.scheduler import advance_reservation as ar_rule

log = logging.getLogger("minisge.qmaster")

MAX_AR_ID = 9_999_999  # qrsub(1): ids wrap there
NO_SUITABLE_QUEUES = "advance_reservation: no suitable queues"
#: the queue instance states that put a reservation in error (sge_qinstance_qmaster.c calls
#: sge_ar_list_set_error_state for disabled, suspended, unknown, error and ambiguous)
ERROR_STATES = "dsuEc"


def arusers_denial(user: str) -> str:
    return f'denied: "{user}" must be manager or in userset "arusers"'


class AdvanceReservations:
    """The advance reservations of the cell (see the module docstring)."""

    def __init__(self, qm: Any) -> None:  # minisge.qmaster.qmaster.Qmaster, which creates it
        self.qm = qm
        self.ars: dict[int, AdvanceReservation] = {}
        self.last_id = 0
        # qrsub -m mails: (mailer, subject, body, recipient), sent by run_mailer
        self.outgoing, self.mails = trio.open_memory_channel[tuple[str, str, str, str]](math.inf)

    def load(self) -> None:
        self.last_id = self.qm.spool.read_arseqnum()
        for _name, (path, text) in self.qm.spool.load_ars().items():
            ar = ar_format.parse(text, path)
            self.ars[ar.id] = ar
            self.last_id = max(self.last_id, ar.id)

    @property
    def ids(self) -> set[int]:
        return {i for i, ar in self.ars.items() if ar.state != DELETED}

    def may_reserve(self, uid: int, gid: int) -> bool:
        """qrsub(1): operators, managers and the users of the access list ``arusers``."""
        if self.qm.is_operator(uid):
            return True
        acl = self.qm.config.usersets.get("arusers")
        if acl is None:
            return False
        return access_list.has_access(user_name(uid), (group_name(gid),), ("arusers",), (), {"arusers": acl})

    def save(self, ar: AdvanceReservation) -> None:
        self.qm.spool.write_ar(ar.id, ar_format.write(ar))
        self.ars[ar.id] = ar

    # ------------------------------------------------------------ qrsub
    def submit(self, req: Mapping[str, Any], uid: int, gid: int) -> tuple[list[str], int]:
        """qrsub: the lines to print and the exit code."""
        owner = user_name(uid)
        if not self.may_reserve(uid, gid):
            return [arusers_denial(owner)], 1
        now = self.qm.clock()
        try:  # qrsub checked them; a request from elsewhere gets the command's words
            start = deadline_time(req.get("start_time"), now) if req.get("start_time") else float(int(now))
            end = deadline_time(req.get("end_time"), now) if req.get("end_time") else None
        except (ValueError, OverflowError):
            return ["\nInvalid format of date/hour-minute field.", "qrsub: Wrong date/time format "
                    f'"{req.get("start_time") or req.get("end_time")}" specified to -a option'], 1
        try:
            duration = sge_types.parse_time(req["duration"]) if req.get("duration") else None
        except ValueError:
            return [f'qrsub: Wrong time format "{req["duration"]}" specified to -d option'], 1
        if duration is not None and not 0 <= duration < 2**31:
            return [f'qrsub: Wrong time format "{req["duration"]}" specified to -d option'], 1
        if end is None:
            if duration is None:
                return ['missing value for "end_time" in advance reservation request'], 1
            end = start + duration
        elif duration is not None and abs(end - start - duration) > 0.5:
            return ["difference between end and start time does not correspond to duration"], 1
        if start > end:
            return ["start time is later than end time"], 1
        if start < int(now) and req.get("start_time"):
            return ["start time is in the past"], 1
        config = self.qm.config
        checks = [submit_checks.checkpoint_refusal(req.get("checkpoint")),
                  config.queue_error(req.get("queues") or []),
                  config.resource_error(req.get("resources") or {})]
        pe = req.get("pe")
        if pe and not config.pe_exists(pe["name"]):
            checks.append(f'job rejected: the requested parallel environment "{pe["name"]}" does not exist')
        for refusal in checks:
            if refusal:
                return [refusal], 1
        limit = config.global_conf.max_advance_reservations
        if limit and len(self.ids) >= limit:
            return [f"rejected: only {limit} advance reservations are allowed per cluster"], 25
        ar_id = self.next_id()
        self.consume_id(ar_id)  # 8.1.9 numbers the reservation before it looks for queues
        request = ar_rule.ReservationRequest(
            owner=owner, group=group_name(gid), start=start, end=end,
            requests=dict(req.get("resources") or {}), queues=tuple(req.get("queues") or ()),
            pe=(pe["name"], tuple((lo, hi) for lo, hi in pe["ranges"])) if pe else None,
            master_queues=tuple(req.get("master_queues") or ()))
        snap = self.qm.config.snapshot(self.qm.jobs, self.qm.execds, now=now)
        snap = dataclasses.replace(snap, reservations=self.snapshot())
        placed = ar_rule.grant(snap, request, scheduler.schedule)
        if req.get("verify") == "v":
            if placed is None:
                return ["verification: no suitable queues"], 1
            return ["verification: found suitable queue(s)"], 0
        if placed is None:
            return [NO_SUITABLE_QUEUES], 1
        ar = AdvanceReservation(
            id=ar_id, owner=owner, group=group_name(gid), submission_time=int(now), start_time=int(start),
            end_time=int(math.ceil(end)), name=req.get("name") or "", account=req.get("account") or "sge",
            duration=int(round(end - start)), error_handling=bool(req.get("error_handling")),
            state=RUNNING if start <= now else WAITING, checkpoint_name=req.get("checkpoint") or "",
            resource_list=tuple((k, str(v)) for k, v in (req.get("resources") or {}).items()),
            queue_list=tuple(req.get("queues") or ()),
            granted_slots=tuple((f"{c}@{h}", n) for c, h, n in placed.granted),
            mail_options=req.get("mail_options") or "", mail_list=tuple(req.get("mail_list") or ()),
            pe=pe["name"] if pe else "", pe_range=pe["text"] if pe else "", granted_pe=placed.pe or "",
            master_queue_list=tuple(req.get("master_queues") or ()), acl_list=tuple(req.get("users") or ()),
        )
        try:
            self.save(ar)
        except SpoolError as err:
            return [str(err)], 1
        log.info("advance reservation %d granted to %s", ar_id, owner)
        if ar.state == RUNNING:  # its start time has come: 8.1.9's timer fires at once
            self.mail(ar, "started", ar.start_time)
        self.qm.changed()
        return [f"Your advance reservation {ar_id} has been granted"], 0

    def next_id(self) -> int:
        ar_id = self.last_id + 1
        if ar_id > MAX_AR_ID:
            ar_id = 1
        while ar_id in self.ars:
            ar_id += 1
        return ar_id

    def consume_id(self, ar_id: int) -> None:
        self.last_id = ar_id
        with contextlib.suppress(SpoolError):
            self.qm.spool.write_arseqnum(ar_id)

    # ------------------------------------------------------------ qsub -ar
    def job_refusal(self, ar_id: int | None, user: str, group: str, h_rt: str | None, now: float) -> str | None:
        """qsub -ar: the reservation exists, the user may use it (its
        ``-u`` list, else its owner alone), and the job's ``h_rt`` fits its window.
        (8.1.9's qalter -ar checks nothing: ``qalter -ar 999`` is accepted
        beside the peer, and so it is here.)"""
        refusal = submit_checks.advance_reservation_refusal(ar_id, self.ids)
        if refusal or not ar_id:
            return refusal
        ar = self.ars[ar_id]
        if ar.acl_list:
            users = [u for u in ar.acl_list if not u.startswith("@")]
            lists = [u[1:] for u in ar.acl_list if u.startswith("@")]
            if user not in users and not (lists and access_list.has_access(
                    user, (group,), lists, (), self.qm.config.usersets)):
                return f"the advance reservation id {ar_id} is invalid"
        elif user != ar.owner:
            return f"the advance reservation id {ar_id} is invalid"
        if h_rt:
            seconds = sge_types.parse_time(h_rt)
            if seconds > ar.end_time - ar.start_time:
                return f"the job duration is longer than duration of the advance reservation id {ar_id}"
            if max(now, ar.start_time) + seconds > ar.end_time:
                return f"the job duration exceeds the end time of the advance reservation id {ar_id}"
        return None

    def submission_time(self, ar_id: int) -> int:
        """accounting(5) ``ar_submission_time`` of a job's reservation (0: none or gone)."""
        ar = self.ars.get(ar_id)
        return ar.submission_time if ar is not None else 0

    # ------------------------------------------------------------ qrstat
    def view(self, ids: list[str] | None, users: list[str] | None, uid: int) -> dict[str, Any]:
        """qrstat: the reservations asked for (``-ar``), else those of
        ``users`` (``-u``; default the caller's own), and the ids not found."""
        shown = [ar for _i, ar in sorted(self.ars.items())]
        missing: list[str] = []
        if ids is not None:
            chosen = []
            for word in ids:
                found = [ar for ar in shown if str(ar.id) == word or ar.name == word]
                if not found:
                    missing.append(word)
                chosen += [ar for ar in found if ar not in chosen]
            shown = chosen
        else:
            names = users if users else [user_name(uid)]
            shown = [ar for ar in shown if any(fnmatch.fnmatchcase(ar.owner, u) for u in names)]
        return {"ars": [attrs.asdict(ar) | {"state_letter": ar.state_letter}
                        for ar in shown], "missing": missing}

    # ------------------------------------------------------------ qrdel
    async def delete(self, targets: list[str], users: list[str] | None, uid: int, gid: int,
                     force: bool) -> tuple[list[str], int]:
        """qrdel: the lines to print and the exit code."""
        caller = user_name(uid)
        if not self.may_reserve(uid, gid):
            return [arusers_denial(caller)], 1
        manager = self.qm.is_manager(uid)
        lines: list[str] = []
        rc = 0
        groups: list[tuple[str | None, list[AdvanceReservation]]] = []
        live = [ar for _i, ar in sorted(self.ars.items())]
        if targets:
            for word in targets:
                found = [ar for ar in live if str(ar.id) == word or (ar.name and fnmatch.fnmatchcase(ar.name, word))]
                if users:
                    found = [ar for ar in found if any(fnmatch.fnmatchcase(ar.owner, u) for u in users)]
                groups.append((word, found))
        else:
            found = [ar for ar in live if any(fnmatch.fnmatchcase(ar.owner, u) for u in users or ())]
            if not found:
                return [f"There is no advance_reservation registered for the following users: "
                        f"{','.join(users or ())}"], 1
            groups.append((None, found))
        for ref, named in groups:
            if not named:
                lines.append(f'denied: advance_reservation "{ref}" does not exist')
                rc = 1
                continue
            for ar in named:
                if not manager and ar.owner != caller:
                    lines.append(f"{caller} - you do not have the necessary privileges to delete the "
                                 f'advance_reservation "{ar.id}"')
                    rc = 1
                    continue
                self.mail(attrs.evolve(ar, state=DELETED), "deleted", self.qm.clock())
                gone = await self.remove(ar, caller, force)
                lines.append(f"{caller} has deleted advance_reservation {ar.id}" if gone else
                             f"{caller} has registered the advance_reservation {ar.id} for deletion")
        return lines, rc

    async def remove(self, ar: AdvanceReservation, caller: str, force: bool) -> bool:
        """Delete the jobs of ``ar`` (``force``: the running ones at once), then
        ``ar`` once none is left; False: it waits (state d) for its running jobs."""
        left = await self.qm.delete_reservation_jobs(ar.id, caller, force)
        if left:
            if ar.state != DELETED:
                with contextlib.suppress(SpoolError):
                    self.save(attrs.evolve(ar, state=DELETED))
            return False
        self.forget(ar.id)
        return True

    def forget(self, ar_id: int) -> None:
        try:
            self.qm.spool.delete_ar(ar_id)
        except SpoolError as err:
            log.warning("advance reservation %d: %s", ar_id, err)
        self.ars.pop(ar_id, None)
        self.qm.changed()

    # ------------------------------------------------------------ start and end
    def next_event_time(self) -> float | None:
        """The next start or end time of a reservation (the scheduler loop wakes then)."""
        now = self.qm.clock()
        times = [t for ar in self.ars.values() for t in (ar.start_time, ar.end_time) if t > now]
        return min(times, default=None)

    async def tick(self) -> None:
        """Reservations whose start time came run; those whose end time came,
        and deleted ones whose jobs are gone, leave with their jobs."""
        now = self.qm.clock()
        for ar in list(self.ars.values()):
            if now >= ar.end_time:
                log.info("advance reservation %d reached its end time", ar.id)
                if ar.state != DELETED:  # qrdel'ed ones said so then
                    self.mail(attrs.evolve(ar, state=EXITED), "finished", ar.end_time)
                await self.remove(ar, "root", True)
            elif ar.state == DELETED:
                if not self.qm.reservation_jobs(ar.id):
                    self.forget(ar.id)
            else:
                self.update_state(ar, now)

    def update_state(self, ar: AdvanceReservation, now: float) -> None:
        """w/W before its start time, r/E after, by the states of its queue
        instances; the mails of 8.1.9's sge_ar_state_set_running: ``a`` when it
        goes into E and when it leaves E, ``b`` when its start time comes."""
        started = now >= ar.start_time
        errors = self.has_errors(ar)
        state = (ERROR if errors else RUNNING) if started else (WARNING if errors else WAITING)
        if state == ar.state:
            return
        new = attrs.evolve(ar, state=state)
        with contextlib.suppress(SpoolError):
            self.save(new)
        self.ars[ar.id] = new
        log.info("advance reservation %d: state %s", ar.id, new.state_letter)
        if state == ERROR:
            self.mail(new, "error", now)
        elif ar.state == ERROR:
            self.mail(new, "resolved", now)
        if started and ar.state in (WAITING, WARNING):
            self.mail(new, "started", ar.start_time)
        self.qm.changed()

    def has_errors(self, ar: AdvanceReservation) -> bool:
        """Is a queue instance it holds in one of :data:`ERROR_STATES` (``u``: its execd is gone)?"""
        for name, _n in ar.granted_slots:
            states = self.qm.config.qi_states.get(name, "")
            if name.partition("@")[2] not in self.qm.execds:
                states += "u"
            if any(c in ERROR_STATES for c in states):
                return True
        return False

    # ------------------------------------------------------------ qrsub -m
    def mail(self, ar: AdvanceReservation, event: str, when: float) -> None:
        """Queue the mails of ``event`` (:data:`minisge.rules.mail.AR_EVENTS`)
        if ``ar``'s ``-m`` asks for it, one per address of its ``-M`` (none
        without: 8.1.9 mails no default address for a reservation)."""
        if not mail.ar_mail_wanted(event, ar.mail_options) or not ar.mail_list:
            return
        subject, body = mail.ar_mail(event, ar.id, ar.name, ar.owner, when)
        mailer = self.qm.config.mailer(self.qm.host)
        for recipient in ar.mail_list:
            self.outgoing.send_nowait((mailer, subject, body, recipient))

    async def run_mailer(self) -> None:
        """Send the queued mails, each in a task of its own (a slow mailer
        holds up no other); started by the qmaster's composition root."""
        async with trio.open_nursery() as nursery:
            async for mailer, subject, body, recipient in self.mails:
                nursery.start_soon(send_mail, mailer, subject, body, recipient)

    def held_now(self) -> dict[str, int]:
        """The slots the running reservations hold per queue instance (qstat -f's ``resv``)."""
        now = self.qm.clock()
        held: dict[str, int] = {}
        for ar in self.ars.values():
            if ar.start_time <= now < ar.end_time and ar.state != DELETED:
                for name, n in ar.granted_slots:
                    held[name] = held.get(name, 0) + n
        return held

    def snapshot(self) -> tuple[scheduler.Reservation, ...]:
        """The reservations as the scheduler sees them (:class:`minisge.scheduler.Reservation`)."""
        used: dict[int, dict[str, int]] = {}
        for job in self.qm.jobs.values():
            ar_id = int(job.spec.get("ar") or 0)
            if not ar_id:
                continue
            mine = used.setdefault(ar_id, {})
            for t in job.tasks.values():
                for g in t.granted:
                    mine[g.qinstance] = mine.get(g.qinstance, 0) + g.slots
        return tuple(
            scheduler.Reservation(ar.id, float(ar.start_time), float(ar.end_time), ar.granted_slots,
                                  dict(ar.resource_list), used.get(ar.id, {}),
                                  in_error=ar.state == ERROR and ar.error_handling)
            for _i, ar in sorted(self.ars.items()))

