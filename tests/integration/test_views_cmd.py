"""qstat's views of a running cell against what the real 8.1.9 printed
(tests/golden/): qstat -j of a job with -S, -l TIME requests in seconds
(qstat -j, qstat -r), and the finished jobs of qstat -s z."""

from __future__ import annotations

import os
import re
import xml.dom.minidom

import pytest
from cellutil import ensure_user, script, touch, until_file
from golden import normalise, read_golden

from minisge.formats import accounting

pytestmark = pytest.mark.root

USER = "msgeuser1"


@pytest.fixture(scope="module")
def user():
    return ensure_user(USER)


def _labels(text: str, job: int) -> list[tuple[str, str]]:
    """``qstat -j``'s (label, value) pairs (a value starts in column 29),
    the job's number in job_number and exec_file as JOBID."""
    pairs = [(ln[:28].rstrip().rstrip(":"), ln[28:]) for ln in text.splitlines()[1:] if ln[:28].strip()]
    return [(k, v.replace(str(job), "JOBID") if k in ("job_number", "exec_file") else v) for k, v in pairs]


# What differs between the peer's job and this cell's by nature: who and
# where the submitter is, and the scheduling info (the peer was asked
# before its scheduler's first pass over the held job).
_BY_NATURE = {"job_number", "submission_time", "owner", "uid", "group", "gid", "sge_o_home",
              "sge_o_log_name", "sge_o_path", "sge_o_shell", "sge_o_workdir", "sge_o_host",
              "mail_list", "script_file", "scheduling info"}


def test_qstat_j_of_a_job_with_S_shows_8_1_9s_lines(cell, user):
    path = script(cell, "d3rich.sh", "#$ -S /bin/bash\nsleep 30")
    job = cell.submit("-h", "-N", "d3rich", "-v", "FOO=bar,EMPTY", "-l", "h_rt=1:00:00,h_vmem=1G",
                      "-soft", "-l", "s_rt=100", "-hard", path, user=USER)
    r = cell.run("qstat", "-j", str(job), user=USER)
    assert (r.rc, r.err) == (0, ""), r
    gold = read_golden("qstat_-j_JOBID.shell_env_resources")
    ours = [(k, v) for k, v in _labels(r.out, job) if k not in _BY_NATURE]
    theirs = [(k, v) for k, v in _labels(gold.text, 52) if k not in _BY_NATURE]
    assert ours == theirs  # env_list starts with TERM=NONE: qsub gives every job TERM, as 8.1.9's
    assert ("shell_list", "NONE:/bin/bash") in ours
    assert ("hard resource_list", "h_rt=3600,h_vmem=1G") in ours


def test_qstat_j_of_a_job_with_S_on_the_command_line(cell, user):
    path = script(cell, "plain.sh", "sleep 30")
    job = cell.submit("-h", "-S", "/bin/sh", "-N", "d3S", path, user=USER)
    r = cell.run("qstat", "-j", str(job), user=USER)
    assert (r.rc, r.err) == (0, ""), r
    gold = read_golden("qstat_-j_JOBID.shell_S")
    ours = [(k, v) for k, v in _labels(r.out, job) if k not in _BY_NATURE]
    theirs = [(k, v) for k, v in _labels(gold.text, 53) if k not in _BY_NATURE]
    assert ours == theirs  # with env_list TERM=NONE: qsub gives every job TERM, as 8.1.9's


def test_qstat_r_shows_time_requests_in_seconds(cell, user):
    path = script(cell, "r.sh", "sleep 30")
    job = cell.submit("-h", "-N", "d3rich", "-l", "h_rt=1:00:00,h_vmem=1G", "-soft", "-l", "s_rt=100",
                      "-hard", path, user=USER)
    r = cell.run("qstat", "-r", user=USER)
    assert r.rc == 0, r
    gold = read_golden("qstat_-r.resources").text
    # the peer's job 52 block, from its line to the next job's
    start = gold.index("     52 ")
    want = gold[start:gold.index("     53 ")]
    got = r.out[r.out.index(f"{job:7d} "):]
    # the job line (but for its number, owner and date), then the -r lines alike
    assert got.splitlines()[0][8:27] == want.splitlines()[0][8:27]
    assert normalise(got.splitlines()[0][40:]) == normalise(want.splitlines()[0][40:])
    assert got.splitlines()[1:] == want.splitlines()[1:]


