"""The execution daemon: starts the shepherds of dispatched tasks and reports their end.

Each task gets a directory ``active_jobs/<job>.<task>/`` in the execd spool
holding the shepherd's ``config`` and, afterwards, its result files (see
:mod:`minisge.shepherd`).  The execd forks the shepherd, waits for it
through a pidfd, reads the results and reports them to the qmaster; only
when the qmaster has recorded the end does the directory go.  After a
restart, directories left behind are picked up again: finished ones are
reported, live shepherds are waited for.
"""

from __future__ import annotations

import json
import logging
import os
import pwd
import shutil
import signal
import sys
import time
from typing import Awaitable, Callable

import trio

from minisge import execd_control, limits, shepherd, submit_options, usage
from minisge.cell import Cell
from minisge.load_sensor import LoadSensors

log = logging.getLogger("minisge.execd")

DEFAULT_PATH = "/usr/local/bin:/usr/ucb:/bin:/usr/bin"
PDC_INTERVAL = 1.0  # sge_conf(5) execd_params PDC_INTERVAL: how often job usage is read and limits checked
ARCH = "lx-amd64" if os.uname().machine == "x86_64" else f"lx-{os.uname().machine}"


def build_task_config(msg: dict, host: str, cell: Cell, job_dir: str) -> dict:
    """The shepherd's config for a start message: paths resolved, environment built."""
    spec = msg["spec"]
    job_id, task_id = msg["job_id"], msg["task_id"]
    array = spec.get("array")
    task = task_id if array else None
    try:
        pw = pwd.getpwuid(msg["uid"])
        home = pw.pw_dir
    except KeyError:
        home = "/"
    user = msg["owner"]
    name = spec["job_name"]
    ctx = dict(job_id=job_id, task_id=task, user=user, home=home, hostname=host)
    cwd = spec.get("cwd") or home
    if spec.get("cwd"):
        cwd = submit_options.expand_path(cwd, job_name=name, **ctx)
        spec = dict(spec, cwd=cwd)
    stdout = submit_options.output_path("o", spec, is_dir=os.path.isdir, **ctx)
    merge = bool(spec.get("merge"))
    stderr = submit_options.output_path("e", spec, is_dir=os.path.isdir, **ctx)
    stdin = submit_options.output_path("i", spec, **ctx)
    shell = submit_options.select_path(spec.get("shell") or [], host) or msg.get("queue_shell") or "/bin/sh"
    q = msg["queue"]
    tmpdir = os.path.join(msg.get("tmpdir") or "/tmp", f"{job_id}.{task_id}.{q}")
    nslots = msg.get("slots", 1)
    env: dict[str, str] = {}
    env.update({k: (v if v is not None else "") for k, v in (spec.get("env") or {}).items()})
    o_env = spec.get("o_env") or {}
    env.update({k: v for k, v in o_env.items() if v is not None})
    path_env = env.get("PATH") or DEFAULT_PATH
    env.update(
        {
            "HOME": home,
            "USER": user,
            "LOGNAME": user,
            "SHELL": shell,
            "PATH": path_env,
            "ARC": ARCH,
            "SGE_ARCH": ARCH,
            "ENVIRONMENT": "BATCH",
            "HOSTNAME": host,
            "JOB_ID": str(job_id),
            "JOB_NAME": name,
            "REQUEST": name,
            "QUEUE": q,
            "RESTARTED": str(msg.get("restarted", 0)),
            "NSLOTS": str(nslots),
            "NHOSTS": str(msg.get("nhosts", 1)),
            "NQUEUES": str(msg.get("nqueues", 1)),
            "SGE_ROOT": cell.root,
            "SGE_CELL": cell.name,
            "SGE_ACCOUNT": spec.get("account") or "sge",
            "SGE_BINARY_PATH": os.path.dirname(sys.executable),
            "SGE_JOB_SPOOL_DIR": job_dir,
            "SGE_STDOUT_PATH": stdout,
            "SGE_STDERR_PATH": stderr,
            "SGE_STDIN_PATH": stdin,
            "SGE_CWD_PATH": cwd,
            "TMPDIR": tmpdir,
            "TMP": tmpdir,
        }
    )
    if array:
        env.update(
            SGE_TASK_ID=str(task_id), SGE_TASK_FIRST=str(array[0]), SGE_TASK_LAST=str(array[1]), SGE_TASK_STEPSIZE=str(array[2])
        )
    else:
        env.update(SGE_TASK_ID="undefined", SGE_TASK_FIRST="undefined", SGE_TASK_LAST="undefined", SGE_TASK_STEPSIZE="undefined")
    if msg.get("pe"):
        env["PE"] = msg["pe"]
        env["PE_HOSTFILE"] = os.path.join(job_dir, "pe_hostfile")
    if spec.get("binary"):
        env["JOB_SCRIPT"] = spec["command"]
    else:
        env["JOB_SCRIPT"] = msg["script_file"]
    pe_out = pe_output_path("o", spec, cwd, is_dir=os.path.isdir, **ctx) if msg.get("pe") else None
    pe_err = pe_output_path("e", spec, cwd, is_dir=os.path.isdir, **ctx) if msg.get("pe") else None
    owner = {"uid": msg["uid"], "gid": msg["gid"]}
    variables = procedure_variables(msg, host, cell, job_dir, name=name, task=task, stdin=stdin,
                                    stdout=stdout, stderr=stderr, merge=merge)
    # sge_pe(5): $stdout_path/$stderr_path of the PE procedures are their own files
    pe_variables = dict(variables, stdout_path=pe_out, stderr_path=pe_err)
    procedures = {
        step: resolve_procedure(p, owner)
        for step, p in (msg.get("procedures") or {}).items() if p
    }
    return {
        "job_id": job_id,
        "task_id": task_id,
        "uid": msg["uid"],
        "gid": msg["gid"],
        "cwd": cwd,
        "stdout_path": stdout,
        "stderr_path": stderr,
        "stdin_path": stdin,
        "merge": merge,
        "shell": shell,
        "shell_start_mode": msg.get("shell_start_mode", "posix_compliant"),
        "binary": bool(spec.get("binary")),
        "noshell": bool(spec.get("no_shell")),
        "command": spec.get("command"),
        "args": spec.get("args") or [],
        "script_file": msg.get("script_file"),
        "env": env,
        "tmpdir": tmpdir,
        "pe_hostfile": msg.get("pe_hostfile"),
        "pe": msg.get("pe"),
        "pe_stdout_path": pe_out,
        "pe_stderr_path": pe_err,
        "procedures": procedures,
        "variables": variables,
        "pe_variables": pe_variables,
        "forbid_reschedule": bool(msg.get("forbid_reschedule")),
        "forbid_apperror": bool(msg.get("forbid_apperror")),
        "starter_method": msg.get("starter_method"),
        "priority": msg.get("priority"),
        "login_shells": msg.get("login_shells") or [],
    }


