"""The shepherd's run sequence and exit codes (sge_shepherd(8), queue_conf(5)
prolog/epilog, sge_pe(5) start/stop_proc_args), run for real: the shepherd
is started on a temporary job directory, as the launcher starts it, and its
result files are read back with the execd's reader.  Every case runs with
both shepherds: the Python one (forked) and the C one (``sge_shepherd``,
spawned with the plan made from the same config), which must agree."""

from __future__ import annotations

import os
import pwd
import re
import struct
import tempfile

import pytest

from minisge.execd import launcher, shepherd, shepherd_config, shepherd_plan, task_dir

ERROR_LINE = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d \[\d+:\d+\]: (.*)$")


@pytest.fixture(params=["python", "c"], autouse=True)
def implementation(request, monkeypatch):
    """Which shepherd :func:`run_task` starts."""
    if request.param == "c" and shepherd_plan.binary() is None:
        pytest.skip("the C shepherd was not built (no C compiler at install)")
    monkeypatch.setattr(ShepherdUnderTest, "name", request.param)
    return request.param


class ShepherdUnderTest:
    name = "python"


def start_shepherd(job_dir: str) -> int:
    """The pid of the shepherd started on ``job_dir``, as the launcher starts it."""
    if ShepherdUnderTest.name == "python":
        pid = os.fork()
        if pid == 0:
            shepherd.run(job_dir)
        return pid
    plan = shepherd_plan.plan(job_dir, task_dir.read_config(job_dir))
    assert plan is not None
    pid_fd = task_dir.create_pid_file(job_dir)
    try:
        return launcher.spawn_shepherd(shepherd_plan.BINARY, 1, pid_fd, plan, [])
    finally:
        os.close(pid_fd)


def script(d: str, name: str, body: str) -> str:
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def run_task(tmp: str, job: str = "echo job", procedures: dict | None = None, *, pe: str | None = None,
             forbid_reschedule: bool = False, forbid_apperror: bool = False, name: str = "t",
             before_start=None, **overrides: object) -> tuple[dict, str]:
    """Run one task through the shepherd: (the execd's report, the job's stdout)."""
    job_dir = tempfile.mkdtemp(dir=tmp)
    out = os.path.join(tmp, f"{name}.o1")
    variables = {"host": "h", "job_owner": "root", "job_id": "1", "job_name": name, "queue": "q",
                 "processors": "UNDEFINED", "stdin_path": "/dev/null", "stdout_path": out, "stderr_path": out,
                 "merge_stderr": "1", "ja_task_id": "0", "sge_cell": "default", "sge_root": "/r"}
    pe_variables = dict(variables, pe=pe, pe_slots="2", pe_hostfile=os.path.join(job_dir, "pe_hostfile"))
    cfg = {
        "job_id": 1, "task_id": 1, "uid": os.getuid(), "gid": os.getgid(), "cwd": tmp,
        "stdout_path": out, "stderr_path": out, "stdin_path": "/dev/null", "merge": True,
        "shell": "/bin/sh", "binary": True, "command": job, "args": [],
        "env": {"PATH": "/usr/bin:/bin", "JOB_NAME": name},
        "pe": pe, "pe_stdout_path": out + ".po", "pe_stderr_path": out + ".pe",
        "procedures": {k: shepherd_config.resolve_procedure(v, {"uid": os.getuid(), "gid": os.getgid()})
                       for k, v in (procedures or {}).items()},
        "variables": variables, "pe_variables": pe_variables,
        "forbid_reschedule": forbid_reschedule, "forbid_apperror": forbid_apperror,
    }
    cfg.update(overrides)
    import json

    with open(os.path.join(job_dir, "config"), "w") as f:
        json.dump(cfg, f)
    if before_start is not None:
        before_start(job_dir)
    pid = start_shepherd(job_dir)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, open(os.path.join(job_dir, "shepherd_error")).read()
    text = open(out).read() if os.path.exists(out) else ""
    return task_dir.read_results(job_dir), text