def test_qstat_s_z_lists_the_finished_jobs_in_the_order_they_finished(cell, user):
    def finished() -> list[int]:
        return [int(ln.split()[0]) for ln in cell.run("qstat", "-s", "z", user=USER).out.splitlines()[2:]]

    plain = cell.submit("-b", "y", "-N", "plain", "/bin/true", user=USER)
    cell.wait_for(lambda: finished() == [plain], what="job plain finished")
    array = cell.submit("-b", "y", "-N", "arr", "-t", "1-3", "/bin/true", user=USER)
    cell.wait_for(lambda: finished() == [plain, array], what="job arr finished")
    held = cell.submit("-h", "-b", "y", "-N", "held", "/bin/true", user=USER)
    assert cell.run("qdel", str(held), user=USER).rc == 0
    stop = os.path.join(cell.work, "stop")
    running = cell.submit("-N", "running", until_file(cell, stop), user=USER)
    cell.wait_for(lambda: cell.qstat_states().get(running) == "r", what="job running")

    r = cell.run("qstat", "-s", "z", user=USER)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0].startswith("job-ID  prior   name")
    rows = [ln.split() for ln in lines[2:]]
    assert [(int(w[0]), w[2], w[4]) for w in rows] == [(plain, "plain", "z"), (array, "arr", "z"),
                                                         (held, "held", "z")]
    # the submission time, no queue, the slots, an array's tasks
    line = lines[3]
    assert line[66:] == " " * 31 + "    1 1-3:1"
    # as 8.1.9: a plain listing shows no finished job, -s z no running one
    assert plain not in cell.qstat_states()
    r = cell.run("qstat", "-s", "rz", user=USER)
    assert [int(ln.split()[0]) for ln in r.out.splitlines()[2:]] == [running, plain, array, held]

    r = cell.run("qstat", "-f", "-s", "z", user=USER)
    assert ("\n" + "#" * 76 + "\n --  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  --  \n"
            + "#" * 76 + "\n") in r.out
    r = cell.run("qstat", "-s", "z", "-xml", user=USER)
    doc = xml.dom.minidom.parseString(r.out)
    zombies = [e for e in doc.getElementsByTagName("job_list") if e.getAttribute("state") == "zombie"]
    assert [int(e.getElementsByTagName("JB_job_number")[0].firstChild.data) for e in zombies] == [plain, array,
                                                                                                   held]
    touch(stop)


def test_finished_jobs_keeps_as_many_as_sge_conf_says(cell, user):
    conf = cell.run("qconf", "-sconf").out
    path = os.path.join(cell.work, "global")
    with open(path, "w") as f:
        f.write("\n".join("finished_jobs                2" if ln.startswith("finished_jobs ") else ln
                          for ln in conf.splitlines()) + "\n")
    r = cell.run("qconf", "-Mconf", path)
    assert r.rc == 0, r
    def finished() -> list[int]:
        return [int(ln.split()[0]) for ln in cell.run("qstat", "-s", "z", user=USER).out.splitlines()[2:]]

    jobs: list[int] = []
    for n in range(3):
        jobs.append(cell.submit("-b", "y", "-N", f"j{n}", "/bin/true", user=USER))
        cell.wait_for(lambda: finished() == jobs[-2:], what=f"job j{n} finished")


