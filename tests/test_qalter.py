"""qalter and qresub without a daemon: the option parser
(submit_options.parse_alteration) and the qmaster's change of a job
(qmaster/job_modify.py through Qmaster.qalter, Qmaster.resubmit), on a real
spool.  The texts are 8.1.9's (tests/golden/qalter, tests/golden/qresub)."""

from __future__ import annotations

import pwd

import attrs
import pytest
from qmaster_harness import small_qmaster

from minisge.formats import submit_options
from minisge.formats.submit_options import SubmitError, parse_alteration
from minisge.protocol import catalogue
from minisge.qmaster.job import RUNNING, Grant, Task
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.spool import SpoolError

NOBODY = pwd.getpwnam("nobody").pw_uid


def parse(*argv: str, env: dict[str, str] | None = None):
    return parse_alteration(list(argv), cwd="/work", env=env or {"HOME": "/h", "X": "1"})


def refusal(*argv: str) -> tuple[str, int]:
    with pytest.raises(SubmitError) as e:
        parse(*argv)
    return e.value.message, e.value.exit_code


# ------------------------------------------------------------------ the options

def test_options_become_the_fields_that_change_and_nothing_else():
    r = parse("-N", "x", "-l", "h_rt=10,h_rt=20", "-soft", "-q", "a.q", "-hard", "-q", "b.q", "-m", "b", "-m", "e",
              "-v", "X", "-cwd", "-p", "-3", "5", "6")
    assert r["targets"] == ["5", "6"] and r["users"] is None and r["hold"] is None
    assert r["changes"] == {"job_name": "x", "hard_resources": {"h_rt": "20"}, "soft_queues": ["a.q"],
                            "hard_queues": ["b.q"], "mail_options": "be", "env": {"X": "1"}, "cwd": "/work",
                            "priority": -3}


def test_context_switches_keep_their_order_and_holds_their_list():
    r = parse("-ac", "a=1,b", "-dc", "a", "-sc", "c=2", "-h", "uo", "7")
    assert r["context_ops"] == [["-ac", [["a", "1"], ["b", None]]], ["-dc", [["a", None]]], ["-sc", [["c", "2"]]]]
    assert r["hold"] == "uo" and r["changes"] == {}


def test_a_task_range_after_a_job_and_users_instead_of_jobs():
    assert parse("-h", "u", "5", "-t", "2-4")["targets"] == ["5.2-4:1"]
    r = parse("-A", "x", "-u", "alice,bob", "5")
    assert r["users"] == ["alice", "bob"] and r["targets"] == []  # 8.1.9 drops the job list


def test_option_errors_in_8_1_9_words_and_exit_codes():
    assert refusal("-b", "y", "5") == ('qalter: invalid option argument "-b"', 2)
    assert refusal("-sync", "y", "5") == ("Unknown option -sync y\n", 5)
    assert refusal("-t", "1-3", "5") == ("found lonely '-t 1-3' option (The -t option needs a leading job name).", 2)
    assert refusal("-t", "1-3") == ("Unknown option -t 1-3\n", 5)
    assert refusal("-h", "x", "5") == ('qalter: Unknown hold list "x" specified to -h option', 7)
    assert refusal("-p", "5000", "5") == ('qalter: invalid priority "5000".  Must be an integer from -1023 to 1024', 7)
    assert refusal("-N") == ("qalter: -N option must have argument", 2)
    assert refusal() == ("", 1)  # the command prints its usage
    assert parse("-help") == {"help": True}


def test_an_option_file_is_read_where_it_stands():
    r = parse_alteration(["-@", "opts", "5"], cwd="/w", env={},
                         read_file=lambda p: "-N fromfile\n# a comment\n-p -1\n" if p == "/w/opts" else "")
    assert r["changes"] == {"job_name": "fromfile", "priority": -1}


