"""The journal of the running jobs' transitions (minisge/qmaster/job_journal.py).

A pass's dispatches and ends are lines of ``jobs/.journal``, not whole job
files; a qmaster that starts again (after a kill: nothing of the old one's
memory is used) must find every job as the old one had it, whatever came
between: a line, a whole write after it, a job number given again, a torn
or damaged journal, a full disk, a compaction.
"""

from __future__ import annotations

import json
import os
import resource
from typing import Any

import pytest
import trio
from hypothesis import example, given, settings
from hypothesis import strategies as st
from qmaster_harness import small_qmaster

from minisge.formats.errors import FormatError
from minisge.qmaster import qmaster as qmaster_module
from minisge.qmaster.job import Job
from minisge.qmaster.outbox import ExecdLink
from minisge.qmaster.qmaster import Qmaster, _conv
from minisge.qmaster.spool import job_relpath

REQ = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp"}


class Taker(ExecdLink):
    """Takes the qmaster's messages to h1's execd."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)


@pytest.fixture
def qm(tmp_path) -> Qmaster:
    q = small_qmaster(tmp_path / "root", slots=2)
    q.execds["h1"] = Taker()
    q.config.register_execd("h1")
    return q


def array(qm: Qmaster, tasks: int = 4) -> int:
    return int(qm.submit(dict(REQ, array=[1, tasks, 1]), 0, 0)["job_id"])


def end(qm: Qmaster, job_id: int, task_id: int, **report: Any) -> None:
    qm.task_finished({"op": "task_end", "host": "h1", "job_id": job_id, "task_id": task_id, "exit_status": 0,
                      "failed": 0, "usage": {}, **report})


def started_again(qm: Qmaster) -> Qmaster:
    """A qmaster started on the spool as the daemons start one (the old one
    is as killed: nothing of it is used)."""
    again = Qmaster(qm.cell, "h1")
    again.load()
    again.settle_journal()
    return again


def state(job: Job) -> dict[str, Any]:
    return dict(_conv.unstructure(job))


def job_file(qm: Qmaster, job_id: int) -> bytes:
    with open(os.path.join(qm.spool.dir, job_relpath(job_id)), "rb") as f:
        return f.read()


def journal(qm: Qmaster) -> bytes:
    try:
        with open(qm.spool.journal.path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def test_a_pass_appends_a_line_per_job_and_leaves_its_file_and_a_restart_finds_it(qm):
    job_id = array(qm)
    before = job_file(qm, job_id)
    assert len(qm.flush(qm.schedule())) == 2
    assert job_file(qm, job_id) == before  # not written whole
    (line,) = journal(qm).splitlines()
    seq, number, text = line.split(b" ", 2)
    data = json.loads(text)
    assert int(number) == job_id and "spec" not in data and sorted(data["tasks"]) == ["1", "2"]
    assert int(seq) > json.loads(before)["spool_seq"]
    reader = Qmaster(qm.cell, "h1")  # python -m minisge.offline: it reads, and writes nothing
    reader.load()
    assert state(reader.jobs[job_id]) == state(qm.jobs[job_id])
    assert job_file(qm, job_id) == before and journal(qm) == line + b"\n"
    again = started_again(qm)
    assert state(again.jobs[job_id]) == state(qm.jobs[job_id])
    # the daemon's start wrote the line into the job's file and emptied the journal
    assert journal(qm) == b"" and sorted(json.loads(job_file(qm, job_id))["tasks"]) == ["1", "2"]


def test_ends_reruns_and_error_states_come_back_from_the_lines(qm):
    job_id = array(qm, tasks=5)
    qm.flush(qm.schedule())
    end(qm, job_id, 1)
    end(qm, job_id, 2, exit_status=99)  # rerun: pending again, its restart counted
    qm.flush(qm.schedule())
    end(qm, job_id, 3, exit_status=100)  # the job in error (Eqw)
    qm.flush(qm.schedule())
    assert len(journal(qm).splitlines()) >= 3
    job = qm.jobs[job_id]
    assert {t: (task.state, task.restarted) for t, task in job.tasks.items()} == {
        2: ("running", 1), 3: ("error", 0), 4: ("running", 0)}  # task 1 ended
    again = started_again(qm)
    assert state(again.jobs[job_id]) == state(job)


def test_a_whole_write_after_a_line_wins_over_it(qm):
    job_id = array(qm)
    qm.flush(qm.schedule())  # a line: priority 0
    job = qm.jobs[job_id]
    job.priority = -100
    qm.write_job(job)  # as a request writes: whole, synced
    again = started_again(qm)
    assert again.jobs[job_id].priority == -100 and state(again.jobs[job_id]) == state(job)


def test_a_job_number_given_again_does_not_take_the_old_jobs_lines(qm):
    job_id = array(qm, tasks=2)
    qm.flush(qm.schedule())  # a line of the old job: tasks 1 and 2 running
    end(qm, job_id, 1)
    end(qm, job_id, 2)
    qm.flush()
    assert job_id not in qm.jobs and not os.path.exists(os.path.join(qm.spool.dir, job_relpath(job_id)))
    qm.last_job_id = job_id - 1  # (as after a wrap of the job numbers)
    assert array(qm, tasks=3) == job_id
    assert json.loads(journal(qm).splitlines()[0].split(b" ", 2)[2])["tasks"]  # the old job's line is there
    again = started_again(qm)
    assert not again.jobs[job_id].tasks and list(again.jobs[job_id].pending) == [1, 2, 3]


def test_a_torn_last_line_is_passed_over_and_cut_off(qm):
    job_id = array(qm)
    qm.flush(qm.schedule())
    whole = journal(qm)
    torn = b'99 %d {"number":%d,"tas' % (job_id, job_id)  # the daemon killed in a write
    with open(qm.spool.journal.path, "ab") as f:
        f.write(torn)
    reader = Qmaster(qm.cell, "h1")  # python -m minisge.offline: it reads, and changes nothing
    reader.load()
    assert state(reader.jobs[job_id]) == state(qm.jobs[job_id]) and journal(qm) == whole + torn
    again = Qmaster(qm.cell, "h1")
    again.load()
    again.settle_journal()
    assert journal(qm) == b""  # the daemon's start: the line written into the file, the torn end gone
    with open(qm.spool.journal.path, "ab") as f:
        f.write(torn)  # again, and this time the start could not cut it off (the journal's
    again.spool.journal.whole = 0  # length before it, as read() leaves it then): the first append does
    again.execds["h1"] = Taker()
    again.config.register_execd("h1")
    end(again, job_id, 1)
    again.flush(again.schedule())
    again = started_again(again)
    assert sorted(again.jobs[job_id].tasks) == [2, 3]


def test_a_damaged_line_before_whole_ones_stops_the_start_naming_it(qm):
    job_id = array(qm)
    qm.flush(qm.schedule())
    end(qm, job_id, 1)
    qm.flush(qm.schedule())
    lines = journal(qm).splitlines(keepends=True)
    with open(qm.spool.journal.path, "wb") as f:
        f.write(b"".join([lines[0][:20] + b"\n", *lines[1:]]))
    with pytest.raises(FormatError) as e:
        started_again(qm)
    assert e.value.path == qm.spool.journal.path and e.value.line == 1


def test_an_append_the_disk_refuses_writes_the_jobs_whole_instead(qm, caplog):
    job_id = array(qm)
    qm.flush(qm.schedule())
    end(qm, job_id, 1)
    lines = journal(qm)
    qm.spool.journal.close()
    qm.spool.journal.fd = os.open("/dev/full", os.O_WRONLY)  # ENOSPC at every write
    try:
        started = qm.flush(qm.schedule())
        end(qm, job_id, 3)
        qm.flush()
    finally:
        qm.spool.journal.close()
    assert [t.task_id for _, t in started] == [3]  # the dispatch stands: its job was written whole
    said = [r.getMessage() for r in caplog.records if "journal" in r.getMessage()]
    assert said == ["cannot append to the job journal (No space left on device): the jobs are written whole"]
    assert journal(qm) == lines
    data = json.loads(job_file(qm, job_id))
    assert sorted(data["tasks"]) == ["2"] and data["spool_seq"] > int(lines.split(b" ", 1)[0])
    again = started_again(qm)
    assert state(again.jobs[job_id]) == state(qm.jobs[job_id])


def test_an_append_written_in_part_is_cut_back_to_the_last_whole_line(qm):
    job_id = array(qm)
    qm.flush(qm.schedule())
    lines = journal(qm)
    journal_ = qm.spool.journal
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (len(lines) + 10, hard))  # 10 bytes more, then EFBIG
    try:
        with pytest.raises(OSError):
            journal_.append([(10**6, job_id, state(qm.jobs[job_id]))])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert journal(qm) == lines and journal_.size == len(lines)
    journal_.append([(10**6 + 1, job_id, {"number": job_id})])
    assert journal(qm).splitlines()[-1].startswith(b"1000001 ")


def test_a_journal_past_its_limit_is_written_into_the_job_files_and_emptied(qm, monkeypatch):
    monkeypatch.setattr(qmaster_module, "JOURNAL_LIMIT", 1)
    job_id = array(qm)
    qm.flush(qm.schedule())
    assert journal(qm) == b"" and qm.spool.journal.journaled == set()
    assert sorted(json.loads(job_file(qm, job_id))["tasks"]) == ["1", "2"]
    again = started_again(qm)
    assert state(again.jobs[job_id]) == state(qm.jobs[job_id])


def test_a_compaction_that_keeps_failing_keeps_the_lines_and_is_said_once(qm, monkeypatch, caplog):
    monkeypatch.setattr(qmaster_module, "JOURNAL_LIMIT", 1)

    def failing_sync(paths: object) -> None:  # a disk whose syncs fail (EIO), its appends still taken
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(qmaster_module, "sync_paths", failing_sync)
    job_id = array(qm, tasks=6)
    qm.flush(qm.schedule())
    for task_id in (1, 2, 3):
        end(qm, job_id, task_id)
        qm.flush(qm.schedule())  # a line appended, a compaction tried: each pass
    assert len(journal(qm).splitlines()) == 4 and qm.spool.journal.journaled == {job_id}
    said = [r.getMessage() for r in caplog.records if "journal" in r.getMessage()]
    assert said == ["cannot compact the job journal: [Errno 5] Input/output error (kept, tried again)"]
    monkeypatch.undo()
    again = started_again(qm)  # the lines still hold
    assert state(again.jobs[job_id]) == state(qm.jobs[job_id])


def test_a_spool_of_before_the_journal_loads_as_it_was(qm):
    """Job files without ``spool_seq`` and no journal (spool version 2): as written."""
    job_id = array(qm)
    path = os.path.join(qm.spool.dir, job_relpath(job_id))
    data = json.loads(job_file(qm, job_id))
    del data["spool_seq"]
    with open(path, "w") as f:
        json.dump(data, f)
    again = started_again(qm)
    assert state(again.jobs[job_id]) == state(qm.jobs[job_id])
    again.execds["h1"] = Taker()
    again.config.register_execd("h1")
    again.flush(again.schedule())
    assert json.loads(journal(qm).split(b" ", 2)[2])["tasks"]  # and it journals from then on


STEP = st.tuples(st.sampled_from(["submit", "pass", "end", "rerun", "error", "alter", "suspend", "unsuspend",
                                  "delete", "hold", "compact", "restart"]),
                 st.integers(0, 5), st.integers(1, 4))


def step(qm: Qmaster, what: str, i: int, k: int) -> Qmaster:
    """One transition of ``qm`` (or, ``restart``, a qmaster started on its
    spool, which the test goes on with); whole writes (requests, job
    control) and journal lines (passes, ends) come in any order."""
    numbers = sorted(qm.jobs)
    n = numbers[i % len(numbers)] if numbers else 0
    if what == "submit":
        qm.submit(dict(REQ, array=[1, k + 1, 1]), 0, 0)
    elif what == "pass":
        qm.flush(qm.schedule())
    elif what == "compact":
        qm.compact_journal()
    elif what == "restart":
        qm = started_again(qm)
        qm.execds["h1"] = Taker()
        qm.config.register_execd("h1")
    elif not n:
        pass
    elif what in ("end", "rerun", "error"):
        running = [t for t, task in qm.jobs[n].tasks.items() if task.state == "running"]
        if running:
            end(qm, n, running[0], exit_status={"end": 0, "rerun": 99, "error": 100}[what])
    elif what == "alter":
        qm.qalter({"targets": [str(n)], "changes": {"priority": -10 * k}}, 0)
    elif what in ("suspend", "unsuspend"):
        qm.qmod_job_control({"action": "sj" if what == "suspend" else "usj", "targets": [str(n)]}, 0)
    elif what == "delete":
        trio.run(qm.delete, [f"{n}.{k}"], 0, None, True)
    elif what == "hold":
        qm.hold([str(n)], 0, "u")
    return qm


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(STEP, max_size=25))
@example(steps=[("submit", 0, 3), ("pass", 0, 1), ("alter", 0, 1), ("end", 0, 1), ("pass", 0, 1), ("restart", 0, 1)])
@example(steps=[("submit", 0, 3), ("pass", 0, 1), ("alter", 0, 2)])  # a whole write after a line: it wins
@example(steps=[("submit", 0, 1), ("pass", 0, 1), ("end", 0, 1), ("end", 0, 1), ("submit", 0, 2), ("pass", 0, 1),
                ("compact", 0, 1), ("error", 0, 1), ("pass", 0, 1), ("restart", 0, 1)])
def test_a_restart_at_any_moment_finds_every_job_as_memory_had_it(steps, tmp_path_factory):
    qm = small_qmaster(tmp_path_factory.mktemp("journal") / "root", slots=2)
    qm.execds["h1"] = Taker()
    qm.config.register_execd("h1")
    for what, i, k in [*steps, ("restart", 0, 1)]:
        if what == "restart":
            qm.flush()  # killed after the loop's flush (what changed since is the execd's to report again)
        before = {n: state(job) for n, job in qm.jobs.items()}
        qm = step(qm, what, i, k)
        if what == "restart":
            assert {n: state(job) for n, job in qm.jobs.items()} == before, steps
