"""qalter(1) and qresub(1) with a real cell, against the answers of the real
8.1.9 (tests/golden/qalter, tests/golden/qresub, captured with the peer's
submit users sgetest and sgetest2 on its host vm): each change says what it
modified in 8.1.9's words and order, qstat -j shows it, a refused change
changes nothing, and the job as changed survives a restart of the qmaster."""

from __future__ import annotations

import os
import re

import pytest
from cellutil import script
from golden import normalise as golden_normalise
from golden import read_golden

_JOB_REF = re.compile(r'\bjob(?:-array task)? "?(\d+)')


def _norm(text: str, users: list[str]) -> str:
    """Job ids numbered in the order the text names them (both cells' ids
    differ), hosts, and the users (the peer's sgetest, sgetest2 are the
    test's two users)."""
    ids: list[int] = []
    for m in _JOB_REF.finditer(text):
        if int(m.group(1)) not in ids:
            ids.append(int(m.group(1)))
    return golden_normalise(text, job_ids=ids, hosts=("vm", "testhost"),
                            users={users[0]: "FIRSTUSER", users[1]: "SECONDUSER",
                                   "sgetest": "FIRSTUSER", "sgetest2": "SECONDUSER"})


def check(cell, case: str, argv: list[str], names: list[str], user: str | None = None):
    """Run ``qalter argv`` (or qresub, by the case's directory) as ``user``
    (the first test user unless said) and compare its exit status, stdout
    and stderr with the capture of 8.1.9."""
    command = case.split("/")[0]
    g = read_golden(case)
    try:
        err_text = read_golden(case + ".stderr").text
    except FileNotFoundError:
        err_text = ""
    r = cell.run(command, *argv, user=user or names[0])
    assert r.rc == g.exit, (case, r)
    assert _norm(r.out, names) == _norm(g.text, names), (case, r)
    assert _norm(r.err, names) == _norm(err_text, names), (case, r)
    return r


def held_job(cell, user: str, *args: str) -> int:
    return cell.submit("-h", *args, "-b", "y", "/bin/true", user=user)


def detail(cell, job: int, user: str) -> dict[str, str]:
    r = cell.run("qstat", "-j", str(job), user=user)
    assert r.rc == 0, r
    out = {}
    for line in r.out.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            out[key] = value.strip()
    return out


@pytest.fixture
def names(users):
    return [u.pw_name for u in users]


# ------------------------------------------------------------------ help and usage

def test_help_and_usage_as_8_1_9(cell, names):
    for case, argv in (("qalter/qalter_-help", ["-help"]), ("qalter/qalter.no_args", []),
                       ("qresub/qresub_-help", ["-help"]), ("qresub/qresub.no_args", [])):
        check(cell, case, argv, names)


# ------------------------------------------------------------------ changes

def test_every_field_changed_says_so_in_8_1_9_order_and_qstat_j_shows_it(cell, names):
    user = names[0]
    job = held_job(cell, user)
    argv = ("-N newname -a 202612010000 -A acct1 -l h_rt=100 -m be -M a@b -notify -p -5 -q all.q -r y "
            "-S /bin/bash -v X=1 -wd /tmp -js 5 -ac a=1,b -o /tmp/o.txt -e /tmp/e.txt -j y -R y").split()
    check(cell, "qalter/qalter.many_fields", [*argv, str(job)], names)
    peer = {}
    for line in read_golden("qalter/qstat_-j.after_many_fields").text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            peer[key] = value.strip()
    mine = detail(cell, job, user)
    for key in ("job_name", "account", "cwd", "hard resource_list", "mail_options", "mail_list", "notify",
                "priority", "hard_queue_list", "restart", "stdout_path_list", "stderr_path_list", "merge",
                "reserve", "shell_list", "env_list", "context"):
        assert mine.get(key) == peer[key], (key, mine.get(key), peer[key])


