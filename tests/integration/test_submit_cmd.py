"""qsub's options as the real 8.1.9 acts on them, through a real cell:
refusals at submission (-p, -l slots, -ckpt, -ar), -w w|e|v|p, -verify,
-now y, -a and the -m mails (tests/golden/qsub/, tests/golden/mail/)."""

from __future__ import annotations

import os
import re
import time

import pytest
from cellutil import Cell
from fake_mailer import install_mailer, mails
from golden import normalise, read_golden

from minisge.cell import short_hostname

pytestmark = pytest.mark.root


def _compare(cell, user, case: str, *, job_ids=(), paths=None, run_args=None, rc=None):
    """Run a golden case's qsub command as ``user`` in ``cell``; its exit code,
    stdout and stderr against 8.1.9's, both normalised alike."""
    out_g = read_golden(f"qsub/{case}")
    err_path = os.path.join(os.path.dirname(__file__), "..", "golden", "qsub", f"{case}.stderr")
    err_g = read_golden(f"qsub/{case}.stderr").text if os.path.exists(err_path) else ""
    argv = run_args if run_args is not None else out_g.command.split()[1:]
    r = cell.run("qsub", *argv, user=user.pw_name)
    ids = re.compile(r"(?:Your job|Job) (\d+)")  # the submitted job, or the one -w v numbered
    ours_ids = list(dict.fromkeys(int(m) for m in ids.findall(r.out + r.err)))
    theirs_ids = list(dict.fromkeys(int(m) for m in ids.findall(out_g.text + err_g)))
    mine = {"/home/sgetest": "HOME", "sgetest": "USER", **(paths or {})}
    ours = {user.pw_dir: "HOME", user.pw_name: "USER", cell.work: "/tmp/d4", **(paths or {})}
    assert r.rc == (out_g.exit if rc is None else rc), r
    hosts = [cell.host, short_hostname()]
    assert normalise(r.out, job_ids=ours_ids, hosts=hosts, paths=ours) == \
        normalise(out_g.text, job_ids=theirs_ids, hosts=["vm"], paths=mine)
    assert normalise(r.err, job_ids=ours_ids, hosts=hosts, paths=ours) == \
        normalise(err_g, job_ids=theirs_ids, hosts=["vm"], paths=mine)
    return r


@pytest.mark.parametrize("case", ["p_positive", "l_slots", "l_slots_shortcut_with_pe", "ckpt_unknown",
                                  "ar_unknown", "w_e_none"])
def test_refusals_at_submission_are_8_1_9s(cell, users, case):
    _compare(cell, users[0], case)
    assert cell.run("qstat", "-u", "*").out == ""  # nothing was submitted


def test_an_operator_may_raise_the_priority(cell, users):
    r = cell.run("qsub", "-p", "5", "-h", "-b", "y", "/bin/true")  # root: a manager
    assert r.rc == 0 and "has been submitted" in r.out


def test_w_w_warns_and_submits_w_v_and_w_p_only_verify(cell, users):
    r = _compare(cell, users[0], "w_w_no_suitable_queues")
    assert len(cell.qstat_states()) == 1
    _compare(cell, users[0], "w_v_found")
    _compare(cell, users[0], "w_p_found")
    assert len(cell.qstat_states()) == 1, r  # -w v and -w p submit nothing


def test_w_p_looks_at_the_cell_as_it_is(cell, users):
    cell.run("qmod", "-d", "all.q")
    r = cell.run("qsub", "-w", "p", "-b", "y", "/bin/true", user=users[0].pw_name)
    assert r.rc == 1 and r.err.endswith("verification: no suitable queues\nExiting.\n"), r
    r = cell.run("qsub", "-w", "v", "-b", "y", "/bin/true", user=users[0].pw_name)
    assert (r.rc, r.out) == (0, "verification: found suitable queue(s)\n")  # -w v: as if the cell were empty


