"""qsub -hold_jid_ad (submit(1)), with a real cell: task n of the dependent
array waits for task n of its predecessor; qstat and qstat -j show it as
8.1.9 does; what 8.1.9 refuses is refused with its words."""

from __future__ import annotations

import os

from cellutil import script


def _task_lines(cell, job: int, *args: str) -> dict[str, str]:
    """``qstat -u '*'``'s pending and running lines of ``job``: task ids → state."""
    r = cell.run("qstat", "-u", "*", *args)
    assert r.rc == 0, r
    out = {}
    for line in r.out.splitlines()[2:]:
        parts = line.split()
        if parts[0] == str(job):
            out[parts[-1]] = parts[4]
    return out


def test_task_n_of_the_dependent_array_waits_for_task_n(cell, users):
    user = users[0].pw_name
    go = os.path.join(cell.work, "go")
    first = script(cell, "first.sh",
                   f'if [ "$SGE_TASK_ID" = 2 ]; then while [ ! -f {go} ]; do sleep 0.1; done; fi')
    a = cell.submit("-N", "first", "-t", "1-2", first, user=user)
    b = cell.submit("-N", "second", "-t", "1-2", "-hold_jid_ad", "first", "-b", "y", "/bin/true", user=user)

    # task 1 of the second job runs once task 1 of the first has ended ...
    b1 = cell.wait_records(b)[0]
    a1 = next(r for r in cell.records_of(a) if r[35] == "1")
    assert b1[35] == "1" and int(b1[9]) >= int(a1[10])
    # ... task 2 waits for task 2 of the first, which runs on
    assert _task_lines(cell, a) == {"2": "r"}
    assert _task_lines(cell, b) == {"2": "hqw"}
    assert _task_lines(cell, b, "-s", "ha") == {"2": "hqw"}  # held by its array dependency
    detail_b = cell.run("qstat", "-j", str(b))
    assert detail_b.rc == 0 and f"ja_ad_predecessor_list:     {a}\n" in detail_b.out, detail_b
    assert "(req)" not in detail_b.out  # 8.1.9 prints no request line for -hold_jid_ad
    detail_a = cell.run("qstat", "-j", str(a))
    assert f"ja_ad_successor_list:       {b}\n" in detail_a.out, detail_a

    open(go, "w").close()
    records = cell.wait_records(b, n=2)
    b2 = next(r for r in records if r[35] == "2")
    a2 = next(r for r in cell.records_of(a) if r[35] == "2")
    assert int(b2[9]) >= int(a2[10])
    assert all(r[11] == "0" and r[12] == "0" for r in records)  # failed, exit_status


def test_hold_jid_ad_needs_array_jobs_of_the_same_range(cell, users):
    user = users[0].pw_name
    a = cell.submit("-N", "first", "-h", "-t", "1-2", "-b", "y", "/bin/true", user=user)
    r = cell.run("qsub", "-hold_jid_ad", str(a), "-b", "y", "/bin/true", user=user)
    assert (r.rc, r.out) == (1, ""), r
    assert r.err == ('Unable to run job: Can only specify "-hold_jid_ad" option with an array job '
                     '(using "-t" option)\nExiting.\n')
    r = cell.run("qsub", "-t", "1-3", "-hold_jid_ad", "first", "-b", "y", "/bin/true", user=user)
    assert (r.rc, r.err) == (1, "Unable to run job: This array job must have the same range of sub-tasks as "
                                "the dependent array job specified with -hold_jid_ad\nExiting.\n"), r
    plain = cell.submit("-N", "plain", "-h", "-b", "y", "/bin/true", user=user)
    r = cell.run("qsub", "-t", "1-2", "-hold_jid_ad", str(plain), "-b", "y", "/bin/true", user=user)
    assert r.rc == 1 and r.err.startswith('Unable to run job: Can only specify "-hold_jid_ad"'), r
    assert sorted(cell.qstat_states()) == [a, plain]  # nothing else was submitted
