"""The execd's safety through the real daemon (issue 11, "A cell a lab can
trust"): no root escalation through the TMPDIR, the job's output files or a
``root@`` procedure's environment; shepherds that hold nothing of the
daemon, so a kill -9 of it is followed by a clean restart; no task lost or
run twice when the daemon dies between a task's directory and its
shepherd; a full disk that costs neither the daemon nor an exit status; a
job script that is no UTF-8 run byte for byte.

Each test fails on the code before the fix (see the report of branch
rel-execd); the users are real Unix users, the jobs real processes.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess

import pytest
from cellutil import Cell, kill_cell_processes, process_gone, script, set_queue, user_cell_fixtures

from minisge.execd import shepherd_plan

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="creates users and runs jobs as them: root only")

USER = "msgeuser1"
user, cell = user_cell_fixtures(USER)
FAILED, EXIT_STATUS = 11, 12  # accounting(5) fields
DEFAULT_PATH = "/usr/local/bin:/usr/ucb:/bin:/usr/bin"


def queue_tmpdir(c: Cell) -> str:
    """A world-writable sticky directory of the cell's own as all.q's tmpdir
    (as /tmp is, without sharing /tmp's names with other cells)."""
    path = os.path.join(c.dir, "qtmp")
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o1777)
    set_queue(c, "tmpdir", path)
    return path


def wait_running(c: Cell, job: int, task: int = 1, host: str | None = None) -> str:
    """The task's directory in the execd spool, once its job has a pid."""
    d = os.path.join(c.root, "default", "spool", host or c.host, "active_jobs", f"{job}.{task}")
    c.wait_for(lambda: os.path.exists(os.path.join(d, "job_pid")), 60, f"job {job}.{task} running")
    return d


def read_int(path: str) -> int:
    with open(path) as f:
        return int(f.read().strip())


def waiting_job(c: Cell, name: str, extra: str = "") -> tuple[str, str]:
    """A job script that waits for its release file (and runs ``extra``
    first); (the script's path, the release file)."""
    release = os.path.join(c.work, f"{name}.release")
    body = f"{extra}\nwhile [ ! -e {release} ]; do sleep 0.1; done\nexit 0"
    return script(c, f"{name}.sh", body), release


def release_job(path: str) -> None:
    with open(path, "w"):
        pass


# ---------------------------------------------------------------- 1. TMPDIR


def test_a_link_planted_at_the_tmpdir_path_is_moved_aside_never_followed(cell, user):
    qtmp = queue_tmpdir(cell)
    victim = os.path.join(cell.dir, "victim")  # a directory of root's
    os.mkdir(victim, 0o755)
    out = os.path.join(cell.work, "t.out")
    job = cell.submit("-h", "-o", out, "-j", "y",
                      script(cell, "t.sh", 'echo "$TMPDIR $(stat -c %U "$TMPDIR")"; touch "$TMPDIR/x"'), user=USER)
    link = os.path.join(qtmp, f"{job}.1.all.q")
    os.symlink(victim, link)  # planted by the user before the job starts
    os.lchown(link, user.pw_uid, user.pw_gid)
    assert cell.run("qrls", str(job)).rc == 0
    rec = cell.wait_records(job)[0]
    assert rec[FAILED] == "0", rec
    st = os.stat(victim)
    assert (st.st_uid, os.listdir(victim)) == (0, []), "the link was followed: root's directory given to the user"
    with open(out) as f:
        assert f.read() == f"{link} {USER}\n"  # a fresh TMPDIR of the user's, at its path
    # moved aside, then removed (the link, not its target): no .moved-* entry piles up
    assert glob.glob(link + ".moved-*") == [] and os.path.isdir(victim) and not os.path.islink(victim)
    with open(os.path.join(cell.qmaster_spool, "messages")) as f:
        assert f"{link} was in the way of its TMPDIR: moved to {link}.moved-" in f.read()
    assert not os.path.lexists(link)  # removed at the job's end
    # set aside in the execd's spool (the file the job left in it with it), then deleted there
    old_tmpdirs = os.path.join(cell.root, "default", "spool", cell.host, "old_tmpdirs")
    cell.wait_for(lambda: os.listdir(old_tmpdirs) == [], 30, "the set-aside TMPDIR's removal")


