"""qdel, qhold, qrls and qmod -cj/-c through a real cell, compared with what
the real Grid Engine 8.1.9 printed for the same commands (tests/golden/,
captured by the same sequence of commands beside the peer, user d5ctl, the
other user sgetest2): JOB.TASK and JOB.TASKRANGE act on those tasks alone
and say "job-array task", -u user lists, name patterns, the denials and
their exit codes, the usage errors; -help of every command.

The cell's queue has no slots, so every job stays pending as the peer's did
(they were submitted there with -a in the year 2030)."""

from __future__ import annotations

import os
import re
import shlex

import pytest
from cellutil import Cell, ensure_user, set_queue
from golden import GOLDEN, normalise, read_golden, without_fmt_usage

pytestmark = pytest.mark.root

USER = "d5ctl"  # the peer's capture user; the same name here, so the texts need no user normalising
OTHER = "sgetest2"
COMMANDS = ("qdel", "qmod", "qhold", "qrls", "qrsh", "qsub", "qstat", "qacct", "qconf", "qquota")


@pytest.fixture(scope="module")
def users():
    return ensure_user(USER), ensure_user(OTHER)


@pytest.fixture
def cell(users):
    """A cell of its own per test (the peer's sequences started from no job of the
    user), its job ids from 1001 on (ids of three digits and more, as the peer's,
    so that normalising them cannot touch a task range)."""
    c = Cell()
    c.minisge("init", "--hostname", c.host, "--slots", str(c.slots))
    with open(os.path.join(c.qmaster_spool, "jobseqnum"), "w") as f:
        f.write("1000\n")
    c.start()
    try:
        set_queue(c, "slots", "0")
        yield c
    finally:
        c.cleanup()


def peer_ids(name: str) -> list[int]:
    with open(os.path.join(GOLDEN, name)) as f:
        for line in f:
            if line.startswith("# job ids: "):
                return [int(x) for x in line.split(":", 1)[1].split()]
            if line.startswith("# ----"):
                break
    return []


def check(c: Cell, name: str, *ids: int) -> None:
    """Run the golden case ``name`` (its command with our job ids for the
    peer's) as its user; exit code, stdout and stderr as 8.1.9's."""
    cases = [n for n in (name, name + ".stderr") if os.path.exists(os.path.join(GOLDEN, n))]
    assert cases, f"no golden file {name}"
    head = read_golden(cases[0])
    theirs = peer_ids(cases[0])
    assert len(theirs) == len(ids), (name, theirs, ids)
    command = head.command
    for peer, ours in zip(theirs, ids, strict=True):
        command = re.sub(rf"(?<!\d){peer}(?!\d)", str(ours), command)
    argv = shlex.split(command)
    r = c.run(argv[0], *argv[1:], user=None if head.user == "root" else head.user)
    assert r.rc == head.exit, (name, r)
    for case, got in ((name, r.out), (name + ".stderr", r.err)):
        want = read_golden(case).text if case in cases else ""
        assert normalise(got, job_ids=ids, hosts=[c.host]) == normalise(want, job_ids=theirs, hosts=["vm"]), case


def submit(c: Cell, user: str, *args: str) -> int:
    return c.submit("-a", "203012312359", *args, user=user)


def test_help_of_every_command_is_8_1_9s(cell):
    for cmd in COMMANDS:
        if cmd == "qsub":  # captured before the golden headers (tests/test_submit_options.py reads it too)
            with open(os.path.join(GOLDEN, "qsub_-help")) as f:
                want = f.read()
        else:
            want = read_golden(f"{cmd}_-help").text
        r = cell.run(cmd, "-help")
        # qstat, qhost, qquota and qacct list -fmt (minisge's JSON views) beside 8.1.9's options
        assert (r.rc, without_fmt_usage(r.out), r.err) == (0, want, ""), cmd