@pytest.mark.parametrize("case,argv", [
    ("pe", ["-pe", "smp", "1"]),
    ("soft", ["-soft", "-l", "arch=lx-amd64", "-q", "all.q"]),
    ("context", ["-ac", "a=1", "-dc", "a", "-sc", "x=2"]),
    ("cwd", ["-cwd"]),
    ("c", ["-c", "s"]),
    ("no_option", []),
    ("p_increase", ["-p", "10"]),
    ("q_unknown", ["-q", "nosuch.q"]),
    ("l_unknown", ["-l", "nosuch=1"]),
    ("l_slots", ["-l", "slots=2"]),
    ("pe_unknown", ["-pe", "nosuch", "1"]),
    ("ckpt_unknown", ["-ckpt", "foo"]),
    ("N_digit", ["-N", "1abc"]),
    ("h_o", ["-h", "o"]),
    ("h_n", ["-h", "n"]),
    ("tc_not_array", ["-tc", "2"]),
    ("dl_not_deadline_user", ["-dl", "202612010000"]),
    ("b_invalid", ["-b", "y"]),
    ("sync_unknown", ["-sync", "y"]),
    ("h_bad_list", ["-h", "x"]),
    ("p_bad", ["-p", "5000"]),
])
def test_one_option_on_a_held_job_as_8_1_9(cell, names, case, argv):
    job = held_job(cell, names[0])
    check(cell, f"qalter/qalter.{case}", [*argv, str(job)], names)


def test_qsub_refuses_slots_as_a_resource_as_qalter_does(cell, names):
    check(cell, "qsub/qsub.l_slots", ["-l", "slots=1", "-b", "y", "/bin/true"], names)


def test_a_refused_change_changes_nothing_of_the_job(cell, names):
    user = names[0]
    job = held_job(cell, user, "-N", "before")
    check(cell, "qalter/qalter.refused_after_modified", ["-N", "fine", "-q", "nosuch.q", str(job)], names)
    assert detail(cell, job, user)["job_name"] == "before"
    check(cell, "qalter/qalter.own_predecessor", ["-hold_jid", str(job), str(job)], names)
    assert "jid_predecessor_list (req)" not in detail(cell, job, user)


def test_hold_jid_names_the_exited_jobs(cell, names):
    user = names[0]
    gone = held_job(cell, user)
    assert gone == 1  # a fresh cell: the peer's capture names job 1 as exited
    assert cell.run("qdel", str(gone), user=user).rc == 0
    job = held_job(cell, user)
    check(cell, "qalter/qalter.hold_jid_exited", ["-hold_jid", "1", str(job)], names)


def test_holds_of_a_job_and_of_an_array(cell, names):
    user = names[0]
    job = held_job(cell, user)
    check(cell, "qalter/qalter.h_U", ["-h", "U", str(job)], names)
    array = held_job(cell, user, "-t", "1-3")
    check(cell, "qalter/qalter.h_U_array", ["-h", "U", str(array)], names)
    other = held_job(cell, user, "-t", "1-3")
    check(cell, "qalter/qalter.tc_array", ["-tc", "2", str(other)], names)


def test_job_references_names_users_and_rights(cell, names):
    user, stranger = names
    job = held_job(cell, user)
    check(cell, "qalter/qalter.nonexistent", ["-N", "x", "9999999"], names)
    check(cell, "qalter/qalter.u_no_jobs", ["-N", "x", "-u", "nosuchuser"], names)
    check(cell, "qalter/qalter.lonely_t", ["-t", "1-3", "12345"], names)
    check(cell, "qalter/qalter.t_alone", ["-t", "1-3"], names)
    check(cell, "qalter/qalter.task_of_job", ["-N", "y", f"{job}.1"], names)
    check(cell, "qalter/qalter.not_owner", ["-N", "y", str(job)], names, user=stranger)
    named = held_job(cell, user, "-N", "qa_named")
    check(cell, "qalter/qalter.by_name", ["-N", "qa_renamed", "qa_named"], names)
    # a name pattern, and -u: every job of the user (a manager may change others' jobs)
    r = cell.run("qalter", "-N", "patterned", "qa_ren*", user=user)
    assert (r.rc, r.out) == (0, f"modified job name of job {named}\n"), r
    r = cell.run("qalter", "-A", "everyone", "-u", user)
    assert r.rc == 0 and r.out == f"modified account of job {job}\nmodified account of job {named}\n", r
    assert detail(cell, named, user)["account"] == "everyone"
    # a manager may raise the priority and set an operator hold
    r = cell.run("qalter", "-p", "100", "-h", "o", str(job))
    assert r.rc == 0 and r.out == f"modified hold of job {job}\nroot@testhost sets scheduling priority of job " \
                                  f"{job} to 100\n", r