@pytest.fixture
def tmp():
    """A directory every user may enter (pytest's own is private to root),
    so a ``user@`` procedure can run the scripts in it."""
    import shutil

    d = tempfile.mkdtemp(prefix="minisge-shepherd-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def proc(path: str, args: str = "", user: str | None = None) -> dict:
    return {"command": f"{path} {args}".strip(), "user": user}


def test_prolog_job_epilog_run_in_order_into_the_job_output(tmp):
    pro = script(tmp, "pro", "echo prolog")
    epi = script(tmp, "epi", "echo epilog")
    report, out = run_task(tmp, "echo job", {"prolog": proc(pro), "epilog": proc(epi)})
    assert out == "prolog\njob\nepilog\n"
    assert report["failed"] == 0 and "error" not in report


def test_pe_procedures_run_around_the_job_into_their_own_files(tmp):
    start = script(tmp, "start", "echo start $1 $2")
    stop = script(tmp, "stop", "echo stop")
    report, out = run_task(tmp, "echo job", {"pe_start": proc(start, "$pe $pe_slots"), "pe_stop": proc(stop)},
                           pe="smp")
    assert out == "job\n"
    assert open(os.path.join(tmp, "t.o1.po")).read() == "start smp 2\nstop\n"
    assert report["failed"] == 0


@pytest.mark.parametrize("code,failed", [(1, 8), (99, 25), (100, 30), (137, 8)])
def test_prolog_failure_skips_the_job_but_not_the_epilog(tmp, code, failed):
    pro = script(tmp, "pro", f"exit {code}")
    epi = script(tmp, "epi", 'echo "epilog ${SGE_JOBEXIT_STAT-unset}"')
    report, out = run_task(tmp, "echo job", {"prolog": proc(pro), "epilog": proc(epi)})
    assert report["failed"] == failed
    assert ERROR_LINE.match(report["error"]).group(1) == f"exit_status of prolog = {code}"
    assert out == "epilog unset\n"
    assert report["exit_status"] == 0 and report["usage"]["start_time"] == "0"


def test_error_line_names_the_shepherds_euid_and_pid(tmp):
    report, _ = run_task(tmp, "exit 100")
    m = re.match(r"^(\d\d)/(\d\d)/(\d{4}) \d\d:\d\d:\d\d \[(\d+):(\d+)\]: exit_status of job start = 100$",
                 report["error"])
    assert m and int(m.group(4)) == os.geteuid()


def test_prolog_that_cannot_be_started_is_state_7_and_skips_the_epilog(tmp):
    epi = script(tmp, "epi", "echo epilog")
    report, out = run_task(tmp, "echo job", {"prolog": proc(os.path.join(tmp, "missing")), "epilog": proc(epi)})
    assert report["failed"] == 7 and out == ""
    assert "missing" in report["error"]


def test_unknown_variable_in_prolog_is_state_7(tmp):
    report, out = run_task(tmp, "echo job", {"prolog": proc("/bin/echo", "$job_pid")})
    assert report["failed"] == 7 and out == ""
    assert report["error"].endswith('unknown variable "job_pid"')


@pytest.mark.parametrize("code,failed", [(1, 15), (99, 25), (100, 30)])
def test_epilog_failure_after_the_job_keeps_the_jobs_usage(tmp, code, failed):
    epi = script(tmp, "epi", f"exit {code}")
    report, out = run_task(tmp, "echo job; exit 5", {"epilog": proc(epi)})
    assert (report["failed"], report["exit_status"]) == (failed, 5)
    assert report["error"].endswith(f"exit_status of epilog = {code}")
    assert out == "job\n"


def test_epilog_gets_the_jobs_exit_status(tmp):
    epi = script(tmp, "epi", 'echo "exit was $SGE_JOBEXIT_STAT"')
    _, out = run_task(tmp, "exit 3", {"epilog": proc(epi)})
    assert out == "exit was 3\n"


def test_pe_start_failure_skips_the_job_pe_stop_and_epilog_still_run(tmp):
    start = script(tmp, "start", "exit 1")
    stop = script(tmp, "stop", "echo stop")
    epi = script(tmp, "epi", "echo epilog")
    report, out = run_task(tmp, "echo job", {"pe_start": proc(start), "pe_stop": proc(stop), "epilog": proc(epi)},
                           pe="smp")
    assert report["failed"] == 10 and report["error"].endswith("exit_status of pe_start = 1")
    assert out == "epilog\n" and open(os.path.join(tmp, "t.o1.po")).read() == "stop\n"


def test_pe_stop_failure_is_state_13_after_the_job(tmp):
    stop = script(tmp, "stop", "exit 2")
    report, out = run_task(tmp, "echo job; exit 4", {"pe_stop": proc(stop)}, pe="smp")
    assert (report["failed"], report["exit_status"]) == (13, 4)
    assert report["error"].endswith("exit_status of pe_stop = 2")


@pytest.mark.parametrize("code,failed,forbid", [(99, 25, {}), (100, 30, {}), (99, 0, {"forbid_reschedule": True}),
                                                (100, 0, {"forbid_apperror": True}), (3, 0, {})])
def test_job_exit_99_and_100_unless_forbidden(tmp, code, failed, forbid):
    report, _ = run_task(tmp, f"exit {code}", **forbid)
    assert (report["failed"], report["exit_status"]) == (failed, code)
    if failed:
        assert report["error"].endswith(f"exit_status of job start = {code}")
    else:
        assert "error" not in report


def test_first_failure_wins(tmp):
    epi = script(tmp, "epi", "exit 1")
    report, _ = run_task(tmp, "exit 100", {"epilog": proc(epi)})
    assert report["failed"] == 30 and report["error"].endswith("exit_status of job start = 100")


def test_variables_become_whole_argv_words_without_a_shell(tmp):
    args = script(tmp, "args", 'for a in "$@"; do echo "[$a]"; done')
    marker = os.path.join(tmp, "PWNED")
    name = "x; touch PWNED"  # the working directory is tmp
    _, out = run_task(tmp, "true", {"prolog": proc(args, "$job_name $host:$job_id $queue $ja_task_id $processors")},
                      name=name)
    assert out == f"[{name}]\n[h:1]\n[q]\n[0]\n[UNDEFINED]\n"
    assert not os.path.exists(marker)


def test_expand_command_rules():
    vals = {"job_id": "7", "job_name": "a b"}
    allowed = {"job_id", "job_name"}
    assert shepherd.expand_command("/x $job_id-$job_name", vals, allowed) == ["/x", "7-a b"]
    with pytest.raises(shepherd.VariableError, match='unknown variable "job_ids"'):
        shepherd.expand_command("/x $job_ids", vals, allowed)
    with pytest.raises(shepherd.VariableError, match="at least one character"):
        shepherd.expand_command("/x $ y", vals, allowed)


@pytest.mark.root
def test_user_prefix_runs_the_procedure_as_that_user(tmp):
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))
    from cellutil import ensure_user

    ensure_user("msgeuser1")
    pro = script(tmp, "pro", "id -un")
    report, out = run_task(tmp, "id -un", {"prolog": proc(pro, user="msgeuser1")})
    assert out == f"msgeuser1\n{pwd.getpwuid(os.getuid()).pw_name}\n" and report["failed"] == 0


