"""``python -m minisge.offline`` explains why the jobs of a stopped cell wait:
what ``qstat -j`` said of them while it ran, full and disabled queue
instances included, and no "unknown resource" for the load values no execd
reports to a stopped cell."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from cellutil import WAIT, Cell

from minisge import cell as cell_mod
from minisge.cell import short_hostname
from minisge.qmaster.qmaster import Qmaster

#: 8.1.9's words for the load value a host offers (mem_free differs from one reading to the next)
MEM_FREE = re.compile(r"hl:mem_free=[0-9.]+")


def add_queue(c: Cell, name: str, slots: int) -> None:
    """A cluster queue like all.q (the same hosts), with ``slots`` slots."""
    text = c.run("qconf", "-sq", "all.q").out
    text = re.sub(r"(?m)^qname .*$", f"qname {name}", text)
    text = re.sub(r"(?m)^slots .*$", f"slots {slots}", text)
    path = os.path.join(c.work, name)
    with open(path, "w") as f:
        f.write(text)
    r = c.run("qconf", "-Aq", path)
    assert r.rc == 0, r


def scheduling_info(c: Cell, job: int) -> list[str]:
    """The lines of ``qstat -j JOB`` under "scheduling info:"."""
    out = c.run("qstat", "-j", str(job)).out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("scheduling info:"))
    lines = [out[start][len("scheduling info:"):].strip()]
    lines += [line.strip() for line in out[start + 1:] if line.startswith(" " * 28)]
    return lines


def offline(c: Cell) -> list[str]:
    p = subprocess.run([sys.executable, "-m", "minisge.offline", c.root], env=c.env(),
                       capture_output=True, text=True, timeout=WAIT)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def explained(lines: list[str], job: int) -> list[str]:
    return [line.split(": ", 1)[1] for line in lines if line.startswith(f"{job}: ")]


def test_the_offline_plan_explains_full_and_disabled_queues_as_qstat_j_did():
    host = short_hostname()  # the host the offline plan measures its load values on
    c = Cell(host=host, slots=2)
    try:
        c.start()
        add_queue(c, "full.q", 1)
        add_queue(c, "off.q", 1)
        assert c.run("qmod", "-d", f"off.q@{host}").rc == 0
        busy = c.submit("-b", "y", "-q", "full.q", "/bin/sleep", "600")
        c.wait_for(lambda: c.qstat_states().get(busy) == "r", what="the job of full.q running")
        # all.q has 2 free slots: neither job fits in it
        huge = c.submit("-b", "y", "-q", "all.q", "-l", "mem_free=100000T", "/bin/true")
        wide = c.submit("-b", "y", "-q", "all.q", "-pe", "smp", "3", "/bin/true")
        said = {}
        for job in (huge, wide):
            said[job] = c.wait_for(lambda job=job: (i := scheduling_info(c, job)) and len(i) > 2 and i,
                                   what=f"job {job}'s reasons")
        c.stop()

        lines = offline(c)
        assert lines[0] == f"assumed load values (a stopped cell has no load report): {host} measured here now"
        assert not any(" -> " in line for line in lines)
        for job in (huge, wide):
            assert [MEM_FREE.sub("hl:mem_free=N", m) for m in explained(lines, job)] == \
                [MEM_FREE.sub("hl:mem_free=N", m) for m in said[job]], (job, lines)
        assert f'queue instance "off.q@{host}" dropped because it is disabled' in said[huge]
        assert f'queue instance "full.q@{host}" dropped because it is full' in said[huge]
        assert any(m.startswith("(-l mem_free=100000T) cannot run") for m in said[huge])
        assert not any("unknown resource" in line for line in lines)

        # all.q disabled too: the snapshot holds no pending task, the jobs are explained all the same
        qm = Qmaster(cell_mod.Cell(c.root), host)
        qm.load()
        qm.config.add_qi_state(f"all.q@{host}", "d")
        del qm
        lines = offline(c)
        for job in (huge, wide):
            assert sorted(explained(lines, job)) == sorted([
                f'queue instance "all.q@{host}" dropped because it is disabled',
                f'queue instance "full.q@{host}" dropped because it is full',
                f'queue instance "off.q@{host}" dropped because it is disabled',
                "All queues dropped because of overload or full"]), lines
    finally:
        c.cleanup()