def pe_output_path(kind: str, spec: dict, workdir: str, *, is_dir, job_id: int, task_id: int | None,
                   user: str, home: str, hostname: str) -> str:
    """Where the PE start/stop procedures write (sge_pe(5), exec_job.c): the
    job's -o/-e path when it names a file, else ``REQUEST.poJID`` /
    ``REQUEST.peJID`` in that directory or the working directory."""
    key = "stdout_path" if kind == "o" else "stderr_path"
    chosen = submit_options.select_path(spec.get(key) or [], hostname)
    name = submit_options.default_output_name("p" + kind, spec["job_name"], job_id, task_id)
    if not chosen:
        return workdir.rstrip("/") + "/" + name
    path = submit_options.expand_path(chosen, job_id=job_id, task_id=task_id, job_name=spec["job_name"],
                                      user=user, home=home, hostname=hostname)
    if not path.startswith("/"):
        path = workdir.rstrip("/") + "/" + path
    return path.rstrip("/") + "/" + name if is_dir(path) else path


def procedure_variables(msg: dict, host: str, cell: Cell, job_dir: str, *, name: str, task: int | None,
                        stdin: str, stdout: str, stderr: str, merge: bool) -> dict:
    """The values of the special variables of procedure command lines
    (sge_conf(5) prolog, sge_pe(5) start_proc_args): as Grid Engine 8.1.9
    gives them, e.g. ``$ja_task_id`` 0 for a job that is no array and
    ``$processors`` the queue's value (``UNDEFINED`` by default)."""
    values = {
        "host": host,
        "job_owner": msg["owner"],
        "job_id": str(msg["job_id"]),
        "job_name": name,
        "queue": msg["queue"],
        "processors": msg.get("processors") or "UNDEFINED",
        "sge_cell": cell.name,
        "sge_root": cell.root,
        "stdin_path": stdin,
        "stdout_path": stdout,
        "stderr_path": stderr,
        "merge_stderr": "1" if merge else "0",
        "ja_task_id": str(task or 0),
    }
    for stream in ("stdin", "stdout", "stderr"):  # no file staging in minisge
        values.update({f"fs_{stream}_host": "", f"fs_{stream}_path": "", f"fs_{stream}_tmp_path": "",
                       f"fs_{stream}_file_staging": "0"})
    if msg.get("pe"):
        values.update(pe=msg["pe"], pe_slots=str(msg.get("slots", 1)),
                      pe_hostfile=os.path.join(job_dir, "pe_hostfile"))
    return values