def test_the_usage_of_a_running_job_shows_in_qstat_j_and_ext(cell, user):
    stop = os.path.join(cell.work, "stop-busy")
    busy = script(cell, "busy.sh", f"while [ ! -e {stop} ]; do :; done")  # burns CPU until told
    job = cell.submit("-N", "busy", busy, user=USER)

    def usage_line() -> str:
        out = cell.run("qstat", "-j", str(job), user=USER).out
        lines = [ln for ln in out.splitlines() if ln.startswith("usage ")]
        return lines[0] if lines and "cpu=00:00:00," not in lines[0] else ""

    line = cell.wait_for(usage_line, what="a usage report with CPU time")
    assert line.startswith("usage         1:            cpu=00:00:")
    assert ", mem=" in line and " GB s, io=" in line and " GB, vmem=" in line and ", maxvmem=" in line
    assert "vmem=N/A" not in line  # a live shell has a virtual size
    ext = cell.run("qstat", "-ext", user=USER).out.splitlines()[2]
    cpu, mem, io = ext.split()[8:11]  # after the state
    assert cpu.startswith("0:00:") and float(mem) >= 0 and float(io) >= 0, ext
    # -xml: the running task with its usage (tests/golden/qstat_-j_JOBID_-xml.array_usage)
    doc = xml.dom.minidom.parseString(cell.run("qstat", "-j", str(job), "-xml", user=USER).out)
    task = doc.getElementsByTagName("JB_ja_tasks")[0].getElementsByTagName("ulong_sublist")[0]
    names = [e.firstChild.data for e in task.getElementsByTagName("UA_name")]
    assert names == ["cpu", "mem", "io", "iow", "vmem", "maxvmem"]
    assert [c.tagName for c in task.childNodes if c.nodeType == c.ELEMENT_NODE] == [
        "JAT_status", "JAT_task_number", "JAT_scaled_usage_list", "JAT_start_time", "JAT_ntix"]
    touch(stop)
    cell.wait_records(job)


