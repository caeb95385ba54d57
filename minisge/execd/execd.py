"""The execution daemon: starts the shepherds of dispatched tasks and reports their end.

Each task gets a directory ``active_jobs/<job>.<task>/`` in the execd spool
holding the shepherd's ``config`` and, afterwards, its result files (see
:mod:`minisge.execd.task_dir`).  The execd asks its shepherd launcher for
the shepherd (:mod:`minisge.execd.launcher_link`: a small process of its
own forks it, so a shepherd holds nothing of the daemon), waits for it
through a pidfd, reads the results and reports them to the qmaster; only
when the qmaster has recorded the end does the directory go.  After a
restart, directories left behind are picked up again: finished ones are
reported, live shepherds are waited for, and a task whose shepherd was
never started (the daemon died between its directory and the fork: no
``pid`` file, which a recovering execd claims as the launcher does) is
dropped, so that the qmaster puts it back to pending (``reconcile_host``).

One task's trouble with its files (a full disk, say) is logged and costs
that task's report a retry, never the daemon.

An acknowledged task's directory is renamed into ``removing/`` beside
``active_jobs/`` (one rename, at once: the name is free for a re-run of the
task) and dealt with there (:meth:`Execd.remove_acked`), many at a time,
a few in each turn of the daemon's loop: up to ``MAX_SPARE_DIRS`` of them are
recycled (:func:`minisge.execd.task_dir.recycle`: their files kept as
spares, to be written over) and renamed into ``spare_dirs/``, whence the next tasks
take their directories (a rename instead of a new directory and five new
files); the others are deleted.  What a crash left in ``removing/`` is
deleted at the next start; ``spare_dirs/`` holds only whole spare ones.

The execd's components are made with it and run in its nursery
(:meth:`Execd.run`): the job control (:mod:`minisge.execd.job_control`), the
PE tasks (:mod:`minisge.execd.pe_tasks`), the data collector that enforces
the limits (:mod:`minisge.execd.limit_watch`) and the load sensors
(:mod:`minisge.execd.load_sensor`).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

import trio

from minisge.cell import Cell
from minisge.execd import mail as execd_mail
from minisge.execd import shepherd_plan
from minisge.execd.execd_params import ExecdParams
from minisge.execd.job_control import ExecdJobControl
from minisge.execd.launcher import spawn_shepherd
from minisge.execd.launcher_link import LauncherError, ShepherdLauncher, TaskClaimed
from minisge.execd.limit_watch import LimitWatch
from minisge.execd.load import LoadReader, read_cores
from minisge.execd.load_sensor import LoadSensors
from minisge.execd.pe_tasks import ExecdPeTasks
from minisge.execd.shepherd_config import build_task_config
from minisge.execd.task_dir import (
    PID_FILE,
    TASK_DIR_MODE,
    RunningTask,
    TaskKey,
    claim,
    end_report,
    end_report_written,
    has_ended,
    is_kept,
    keep,
    read_config,
    read_int,
    recovered_task,
    recycle,
    secure_spool,
    signal_dir,
    signal_number,
    write_config,
)
from minisge.execd.tmpdir import SpareTmpdirs, make_tmpdir, remove_tmpdir, use_tmpdir
from minisge.mailer import send as send_mail
from minisge.rules import core_binding, exit_codes
from minisge.rules.core_binding import processors

log = logging.getLogger("minisge.execd")

LOAD_REPORT_INTERVAL = 10.0  # seconds between two load reports (sge_conf(5) load_report_time)
PID_WAIT = 5.0  # seconds a claimed task's shepherd has to write its pid into the ``pid`` file
REMOVAL_GATHER = 0.2  # seconds the acknowledged task directories gather before they are recycled
RECYCLE_TURN = 16  # acknowledged task directories recycled in one turn of the loop
MAX_SPARE_DIRS = 256  # recycled task directories kept for new tasks (spare_dirs/)
RETRY_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)  # a task's end that could not be read or reported: next tries

# TEST HOOK (integration tests only): with MINISGE_TEST_CRASH_BEFORE_SHEPHERD=N in
# its environment, the execd kills itself (SIGKILL) when it is about to ask for
# the shepherd of the N-th task it starts: its directory and config are written,
# no shepherd was forked.  Without the variable it does nothing.
CRASH_HOOK = "MINISGE_TEST_CRASH_BEFORE_SHEPHERD"


async def wait_for_pid(task_dir: str) -> int | None:
    """The pid a shepherd writes into the ``pid`` file the launcher made
    before forking it (a file: polled); None if none comes within PID_WAIT."""
    path = os.path.join(task_dir, PID_FILE)
    for _ in range(int(PID_WAIT / 0.01)):
        pid = read_int(path)
        if pid is not None:
            return pid
        await trio.sleep(0.01)
    return read_int(path)

def remove_empty_dir(path: str) -> bool:
    """Remove ``path`` if it is an empty directory (a TMPDIR the job left
    nothing in: no thread needed); False when it is not (or not gone)."""
    try:
        os.rmdir(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


Report = Callable[[dict[str, Any]], Awaitable[None]]


class Execd:
    def __init__(self, cell: Cell, host: str, report: Report):
        self.cell = cell
        self.host = host
        self.report = report  # sends a message to the qmaster
        self.spool = cell.execd_spool(host)
        self.active = os.path.join(self.spool, "active_jobs")
        self.removing = os.path.join(self.spool, "removing")  # acknowledged task directories, being deleted
        self.spare_root = os.path.join(self.spool, "spare_dirs")  # recycled task directories for new tasks
        self.spare_dirs: list[str] = []  # their names
        self.tmpdirs = SpareTmpdirs(os.path.join(self.spool, "old_tmpdirs"))  # ended tasks' TMPDIRs, for the next
        self.removals = 0  # directories moved into ``removing``: their unique names
        self.removal_due = trio.Event()  # set when ``removing`` has something
        self.running: dict[TaskKey, RunningTask] = {}
        self.configs: dict[TaskKey, dict[str, Any]] = {}  # the configs start wrote, until watch has them
        self.unwritten_ends: dict[TaskKey, dict[str, Any]] = {}  # ends whose marker a full disk kept off
        self.launcher = ShepherdLauncher()
        self.c_shepherd = shepherd_plan.binary()  # a batch task's shepherd, spawned here (None: the launcher's)
        self.shepherd_env = dict(os.environb)  # its environment: the daemon's, which never changes once started
        self.limit_watch = LimitWatch()
        self.job_control = ExecdJobControl(self.job_dir)
        self.pe_tasks = ExecdPeTasks(cell, host, self.spool, report, self.limit_watch, self.launcher,
                                     master_here=self.running.__contains__)  # qrsh -inherit's slave tasks
        self.load_sensors = LoadSensors(cell.common, host)
        self.load_reader = LoadReader()  # keeps the cpu counters between two reports
        self.cores = read_cores()  # qsub -binding takes from these
        self.params = ExecdParams(cell.common, host)  # sge_conf(5) execd_params
        self.nursery: trio.Nursery | None = None  # run's: the shepherds' watchers
        hook = os.environ.get(CRASH_HOOK, "")
        self.crash_at: int | None = int(hook) if hook.isdigit() else None  # CRASH_HOOK's N
        self.launches = 0  # shepherds asked for

    def job_dir(self, job_id: int, task_id: int) -> str:
        return os.path.join(self.active, f"{job_id}.{task_id}")

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        os.makedirs(self.active, exist_ok=True)
        os.makedirs(self.removing, mode=0o700, exist_ok=True)
        os.makedirs(self.spare_root, mode=0o700, exist_ok=True)
        self.tmpdirs.open()
        self.spare_dirs = spare_task_dirs(self.spare_root)
        secure_spool(self.spool)  # task directories written before with other modes
        self.params.current()  # says at once which execd_params have no effect
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            await nursery.start(self.launcher.run)
            await nursery.start(self.limit_watch.run)
            await nursery.start(self.job_control.run)
            await nursery.start(self.pe_tasks.run)
            await self.recover()
            nursery.start_soon(self.remove_acked)
            nursery.start_soon(self.report_load)
            task_status.started()

    async def report_load(self, interval: float = LOAD_REPORT_INTERVAL) -> None:
        """Send the host's load values now and every ``interval`` seconds;
        sge_conf(5) load_sensor programs add to them or replace them."""
        try:
            while True:
                try:
                    values = self.load_reader.read()  # a few small /proc files: no thread
                except OSError:
                    log.exception("cannot read the load values")
                    values = {}
                bound = self.bound_cpus()
                if bound and values:  # the cores -binding took, in lower case
                    values["m_topology_inuse"] = core_binding.topology_string(self.cores, bound)
                try:
                    values.update(await self.load_sensors.read())
                except Exception:  # a broken sensor costs its values, never the execd
                    log.exception("load sensors failed")
                await self.report({"op": "load", "host": self.host, "values": values,
                                   "usage": self.online_usage()})
                await trio.sleep(interval)
        finally:
            with trio.CancelScope(shield=True):
                await self.load_sensors.aclose()

    def online_usage(self) -> list[dict[str, Any]]:
        """The usage of the jobs running here as the data collector has it,
        sent with every load report (8.1.9's execd sends its job reports with
        the load report): qstat -j's ``usage`` lines, qstat -ext's columns."""
        out = []
        for (job_id, task_id), task in list(self.running.items()):
            usage = self.limit_watch.usage_of(task)
            if usage is not None:
                binding = {"binding": core_binding.topology_string(self.cores, task.cpus)} if task.cpus else {}
                out.append({"job_id": job_id, "task_id": task_id, **usage.online(), **binding})
        return out

    # ------------------------------------------------------------ requests
    async def handle(self, msg: Mapping[str, Any]) -> None:
        op = msg.get("op")
        if op == "start":
            try:
                task = self.start(msg)
            except Exception as e:  # the task could not be set up: say so, never die
                log.exception("cannot start task %s.%s", msg.get("job_id"), msg.get("task_id"))
                job_id, task_id = msg.get("job_id"), msg.get("task_id")
                if isinstance(job_id, int) and isinstance(task_id, int):
                    self.running.pop((job_id, task_id), None)
                    self.configs.pop((job_id, task_id), None)
                    self.drop_unstarted(self.job_dir(job_id, task_id))
                await self.report({"op": "task_end", "job_id": job_id, "task_id": task_id,
                                   "host": self.host, "failed": exit_codes.ESSTATE_NO_CONFIG,
                                   "error": f"can't set up the job on {self.host}: {e}", "usage": {}})
                return
            if task is not None:
                self.start_watch((msg["job_id"], msg["task_id"]), task, launch=True)
            return
        try:
            if op == "signal":
                self.signal(msg["job_id"], msg["task_id"], msg.get("signal", "KILL"))
            elif op in ("suspend", "resume", "terminate"):
                self.job_control.handle(msg)
            elif op in ("pe_task_start", "pe_task_kill", "pe_task_suspend", "pe_task_resume"):
                await self.pe_tasks.handle(msg)
            elif op == "ack_end":
                key = (msg["job_id"], msg["task_id"])
                self.unwritten_ends.pop(key, None)
                if key in self.running:
                    return  # the ack of an earlier run of a re-queued task: this run is another
                if self.params.keep_active:  # sge_conf(5) execd_params KEEP_ACTIVE
                    keep(self.job_dir(*key))
                else:
                    self.remove_dir(self.job_dir(*key))
        except OSError:  # one task's files (a full disk): logged, never the daemon's end
            log.exception("cannot handle %s of task %s.%s", op, msg.get("job_id"), msg.get("task_id"))

    def remove_dir(self, task_dir: str) -> None:
        """An acknowledged task's directory out of ``active_jobs`` at once (a
        rename into ``removing``), deleted later by :meth:`remove_acked`."""
        self.removals += 1
        try:
            os.rename(task_dir, os.path.join(self.removing, f"{os.path.basename(task_dir)}-{self.removals}"))
        except FileNotFoundError:
            return  # gone already (a repeated acknowledgement)
        except OSError:
            log.warning("cannot move %s into %s: deleted where it is", task_dir, self.removing)
            shutil.rmtree(task_dir, ignore_errors=True)
            return
        self.removal_due.set()

    async def remove_acked(self) -> None:
        """Recycle or delete what is in ``removing``: the acknowledged tasks'
        directories, all there is each time, RECYCLE_TURN at a time on the
        loop (the loop's other work goes on between two turns); what a crash
        left there is deleted (a worker thread, at the start)."""
        await trio.to_thread.run_sync(empty_dir, self.removing)
        while True:
            # the ended tasks' TMPDIRs set aside (:meth:`end_tmpdir`): one worker thread for those of a while
            self.tmpdirs.spares = await trio.to_thread.run_sync(self.tmpdirs.tidy)
            await self.removal_due.wait()
            await trio.sleep(REMOVAL_GATHER)  # the ends of a while dealt with together
            self.removal_due = trio.Event()
            try:
                names = os.listdir(self.removing)
            except OSError:
                continue
            for i in range(0, len(names), RECYCLE_TURN):
                room = MAX_SPARE_DIRS - len(self.spare_dirs)
                self.spare_dirs.extend(recycle_dirs(self.removing, self.spare_root, room, names[i:i + RECYCLE_TURN]))
                await trio.lowlevel.checkpoint()

    def make_task_dir(self, d: str) -> bool:
        """The task directory ``d``, new: a spare one renamed to it (True:
        its mode is TASK_DIR_MODE already, see :meth:`run`), else made
        (FileExistsError when ``d`` is there)."""
        while self.spare_dirs:
            if os.path.lexists(d):
                raise FileExistsError(d)
            try:
                os.rename(os.path.join(self.spare_root, self.spare_dirs.pop()), d)
                return True
            except FileNotFoundError:
                continue  # an admin removed it
        os.mkdir(d, TASK_DIR_MODE)
        return False

    def start(self, msg: Mapping[str, Any]) -> RunningTask | None:
        """Set a task up: its directory, config, TMPDIR (in that order: a
        crash leaves nothing a recovery cannot undo).  None when it is known
        already (a repeated start message)."""
        key: TaskKey = (msg["job_id"], msg["task_id"])
        if key in self.running:
            return None
        d = self.job_dir(*key)
        recycled = False
        try:
            recycled = self.make_task_dir(d)  # the usual case: a new directory, nothing of an earlier run in it
        except FileExistsError:
            if has_ended(d):
                # an earlier run of a re-queued task (exit 99, a failed prolog) whose
                # end the qmaster has recorded but not yet acknowledged
                shutil.rmtree(d, ignore_errors=True)
                self.unwritten_ends.pop(key, None)
            elif os.path.exists(os.path.join(d, "config")):
                return None  # already started once (a repeated start message)
            os.makedirs(d, exist_ok=True)
        except FileNotFoundError:  # active_jobs itself is gone
            os.makedirs(d, exist_ok=True)
        if not recycled:  # the config in it holds the job's environment (whatever the umask)
            os.chmod(d, TASK_DIR_MODE)
        cfg = build_task_config(msg, self.host, self.cell, d)
        hostfile = msg.get("pe_hostfile")
        cores = self.bind(cfg, msg["spec"].get("binding"))
        if cores and hostfile and cfg["binding"]["mode"] == "pe":  # the cores go to the PE's start procedure
            hostfile = core_binding.pe_hostfile_with_cores(hostfile, self.host, cores)
        if hostfile:
            with open(os.path.join(d, "pe_hostfile"), "w", encoding="utf-8") as f:
                f.write(hostfile)
        # queue_conf(5) RESOURCE LIMITS: the shepherd sets them, the execd checks the sums
        cfg.update(limits=msg.get("limits") or {}, host_slots=msg.get("host_slots") or 1,
                   consumable_job=msg.get("consumable_job") or [], h_rt=msg.get("h_rt"))
        made, moved_aside = make_tmpdir(cfg["tmpdir"], cfg["uid"], cfg["gid"], self.tmpdirs.take(cfg["uid"]))
        for moved, removed in moved_aside:
            log.warning("job %d.%d: %s was in the way of its TMPDIR: moved to %s%s", key[0], key[1], cfg["tmpdir"],
                        moved, ", then removed" if removed else "")
        if made != cfg["tmpdir"]:
            log.warning("job %d.%d: %s is another user's and may not be moved: TMPDIR %s", key[0], key[1],
                        cfg["tmpdir"], made)
            use_tmpdir(cfg, made)
        write_config(d, cfg)
        self.configs[key] = cfg  # for its watch: not read back from disk
        task = RunningTask(d, None, limits=cfg["limits"], host_slots=cfg["host_slots"], h_rt=msg.get("h_rt"),
                           tmpdir=cfg["tmpdir"], job_id=key[0], cpus=tuple(processors(cores or [])))
        self.running[key] = task
        return task

    def bound_cpus(self) -> set[int]:
        """The processors running tasks took with -binding."""
        return {p for t in self.running.values() for p in t.cpus}

    def bind(self, cfg: dict[str, Any], spec: str | None) -> list[core_binding.Core] | None:
        """qsub(1) -binding: the cores of this host the task takes, none that
        a running task holds (None: no binding asked, or no such cores free:
        it runs unbound, as in 8.1.9).  ``cfg`` gets ``binding`` (mode and
        processors: the shepherd binds in mode ``set``) and ``SGE_BINDING``."""
        binding = core_binding.parse(spec)
        if binding is None:
            return None
        cores = core_binding.select_cores(binding, self.cores, self.bound_cpus())
        if not cores:
            log.info("job %s: no cores free for -binding %s: it runs unbound", cfg.get("job_id"), spec)
            return None
        cfg["binding"] = {"mode": binding.mode, "cpus": processors(cores)}
        if binding.mode in ("set", "env"):
            cfg["env"]["SGE_BINDING"] = core_binding.sge_binding(cores)
        return cores

    def drop_unstarted(self, task_dir: str) -> None:
        """Remove what was set up for a task whose shepherd never started:
        its TMPDIR (named in its config) and its directory."""
        try:
            tmpdir = read_config(task_dir).get("tmpdir")
        except (OSError, ValueError):
            tmpdir = None
        if tmpdir:
            remove_tmpdir(tmpdir)
        shutil.rmtree(task_dir, ignore_errors=True)

    def start_watch(self, key: TaskKey, task: RunningTask, launch: bool) -> None:
        assert self.nursery is not None, "Execd.run has not started"
        self.nursery.start_soon(self.watch, key, task, launch)

    def finished_unacked(self) -> Iterator[TaskKey]:
        """Tasks whose shepherd has ended but whose end the qmaster has not acknowledged."""
        for name in sorted(os.listdir(self.active)):
            key = task_key(name)
            d = os.path.join(self.active, name)
            if key is not None and key not in self.running and key not in self.unwritten_ends \
                    and has_ended(d) and not is_kept(d):
                yield key
        yield from sorted(self.unwritten_ends)

    def unacked_reports(self) -> list[dict[str, Any]]:
        """The end reports of the tasks in :meth:`finished_unacked` (sent
        again when the qmaster is reached again)."""
        out = []
        for key in self.finished_unacked():
            report = self.unwritten_ends.get(key)
            if report is None:
                try:
                    report = end_report(self.job_dir(*key), False)
                except OSError:
                    log.exception("cannot read the end of task %d.%d: reported later", *key)
                    continue
                report.update(op="task_end", job_id=key[0], task_id=key[1], host=self.host)
            out.append(report)
        return out

    async def recover(self) -> None:
        """Pick up the tasks a previous execd left in ``active_jobs``: ended
        ones are reported, running ones followed; one whose shepherd never
        started is claimed and dropped, so the qmaster re-queues it."""
        for name in sorted(os.listdir(self.active)):
            key = task_key(name)
            if key is None:
                continue
            d = os.path.join(self.active, name)
            if is_kept(d):  # KEEP_ACTIVE: its end is recorded already
                continue
            if not has_ended(d):
                if claim(d):
                    log.warning("task %s was never started: dropped, to be started again", name)
                    self.drop_unstarted(d)
                    continue
                await wait_for_pid(d)  # claimed by a launcher: its shepherd writes its pid at once
            task = recovered_task(d)
            self.running[key] = task
            self.start_watch(key, task, launch=False)

    def spawn_c_shepherd(self, key: TaskKey, task: RunningTask, cfg: dict[str, Any]) -> bool:
        """Start the C shepherd of a batch task, the execd's own child
        (posix_spawn: nothing of the daemon is copied, and the shepherd
        closes every descriptor it was not given); the shepherd claims the
        task's ``pid`` file itself, so that this execd killed before the
        spawn leaves the task unclaimed (a recovering execd starts it
        again), and killed after it, a shepherd that runs it.  False when
        the launcher is to start the task's shepherd instead (no C
        shepherd, an interactive job, or it could not be started: said once
        in the log)."""
        binary = self.c_shepherd
        plan = None if binary is None else shepherd_plan.plan(task.dir, cfg)
        if binary is None or plan is None:
            return False
        try:
            task.pid = spawn_shepherd(binary, key[0], None, plan, (), self.shepherd_env)
        except OSError as e:
            log.error("cannot start the C shepherd %s (%s): the launcher starts the shepherds", binary, e)
            self.c_shepherd = None
            return False
        task.spawned = True
        return True

    async def launch(self, key: TaskKey, task: RunningTask, cfg: dict[str, Any] | None = None) -> bool:
        """Start the task's shepherd: the C one spawned here, else the
        launcher's; False when none was started (then its end is reported:
        failed 2, to be re-queued)."""
        self.launches += 1
        if self.launches == self.crash_at:  # CRASH_HOOK: tests of the crash window only
            os.kill(os.getpid(), signal.SIGKILL)
        if cfg is not None and self.spawn_c_shepherd(key, task, cfg):
            return True
        try:
            task.pid = await self.launcher.fork(task.dir, key[0])
            return True
        except TaskClaimed:
            pass  # forked by an earlier launcher meanwhile: followed as a recovered task
        except LauncherError as e:
            if claim(task.dir):  # surely not started: say so, it goes back to pending
                log.error("no shepherd for job %d.%d: %s", key[0], key[1], e)
                self.drop_unstarted(task.dir)
                self.running.pop(key, None)
                await self.report_end(key, {"op": "task_end", "job_id": key[0], "task_id": key[1],
                                            "host": self.host, "failed": exit_codes.ESSTATE_NO_SHEPHERD,
                                            "error": f"can't start the shepherd on {self.host}: {e}", "usage": {}})
                return False
        task.pid = await wait_for_pid(task.dir)  # its launcher died after the fork: the shepherd runs
        return True

    async def watch(self, key: TaskKey, task: RunningTask, launch: bool) -> None:
        """Start the task's shepherd (``launch``), follow it to its end
        (applying the limits the execd watches), then report the end to the
        qmaster; trouble with the task's files is retried, never raised."""
        cfg = self.configs.pop(key, None)
        if launch and not await self.launch(key, task, cfg):
            return
        if cfg is None:  # a recovered task's
            cfg = self.task_config(task.dir)
        if launch:
            self.send_mails(cfg, execd_mail.start_mails(cfg, self.host))
        sampled, died_through_signal = None, False
        if task.spawned:  # its own child: followed to its end and reaped, ended or not
            sampled, died_through_signal = await self.limit_watch.follow(task, f"job {key[0]}.{key[1]}", reap=True)
        elif not has_ended(task.dir):
            sampled, _ = await self.limit_watch.follow(task, f"job {key[0]}.{key[1]}", reap=False)
        if launch and task.pid is not None and not task.spawned:  # the launcher saw how it ended
            status = await self.launcher.exit_status(task.pid)
            died_through_signal = status is not None and os.WIFSIGNALED(status)
        report, written = await self.read_end(key, task.dir, died_through_signal, cfg or None)
        if report.get("usage") and sampled is not None:
            report["usage"].update(sampled.fields())  # the PDC's cpu, mem, io, maxvmem
        report.update(op="task_end", job_id=key[0], task_id=key[1], host=self.host)
        if not written:
            log.error("job %d.%d: its end (failed %s) cannot be written down: kept in memory", *key,
                      report.get("failed"))
            self.unwritten_ends[key] = report
        if task.tmpdir:
            await self.end_tmpdir(task.tmpdir)
        self.running.pop(key, None)
        self.job_control.forget(key)
        self.send_mails(cfg, execd_mail.end_mails(cfg, report, self.host))
        await self.report_end(key, report)

    async def end_tmpdir(self, tmpdir: str) -> None:
        """An ended task's TMPDIR gone from its place before its end is
        reported, as 8.1.9 removes it: set aside into ``old_tmpdirs``, a
        spare for its owner's next task or deleted there later
        (:class:`minisge.execd.tmpdir.SpareTmpdirs`), else (another file
        system) removed where it is, in a thread when the job left files in
        it."""
        if self.tmpdirs.set_aside(tmpdir):
            self.removal_due.set()
        elif not remove_empty_dir(tmpdir):
            await trio.to_thread.run_sync(remove_tmpdir, tmpdir)

    @staticmethod
    def task_config(task_dir: str) -> dict[str, Any]:
        """A task's config as the execd wrote it ({} when it cannot be read)."""
        try:
            return read_config(task_dir)
        except (OSError, ValueError):
            return {}

    def send_mails(self, cfg: Mapping[str, Any], mails: list[tuple[str, str, str]]) -> None:
        """qsub -m: each (subject, body, recipient) sent by the task config's
        mailer (sge_conf(5) mailer), in the execd's nursery."""
        assert self.nursery is not None, "Execd.run has not started"
        mailer = (cfg.get("mail") or {}).get("mailer") or "/bin/mail"
        for subject, body, recipient in mails:
            self.nursery.start_soon(send_mail, mailer, subject, body, recipient)

    async def report_end(self, key: TaskKey, report: dict[str, Any]) -> None:
        """Report a task's end; tried again later while that fails."""
        for delay in retry_delays():
            try:
                await self.report(report)
                return
            except OSError:
                log.exception("cannot report the end of job %d.%d: tried again in %.0f s", *key, delay)
                await trio.sleep(delay)

    async def read_end(self, key: TaskKey, task_dir: str, died_through_signal: bool,
                       config: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool]:
        """The task's end report and whether its end marker is on disk
        (:func:`minisge.execd.task_dir.end_report_written`), read again
        later while its files cannot be read."""
        for delay in retry_delays():
            try:
                return end_report_written(task_dir, died_through_signal, config)
            except OSError:
                log.exception("cannot read the end of job %d.%d: tried again in %.0f s", *key, delay)
                await trio.sleep(delay)
        raise AssertionError("retry_delays never ends")

    def signal(self, job_id: int, task_id: int, sig: str) -> None:
        """Signal the job's process group.  The ``signal`` file is written
        first and the shepherd reads it after it has written ``job_pid``, so
        a signal sent before the job's pid is known is not lost."""
        signal_dir(self.job_dir(job_id, task_id), signal_number(sig))