def test_verification_of_a_pending_job(cell, names):
    user = names[0]
    # a pending job that does not start: its queue is disabled (-w looks at an empty cell, states aside)
    assert cell.run("qmod", "-d", "all.q").rc == 0
    job = cell.submit("-N", "qa_w", "-b", "y", "/bin/true", user=user)
    check(cell, "qalter/qalter.w_v", ["-w", "v", "-N", "ignored", str(job)], names)
    assert detail(cell, job, user)["job_name"] == "qa_w"
    # minisge's scheduler words why no queue fits in its own way (tested with the scheduler);
    # the verdict lines are 8.1.9's
    r = cell.run("qalter", "-w", "v", "-l", "arch=nosuch", str(job), user=user)
    assert r.rc == 1 and r.out.endswith("\nverification: no suitable queues\n"), r
    check(cell, "qalter/qalter.w_e_no_queue", ["-w", "e", "-l", "arch=nosuch", str(job)], names)
    assert "hard resource_list" not in detail(cell, job, user)
    check(cell, "qalter/qalter.w_w_no_queue", ["-w", "w", "-l", "arch=nosuch", str(job)], names)
    assert detail(cell, job, user)["hard resource_list"] == "arch=nosuch"
    check(cell, "qalter/qalter.w_e_found", ["-w", "e", "-l", "arch=lx-amd64", str(job)], names)
    held = held_job(cell, user)
    check(cell, "qalter/qalter.w_v_held", ["-w", "v", str(held)], names)


def test_a_running_job_changes_its_name(cell, names):
    user = names[0]
    go = os.path.join(cell.work, "go")
    job = cell.submit("-N", "runner", script(cell, "runner.sh", f"while [ ! -f {go} ]; do sleep 0.1; done"),
                      user=user)
    cell.wait_for(lambda: cell.qstat_states().get(job) == "r", what="the job running")
    r = cell.run("qalter", "-N", "renamed", str(job), user=user)
    assert (r.rc, r.out) == (0, f"modified job name of job {job}\n"), r
    r = cell.run("qalter", "-w", "v", str(job), user=user)
    assert (r.rc, r.out) == (0, "verification: job is already running or is held\n"), r
    open(go, "w").close()
    cell.wait_records(job)


def test_a_change_is_spooled(cell, names):
    user = names[0]
    job = held_job(cell, user)
    assert cell.run("qalter", "-N", "kept", "-l", "h_rt=100", str(job), user=user).rc == 0
    cell.stop()
    cell.start()
    d = detail(cell, job, user)
    assert (d["job_name"], d["hard resource_list"]) == ("kept", "h_rt=100")


# ------------------------------------------------------------------ qresub

def test_qresub_copies_a_job_with_its_script(cell, names):
    user, stranger = names
    out = os.path.join(cell.work, "copied")
    src = cell.submit("-h", "-N", "qa_src", "-o", out, "-j", "y", user=user,
                      input="#!/bin/sh\necho from the copy\n")
    r = check(cell, "qresub/qresub", [str(src)], names)
    copy = int(re.search(r"Your job (\d+)", r.out).group(1))
    r2 = check(cell, "qresub/qresub.h_u", ["-h", "u", str(src)], names)
    held = int(re.search(r"Your job (\d+)", r2.out).group(1))
    assert cell.qstat_states()[held] == "hqw"
    check(cell, "qresub/qresub.nonexistent", ["9999999"], names)
    check(cell, "qresub/qresub.not_owner", [str(src)], names, user=stranger)
    check(cell, "qresub/qresub.unknown_option", ["-N", "x", str(src)], names)
    cell.wait_records(copy)
    with open(out) as f:
        assert f.read() == "from the copy\n"
    assert cell.qstat_states()[src] == "hqw"  # the original stays as it was