@pytest.mark.parametrize("case", ["verify_binary", "verify_options"])
def test_verify_prints_the_job_as_8_1_9_and_submits_nothing(cell, users, case):
    env_keys = ("sge_o_path", "sge_o_shell")  # the submitter's own environment: not the same user
    g = read_golden(f"qsub/{case}")
    r = cell.run("qsub", *g.command.split()[1:], user=users[0].pw_name)
    assert r.rc == 0 and r.err == "", r

    def norm(text: str, home: str, user: str, hosts: list[str], workdir: str) -> str:
        for key in (*env_keys, "uid", "gid"):
            text = re.sub(rf"(?m)^({key}: *).*$", r"\1X", text)
        return normalise(text, hosts=hosts, paths={home: "HOME", user: "USER", workdir: "WORKDIR"})

    assert norm(r.out, users[0].pw_dir, users[0].pw_name, [cell.host, short_hostname()], cell.work) == \
        norm(g.text, "/home/sgetest", "sgetest", ["vm"], "/tmp/d4")
    assert cell.qstat_states() == {}


def test_verify_shows_the_script(cell, users):
    script = "#!/bin/sh\n#$ -N scriptv\necho hi\n"
    path = os.path.join(cell.work, "s.sh")
    with open(path, "w") as f:
        f.write(script)
    g = read_golden("qsub/verify_script")
    r = cell.run("qsub", "-verify", path, user=users[0].pw_name)
    assert r.rc == 0
    assert r.out.split("script_size:")[1] == g.text.split("script_size:")[1].replace("/tmp/d4/s.sh", path)


def test_now_y_that_cannot_be_scheduled_is_refused_and_gone(cell, users):
    _compare(cell, users[0], "now_y_unschedulable")
    assert cell.qstat_states() == {}
    assert cell.accounting_records() == []  # it never ran


def test_now_y_that_can_run_is_scheduled_at_once(cell, users):
    r = cell.run("qsub", "-now", "y", "-b", "y", "/bin/true", user=users[0].pw_name)
    job = int(r.out.split()[2])
    # qsub.c's words for an immediate job that started
    # (8.1.9's MSG_QSUB_YOURIMMEDIATEJOBXHASBEENSUCCESSFULLYSCHEDULED_S)
    assert (r.rc, r.err) == (0, "Waiting for immediate job to be scheduled.\n\n"
                                f"Your immediate job {job} has been successfully scheduled.\n"), r
    cell.wait_records(job)
    r = cell.run("qsub", "-now", "y", "-sync", "y", "-b", "y", "/bin/sh", "-c", "'exit 3'", user=users[0].pw_name)
    assert r.rc == 3 and "has been successfully scheduled" in r.err and "exited with exit code 3" in r.err, r


def _date_time(epoch: float) -> str:
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(epoch))


def test_a_holds_the_job_until_its_execution_time(cell, users):
    when = int(time.time()) + 10  # qstat -j below runs well before (the test checks it did)
    g = read_golden("qsub/a_then_qstat_j")
    job = cell.submit("-a", _date_time(when), "-N", "exectime", "-b", "y", "/bin/true", user=users[0].pw_name)
    r = cell.run("qstat", "-j", str(job))
    head = r.out.split("scheduling info:")[0]
    mine = {"/home/sgetest": "HOME", "sgetest": "USER", "/tmp/d4": "WORKDIR"}
    ours = {users[0].pw_dir: "HOME", users[0].pw_name: "USER", cell.work: "WORKDIR"}

    def norm(text, job_id, hosts, paths):
        text = re.sub(r"(?m)^(sge_o_path|sge_o_shell|uid|gid): *.*$", r"\1", text)  # the user's own
        text = re.sub(rf"\b{job_id}\b", "JOBID", text)
        return normalise(text, hosts=hosts, paths=paths)

    if time.time() < when:  # asked before the time came (a machine stalled 10 s would skip this)
        assert "execution time not reached" in r.out.split("scheduling info:")[1], r.out
        assert norm(head, job, [cell.host, short_hostname()], ours) == \
            norm(g.text.split("scheduling info:")[0], 298, ["vm"], mine)
        assert time.asctime(time.localtime(when)) in r.out
    rec = cell.wait_records(job)[0]
    assert int(rec[9]) >= when  # accounting(5) start_time: not before -a
    assert rec[12] == "0"