def test_holds_of_tasks_jobs_and_users(cell):
    a = submit(cell, USER, "-h", "-t", "1-6", "-N", "d5arr", "-b", "y", "/bin/true")
    check(cell, "qrls_JOB.TASK", a)
    check(cell, "qrls_JOB.TASK.again", a)
    check(cell, "qhold_JOB.TASKRANGE", a)
    check(cell, "qrls_JOB.TASKRANGE_step", a)
    check(cell, "qhold_-h_o.not_operator", a)
    check(cell, "qrls_-h_s.not_manager", a)
    check(cell, "qhold_-h_uo.not_operator", a)
    check(cell, "qhold_-h_x", a)
    check(cell, "qhold_JOBID", a)
    one = submit(cell, USER, "-N", "d5one", "-b", "y", "/bin/true")
    check(cell, "qhold_JOBID.single", one)
    check(cell, "qhold_JOBID.single_again", one)
    check(cell, "qrls_JOBID.TASK.single", one)
    other = submit(cell, OTHER, "-N", "d5other", "-b", "y", "/bin/true")
    check(cell, "qhold.other_users_job", other)
    check(cell, "qhold.nonexistent")
    check(cell, "qhold.nonexistent_then_other", other)
    check(cell, "qhold.other_then_nonexistent", other)
    check(cell, "qhold.name", one)
    check(cell, "qhold.nonexistent_name")
    check(cell, "qhold_-u.no_jobs")
    check(cell, "qhold.invalid_identifier")
    check(cell, "qhold.no_args")
    check(cell, "qhold.-u_no_arg")
    check(cell, "qhold.unknown_option")
    check(cell, "qhold_-u.other_user", other)


def test_holds_of_all_jobs_of_a_user(cell):
    a = submit(cell, USER, "-h", "-t", "1-6", "-N", "d5arr", "-b", "y", "/bin/true")
    one = submit(cell, USER, "-N", "d5one", "-b", "y", "/bin/true")
    check(cell, "qrls_-u", a, one)
    check(cell, "qhold_-u", a, one)


def test_holds_of_single_tasks_show_in_qstat_and_keep_them_back(cell):
    a = submit(cell, USER, "-h", "-t", "1-6", "-N", "d5h", "-b", "y", "/bin/true")
    check(cell, "qhold_-h_o.JOB.TASK.manager", a)
    check(cell, "qrls_-h_u.JOB.TASKRANGE", a)
    check(cell, "qstat.task_holds", a)
    check(cell, "qrls_-h_o.JOB.TASK.not_operator", a)
    # a slot, and an execution time that has come (the cases were captured with
    # -a in 2030, which keeps jobs back on both sides): the released task 6 runs,
    # the held ones stay
    r = cell.run("qalter", "-a", "200001010000", str(a), user=USER)
    assert r.rc == 0, r
    set_queue(cell, "slots", "1")
    try:
        cell.wait_for(lambda: cell.records_of(a), what=f"task {a}.6 ran")
        assert [r[35] for r in cell.records_of(a)] == ["6"]  # accounting's task_number
        assert cell.qstat_states().get(a) == "hqw"
    finally:
        set_queue(cell, "slots", "0")
    r = cell.run("qdel", str(a), user=USER)
    assert (r.rc, r.out) == (0, f"{USER} has deleted job {a}\n")


def test_clear_error_of_jobs_and_queues(cell):
    a = submit(cell, USER, "-h", "-t", "1-6", "-N", "d5arr", "-b", "y", "/bin/true")
    one = submit(cell, USER, "-N", "d5one", "-b", "y", "/bin/true")
    other = submit(cell, OTHER, "-N", "d5other", "-b", "y", "/bin/true")
    check(cell, "qmod_-cj.pending_array", a)
    check(cell, "qmod_-cj.pending_single", one)
    check(cell, "qmod_-cj.pending_task", a)
    check(cell, "qmod_-cj.nonexistent")
    check(cell, "qmod_-cj.other_users_job", other)
    check(cell, "qmod_-cj.pattern", one, other)
    check(cell, "qmod_-c.job", one)
    check(cell, "qmod_-c.not_owner")
    check(cell, "qmod_-c.no_error")
    check(cell, "qmod_-e.enabled")
    check(cell, "qmod_-c.nonexistent")
    check(cell, "qmod.no_args")
    check(cell, "qmod_-cj.no_arg")
    check(cell, "qmod_-cj.invalid_identifier")
    check(cell, "qmod.unknown_option")