def test_unknown_user_prefix_is_a_failure_before_the_procedure(tmp):
    report, out = run_task(tmp, "echo job", {"prolog": proc("/bin/true", user="nosuchuser_hx")})
    assert report["failed"] == 7 and out == ""
    assert 'can\'t get password entry for user "nosuchuser_hx"' in report["error"]


def test_a_plain_job_is_spawned_and_one_with_limits_forked():
    """posix_spawn (no copy of the shepherd) unless the set-up needs code
    between fork and exec: rlimits, nice, binding, a terminal."""
    child = shepherd.Child(argv=["/bin/true"], env={}, uid=0, gid=0, groups=[], cwd="/", stdin_path="/dev/null",
                           stdout_path="/dev/null", stderr_path="/dev/null", merge=True, exec_state=27,
                           owner=(0, 0, []))
    assert shepherd.spawnable(child)
    assert not shepherd.spawnable(child._replace(rlimits=((0, 1, 1),)))
    assert not shepherd.spawnable(child._replace(nice=5))
    assert not shepherd.spawnable(child._replace(cpus=(0,)))
    assert not shepherd.spawnable(child._replace(fds=(0, 1, 2)))


@pytest.mark.root
def test_a_spawned_job_of_another_user_holds_none_of_roots_ids(tmp):
    """The shepherd takes the owner's ids for the set-up and gives them
    back after the spawn; the job's real, effective and saved ids are all
    the owner's, its groups the owner's alone, and the shepherd (root
    again) still writes its files."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))
    from cellutil import ensure_user

    ensure_user("msgeuser1")
    pw = pwd.getpwnam("msgeuser1")
    os.chmod(tmp, 0o777)
    report, out = run_task(tmp, "grep -E '^(Uid|Gid|Groups):' /proc/self/status; pwd", uid=pw.pw_uid, gid=pw.pw_gid,
                           groups=[pw.pw_gid])
    ids = dict(line.split(":", 1) for line in out.splitlines()[:3])
    assert ids["Uid"].split() == [str(pw.pw_uid)] * 4, out
    assert ids["Gid"].split() == [str(pw.pw_gid)] * 4, out
    assert ids["Groups"].split() == [str(pw.pw_gid)], out
    assert out.splitlines()[3] == tmp and report["failed"] == 0 and str(report["usage"]["exit_status"]) == "0"
    assert os.stat(os.path.join(tmp, "t.o1")).st_uid == pw.pw_uid  # opened as the owner


@pytest.mark.root
def test_a_spawned_jobs_set_up_failures_name_the_owner(tmp):
    """A working directory or output file the owner cannot use: 8.1.9's
    message, the owner's euid in it, the state of that step (26, 28)."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))
    from cellutil import ensure_user

    ensure_user("msgeuser1")
    pw = pwd.getpwnam("msgeuser1")
    private = os.path.join(tmp, "private")
    os.mkdir(private, 0o700)
    report, _ = run_task(tmp, "true", uid=pw.pw_uid, gid=pw.pw_gid, cwd=private)
    assert report["failed"] == 28 and f"[{pw.pw_uid}:" in report["error"], report
    assert f"can't chdir to {private}: Permission denied" in report["error"]
    report, _ = run_task(tmp, "true", uid=pw.pw_uid, gid=pw.pw_gid, stdout_path=os.path.join(private, "o"))
    assert report["failed"] == 26 and f'can\'t open output file "{private}/o": Permission denied' in report["error"]
    report, _ = run_task(tmp, "true", shell="/nonexistent_sh")
    assert report["failed"] == 27 and 'unable to find shell "/nonexistent_sh"' in report["error"], report