def test_m_sends_8_1_9s_mails_through_the_mailer(cell, users):
    install_mailer(cell)
    user = users[0].pw_name
    job = cell.submit("-m", "be", "-N", "mailtest", "-b", "y", "/bin/true", user=user)
    arr = cell.submit("-m", "bea", "-t", "1-2", "-N", "mailarr", "-b", "y", "/bin/false", user=user)
    cell.wait_records(job)
    cell.wait_records(arr, 2)
    records = cell.wait_for(lambda: len(m := mails(cell)) == 6 and m, what="6 mails")
    got = {}
    for rec in records:
        head, _, body = rec.partition("\n")
        argv0, flag, subject, to = head.split("|")
        assert (os.path.basename(argv0), flag, to) == ("mailer.sh", "-s", f"{user}@{short_hostname()}")
        got[subject] = body
    for case, ident in (("job.started", f"Job {job} (mailtest) Started"),
                        ("job.complete", f"Job {job} (mailtest) Complete"),
                        ("array_task1.started", f"Job-array task {arr}.1 (mailarr) Started"),
                        ("array_task2.complete", f"Job-array task {arr}.2 (mailarr) Complete")):
        g = read_golden(f"mail/{case}").text
        subject, _, body = g.partition("\n\n")
        def ids(text: str, single: int, array: int) -> str:  # the ids in subjects and first lines only
            return re.sub(rf"(Job {single}|task {array})\b", lambda m: m.group(0).split()[0] + " ID", text)

        theirs = normalise(ids(f"{subject}\n{body}", 124, 125), hosts=["vm"], paths={"sgetest": "USER"})
        ours = normalise(ids(f"Subject: {ident}\n{got[ident]}", job, arr), hosts=[cell.host], paths={user: "USER"})
        # times: ours and theirs in the same MM/DD/YYYY hh:mm:ss shape
        date = re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d")
        assert date.sub("DATE", ours) == date.sub("DATE", theirs)


def _job_env(cell, name: str, job: int) -> dict[str, str]:
    text = open(os.path.join(cell.work, f"{name}.o{job}")).read()
    return dict(line.split("=", 1) for line in text.splitlines())


@pytest.mark.parametrize("case,argv", [("binary_cwd", ["-cwd", "-N", "envbin", "-b", "y", "/usr/bin/env"]),
                                       ("pe_smp_2", ["-cwd", "-N", "envpe", "-pe", "smp", "2", "-b", "y",
                                                     "/usr/bin/env"])])
def test_the_job_environment_has_8_1_9s_variables(monkeypatch, users, case, argv):
    # the daemons start in the C locale, as the peer's (its jobs get LANG=C): Python coerces
    # LC_CTYPE for itself, and neither that nor any PYTHON* variable of the daemon reaches the job
    monkeypatch.setenv("LANG", "C")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    for name in ("LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MAIL", "/var/mail/x")  # qsub's SGE_O_MAIL, as the peer's user had one
    c = Cell().start()
    try:
        job = c.submit(*argv, user=users[0].pw_name)
        c.wait_records(job)
        ours = _job_env(c, argv[2], job)
    finally:
        c.cleanup()
    theirs = dict(line.split("=", 1) for line in read_golden(f"job_env/{case}").text.splitlines())
    assert sorted(ours) == sorted(theirs)
    for name in ("TERM", "LANG", "SHELL", "NSLOTS", "NHOSTS", "ENVIRONMENT", "SGE_TASK_ID", "RESTARTED"):
        assert ours[name] == theirs[name], name
    assert ours["REQNAME"] == ours["REQUEST"] == ours["JOB_NAME"] == argv[2]
    assert ours["JOB_SCRIPT"] == "/usr/bin/env"
    if case == "pe_smp_2":
        assert ours["SGE_RSH_COMMAND"] == theirs["SGE_RSH_COMMAND"] == "builtin"