def test_an_empty_tmpdir_is_its_owners_next_tmpdir_and_nobody_elses(cell, user):
    """The TMPDIR a job left empty becomes the next TMPDIR of its owner's
    (the same directory, mode 0755, empty), never another user's."""
    from cellutil import ensure_user

    other = ensure_user("msgeuser2")
    qtmp = queue_tmpdir(cell)
    show = 'stat -c "%i %a %U" "$TMPDIR"; ls -A "$TMPDIR" | wc -l'
    first = cell.submit("-o", os.path.join(cell.work, "1.out"), "-j", "y", script(cell, "s1.sh", show), user=USER)
    assert cell.wait_records(first)[0][FAILED] == "0"
    old_tmpdirs = os.path.join(cell.root, "default", "spool", cell.host, "old_tmpdirs")
    cell.wait_for(lambda: any(n.startswith(f"spare-{user.pw_uid}-") for n in os.listdir(old_tmpdirs)), 30,
                  "the first job's TMPDIR made a spare")
    spare_inode = next(os.stat(os.path.join(old_tmpdirs, n)).st_ino for n in os.listdir(old_tmpdirs))
    outs = {}
    for name, who in (("o", other.pw_name), ("u", USER)):  # the other user's job first: it must not get it
        outs[name] = os.path.join(cell.work, f"{name}.out")
        job = cell.submit("-o", outs[name], "-j", "y", script(cell, f"s{name}.sh", show), user=who)
        assert cell.wait_records(job)[0][FAILED] == "0"
    with open(outs["o"]) as f:
        inode, mode, owner = f.readline().split()
        assert int(inode) != spare_inode and (mode, owner) == ("755", other.pw_name)
    with open(outs["u"]) as f:
        assert f.read() == f"{spare_inode} 755 {USER}\n0\n"  # the spare, given back to its owner, empty
    assert [n for n in os.listdir(qtmp) if not n.startswith(".")] == []  # every TMPDIR gone from its place


def test_a_file_planted_at_the_tmpdir_path_neither_fails_the_job_nor_the_queue(cell, user):
    qtmp = queue_tmpdir(cell)
    out = os.path.join(cell.work, "f.out")
    job = cell.submit("-h", "-o", out, "-j", "y", script(cell, "f.sh", 'test -d "$TMPDIR" && echo ok'), user=USER)
    planted = os.path.join(qtmp, f"{job}.1.all.q")
    with open(planted, "w") as f:
        f.write("in the way\n")
    os.chown(planted, user.pw_uid, user.pw_gid)
    assert cell.run("qrls", str(job)).rc == 0
    rec = cell.wait_records(job)[0]
    assert rec[FAILED] == "0", rec
    with open(out) as f:
        assert f.read() == "ok\n"
    queue_line = next(ln for ln in cell.run("qstat", "-f").out.splitlines() if ln.startswith("all.q@"))
    assert len(queue_line.split()) == 5, queue_line  # no state: not E


def test_a_method_writes_the_jobs_output_as_the_job_owner(cell, user):
    # queue_conf(5) suspend_method: its output goes to the job's output file;
    # a user who replaced that file by a link to a file of root's must not
    # get root to write there
    rootfile = os.path.join(cell.dir, "rootfile")
    with open(rootfile, "w") as f:
        f.write("root's\n")
    os.chmod(rootfile, 0o644)
    ran = os.path.join(cell.work, "method.ran")
    method = script(cell, "suspend.sh", f'echo "written by the method"; touch {ran}')
    set_queue(cell, "suspend_method", method)
    out = os.path.join(cell.work, "m.out")
    path, release = waiting_job(cell, "m")
    job = cell.submit("-o", out, "-j", "y", path, user=USER)
    wait_running(cell, job)
    # the job's pid is written before its child opens the output file: wait for the file
    cell.wait_for(lambda: os.path.exists(out), 60, "the job's output file")
    os.unlink(out)
    os.symlink(rootfile, out)
    os.lchown(out, user.pw_uid, user.pw_gid)
    assert cell.run("qmod", "-sj", str(job)).rc == 0
    cell.wait_for(lambda: os.path.exists(ran), 30, "the suspend method's run")
    with open(rootfile) as f:
        assert f.read() == "root's\n"
    # the method only echoed (it replaces SIGSTOP): the job still runs, and ends when released
    release_job(release)
    cell.wait_records(job)


# ---------------------------------------------------------------- 2. root@ procedures


