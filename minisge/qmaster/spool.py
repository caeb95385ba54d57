"""The qmaster's spool: the truth the qmaster restarts from.

Configuration objects are one text file each, in the format ``qconf -s…``
prints, under Grid Engine's classic directory names (``cqueues/all.q``,
``pe/smp``, ``centry``…); the global and scheduler configuration live in
``common/`` as in classic spooling.  Jobs are JSON files (Grid Engine's own
classic job files are binary CULL dumps, so there is no text format to be
compatible with) sharded like Grid Engine's: job 1 is ``jobs/00/0000/0001``.
Every write is atomic: a temporary file, fsync, rename.  Writes that may
share their fsync (a burst of submissions) are made unsynced and then made
durable together by :class:`GroupCommit`: one ``syncfs`` of the spool's file
system for the whole batch, in a worker thread, before any of them is answered.

A new job's file is, where it can be, the file of a job deleted before
(:class:`FreeJobFiles`, ``jobs/.free/``): written there and renamed into its
place, it takes no new inode, which ext4 (without a journal above all, where
it passes over every inode freed in the last minutes) makes far dearer than
the write itself.

What a job holds is its owner's alone (``-v`` values, the script): ``jobs/``
is the daemon's (0700, files 0600), ``job_scripts/`` lets others pass but not
list (0711) and each script is its job owner's, 0700, so that the job, run
as its owner, can run it and nobody else can read it.  Loading the spool
gives the files written before these modes the same ones.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import json
import logging
import os
import queue
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

import trio

from minisge.cell import Cell
from minisge.formats.errors import FormatError
from minisge.formats.lines import SPOOL_HEADER
from minisge.qmaster.job_journal import JOURNAL_NAME, SEQ_KEY, JobJournal

log = logging.getLogger("minisge.spool")

AR_DIR = "advance_reservations"  # one file per advance reservation (sge.h AR_DIR)
OBJECT_DIRS = (
    "cqueues", "exec_hosts", "submit_hosts", "admin_hosts", "centry", "pe",
    "ckpt", "usersets", "calendars", "hostgroups", "projects", "users",
    "resource_quotas", "jobs", "job_scripts", "zombies",
)


class SpoolError(OSError):
    """A spool file could not be written or removed (a full or read-only
    file system): what the request is answered with, nothing changed."""

    def __init__(self, path: str, err: OSError):
        super().__init__(err.errno, err.strerror, path)
        self.path = path

    def __str__(self) -> str:
        # libspoolc's words (8.1.9: error writing to file "%-.100s": %-.100s)
        return f'error writing to file "{self.path}": {self.strerror}'


JOBS_DIR_MODE = 0o700  # jobs/ and its shards: the daemon's alone
JOB_FILE_MODE = 0o600
SCRIPTS_DIR_MODE = 0o711  # job_scripts/: a job's owner reaches its script, nobody lists them
SCRIPT_MODE = 0o700  # a script: its job owner's (the job runs it), nobody else's


def atomic_write(path: str, data: str | bytes, mode: int = 0o644, sync: bool = True, owner: int | None = None) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old or the new file,
    never half, with ``mode`` (and, as root, the user ``owner``) from the start;
    SpoolError (the old file left as it was) when it cannot."""
    raw = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
    tmp = f"{os.path.dirname(path)}/.{os.path.basename(path)}.tmp"
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            fd = os.open(tmp, flags, mode)
        except FileExistsError:  # a leftover of a crash: it would keep its old mode and owner
            os.unlink(tmp)
            fd = os.open(tmp, flags, mode)
        try:
            os.fchmod(fd, mode)  # whatever the umask
            if owner is not None and os.getuid() == 0:
                os.fchown(fd, owner, -1)
            while raw:  # a full disk (or a big script) may take part of a write
                raw = raw[os.write(fd, raw):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
    except OSError as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SpoolError(path, err) from None


def _libc_syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2), None where the C library has none."""
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


SYNCFS = _libc_syncfs()


def sync_paths(paths: Iterable[str]) -> None:
    """Make the files ``paths`` (written and renamed, unsynced) and their
    directory entries durable: one ``syncfs`` of their file system where
    Linux has it (everything dirty there is written once, a journal commit
    for all), else an fsync of each file and of each directory.  SpoolError
    naming the first path when the file system reports a failure."""
    paths = list(paths)
    if not paths:
        return
    if SYNCFS is not None:
        try:
            fd = os.open(os.path.dirname(paths[0]), os.O_RDONLY | os.O_DIRECTORY)
        except OSError as err:
            raise SpoolError(paths[0], err) from None
        try:
            if SYNCFS(fd) != 0:
                code = ctypes.get_errno()
                raise SpoolError(paths[0], OSError(code, os.strerror(code)))
        finally:
            os.close(fd)
        return
    for p in [*paths, *sorted({os.path.dirname(p) for p in paths})]:
        try:
            fd = os.open(p, os.O_RDONLY)
        except FileNotFoundError:  # removed since (a later request): nothing to keep
            continue
        except OSError as err:
            raise SpoolError(p, err) from None
        try:
            os.fsync(fd)
        except OSError as err:
            raise SpoolError(p, err) from None
        finally:
            os.close(fd)


class CommitBatch:
    """The writes waiting for the same sync, and how it went."""

    __slots__ = ("units", "writes", "flushed", "error", "bug")

    def __init__(self) -> None:
        self.units: list[CommitUnit] = []  # the requests' writes, in their order
        self.writes: dict[str, Callable[[], object]] = {}  # by path: made once, before the sync
        self.flushed = trio.Event()  # the committer's thread is done with it
        self.error: SpoolError | None = None  # the batch's: its once-writes or its sync failed
        self.bug: Exception | None = None  # what else its flush raised

    def flush(self, sync: Callable[[Iterable[str]], None]) -> None:
        """A worker thread's work: each unit's writes (a unit whose write
        fails gets the error, the others go on), the once-writes, then the
        sync of every path written; SpoolError when the last two fail."""
        paths = set(self.writes)
        for unit in self.units:
            try:
                paths.update(write() for write in unit.writes)
            except SpoolError as err:
                unit.error = err
            except OSError as err:
                unit.error = SpoolError("", err)
        try:
            for write in self.writes.values():
                write()
            sync(sorted(paths))
        except SpoolError:
            raise
        except OSError as err:
            raise SpoolError(min(paths, default=""), err) from None

    def committed(self) -> None:
        """Tell each unit how it went, in their order (a unit's fault is
        logged: the others are still told)."""
        for unit in self.units:
            try:
                unit.committed(unit.error or self.error)
            except Exception:
                log.exception("a request's part after its group commit failed")


class CommitUnit:
    """One request's writes in a batch, its own error, and whom to tell
    (``committed(None)`` once they are on disk, else ``committed(error)``)."""

    __slots__ = ("writes", "error", "committed")

    def __init__(self, writes: Iterable[Callable[[], str]], committed: Callable[[SpoolError | None], None]) -> None:
        self.writes = list(writes)
        self.error: SpoolError | None = None
        self.committed = committed


class GroupCommit:
    """Group commit: writes made unsynced by several requests become durable
    with one sync (``sync_paths``), and each request waits for it before it
    answers.  :meth:`run` is the committer, a task of the daemon's nursery:
    while one batch is synced in a worker thread the next one gathers, so
    the more requests come together the fewer syncs each pays.  Without a
    running committer (a qmaster driven outside its daemon) :meth:`durable`
    syncs at once.

    To use it for other writes: ``await group.durable(writes)`` with the
    writes as callables (``functools.partial(atomic_write, path, data,
    sync=False)``, returning the path) before answering or acting on them;
    a SpoolError from it means they are not on disk, whole or durably:
    remove what they wrote and answer with the error.  Nothing another
    request may read should depend on the files until it returns."""

    def __init__(self, sync: Callable[[Iterable[str]], None] = sync_paths) -> None:
        self.sync = sync
        self.batch = CommitBatch()
        self.wake = trio.Event()
        self.running = False
        self.batches = 0  # synced batches and the requests in them, for the log and the benchmarks
        self.units = 0

    async def durable(self, writes: Iterable[Callable[[], str]],
                      once: Mapping[str, Callable[[], object]] | None = None) -> None:
        """Make ``writes`` (each writes one file, ``atomic_write(...,
        sync=False)``, and returns its path) in the committer's thread with
        the rest of the batch, and return once they are on disk; SpoolError
        when not (the files written may stay: the caller removes them).
        ``once``: files a whole batch needs written once (a counter such as
        jobseqnum, rewritten by each request otherwise), by path; the last one
        given for a path is made, after the writes, before the sync."""
        outcome: list[SpoolError | None] = []
        if self.running:
            done = trio.Event()

            def committed(error: SpoolError | None) -> None:
                outcome.append(error)
                done.set()

            self.add(writes, once, committed)
            await done.wait()
        else:
            batch = CommitBatch()
            unit = CommitUnit(writes, outcome.append)
            batch.units.append(unit)
            batch.writes.update(once or {})
            try:
                await trio.to_thread.run_sync(batch.flush, self.sync)
            except SpoolError as err:
                batch.error = err
            batch.committed()
        if outcome[0] is not None:
            raise outcome[0]

    def add(self, writes: Iterable[Callable[[], str]], once: Mapping[str, Callable[[], object]] | None,
            committed: Callable[[SpoolError | None], None]) -> None:
        """:meth:`durable` for a caller that does not wait (the committer must
        be running): ``committed(None)`` is called in the daemon's loop once
        the writes are on disk, ``committed(error)`` when they are not."""
        assert self.running, "GroupCommit.add without its committer"
        self.batch.units.append(CommitUnit(writes, committed))
        if once:
            self.batch.writes.update(once)
        self.wake.set()

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The committer: sync each gathered batch in its own thread (a
        thread of its own, woken by a queue, costs the loop half of what
        ``trio.to_thread`` does a batch), then wake its waiters."""
        token = trio.lowlevel.current_trio_token()
        batches: queue.SimpleQueue[CommitBatch | None] = queue.SimpleQueue()

        def committer() -> None:
            while (batch := batches.get()) is not None:
                try:
                    batch.flush(self.sync)
                except SpoolError as err:
                    batch.error = err
                except Exception as err:  # noqa: BLE001 - a bug: raised in the daemon's loop, as a task's would be
                    batch.bug = err
                token.run_sync_soon(batch.flushed.set)

        thread = threading.Thread(target=committer, name="spool group commit", daemon=True)
        thread.start()
        self.running = True
        task_status.started()
        try:
            while True:
                await self.wake.wait()
                self.wake = trio.Event()
                batch, self.batch = self.batch, CommitBatch()
                batches.put(batch)
                with trio.CancelScope(shield=True):  # a sync begun is finished before the daemon goes
                    await batch.flushed.wait()
                if batch.bug is not None:
                    raise batch.bug
                if batch.error is not None:
                    log.error("spool sync of %d requests' files failed: %s", len(batch.units), batch.error)
                self.batches += 1
                self.units += len(batch.units)
                batch.committed()
        finally:
            self.running = False
            batches.put(None)
            if self.batches:  # how well the syncs were shared (bench/throughput.py reads it)
                log.info("spool group commit: %d requests in %d syncs", self.units, self.batches)
            if self.batch.units:  # never written: its requests are told, not left waiting
                self.batch.error = SpoolError("", OSError(errno.ESHUTDOWN, "the spool's committer stopped"))
                self.batch.committed()


