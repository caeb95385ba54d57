"""A rescheduled task's restart count across a crash of its daemon.

A job that exits 99 is rescheduled and every later run of it sees
``RESTARTED=1`` (qsub(1) -r, sge_shepherd(8)): 8.1.9 keeps the count in the
task (``JAT_job_restarted``, spooled with the job), whatever sends the task
back to pending afterwards.  Here the daemon dies between the rerun's task
directory and its shepherd (the execd's crash hook), so after the restart
the task is found never started and goes back to pending
(``Qmaster.reconcile_host``): its next run still sees ``RESTARTED=1``.
A soak run (bench/soak.py) once hit this window by a kill -9 (its violation
``RESTARTED of its runs ['0', '0'], expected ['0', '1']``).
"""

from __future__ import annotations

import os

import pytest
from cellutil import Cell, process_gone, script

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="a cell of its own, started with the crash hook: root only")

FAILED, EXIT_STATUS = 11, 12  # accounting(5) fields


def test_a_rescheduled_task_lost_before_its_rerun_started_is_still_restarted():
    c = Cell()
    try:
        daemon = c.start_crashing_before_shepherd(2)  # the 2nd shepherd: the rerun's
        evidence, once = os.path.join(c.work, "evidence"), os.path.join(c.work, "once")
        body = (f'echo "$RESTARTED" >> {evidence}\n'
                f'if [ -e {once} ]; then exit 0; fi\n: > {once}\nexit 99')
        job = c.submit("-o", "/dev/null", "-j", "y", script(c, "r.sh", body))
        c.wait_for(lambda: process_gone(daemon), 60, "the daemon's death at the hook (the rerun's launch)")
        active = os.path.join(c.root, "default", "spool", c.host, "active_jobs")
        assert os.listdir(active) == [f"{job}.1"] and not os.path.exists(os.path.join(active, f"{job}.1", "pid"))
        c.minisge("start", "--hostname", c.host)
        c.wait_records(job, n=2, timeout=60)
        c.wait_for(lambda: c.qstat_states().get(job) is None, 60, f"job {job} gone from qstat")
        records = c.records_of(job)
        assert [(r[FAILED], r[EXIT_STATUS]) for r in records] == [("25", "99"), ("0", "0")], records
        with open(evidence) as f:
            assert f.read().split() == ["0", "1"]  # the rerun ran once, restarted
    finally:
        c.cleanup()