def test_a_set_up_failures_system_message_is_worded_as_pythons(tmp):
    """The errno's text in a set-up failure is os.strerror's (glibc's, as
    8.1.9's shepherd has it), whatever C library the C shepherd was linked
    with: musl words these two differently ("Symbolic link loop", "Filename
    too long"), and the build gives the shepherd Python's words."""
    import errno

    loop = os.path.join(tmp, "loop")
    os.symlink(loop, loop)
    report, _ = run_task(tmp, "true", cwd=loop)
    assert report["failed"] == 28, report
    assert f"can't chdir to {loop}: {os.strerror(errno.ELOOP)}" in report["error"], report
    long_name = os.path.join(tmp, "o" * 300)
    report, _ = run_task(tmp, "true", stdout_path=long_name)
    assert report["failed"] == 26, report
    assert f'can\'t open output file "{long_name}": {os.strerror(errno.ENAMETOOLONG)}' in report["error"], report


def test_the_c_shepherd_is_linked_with_musl_where_the_build_had_it(implementation):
    """setup.py links the C shepherd with musl, statically, when
    ``musl-gcc`` is on the PATH: a static glibc program's start costs ~0.3 ms
    more in a virtual machine, once per task."""
    import shutil

    if implementation != "c":
        pytest.skip("the C shepherd's build")
    assert shepherd_plan.BINARY is not None
    with open(shepherd_plan.BINARY, "rb") as f:
        image = f.read()
    if not shutil.which("musl-gcc"):
        pytest.skip("no musl-gcc here: linked with the C library")
    assert b"GLIBC" not in image, "musl-gcc is here, but the shepherd was linked with glibc"
    phoff, = struct.unpack_from("<Q", image, 0x20)
    size, count = struct.unpack_from("<HH", image, 0x36)
    assert all(struct.unpack_from("<I", image, phoff + i * size)[0] != 3 for i in range(count)), \
        "linked dynamically (a PT_INTERP header)"


def test_limits_nice_and_binding_are_the_childs_alone(tmp):
    """queue_conf(5) RESOURCE LIMITS (per slot), priority and a -binding
    set: the job runs with them, the shepherd without (it writes its files)."""
    report, out = run_task(tmp, "ulimit -St; ulimit -Ht; ulimit -f; nice; grep Cpus_allowed_list /proc/self/status",
                           limits={"s_cpu": 100.0, "h_cpu": 200.0, "h_fsize": 1024000.0}, host_slots=2,
                           priority="5", binding={"mode": "set", "cpus": [0]})
    assert out.split()[:5] == ["200", "400", "2000", str(min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)),
                               "Cpus_allowed_list:"], out
    assert out.split()[5] == "0" and report["failed"] == 0, (out, report)


def test_a_job_deleted_before_its_shepherd_started_is_not_started(tmp):
    """The execd's ``signal`` file there already (a qdel before the start):
    neither the prolog nor the job runs, the epilog does."""
    def qdel(d: str) -> None:
        with open(os.path.join(d, "signal"), "w") as f:
            f.write("9\n")

    epi = script(tmp, "epi", "echo epilog")
    report, out = run_task(tmp, "echo job", {"prolog": proc(script(tmp, "pro", "echo prolog")), "epilog": proc(epi)},
                           before_start=qdel)
    assert out == "epilog\n" and report["failed"] == 0 and report["usage"]["start_time"] == "0", (out, report)


