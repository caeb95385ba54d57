"""minisge replay: traces, the replay through the qmaster's code, metrics, the command.

The lesson's files (docs/lesson/: lab.swf, plain.toml, reserve.toml) are the
what-if case: a stream of 1-slot jobs every 30 s and three 16-slot parallel
jobs (at 60, 450 and 900 s) on two hosts of 8 slots.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats import accounting, submit_options
from minisge.formats.errors import FormatError
from minisge.formats.swf import TraceJob, parse_accounting, parse_swf, parse_trace
from minisge.qmaster.running_jobs import RunningJobs
from minisge.replay import __main__ as replay_main
from minisge.replay import config, metrics, simulate
from minisge.replay.result import ReplayResult, TaskRun

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LESSON = os.path.join(TOP, "docs", "lesson")
LAB, PLAIN, RESERVE = (os.path.join(LESSON, n) for n in ("lab.swf", "plain.toml", "reserve.toml"))

ONE_HOST = """
[exec_hosts.node1]
[queues."all.q"]
hostlist = "node1"
slots = 2
pe_list = "smp"
[pes.smp]
slots = 99
allocation_rule = "$pe_slots"
[sched_conf]
queue_sort_method = "seqno"
"""


def swf_line(job: int, submit: int, run: int, procs: int, user: int = 1, status: int = 1, req: int = -1) -> str:
    return f"{job} {submit} -1 {run} {procs} -1 -1 {procs} {req} -1 {status} {user} 1 -1 -1 -1 -1 -1"


@pytest.fixture
def one_host(tmp_path):
    p = tmp_path / "one.toml"
    p.write_text(ONE_HOST)
    return str(p)


# ---------------------------------------------------------------- the readers

def test_swf_jobs_comments_and_what_is_not_replayed():
    text = "\n".join(["; Version: 2.2", "", swf_line(1, 0, 100, 4, req=200), swf_line(2, 5, 0, 1, status=5),
                      swf_line(3, 7, 30, 2, status=5), swf_line(4, 9, -1, 1),
                      "5 10 -1 20 -1 -1 -1 -1 -1 -1 1 3 2 -1 -1 -1 -1 -1"]) + "\n"
    trace = parse_swf(text, "t.swf")
    assert [(j.job_id, j.submit_time, j.tasks, j.slots, j.owner, j.requested_time) for j in trace.jobs] == [
        (1, 0.0, ((1, 100.0),), 4, "user1", 200.0),
        (3, 7.0, ((1, 30.0),), 2, "user1", None)]  # cancelled after it ran: replayed
    assert trace.skipped == ((2, "cancelled before it ran"), (4, "run time unknown"),
                             (5, "number of processors unknown"))


@pytest.mark.parametrize(("line", "message"), [
    ("1 2 3", "t.swf:2: 3 fields, an SWF job line has 18"),
    ("1 0 -1 x 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "t.swf:2: field 4 is not a number: 'x'"),
    ("1 -1 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "t.swf:2: job 1 has no submit time (field 2)"),
])
def test_a_bad_swf_line_is_reported_with_file_and_line(line, message):
    with pytest.raises(FormatError) as e:
        parse_swf(swf_line(1, 0, 10, 1) + "\n" + line + "\n", "t.swf")
    assert str(e.value) == message


def test_an_accounting_file_is_a_trace_arrays_are_tasks():
    rec = accounting.AccountingRecord(qname="all.q", hostname="n1", group="staff", owner="alice", job_name="j",
                                      job_number=7, submission_time=100, start_time=110, end_time=150, slots=2,
                                      project="NONE")
    lines = [accounting.header(),
             accounting.write_line(rec._replace(task_number=1)),
             accounting.write_line(rec._replace(task_number=2, start_time=120, end_time=130)),
             accounting.write_line(rec._replace(task_number=2, pe_taskid="1.n1", start_time=121)),  # a PE slave
             accounting.write_line(rec._replace(job_number=8, start_time=0, end_time=0)),  # never started
             accounting.write_line(rec._replace(job_number=9, owner="bob", project="p1", submission_time=90))]
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    trace = parse_trace(text, "accounting")
    assert [(j.job_id, j.submit_time, j.tasks, j.slots, j.owner, j.project, j.queue) for j in trace.jobs] == [
        (9, 90.0, ((0 or 1, 40.0),), 2, "bob", "p1", "all.q"),
        (7, 100.0, ((1, 40.0), (2, 10.0)), 2, "alice", None, "all.q")]
    assert trace.jobs[1].is_array and trace.skipped == ((8, "never started"),)


def test_a_real_8_1_9_accounting_file_replays(one_host):
    """Lines of the peer's (Grid Engine 8.1.9) accounting file: job 7 is an
    array of 5 tasks, replayed as one job of 5 tasks in queue all.q."""
    path = os.path.join(TOP, "tests", "golden", "accounting_raw_lines")
    with open(path, encoding="utf-8") as f:
        trace = parse_trace(f.read(), path)
    array = next(j for j in trace.jobs if j.job_id == 7)
    assert [t for t, _ in array.tasks] == [1, 2, 3, 4, 5] and array.owner == "sgetest" and array.queue == "all.q"
    result, replay = simulate.run(trace, config.from_toml(one_host))
    assert [(t.task_id, t.placement) for t in result.tasks if t.job_id == 7] == [
        (n, (("all.q", "node1", 1),)) for n in range(1, 6)]
    assert all(t.start_time is not None for t in result.tasks) and replay.notes == []


def test_a_bad_accounting_line_is_reported_with_file_and_line():
    with pytest.raises(FormatError) as e:
        parse_accounting("# header\nall.q:n1:g\n", "acct")
    assert str(e.value).startswith("acct:2: ")


# ---------------------------------------------------------------- the metrics

def test_the_metrics_by_hand():
    """Four tasks on 3 slots (run time, slots; times in seconds):

    ====  ======  ======  =====  ===  =====  =========  ==========  ========  ========
    task  owner   submit  start  end  run    wait       turnaround  slowdown  bsld
    ====  ======  ======  =====  ===  =====  =========  ==========  ========  ========
    A     alice   0       0      100  100x1  0          100         1         1
    B     bob     0       50     100  50x2   50         100         2         2
    C     alice   10      100    105  5x1    90         95          19        95/10=9.5
    D     bob     20      -      -    30x1   (never started: in no mean)
    ====  ======  ======  =====  ===  =====  =========  ==========  ========  ========

    Means over A, B, C: wait 140/3, turnaround 295/3, slowdown 22/3, bounded
    slowdown 12.5/3 (C's run time 5 s is under the bound of 10 s).  Makespan
    105 - 0; utilisation (100 + 2x50 + 5) / (3 x 105) = 205/315.  Busy
    slots: 1 from 0, 3 from 50, 1 from 100, 0 from 105.  Pending tasks: 1 from
    0 (A and B came, A started), 2 from 10, 3 from 20, 2 from 50, 1 from 100
    (D never starts).  alice: waits 0 and
    90 (mean 45); bob: one started task (wait 50) of two.
    """
    def t(owner, submit, start, end, run, slots, q="all.q"):
        placement = ((q, "h", slots),) if start is not None else ()
        return TaskRun(1, 1, owner, None, submit, start, end, run, slots, placement)
    result = ReplayResult("x", (t("alice", 0, 0, 100, 100, 1), t("bob", 0, 50, 100, 50, 2),
                                t("alice", 10, 100, 105, 5, 1), t("bob", 20, None, None, 30, 1)),
                          (("h", 3),), (("all.q", "h", 3),))
    s = metrics.summarise(result)
    assert (s.total.tasks, s.total.started, s.total.waited) == (4, 3, 2)
    assert s.total.mean_wait == pytest.approx(140 / 3) and s.total.max_wait == 90
    assert s.total.mean_turnaround == pytest.approx(295 / 3)
    assert s.total.mean_slowdown == pytest.approx(22 / 3)
    assert s.total.mean_bounded_slowdown == pytest.approx(12.5 / 3)
    assert s.makespan == 105 and s.utilisation == pytest.approx(205 / 315)
    assert metrics.busy_slots(result) == [(0, 1), (50, 3), (100, 1), (105, 0)]
    assert metrics.pending_tasks(result) == [(0, 1), (10, 2), (20, 3), (50, 2), (100, 1)]
    assert s.users["alice"].mean_wait == 45 and (s.users["bob"].tasks, s.users["bob"].started) == (2, 1)
    assert s.queues == {"all.q": metrics.figures(result.tasks[:3]), "-": metrics.figures(result.tasks[3:])}
    table = metrics.table([s]).splitlines()
    assert table[1].split() == ["x", "total", "4", "3", "2", "46.7", "90.0", "98.3", "7.33", "4.17", "65.1%", "105.0"]
    assert metrics.csv_text([s]).splitlines()[1].startswith("x,total,4,3,2,46.666666666666664,90.0,")


# ---------------------------------------------------------------- the replay

def test_the_scheduler_decides_in_simulated_time(one_host):
    """One host of 2 slots.  Job 1 (1 slot, 100 s) and job 2 (2 slots, 50 s)
    come at 0: job 2 asks for more slots, so its urgency is higher and the
    pass starts it first; job 1 gets the slots at 50.  Job 3 (1 slot) comes
    at 20: with a pass on every event (minisge's daemon) it waits for the
    end of job 2 (50) with job 1... and, being behind job 1 in the order and
    alone left with one free slot, starts at 50 too (2 slots, 1 each).  With
    passes every schedule_interval (15 s, 8.1.9) the same, at 60."""
    trace = parse_swf("\n".join([swf_line(1, 0, 100, 1), swf_line(2, 0, 50, 2), swf_line(3, 20, 10, 1)]), "t")
    starts = {}
    for mode in (simulate.EVENTS, simulate.INTERVAL):
        result, replay = simulate.run(trace, config.from_toml(one_host), passes=mode)
        starts[mode] = [(t.job_id, t.start_time, t.end_time, t.placement) for t in result.tasks]
    assert starts[simulate.EVENTS] == [(1, 50.0, 150.0, (("all.q", "node1", 1),)),
                                       (2, 0.0, 50.0, (("all.q", "node1", 2),)),
                                       (3, 50.0, 60.0, (("all.q", "node1", 1),))]
    assert starts[simulate.INTERVAL] == [(1, 60.0, 160.0, (("all.q", "node1", 1),)),
                                         (2, 0.0, 50.0, (("all.q", "node1", 2),)),
                                         (3, 60.0, 70.0, (("all.q", "node1", 1),))]


def test_a_job_that_can_never_run_stays_unstarted(one_host):
    trace = parse_swf(swf_line(1, 0, 10, 1) + "\n" + swf_line(2, 0, 10, 3) + "\n", "t")
    result, _ = simulate.run(trace, config.from_toml(one_host))
    assert [(t.job_id, t.start_time) for t in result.tasks] == [(1, 0.0), (2, None)]


def test_a_cell_is_only_read_and_described(mem_tmp_path):
    cell = Cell(str(mem_tmp_path / "root"))
    init_cell(cell, "node1", slots=3, env={})

    def files() -> dict[str, tuple[int, float]]:
        out = {}
        for d, _dirs, names in os.walk(cell.path):
            for n in names:
                st = os.stat(os.path.join(d, n))
                out[os.path.join(d, n)] = (st.st_size, st.st_mtime)
        return out

    before = files()
    setup = config.from_cell(cell.path)
    result, _ = simulate.run(parse_swf(swf_line(1, 0, 10, 1) + "\n" + swf_line(2, 0, 10, 3) + "\n", "t"), setup)
    # job 2 asks for more slots: more urgent, it goes first; job 1 at the next
    # schedule_interval (15 s) after job 2's end
    assert [(t.job_id, t.start_time, t.placement) for t in result.tasks] == [
        (1, 15.0, (("all.q", "node1", 1),)), (2, 0.0, (("all.q", "node1", 3),))]
    assert files() == before
    text = config.describe(setup.config)
    again = mem_tmp_path / "cell.toml"
    again.write_text(text)
    assert config.describe(config.from_toml(str(again)).config) == text
    assert '[queues."all.q"]' in text and "node1" in text


@pytest.mark.parametrize(("toml", "message"), [
    ("[queues\n", "bad.toml: Expected ']' at the end of a table declaration (at line 1, column 8)"),
    ("[hosts.a]\n", "bad.toml: unknown table [hosts]"),
    ('[queues."all.q"]\nslots = "many"\n', "bad.toml: [queues.all.q]: "),
    ('[replay]\npe = "mpi"\n', 'bad.toml: [replay]: pe "mpi" is not a parallel environment of the configuration'),
])
def test_a_bad_configuration_says_file_and_what(tmp_path, toml, message):
    p = tmp_path / "bad.toml"
    p.write_text(toml)
    with pytest.raises(config.ConfigError) as e:
        config.from_toml(str(p))
    assert str(e.value).replace(str(tmp_path) + "/", "").startswith(message)


# ---------------------------------------------------------------- the command

def test_why_a_job_waited_in_qstat_j_words(capsys):
    """Under reserve.toml, small job 3 (submitted at 60 with big job 4) waits:
    job 4 reserved the cell from 330, when job 2 ends, and job 3's h_rt (420 s)
    would run past it, so it cannot backfill; it gets a reservation of its
    own, after job 4 (the times are the trace's seconds since the epoch, as
    qstat -j prints them)."""
    assert replay_main.main(["--config", RESERVE, "--why", "3", LAB]) == 0
    out = capsys.readouterr().out
    why = out[out.index("job 3 under reserve:"):].splitlines()
    assert why[1:5] == [
        "  t=60s",
        '    (-l h_rt=420) cannot run in queue "all.q@node1" because it offers only qc:slots=0.000000 due to a '
        'reservation',
        '    (-l h_rt=420) cannot run in queue "all.q@node2" because it offers only qc:slots=0.000000 due to a '
        'reservation',
        f"    resources reserved for the job from {time.strftime('%m/%d/%Y %H:%M:%S', time.localtime(870))} "
        "in all.q@node1=1"]
    assert why[-1] == "  started at t=1230s"


def test_command_errors(tmp_path, capsys):
    assert replay_main.main(["--config", PLAIN, str(tmp_path / "none.swf")]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path}/none.swf: No such file or directory\n"
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n")
    assert replay_main.main(["--config", PLAIN, str(bad)]) == 1
    assert capsys.readouterr().err == f"error: {bad}:1: 3 fields, an SWF job line has 18\n"
    assert replay_main.main(["--config", str(tmp_path / "no.toml"), LAB]) == 1
    assert capsys.readouterr().err == f"error: {tmp_path}/no.toml: No such file or directory\n"
    if not os.path.exists(os.path.join(TOP, "minisge", "replay", "plots.py")):
        assert replay_main.main(["--config", PLAIN, "--plot", str(tmp_path / "p"), LAB]) == 1
        assert capsys.readouterr().err == replay_main.PLOTS_MISSING + "\n"
    assert replay_main.main(["--config", PLAIN, "--why", "99", LAB]) == 1
    assert capsys.readouterr().err == f"error: job 99 is not a job of {LAB}\n"
    with pytest.raises(SystemExit) as e:
        replay_main.main(["--config", PLAIN])
    assert e.value.code == 2 and "a trace is needed" in capsys.readouterr().err


def run_replay(args: list[str], seed: str, cwd: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([sys.executable, "-m", "minisge.cli.minisge", "replay", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_what_if_side_by_side_and_the_same_bytes_under_two_hash_seeds(tmp_path):
    """The same trace under plain.toml and reserve.toml, through the
    ``minisge`` command, twice with different hash seeds: byte for byte the
    same table, CSV and JSON.  Without reservation the three big jobs wait
    for the stream of small ones to end (mean 1360 s); with -R y and
    max_reservation they start as soon as the slots they reserved are free
    (mean 160 s), and the small ones pay for it."""
    outs = []
    for seed in ("1", "2"):
        d = tmp_path / seed
        d.mkdir()
        p = run_replay(["--config", PLAIN, "--config", RESERVE, "--csv", "m.csv", "--json", "m.json",
                        os.path.relpath(LAB, d)], seed, str(d))
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""
        outs.append((p.stdout, (d / "m.csv").read_text(), (d / "m.json").read_text()))
    assert outs[0] == outs[1]
    rows = {" ".join(line.split()[:-10]): line.split()[-10:] for line in outs[0][0].splitlines()[1:]}
    assert rows["plain user user3"][3] == "1360.0" and rows["reserve user user3"][3] == "160.0"
    assert rows["plain total"][:3] == ["43", "43", "3"] and rows["reserve total"][:3] == ["43", "43", "41"]
    assert outs[0][1].splitlines()[0] == ",".join(metrics.COLUMNS)


@pytest.mark.parametrize("qsub", [(), ("-R", "y"), ("-l", "h_rt=50,arch=lx-amd64"),
                                  ("-N", "fixed", "-l", "a=lx-amd64")])
def test_a_request_parsed_once_per_shape_is_what_qsub_makes_of_the_whole_command_line(one_host, qsub):
    setup = dataclasses.replace(config.from_toml(one_host), qsub=qsub)
    parsed: dict = {}
    jobs = parse_swf("".join(swf_line(n, n, 10, procs, user=n % 2 + 1, req=req) + "\n"
                             for n, (procs, req) in enumerate([(1, -1), (1, 30), (2, 30), (2, 45), (1, 30)], 1)),
                     "t.swf").jobs
    for tj in jobs:
        argv = simulate.qsub_argv(tj, setup, {})
        whole = submit_options.parse_submission(argv, cwd="/", env={}, home="/", user=tj.owner,
                                                hostname="replay", read_file=None)
        assert simulate.qsub_request(tj, setup, {}, parsed) == whole
        assert list(simulate.qsub_request(tj, setup, {}, parsed)["hard_resources"] or {}) == \
            list(whole["hard_resources"] or {})
    assert len(parsed) < len(jobs)  # shapes shared


def test_the_notes_of_a_request_count_every_job_of_its_shape(one_host):
    """A job of a queue the configuration lacks is noted each time, though its
    request is parsed once for the jobs of its shape."""
    setup = config.from_toml(one_host)
    parsed: dict = {}
    notes: dict[str, int] = {}
    for n in (1, 2, 3):
        tj = TraceJob(job_id=n, submit_time=float(n), tasks=((1, 10.0),), slots=1, owner="u1", group="g1",
                      queue="nosuch.q", requested_time=30.0 * n)
        assert "hard_queues" not in {k for k, v in simulate.qsub_request(tj, setup, notes, parsed).items() if v}
    assert notes == {"jobs of queue nosuch.q, which the configuration does not have: submitted without -q": 3}
    assert len(parsed) == 1


def test_the_replay_files_its_changed_jobs_as_the_daemon_does(tmp_path, monkeypatch):
    """A pass counts only the jobs the job index filed since the pass before
    (minisge.qmaster.running_jobs): the replay's qmaster writes no job but
    must file every job it changed (its flush), or a pass would count a job
    as it was before its dispatch.  The schedule is that of passes that look
    at every job afresh, on a trace of PE jobs of every size that keeps the
    cell busy."""
    p = tmp_path / "four.toml"
    p.write_text("\n".join([f"[exec_hosts.node{i}]" for i in range(1, 5)] + [
        '[hostgroups."@allhosts"]', 'hostlist = "node1 node2 node3 node4"',
        '[queues."all.q"]', 'hostlist = "@allhosts"', "slots = 4", 'pe_list = "mpi"',
        "[pes.mpi]", "slots = 999", 'allocation_rule = "$fill_up"',
        "[sched_conf]", 'queue_sort_method = "seqno"']) + "\n")
    trace = parse_swf("".join(swf_line(n, 5 * n, 20 + (37 * n) % 200, (1, 2, 4, 8, 1, 3)[n % 6], user=n % 3 + 1,
                                       req=300) + "\n" for n in range(1, 121)), "t.swf")
    incremental, _ = simulate.run(trace, config.from_toml(str(p)))
    count = RunningJobs.count
    monkeypatch.setattr(RunningJobs, "count",
                        lambda self, jobs, cx, durations, changed=None: count(self, jobs, cx, durations))
    afresh, _ = simulate.run(trace, config.from_toml(str(p)))
    assert incremental.tasks == afresh.tasks
    assert len({t.start_time for t in afresh.tasks}) > 20  # many passes, most of them with jobs running