def test_every_option_makes_a_request_the_catalogue_takes():
    r = parse(*("-a 202612010000 -A x -ar 1 -binding linear:1 -cwd -c s -ckpt x -dl 202612010000 -e a -i b -o c "
                "-hold_jid 1 -hold_jid_ad 2 -R y -j y -l a=1 -soft -l b=2 -q s.q -hard -m e -M x@y -N n -notify "
                "-p 1 -js 2 -P p -pe smp 1 -q q -masterq m -r y -w v -S /bin/sh -v X=1 -tc 2 -ot 3 -ac a=1 -h u "
                "5").split())
    msg = {"op": catalogue.QALTER, "targets": r["targets"], "users": r["users"], "changes": r["changes"],
           "context_ops": r["context_ops"], "hold": r["hold"]}
    catalogue.validate(msg, catalogue.COMMAND)
    assert set(r["changes"]) == set(catalogue.ALTERABLE) - {"checkpoint_interval"} | {"override_tickets"}
    with pytest.raises(catalogue.Invalid):  # what qalter does not change is no field of the request
        catalogue.validate(dict(msg, changes={"script": "x"}), catalogue.COMMAND)


# ------------------------------------------------------------------ the qmaster's change

@pytest.fixture
def qm(mem_tmp_path):
    return small_qmaster(mem_tmp_path / "root")


REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp", "hold": True}


def submit(qm: Qmaster, uid: int = NOBODY, **spec) -> int:
    return int(qm.submit(dict(REQ, **spec), uid, uid)["job_id"])


def alter(qm: Qmaster, uid: int, *argv: str) -> tuple[list[str], int]:
    req = parse(*argv)
    return qm.qalter(req, uid)


def test_the_lines_follow_8_1_9s_order_not_the_command_lines(qm):
    job = submit(qm)
    lines, rc = alter(qm, NOBODY, "-N", "y", "-l", "h_rt=9", "-p", "-1", "-A", "acc", str(job))
    assert rc == 0
    assert lines == [f"nobody@h1 sets scheduling priority of job {job} to -1", f"modified account of job {job}",
                     f"modified hard resource list of job {job}", f"modified job name of job {job}"]
    j = qm.jobs[job]
    assert (j.name, j.priority, j.spec["account"], j.spec["hard_resources"]) == ("y", -1, "acc", {"h_rt": "9"})


def test_a_refusal_after_a_change_keeps_the_job_as_it_was(qm):
    job = submit(qm)
    lines, rc = alter(qm, NOBODY, "-N", "fine", "-q", "nosuch.q", str(job))
    assert (lines, rc) == ([f"modified job name of job {job}",
                            'Job was rejected because job requests unknown queue "nosuch.q"'], 1)
    assert qm.jobs[job].name == "x"
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[job].name == "x"


def test_a_change_is_spooled_before_the_answer(qm):
    job = submit(qm)
    assert alter(qm, NOBODY, "-N", "kept", "-ac", "k=v", str(job))[1] == 0
    again = Qmaster(qm.cell, "h1")
    again.load()
    assert again.jobs[job].name == "kept" and again.jobs[job].spec["context"] == {"k": "v"}


def test_a_change_the_spool_does_not_take_changes_nothing(qm, monkeypatch):
    job = submit(qm)

    def full(*args, **kwargs):
        raise SpoolError("jobs/1", OSError(28, "No space left on device"))
    monkeypatch.setattr(qm.spool, "write_job", full)
    lines, rc = alter(qm, NOBODY, "-N", "lost", str(job))
    assert rc == 1 and lines[-1] == f"alteration of job {job} was rejected because it couldn't be written"
    assert qm.jobs[job].name == "x"


