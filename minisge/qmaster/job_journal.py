"""The journal of the running jobs' transitions: ``jobs/.journal`` in the qmaster's spool.

A running array changes its job at every dispatch and every end.  The job's
whole file, written again at each scheduling pass, was the largest single
cost of the qmaster's loop on a slot's way back: the job encoded whole (its
request too, which does not change while it runs), and a file written and
renamed.  Those transitions (:meth:`minisge.qmaster.qmaster.Qmaster.flush`)
are appended here instead: one line per job changed in a pass, all of a
pass's lines in one write(2) to a descriptor opened ``O_APPEND``::

    SEQ JOB JSON

where JSON is what the job's file holds without its request (``spec``).  A
change of the request (qalter) is a request's, written whole and synced
(:meth:`~minisge.qmaster.qmaster.Qmaster.write_job`): a line never needs it.

**Durability** is what the job files of those transitions had: not synced.
A killed daemon keeps every line it wrote (the kernel has them; one being
written when it was killed may be torn: see below, its tasks were not
started yet); an operating-system crash can lose the last ones, and the
execd then reports the tasks it runs or ran again, as before.

**Order.**  One sequence number runs through the spool: every job file
written carries the number of its write (``spool_seq``), every line its own.
Loading (:meth:`JobJournal.read`, :meth:`minisge.qmaster.spool.QmasterSpool.load_jobs`),
a job takes its last line when that line is newer than its file; a line of a
job without a file (done since: its file was removed) or older than the file
(written whole since) is passed over.  A job number given again thus never
takes an old job's line.

**Damage.**  A last line that is not whole (the daemon killed in a write, a
full disk, a crash of the machine that left the file's end unwritten) is
passed over, and cut off at the daemon's start; a line that is not whole with a whole one after it is a damaged
journal: FormatError, and the qmaster does not start, as with a damaged job
file.  An append that fails (a full disk) is cut back to the last whole line
(:meth:`JobJournal.append`): the caller writes those jobs whole instead,
which the backlog takes when that fails too.

**Compaction.**  At the daemon's start, after the lines are applied
(:meth:`minisge.qmaster.qmaster.Qmaster.settle_journal`: loading alone
writes nothing, as ``python -m minisge.offline`` reads a running cell's
spool), and whenever the journal passes :data:`JOURNAL_LIMIT` bytes, the
files of the jobs it has lines of are written whole and synced, and the
journal is emptied (:meth:`minisge.qmaster.qmaster.Qmaster.compact_journal`).
A compaction that fails leaves the journal as it was: its lines still hold.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable
from typing import Any

from minisge.formats.errors import FormatError

JOURNAL_NAME = ".journal"  # under jobs/: a name with a dot, which the job files' walk passes by
JOURNAL_MODE = 0o600  # the daemon's alone, as the job files
JOURNAL_LIMIT = 4 << 20  # bytes: past this the jobs are written whole and the journal emptied
SEQ_KEY = "spool_seq"  # a job file's: the sequence number of its write

log = logging.getLogger("minisge.qmaster")


class JobJournal:
    """``jobs/.journal`` (see the module): the lines appended since the last
    compaction, and which jobs they are of."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.size = 0  # its length after the last append (when to compact)
        self.journaled: set[int] = set()  # the jobs with lines since the last compaction
        self.failing: dict[str, str] = {}  # step (append, cut, compact) -> its failure, logged once while it lasts
        self.whole: int | None = None  # read() found a torn end: the length of the lines before it

    def read(self) -> dict[int, tuple[int, dict[str, Any]]]:
        """Each job's last line: job number -> (sequence number, the job
        without its request); FormatError for a damaged journal.  The jobs
        read become :attr:`journaled` (the next compaction writes them)."""
        try:
            with open(self.path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return {}
        except OSError as err:
            raise FormatError(f"cannot read the job journal: {err.strerror}", self.path, 1) from None
        lines = raw.split(b"\n")  # the last piece: b"" after a whole last line, else a torn one
        last: dict[int, tuple[int, dict[str, Any]]] = {}
        bad = 0  # the first line that is not whole, when whole ones may still come
        whole = 0  # the length of the lines up to the last whole one
        for number, line in enumerate(lines[:-1], 1):
            entry = _parsed(line)
            if entry is None:
                bad = bad or number
                continue
            if bad:
                raise FormatError("not a whole journal line", self.path, bad)
            seq, job, data = entry
            last[job] = (seq, data)
            whole = raw.index(b"\n", whole) + 1
        self.whole = whole if whole < len(raw) else None
        self.journaled = set(last)
        return last

    def cut_torn_end(self) -> None:
        """The daemon's, at its start: a torn end :meth:`read` found cut off
        (the next line appended would join it).  Not :meth:`read`'s own: a
        reader of a running cell's spool (``python -m minisge.offline``)
        may see a line the daemon is writing, and changes nothing."""
        if self.whole is not None:
            os.truncate(self.path, self.whole)
            self.whole = None

    def append(self, entries: Iterable[tuple[int, int, dict[str, Any]]]) -> None:
        """The lines of ``entries`` (sequence number, job number, the job
        without its request), in one write; OSError, the journal cut back
        to what it was, when they are not all written."""
        raw = "".join(f"{seq} {job} {json.dumps(data, separators=(',', ':'))}\n"
                      for seq, job, data in entries).encode("ascii")
        if not raw:
            return
        self.cut_torn_end()  # (the daemon's start did, unless it failed: no line may join a torn one)
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                              JOURNAL_MODE)
        start = os.lseek(self.fd, 0, os.SEEK_END)  # where its lines begin (the file's length, whoever wrote it)
        view = memoryview(raw)
        try:
            while view:  # a full disk may take part of it
                view = view[os.write(self.fd, view):]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, start)
            raise
        self.size = start + len(raw)

    def empty(self) -> None:
        """The journal emptied (its jobs' files are on disk, whole and
        synced): its lines are older than they are."""
        if self.fd is None:
            with contextlib.suppress(FileNotFoundError):
                os.truncate(self.path, 0)
        else:
            os.ftruncate(self.fd, 0)
        self.size = 0
        self.journaled = set()

    def failed(self, step: str, what: str) -> None:
        """A step (an append, the torn end's cut, a compaction) failed: said
        in the log once while the same failure of that step lasts (the
        appends that work meanwhile do not make a compaction that keeps
        failing, tried at every pass, say it again)."""
        if self.failing.get(step) != what:
            log.warning("%s", what)
        self.failing[step] = what

    def worked(self, step: str) -> None:
        """The step worked: its next failure is said again."""
        self.failing.pop(step, None)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:  # (a qmaster of a test, let go)
        self.close()


def _parsed(line: bytes) -> tuple[int, int, dict[str, Any]] | None:
    """(sequence number, job number, data) of a whole line, None for any other."""
    try:
        seq, job, text = line.split(b" ", 2)
        data = json.loads(text)
        entry = (int(seq), int(job), data)
    except (ValueError, UnicodeDecodeError):
        return None
    return entry if isinstance(data, dict) and data.get("number") == entry[1] else None