# the peer's job 308 (tests/golden/qstat_-j_JOBID.all_options) was submitted as
#   qsub -h -N d3all -pe smp 1-2 -t 1-3:2 -tc 2 -hold_jid 144 -o /tmp/d3o -e /tmp/d3e -q all.q
#        -soft -q all.q -hard -P d3prj -A d3acct -cwd -M sgetest@vm -m be -r y -notify -p -10
#        -a 203001010000 -ac ctx=1 -masterq all.q -j y -R y -v A=1 -l h_rt=100 -b y /bin/echo hello world
# from /tmp, with job 144 pending (here -M names another host: minisge's qmaster tells a -M of
# the submitter's own address from qsub's default recipient by the address alone)
def _all_options_job(cell) -> tuple[int, int]:
    prj = os.path.join(cell.work, "d3prj")
    with open(prj, "w") as f:
        f.write("name d3prj\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    assert cell.run("qconf", "-Aprj", prj).rc == 0
    pre = cell.submit("-h", "-b", "y", "-N", "pre", "/bin/true", user=USER)
    job = cell.submit("-h", "-N", "d3all", "-pe", "smp", "1-2", "-t", "1-3:2", "-tc", "2", "-hold_jid", str(pre),
                      "-o", "/tmp/d3o", "-e", "/tmp/d3e", "-q", "all.q", "-soft", "-q", "all.q", "-hard",
                      "-P", "d3prj", "-A", "d3acct", "-cwd", "-M", f"{USER}@mailhost", "-m", "be", "-r", "y", "-notify",
                      "-p", "-10", "-a", "203001010000", "-ac", "ctx=1", "-masterq", "all.q", "-j", "y", "-R", "y",
                      "-v", "A=1", "-l", "h_rt=100", "-b", "y", "/bin/echo", "hello", "world", user=USER, cwd="/tmp")
    return pre, job


def test_qstat_j_of_a_job_with_every_option_shows_8_1_9s_lines(cell, user):
    pre, job = _all_options_job(cell)
    r = cell.run("qstat", "-j", str(job), user=USER)
    assert (r.rc, r.err) == (0, ""), r
    gold = read_golden("qstat_-j_JOBID.all_options")
    by_nature = _BY_NATURE | {"jid_predecessor_list (req)", "jid_predecessor_list", "cwd"}
    ours = [(k, v) for k, v in _labels(r.out, job) if k not in by_nature and not k.startswith(" ")]
    theirs = [(k, v) for k, v in _labels(gold.text, 308) if k not in by_nature and not k.startswith(" ")]
    assert ours == theirs
    labels = [k for k, _ in _labels(r.out, job)]
    assert labels.index("jid_predecessor_list (req)") + 1 == labels.index("jid_predecessor_list")
    assert ("jid_predecessor_list", str(pre)) in _labels(r.out, job)


def test_qstat_r_of_a_job_with_every_option_shows_8_1_9s_lines(cell, user):
    pre, job = _all_options_job(cell)
    r = cell.run("qstat", "-r", user=USER)
    gold = read_golden("qstat_-r.all_options").text
    want = gold[gold.index("    308 "):].split("\n", 1)[1]
    want = want[:want.index("Binding:")]
    got = r.out[r.out.index(f"{job:7d} "):].split("\n", 1)[1]
    got = got[:got.index("Binding:")]
    assert got == want.replace("(request): 144", f"(request): {pre}").replace("Jobs: 144", f"Jobs: {pre}")


def _job_elements(text: str) -> list[tuple[str, str]]:
    """(tag, text) of every element of the first job of a ``qstat -j -xml``,
    depth first (the environment's variables left out: qsub's, not the view's)."""
    doc = xml.dom.minidom.parseString(text)
    job = doc.getElementsByTagName("djob_info")[0].getElementsByTagName("element")[0]
    out: list[tuple[str, str]] = []

    def walk(node) -> None:
        for child in node.childNodes:
            if child.nodeType != child.ELEMENT_NODE:
                continue
            if child.tagName == "JB_env_list":
                out.append((child.tagName, ""))
                continue
            texts = [c.data for c in child.childNodes if c.nodeType == c.TEXT_NODE and c.data.strip()]
            out.append((child.tagName, texts[0] if texts else ""))
            walk(child)
    walk(job)
    return out


def test_qstat_j_xml_of_a_job_with_every_option_has_8_1_9s_elements(cell, user):
    pre, job = _all_options_job(cell)
    r = cell.run("qstat", "-j", str(job), "-xml", user=USER)
    assert (r.rc, r.err) == (0, ""), r
    gold = read_golden("qstat_-j_JOBID_-xml.all_options").text
    by_nature = {"JB_job_number", "JB_submission_time", "JB_owner", "JB_uid", "JB_group", "JB_gid", "MR_user",
                 "MR_host", "JB_exec_file", "JRE_job_number", "JRE_job_name", "JB_nurg"}
    ours = [(t, "" if t in by_nature else v) for t, v in _job_elements(r.out)]
    theirs = [(t, "" if t in by_nature else v) for t, v in _job_elements(gold)]
    assert ours == theirs
    doc = xml.dom.minidom.parseString(r.out)
    numbers = [e.firstChild.data for e in doc.getElementsByTagName("JRE_job_number")]
    assert numbers == [str(pre), "0", "0"]  # the predecessor, then the request list twice


def test_a_job_waiting_for_its_predecessor_says_so_in_qstat_j(cell, user):
    pre = cell.submit("-h", "-b", "y", "-N", "pre", "/bin/true", user=USER)
    held = cell.submit("-h", "-hold_jid", str(pre), "-b", "y", "-N", "held", "/bin/true", user=USER)
    dep = cell.submit("-hold_jid", str(pre), "-b", "y", "-N", "dep", "/bin/true", user=USER)
    r = cell.run("qstat", "-j", user=USER)
    gold = read_golden("qstat_-j.hold_and_dependency").text
    # after the global messages: the held job under its hold alone, the other under dependencies
    # (8.1.9's capture: held 308, waiting 314; here the predecessor is held too)
    want = gold[gold.index("Jobs dropped"):].replace("\t308", f"\t{pre},\t{held}").replace("\t314", f"\t{dep}")
    assert r.out[r.out.index("Jobs dropped"):] == want
    r = cell.run("qstat", "-j", str(dep), user=USER)
    # as the peer's job 314 (tests/golden/qstat_-j_JOBID.dependency) ends
    assert read_golden("qstat_-j_JOBID.dependency").text.endswith("job dropped because of job dependencies\n")
    assert r.out.endswith("job dropped because of job dependencies\n")
    assert "job dependencies" not in cell.run("qstat", "-j", str(held), user=USER).out


def _error_reason(text: str) -> str:
    """qstat -j's error reason line, its date and [uid:pid] made neutral."""
    line = next(ln for ln in text.splitlines() if ln.startswith("error reason"))
    return re.sub(r"\[\d+:\d+\]", "[UID:PID]", normalise(line))


# the peer's jobs 173-175, submitted from /tmp by sgetest:
#   qsub -b y -N d3nocwd -wd /nonexistent_d3 /bin/true
#   qsub -N d3nosh -S /nonexistent_sh /tmp/d3rich.sh
#   qsub -b y -N d3noout -o /nonexistent_d3/out /bin/true
@pytest.mark.parametrize("case,args,failed", [
    ("eqw_173", ("-b", "y", "-N", "d3nocwd", "-wd", "/nonexistent_d3", "/bin/true"), "28"),
    ("eqw_174", ("-N", "d3nosh", "-S", "/nonexistent_sh", "SCRIPT"), "27"),
    ("eqw_175", ("-b", "y", "-N", "d3noout", "-o", "/nonexistent_d3/out", "/bin/true"), "26"),
])
def test_a_job_that_could_not_start_shows_8_1_9s_error_reason_and_accounting(cell, user, case, args, failed):
    path = script(cell, "d3rich.sh", "sleep 1")
    job = cell.submit(*(path if a == "SCRIPT" else a for a in args), user=USER, cwd="/tmp")
    cell.wait_for(lambda: cell.qstat_states().get(job) == "Eqw", what=f"job {job} in Eqw")
    r = cell.run("qstat", "-j", str(job), user=USER)
    gold = read_golden(f"qstat_-j_JOBID.{case}").text
    assert _error_reason(r.out) == _error_reason(gold)
    assert f"[{user.pw_uid}:" in r.out
    assert r.out.endswith("Job is in error state\n") and gold.endswith("Job is in error state\n")
    # accounted as never started (8.1.9's record: submission time, zero start, end, exit)
    f = dict(zip(accounting.FIELD_NAMES, cell.wait_records(job)[0], strict=True))
    assert (f["failed"], f["start_time"], f["end_time"], f["exit_status"], f["ru_wallclock"]) == \
        (failed, "0", "0", "0", "0")
    assert int(f["submission_time"]) > 0


# the peer's jobs 486-492, held, submitted by sgetest from /tmp (tests/golden/qstat_-r.binding)
_BINDINGS = ("linear:1", "linear:2:0,1", "striding:2:2", "striding:2:2:0,1", "explicit:0,0:0,1",
             "env linear:2", "pe striding:1:1")


def _binding_jobs(cell) -> list[int]:
    return [cell.submit("-b", "y", "-h", "-binding", b, "/bin/sleep", "60", user=USER, cwd="/tmp")
            for b in _BINDINGS]


def test_qstat_r_shows_the_binding_of_a_job_as_8_1_9(cell, user):
    jobs = _binding_jobs(cell)
    r = cell.run("qstat", "-r", user=USER)
    assert (r.rc, r.err) == (0, ""), r
    gold = read_golden("qstat_-r.binding")
    # each job's -r lines (the job lines differ by nature: job id, user, date)

    def r_lines(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln.startswith("       ")]
    assert r_lines(r.out) == r_lines(gold.text)
    assert len(r_lines(r.out)) == 4 * len(jobs)
    assert "       Binding:          set linear:2:0,1" in r_lines(r.out)


def _jb_binding(text: str) -> str:
    return text[text.index("<JB_binding>"):text.index("</JB_binding>")]


@pytest.mark.parametrize("case,spec", [("binding", "linear:1"), ("binding_explicit", "explicit:0,0:0,1")])
def test_qstat_j_xml_shows_the_binding_of_a_job_as_8_1_9(cell, user, case, spec):
    job = cell.submit("-b", "y", "-h", "-binding", spec, "/bin/sleep", "60", user=USER, cwd="/tmp")
    r = cell.run("qstat", "-j", str(job), "-xml", user=USER)
    assert (r.rc, r.err) == (0, ""), r
    assert _jb_binding(r.out) == _jb_binding(read_golden(f"qstat_-j_JOBID_-xml.{case}").text)
    ours = [(t, v) for t, v in _job_elements(r.out) if t.startswith(("JB_binding", "BN_", "binding"))]
    theirs = [(t, v) for t, v in _job_elements(read_golden(f"qstat_-j_JOBID_-xml.{case}").text)
              if t.startswith(("JB_binding", "BN_", "binding"))]
    assert ours == theirs
