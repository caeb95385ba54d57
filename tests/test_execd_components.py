"""The execd's components, each on its own with real processes and real
task directories: the exit-code rules the shepherd and the execd apply
(sge_shepherd(8), queue_conf(5)), the data collector that enforces limits
(queue_conf(5) RESOURCE LIMITS), job control with a notify time
(queue_conf(5) notify, submit(1) -notify), the task directory files."""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from minisge.cell import Cell
from minisge.execd import task_dir
from minisge.execd.execd import Execd, empty_dir, recycle_dirs, spare_task_dirs, task_key
from minisge.execd.job_control import ExecdJobControl
from minisge.execd.limit_watch import LimitWatch
from minisge.execd.task_dir import SPARES, TASK_DIR_MODE
from minisge.rules import exit_codes

# ------------------------------------------------------------ the shepherd's states


@pytest.mark.parametrize("name,before,failed", [("prolog", 7, 8), ("pe_start", 9, 10), ("pe_stop", 12, 13),
                                                ("epilog", 14, 15)])
def test_each_procedure_has_its_states(name: str, before: int, failed: int) -> None:
    assert exit_codes.PROCEDURE_STATES[name] == (before, failed)
    assert exit_codes.procedure_state(name, 1) == failed


@pytest.mark.parametrize("name", ["prolog", "pe_start", "pe_stop", "epilog"])
def test_99_and_100_of_a_procedure_reschedule_and_error_whatever_is_forbidden(name: str) -> None:
    assert exit_codes.procedure_state(name, 99) == exit_codes.SSTATE_AGAIN == 25
    assert exit_codes.procedure_state(name, 100) == exit_codes.SSTATE_APPERROR == 30


def test_the_jobs_99_and_100_are_failures_unless_forbidden() -> None:
    assert exit_codes.job_state(99, False, False) == 25
    assert exit_codes.job_state(100, False, False) == 30
    assert exit_codes.job_state(99, True, False) == 0
    assert exit_codes.job_state(100, False, True) == 0
    assert exit_codes.job_state(1, False, False) == 0


def test_a_signal_is_128_plus_its_number_in_the_exit_status() -> None:
    assert exit_codes.exit_status(3, 0) == 3
    assert exit_codes.exit_status(0, 9) == 137


def test_the_message_names_the_procedure_or_the_job_start() -> None:
    assert exit_codes.exit_status_message("prolog", 1) == "exit_status of prolog = 1"
    assert exit_codes.exit_status_message(exit_codes.JOB_START, 100) == "exit_status of job start = 100"


def test_a_lost_shepherd_is_17_when_seen_to_die_by_a_signal_else_19() -> None:
    assert exit_codes.lost_shepherd_state(True) == exit_codes.ESSTATE_DIED_THRU_SIGNAL == 17
    assert exit_codes.lost_shepherd_state(False) == exit_codes.ESSTATE_NO_EXITSTATUS == 19


def test_a_lost_run_is_requeued_only_when_rerunnable_and_not_deleted() -> None:
    lost = exit_codes.job_outcome({"failed": 17}, False, False)
    assert not lost.requeue
    assert exit_codes.rerun_outcome(lost, rerunnable=True, deleted=False).requeue
    assert not exit_codes.rerun_outcome(lost, rerunnable=True, deleted=True).requeue
    done = exit_codes.job_outcome({"exit_status": 1}, False, False)
    assert not exit_codes.rerun_outcome(done, rerunnable=True, deleted=False).requeue


def test_usage_counts_unless_the_run_failed_before_the_job() -> None:
    assert exit_codes.usage_valid(0) and exit_codes.usage_valid(13) and exit_codes.usage_valid(100)
    assert not exit_codes.usage_valid(8) and not exit_codes.usage_valid(11)


def test_runs_requeued_by_a_prolog_pe_start_or_epilog_are_accounted_without_times() -> None:
    assert [f for f in range(40) if exit_codes.accounted_without_times(f)] == [7, 8, 10, 14, 15]


# ------------------------------------------------------------ the task directory
def test_a_task_directory_name_is_job_dot_task() -> None:
    assert task_key("5.1") == (5, 1)
    assert task_key("5") is None and task_key("x.1") is None and task_key("5.1.2") is None