def test_a_job_whose_set_up_hangs_is_deleted_through_its_pid(tmp, implementation):
    """A job whose output file is a FIFO nobody reads hangs in its open,
    before its exec: its pid is in ``job_pid`` all the same (the C
    shepherd's child, vfork'd, publishes it before any step that may
    block), and a qdel (the execd's signal_dir) kills it; the shepherd then
    ends."""
    import signal
    import time

    if implementation == "python":
        pytest.skip("the Python shepherd's posix_spawn opens the outputs before it knows the pid (known limit)")
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    job_dir = tempfile.mkdtemp(dir=tmp)
    cfg = {
        "job_id": 1, "task_id": 1, "uid": os.getuid(), "gid": os.getgid(), "cwd": tmp,
        "stdout_path": fifo, "stderr_path": fifo, "stdin_path": "/dev/null", "merge": True,
        "shell": "/bin/sh", "binary": True, "command": "true", "args": [], "env": {"PATH": "/usr/bin:/bin"},
        "procedures": {}, "variables": {}, "pe_variables": {},
    }
    import json

    with open(os.path.join(job_dir, "config"), "w") as f:
        json.dump(cfg, f)
    pid = start_shepherd(job_dir)
    try:
        job_pid = None
        for _ in range(500):
            job_pid = task_dir.read_int(os.path.join(job_dir, "job_pid"))
            if job_pid:
                break
            time.sleep(0.01)
        assert job_pid, "no job_pid while the job's set-up hangs"
        time.sleep(0.1)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the shepherd ended: the open did not hang"
        task_dir.signal_dir(job_dir, signal.SIGKILL)
        for _ in range(500):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        assert done, "the shepherd still waits for its killed job"
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    finally:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # a writer still blocked in its open goes on
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    report = task_dir.read_results(job_dir)
    assert report["signal"] == signal.SIGKILL or report["exit_status"] == 128 + signal.SIGKILL, report


def test_a_starter_method_runs_the_job_with_the_shell_it_replaces_in_its_environment(tmp):
    starter = script(tmp, "starter", 'echo "$SGE_STARTER_SHELL_PATH $SGE_STARTER_SHELL_START_MODE $1"; exec "$@"')
    report, out = run_task(tmp, "/bin/echo", starter_method=starter, args=["hi"], shell="/bin/bash")
    assert out.splitlines() == ["/bin/bash posix_compliant /bin/echo", "hi"] and report["failed"] == 0, out


def test_a_script_in_unix_behavior_is_execd_itself(tmp):
    job = script(tmp, "job.sh", 'echo "$0 $1"')
    report, out = run_task(tmp, binary=False, script_file=job, shell_start_mode="unix_behavior", args=["a"])
    assert out == f"{job} a\n" and report["failed"] == 0, out
    report, out = run_task(tmp, binary=False, script_file=job, shell="/nonexistent_sh", args=["a"])
    assert report["failed"] == 27 and 'unable to find shell "/nonexistent_sh"' in report["error"], report


def test_the_plan_is_its_words_each_ended_by_a_nul_and_none_with_a_nul_in_one(tmp, implementation):
    """shepherd_plan.plan: NUL-terminated ``key=value`` strings (UTF-8, bytes
    that are not kept as they came); None when a value holds a NUL (no exec
    takes it: the Python shepherd says why)."""
    if implementation != "c":
        pytest.skip("the C shepherd's plan")
    seen: dict[str, object] = {}

    def keep_plan(job_dir: str) -> None:
        cfg = task_dir.read_config(job_dir)
        seen["plan"] = shepherd_plan.plan(job_dir, cfg)
        cfg["env"]["BAD"] = "a\0b"
        seen["with_nul"] = shepherd_plan.plan(job_dir, cfg)

    report, _ = run_task(tmp, "true", before_start=keep_plan, env={"PATH": "/usr/bin:/bin", "X": "é\udcff"})
    assert report["failed"] == 0
    plan = seen["plan"]
    assert isinstance(plan, bytes) and plan.endswith(b"\0end\0")
    words = plan.split(b"\0")
    assert words[-1] == b"" and words[0].startswith(b"dir=")
    assert "env=X=é\udcff".encode("utf-8", "surrogateescape") in words
    assert seen["with_nul"] is None
