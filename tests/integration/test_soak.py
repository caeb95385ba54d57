"""The soak (bench/soak.py) run small: SIGKILLs under a mixed workload, then a count.

The soak runs a mixed workload on a real cell while it kills the daemons
with SIGKILL at random moments, then checks that every job ran to an end
with one accounting record per run, none lost, none run twice, ids without
gaps, no daemon dead but by a kill and no traceback in any log.  Both runs
are marked ``slow`` (deselect them locally with ``-m "not slow"``); CI runs
them.  A failure prints the soak's report: its violations, and the kept
directory whose ``actions.log`` says what was killed when.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="root only (jobs run as test users)")

SOAK = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "soak.py")


def run_soak(*args: str) -> dict[str, int]:
    """Run the soak; its figures, once it found nothing wrong."""
    p = subprocess.run([sys.executable, SOAK, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "no violations" in p.stdout, p.stdout + p.stderr
    return {name: int(re.search(rf"\b{name}:? (\d+)", p.stdout).group(1)) for name in ("kills", "jobs", "finished")}


@pytest.mark.slow
def test_soak_all_in_one_daemon_killed_20_times():
    f = run_soak("--mode", "allinone", "--duration", "70", "--kills", "20", "--kill-interval", "1,2.5",
                 "--down", "0.2,1", "--seed", "1")
    assert f["kills"] >= 10 and f["jobs"] >= 30 and f["finished"] >= 30, f


@pytest.mark.slow
def test_soak_qmaster_and_execds_killed_in_turn():
    f = run_soak("--mode", "roles", "--duration", "35", "--kills", "10", "--kill-interval", "1,2.5",
                 "--down", "0.2,1", "--seed", "2")
    assert f["kills"] >= 5 and f["jobs"] >= 15 and f["finished"] >= 15, f