FREE_DIR = ".free"  # under jobs/: FreeJobFiles (a name with a dot: no job's, skipped by the load)
FREE_FILES = 4096  # job files kept for new jobs at most; more deleted jobs' files are removed


class FreeJobFiles:
    """The files of deleted jobs, kept in ``jobs/.free/`` to be the files of
    new jobs: a deleted job's file is renamed there (:meth:`keep`) instead
    of removed, and a new job's file is written over one of them and renamed
    into its place (:meth:`write`), so that neither costs the file system an
    inode freed or a new one found.  Their contents are no job's (the load
    passes the directory by), so a file half written there is harmless, and
    the rename into its place makes a new job's file appear whole, as
    :func:`atomic_write`'s does.  :meth:`keep` runs in the daemon's loop,
    :meth:`write` in the group commit's thread as well: the list's ``append``
    and ``pop`` need no lock."""

    def __init__(self, directory: str) -> None:
        self.dir = directory
        self.names: list[str] = []  # the files there now
        self.numbers = itertools.count()  # the names of the files kept next (next() needs no lock)
        self.replacing = threading.Lock()  # replace(): one at a time

    def load(self) -> None:
        """The files kept by the daemon before (made the directory if missing);
        one that has another name too (jobseqnum's, a crash between
        :meth:`replace`'s link and its rename) loses this one: a live file is
        never written over."""
        names = []
        try:
            os.makedirs(self.dir, mode=JOBS_DIR_MODE, exist_ok=True)
            for n in os.listdir(self.dir):
                if not n.isdigit():
                    continue
                st = os.lstat(f"{self.dir}/{n}")
                if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                    names.append(n)
                else:
                    os.unlink(f"{self.dir}/{n}")
        except OSError:
            names = []
        self.names = names
        self.numbers = itertools.count(max((int(n) for n in names), default=-1) + 1)

    def keep(self, path: str) -> bool:
        """Move a deleted job's file ``path`` here; False when it was not
        (the pool is full or refuses it: the caller removes it)."""
        if len(self.names) >= FREE_FILES:
            return False
        name = str(next(self.numbers))
        try:
            os.rename(path, f"{self.dir}/{name}")
        except OSError:  # (gone already, or no directory here: remove_file says which)
            return False
        self.names.append(name)
        return True

    def write(self, path: str, raw: bytes) -> bool:
        """The new file ``path`` (the name is free) with ``raw``, made of a
        kept file; False when none is kept or writing one failed (the
        caller writes a new file the ordinary way, which reports an error).
        The job files all have one owner, the daemon."""
        return self._written_over(path, raw, JOB_FILE_MODE)

    def replace(self, path: str, raw: bytes, mode: int, otherwise: Callable[[], None]) -> None:
        """The file ``path`` (the daemon's: a job file, jobseqnum) replaced
        by ``raw`` at once: a kept file written and renamed over it, else
        ``otherwise()`` (which raises when it cannot); the old file kept
        here in its turn (a second name first, so that it is not freed, and
        kept only once it is no longer ``path``: nothing is ever written
        over a live file).  A job's every change then costs no inode found
        and none freed: on this file system (ext4, ``discard``) a rename
        over a file, which frees it, costs ~0.8 ms, this ~0.05 ms.  One at a
        time (the loop's and the committer's threads both write jobseqnum):
        two could otherwise keep one old file twice."""
        with self.replacing:
            old: str | None = None
            if len(self.names) < FREE_FILES:
                old = str(next(self.numbers))
                try:
                    os.link(path, f"{self.dir}/{old}")
                except OSError:  # (none yet): the rename frees it
                    old = None
            try:
                if not self._written_over(path, raw, mode):
                    otherwise()
            except BaseException:
                if old is not None:  # still the live file: not kept
                    with contextlib.suppress(OSError):
                        os.unlink(f"{self.dir}/{old}")
                raise
            if old is not None:
                self.names.append(old)

    def _written_over(self, path: str, raw: bytes, mode: int) -> bool:
        try:
            name = self.names.pop()
        except IndexError:
            return False
        kept = f"{self.dir}/{name}"
        try:
            fd = os.open(kept, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            os.fchmod(fd, mode)  # (a kept jobseqnum is 0644) before a byte is written
            view = memoryview(raw)
            while view:  # over the old bytes from the start: no block to find where they were
                view = view[os.write(fd, view):]
            os.ftruncate(fd, len(raw))  # not to 0 first: ext4 would then write the file out at its close
            os.close(fd)
            fd = -1
            os.rename(kept, path)
        except OSError:
            if fd != -1:
                os.close(fd)
            try:
                os.unlink(kept)
            except OSError:
                pass
            return False
        return True


def remove_file(path: str) -> None:
    """Remove a spool file (gone already is fine); SpoolError when it cannot."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as err:
        raise SpoolError(path, err) from None


def list_text(entries: list[str]) -> str:
    """The text of a name list (``managers``, ``operators``): one name a line."""
    return "".join(f"{e}\n" for e in entries)


def parse_list(text: str) -> list[str]:
    """The names of a name list's text (blank and comment lines skipped)."""
    return [ln.strip() for ln in text.split("\n") if ln.strip() and not ln.startswith("#")]


def secure_dir(path: str, mode: int) -> None:
    """Make the directory ``path`` (made if missing) have ``mode``."""
    os.makedirs(path, mode=mode, exist_ok=True)
    if os.stat(path).st_mode & 0o7777 != mode:
        os.chmod(path, mode)


def job_relpath(job_id: int) -> str:
    return os.path.join(
        "jobs", f"{job_id // 100000000:02d}", f"{(job_id // 10000) % 10000:04d}", f"{job_id % 10000:04d}"
    )


def _read_job_file(path: str) -> bytes:
    """A job file's bytes (as the spool's mode, 0600, if it had another):
    without a text stream, read in one go (a 100,000-job spool reads as many)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o7777 != JOB_FILE_MODE:
            os.fchmod(fd, JOB_FILE_MODE)
        chunks = [os.read(fd, st.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 16))
        return b"".join(chunks)
    finally:
        os.close(fd)


class QmasterSpool:
    def __init__(self, cell: Cell):
        self.cell = cell
        self.dir = cell.qmaster_spool
        self.free_job_files = FreeJobFiles(os.path.join(self.dir, "jobs", FREE_DIR))
        self.journal = JobJournal(os.path.join(self.dir, "jobs", JOURNAL_NAME))
        self.seqs = itertools.count(1)  # the spool's sequence numbers (job_journal.py); past the highest, once loaded

    def create_dirs(self) -> None:
        os.makedirs(self.dir, exist_ok=True)
        for d in OBJECT_DIRS:
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        os.makedirs(os.path.join(self.cell.common, "local_conf"), exist_ok=True)
        self.secure_job_dirs()

    def secure_job_dirs(self) -> None:
        """``jobs/`` and ``job_scripts/`` with their modes (see the module)."""
        secure_dir(os.path.join(self.dir, "jobs"), JOBS_DIR_MODE)
        secure_dir(os.path.join(self.dir, "job_scripts"), SCRIPTS_DIR_MODE)
        self.free_job_files.load()

    # --- configuration objects -----------------------------------------
    def object_path(self, kind: str, name: str) -> str:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"invalid object name {name!r}")
        return os.path.join(self.dir, kind, name)

    def write_object(self, kind: str, name: str, text: str, sync: bool = True) -> None:
        atomic_write(self.object_path(kind, name), SPOOL_HEADER + text, sync=sync)

    def delete_object(self, kind: str, name: str) -> None:
        remove_file(self.object_path(kind, name))

    def add_host(self, kind: str, host: str) -> None:
        """``submit_hosts``, ``admin_hosts``: an empty file named for the host."""
        atomic_write(self.object_path(kind, host), "")

    def remove_host(self, kind: str, host: str) -> None:
        remove_file(self.object_path(kind, host))

    def load_objects(self, kind: str) -> dict[str, tuple[str, str]]:
        """name → (path, text) of every object of ``kind``; the text keeps its
        comment header, so a parser's line numbers are the file's."""
        out = {}
        d = os.path.join(self.dir, kind)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if name.startswith("."):
                continue
            p = os.path.join(d, name)
            with open(p, encoding="utf-8") as f:
                out[name] = (p, f.read())
        return out

    def write_common(self, name: str, text: str) -> None:
        atomic_write(self.cell.common_file(name), text)

    def read_common(self, name: str) -> tuple[str, str]:
        p = self.cell.common_file(name)
        with open(p, encoding="utf-8") as f:
            return p, f.read()

    def write_list(self, name: str, entries: list[str]) -> None:
        """``managers``, ``operators``: one name a line."""
        atomic_write(os.path.join(self.dir, name), list_text(entries))

    def read_list(self, name: str) -> list[str]:
        try:
            with open(os.path.join(self.dir, name), encoding="utf-8") as f:
                return parse_list(f.read())
        except FileNotFoundError:
            return []

    # --- advance reservations (qrsub) ----------------------------------
    def write_ar(self, ar_id: int, text: str) -> None:
        """``advance_reservations/ID``, as 8.1.9's classic spooling names it."""
        d = os.path.join(self.dir, AR_DIR)
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as err:
            raise SpoolError(d, err) from None
        atomic_write(os.path.join(d, str(ar_id)), SPOOL_HEADER + text)

    def delete_ar(self, ar_id: int) -> None:
        remove_file(os.path.join(self.dir, AR_DIR, str(ar_id)))

    def load_ars(self) -> dict[str, tuple[str, str]]:
        return self.load_objects(AR_DIR)

    def read_arseqnum(self) -> int:
        try:
            with open(os.path.join(self.dir, "arseqnum"), encoding="utf-8") as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def write_arseqnum(self, n: int) -> None:
        atomic_write(os.path.join(self.dir, "arseqnum"), f"{n}\n", sync=False)

    # --- jobs ------------------------------------------------------------
    def read_jobseqnum(self) -> int:
        try:
            with open(os.path.join(self.dir, "jobseqnum"), encoding="utf-8") as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    @property
    def jobseqnum_path(self) -> str:
        return os.path.join(self.dir, "jobseqnum")

    def write_jobseqnum(self, n: int) -> None:
        """Atomic but not fsynced: the job file of job ``n`` is, and loading takes
        the larger of this and the highest job id in the spool.  Made of a
        kept job file where there is one (:meth:`FreeJobFiles.replace`): a new
        file for the old one each batch of submissions would cost ext4 an
        inode found and one freed."""
        raw = f"{n}\n".encode()
        self.free_job_files.replace(self.jobseqnum_path, raw, 0o644,
                                    functools.partial(atomic_write, self.jobseqnum_path, raw, sync=False))

    def next_seq(self) -> int:
        """The next of the spool's sequence numbers (a job file's write, a
        journal line: :mod:`minisge.qmaster.job_journal`); the loop's and the
        committer's threads both take them (next() needs no lock)."""
        return next(self.seqs)

    def write_job(self, job_id: int, data: dict, sync: bool = True, new: bool = False) -> str:
        """Spool a job (``sync=False``: made durable later, by the caller's
        :class:`GroupCommit`); its path.  ``new``: a job not spooled before
        (its file is made of a deleted job's, :class:`FreeJobFiles`).  The
        file carries the sequence number of its write (``spool_seq``): the
        journal's older lines of the job no longer apply."""
        p = os.path.join(self.dir, job_relpath(job_id))
        d = os.path.dirname(p)
        if not os.path.isdir(d):
            try:
                os.makedirs(d, mode=JOBS_DIR_MODE, exist_ok=True)
            except OSError as err:
                raise SpoolError(d, err) from None
        # the number last (a reader takes a key's last value), spliced in: the caller's data is not copied, nor changed
        raw = json.dumps(data, separators=(",", ":")).encode()[:-1] + b',"%s":%d}' % (SEQ_KEY.encode(), self.next_seq())
        if sync:  # a request's change: a new file, which a full disk refuses as Grid Engine's spool does
            atomic_write(p, raw, mode=JOB_FILE_MODE, sync=True)
        elif new:
            if not self.free_job_files.write(p, raw):
                atomic_write(p, raw, mode=JOB_FILE_MODE, sync=False)
        else:  # a running job's transition: a kept file written over, the old one kept in its turn
            self.free_job_files.replace(p, raw, JOB_FILE_MODE,
                                        functools.partial(atomic_write, p, raw, mode=JOB_FILE_MODE, sync=False))
        return p

    def delete_job(self, job_id: int) -> None:
        """The job's file (kept for a new job's, :class:`FreeJobFiles`) and
        script; SpoolError when either stays."""
        path = os.path.join(self.dir, job_relpath(job_id))
        if not self.free_job_files.keep(path):
            remove_file(path)
        remove_file(os.path.join(self.dir, "job_scripts", str(job_id)))

    def load_jobs(self) -> Iterator[tuple[str, dict]]:
        """(path, data) of every spooled job, by job number, one at a time
        (a spool of 100,000 jobs is never all in memory as raw data), each
        with its last journal line newer than its file applied
        (:mod:`minisge.qmaster.job_journal`); a file that is no job's JSON,
        or a damaged journal, is a FormatError naming it (the qmaster does
        not start).  The files (and scripts) of a spool written before the
        modes of the module get them.  Once all are read, the spool's
        sequence numbers go on past the highest seen."""
        self.secure_job_dirs()
        lines = self.journal.read()
        highest = max((seq for seq, _data in lines.values()), default=0)
        root = os.path.join(self.dir, "jobs")
        try:  # the scripts there are (a binary job has none): one listing, not a stat per job
            scripts = frozenset(os.listdir(os.path.join(self.dir, "job_scripts")))
        except FileNotFoundError:
            scripts = frozenset()
        for dirpath, dirs, files in os.walk(root):
            # job_relpath's names are fixed-width numbers: sorted, they walk the jobs by number
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # not .free (FreeJobFiles)
            files.sort()
            if dirpath != root and os.stat(dirpath).st_mode & 0o7777 != JOBS_DIR_MODE:
                os.chmod(dirpath, JOBS_DIR_MODE)
            for fn in files:
                if fn.startswith("."):
                    continue
                path = f"{dirpath}/{fn}"
                try:
                    data = json.loads(_read_job_file(path).decode("utf-8"))
                except json.JSONDecodeError as e:
                    raise FormatError(f"not a job: {e.msg} (column {e.colno})", path, e.lineno) from None
                except UnicodeDecodeError as e:
                    raise FormatError(f"not a job: not UTF-8 ({e.reason})", path, 1) from None
                if not isinstance(data, dict) or not isinstance(data.get("number"), int):
                    raise FormatError("not a job: no job number", path, 1)
                if str(data["number"]) in scripts:
                    self.secure_script(data["number"], data.get("uid"))
                seq = data.pop(SEQ_KEY, 0)  # (none in a file of before the journal)
                seq = seq if type(seq) is int else 0
                highest = max(highest, seq)
                line = lines.get(data["number"])
                if line is not None and line[0] > seq:
                    data.update(line[1])  # every field but the request, as the job was at its last pass
                yield path, data
        self.seqs = itertools.count(highest + 1)

    def write_script(self, job_id: int, text: str, owner: int | None = None, sync: bool = True) -> str:
        """Spool a job's script, its owner's (uid ``owner``) alone; its path."""
        p = self.script_path(job_id)
        # executable, as the execd's copy in 8.1.9: a starter_method or
        # shell_start_mode unix_behavior execs it directly; the bytes qsub
        # read, those that are no UTF-8 included (surrogateescape end to end)
        atomic_write(p, text.encode("utf-8", "surrogateescape"), mode=SCRIPT_MODE, owner=owner, sync=sync)
        return p

    def read_script(self, job_id: int) -> str:
        """A spooled job's script (qresub copies it); OSError when it is gone."""
        with open(self.script_path(job_id), "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")

    def secure_script(self, job_id: object, owner: object) -> None:
        """The script of a job spooled before: its owner's, 0700."""
        if type(job_id) is not int:
            return
        try:
            st = os.lstat(self.script_path(job_id))
        except FileNotFoundError:
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if type(owner) is int and os.getuid() == 0 and st.st_uid != owner:
            os.lchown(self.script_path(job_id), owner, -1)
        if st.st_mode & 0o7777 != SCRIPT_MODE:
            os.chmod(self.script_path(job_id), SCRIPT_MODE)

    def script_path(self, job_id: int) -> str:
        return os.path.join(self.dir, "job_scripts", str(job_id))