def test_delete_tasks_names_patterns_and_users(cell):
    a = submit(cell, USER, "-h", "-t", "1-6", "-N", "d5arr", "-b", "y", "/bin/true")
    one = submit(cell, USER, "-N", "d5one", "-b", "y", "/bin/true")
    other = submit(cell, OTHER, "-N", "d5other", "-b", "y", "/bin/true")
    check(cell, "qdel_JOB.TASK", a)
    check(cell, "qdel_JOB.TASK.again", a)
    check(cell, "qdel_JOB.TASKRANGE", a)
    check(cell, "qdel_JOB.TASKRANGE.none", a)
    check(cell, "qdel_JOB.TASKRANGE.none_then_one", a)
    check(cell, "qdel_JOB_-t", a)
    check(cell, "qdel.other_users_job", other)
    check(cell, "qdel.nonexistent")
    check(cell, "qdel.nonexistent_then_other", other)
    check(cell, "qdel.name_of_other_user")
    check(cell, "qdel.name")
    check(cell, "qdel_-u.no_jobs")
    check(cell, "qdel_-u.other_user", other)
    check(cell, "qdel.invalid_identifier")
    check(cell, "qdel.lonely_-t")
    check(cell, "qdel.no_args")
    check(cell, "qdel.option_as_name")
    check(cell, "qdel_JOB.TASK.single", one)
    n1 = submit(cell, USER, "-N", "d5name1", "-b", "y", "/bin/true")
    n2 = submit(cell, USER, "-N", "d5name2", "-b", "y", "/bin/true")
    check(cell, "qdel.pattern", n1, n2)
    t = submit(cell, USER, "-t", "1-8", "-N", "d5arr2", "-b", "y", "/bin/true")
    check(cell, "qdel_JOB.TASKRANGE_step", t)
    check(cell, "qdel_JOBID.array", t)
    r = cell.run("qdel", "-u", OTHER)  # root, a manager
    assert (r.rc, r.out) == (0, f"root has deleted job {other}\n")


QCONF_AS_8_1_9 = ("qconf_-scal.none", "qconf_-sckpt.none", "qconf_-sst.none", "qconf_-sstnode.none",
                  "qconf_-suser.none", "qconf_-sds", "qconf_-sss", "qconf_-dcal.none", "qconf_-dckpt.none",
                  "qconf_-duser.none", "qconf_-dstree.none", "qconf_-acal.not_manager", "qconf_-km.not_manager",
                  "qconf_-kec.not_manager", "qconf_-tsm.not_manager", "qconf_-kt.unknown_thread",
                  "qconf_-purge.incomplete", "qconf_-purge.no_override", "qconf_-Mattr.missing_file",
                  "qconf_-ar")


def test_qconf_options_for_what_minisge_does_not_keep_answer_as_8_1_9(cell):
    """Calendars, checkpointing interfaces, the share tree, user objects:
    8.1.9's answers with none of them; daemons: its refusals of a non-manager."""
    ensure_user("sgetest")
    for name in QCONF_AS_8_1_9:
        check(cell, name)


def test_qconf_attribute_edits_from_a_file(cell):
    def edit(name: str, text: str | None) -> None:
        path = os.path.join(cell.work, "attrs")
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o644)
        head = read_golden(name if os.path.exists(os.path.join(GOLDEN, name)) else name + ".stderr")
        theirs = shlex.split(head.command)[3]
        argv = [path if w == theirs else w for w in shlex.split(head.command)]
        r = cell.run(argv[0], *argv[1:], user=None if head.user == "root" else head.user)
        assert r.rc == head.exit, (name, r)
        for case, got in ((name, r.out), (name + ".stderr", r.err)):
            want = read_golden(case).text if os.path.exists(os.path.join(GOLDEN, case)) else ""
            assert normalise(got, hosts=[cell.host], paths={path: theirs}) == normalise(want, hosts=["vm"]), case

    ensure_user("sgetest")
    edit("qconf_-Mattr.unknown_attribute", "bogus 1\n")
    edit("qconf_-Mattr.not_manager", "slots 2\n")
    edit("qconf_-Mattr", "slots 2\nrerun FALSE\n")
    r = cell.run("qconf", "-sq", "all.q")
    assert "\nslots                 2\n" in r.out
    # a file of two attributes changes both, one answer for the queue
    with open(os.path.join(cell.work, "attrs"), "w") as f:
        f.write("slots 0\nrerun TRUE\n")
    r = cell.run("qconf", "-Mattr", "queue", os.path.join(cell.work, "attrs"), "all.q")
    assert (r.rc, r.out) == (0, f'root@{cell.host} modified "all.q" in cluster queue list\n')
    out = cell.run("qconf", "-sq", "all.q").out
    assert "\nslots                 0\n" in out and "\nrerun                 TRUE\n" in out


