"""What the qmaster could not write yet: kept, and written once it can.

The qmaster's own transitions (a task's end, a dispatch's undo, a successor
released) cannot be refused the way a request is: when the spool or the
accounting file cannot be written (a full or read-only file system) they
stay here, and a timer in the qmaster's nursery writes them again every
:data:`RETRY_SECONDS` until it works (the scheduler loop, woken then,
delivers what waited and dispatches again):

* jobs whose spool file is behind the qmaster's memory (or whose file is to
  be removed: the job is done);
* accounting records not yet appended, in the order they came (a record is
  never lost, never written twice: the file takes a line whole or not at all);
* the queue instance states (``qinstance_states``);
* the acknowledgements of task ends (``ack_end``) whose end is not on disk
  yet: the execd keeps the task's directory, and so the end, until then; a
  qmaster killed meanwhile hears of the end again from the execd.

Requests (qsub, qdel, qhold, qmod, qconf) do not come here: one that cannot
be written is answered with the error and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import trio

from minisge.formats.accounting import AccountingRecord
from minisge.qmaster.job import Job
from minisge.qmaster.spool import SpoolError

log = logging.getLogger("minisge.qmaster")

RETRY_SECONDS = 1.0

Message = tuple[str, dict[str, Any]]  # host, message


class SpoolBacklog:
    """The writes that failed, and their retry."""

    def __init__(self, write_job: Callable[[Job], None], append_record: Callable[[AccountingRecord], None],
                 qi_states_unsaved: Callable[[], bool], save_qi_states: Callable[[], None]):
        self._write_job = write_job
        self._append_record = append_record
        self._qi_states_unsaved = qi_states_unsaved
        self._save_qi_states = save_qi_states
        self.jobs: dict[int, Job] = {}
        self.records: list[AccountingRecord] = []
        self.acks: list[Message] = []
        self._failing = ""  # the last failure logged, so a long outage logs once

    # ------------------------------------------------------------ what failed
    def _failed(self, what: str, err: OSError | None) -> None:
        text = f"{err}" if err is not None else ""
        if text and text != self._failing:
            log.error("cannot write %s: %s (kept, written again every %.0f s)", what, text, RETRY_SECONDS)
            self._failing = text

    def job_unsaved(self, job: Job, err: OSError) -> None:
        self.jobs[job.number] = job
        self._failed(f"job {job.number}", err)

    def job_saved(self, number: int) -> None:
        self.jobs.pop(number, None)

    def record_unwritten(self, record: AccountingRecord, err: OSError | None = None) -> None:
        """A record not appended: ``err`` why, or None when it waits behind earlier ones."""
        self.records.append(record)
        self._failed(f"the accounting record of job {record.job_number}", err)

    def holds_ack(self, job_id: int) -> bool:
        """An acknowledgement of an end of job ``job_id`` must wait: the job's
        file or an accounting record is not on disk yet."""
        return job_id in self.jobs or bool(self.records)

    def hold_ack(self, host: str, msg: dict[str, Any]) -> None:
        self.acks.append((host, msg))

    @property
    def empty(self) -> bool:
        return not (self.jobs or self.records or self.acks or self._qi_states_unsaved())

    # ------------------------------------------------------------ writing again
    def retry(self) -> list[Message]:
        """Write what can be written now; the acknowledgements released."""
        for job in list(self.jobs.values()):
            try:
                self._write_job(job)  # which calls job_saved
            except SpoolError:
                pass
        while self.records:
            try:
                self._append_record(self.records[0])
            except OSError:
                break
            self.records.pop(0)
        if self._qi_states_unsaved():
            try:
                self._save_qi_states()
            except SpoolError:
                pass
        released = [(h, m) for h, m in self.acks if not self.holds_ack(int(m["job_id"]))]
        self.acks = [(h, m) for h, m in self.acks if self.holds_ack(int(m["job_id"]))]
        if self._failing and not (self.jobs or self.records or self._qi_states_unsaved()):
            log.info("the spool and the accounting file are written again")
            self._failing = ""
        return released

    async def run_timer(self, released: Callable[[list[Message]], None]) -> None:
        """The retry timer (in the qmaster's nursery): every RETRY_SECONDS,
        while anything is kept, write it again; ``released`` gets the
        acknowledgements that may go now."""
        while True:
            await trio.sleep(RETRY_SECONDS)
            if not self.empty:
                released(self.retry())
