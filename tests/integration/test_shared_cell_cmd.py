"""A root-run cell shared by a lab's users, as the README's guide "A cell for
a lab" describes it (issue 13, item 6): root starts the cell; root (the
cell's admin user) is its manager; each user submits, lists and deletes
their own jobs, which run as them; a user cannot delete another's job,
change the configuration, disable a queue, make themselves manager, read
the cell key or stop the daemon, and nothing changes when they try; an
operator the manager names may disable and enable queues."""

from __future__ import annotations

import codecs
import os
import pwd

import pytest

pytestmark = pytest.mark.root

# a user's command runs in a child forked from this process (cellutil.run_as),
# which cannot import from the test interpreter's tree under /root: minisge stop
# reads /proc/PID/stat as ascii, whose codec is loaded here beforehand
codecs.lookup("ascii")


def test_a_root_run_cell_serves_its_users_their_own_jobs_and_nothing_more(cell, users):
    a, b = users[0].pw_name, users[1].pw_name
    assert cell.run("qconf", "-sm").out == "root\n"  # who ran init (root) is the manager
    with open(os.path.join(cell.common, "settings.sh")) as f:  # a user's login reads it
        assert f"export SGE_ROOT={cell.root}\n" in f.read()

    # ------------------------------------------------ their own jobs, run as them
    script = "#!/bin/sh\nid -un\n"
    ran = cell.submit("-cwd", "-N", "mine", input=script, user=a)
    (rec,) = cell.wait_records(ran)
    out = os.path.join(cell.work, f"mine.o{ran}")
    with open(out) as f:
        assert f.read() == f"{a}\n"
    assert pwd.getpwuid(os.stat(out).st_uid).pw_name == a
    held_a = cell.submit("-h", "-b", "y", "/bin/true", user=a)
    held_b = cell.submit("-h", "-b", "y", "/bin/true", user=b)
    listed = cell.run("qstat", "-u", a, user=b)  # everyone may look
    assert listed.rc == 0 and [int(ln.split()[0]) for ln in listed.out.splitlines()[2:]] == [held_a]

    # ------------------------------------------------ what a user may not do
    r = cell.run("qdel", str(held_b), user=a)
    assert (r.rc, r.out) == (1, f'{a} - you do not have the necessary privileges to delete the job "{held_b}"\n')
    queue_before = cell.run("qconf", "-sq", "all.q", user=a)  # reading the configuration is allowed
    assert queue_before.rc == 0 and "qname                 all.q\n" in queue_before.out
    r = cell.run("qconf", "-mattr", "queue", "slots", "9", "all.q", user=a)
    assert (r.rc, r.err) == (1, f'denied: "{a}" must be manager for this operation\n')
    r = cell.run("qconf", "-am", a, user=a)
    assert (r.rc, r.err) == (1, f'denied: "{a}" must be manager for this operation\n')
    r = cell.run("qmod", "-d", "all.q", user=a)
    assert (r.rc, r.out) == (1, f'{a} - you have no permission to modify queue "all.q@{cell.host}"\n')  # 8.1.9's
    assert cell.run("qconf", "-sq", "all.q").out == queue_before.out
    assert cell.run("qconf", "-sm").out == "root\n"
    r = cell.run("minisge", "stop", user=a)
    assert r.rc == 1 and "is not yours: only its owner or root can stop it" in r.err, r
    r = cell.run("qconf", "-km", user=a)
    assert (r.rc, r.err) == (1, "shutting down qmaster requires manager privileges\n")  # 8.1.9's
    assert cell.minisge("status").rc == 0  # still running
    key = os.path.join(cell.common, "cell_key")
    assert os.stat(key).st_mode & 0o077 == 0  # root's alone

    # ------------------------------------------------ and what they may
    r = cell.run("qdel", str(held_a), user=a)
    assert (r.rc, r.out) == (0, f"{a} has deleted job {held_a}\n")
    r = cell.run("qdel", str(held_b), user=b)
    assert (r.rc, r.out) == (0, f"{b} has deleted job {held_b}\n")
    assert cell.qstat_states() == {}

    # ------------------------------------------------ an operator, made by the manager
    assert cell.run("qconf", "-ao", a).rc == 0
    r = cell.run("qmod", "-d", "all.q", user=a)
    assert (r.rc, r.out) == (0, f'{a}@{cell.host} changed state of "all.q@{cell.host}" (disabled)\n'), r
    assert cell.run("qmod", "-e", "all.q", user=a).rc == 0
    r = cell.run("qconf", "-mattr", "queue", "slots", "9", "all.q", user=a)  # but is no manager
    assert (r.rc, r.err) == (1, f'denied: "{a}" must be manager for this operation\n')