def test_a_shepherd_gone_without_exit_status_is_reported_lost_and_written_down(tmp_path: Path) -> None:
    d = str(tmp_path)
    report = task_dir.end_report(d, died_through_signal=True)
    assert report["failed"] == 17
    assert task_dir.has_ended(d)  # reported again with the same state after a reconnect
    assert task_dir.read_results(d)["failed"] == 17


def test_an_end_report_names_the_run_it_ends(tmp_path: Path) -> None:
    # the start message's dispatch time, kept in the task's config, comes back in its end
    # report: the qmaster tells a late report of an earlier run of the task by it
    d = str(tmp_path)
    task_dir.write_config(d, {"job_id": 5, "dispatched": 1795406291.25})
    assert task_dir.end_report(d, died_through_signal=False)["dispatched"] == 1795406291.25


def test_signal_names_are_numbers_unknown_ones_kill() -> None:
    assert task_dir.signal_number("USR1") == signal.SIGUSR1
    assert task_dir.signal_number("NOSUCH") == signal.SIGKILL


# ------------------------------------------------------------ the data collector
async def eventually(cond: Callable[[], bool]) -> None:
    """Wait (generously bounded) until ``cond()`` holds."""
    with trio.fail_after(30):
        while True:
            if cond():
                return
            await trio.sleep(0.01)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _state(pid: int) -> str:
    """The state letter of /proc/PID/stat (T: stopped, Z: ended)."""
    return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0]


async def _session_child(script: str, ready: str | None = None) -> trio.Process:
    """A ``sh -c script`` in a session of its own, as a shepherd's job is
    (its processes are the session's); with ``ready``, once it has created
    that file."""
    proc = await trio.lowlevel.open_process(["/bin/sh", "-c", script], start_new_session=True)
    if ready is not None:
        await eventually(lambda: os.path.exists(ready))
    return proc