def retry_delays() -> Iterator[float]:
    """The waits between the tries of something that failed for a task:
    RETRY_DELAYS, then its last one for ever."""
    yield from RETRY_DELAYS
    while True:
        yield RETRY_DELAYS[-1]


def recycle_dirs(removing: str, spare_root: str, room: int, names: Iterable[str]) -> list[str]:
    """Recycle up to ``room`` of the task directories ``names`` in
    ``removing`` into ``spare_root`` (:func:`minisge.execd.task_dir.recycle`);
    delete the others.  The names of the spare ones made.  Plain calls, on
    the loop: a few file operations each, and in a worker thread they would
    cost more (~0.1 ms a task on two cores), as the thread and the loop
    take the interpreter's lock from each other at each of them."""
    made: list[str] = []
    for name in names:
        path = os.path.join(removing, name)
        if len(made) < room:
            try:
                if recycle(path):
                    os.rename(path, os.path.join(spare_root, name))
                    made.append(name)
                    continue
            except OSError:
                pass  # deleted instead
        shutil.rmtree(path, ignore_errors=True)
    return made


def spare_task_dirs(spare_root: str) -> list[str]:
    """The recycled task directories an earlier execd left in ``spare_root``,
    each given TASK_DIR_MODE now (a task that takes one keeps its mode:
    :meth:`Execd.make_task_dir`); one that cannot be is left out."""
    names = []
    for name in os.listdir(spare_root):
        try:
            fd = os.open(os.path.join(spare_root, name), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # no directory (recycle_dirs puts only directories there)
        try:
            os.fchmod(fd, TASK_DIR_MODE)
        except OSError:
            continue
        finally:
            os.close(fd)
        names.append(name)
    return names


def empty_dir(path: str) -> None:
    """Delete everything in the directory ``path`` (what cannot be is left)."""
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        shutil.rmtree(os.path.join(path, name), ignore_errors=True)


def task_key(name: str) -> TaskKey | None:
    """``5.1`` → (5, 1); None for a name that is no task's directory."""
    job, dot, task = name.partition(".")
    if not dot or not job.isdigit() or not task.isdigit():
        return None
    return int(job), int(task)
