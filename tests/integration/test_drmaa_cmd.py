"""DRMAA 1.0 (minisge/drmaa/libdrmaa.so) driven by the real ``drmaa`` Python
package (PyPI drmaa 0.7.9, the binding Snakemake's DRMAA executor uses)
through a real cell: every call of the C API that package binds.

What Grid Engine 8.1.9's own libdrmaa reports for the same calls (Debian's
gridengine-drmaa1.0, driven by the same package against the real cell, as
the report of issue 17 says) is what these tests expect: the error codes and
texts, the exit status / signal / aborted flags of wait() for a job that
fails, one deleted and one over its h_rt, and the names of the usage values.

One cell and one DRMAA session for the module (the library has one session
per process, as Grid Engine's has); the session's jobs run as root.  With
MINISGE_TEST_BINARY (packaging/ci.sh), the tarball's lib/libdrmaa.so.
"""

from __future__ import annotations

import os
import pwd

import pytest
from cellutil import BINARY, Cell

from minisge.drmaa import library_path

pytestmark = pytest.mark.root

# the usage names (and their order) of wait() for a job that ran, as Grid
# Engine 8.1.9's libdrmaa returns them
USAGE_NAMES = [
    "io", "iow", "mem", "cpu", "vmem", "maxvmem", "submission_time", "priority", "exit_status", "signal",
    "start_time", "end_time", "ru_wallclock", "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss", "ru_ismrss",
    "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd",
    "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw", "acct_cpu", "acct_mem", "acct_io", "acct_iow",
    "acct_maxvmem",
]

FOREVER = -1


@pytest.fixture(scope="module")
def cell():
    c = Cell(slots=4).start()
    saved = dict(os.environ)
    # the library runs the cell's commands with the caller's environment
    os.environ.update(c.env())
    if BINARY:  # the tarball's library, which runs the commands of bin/ beside its lib/
        os.environ["DRMAA_LIBRARY_PATH"] = os.path.join(os.path.dirname(BINARY), "lib", "libdrmaa.so")
    else:
        os.environ["DRMAA_LIBRARY_PATH"] = library_path()
    try:
        yield c
    finally:
        os.environ.clear()
        os.environ.update(saved)
        c.cleanup()


@pytest.fixture(scope="module")
def drmaa(cell):
    import drmaa  # loads DRMAA_LIBRARY_PATH: set by the cell fixture
    return drmaa


@pytest.fixture(scope="module")
def session(drmaa):
    s = drmaa.Session()
    s.initialize()
    try:
        yield s
    finally:
        s.exit()


def template(session, command: str, *args: str, **attributes):
    jt = session.createJobTemplate()
    jt.remoteCommand = command
    jt.args = list(args)
    for name, value in attributes.items():
        setattr(jt, name, value)
    return jt


def run(session, command: str, *args: str, **attributes) -> str:
    jt = template(session, command, *args, **attributes)
    try:
        return session.runJob(jt)
    finally:
        session.deleteJobTemplate(jt)


def state_becomes(cell: Cell, session, job: str, state: str) -> None:
    cell.wait_for(lambda: session.jobStatus(job) == state, what=f"job {job} {state}")


def test_session_facts(drmaa, session):
    assert (drmaa.Session.version.major, drmaa.Session.version.minor) == (1, 0)
    assert drmaa.Session.drmsInfo == "SGE 8.1.9"
    assert drmaa.Session.drmaaImplementation.startswith("minisge ")
    assert session.contact.startswith("session=")
    with pytest.raises(drmaa.errors.AlreadyActiveSessionException,
                       match="Initialization failed due to existing DRMAA session."):
        session.initialize()
    jt = session.createJobTemplate()
    # Grid Engine's list less drmaa_submit_as_euid (not in DRMAA 1.0, not supported)
    assert jt.attributeNames == [
        "drmaa_remote_command", "drmaa_js_state", "drmaa_wd", "drmaa_job_name", "drmaa_input_path",
        "drmaa_output_path", "drmaa_error_path", "drmaa_join_files", "drmaa_job_category",
        "drmaa_native_specification", "drmaa_block_email", "drmaa_start_time"]
    jt.jobName = "x"
    jt.args = ["a", "b c"]
    jt.jobEnvironment = {"A": "1"}
    assert (jt.jobName, jt.args, jt.jobEnvironment) == ("x", ["a", "b c"], {"A": "1"})
    session.deleteJobTemplate(jt)