def test_V_sends_no_locale_python_set_for_qsub(cell, monkeypatch):
    monkeypatch.setenv("LANG", "C")
    for name in ("LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    # qsub run as a process of its own in the C locale: Python sets LC_CTYPE=C.UTF-8 in it
    r = cell.run("qsub", "-terse", "-V", "-cwd", "-N", "envV", "-b", "y", "/usr/bin/env")
    job = int(r.out)
    cell.wait_records(job)
    env = _job_env(cell, "envV", job)
    assert env["LANG"] == "C" and "LC_CTYPE" not in env


@pytest.mark.parametrize("case", ["q_unknown_instance", "q_unknown_hostgroup", "w_v_no_suitable_queues"])
def test_queue_instances_that_do_not_exist_are_unknown_queues(cell, users, case):
    _compare(cell, users[0], case)
    for q in (f"all.q@{cell.host}", "all.q@t*", "*@*"):
        r = cell.run("qsub", "-w", "v", "-q", q, "-b", "y", "/bin/true", user=users[0].pw_name)
        assert (r.rc, r.out) == (0, "verification: found suitable queue(s)\n"), (q, r)


BIND_SCRIPT = """#!/bin/sh
grep Cpus_allowed_list /proc/self/status
echo "SGE_BINDING=$SGE_BINDING"
sleep 5
"""


def _bound(cell, user, *binding: str) -> list[str]:
    out = os.path.join(cell.work, f"bind{time.monotonic_ns()}.out")
    job = cell.submit(*binding, "-j", "y", "-o", out, user=user.pw_name, input=BIND_SCRIPT)
    cell.wait_records(job)
    return open(out).read().splitlines()


def test_binding_linear_binds_the_job_to_free_cores(cell, users):
    """8.1.9 on the peer: ``qsub -binding linear:1`` runs with
    Cpus_allowed_list 0 and SGE_BINDING=0 on an idle host."""
    first = sorted(os.sched_getaffinity(0))[0]
    assert _bound(cell, users[0], "-binding", "linear:1") == [f"Cpus_allowed_list:\t{first}",
                                                             f"SGE_BINDING={first}"]
    # env: the processors are named, the job is not bound
    lines = _bound(cell, users[0], "-binding", "env linear:1")
    assert lines[1] == f"SGE_BINDING={first}"
    assert lines[0] == "Cpus_allowed_list:\t" + open("/proc/self/status").read().split(
        "Cpus_allowed_list:\t")[1].splitlines()[0]
    # more cores than the host has: the job runs unbound, as in 8.1.9
    lines = _bound(cell, users[0], "-binding", f"linear:{os.cpu_count() + 1}")
    assert lines[1] == "SGE_BINDING="


def test_c_without_ckpt_and_pty_y_are_refused(cell, users):
    user = users[0].pw_name
    for occasion in ("s", "10"):  # the peer: "Unable to run job: checkpointing denied" / Exiting., exit 1
        r = cell.run("qsub", "-c", occasion, "-h", "-b", "y", "/bin/true", user=user)
        assert (r.rc, r.err) == (1, "Unable to run job: checkpointing denied\nExiting.\n"), r
    r = cell.run("qsub", "-c", "n", "-h", "-b", "y", "/bin/true", user=user)
    assert r.rc == 0, r  # as on the peer
    r = cell.run("qsub", "-pty", "y", "-b", "y", "/bin/true", user=user)
    assert r.rc == 1 and "-pty yes is not supported for batch jobs" in r.err, r


def test_qstat_j_shows_the_binding_and_the_cores_taken(cell, users):
    """8.1.9 on the peer, a -binding linear:1 job on a host of two cores:
    ``binding: set linear:1`` and ``binding 1: ScC`` while it runs."""
    job = cell.submit("-binding", "linear:1", "-b", "y", "/bin/sleep", "60", user=users[0].pw_name)

    def shown():
        out = cell.run("qstat", "-j", str(job)).out
        return re.search(r"(?m)^binding +1: +(\S+)$", out) and "c" in re.search(
            r"(?m)^binding +1: +(\S+)$", out).group(1) and out

    out = cell.wait_for(shown, what="the cores of the running job in qstat -j")
    assert "binding:                    set linear:1\n" in out
    cores = re.search(r"(?m)^binding +1: +(\S+)$", out).group(1)
    assert cores.count("c") == 1 and set(cores) <= set("SCcTt"), cores
    cell.run("qdel", str(job))
