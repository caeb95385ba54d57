"""A task's TMPDIR (queue_conf(5) tmpdir): made for the job owner, following nothing.

The path is predictable (``<queue tmpdir>/<job>.<task>.<queue>``) and the
queue's tmpdir is usually /tmp, where every user may create entries.  Grid
Engine 8.1.9 (execd/tmpdir.c, sge_make_tmpdir) makes it with mkdir 0755,
an existing entry accepted, then chown(2)s the *path* to the job owner: a
symbolic link planted there gets its target chowned (any directory of
root's, given to the user), and a plain file planted there fails the task's
setup, which puts the queue instance in error for everyone.

:func:`make_tmpdir` creates the directory relative to a descriptor of its
parent, opens what is there with O_NOFOLLOW|O_DIRECTORY and decides on
that descriptor: the directory it just made (owned by this process), or a
real directory of the job owner's already there (a PE task joining its job
on this host, an earlier run's, or one the owner made: nothing in it the
owner could not have put there anyway), is the TMPDIR; its owner and mode
are changed through the descriptor (fchown, fchmod), no path is ever
chowned.  Anything else at the path (a symbolic link, a file, a directory
of another user's) is renamed aside, never followed nor used, and the task
gets a fresh directory.  A new directory gets 8.1.9's mode (0755).
What was renamed aside is then removed (:func:`discard`), as 8.1.9 removes
whatever it took over at the job's end (sge_remove_tmpdir, a recursive
rmdir of the path): a link or a file is unlinked (never followed), a
directory removed on descriptors (shutil.rmtree with ``dir_fd``, which
follows no symbolic link in it and refuses one swapped in for it), so that
a stale TMPDIR of another user's (a killed cell's, an earlier run's) does
not leave one more ``.moved-*`` entry behind at every job of its name.
An execd that is not root (a user's own cell) may not rename another
user's entry out of a sticky /tmp: the task then gets a fresh directory of
a name of its own beside it (``<job>.<task>.<queue>.<random>``), and its
TMPDIR says which.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import time
from typing import Any

MODE = 0o755  # 8.1.9's
ATTEMPTS = 5  # entries moved aside before giving up (someone keeps planting)


class TmpdirError(OSError):
    """The TMPDIR could not be made."""


def make_tmpdir(path: str, uid: int, gid: int, spare: str | None = None) -> tuple[str, list[tuple[str, bool]]]:
    """Make ``path`` a directory of ``uid``:``gid`` (owner and group changed
    only when this process is root), see the module doc; ``spare``: an
    empty directory of ``uid``'s to rename into place instead of a new one,
    when nothing is at ``path`` (:class:`SpareTmpdirs`).  Returns the
    directory made (``path``, or a fresh name beside it when what is in the
    way may not be moved) and, for the caller's log, the names whatever was
    in the way was moved aside to, each with whether it is removed."""
    parent, name = os.path.split(os.path.normpath(path))
    if not name or name in (".", ".."):
        raise TmpdirError(f"no directory name in TMPDIR {path!r}")
    moved: list[tuple[str, bool]] = []
    try:
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        os.makedirs(parent, exist_ok=True)  # the queue's tmpdir: the administrator's
        pfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if spare is not None and _take_spare(spare, pfd, name, uid, gid):
            return os.path.join(parent, name), moved
        for _ in range(ATTEMPTS):
            try:
                os.mkdir(name, 0o700, dir_fd=pfd)
                created = True
            except FileExistsError:
                created = False
            fd = open_directory(name, pfd)
            if fd is not None:
                try:
                    st = os.fstat(fd)
                    if st.st_uid == (os.geteuid() if created else uid):
                        if os.geteuid() == 0:
                            os.fchown(fd, uid, gid)
                        if created:
                            os.fchmod(fd, MODE)
                        return os.path.join(parent, name), moved
                finally:
                    os.close(fd)
            aside = f"{name}.moved-{secrets.token_hex(4)}"
            try:
                os.rename(name, aside, src_dir_fd=pfd, dst_dir_fd=pfd)
                moved.append((os.path.join(parent, aside), discard(aside, pfd)))
            except FileNotFoundError:
                pass  # gone meanwhile: try again
            except PermissionError:  # another user's, in a sticky directory, and we are not root
                name = f"{os.path.basename(os.path.normpath(path))}.{secrets.token_hex(4)}"
        raise TmpdirError(f"cannot make TMPDIR {path}: something keeps being put in its place")
    finally:
        os.close(pfd)


def _take_spare(spare: str, pfd: int, name: str, uid: int, gid: int) -> bool:
    """The spare directory ``spare`` renamed to ``name`` in ``pfd`` when
    nothing is there (else, or on another file system, False: the caller
    makes a new one), then given to ``uid``:``gid`` with mode 0755 through
    a descriptor opened before the rename (none is followed)."""
    try:  # in the execd's spool, where nobody else enters: only its last component could be a link
        fd = os.open(spare, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if st.st_uid != uid:
            return False
        try:
            os.lstat(name, dir_fd=pfd)
            return False  # something is there: make_tmpdir deals with it
        except FileNotFoundError:
            pass
        # (an empty directory put there since would be replaced, as make_tmpdir removes what is in the
        # way; a link, a file or a directory with something in it makes the rename fail)
        os.rename(spare, name, dst_dir_fd=pfd)
        if st.st_gid != gid and os.geteuid() == 0:  # (mostly its group already: a system call less a task)
            os.fchown(fd, uid, gid)
        os.fchmod(fd, MODE)  # (0700 while it was set aside)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def discard(name: str, dir_fd: int) -> bool:
    """Remove the entry ``name`` of ``dir_fd`` (one renamed aside by
    :func:`make_tmpdir`) following no symbolic link: unlinked when no
    directory, else removed on descriptors.  Whether it is gone."""
    try:
        if not stat.S_ISDIR(os.lstat(name, dir_fd=dir_fd).st_mode):
            os.unlink(name, dir_fd=dir_fd)
        else:
            shutil.rmtree(name, dir_fd=dir_fd)  # on descriptors: a link swapped in for it is refused
    except FileNotFoundError:
        pass  # removed meanwhile (by its owner)
    except OSError:
        return False
    return True


def use_tmpdir(cfg: dict[str, Any], path: str) -> None:
    """A task's configuration (minisge.execd.shepherd_config) with ``path`` as
    its TMPDIR: the directory, and TMPDIR and TMP in the job's environment."""
    cfg["tmpdir"] = path
    for env in (cfg.get("env"), cfg.get("sge_env")):
        if isinstance(env, dict):
            for var in ("TMPDIR", "TMP"):
                if var in env:
                    env[var] = path


