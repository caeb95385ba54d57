"""The execd's safety rules and helpers on their own: the environment of a
procedure run as another user, the TMPDIR made through descriptors, the
result files reserved at the shepherd's start, the end marker that says
the job's exit status, the claim of a task's ``pid`` file, and the
launcher's lean import (the daemons' side: tests/integration/test_execd_safety_cmd.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from minisge.execd import task_dir
from minisge.execd.tmpdir import SpareTmpdirs, discard, make_tmpdir, use_tmpdir
from minisge.rules.procedure_environment import (
    DEFAULT_PATH,
    grid_engine_variables,
    procedure_environment,
    runs_as_another_user,
)

# ---------------------------------------------------------------- rules


def test_a_procedure_of_another_user_gets_grid_engines_variables_with_the_default_path() -> None:
    job_env = {"PATH": "/home/u/bin:/bin", "BASH_ENV": "/home/u/evil", "JOB_ID": "5", "TMPDIR": "/tmp/5.1.q"}
    ge = {"PATH": "/home/u/bin:/bin", "JOB_ID": "5", "TMPDIR": "/tmp/5.1.q", "TMP": "/tmp/5.1.q"}
    assert procedure_environment(job_env, ge, as_another_user=True) == {
        "PATH": DEFAULT_PATH, "JOB_ID": "5", "TMP": "/tmp/5.1.q"}
    assert procedure_environment(job_env, ge, as_another_user=False) == job_env


def test_grid_engines_variables_are_the_execds_and_qsubs_sge_o_ones_only() -> None:
    o_env = {"SGE_O_WORKDIR": "/w", "SGE_O_PATH": "/bin", "LD_PRELOAD": "/x.so", "SGE_O_MAIL": None}
    assert grid_engine_variables({"JOB_ID": "5"}, o_env) == {"SGE_O_WORKDIR": "/w", "SGE_O_PATH": "/bin",
                                                           "JOB_ID": "5"}


def test_another_user_is_any_uid_but_the_owners() -> None:
    assert runs_as_another_user(0, 1001) and runs_as_another_user(1002, 1001)
    assert not runs_as_another_user(1001, 1001)


# ---------------------------------------------------------------- TMPDIR


def test_a_new_tmpdir_is_a_fresh_directory_of_mode_0755(tmp_path: Path) -> None:
    path = str(tmp_path / "5.1.all.q")
    assert make_tmpdir(path, os.getuid(), os.getgid()) == (path, [])
    st = os.lstat(path)
    assert (st.st_mode & 0o7777, st.st_uid) == (0o755, os.getuid())


@pytest.mark.parametrize("kind", ["link", "file", "link to nowhere", "directory with a link in it"])
def test_whatever_is_in_the_tmpdirs_way_is_moved_aside_unfollowed_and_removed(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("root's\n")
    target.chmod(0o700)
    path = tmp_path / "5.1.all.q"
    if kind == "link":
        path.symlink_to(target)
    elif kind == "file":
        path.write_text("in the way\n")
    elif kind == "link to nowhere":
        path.symlink_to(tmp_path / "nowhere")
    else:  # another user's stale TMPDIR whose job left a link to another directory in it
        if os.getuid() != 0:
            pytest.skip("chown needs root")
        (path / "sub").mkdir(parents=True)
        (path / "sub" / "f").write_text("left\n")
        (path / "sub" / "to-target").symlink_to(target)
        os.chown(path, 4242, 4242)
    owner = 4343 if kind.startswith("directory") else os.getuid()
    made, moved = make_tmpdir(str(path), owner, owner)
    assert made == str(path)
    assert len(moved) == 1 and moved[0][0].startswith(str(path) + ".moved-") and moved[0][1], moved
    assert os.path.isdir(path) and not os.path.islink(path) and os.listdir(path) == []
    assert not os.path.lexists(moved[0][0])  # removed: no .moved-* entry piles up
    assert sorted(os.listdir(tmp_path)) == ["5.1.all.q", "target"]
    # never followed: the target's mode and content as they were
    assert target.stat().st_mode & 0o7777 == 0o700 and (target / "keep").read_text() == "root's\n"


def test_an_ended_tmpdir_is_set_aside_and_made_a_spare_or_removed_following_no_link(tmp_path: Path) -> None:
    target = tmp_path / "target"  # a directory of root's a job's link points to
    target.mkdir()
    (target / "keep").write_text("root's\n")
    tmpdirs = SpareTmpdirs(str(tmp_path / "old_tmpdirs"))
    tmpdirs.open()
    empty, full = tmp_path / "5.1.all.q", tmp_path / "5.2.all.q"
    empty.mkdir(mode=0o755)
    (full / "sub").mkdir(parents=True)
    (full / "sub" / "f").write_text("left\n")
    (full / "to-target").symlink_to(target)
    assert tmpdirs.set_aside(str(empty)) and tmpdirs.set_aside(str(full))
    assert not empty.exists() and not full.exists()  # gone from their place at once
    # what was put in a TMPDIR's place is left alone: a link (never followed), a file; nothing there: nothing done
    link, planted = tmp_path / "5.3.all.q", tmp_path / "5.4.all.q"
    link.symlink_to(target)
    planted.write_text("in the way\n")
    for path in (link, planted, tmp_path / "5.5.all.q"):
        assert not tmpdirs.set_aside(str(path))
    assert link.is_symlink() and planted.read_text() == "in the way\n"
    os.symlink(target, os.path.join(tmpdirs.dir, "99"))  # a link swapped in between the check and the rename
    tmpdirs.spares = tmpdirs.tidy()
    # the empty one is a spare of its owner's (mode 0700 meanwhile), the others removed, no link followed
    assert list(tmpdirs.spares) == [os.getuid()] and len(tmpdirs.spares[os.getuid()]) == 1
    assert os.listdir(tmpdirs.dir) == tmpdirs.spares[os.getuid()]
    assert os.stat(os.path.join(tmpdirs.dir, tmpdirs.spares[os.getuid()][0])).st_mode & 0o7777 == 0o700
    assert sorted(os.listdir(target)) == ["keep"] and (target / "keep").read_text() == "root's\n"
    # the next task's TMPDIR is that spare, its mode 0755; a spare goes to its own owner alone
    assert tmpdirs.take(os.getuid() + 1) is None
    spare = tmpdirs.take(os.getuid())
    assert spare is not None and tmpdirs.take(os.getuid()) is None
    inode = os.stat(spare).st_ino
    path = str(tmp_path / "6.1.all.q")
    assert make_tmpdir(path, os.getuid(), os.getgid(), spare) == (path, [])
    st = os.lstat(path)
    assert (st.st_ino, st.st_mode & 0o7777, st.st_uid) == (inode, 0o755, os.getuid()) and os.listdir(path) == []
    assert os.listdir(tmpdirs.dir) == []
    # one made a spare again after a restart is found again
    assert tmpdirs.set_aside(path)
    tmpdirs.tidy()
    assert SpareTmpdirs(tmpdirs.dir).tidy() == {os.getuid(): os.listdir(tmpdirs.dir)}


def one_spare_tmpdir(tmp_path: Path) -> SpareTmpdirs:
    """Spare TMPDIRs in ``tmp_path``: one of this user's, an ended task's (5.1.all.q) set aside and tidied."""
    tmpdirs = SpareTmpdirs(str(tmp_path / "old_tmpdirs"))
    tmpdirs.open()
    (tmp_path / "5.1.all.q").mkdir()
    assert tmpdirs.set_aside(str(tmp_path / "5.1.all.q"))
    tmpdirs.spares = tmpdirs.tidy()
    return tmpdirs


def test_a_spare_tmpdir_is_not_renamed_over_what_is_at_the_path(tmp_path: Path) -> None:
    tmpdirs = one_spare_tmpdir(tmp_path)
    path = tmp_path / "6.1.all.q"
    path.mkdir()  # the job owner's own, made before (a PE task's TMPDIR joining its job's): used as it is
    (path / "theirs").write_text("x\n")
    spare = tmpdirs.take(os.getuid())
    assert spare is not None
    assert make_tmpdir(str(path), os.getuid(), os.getgid(), spare) == (str(path), [])
    assert os.listdir(path) == ["theirs"] and os.path.isdir(spare)  # the spare is still there


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another group needs root")
def test_a_spare_tmpdir_of_another_group_is_given_the_tasks_group(tmp_path: Path) -> None:
    tmpdirs = one_spare_tmpdir(tmp_path)
    for gid in (54321, os.getgid()):  # another group (its owner's job of another -g), then the same again
        spare = tmpdirs.take(os.getuid())
        assert spare is not None
        path = str(tmp_path / f"6.{gid}.all.q")
        assert make_tmpdir(path, os.getuid(), gid, spare) == (path, [])
        st = os.lstat(path)
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (os.getuid(), gid, 0o755)
        assert tmpdirs.set_aside(path)
        tmpdirs.spares = tmpdirs.tidy()


def test_a_tmpdir_on_another_file_system_is_not_set_aside(tmp_path: Path) -> None:
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    tmpdirs = SpareTmpdirs(str(tmp_path / "old_tmpdirs"))
    tmpdirs.open()
    path = tempfile.mkdtemp(dir="/dev/shm")
    try:
        assert not tmpdirs.set_aside(path)  # EXDEV: the caller removes it where it is
        assert os.path.isdir(path) and os.listdir(tmpdirs.dir) == []
    finally:
        os.rmdir(path)


def test_an_entry_moved_aside_that_is_swapped_for_a_link_is_not_followed(tmp_path: Path) -> None:
    # its owner may rename it in a sticky /tmp, and put a link to a directory of root's in its place
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("root's\n")
    (tmp_path / "aside").symlink_to(target)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert discard("aside", fd)
    finally:
        os.close(fd)
    assert not os.path.lexists(tmp_path / "aside") and (target / "keep").read_text() == "root's\n"


@pytest.mark.skipif(os.getuid() != 0, reason="chown needs root")
def test_a_directory_of_another_user_is_moved_aside_one_of_the_owners_is_kept(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "5.1.all.q", tmp_path / "6.1.all.q"
    for d in (theirs, ours):
        d.mkdir()
    os.chown(theirs, 4242, 4242)
    os.chown(ours, 4343, 4343)
    made, moved = make_tmpdir(str(theirs), 4343, 4343)
    assert made == str(theirs) and len(moved) == 1 and os.stat(theirs).st_uid == 4343
    assert make_tmpdir(str(ours), 4343, 4343) == (str(ours), [])  # a PE task joining its job, an earlier run's


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a test user's execd")
def test_a_non_root_execd_takes_a_fresh_name_when_another_users_dir_may_not_be_moved() -> None:
    # a user's own cell: its execd is not root and /tmp is sticky; a directory another user left
    # at the path stopped every job 1 of all.q (found by the README's first line in CI)
    sticky = Path(tempfile.mkdtemp(prefix="sticky-", dir="/tmp"))  # pytest's tmp_path is root's alone
    sticky.chmod(0o1777)
    theirs = sticky / "1.1.all.q"
    theirs.mkdir()
    os.chown(theirs, 4242, 4242)
    pid = os.fork()
    if pid == 0:  # the execd of user 4343
        code = 1
        try:
            os.setgid(4343)
            os.setuid(4343)
            made, moved = make_tmpdir(str(theirs), 4343, 4343)
            st = os.lstat(made)
            ok = (made.startswith(str(theirs) + ".") and moved == [] and st.st_uid == 4343
                  and stat.S_ISDIR(st.st_mode) and os.stat(theirs).st_uid == 4242)
            code = 0 if ok else 2
        finally:
            os._exit(code)
    status = os.waitpid(pid, 0)[1]
    shutil.rmtree(sticky)
    assert status == 0
    cfg = {"tmpdir": str(theirs), "env": {"TMPDIR": str(theirs), "TMP": str(theirs), "HOME": "/h"},
           "sge_env": {"TMPDIR": str(theirs)}}
    use_tmpdir(cfg, "/tmp/x")
    assert cfg == {"tmpdir": "/tmp/x", "env": {"TMPDIR": "/tmp/x", "TMP": "/tmp/x", "HOME": "/h"},
                   "sge_env": {"TMPDIR": "/tmp/x"}}


# ---------------------------------------------------------------- the task's files


def test_a_reserved_file_appears_whole_at_its_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "usage")
    f = task_dir.ReservedFile(path, 4096)
    assert os.path.getsize(path + ".tmp") == 4096 and not os.path.exists(path)
    f.commit("exit_status=3\n")
    assert Path(path).read_text() == "exit_status=3\n" and not os.path.exists(path + ".tmp")
    big = task_dir.ReservedFile(path, 4)
    big.commit("longer than its room\n")
    assert Path(path).read_text() == "longer than its room\n"


def test_the_end_marker_alone_says_the_jobs_exit_status(tmp_path: Path) -> None:
    d = str(tmp_path)
    task_dir.write_marker(os.path.join(d, "exit_status"), task_dir.end_marker(0, {"exit_status": 3, "signal": 0}))
    report = task_dir.read_results(d)  # no usage file: a full disk kept it off
    assert (report["failed"], report["exit_status"], report["signal"]) == (0, 3, 0)
    assert task_dir.end_marker(7, None) == "7\n"


def test_a_lost_state_that_cannot_be_written_is_in_the_report_alone(tmp_path: Path) -> None:
    d = tmp_path / "gone"  # no directory to write in: as a full disk
    report = task_dir.end_report(str(d), died_through_signal=True)
    assert report["failed"] == 17 and not task_dir.has_ended(str(d))
    assert task_dir.end_report_written(str(d), died_through_signal=True) == (report, False)


def test_the_end_report_says_whether_its_marker_is_on_disk_as_has_ended_would(tmp_path: Path) -> None:
    """end_report_written: read (the shepherd wrote it), written (a lost
    shepherd's state), or neither (above): what has_ended says after it."""
    ended, lost = str(tmp_path / "ended"), str(tmp_path / "lost")
    os.mkdir(ended)
    os.mkdir(lost)
    task_dir.write_marker(os.path.join(ended, "exit_status"), task_dir.end_marker(0, {"exit_status": 4, "signal": 0}))
    report, written = task_dir.end_report_written(ended, died_through_signal=False)
    assert written and task_dir.has_ended(ended) and (report["failed"], report["exit_status"]) == (0, 4)
    report, written = task_dir.end_report_written(lost, died_through_signal=False)
    assert written and task_dir.has_ended(lost)
    assert report == task_dir.read_results(lost) and report["failed"] != 0


def test_a_tasks_pid_file_is_claimed_once(tmp_path: Path) -> None:
    assert task_dir.claim(str(tmp_path))
    assert not task_dir.claim(str(tmp_path))


def _ended_task_dir(d: Path) -> None:
    d.mkdir()
    # longer than what the next task writes: nothing of it may be left after the new content
    for name, text in (("config", '{"job_id": 5, "env": {}}'), ("pid", "5555\n"), ("job_pid", "66666\n"),
                       ("usage", "exit_status=0\nsignal=0\n"), ("exit_status", "100 137 9\n"), ("error", "x\n"),
                       ("pe_hostfile", "h 1\n")):
        (d / name).write_text(text)


def test_a_recycled_task_directory_holds_its_spares_alone_the_pid_one_blank(tmp_path: Path) -> None:
    """Each spare keeps its inode and its blocks (no discard for the disk);
    the pid file's is cut to a blank: a ``pid`` without a number is a claim
    not yet written."""
    d = tmp_path / "5.1"
    _ended_task_dir(d)
    before = {name: os.stat(d / name) for name in task_dir.SPARES}
    assert task_dir.recycle(str(d))
    assert sorted(os.listdir(d)) == sorted(task_dir.SPARE_NAMES)
    for name, spare in task_dir.SPARES.items():
        st = os.stat(d / spare)
        assert (st.st_ino, st.st_size, st.st_blocks) == (
            before[name].st_ino, len(task_dir.NO_PID) if name == "pid" else before[name].st_size,
            before[name].st_blocks)
    assert (d / task_dir.SPARES["pid"]).read_bytes() == task_dir.NO_PID
    assert task_dir.read_int(str(d / task_dir.SPARES["pid"])) is None
    # a second name (a crash between the pid file's link and its spare's unlink) is not kept
    os.link(d / task_dir.SPARES["pid"], d / "pid")
    assert task_dir.recycle(str(d))
    assert "pid" not in os.listdir(d)
    assert task_dir.SPARES["pid"] not in os.listdir(d)
    (d / "sub").mkdir()  # a directory in it: deleted whole by the caller
    assert not task_dir.recycle(str(d))


def test_a_recycled_directorys_files_are_its_spares_and_appear_whole(tmp_path: Path) -> None:
    d = tmp_path / "5.1"
    _ended_task_dir(d)
    assert task_dir.recycle(str(d))
    spares = {name: os.stat(d / spare).st_ino for name, spare in task_dir.SPARES.items()}
    task_dir.write_config(str(d), {"job_id": 6})
    fd = task_dir.create_pid_file(str(d))
    assert os.read(os.open(d / "pid", os.O_RDONLY), 8) == task_dir.NO_PID  # claimed: no number yet
    task_dir.write_pid(fd, b"42\n")
    os.close(fd)
    with pytest.raises(FileExistsError):  # claimed once, spare or not
        task_dir.create_pid_file(str(d))
    assert not task_dir.claim(str(d))
    task_dir.write_file(str(d / "job_pid"), "43\n")
    usage = task_dir.ReservedFile(str(d / "usage"), 4096)
    marker = task_dir.ReservedFile(str(d / "exit_status"), 64)
    assert os.path.getsize(d / task_dir.SPARES["usage"]) == 4096 and not (d / "usage").exists()
    usage.commit("exit_status=3\n")
    marker.commit("0 3 0\n")
    assert sorted(os.listdir(d)) == sorted(task_dir.SPARES)  # no spare left, no .tmp
    assert {name: os.stat(d / name).st_ino for name in task_dir.SPARES} == spares
    assert task_dir.read_config(str(d)) == {"job_id": 6} and os.stat(d / "config").st_mode & 0o777 == 0o600
    assert task_dir.read_int(str(d / "pid")) == 42 and task_dir.read_int(str(d / "job_pid")) == 43
    # each file holds what was written into its spare, no byte of the old content after it
    assert (d / "job_pid").read_text() == "43\n" and (d / "pid").read_text() == "42\n"
    assert (d / "usage").read_text() == "exit_status=3\n" and (d / "exit_status").read_text() == "0 3 0\n"
    report = task_dir.read_results(str(d))
    assert (report["failed"], report["exit_status"]) == (0, 3)


def test_a_recovered_task_has_its_tmpdir_and_h_rt_from_its_config(tmp_path: Path) -> None:
    d = str(tmp_path)
    task_dir.write_config(d, {"job_id": 5, "tmpdir": "/tmp/5.1.all.q", "h_rt": 60, "limits": {"s_cpu": 5}})
    task_dir.write_file(os.path.join(d, "pid"), "4242\n")
    task = task_dir.recovered_task(d)
    assert (task.pid, task.tmpdir, task.h_rt, task.limits, task.job_id) == (4242, "/tmp/5.1.all.q", 60,
                                                                           {"s_cpu": 5}, 5)
    assert json.loads(Path(d, "config").read_text())["tmpdir"] == "/tmp/5.1.all.q"


# ---------------------------------------------------------------- the launcher


def test_the_launcher_loads_no_trio_nor_the_daemons() -> None:
    probe = ("import sys, json, minisge.execd.launcher; "
             "print(json.dumps(sorted(m for m in sys.modules if m == 'trio' or m.startswith("
             "('minisge.qmaster', 'minisge.daemon', 'minisge.protocol', 'minisge.scheduler')))))")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == []


def test_the_launcher_loads_neither_attrs_nor_the_formats_parsers() -> None:
    """Every page of the launcher is copied by each shepherd's fork (and counted
    in the job's ru_maxrss): what it does not need stays out (ctypes too: the
    shepherd's title is written through proc(5))."""
    probe = ("import sys, json, minisge.execd.launcher; "
             "print(json.dumps(sorted(m for m in sys.modules if m in ('attr', 'attrs', 'cattrs', 'inspect', 'ctypes') "
             "or m in ('minisge.formats.sge_conf', 'minisge.formats.sge_pe', 'minisge.formats.access_list'))))")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == []


def launcher_on(tmp_path: Path, cfg: dict[str, object] | None) -> tuple[object, str]:
    """A launcher (its control socket unused) and a task directory holding ``cfg`` as its config."""
    import socket

    from minisge.execd.launcher import Launcher

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.close()
    d = tmp_path / "1.1"
    d.mkdir()
    if cfg is not None:
        (d / "config").write_text(json.dumps(cfg))
    return Launcher(theirs), str(d)


def batch_config(tmp_path: Path, **more: object) -> dict[str, object]:
    return {"job_id": 1, "task_id": 1, "uid": os.getuid(), "gid": os.getgid(), "cwd": str(tmp_path),
            "stdout_path": "/dev/null", "stderr_path": "/dev/null", "stdin_path": "/dev/null", "merge": True,
            "shell": "/bin/sh", "binary": True, "command": "true", "args": [], "env": {"PATH": "/bin"}, **more}


@pytest.mark.parametrize("case", ["interactive", "no config", "a NUL in the environment"])
def test_the_launcher_leaves_to_the_python_shepherd_what_the_c_one_cannot_run(tmp_path: Path, case: str) -> None:
    """An interactive job (its relay is the Python shepherd's), a config the
    plan cannot be made of (the Python shepherd reports what is wrong with
    it), a string no exec takes: no C shepherd is started (None: fork)."""
    from minisge.execd import shepherd_plan

    cfg: dict[str, object] | None = {
        "interactive": batch_config(tmp_path, interactive={"port": "h:1"}),
        "no config": None,
        "a NUL in the environment": batch_config(tmp_path, env={"PATH": "/bin", "X": "a\0b"}),
    }[case]
    launcher, d = launcher_on(tmp_path, cfg)
    launcher.c_shepherd = shepherd_plan.BINARY  # type: ignore[attr-defined]
    assert launcher.spawn_c_shepherd(d, 1, -1, []) is None  # type: ignore[attr-defined]
    assert not os.path.exists(os.path.join(d, "exit_status"))


def test_a_plan_the_c_shepherd_cannot_read_leaves_the_task_lost_and_says_why(tmp_path: Path) -> None:
    """A plan it cannot read (a bug of ours, never the job's): the C shepherd
    starts nothing, writes ``shepherd_error`` and exits 1; no end marker, so
    the execd reports the task as lost (failed 19), as with the Python one."""
    from minisge.execd import launcher, shepherd_plan

    if shepherd_plan.binary() is None:
        pytest.skip("the C shepherd was not built (no C compiler at install)")
    d = tmp_path / "1.1"
    d.mkdir()
    for plan in (b"dir=" + str(d).encode() + b"\0no such key=1\0", b"dir=" + str(d).encode() + b"\0step=job\0",
                 b"no NUL at the end"):
        fd = task_dir.create_pid_file(str(d))
        pid = launcher.spawn_shepherd(shepherd_plan.BINARY, 1, fd, plan, [])
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 1
        assert Path(d, "pid").read_text() == f"{pid}\n"
        assert not Path(d, "exit_status").exists() and not Path(d, "job_pid").exists()
        assert task_dir.end_report(str(d), False)["failed"] == 19
        if plan.endswith(b"\0"):  # its directory known: it says why
            assert Path(d, "shepherd_error").read_text() == "sge_shepherd: cannot read the run plan\n"
        for name in ("pid", "shepherd_error", "exit_status"):  # end_report wrote the lost state down
            Path(d, name).unlink(missing_ok=True)


def test_the_c_shepherd_holds_the_descriptors_it_is_given_and_its_job_none_of_them(tmp_path: Path) -> None:
    """A PE task's shepherd keeps the write ends of its output FIFOs (the
    launcher hands them over as descriptors 5..): its job does not get
    them, and nothing else of the launcher reaches either (an inheritable
    descriptor of the launcher's included)."""
    from minisge.execd import launcher, shepherd_plan

    if shepherd_plan.binary() is None:
        pytest.skip("the C shepherd was not built (no C compiler at install)")
    d = tmp_path / "1.1"
    d.mkdir()
    out = tmp_path / "out"
    cfg = batch_config(tmp_path, command="ls /proc/self/fd; sleep 1", stdout_path=str(out), stderr_path=str(out))
    plan = shepherd_plan.plan(str(d), cfg)
    assert plan is not None
    r, w = os.pipe()
    stray = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(stray, True)
    fd = task_dir.create_pid_file(str(d))
    try:
        pid = launcher.spawn_shepherd(shepherd_plan.BINARY, 1, fd, plan, [w])
    finally:
        os.close(fd)
        os.close(w)
        os.close(stray)
    try:
        deadline = time.monotonic() + 10
        while not (d / "job_pid").exists() and time.monotonic() < deadline:
            time.sleep(0.01)

        def held_now() -> tuple[dict[int, str], set[int]]:
            held = {}
            for n in os.listdir(f"/proc/{pid}/fd"):
                try:
                    held[int(n)] = os.readlink(f"/proc/{pid}/fd/{n}")
                except FileNotFoundError:
                    pass
            # the room of its usage and end marker, reserved, besides
            return held, {n for n, t in held.items() if n > 2 and n != 5 and not t.startswith(f"{d}/")}

        # its pipe from the job's child, which tells it of a failed exec, lasts until the exec
        # (job_pid is written before): what the launcher left it never goes
        held, others = held_now()
        while others and time.monotonic() < deadline:
            time.sleep(0.01)
            held, others = held_now()
        assert held[5].startswith("pipe:") and not others, {n: held[n] for n in others}
        assert all(held[n] == "/dev/null" for n in (0, 1, 2)), held
        os.set_blocking(r, False)
        with pytest.raises(BlockingIOError):  # the write end still held: no EOF
            os.read(r, 1)
    finally:
        os.waitpid(pid, 0)
    assert os.read(r, 1) == b""  # the shepherd gone: EOF
    os.close(r)
    assert sorted(int(n) for n in out.read_text().split()) == [0, 1, 2, 3]  # ls's own directory is 3


@pytest.mark.parametrize("spare", [False, True])
def test_a_c_shepherd_the_execd_spawned_claims_its_task_itself_and_runs_no_claimed_one(tmp_path: Path,
                                                                                      spare: bool) -> None:
    """The execd's spawn gives no pid file: the shepherd creates it
    exclusively (a recycled directory's spare linked, or a new file), so an
    execd killed before the spawn leaves the task unclaimed for its
    recovery to start again.  A task claimed meanwhile (by that recovery)
    is not run."""
    from minisge.execd import launcher, shepherd_plan

    if shepherd_plan.binary() is None:
        pytest.skip("the C shepherd was not built (no C compiler at install)")
    for claimed in (False, True):
        d = tmp_path / f"{int(claimed)}.1"
        d.mkdir()
        if spare:
            (d / task_dir.SPARES["pid"]).write_text("")
        if claimed:
            assert task_dir.claim(str(d))
        out = tmp_path / f"out{int(claimed)}"
        # the job (sh -c) tells what its parent, the shepherd, holds on 0-2: /dev/null it opened itself
        command = "echo ran; readlink /proc/$PPID/fd/0 /proc/$PPID/fd/1 /proc/$PPID/fd/2"
        plan = shepherd_plan.plan(str(d), batch_config(tmp_path, command=command, stdout_path=str(out),
                                                       stderr_path=str(out)))
        assert plan is not None
        pid = launcher.spawn_shepherd(shepherd_plan.BINARY, 1, None, plan, [])
        _, status = os.waitpid(pid, 0)
        if claimed:
            assert os.WEXITSTATUS(status) == 1 and not out.exists() and task_dir.read_int(str(d / "pid")) is None
            assert not (d / "exit_status").exists()
        else:
            assert status == 0 and out.read_text() == "ran\n" + "/dev/null\n" * 3
            assert (d / "pid").read_text() == f"{pid}\n"
            assert (d / "exit_status").read_text() == "0 0 0\n"
            assert not (d / task_dir.SPARES["pid"]).exists()
