"""The shepherd's run sequence and exit codes through the real daemon
(sge_shepherd(8), queue_conf(5) prolog/epilog, sge_pe(5) procedures,
sge_conf(5) FORBID_RESCHEDULE/FORBID_APPERROR; man/man5/minisge_exit_codes.5).

Every case writes an accounting record; the ``failed`` and ``exit_status``
fields (12 and 13) and the states qstat shows are those of Grid Engine
8.1.9 (checked on the real one, see the report of the shepherd issue)."""

from __future__ import annotations

import os
import re

import pytest
from cellutil import Cell, script, set_queue, user_cell_fixtures

pytestmark = pytest.mark.root

USER = "msgeuser1"
user, cell = user_cell_fixtures(USER)
ERROR_REASON = re.compile(r"^error reason          1:      \d\d/\d\d/\d{4} \d\d:\d\d:\d\d \[\d+:\d+\]: (.*)$", re.M)


def submit(c: Cell, *command: str, name: str = "t") -> int:
    """A binary job of USER, stdout and stderr into one file in the work directory."""
    return c.submit("-b", "y", "-N", name, "-o", c.work, "-j", "y", *command, user=USER)


def output(c: Cell, job: int, name: str = "t") -> str:
    with open(os.path.join(c.work, f"{name}.o{job}")) as f:
        return f.read()


def failed_and_exit(rec: list[str]) -> tuple[int, int]:
    return int(rec[11]), int(rec[12])


def queue_states(c: Cell) -> str:
    line = next(ln for ln in c.run("qstat", "-f").out.splitlines() if ln.startswith("all.q@"))
    parts = line.split()
    return parts[5] if len(parts) > 5 else ""


def wait_state(c: Cell, job: int, state: str | None) -> None:
    c.wait_for(lambda: c.qstat_states().get(job) == state, what=f"job {job} in state {state}")


def error_reason(c: Cell, job: int) -> str:
    r = c.run("qstat", "-j", str(job))
    m = ERROR_REASON.search(r.out)
    assert m, r
    return m.group(1)