def test_rights_owner_operator_manager(qm):
    job = submit(qm, uid=0)
    assert alter(qm, NOBODY, "-N", "y", str(job)) == (
        [f'denied: "nobody" must be at least owner of job {job} to change job attributes'], 1)
    mine = submit(qm)
    assert alter(qm, NOBODY, "-p", "10", str(mine)) == (
        ['denied: "nobody" must be operator to increase job priority'], 1)
    assert alter(qm, NOBODY, "-h", "o", str(mine)) == (['denied: "nobody" must be operator to set operator hold'], 1)
    assert alter(qm, NOBODY, "-h", "n", str(mine)) == (['denied: "nobody" must be manager to remove manager hold'], 1)
    assert alter(qm, NOBODY, "-ot", "5", str(mine)) == (
        ['denied: "nobody" must be operator to change amount of override tickets'], 1)
    # the manager may do all of it
    lines, rc = alter(qm, 0, "-p", "10", "-h", "so", str(mine))
    assert rc == 0
    assert lines == [f"modified hold of job {mine}", f"root@h1 sets scheduling priority of job {mine} to 10"]
    assert qm.jobs[mine].operator_hold and qm.jobs[mine].system_hold


def test_jobs_by_name_pattern_and_by_user_and_a_request_stops_at_its_first_refusal(qm):
    a = submit(qm, job_name="alpha")
    b = submit(qm, job_name="alps")
    other = submit(qm, uid=0, job_name="alpine")
    lines, rc = alter(qm, NOBODY, "-A", "z", "al*")
    assert rc == 1 and lines == [f"modified account of job {a}", f"modified account of job {b}",
                                 f'denied: "nobody" must be at least owner of job {other} to change job attributes']
    assert alter(qm, NOBODY, "-N", "q", "nosuch") == (['denied: job "nosuch" does not exist'], 1)
    assert alter(qm, NOBODY, "-N", "q", "-u", "ghost,spook") == (["The job * of user(s) ghost,spook does not exist"], 1)
    lines, rc = alter(qm, 0, "-js", "3", "-u", "nobody")
    assert rc == 0 and lines == [f"root@h1 sets job share of job {a} to 3", f"root@h1 sets job share of job {b} to 3"]


def test_dependencies_are_resolved_anew_and_may_not_make_a_cycle(qm):
    a = submit(qm, job_name="first")
    b = submit(qm, hold_jid=[str(a)])
    lines, rc = alter(qm, NOBODY, "-hold_jid", f"first,{b + 100}", str(b))
    assert rc == 0 and lines == [f"modified job id hold list of job {b}\n   blocking jobs: {a}\n"
                                 f"   exited jobs:   {b + 100}"]
    assert alter(qm, NOBODY, "-hold_jid", str(b), str(a)) == (
        [f"job {a} dependency change would generate a dependency cycle with job {b}"], 1)
    assert qm.jobs[a].predecessors == []


def test_holds_of_an_array_are_said_per_task(qm):
    job = submit(qm, array=[1, 3, 2])
    assert alter(qm, NOBODY, "-h", "U", str(job)) == (
        [f"modified hold of job-array task {job}.1", f"modified hold of job-array task {job}.3"], 0)
    assert alter(qm, NOBODY, "-h", "U", str(job)) == ([], 0)  # nothing changed, nothing said


def test_task_concurrency_needs_an_array(qm):
    job = submit(qm)
    assert alter(qm, NOBODY, "-tc", "2", str(job)) == (['invalid option argument "task concurrency"'], 1)
    array = submit(qm, array=[1, 3, 1])
    assert alter(qm, NOBODY, "-tc", "2", str(array)) == ([f"modified task concurrency of job {array}"], 0)