async def _end(proc: trio.Process) -> None:
    """Kill the child's whole session (its process group): a ``sleep``
    the job's suspend stopped would outlive the shell, stopped for good."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    await proc.wait()


async def test_the_watch_kills_at_h_rt_notes_the_limit_and_reports_the_signal(tmp_path: Path) -> None:
    child = await _session_child("sleep 60 & wait")
    d = str(tmp_path)
    task_dir.write_file(os.path.join(d, "job_pid"), f"{child.pid}\n")  # the shell leads the job's group
    watch = LimitWatch(interval=0.05)
    task = task_dir.RunningTask(d, child.pid, limits={"h_rt": 0.2})
    async with trio.open_nursery() as nursery:
        await nursery.start(watch.run)
        with trio.fail_after(30):
            sampled, _ = await watch.follow(task, "job 1.1", reap=False)
        nursery.cancel_scope.cancel()
    assert await child.wait() == -signal.SIGKILL
    assert _read(os.path.join(d, "limit")) == "h_rt\n"
    assert _read(os.path.join(d, "signal")) == f"{int(signal.SIGKILL)}\n"
    assert sampled is not None and not watch.watched


async def test_one_pass_samples_every_watched_task(tmp_path: Path) -> None:
    children = [await _session_child("sleep 60 & wait") for _ in range(3)]
    tasks = [task_dir.RunningTask(str(tmp_path), c.pid) for c in children]
    for i, t in enumerate(tasks):
        t.dir = str(tmp_path / str(i))
    watch = LimitWatch(interval=3600)  # sampled by hand below

    async def each_sleep_seen() -> bool:
        await watch.sample()
        return len(watch.watched) == 3 and all(w.usage.vmem > 0 for w in watch.watched.values())

    try:
        async with trio.open_nursery() as nursery:
            for t in tasks:
                nursery.start_soon(watch.follow, t, t.dir, False)
            with trio.fail_after(30):
                while True:
                    if await each_sleep_seen():
                        break
                    await trio.sleep(0.01)
            for c in children:
                c.kill()
    finally:
        for c in children:
            await _end(c)
    assert not watch.watched


# ------------------------------------------------------------ job control
def ignores_usr1(ready: str) -> str:
    """A job that ignores SIGUSR1, the warning before a suspend (submit(1)
    -notify), and says when it does."""
    return f"trap '' USR1; : > {ready}; sleep 60 & wait"


async def test_a_resume_within_the_notify_time_cancels_the_pending_suspend(tmp_path: Path) -> None:
    child = await _session_child(ignores_usr1(str(tmp_path / "ready")), ready=str(tmp_path / "ready"))
    os.makedirs(tmp_path / "5.1")
    task_dir.write_file(str(tmp_path / "5.1" / "job_pid"), f"{child.pid}\n")
    jc = ExecdJobControl(lambda j, t: str(tmp_path / f"{j}.{t}"))
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(jc.run)
            jc.handle({"op": "suspend", "job_id": 5, "task_id": 1, "method": {"signal": int(signal.SIGSTOP)},
                       "notify": 3600, "notify_signal": int(signal.SIGUSR1)})
            pending = jc.tasks[(5, 1)].pending
            assert pending is not None and _state(child.pid) in "RS"  # warned, not stopped yet
            jc.handle({"op": "resume", "job_id": 5, "task_id": 1, "method": {"signal": int(signal.SIGCONT)},
                       "notify": 0})
            await eventually(lambda: pending.cancelled_caught)  # the timer has ended without stopping the job
            assert jc.tasks[(5, 1)].pending is None and not jc.tasks[(5, 1)].stopped
            assert _state(child.pid) in "RS"
            nursery.cancel_scope.cancel()
    finally:
        await _end(child)


async def test_a_suspend_after_its_notify_time_stops_the_job(tmp_path: Path) -> None:
    child = await _session_child(ignores_usr1(str(tmp_path / "ready")), ready=str(tmp_path / "ready"))
    os.makedirs(tmp_path / "5.1")
    task_dir.write_file(str(tmp_path / "5.1" / "job_pid"), f"{child.pid}\n")
    jc = ExecdJobControl(lambda j, t: str(tmp_path / f"{j}.{t}"))
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(jc.run)
            jc.handle({"op": "suspend", "job_id": 5, "task_id": 1, "method": {"signal": int(signal.SIGSTOP)},
                       "notify": 0.1, "notify_signal": int(signal.SIGUSR1)})
            await eventually(lambda: _state(child.pid) == "T")
            assert jc.tasks[(5, 1)].stopped and jc.tasks[(5, 1)].pending is None
            jc.forget((5, 1))
            assert (5, 1) not in jc.tasks
            nursery.cancel_scope.cancel()
    finally:
        await _end(child)


def test_an_acknowledged_tasks_directory_leaves_active_jobs_at_once_and_is_deleted_later(tmp_path: Path) -> None:
    async def report(msg: dict[str, object]) -> None:
        pass

    execd = Execd(Cell(str(tmp_path / "root")), "h1", report)
    os.makedirs(execd.active)
    os.makedirs(execd.removing)
    d = execd.job_dir(5, 1)
    os.makedirs(d)
    for name in ("config", "pid", "usage", "exit_status"):
        Path(d, name).write_text("x")
    execd.remove_dir(d)
    assert os.listdir(execd.active) == []  # the name is free for a re-run of the task
    assert len(os.listdir(execd.removing)) == 1
    execd.remove_dir(d)  # a repeated acknowledgement: nothing there any more
    empty_dir(execd.removing)
    assert os.listdir(execd.removing) == []


def test_acknowledged_task_directories_are_recycled_for_new_tasks(tmp_path: Path) -> None:
    async def report(msg: dict[str, object]) -> None:
        pass

    execd = Execd(Cell(str(tmp_path / "root")), "h1", report)
    for path in (execd.active, execd.removing, execd.spare_root):
        os.makedirs(path)
    for task in (1, 2, 3):
        d = execd.job_dir(5, task)
        os.makedirs(d)
        for name in ("config", "pid", "usage", "exit_status"):
            Path(d, name).write_text("x")
        execd.remove_dir(d)
    # room for two: the third is deleted
    execd.spare_dirs = recycle_dirs(execd.removing, execd.spare_root, 2, os.listdir(execd.removing))
    assert len(execd.spare_dirs) == 2 and os.listdir(execd.removing) == []
    spare = os.path.join(execd.spare_root, execd.spare_dirs[-1])
    inode = os.stat(spare).st_ino
    d = execd.job_dir(6, 1)
    execd.make_task_dir(d)
    assert os.stat(d).st_ino == inode and not os.path.exists(spare)
    assert sorted(os.listdir(d)) == sorted(SPARES[name] for name in ("config", "pid", "usage", "exit_status"))
    with pytest.raises(FileExistsError):  # never over a directory that is there
        execd.make_task_dir(d)
    assert len(execd.spare_dirs) == 1


def test_spare_task_directories_get_the_task_directory_mode_at_the_start_and_keep_it(tmp_path: Path) -> None:
    """A task that takes a spare directory keeps its mode (no chmod a task):
    the spares an earlier execd left get TASK_DIR_MODE when the execd starts;
    what is no directory there is left out, a link not followed."""
    async def report(msg: dict[str, object]) -> None:
        pass

    execd = Execd(Cell(str(tmp_path / "root")), "h1", report)
    for path in (execd.active, execd.spare_root):
        os.makedirs(path)
    os.mkdir(os.path.join(execd.spare_root, "5.1-1"))
    os.chmod(os.path.join(execd.spare_root, "5.1-1"), 0o755)  # as an older execd or an admin left it
    Path(execd.spare_root, "planted").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    os.chmod(outside, 0o755)
    os.symlink(outside, os.path.join(execd.spare_root, "link"))
    execd.spare_dirs = spare_task_dirs(execd.spare_root)
    assert execd.spare_dirs == ["5.1-1"]
    assert stat.S_IMODE(os.stat(os.path.join(execd.spare_root, "5.1-1")).st_mode) == TASK_DIR_MODE
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o755
    d = execd.job_dir(6, 1)
    assert execd.make_task_dir(d) is True and stat.S_IMODE(os.stat(d).st_mode) == TASK_DIR_MODE
    assert execd.make_task_dir(execd.job_dir(6, 2)) is False  # no spare left: made (start() sets its mode)


def test_a_tasks_config_carries_what_procedures_read_only_when_it_has_procedures(tmp_path: Path) -> None:
    """build_task_config: sge_env and pe_variables (a third of the config
    written at every start) only for a task with a prolog, epilog or PE
    procedure; the job's environment and the variables always."""
    from qmaster_harness import small_qmaster

    from minisge.execd.shepherd_config import build_task_config
    from minisge.qmaster.outbox import ExecdLink

    class Taker(ExecdLink):
        def __init__(self) -> None:
            self.host = "h1"
            self.sent: list[dict[str, object]] = []

        async def send(self, msg: dict[str, object]) -> None:
            self.sent.append(msg)

    qm = small_qmaster(tmp_path / "root")
    taker = Taker()
    qm.execds["h1"] = taker
    qm.config.register_execd("h1")
    req = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}
    job_id = qm.submit(dict(req, array=[1, 2, 1]), 0, 0)["job_id"]

    async def start_all() -> None:
        for job, task in qm.flush(qm.schedule()):
            await qm.start_task(job, task)

    trio.run(start_all)
    starts = [m for m in taker.sent if m["op"] == "start" and m["job_id"] == job_id]
    assert len(starts) == 2
    without = build_task_config(starts[0], "h1", qm.cell, str(tmp_path / "d"))
    assert "sge_env" not in without and "pe_variables" not in without
    assert without["env"]["JOB_ID"] == str(job_id) and without["variables"]["job_id"] == str(job_id)
    prolog = dict(starts[1], procedures={"prolog": {"command": "/bin/true", "user": None}})
    with_prolog = build_task_config(prolog, "h1", qm.cell, str(tmp_path / "d"))
    assert with_prolog["sge_env"]["JOB_ID"] == str(job_id) and set(with_prolog["sge_env"]) <= set(with_prolog["env"])
    assert with_prolog["pe_variables"]["job_id"] == str(job_id)