def make_pe(c: Cell, name: str, start: str = "NONE", stop: str = "NONE") -> None:
    path = os.path.join(c.work, name)
    with open(path, "w") as f:
        f.write(f"pe_name {name}\nslots 10\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args {start}\n"
                f"stop_proc_args {stop}\nallocation_rule $pe_slots\ncontrol_slaves FALSE\njob_is_first_task TRUE\n"
                "urgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
    assert c.run("qconf", "-Ap", path).rc == 0
    assert c.run("qconf", "-aattr", "queue", "pe_list", name, "all.q").rc == 0


def set_qmaster_params(c: Cell, value: str) -> None:
    conf = c.run("qconf", "-sconf").out
    conf = re.sub(r"(?m)^qmaster_params .*$", f"qmaster_params               {value}", conf)
    path = os.path.join(c.work, "global")
    with open(path, "w") as f:
        f.write(conf)
    r = c.run("qconf", "-Mconf", path)
    assert r.rc == 0, r


# ---------------------------------------------------------------- prolog


def test_prolog_exit_0_runs_before_the_job_into_its_output(cell):
    set_queue(cell, "prolog", script(cell, "pro.sh", 'echo "prolog as $(id -un)"'))
    job = submit(cell, "/bin/echo", "job")
    assert failed_and_exit(cell.wait_records(job)[0]) == (0, 0)
    assert output(cell, job) == f"prolog as {USER}\njob\n"
    assert queue_states(cell) == ""


def test_prolog_variables_are_argv_words_and_a_job_name_is_inert(cell):
    args = script(cell, "args.sh", 'for a in "$@"; do echo "[$a]"; done')
    set_queue(cell, "prolog", f"{args} $job_name $job_id $job_owner $queue $host $ja_task_id $processors $stdout_path")
    name = "x;>PWNED"  # a shell would create ./PWNED
    job = submit(cell, "/bin/true", name=name)
    cell.wait_records(job)
    out_path = os.path.join(cell.work, f"{name}.o{job}")
    assert output(cell, job, name).splitlines() == [
        f"[{name}]", f"[{job}]", f"[{USER}]", "[all.q]", f"[{cell.host}]", "[0]", "[UNDEFINED]", f"[{out_path}]"]
    assert not os.path.exists(os.path.join(cell.work, "PWNED"))
    assert not os.path.exists(os.path.expanduser(f"~{USER}/PWNED"))


def test_prolog_exit_1_requeues_the_job_and_puts_the_queue_in_error(cell):
    set_queue(cell, "prolog", script(cell, "pro1.sh", "exit 1"))
    job = submit(cell, "/bin/echo", "job")
    assert failed_and_exit(cell.wait_records(job)[0]) == (8, 0)
    wait_state(cell, job, "qw")
    assert queue_states(cell) == "E"
    explain = cell.run("qstat", "-f", "-explain", "E").out
    assert f"queue all.q marked QERROR as result of job {job}'s failure at host {cell.host}" in explain
    # qmod -c clears the queue's error state; the job runs again, now without the prolog
    set_queue(cell, "prolog", "NONE")
    r = cell.run("qmod", "-c", "all.q")
    assert r.rc == 0 and r.out == f'root@{cell.host} changed state of "all.q@{cell.host}" (no error)\n'
    recs = cell.wait_records(job, 2)
    assert failed_and_exit(recs[1]) == (0, 0)
    assert output(cell, job) == "job\n"


def test_prolog_exit_99_reschedules_the_job(cell):
    marker = os.path.join(cell.work, "again")
    set_queue(cell, "prolog", script(cell, "pro99.sh", f'[ -e {marker} ] && exit 0; touch {marker}; exit 99'))
    job = submit(cell, script(cell, "job.sh", "echo RESTARTED=$RESTARTED"))
    recs = cell.wait_records(job, 2)
    assert [failed_and_exit(r) for r in recs] == [(25, 0), (0, 0)]
    assert output(cell, job) == "RESTARTED=1\n"
    assert queue_states(cell) == ""


def test_prolog_exit_100_puts_the_job_in_error_and_qmod_cj_clears_it(cell):
    set_queue(cell, "prolog", script(cell, "pro100.sh", "echo prolog; exit 100"))
    job = submit(cell, "/bin/echo", "job")
    assert failed_and_exit(cell.wait_records(job)[0]) == (30, 0)
    wait_state(cell, job, "Eqw")
    assert error_reason(cell, job) == "exit_status of prolog = 100"
    assert queue_states(cell) == ""
    set_queue(cell, "prolog", "NONE")
    r = cell.run("qmod", "-cj", str(job), user=USER)
    assert r.out == f"{USER}@{cell.host} cleared error state of job {job}\n"
    recs = cell.wait_records(job, 2)
    assert failed_and_exit(recs[1]) == (0, 0)
    assert output(cell, job) == "prolog\njob\n"


# ---------------------------------------------------------------- epilog


def test_epilog_runs_after_a_failed_prolog(cell):
    set_queue(cell, "prolog", script(cell, "pro1.sh", "exit 1"))
    set_queue(cell, "epilog", script(cell, "epi.sh", 'echo "epilog ${SGE_JOBEXIT_STAT-unset}"'))
    job = submit(cell, "/bin/echo", "job")
    cell.wait_records(job)
    assert output(cell, job) == "epilog unset\n"


def test_epilog_gets_the_jobs_exit_status(cell):
    set_queue(cell, "epilog", script(cell, "epi.sh", 'echo "epilog $SGE_JOBEXIT_STAT"'))
    job = submit(cell, script(cell, "job3.sh", "exit 3"))
    assert failed_and_exit(cell.wait_records(job)[0]) == (0, 3)
    assert output(cell, job) == "epilog 3\n"


def test_the_epilog_of_a_job_deleted_while_it_ran_runs_and_the_queue_stays_clean(cell):
    """8.1.9 runs the epilog after a qdel (checked on the real one): it
    cleans up after the killed job; the queue gets no error state."""
    set_queue(cell, "epilog", script(cell, "epi.sh", 'echo "epilog $SGE_JOBEXIT_STAT"'))
    job = submit(cell, "/bin/sleep", "60")
    wait_state(cell, job, "r")
    cell.run("qdel", str(job), user=USER)
    rec = cell.wait_records(job)[0]
    assert output(cell, job) == "epilog 137\n" and failed_and_exit(rec) == (100, 137), rec
    assert queue_states(cell) == ""


def test_epilog_exit_1_requeues_the_job_and_puts_the_queue_in_error(cell):
    set_queue(cell, "epilog", script(cell, "epi1.sh", "exit 1"))
    job = submit(cell, "/bin/echo", "job")
    assert failed_and_exit(cell.wait_records(job)[0])[0] == 15
    wait_state(cell, job, "qw")
    assert queue_states(cell) == "E"


# ---------------------------------------------------------------- PE procedures


def test_pe_start_exit_1_requeues_the_job_and_puts_the_queue_in_error(cell):
    make_pe(cell, "hxstart", start=script(cell, "start1.sh", "exit 1") + " $pe_hostfile")
    job = cell.submit("-b", "y", "-pe", "hxstart", "1", "-o", cell.work, "-N", "t", "/bin/echo", "job", user=USER)
    assert failed_and_exit(cell.wait_records(job)[0]) == (10, 0)
    wait_state(cell, job, "qw")
    assert queue_states(cell) == "E"


def test_pe_stop_exit_1_puts_the_queue_in_error_but_the_job_is_done(cell):
    make_pe(cell, "hxstop", start=script(cell, "start.sh", "echo start $*") + " $pe $pe_slots",
            stop=script(cell, "stop1.sh", "exit 1"))
    job = cell.submit("-b", "y", "-pe", "hxstop", "1", "-o", cell.work, "-N", "t", script(cell, "job4.sh", "exit 4"),
                      user=USER)
    assert failed_and_exit(cell.wait_records(job)[0]) == (13, 4)
    wait_state(cell, job, None)
    assert queue_states(cell) == "E"
    assert open(os.path.join(cell.work, f"t.po{job}")).read() == "start hxstop 1\n"


# ---------------------------------------------------------------- the job's own exit 99 / 100


def test_job_exit_99_is_rescheduled_and_restarted(cell):
    job = submit(cell, script(cell, "job99.sh", 'echo "RESTARTED=$RESTARTED"; [ "$RESTARTED" = 1 ] || exit 99'))
    recs = cell.wait_records(job, 2)
    assert [failed_and_exit(r) for r in recs] == [(25, 99), (0, 0)]
    assert output(cell, job) == "RESTARTED=0\nRESTARTED=1\n"


def test_job_exit_100_is_the_job_error_state(cell):
    job = submit(cell, script(cell, "job100.sh", "exit 100"))
    assert failed_and_exit(cell.wait_records(job)[0]) == (30, 100)
    wait_state(cell, job, "Eqw")
    assert error_reason(cell, job) == "exit_status of job start = 100"
    assert queue_states(cell) == ""


def test_forbid_reschedule_makes_exit_99_a_plain_exit_status(cell):
    set_qmaster_params(cell, "FORBID_RESCHEDULE=TRUE")
    job = submit(cell, script(cell, "job99.sh", "exit 99"))
    assert failed_and_exit(cell.wait_records(job)[0]) == (0, 99)
    wait_state(cell, job, None)


def test_forbid_apperror_makes_exit_100_a_plain_exit_status(cell):
    set_qmaster_params(cell, "FORBID_APPERROR=TRUE")
    job = submit(cell, script(cell, "job100.sh", "exit 100"))
    assert failed_and_exit(cell.wait_records(job)[0]) == (0, 100)
    wait_state(cell, job, None)


def test_forbid_apperror_does_not_apply_to_the_prolog(cell):
    set_qmaster_params(cell, "FORBID_APPERROR=TRUE")
    set_queue(cell, "prolog", script(cell, "pro100.sh", "exit 100"))
    job = submit(cell, "/bin/echo", "job")
    assert failed_and_exit(cell.wait_records(job)[0]) == (30, 0)
    wait_state(cell, job, "Eqw")
