"""qconf against a running cell (issue: qconf, the admin's basics): changes
take effect at once, a non-manager is denied with Grid Engine's message and
changes nothing, and the spool keeps what was changed."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from cellutil import WAIT, Cell  # the cell and users fixtures are in conftest.py

pytestmark = pytest.mark.root


def write(cell: Cell, name: str, text: str) -> str:
    path = os.path.join(cell.work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_show_commands_print_the_configuration(cell):
    r = cell.run("qconf", "-sql")
    assert (r.rc, r.out) == (0, "all.q\n")
    r = cell.run("qconf", "-sq", "all.q")
    assert r.rc == 0 and r.out.startswith("qname                 all.q\n")
    r = cell.run("qconf", "-sq", "nosuchq")
    assert (r.rc, r.err) == (1, 'No cluster queue or queue instance matches the phrase "nosuchq"\n')


def test_help_prints_usage_and_exits_0(cell):
    r = cell.run("qconf", "-help")
    assert r.rc == 0 and r.out.startswith("SGE 8.1.9\nusage: qconf [options]\n")


def test_unknown_option(cell):
    r = cell.run("qconf", "-nosuchopt")
    assert (r.rc, r.err) == (1, 'error: invalid option argument "-nosuchopt"\nUsage: qconf -help\n')


def test_missing_file(cell):
    r = cell.run("qconf", "-Ap", "/nonexist")
    assert r.rc == 1
    assert r.err == ('error: error opening file "/nonexist" for reading: No such file or directory\n'
                     "error reading in file\n")


def test_zero_slots_holds_jobs_back_until_restored(cell, users):
    user = users[0].pw_name
    r = cell.run("qconf", "-mattr", "queue", "slots", "0", "all.q")
    assert (r.rc, r.out) == (0, f'root@{cell.host} modified "all.q" in cluster queue list\n')
    job = cell.submit("-b", "y", "/bin/true", user=user)
    time.sleep(1.5)
    assert cell.qstat_states().get(job) == "qw"
    assert not cell.records_of(job)
    r = cell.run("qconf", "-mattr", "queue", "slots", "2", "all.q")
    assert r.rc == 0
    rec = cell.wait_records(job)[0]
    assert rec[0] == "all.q"


def test_new_queue_takes_jobs_at_once(cell, users):
    user = users[0].pw_name
    text = cell.run("qconf", "-sq", "all.q").out.replace("qname                 all.q", "qname                 new.q")
    path = write(cell, "new.q", text)
    r = cell.run("qconf", "-Aq", path)
    assert (r.rc, r.err) == (0, f'root@{cell.host} added "new.q" to cluster queue list\n')
    assert cell.run("qconf", "-sql").out == "all.q\nnew.q\n"
    assert os.path.exists(os.path.join(cell.qmaster_spool, "cqueues", "new.q"))
    job = cell.submit("-q", "new.q", "-b", "y", "/bin/true", user=user)
    rec = cell.wait_records(job)[0]
    assert rec[0] == "new.q"
    r = cell.run("qconf", "-dq", "new.q")
    assert (r.rc, r.err) == (0, f'root@{cell.host} removed "new.q" from cluster queue list\n')
    assert not os.path.exists(os.path.join(cell.qmaster_spool, "cqueues", "new.q"))


def test_rejected_queue_file_changes_nothing(cell):
    path = write(cell, "bad.q", "this is not a queue\nslots abc\n")
    r = cell.run("qconf", "-Aq", path)
    assert (r.rc, r.err) == (1, f'error: unknown attribute name "this"\nerror: error reading file: "{path}"\n')
    assert cell.run("qconf", "-sql").out == "all.q\n"


def test_non_manager_is_denied_and_nothing_changes(cell, users):
    user = users[0].pw_name
    before = cell.run("qconf", "-sq", "all.q").out
    r = cell.run("qconf", "-mattr", "queue", "slots", "4", "all.q", user=user)
    assert (r.rc, r.out, r.err) == (1, "", f'denied: "{user}" must be manager for this operation\n')
    r = cell.run("qconf", "-am", user, user=user)
    assert (r.rc, r.err) == (1, f'denied: "{user}" must be manager for this operation\n')
    path = write(cell, "smp2.pe", cell.run("qconf", "-sp", "smp").out.replace(" smp\n", " smp2\n"))
    r = cell.run("qconf", "-Ap", path, user=user)
    assert (r.rc, r.err) == (1, f'denied: "{user}" must be manager for this operation\n')
    # anyone may show
    r = cell.run("qconf", "-sq", "all.q", user=user)
    assert (r.rc, r.out) == (0, before)
    assert cell.run("qconf", "-spl").out == "make\nsmp\n"
    assert cell.run("qconf", "-sm").out == "root\n"


def test_a_manager_added_by_root_may_change(cell, users):
    user = users[1].pw_name
    assert cell.run("qconf", "-am", user).rc == 0
    r = cell.run("qconf", "-mattr", "queue", "slots", "3", "all.q", user=user)
    assert (r.rc, r.out) == (0, f'{user}@{cell.host} modified "all.q" in cluster queue list\n')
    assert "slots                 3\n" in cell.run("qconf", "-sq", "all.q").out


def test_changes_survive_a_restart(cell):
    assert cell.run("qconf", "-aattr", "queue", "complex_values", "h_vmem=2G", "all.q").rc == 0
    assert cell.run("qconf", "-dp", "make").rc == 1  # still in all.q's pe_list
    assert cell.run("qconf", "-dattr", "queue", "pe_list", "make", "all.q").rc == 0
    r = cell.run("qconf", "-dp", "make")
    assert (r.rc, r.err) == (0, f'root@{cell.host} removed "make" from parallel environment list\n')
    cell.stop()
    cell.start()
    out = cell.run("qconf", "-sq", "all.q").out
    assert "complex_values        h_vmem=2G\n" in out
    assert "pe_list               smp\n" in out
    assert cell.run("qconf", "-spl").out == "smp\n"


def test_editor_form_modifies_through_the_editor(cell):
    script = write(cell, "ed.sh", "#!/bin/sh\nsed -i 's/^slots .*/slots 1/' \"$1\"\n")
    os.chmod(script, 0o755)
    p = subprocess.run([sys.executable, "-m", "minisge.cli.qconf", "-mq", "all.q"], env=cell.env(EDITOR=script),
                       capture_output=True, text=True, timeout=WAIT, cwd=cell.work)
    assert p.returncode == 0, p.stderr
    assert p.stderr == f'root@{cell.host} modified "all.q" in cluster queue list\n'
    assert "slots                 1\n" in cell.run("qconf", "-sq", "all.q").out
