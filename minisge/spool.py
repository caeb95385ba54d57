"""The qmaster's spool: the truth the qmaster restarts from.

Configuration objects are one text file each, in the format ``qconf -s…``
prints, under Grid Engine's classic directory names (``cqueues/all.q``,
``pe/smp``, ``centry``…); the global and scheduler configuration live in
``common/`` as in classic spooling.  Jobs are JSON files (Grid Engine's own
classic job files are binary CULL dumps, so there is no text format to be
compatible with) sharded like Grid Engine's: job 1 is ``jobs/00/0000/0001``.
Every write is atomic: a temporary file, fsync, rename.
"""

from __future__ import annotations

import json
import os

from minisge.cell import Cell

OBJECT_DIRS = (
    "cqueues", "exec_hosts", "submit_hosts", "admin_hosts", "centry", "pe",
    "ckpt", "usersets", "calendars", "hostgroups", "projects", "users",
    "resource_quotas", "jobs", "job_scripts", "zombies",
)

SPOOL_HEADER = "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n"


def atomic_write(path: str, data: str | bytes, mode: int = 0o644, sync: bool = True) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old or the new file, never half."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = f"{os.path.dirname(path)}/.{os.path.basename(path)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, raw)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)


def strip_header(text: str) -> str:
    """Drop the ``# Version`` comment header a spooled object starts with."""
    if text.startswith(SPOOL_HEADER):
        return text[len(SPOOL_HEADER):]
    return text


def job_relpath(job_id: int) -> str:
    return os.path.join(
        "jobs", f"{job_id // 100000000:02d}", f"{(job_id // 10000) % 10000:04d}", f"{job_id % 10000:04d}"
    )


class QmasterSpool:
    def __init__(self, cell: Cell):
        self.cell = cell
        self.dir = cell.qmaster_spool

    def create_dirs(self) -> None:
        os.makedirs(self.dir, exist_ok=True)
        for d in OBJECT_DIRS:
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        os.makedirs(os.path.join(self.cell.common, "local_conf"), exist_ok=True)

    # --- configuration objects -----------------------------------------
    def object_path(self, kind: str, name: str) -> str:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"invalid object name {name!r}")
        return os.path.join(self.dir, kind, name)

    def write_object(self, kind: str, name: str, text: str) -> None:
        atomic_write(self.object_path(kind, name), SPOOL_HEADER + text)

    def delete_object(self, kind: str, name: str) -> None:
        try:
            os.unlink(self.object_path(kind, name))
        except FileNotFoundError:
            pass

    def load_objects(self, kind: str) -> dict[str, tuple[str, str]]:
        """name → (path, text without header) of every object of ``kind``."""
        out = {}
        d = os.path.join(self.dir, kind)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if name.startswith("."):
                continue
            p = os.path.join(d, name)
            with open(p, encoding="utf-8") as f:
                out[name] = (p, strip_header(f.read()))
        return out

    def write_common(self, name: str, text: str) -> None:
        atomic_write(self.cell.common_file(name), text)

    def read_common(self, name: str) -> tuple[str, str]:
        p = self.cell.common_file(name)
        with open(p, encoding="utf-8") as f:
            return p, strip_header(f.read())

    def write_list(self, name: str, entries: list[str]) -> None:
        """``managers``, ``operators``: one name a line."""
        atomic_write(os.path.join(self.dir, name), "".join(f"{e}\n" for e in entries))

    def read_list(self, name: str) -> list[str]:
        try:
            with open(os.path.join(self.dir, name), encoding="utf-8") as f:
                return [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
        except FileNotFoundError:
            return []

    # --- jobs ------------------------------------------------------------
    def read_jobseqnum(self) -> int:
        try:
            with open(os.path.join(self.dir, "jobseqnum"), encoding="utf-8") as f:
                return int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def write_jobseqnum(self, n: int) -> None:
        """Atomic but not fsynced: the job file of job ``n`` is, and loading takes
        the larger of this and the highest job id in the spool."""
        atomic_write(os.path.join(self.dir, "jobseqnum"), f"{n}\n", sync=False)

    def write_job(self, job_id: int, data: dict, sync: bool = True) -> None:
        p = os.path.join(self.dir, job_relpath(job_id))
        d = os.path.dirname(p)
        if not os.path.isdir(d):
            os.makedirs(d, exist_ok=True)
        atomic_write(p, json.dumps(data, separators=(",", ":")), sync=sync)

    def delete_job(self, job_id: int) -> None:
        for p in (os.path.join(self.dir, job_relpath(job_id)), os.path.join(self.dir, "job_scripts", str(job_id))):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass

    def load_jobs(self) -> list[dict]:
        out = []
        root = os.path.join(self.dir, "jobs")
        for dirpath, _dirs, files in os.walk(root):
            for fn in files:
                if fn.startswith("."):
                    continue
                with open(os.path.join(dirpath, fn), encoding="utf-8") as f:
                    out.append(json.load(f))
        out.sort(key=lambda d: d["number"])
        return out

    def write_script(self, job_id: int, text: str) -> str:
        p = os.path.join(self.dir, "job_scripts", str(job_id))
        # executable, as the execd's copy in 8.1.9: a starter_method or
        # shell_start_mode unix_behavior execs it directly
        atomic_write(p, text, mode=0o755)
        return p

    def script_path(self, job_id: int) -> str:
        return os.path.join(self.dir, "job_scripts", str(job_id))