def test_a_failing_job_its_exit_status_usage_files_and_environment(cell, drmaa, session):
    wd = os.path.join(cell.work, "one")
    os.makedirs(wd)
    job = run(session, "/bin/sh", "-c", 'echo "$FOO|$PWD|$JOB_NAME|$1"; echo err >&2; exit 3', "x", "y z",
              jobName="drmaa1", workingDirectory=wd, outputPath=":$drmaa_wd_ph$/out",
              errorPath=":" + wd + "/err", jobEnvironment={"FOO": "a,b 'c'"})
    # ended, not yet waited for: done (Grid Engine: it ran, whatever its exit status)
    state_becomes(cell, session, job, drmaa.JobState.DONE)
    info = session.wait(job, FOREVER)
    assert (info.jobId, info.hasExited, info.exitStatus, info.hasSignal, info.wasAborted) == (job, True, 3, False,
                                                                                                 False)
    assert list(info.resourceUsage) == USAGE_NAMES
    assert info.resourceUsage["exit_status"] == "3.0000" and info.resourceUsage["signal"] == "0.0000"
    assert float(info.resourceUsage["end_time"]) >= float(info.resourceUsage["start_time"]) > 0
    with open(os.path.join(wd, "out")) as f:
        assert f.read() == f"a,b 'c'|{wd}|drmaa1|y z\n"
    with open(os.path.join(wd, "err")) as f:
        assert f.read() == "err\n"
    # reaped: the session knows it no more (Grid Engine's words)
    with pytest.raises(drmaa.errors.InvalidJobException, match="The job specified by the 'jobid' does not exist."):
        session.jobStatus(job)
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.wait(job, 0)


def test_hold_release_suspend_resume_and_a_deleted_job(cell, drmaa, session):
    job = run(session, "/bin/sleep", "100", jobSubmissionState=drmaa.JobSubmissionState.HOLD_STATE)
    assert session.jobStatus(job) == drmaa.JobState.USER_ON_HOLD
    session.control(job, drmaa.JobControlAction.RELEASE)
    assert session.jobStatus(job) in (drmaa.JobState.QUEUED_ACTIVE, drmaa.JobState.RUNNING)
    state_becomes(cell, session, job, drmaa.JobState.RUNNING)
    session.control(job, drmaa.JobControlAction.SUSPEND)
    assert session.jobStatus(job) == drmaa.JobState.USER_SUSPENDED
    session.control(job, drmaa.JobControlAction.RESUME)
    assert session.jobStatus(job) == drmaa.JobState.RUNNING
    with pytest.raises(drmaa.errors.ExitTimeoutException, match="time-out condition"):
        session.wait(job, drmaa.Session.TIMEOUT_NO_WAIT)
    session.control(job, drmaa.JobControlAction.TERMINATE)
    info = session.wait(job, FOREVER)
    # Grid Engine: aborted, neither exited nor signaled; the usage of the run
    assert (info.wasAborted, info.hasExited, info.hasSignal) == (True, False, False)
    assert info.resourceUsage["exit_status"] == "137.0000" and list(info.resourceUsage) == USAGE_NAMES
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.control(job, drmaa.JobControlAction.TERMINATE)


