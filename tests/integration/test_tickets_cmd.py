"""The ticket policies through real daemons: a qmaster and two execds
posing as hosts (one slot each), two real users.  The share tree commands
and qstat -ext's ticket columns against 8.1.9's captures
(tests/golden/tickets), and two users with equal shares who flood the cell
get equal slots."""

from __future__ import annotations

import os
import subprocess

import pytest
from cellutil import Cell, command_line, ensure_user, script
from golden import read_golden

USERS = ("g5ta", "g5tb")


@pytest.fixture(scope="module")
def cell():
    for u in USERS:
        ensure_user(u)
    c = Cell().start_roles(hosts=("node1", "node2"), slots=1)
    try:
        yield c
    finally:
        c.cleanup()


def _file(cell, name: str, text: str) -> str:
    path = os.path.join(cell.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _sched(cell, **values: str) -> None:
    r = cell.run("qconf", "-ssconf")
    lines = []
    for line in r.out.splitlines():
        key = line.split()[0]
        lines.append(f"{key} {values[key]}" if key in values else line)
    r = cell.run("qconf", "-Msconf", _file(cell, "sconf", "\n".join(lines) + "\n"))
    assert r.rc == 0, r


def _tree(cell, a: int, b: int) -> None:
    text = (f"id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\nid=1\nname={USERS[0]}\ntype=0\nshares={a}\n"
            f"childnodes=NONE\nid=2\nname={USERS[1]}\ntype=0\nshares={b}\nchildnodes=NONE\n")
    r = cell.run("qconf", "-Astree", _file(cell, "stree", text))
    assert (r.rc, r.err) == (0, "changed sharetree\n"), r


def test_share_tree_commands_as_8_1_9(cell):
    assert cell.run("qconf", "-sst").err == "No sharetree\n"
    bad = cell.run("qconf", "-Astree", _file(cell, "bad", "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1\n"
                                                        "id=1\nname=nosuchuser9\ntype=0\nshares=1\nchildnodes=NONE\n"))
    assert bad.rc == 1 and 'unknown user/project "nosuchuser9"' in bad.err, bad
    assert cell.run("qconf", "-sstree").rc == 1
    _tree(cell, 75, 25)
    assert cell.run("qconf", "-sstree").out == read_golden("tickets/qconf_-sstree").text
    assert cell.run("qconf", "-sst").out == read_golden("tickets/qconf_-sst").text
    assert cell.run("qconf", "-sstnode", f"/{USERS[0]},/").out == f"/{USERS[0]}=75\n/=1\n"
    # the editor form: the tree there is, changed by the editor (a sed script here), sent back
    editor = _file(cell, "editor.sh", "#!/bin/sh\nsed -i 's/^shares=25$/shares=30/' \"$1\"\n")
    os.chmod(editor, 0o755)
    r = subprocess.run(command_line("qconf", "-mstree"), env=cell.env(EDITOR=editor), capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (0, "changed sharetree\n"), r
    assert f"   {USERS[1]}=30\n" in cell.run("qconf", "-sst").out
    r = cell.run("qconf", "-dstree")
    assert (r.rc, r.err) == (0, "root@master removed sharetree list\n"), r
    assert cell.run("qconf", "-sstree").err == "no sharetree element\n"


def test_sge_share_mon_as_8_1_9(cell):
    """sge_share_mon: no tree (8.1.9's words, exit 2); the captured tree's
    lines (its curr_time the one thing that differs), the header, a node
    named; qsub -ot refused as 8.1.9 refuses it."""
    cell.run("qconf", "-dstree")
    r = cell.run("sge_share_mon", "-c", "1")
    assert (r.rc, r.out, r.err) == (2, "", "No share tree\n"), r
    _tree(cell, 75, 25)
    for u in USERS:  # the capture's users had user objects (a leaf's user_name is its user object's)
        cell.run("qconf", "-Auser", _file(cell, "u", f"name {u}\noticket 0\nfshare 0\ndelete_time 0\n"
                                                    "default_project NONE\n"))
    try:
        r = cell.run("sge_share_mon", "-c", "1")
        want = read_golden("tickets/sge_share_mon_-c_1").text
        assert r.rc == 0 and [ln.split("\t")[1:] for ln in r.out.split("\n")] == [
            ln.split("\t")[1:] for ln in want.split("\n")], r
        r = cell.run("sge_share_mon", "-c", "1", "-h", "-x", "-f", "node_name,shares", f"/{USERS[1]}")
        assert r.out == f"node_name\tshares\t\n\n/{USERS[1]}\t25\t\n", r
        r = cell.run("sge_share_mon", "-c", "2", "-i", "0", "-n", "-f", "node_name", "-r", "#", "-x", user=USERS[0])
        assert r.out == f"node_name=/{USERS[0]}\t\nnode_name=/{USERS[1]}\t\n#" * 1 + \
            f"node_name=/{USERS[0]}\t\nnode_name=/{USERS[1]}\t\n", r
    finally:
        cell.run("qconf", "-dstree")
        for u in USERS:
            cell.run("qconf", "-duser", u)
    g = read_golden("tickets/qsub_-ot.stderr")
    r = cell.run(*g.command.split(), user=USERS[0])
    assert (r.rc, r.err) == (g.exit, g.text), r


def test_share_tree_node_edits_and_clearusage_as_8_1_9(cell):
    """qconf -astnode/-mstnode/-dstnode and -clearusage in 8.1.9's words (the
    peer's answers to the same edits of its own tree, users sgetest/root)."""
    a, b = USERS
    cell.run("qconf", "-dstree")
    for u in USERS:  # users with user objects, as the peer's
        cell.run("qconf", "-Auser", _file(cell, "u", f"name {u}\noticket 0\nfshare 0\ndelete_time 0\n"
                                                    "default_project NONE\n"))
    r = cell.run("qconf", "-astnode", f"/{a}=1")  # no tree: -astnode starts one
    assert (r.rc, r.err) == (0, f"setting \n/{a}=1\nmodified sharetree\n"), r
    r = cell.run("qconf", "-astnode", f"/{b}=5,/nosuch/x=1")
    assert (r.rc, r.err) == (0, f"setting \n/{b}=5\nUnable to locate /nosuch in sharetree\nmodified sharetree\n"), r
    r = cell.run("qconf", "-mstnode", f"/{a}=50,/nosuch=1")
    assert (r.rc, r.err) == (0, f"setting \n/{a}=50\nUnable to locate /nosuch in sharetree\nmodified sharetree\n"), r
    assert cell.run("qconf", "-sst").out == f"Root=1\n   {a}=50\n   {b}=5\n"
    for args, err in ((("-mstnode", "/nosuch=5"), "Unable to locate /nosuch in sharetree\n"),
                      (("-mstnode", "/=7"), "Unable to locate / in sharetree\n"),
                      (("-dstnode", "/nosuch"), "Unable to locate /nosuch in sharetree\n")):
        r = cell.run("qconf", *args)
        assert (r.rc, r.err) == (1, err + "no modifications to sharetree\n"), r
    r = cell.run("qconf", "-astnode", f"/{a}")
    assert r.rc == 1 and r.err.startswith(f"/{a} is not a valid argument, see node_shares_list format\n"
                                          "no modifications to sharetree\nSGE 8.1.9\nusage: qconf"), r
    r = cell.run("qconf", "-astnode", f"/{a}/{b}=5")
    assert (r.rc, r.err) == (0, f'setting \n/{a}/{b}=5\nfound user "{a}" in share tree as a non-leaf node\n'), r
    r = cell.run("qconf", "-astnode", "/nosuchuser9=5")
    assert r.err.endswith('denied: share tree contains reference to unknown user/project "nosuchuser9"\n'), r
    r = cell.run("qconf", "-mstnode", f"/{a}=1", user=a)
    assert (r.rc, r.err) == (0, f'setting \n/{a}=1\ndenied: "{a}" must be manager for this operation\n'), r
    r = cell.run("qconf", "-dstnode", f"/nosuch,/{b}")
    assert (r.rc, r.err) == (0, f"Unable to locate /nosuch in sharetree\nremoving \n/{b}\nmodified sharetree\n"), r
    assert cell.run("qconf", "-sst").out == f"Root=1\n   {a}=50\n"
    r = cell.run("qconf", "-dstnode", f"/{a}")  # the root alone is a leaf that names no one
    assert (r.rc, r.err) == (1, 'removing \n/' + a + '\ndenied: share tree contains reference to unknown '
                                'user/project "Root"\n'), r
    cell.run("qconf", "-dstree")
    # -clearusage: the user objects' usage is gone
    done = cell.submit("-b", "y", "/bin/true", user=a)
    cell.wait_records(done)
    spool = os.path.join(cell.qmaster_spool, "users", a)
    cell.wait_for(lambda: "finished_jobs=" in open(spool).read(), what="the usage of the finished job")
    r = cell.run("qconf", "-clearusage", f"nosuchuser9,{a}")
    assert (r.rc, r.err) == (0, 'denied: user "nosuchuser9" does not exist\n'
                                f'root@master modified "{a}" in user list\n'), r
    with open(spool) as f:
        assert "finished_jobs=" not in f.read()
    r = cell.run("qconf", "-clearusage")
    said = sorted(f'root@master modified "{u}" in user list' for u in USERS)
    assert (r.rc, sorted(r.err.splitlines())) == (0, said), r
    assert cell.run("qconf", "-clearusage", user=a).err == f'denied: "{a}" must be manager for this operation\n'
    for u in USERS:
        cell.run("qconf", "-duser", u)


def test_qstat_ext_ticket_columns_as_8_1_9(cell):
    """The capture's set-up (its header says it) on minisge: the ticket
    columns and ntckts of qstat -ext are 8.1.9's."""
    _tree(cell, 75, 25)
    _sched(cell, weight_tickets_share="10000")
    try:
        jobs = [cell.submit("-b", "y", "-N", n, "-l", "arch=g5none", "/bin/true", user=u)
                for n, u in (("a1", USERS[0]), ("a2", USERS[0]), ("a3", USERS[0]), ("b1", USERS[1]), ("b2", USERS[1]))]
        assert cell.run("qalter", "-ot", "100", str(jobs[4])).rc == 0
        got = {}
        for line in cell.run("qstat", "-ext", "-u", ",".join(USERS)).out.splitlines()[2:]:
            f = line.split()
            got[f[2]] = [f[2]] + f[8:14] + [f[2 + 0]]
            got[f[3]] = (f[2], *f[8:14])
        want = {}
        for line in read_golden("tickets/qstat_-ext.share_tree").text.splitlines()[2:]:
            f = line.split()
            want[f[3]] = (f[2], *f[8:14])
        assert {n: got[n] for n in want} == want
    finally:
        cell.run("qdel", "-u", ",".join(USERS))
        _sched(cell, weight_tickets_share="0")
        cell.run("qconf", "-dstree")


def test_two_users_with_equal_shares_who_flood_the_cell_get_equal_slots(cell):
    """A 2-slot cell, a share tree of equal shares: the first user submits
    all its jobs before the second does (first come, first served would
    run them all first); the share tree alternates them."""
    _tree(cell, 50, 50)
    _sched(cell, weight_tickets_share="10000", weight_ticket="10.0")
    n = 8
    stamps = os.path.join(cell.work, "starts")
    os.makedirs(stamps, exist_ok=True)
    os.chmod(stamps, 0o1777)
    try:
        cell.run("qmod", "-d", "*")
        job_script = script(cell, "stamp.sh", f"#!/bin/sh\ndate +%s.%N > {stamps}/$JOB_ID.$USER\nsleep 0.2\n")
        jobs = {u: [cell.submit("-o", "/dev/null", "-j", "y", job_script, user=u) for _ in range(n)]
                for u in USERS}
        cell.run("qmod", "-e", "*")
        cell.wait_for(lambda: all(cell.records_of(j) for js in jobs.values() for j in js), what="all jobs ended")
        starts = []
        for name in os.listdir(stamps):
            with open(os.path.join(stamps, name)) as f:
                starts.append((float(f.read()), name.split(".", 1)[1]))
        owners = [owner for _t, owner in sorted(starts)]
        assert len(owners) == 2 * n
        for k in range(2, 2 * n + 1, 2):  # after every pair of starts the users are even, give or take one
            assert abs(owners[:k].count(USERS[0]) - owners[:k].count(USERS[1])) <= 2, owners
    finally:
        _sched(cell, weight_tickets_share="0", weight_ticket="0.010000")
        cell.run("qconf", "-dstree")


def test_user_objects_and_their_override_and_functional_tickets(cell):
    """qconf -Auser/-suser/-Muser/-duser; a user's oticket and fshare give its
    pending jobs override and functional tickets (qstat -ext), and a job
    that ended left its owner's usage in the user's spool file."""
    a, b = USERS
    cell.run("qconf", "-duser", a)  # made by an earlier test's finished jobs, if any
    text = f"name {a}\noticket 300\nfshare 0\ndelete_time 0\ndefault_project NONE\n"
    r = cell.run("qconf", "-Auser", _file(cell, "user_a", text))
    assert (r.rc, r.err) == (0, f'root@master added "{a}" to user list\n'), r
    assert cell.run("qconf", "-suser", a).out == text
    assert a in cell.run("qconf", "-suserl").out.split()
    job = cell.submit("-b", "y", "-N", "o1", "-l", "arch=g5none", "/bin/true", user=a)
    other = cell.submit("-b", "y", "-N", "o2", "-l", "arch=g5none", "/bin/true", user=a)
    try:
        lines = {ln.split()[0]: ln.split() for ln in cell.run("qstat", "-ext", "-u", "*").out.splitlines()[2:]}
        # shared override tickets: the first as if it ran next (300/1), the second after it (300/2)
        assert (lines[str(job)][10], lines[str(other)][10]) == ("300", "150"), lines
        _sched(cell, weight_tickets_functional="1000")
        r = cell.run("qconf", "-Muser", _file(cell, "user_a2", text.replace("fshare 0", "fshare 10")))
        assert (r.rc, r.err) == (0, f'root@master modified "{a}" in user list\n'), r
        lines = {ln.split()[0]: ln.split() for ln in cell.run("qstat", "-ext", "-u", "*").out.splitlines()[2:]}
        # 8.1.9's capture of the same set-up: ntckts and tckts ovrts otckt ftckt stckt share
        want = [ln.split() for ln in read_golden("tickets/qstat_-ext.functional_override").text.splitlines()[2:]]
        assert [(lines[str(j)][2], *lines[str(j)][8:14]) for j in (job, other)] == [(w[2], *w[8:14]) for w in want]
    finally:
        cell.run("qdel", str(job), str(other))
        _sched(cell, weight_tickets_functional="0")
    done = cell.submit("-b", "y", "/bin/true", user=b)
    cell.wait_records(done)
    cell.wait_for(lambda: b in cell.run("qconf", "-suserl").out.split(), what="user object of b")
    with open(os.path.join(cell.qmaster_spool, "users", b)) as f:
        assert "finished_jobs=" in f.read()
    r = cell.run("qconf", "-duser", a)
    assert (r.rc, r.err) == (0, f'root@master removed "{a}" from user list\n'), r