def open_directory(name: str, dir_fd: int) -> int | None:
    """A descriptor of the directory ``name`` in ``dir_fd``; None when that
    is no directory (a symbolic link is not followed) or is gone."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except (NotADirectoryError, FileNotFoundError):
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:  # a symbolic link
            return None
        raise
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def remove_tmpdir(path: str) -> None:
    """Remove a task's TMPDIR and what the job left in it.  shutil.rmtree
    follows no symbolic link (on Linux it works on descriptors), and one
    put in the TMPDIR's place is left alone."""
    shutil.rmtree(path, ignore_errors=True)


class SpareTmpdirs:
    """The ended tasks' TMPDIRs, out of their place at once and made the
    TMPDIRs of the next tasks of their owners.

    At a task's end its TMPDIR is renamed into :attr:`dir` (``old_tmpdirs``
    in the execd's spool: nobody else enters it; :meth:`set_aside`), not
    removed: a rename costs ~0.02 ms where an rmdir costs a discard on a
    disk mounted with ``discard`` (0.1 ms, and over 0.5 ms while the disk is
    busy), and a mkdir as much again at the next task's start.  A worker
    thread then deals with those of a while (:meth:`tidy`): one the job
    left nothing in gets mode 0700 and, if it is still empty then, becomes
    a spare of its owner's (``spare-UID-N``); the others are removed, no
    link followed.  A new task of that owner gets a spare renamed into
    place when nothing is at its path (:func:`make_tmpdir`).  A spare goes
    only to its own owner, so that nothing a user set on a directory of
    theirs (a default ACL, say) reaches another user's files.  Where the
    queue's tmpdir is on another file system than the spool nothing is set
    aside: the TMPDIR is removed where it is, as before."""

    SPARE = "spare-"

    def __init__(self, dir: str, room: int = 256):
        self.dir = dir
        self.room = room  # spares kept at most
        self.spares: dict[int, list[str]] = {}  # owner → the names of their spares, as :meth:`tidy` found them
        self.epoch = f"{time.time_ns():x}"  # the names set aside by this execd: none of an earlier one's
        self.count = 0  # directories set aside: their unique names (EPOCH.N)

    def open(self) -> None:
        """The directory, made (mode 0700) if need be."""
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        os.chmod(self.dir, 0o700)  # the jobs' TMPDIRs, their owners' files in them: nobody else enters

    def set_aside(self, path: str) -> bool:
        """A task's ended TMPDIR out of its place, with what the job left in
        it, renamed into :attr:`dir`.  Only a real directory is moved (what
        was put in its place, a link or a file, is left alone, as
        :func:`remove_tmpdir` leaves it); False when nothing was moved: not
        a directory, gone, or on another file system (the caller then
        removes it where it is)."""
        self.count += 1
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
            os.rename(path, os.path.join(self.dir, f"{self.epoch}.{self.count}"))
        except OSError:
            return False
        return True

    def take(self, uid: int) -> str | None:
        """The path of a spare of ``uid``'s, taken; None when there is none."""
        names = self.spares.get(uid)
        return os.path.join(self.dir, names.pop()) if names else None

    def tidy(self) -> dict[int, list[str]]:
        """(A worker thread's.)  Make spares of the TMPDIRs set aside, as
        many as there is room for, remove the others; the spares there are
        now, by owner (what cannot be removed now is left for the next
        time)."""
        try:
            fd = os.open(self.dir, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return {}
        try:
            names = os.listdir(fd)
            spares: dict[int, list[str]] = {}
            kept = 0
            for name in names:
                owner = self._owner(name)
                if owner is not None:
                    spares.setdefault(owner, []).append(name)
                    kept += 1
            for name in names:
                if name.startswith(self.SPARE):
                    continue
                made = self._make_spare(name, fd) if kept < self.room else None
                if made is not None:
                    spares.setdefault(made[0], []).append(made[1])
                    kept += 1
                    continue
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError:
                    discard(name, fd)
            return spares
        finally:
            os.close(fd)

    def _owner(self, name: str) -> int | None:
        """The owner a spare's name says (None: no spare's name)."""
        if not name.startswith(self.SPARE):
            return None
        uid, _, _ = name[len(self.SPARE):].partition("-")
        return int(uid) if uid.isdigit() else None

    def _make_spare(self, name: str, dir_fd: int) -> tuple[int, str] | None:
        """The TMPDIR ``name`` made a spare of its owner's, if it is a
        directory the job left nothing in: mode 0700 first (nobody but its
        owner writes into it any more), then found empty; (owner, its new
        name), or None."""
        sub = open_directory(name, dir_fd)
        if sub is None:
            return None
        try:
            os.fchmod(sub, 0o700)
            if os.listdir(sub):
                return None
            owner = os.fstat(sub).st_uid
            spare = f"{self.SPARE}{owner}-{name}"
            os.rename(name, spare, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            return owner, spare
        except OSError:
            return None
        finally:
            os.close(sub)
