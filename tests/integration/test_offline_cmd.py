"""``python -m minisge.offline``: the plan of a stopped cell is what the
daemon does once it is started."""

from __future__ import annotations

import subprocess
import sys

from cellutil import WAIT, Cell

from minisge import cell as cell_mod
from minisge.qmaster.qmaster import Qmaster

REQ = {"job_name": "sleeper", "binary": True, "command": "/bin/sleep", "args": ["60"]}


def test_the_offline_plan_of_a_stopped_cell_is_what_the_daemon_does():
    c = Cell(slots=2)
    try:
        c.minisge("init", "--hostname", c.host, "--slots", "2")
        qm = Qmaster(cell_mod.Cell(c.root), c.host)
        qm.load()
        qm.config.cell_owner_only = False
        spec = dict(REQ, cwd=c.work)
        plain = qm.submit(dict(spec), 0, 0)["job_id"]
        smp = qm.submit(dict(spec, pe={"name": "smp", "ranges": [[2, 2]]}), 0, 0)["job_id"]
        nowhere = qm.submit(dict(spec, hard_resources={"arch": "none"}), 0, 0)["job_id"]
        del qm  # the spool is the truth: nothing of this process is used below

        p = subprocess.run([sys.executable, "-m", "minisge.offline", c.root], env=c.env(),
                           capture_output=True, text=True, timeout=WAIT)
        assert p.returncode == 0, p.stderr
        assumed, *lines = p.stdout.splitlines()
        # testhost is not this host: its load values are the complex's defaults
        assert assumed.startswith("assumed load values (a stopped cell has no load report): testhost at their complex")
        dispatches = [line for line in lines if " -> " in line]
        # the 2-slot job is more urgent (sge_priority(5)): it takes both slots
        assert dispatches == [f"{smp}.1 -> all.q@{c.host} (2)"]
        assert {int(line.split(":")[0]) for line in lines if " -> " not in line} == {plain, nowhere}

        c.start()
        states = c.wait_for(lambda: (s := c.qstat_states()).get(smp) == "r" and s, what="the smp job running")
        assert states == {smp: "r", plain: "qw", nowhere: "qw"}
        r = c.run("qstat", "-u", "*")
        (line,) = [ln for ln in r.out.splitlines() if ln.split()[0] == str(smp)]
        assert f"all.q@{c.host}" in line and line.split()[-1] == "2"
    finally:
        c.cleanup()