def test_a_running_job_keeps_its_project_and_its_consumables(qm):
    cl = qm.config.complexes
    qm.config.complexes = attrs.evolve(cl, attrs=tuple(attrs.evolve(a, consumable="YES") if a.name == "h_vmem" else a
                                                       for a in cl.attrs))
    job = submit(qm, hold=False, hard_resources={"h_vmem": "1G", "h_rt": "100"})
    j = qm.jobs[job]
    j.pending.discard(1)
    j.add_task(Task(1, RUNNING, granted=[Grant("all.q", "h1", 1)]))
    assert alter(qm, NOBODY, "-N", "renamed", str(job)) == ([f"modified job name of job {job}"], 0)
    assert alter(qm, NOBODY, "-l", "h_vmem=1G,h_rt=200", str(job)) == (
        [f"modified hard resource list of job {job}"], 0)
    assert alter(qm, NOBODY, "-l", "h_vmem=2G", str(job)) == (
        ['denied: can\'t change consumable resource request "h_vmem" of running job'], 1)
    assert alter(qm, NOBODY, "-l", "h_rt=5", str(job)) == (
        ['denied: former resource request on consumable "h_vmem" of running job lacks in new resource request'], 1)
    assert alter(qm, NOBODY, "-soft", "-l", "h_vmem=1G", str(job)) == (
        ['denied: soft requests on consumables like "h_vmem" are not supported'], 1)
    assert alter(qm, NOBODY, "-l", "slots=2", str(job)) == (
        ['"job" denied: use parallel environments instead of requesting slots explicitly'], 1)
    qm.config.projects = {"p1": None}  # type: ignore[assignment]
    assert alter(qm, NOBODY, "-N", "again", "-P", "p1", str(job)) == (
        [f"modified job name of job {job}", f"modified project of job {job}", f"job {job} can't modify running jobs"],
        1)
    assert qm.jobs[job].name == "renamed" and qm.jobs[job].spec["hard_resources"] == {"h_vmem": "1G", "h_rt": "200"}


def test_verification(qm):
    job = submit(qm, hold=False)
    qm.config.add_qi_state("all.q@h1", "d")  # pending: its queue is disabled; -w looks at an empty cell
    assert alter(qm, NOBODY, "-w", "v", "-N", "gone", str(job)) == (["verification: found suitable queue(s)"], 0)
    assert qm.jobs[job].name == "x"
    lines, rc = alter(qm, NOBODY, "-w", "v", "-l", "arch=nosuch", str(job))
    assert rc == 1 and lines[-1] == "verification: no suitable queues" and len(lines) == 2
    assert alter(qm, NOBODY, "-w", "e", "-l", "arch=nosuch", str(job)) == (["error: no suitable queues"], 1)
    assert "hard_resources" not in qm.jobs[job].spec or not qm.jobs[job].spec["hard_resources"]
    assert alter(qm, NOBODY, "-w", "w", "-l", "arch=nosuch", str(job)) == (
        [f"modified hard resource list of job {job}", "warning: no suitable queues"], 1)
    assert qm.jobs[job].spec["hard_resources"] == {"arch": "nosuch"}
    held = submit(qm)
    assert alter(qm, NOBODY, "-w", "v", str(held)) == (["verification: job is already running or is held"], 0)


# ------------------------------------------------------------------ qresub

def test_qresub_copies_the_job_and_its_script_and_holds_the_copy_on_request(qm):
    src = submit(qm, binary=False, command="job.sh", script_path="job.sh", script="#!/bin/sh\necho hi\n")
    lines, rc = qm.resubmit([str(src)], NOBODY, None)
    copy = src + 1
    assert (lines, rc) == ([f'Your job {copy} ("x") has been submitted'], 0)
    assert not qm.jobs[copy].held and qm.jobs[src].held
    with open(qm.spool.script_path(copy)) as f:
        assert f.read() == "#!/bin/sh\necho hi\n"
    lines, rc = qm.resubmit([str(src)], NOBODY, "u")
    assert (lines, rc) == ([f"modified hold of job {src}", f'Your job {copy + 1} ("x") has been submitted'], 0)
    assert qm.jobs[copy + 1].user_hold


def test_qresub_refusals(qm):
    src = submit(qm, uid=0)
    assert qm.resubmit(["9999999"], NOBODY, None) == (['job "9999999" does not exist'], 4)
    assert qm.resubmit(["name"], NOBODY, None) == (['job "0" does not exist'], 4)
    assert qm.resubmit([str(src)], NOBODY, None) == (
        ["job rejected: nobody@h1 is not allowed to resubmit jobs of user root"], 4)
    assert submit_options.HOLD_LIST_CHARS == "nusoUSO"