def test_a_root_prolog_gets_grid_engines_variables_not_the_jobs(cell, user):
    env_file = os.path.join(cell.dir, "prolog.env")
    prolog = os.path.join(cell.dir, "prolog.sh")  # root's, as an administrator writes it
    with open(prolog, "w") as f:
        f.write(f"#!/bin/bash\nenv > {env_file}\n")  # bash reads BASH_ENV; `env` is looked up in PATH
    os.chmod(prolog, 0o755)
    set_queue(cell, "prolog", f"root@{prolog}")
    # what the user brings: a PATH with an `env` of theirs, BASH_ENV, ENV, LD_PRELOAD, PYTHONPATH
    userbin = os.path.join(cell.work, "bin")
    os.makedirs(userbin)
    os.chmod(userbin, 0o755)
    script(cell, "bin/env", f'touch {cell.work}/pwned-path.$(id -u); exec /usr/bin/env "$@"')
    evil = script(cell, "evil.sh", f"touch {cell.work}/pwned-bash-env.$(id -u)")
    job_env = {"PATH": f"{userbin}:/usr/bin:/bin", "BASH_ENV": evil, "ENV": evil,
               "LD_PRELOAD": os.path.join(cell.work, "nothing.so"), "PYTHONPATH": os.path.join(cell.work, "py")}
    out = os.path.join(cell.work, "p.out")
    job = cell.submit("-o", out, "-e", "/dev/null", "-v", ",".join(f"{k}={v}" for k, v in job_env.items()),
                      script(cell, "p.sh", "/usr/bin/env"), user=USER)
    rec = cell.wait_records(job)[0]
    assert rec[FAILED] == "0", rec
    with open(env_file) as f:
        prolog_env = dict(ln.split("=", 1) for ln in f.read().splitlines() if "=" in ln)
    leaked = sorted((set(job_env) - {"PATH"}) & set(prolog_env))
    assert not leaked, f"the job's variables in the root prolog: {leaked}"
    assert prolog_env["PATH"] == DEFAULT_PATH
    assert (prolog_env["JOB_ID"], prolog_env["USER"], prolog_env["SGE_O_WORKDIR"]) == (str(job), USER, cell.work)
    assert "TMPDIR" not in prolog_env  # as 8.1.9
    assert not glob.glob(os.path.join(cell.work, "pwned-*.0")), "the user's code ran as root"
    with open(out) as f:
        own = dict(ln.split("=", 1) for ln in f.read().splitlines() if "=" in ln)
    assert {k: own.get(k) for k in job_env} == job_env  # the job itself keeps them


# ---------------------------------------------------------------- 3. shepherds


def test_a_shepherd_and_its_job_hold_nothing_of_the_daemon(cell, user):
    out = os.path.join(cell.work, "s.out")
    path, release = waiting_job(cell, "s")
    job = cell.submit("-o", out, "-j", "y", path, user=USER)
    d = wait_running(cell, job)
    shepherd, job_pid = read_int(os.path.join(d, "pid")), read_int(os.path.join(d, "job_pid"))

    def fds(pid: int) -> dict[int, str]:
        base = f"/proc/{pid}/fd"
        held = {}
        for fd in os.listdir(base):
            try:
                held[int(fd)] = os.readlink(os.path.join(base, fd))
            except FileNotFoundError:  # closed between the listing and the look (the exec pipe): not held
                pass
        return held

    def own(held: dict[int, str]) -> bool:
        return all(t == "/dev/null" or t.startswith(d + "/") for t in held.values())

    # the shepherd's own pipe from the job's child, which tells it of a failed exec, lasts
    # until the exec (job_pid is written before): what the daemon left it never goes
    held = cell.wait_for(lambda: own(h := fds(shepherd)) and h, what="the shepherd's files settled")
    assert own(held), held
    job_fds = fds(job_pid)
    script_file = os.path.join(cell.qmaster_spool, "job_scripts", str(job))  # the shell reads its script
    assert {fd: t for fd, t in job_fds.items() if t != script_file} == {0: "/dev/null", 1: out, 2: out}, job_fds
    with open(f"/proc/{shepherd}/cmdline", "rb") as f:
        # as ps shows it (the C shepherd's two arguments, the Python one's title in one)
        assert f.read().rstrip(b"\0").replace(b"\0", b" ") == f"sge_shepherd-{job} -bg".encode()
    with open(f"/proc/{shepherd}/comm", "rb") as f:
        assert f.read() == b"sge_shepherd\n"
    if shepherd_plan.binary() is not None:  # the C one, spawned by the execd itself: its child
        assert os.path.realpath(f"/proc/{shepherd}/exe") == shepherd_plan.BINARY
        with open(f"/proc/{shepherd}/stat") as f:
            assert int(f.read().rsplit(")", 1)[1].split()[1]) == cell.daemon_pid()
    release_job(release)
    assert cell.wait_records(job)[0][FAILED] == "0"