def resolve_procedure(proc: dict, owner: dict) -> dict:
    """A procedure's command with the ids it runs under: the ``user@``
    prefix's, or the job owner's (queue_conf(5) prolog)."""
    user = proc.get("user")
    out = {"command": proc["command"], "user": user}
    if not user:
        return dict(out, uid=owner["uid"], gid=owner["gid"])
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return dict(out, error=f'can\'t get password entry for user "{user}". Either the user does not exist or NIS error!')
    try:
        groups = os.getgrouplist(user, pw.pw_gid)
    except OSError:
        groups = [pw.pw_gid]
    return dict(out, uid=pw.pw_uid, gid=pw.pw_gid, groups=groups)


def read_results(job_dir: str) -> dict:
    """What the shepherd left: the report to send to the qmaster."""
    report: dict = {}
    try:
        with open(os.path.join(job_dir, "exit_status"), encoding="utf-8") as f:
            report["failed"] = int(f.read().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        report["failed"] = shepherd.ESSTATE_NO_EXITSTATUS
    try:
        with open(os.path.join(job_dir, "usage"), encoding="utf-8") as f:
            usage = shepherd.parse_usage(f.read())
        report["usage"] = usage
        report["exit_status"] = int(usage.get("exit_status", 0))
        report["signal"] = int(usage.get("signal", 0))
    except FileNotFoundError:
        report["usage"] = {}
    try:
        with open(os.path.join(job_dir, "error"), encoding="utf-8") as f:
            report["error"] = f.readline().strip()
    except FileNotFoundError:
        pass
    try:
        with open(os.path.join(job_dir, "limit"), encoding="utf-8") as f:
            report["limit"] = f.read().strip()
    except FileNotFoundError:
        pass
    return report


class Execd:
    def __init__(self, cell: Cell, host: str, report: Callable[[dict], Awaitable[None]]):
        self.cell = cell
        self.host = host
        self.report = report  # sends a message to the qmaster
        self.spool = cell.execd_spool(host)
        self.active = os.path.join(self.spool, "active_jobs")
        self.running: dict[tuple[int, int], dict] = {}  # (job, task) -> {"job_pid", "dir"}
        self.nursery: trio.Nursery | None = None
        from minisge.pe_task_execd import ExecdPeTasks

        self.pe_tasks = ExecdPeTasks(self)  # qrsh -inherit's slave tasks

    def job_dir(self, job_id: int, task_id: int) -> str:
        return os.path.join(self.active, f"{job_id}.{task_id}")

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        os.makedirs(self.active, exist_ok=True)
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self.recover()
            nursery.start_soon(self.report_load)
            task_status.started()
            await trio.sleep_forever()

    async def report_load(self, interval: float = 10.0) -> None:
        """Send the host's load values now and every ``interval`` seconds;
        sge_conf(5) load_sensor programs add to them or replace them."""
        from minisge.load import read_load_values

        sensors = LoadSensors(self.cell.common, self.host)
        try:
            while True:
                try:
                    values = read_load_values(ARCH)
                except OSError:
                    values = {}
                try:
                    values.update(await sensors.read())
                except Exception:  # a broken sensor costs its values, never the execd
                    log.exception("load sensors failed")
                await self.report({"op": "load", "host": self.host, "values": values})
                await trio.sleep(interval)
        finally:
            with trio.CancelScope(shield=True):
                await sensors.aclose()

    # ------------------------------------------------------------ requests
    async def handle(self, msg: dict) -> None:
        op = msg.get("op")
        if op == "start":
            try:
                self.start(msg)
            except Exception as e:  # the task could not be set up: say so, never die
                log.exception("cannot start task %s.%s", msg.get("job_id"), msg.get("task_id"))
                key = (msg.get("job_id"), msg.get("task_id"))
                self.running.pop(key, None)
                await self.report({"op": "task_end", "job_id": key[0], "task_id": key[1], "host": self.host,
                                   "failed": 3, "error": f"can't set up the job on {self.host}: {e}", "usage": {}})
        elif op == "signal":
            self.signal(msg["job_id"], msg["task_id"], msg.get("signal", "KILL"))
        elif op in ("suspend", "resume", "terminate"):
            await execd_control.handle(self, msg)
        elif op in ("pe_task_start", "pe_task_kill", "pe_task_suspend", "pe_task_resume"):
            await self.pe_tasks.handle(msg)
        elif op == "ack_end":
            if (msg["job_id"], msg["task_id"]) in self.running:
                return  # the ack of an earlier run of a re-queued task: this run is another
            d = self.job_dir(msg["job_id"], msg["task_id"])
            shutil.rmtree(d, ignore_errors=True)

    def start(self, msg: dict) -> None:
        key = (msg["job_id"], msg["task_id"])
        if key in self.running:
            return
        d = self.job_dir(*key)
        if os.path.exists(os.path.join(d, "exit_status")):
            # an earlier run of a re-queued task (exit 99, a failed prolog) whose
            # end the qmaster has recorded but not yet acknowledged
            shutil.rmtree(d, ignore_errors=True)
        elif os.path.exists(os.path.join(d, "config")):
            return  # already started once (a repeated start message)
        os.makedirs(d, exist_ok=True)
        cfg = build_task_config(msg, self.host, self.cell, d)
        os.makedirs(cfg["tmpdir"], exist_ok=True)
        if os.getuid() == 0:
            os.chown(cfg["tmpdir"], cfg["uid"], cfg["gid"])
        if msg.get("pe_hostfile"):
            with open(os.path.join(d, "pe_hostfile"), "w", encoding="utf-8") as f:
                f.write(msg["pe_hostfile"])
        # queue_conf(5) RESOURCE LIMITS: the shepherd sets them, the execd checks the sums
        cfg.update(limits=msg.get("limits") or {}, host_slots=msg.get("host_slots") or 1,
                   consumable_job=msg.get("consumable_job") or [])
        with open(os.path.join(d, "config"), "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        pid = os.fork()
        if pid == 0:  # the shepherd
            shepherd.run(d)
        entry = {"pid": pid, "dir": d, "h_rt": msg.get("h_rt"), "tmpdir": cfg["tmpdir"], "started": time.monotonic(),
                 "limits": cfg["limits"], "host_slots": cfg["host_slots"]}
        self.running[key] = entry
        assert self.nursery is not None
        self.nursery.start_soon(self.watch, key, pid, True)

    def finished_unacked(self):
        """Tasks whose shepherd has ended but whose end the qmaster has not acknowledged."""
        for name in sorted(os.listdir(self.active)):
            try:
                key = tuple(int(x) for x in name.split("."))
            except ValueError:
                continue
            if key not in self.running and os.path.exists(os.path.join(self.active, name, "exit_status")):
                yield key

    def recover(self) -> None:
        """Pick up the tasks a previous execd left in ``active_jobs``."""
        for name in sorted(os.listdir(self.active)):
            try:
                job_id, task_id = (int(x) for x in name.split("."))
            except ValueError:
                continue
            d = os.path.join(self.active, name)
            key = (job_id, task_id)
            pid = _read_int(os.path.join(d, "pid"))
            self.running[key] = {"pid": pid, "dir": d, "h_rt": None, "tmpdir": None, "started": time.monotonic(),
                                 **_limits_of(d)}
            assert self.nursery is not None
            self.nursery.start_soon(self.watch, key, pid, False)

    async def watch(self, key: tuple[int, int], pid: int | None, own_child: bool) -> None:
        entry = self.running[key]
        d = entry["dir"]
        shepherd_signalled = False
        if pid and not os.path.exists(os.path.join(d, "exit_status")):
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                fd = None
            if fd is not None:
                try:
                    await self.enforce_limits(key, entry, pid, fd)
                finally:
                    os.close(fd)
            if own_child:
                try:
                    shepherd_signalled = os.WIFSIGNALED(os.waitpid(pid, 0)[1])
                except ChildProcessError:
                    pass
        if not os.path.exists(os.path.join(d, "exit_status")):
            # the shepherd is gone without its end marker (killed, or its host went
            # down and the execd restarted): failed 17 "through signal" when it was
            # seen to die by one, else 19 "before writing exit_status" (reaper_execd.c);
            # written down, so the end is reported at the next connection too
            lost = 17 if shepherd_signalled else shepherd.ESSTATE_NO_EXITSTATUS
            shepherd.write_marker(os.path.join(d, "exit_status"), f"{lost}\n")
        report = read_results(d)
        if report.get("usage") and entry.get("usage") is not None:
            report["usage"].update(entry["usage"].fields())  # the PDC's cpu, mem, io, maxvmem
        report.update(op="task_end", job_id=key[0], task_id=key[1], host=self.host)
        if entry.get("tmpdir"):
            shutil.rmtree(entry["tmpdir"], ignore_errors=True)
        self.running.pop(key, None)
        await self.report(report)

    async def enforce_limits(self, key: tuple[int, int], entry: dict, pid: int, fd: int) -> None:
        """Wait until the job's shepherd ends, applying the limits the execd
        watches (:func:`watch_limits`): SIGKILL through :meth:`signal` (so a
        kill sent before the job's pid is known is not lost), a warning to
        the job's process group."""
        def apply(action: limits.Action) -> None:
            # a warning the job may catch is not noted: it does not stop the job from starting
            signal_dir(entry["dir"], getattr(signal, f"SIG{action.signal}"), note=action.signal == "KILL")

        await watch_limits(entry, pid, fd, f"job {key[0]}.{key[1]}", apply)

    def signal(self, job_id: int, task_id: int, sig: str) -> None:
        """Signal the job's process group.  The ``signal`` file is written
        first and the shepherd reads it after it has written ``job_pid``, so
        a signal sent before the job's pid is known is not lost."""
        signal_dir(self.job_dir(job_id, task_id), getattr(signal, f"SIG{sig}", signal.SIGKILL))


def _limits_of(job_dir: str) -> dict:
    """The limits and host slots of a task an earlier execd started (its
    config), and when it started (its ``pid`` file), for the wall clock."""
    try:
        with open(os.path.join(job_dir, "config"), encoding="utf-8") as f:
            cfg = json.load(f)
        out = {"limits": cfg.get("limits") or {}, "host_slots": cfg.get("host_slots") or 1}
        age = max(0.0, time.time() - os.stat(os.path.join(job_dir, "pid")).st_mtime)
        return dict(out, started=time.monotonic() - age)
    except (OSError, ValueError):
        return {}


async def watch_limits(entry: dict, pid: int, fd: int, what: str, apply: Callable[[limits.Action], None]) -> None:
    """Wait until a shepherd ends (``fd`` its pidfd); meanwhile, every PDC
    interval, sample its processes (:mod:`minisge.usage`, kept in
    ``entry["usage"]`` for the accounting record) and apply the limits the
    execd watches (queue_conf(5) RESOURCE LIMITS, execd_ck_to_do.c;
    :mod:`minisge.limits`): h_rt SIGKILL, s_rt SIGUSR1 then SIGKILL after
    ``notify``, the summed CPU and vmem against h_/s_cpu and h_/s_vmem ×
    slots.  A kill is noted in the ``limit`` file (accounting's failed 37)
    before ``apply`` sends it; the same loop serves jobs and PE tasks."""
    lim = dict(entry.get("limits") or {})
    if entry.get("h_rt") is not None:
        lim["h_rt"] = min(lim.get("h_rt", limits.INF), float(entry["h_rt"]))
    totals = limits.job_totals(lim, entry.get("host_slots") or 1)
    sampled = entry["usage"] = usage.JobUsage()
    last_rt: float | None = None
    killed = False
    while True:
        with trio.move_on_after(PDC_INTERVAL):
            await trio.lowlevel.wait_readable(fd)
            return
        sampled.sample(usage.read_processes({pid}).get(pid, ()))
        if killed:
            continue
        elapsed = time.monotonic() - entry["started"]
        action = limits.wallclock_action(lim, elapsed, last_rt)
        if action is not None:
            last_rt = elapsed
        else:
            action = limits.check_usage(totals, sampled.cpu, sampled.vmem)
        if action is None:
            continue
        log.warning("%s exceeds %s: SIG%s", what, action.limit, action.signal)
        if action.signal == "KILL":
            killed = True
            shepherd.write_file(os.path.join(entry["dir"], "limit"), f"{action.limit}\n")
        apply(action)


def signal_dir(d: str, signum: int, note: bool = True) -> None:
    """Signal the process group of the job (or PE task) whose shepherd
    works in ``d``.  With ``note`` the ``signal`` file is written first: the
    shepherd reads it once it has written ``job_pid``, so a signal sent
    before the pid is known is not lost (a warning such as s_rt's SIGUSR1
    is not noted)."""
    if not os.path.isdir(d):
        return
    if note:
        shepherd.write_file(os.path.join(d, "signal"), f"{int(signum)}\n")
    job_pid = _read_int(os.path.join(d, "job_pid"))
    if job_pid:
        try:
            os.killpg(job_pid, signum)
        except ProcessLookupError:
            pass


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (FileNotFoundError, ValueError):
        return None