def test_qconf_purge_removes_a_host_setting(cell):
    r = cell.run("qconf", "-mattr", "queue", "slots", "5", f"all.q@{cell.host}")
    assert r.rc == 0, r
    assert f"[{cell.host}=5]" in cell.run("qconf", "-sq", "all.q").out
    ensure_user("sgetest")
    r = cell.run("qconf", "-purge", "queue", "slots", f"all.q@{cell.host}", user="sgetest")
    assert (r.rc, r.err) == (1, 'denied: "sgetest" must be manager for this operation\n')
    r = cell.run("qconf", "-purge", "queue", "slots", f"all.q@{cell.host}")
    assert (r.rc, r.out) == (0, f'root@{cell.host} modified "all.q" in cluster queue list\n')
    assert f"[{cell.host}=" not in cell.run("qconf", "-sq", "all.q").out


def test_qconf_options_minisge_answers_in_its_own_words(cell):
    # no user object yet: minisge makes them with qconf -Auser and when a user's job ends (for
    # its share tree usage); 8.1.9 makes one per user it sees (enforce_user auto)
    r = cell.run("qconf", "-suserl")
    assert (r.rc, r.err) == (1, "no user list defined\n")
    # minisge's scheduler is part of the qmaster, not an event client (8.1.9 lists its
    # scheduler; with none, it says so on stderr: tests/conformance/cases/qconf/secl)
    r = cell.run("qconf", "-secl")
    assert (r.rc, r.out, r.err) == (0, "", "no event clients registered\n")
    # changes to what minisge does not keep: 8.1.9's words for a feature it lacks
    r = cell.run("qconf", "-clearusage")  # no user object: no usage to clear
    assert (r.rc, r.out, r.err) == (0, "", ""), r
    for argv in (["-acal", "x"], ["-Ackpt", "f"], ["-auser"],
                 ["-ks"], ["-kej", "h"], ["-tsm"], ["-cq", "all.q"], ["-sobjl", "queue", "slots", "2"]):
        r = cell.run("qconf", *argv)
        assert (r.rc, r.out, r.err) == (1, "", f'Unsupported: "{argv[0]}" is not supported in this version\n'), argv


def test_qconf_km_of_a_manager_shuts_the_cell_down(cell):
    r = cell.run("qconf", "-km")
    assert (r.rc, r.err) == (0, f"root@{cell.host} kills qmaster\n")
    cell.wait_for(lambda: cell.run("qstat").rc != 0, what="the qmaster gone")


def test_qdel_f_of_a_manager_forgets_a_running_job_at_once(cell):
    set_queue(cell, "slots", "2")
    one = cell.submit("-N", "d5force", "-b", "y", "/bin/sleep", "300", user=USER)
    arr = cell.submit("-N", "d5forcea", "-t", "1-2", "-b", "y", "/bin/sleep", "300", user=USER)
    cell.wait_for(lambda: cell.qstat_states().get(one) == "r" and
                  cell.run("qstat", "-u", "*").out.count(" r ") == 2, what="three tasks running")
    check(cell, "qdel_-f_JOBID.running", one)  # root: a manager
    assert one not in cell.qstat_states()  # at once, not when the execd reports the end
    # its record at once, as 8.1.9's: failed 0, exit status 0, no wallclock, ended now
    (record,) = cell.records_of(one)
    assert (record[11], record[12], record[13]) == ("0", "0", "0") and int(record[10]) >= int(record[9]) > 0
    r = cell.run("qdel", "-f", f"{arr}.1")
    assert (r.rc, r.out) == (0, f"root forced the deletion of job-array task {arr}.1\n")
    # the other task: deleted the ordinary way, registered until its end
    r = cell.run("qdel", f"{arr}.2", user=USER)
    assert (r.rc, r.out) == (0, f"{USER} has registered the job-array task {arr}.2 for deletion\n")
    cell.wait_for(lambda: arr not in cell.qstat_states(), what=f"job {arr} gone")


def test_qdel_of_running_jobs_registers_them_for_deletion(cell):
    set_queue(cell, "slots", "3")
    one = cell.submit("-N", "d5force", "-b", "y", "/bin/sleep", "300", user=USER)
    arr = cell.submit("-N", "d5forcea", "-t", "1-2", "-b", "y", "/bin/sleep", "300", user=USER)
    cell.wait_for(lambda: cell.run("qstat", "-u", "*").out.count(" r ") == 3, what="three tasks running")
    check(cell, "qdel_JOBID.running", one)
    check(cell, "qdel_JOBID.running_array", arr)
    cell.wait_for(lambda: not cell.qstat_states(), what="both jobs gone")
