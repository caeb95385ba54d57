"""Load control through a real cell: load_thresholds (state ``a``),
suspend_thresholds/nsuspend/suspend_interval (``A``, jobs ``T``) and
subordinate_list (``S``), with the load coming from a sge_conf(5)
``load_sensor`` the test controls (real load is noise)."""

from __future__ import annotations

import os
import time

import pytest
from cellutil import WAIT, Cell

pytestmark = pytest.mark.root

SENSOR = """#!/bin/sh
while read line; do
  [ "$line" = quit ] && exit 0
  echo begin
  echo "testhost:np_load_avg:$(cat {path})"
  echo end
done
"""


def poll(predicate, what: str, timeout: float = WAIT):
    """Wait for ``predicate`` (the execd reports load every 10 seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = predicate()
        if v:
            return v
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def set_load(cell: Cell, value: str) -> None:
    path = os.path.join(cell.dir, "np_load")
    with open(path + ".tmp", "w") as f:
        f.write(value + "\n")
    os.rename(path + ".tmp", path)


def use_sensor(cell: Cell, value: str) -> None:
    """A load sensor reporting np_load_avg from a file, in testhost's local configuration."""
    set_load(cell, value)
    sensor = os.path.join(cell.dir, "sensor.sh")
    with open(sensor, "w") as f:
        f.write(SENSOR.format(path=os.path.join(cell.dir, "np_load")))
    os.chmod(sensor, 0o755)
    conf = os.path.join(cell.dir, "testhost")
    with open(conf, "w") as f:
        f.write(f"load_sensor {sensor}\n")
    r = cell.run("qconf", "-Aconf", conf)
    assert r.rc == 0, r


def queue_line(cell: Cell, qi: str, *extra: str) -> list[str]:
    """The ``qstat -f`` line of ``qi`` and the lines that follow it up to the next queue."""
    out = cell.run("qstat", "-f", *extra).out.splitlines()
    for i, line in enumerate(out):
        if line.startswith(qi + " "):
            rest = []
            for more in out[i + 1:]:
                if more.startswith("-----") or more.startswith("#####") or not more.strip():
                    break
                rest.append(more)
            return [line] + rest
    return []


def qi_states(cell: Cell, qi: str) -> str:
    line = queue_line(cell, qi)
    parts = line[0].split() if line else []
    return parts[5] if len(parts) > 5 else ""


def job_state(cell: Cell, job: int) -> str:
    return cell.qstat_states().get(job, "")


def sleeper(cell: Cell, *args: str) -> int:
    return cell.submit("-b", "y", *args, "/bin/sleep", "300")


def test_load_threshold_alarm_blocks_dispatch_until_the_load_falls(cell):
    use_sensor(cell, "5.00")
    poll(lambda: "a" in qi_states(cell, "all.q@testhost"), "load alarm a")
    lines = queue_line(cell, "all.q@testhost", "-explain", "a")
    assert lines[1:] == ["\talarm hl:np_load_avg=5.00 load-threshold=1.75"]
    assert queue_line(cell, "all.q@testhost")[1:] == []  # reasons only with -explain
    job = sleeper(cell)
    poll(lambda: "overloaded" in cell.run("qstat", "-j", str(job)).out, "scheduler message")
    detail = cell.run("qstat", "-j", str(job)).out
    assert ('queue instance "all.q@testhost" dropped because it is overloaded: '
            "np_load_avg=5.000000 (no load adjustment) >= 1.75") in detail
    time.sleep(2)
    assert job_state(cell, job) == "qw"
    set_load(cell, "0.10")
    poll(lambda: job_state(cell, job) == "r", "dispatch after the load fell")
    assert qi_states(cell, "all.q@testhost") == ""
    cell.run("qdel", str(job))


def test_suspend_threshold_suspends_and_resumes_one_job_per_interval(cell):
    use_sensor(cell, "0.10")
    for attr, value in (("suspend_thresholds", "np_load_avg=3"), ("nsuspend", "1"),
                        ("suspend_interval", "0:0:3")):
        r = cell.run("qconf", "-rattr", "queue", attr, value, "all.q")
        assert r.rc == 0, r
    first = sleeper(cell)
    poll(lambda: job_state(cell, first) == "r", "first job running")
    time.sleep(1.1)  # a later start time: the second job has the shorter run time
    second = sleeper(cell)
    poll(lambda: job_state(cell, second) == "r", "second job running")
    set_load(cell, "4.00")
    poll(lambda: "A" in qi_states(cell, "all.q@testhost"), "suspend alarm A")
    assert qi_states(cell, "all.q@testhost") == "aA"
    # the job with the shortest run time first, the other one an interval later
    poll(lambda: job_state(cell, second) == "T", "second job suspended on threshold")
    assert job_state(cell, first) in ("r", "T")
    poll(lambda: job_state(cell, first) == "T", "first job suspended on threshold")
    lines = queue_line(cell, "all.q@testhost", "-explain", "A")
    assert lines[1] == "\talarm hl:np_load_avg=4.00 suspend-threshold=3"
    lines = queue_line(cell, "all.q@testhost", "-explain", "aA")
    assert lines[1:3] == ["\talarm hl:np_load_avg=4.00 load-threshold=1.75",
                          "\talarm hl:np_load_avg=4.00 suspend-threshold=3"]
    set_load(cell, "0.10")
    # resumed one per interval, the longest running first
    poll(lambda: job_state(cell, first) == "r", "first job resumed")
    assert job_state(cell, second) in ("T", "r")
    poll(lambda: job_state(cell, second) == "r", "second job resumed")
    assert qi_states(cell, "all.q@testhost") == ""
    cell.run("qdel", str(first), str(second))


def test_subordinate_queue_is_suspended_while_the_superordinated_is_full(cell):
    text = cell.run("qconf", "-sq", "all.q").out
    conf = os.path.join(cell.dir, "high.q")
    with open(conf, "w") as f:
        for line in text.splitlines():
            key = line.split(" ", 1)[0]
            if key == "qname":
                line = "qname high.q"
            elif key == "slots":
                line = "slots 1"
            elif key == "subordinate_list":
                line = "subordinate_list all.q"
            f.write(line + "\n")
    r = cell.run("qconf", "-Aq", conf)
    assert r.rc == 0, r
    low = sleeper(cell, "-q", "all.q")
    poll(lambda: job_state(cell, low) == "r", "job in all.q running")
    high = sleeper(cell, "-q", "high.q")
    poll(lambda: job_state(cell, high) == "r", "job in high.q running")
    poll(lambda: qi_states(cell, "all.q@testhost") == "S", "all.q@testhost subordinated")
    poll(lambda: job_state(cell, low) == "S", "job in all.q suspended")
    assert qi_states(cell, "high.q@testhost") == ""
    waiting = sleeper(cell, "-q", "all.q")
    time.sleep(2)
    assert job_state(cell, waiting) == "qw"  # nothing dispatched to a suspended instance
    assert 'queue instance "all.q@testhost" dropped because it is temporarily not available' in cell.run(
        "qstat", "-j", str(waiting)).out
    cell.run("qdel", str(high))
    poll(lambda: job_state(cell, low) == "r", "job in all.q resumed")
    poll(lambda: job_state(cell, waiting) == "r", "waiting job dispatched")
    assert qi_states(cell, "all.q@testhost") == ""
    cell.run("qdel", str(low), str(waiting))