def launcher_of(daemon: int) -> int | None:
    """The daemon's shepherd launcher (its child ``python -m minisge.execd.launcher``)."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError):
            continue
        if ppid == daemon and b"minisge.execd.launcher" in cmdline:
            return int(entry)
    return None


def test_a_dead_launcher_is_replaced_and_its_shepherds_live_on(cell, user):
    out = os.path.join(cell.work, "d.out")
    path, release = waiting_job(cell, "d", extra="echo started")
    job = cell.submit("-o", out, "-j", "y", path, user=USER)
    wait_running(cell, job)
    daemon = cell.daemon_pid()
    first = launcher_of(daemon)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    cell.wait_for(lambda: launcher_of(daemon) not in (None, first), 30, "another launcher")
    after = cell.submit("-o", "/dev/null", "-j", "y", script(cell, "after.sh", "exit 0"), user=USER)
    assert cell.wait_records(after)[0][FAILED] == "0"
    release_job(release)  # the shepherd of the first job outlived its launcher
    assert cell.wait_records(job)[0][FAILED] == "0"
    with open(out) as f:
        assert f.read() == "started\n"


def test_after_a_kill_9_of_the_daemon_it_starts_at_once_and_picks_its_jobs_up(cell, user):
    out = os.path.join(cell.work, "k.out")
    path, release = waiting_job(cell, "k", extra="echo started")
    job = cell.submit("-o", out, "-j", "y", path, user=USER)
    wait_running(cell, job)
    daemon = cell.daemon_pid()
    os.kill(daemon, signal.SIGKILL)
    cell.wait_for(lambda: process_gone(daemon), 30, "the daemon's death")
    r = cell.minisge("start", "--hostname", cell.host, check=False)
    assert r.rc == 0, r
    q = cell.run("qstat", timeout=20)
    assert q.rc == 0 and cell.qstat_states().get(job) == "r", q
    release_job(release)
    rec = cell.wait_records(job)
    cell.wait_for(lambda: cell.qstat_states().get(job) is None, 30, f"job {job} gone from qstat")
    assert len(cell.records_of(job)) == 1 and rec[0][FAILED] == "0", cell.records_of(job)
    with open(out) as f:
        assert f.read() == "started\n"


def test_an_execd_killed_with_9_restarts_at_once_and_picks_its_jobs_up(user):
    # the separate roles: a shepherd that kept the execd's listening socket made
    # the next execd find it "in use" and exit, again and again
    c = Cell(host="master").start_roles(("node1",))
    try:
        out = os.path.join(c.work, "e.out")
        path, release = waiting_job(c, "e", extra="echo started")
        job = c.submit("-o", out, "-j", "y", path, user=USER)
        wait_running(c, job, host="node1")
        execd = c.procs[-1]
        execd.kill()
        execd.wait()
        again = c.spawn("execd", "--hostname", "node1", "--qmaster", "127.0.0.1", log="execd-node1.log")
        messages = os.path.join(c.qmaster_spool, "messages")
        c.wait_for(lambda: open(messages).read().count("execd node1 connected") == 2 or again.poll() is not None,
                   30, "the execd's return")
        assert again.poll() is None, open(os.path.join(c.dir, "execd-node1.log")).read()[-2000:]
        release_job(release)
        rec = c.wait_records(job)
        c.wait_for(lambda: c.qstat_states().get(job) is None, 30, f"job {job} gone from qstat")
        assert len(c.records_of(job)) == 1 and rec[0][FAILED] == "0", c.records_of(job)
        with open(out) as f:
            assert f.read() == "started\n"
    finally:
        c.cleanup()


def test_the_tmpdir_of_a_task_running_across_a_restart_goes_at_its_end(cell, user):
    qtmp = queue_tmpdir(cell)
    path, release = waiting_job(cell, "r")
    job = cell.submit("-o", "/dev/null", "-j", "y", path, user=USER)
    wait_running(cell, job)
    tmpdir = os.path.join(qtmp, f"{job}.1.all.q")
    assert os.path.isdir(tmpdir)
    cell.minisge("stop")
    cell.minisge("start", "--hostname", cell.host)
    release_job(release)
    assert cell.wait_records(job)[0][FAILED] == "0"
    cell.wait_for(lambda: not os.path.lexists(tmpdir), 30, "the TMPDIR's removal")


# ---------------------------------------------------------------- 4. the crash window


def test_a_task_whose_daemon_died_before_its_shepherd_runs_once_after_the_restart(user):
    c = Cell()
    try:
        daemon = c.start_crashing_before_shepherd(2)  # the 2nd task's shepherd
        evidence = os.path.join(c.work, "evidence")
        job = c.submit("-t", "1-3", "-o", "/dev/null", "-j", "y",
                       script(c, "a.sh", f'echo "$SGE_TASK_ID" >> {evidence}'), user=USER)
        c.wait_for(lambda: process_gone(daemon), 60, "the daemon's death at the hook")
        active = os.path.join(c.root, "default", "spool", c.host, "active_jobs")
        unstarted = [n for n in os.listdir(active) if not os.path.exists(os.path.join(active, n, "pid"))]
        assert unstarted, "the hook did not stop the daemon between a task's directory and its shepherd"
        c.minisge("start", "--hostname", c.host)
        c.wait_records(job, n=3, timeout=60)
        c.wait_for(lambda: c.qstat_states().get(job) is None, 60, f"job {job} gone from qstat")
        records = c.records_of(job)
        assert sorted((r[35], r[FAILED]) for r in records) == [("1", "0"), ("2", "0"), ("3", "0")], records
        with open(evidence) as f:
            assert sorted(f.read().split()) == ["1", "2", "3"]  # each task ran once
    finally:
        c.cleanup()


# ---------------------------------------------------------------- 5. a full disk


def test_a_full_disk_costs_neither_the_daemon_nor_an_exit_status(user):
    c = Cell()
    spool = os.path.join(c.root, "default", "spool", c.host)
    mounted = False
    try:
        c.minisge("init", "--hostname", c.host, "--slots", str(c.slots))
        os.makedirs(spool, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=755", "tmpfs", spool], check=True)
        mounted = True
        fill = os.path.join(spool, "fill")
        os.mkdir(fill)
        os.chmod(fill, 0o1777)
        c.start()
        daemon = c.daemon_pid()
        # a job whose shepherd dies while the disk is full: its lost state cannot be written down
        path, _ = waiting_job(c, "w")
        lost = c.submit("-o", "/dev/null", "-j", "y", path, user=USER)
        d = wait_running(c, lost)
        shepherd, lost_pid = read_int(os.path.join(d, "pid")), read_int(os.path.join(d, "job_pid"))
        # a job that fills the disk, then exits 3
        filler = c.submit("-o", "/dev/null", "-j", "y",
                          script(c, "fill.sh", f"dd if=/dev/zero of={fill}/big bs=4k 2>/dev/null; exit 3"), user=USER)
        rec = c.wait_records(filler)[0]
        assert (rec[FAILED], rec[EXIT_STATUS]) == ("0", "3"), rec
        # full again (the filler's task directory is gone): nothing more can be written there
        subprocess.run(["dd", "if=/dev/zero", f"of={fill}/more", "bs=4k"], capture_output=True)
        assert os.statvfs(spool).f_bavail == 0
        os.kill(shepherd, signal.SIGKILL)
        os.killpg(lost_pid, signal.SIGKILL)
        rec = c.wait_records(lost)[0]
        assert rec[FAILED] == "17", rec  # its shepherd died through a signal
        assert not process_gone(daemon) and c.run("qstat").rc == 0
        for name in ("big", "more"):
            os.unlink(os.path.join(fill, name))
        after = c.submit("-o", "/dev/null", "-j", "y", script(c, "after.sh", "exit 0"), user=USER)
        assert c.wait_records(after)[0][FAILED] == "0"
        assert not process_gone(daemon)
    finally:
        c.stop()
        kill_cell_processes(c.root)
        if mounted:
            subprocess.run(["umount", "-l", spool], capture_output=True)
        c.cleanup()


# ---------------------------------------------------------------- 6. scripts that are no UTF-8


def test_a_latin1_job_script_runs_byte_for_byte(cell, user):
    path = os.path.join(cell.work, "latin1.sh")
    with open(path, "wb") as f:
        f.write(b"#!/bin/sh\n# caf\xe9\nprintf 'caf\\351 cr\xe8me\\n'\necho 'br\xfbl\xe9e'\n")
    os.chmod(path, 0o755)
    out = os.path.join(cell.work, "l.out")
    job = cell.submit("-o", out, "-j", "y", path, user=USER)
    assert cell.wait_records(job)[0][FAILED] == "0"
    with open(out, "rb") as f:
        assert f.read() == b"caf\xe9 cr\xe8me\nbr\xfbl\xe9e\n"