def test_a_job_over_its_h_rt_and_one_killed_by_a_signal(cell, drmaa, session):
    over = run(session, "/bin/sleep", "60", nativeSpecification="-l h_rt=1")
    killed = run(session, "/bin/sh", "-c", "kill -TERM $$")
    info = session.wait(over, FOREVER)
    assert (info.hasSignal, info.terminatedSignal, info.hasExited, info.wasAborted) == (True, "SIGKILL", False,
                                                                                        False)
    assert (info.resourceUsage["exit_status"], info.resourceUsage["signal"]) == ("137.0000", "910.0000")
    info = session.wait(killed, FOREVER)
    assert (info.hasSignal, info.terminatedSignal) == (True, "SIGTERM")
    assert info.resourceUsage["signal"] == "916.0000"


def test_bulk_jobs_synchronize_and_the_session_wide_calls(cell, drmaa, session):
    wd = os.path.join(cell.work, "bulk")
    os.makedirs(wd)
    jt = template(session, "/bin/sh", "-c", "echo $SGE_TASK_ID", workingDirectory=wd,
                  outputPath=":$drmaa_wd_ph$/b.$drmaa_incr_ph$", joinFiles=True)
    jobs = session.runBulkJobs(jt, 1, 5, 2)
    session.deleteJobTemplate(jt)
    number = jobs[0].split(".")[0]
    assert jobs == [f"{number}.1", f"{number}.3", f"{number}.5"]
    session.synchronize(jobs, FOREVER, True)
    for t in (1, 3, 5):
        with open(os.path.join(wd, f"b.{t}")) as f:
            assert f.read() == f"{t}\n"
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.wait(jobs[0], 0)
    # hold and terminate every job of the session; a job deleted before it
    # ran has no usage (Grid Engine: DRMAA_ERRNO_NO_RUSAGE)
    held = run(session, "/bin/sleep", "100", jobSubmissionState=drmaa.JobSubmissionState.HOLD_STATE)
    session.control(drmaa.Session.JOB_IDS_SESSION_ALL, drmaa.JobControlAction.HOLD)
    assert session.jobStatus(held) == drmaa.JobState.USER_ON_HOLD
    session.control(drmaa.Session.JOB_IDS_SESSION_ALL, drmaa.JobControlAction.TERMINATE)
    state_becomes(cell, session, held, drmaa.JobState.FAILED)  # it never ran
    # (the package raises a bare Exception for code 24)
    with pytest.raises(Exception,
                       match="^code 24: no usage information was returned for the completed job$"):
        session.wait(drmaa.Session.JOB_IDS_SESSION_ANY, FOREVER)
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.wait(drmaa.Session.JOB_IDS_SESSION_ANY, 0)
    # a start time in the past: the job runs at once; $drmaa_hd_ph$: the home directory
    job = run(session, "/bin/pwd", startTime="2020/01/01 00:00", workingDirectory="$drmaa_hd_ph$",
              outputPath=":" + os.path.join(wd, "pwd"))
    assert session.wait(job, FOREVER).exitStatus == 0
    with open(os.path.join(wd, "pwd")) as f:
        assert f.read() == pwd.getpwuid(os.geteuid()).pw_dir + "\n"


def test_refusals_are_grid_engines(cell, drmaa, session):
    with pytest.raises(drmaa.errors.DeniedByDrmException, match='^code 17: unknown resource "nosuch"$'):
        run(session, "/bin/true", nativeSpecification="-l nosuch=1")
    with pytest.raises(drmaa.errors.DeniedByDrmException, match='^code 17: invalid option argument "-bogus"$'):
        run(session, "/bin/true", nativeSpecification="-bogus")
    with pytest.raises(drmaa.errors.DeniedByDrmException,
                       match=r"increment placeholder \"\$drmaa_incr_ph\$\" is only allowed in pathes for bulk jobs"):
        run(session, "/bin/true", outputPath=":/tmp/$drmaa_incr_ph$")
    with pytest.raises(drmaa.errors.DeniedByDrmException, match="Error parsing DRMAA date string"):
        run(session, "/bin/true", startTime="bogus")
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.jobStatus("9999999")
    with pytest.raises(drmaa.errors.InvalidJobException):
        session.wait("9999999", 0)
    # nothing of these reached the cell
    assert cell.qstat_states() == {}
