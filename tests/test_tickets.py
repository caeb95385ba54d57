"""The ticket policies (minisge.scheduler.tickets), pure: 8.1.9's figures
for a captured share tree, the totals they divide, decay."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minisge.formats import share_tree, user
from minisge.formats.errors import FormatError
from minisge.scheduler import tickets
from minisge.scheduler.tickets import Holder, TicketInput, TicketPolicy, TicketTask

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "tickets")


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        return f.read().split("# ----\n", 1)[1]


def _tree(*leaves: tuple[str, int]) -> share_tree.ShareTree:
    nodes = [share_tree.ShareTreeNode(0, "Root", 1, tuple(range(1, len(leaves) + 1)))]
    nodes += [share_tree.ShareTreeNode(i, n, s) for i, (n, s) in enumerate(leaves, 1)]
    return share_tree.ShareTree(tuple(nodes))


def test_share_tree_file_round_trip_and_indented_as_8_1_9():
    text = _golden("qconf_-sstree")
    tree = share_tree.parse(text)
    assert share_tree.write(tree) == text
    assert share_tree.indented(tree) == _golden("qconf_-sst")


@pytest.mark.parametrize("text", ["id=0\nname=Root\ntype=0\nshares=1\nchildnodes=5\n",
                                  "id=0\nname=Root\ntype=0\nshares=x\nchildnodes=NONE\n",
                                  "name=Root\n", "id=0\nname=Root\ntype=0\nshares=1\n",
                                  "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1\n"
                                  "id=1\nname=a\ntype=0\nshares=1\nchildnodes=0\n"])
def test_bad_share_tree_files_are_refused(text):
    with pytest.raises(FormatError):
        share_tree.parse(text)


def test_pending_figures_of_8_1_9_for_the_captured_share_tree():
    """qstat -ext of 8.1.9 (tests/golden/tickets/qstat_-ext.share_tree):
    Root=1, g5ta=75, g5tb=25, weight_tickets_share 10000, 3 + 2 pending
    jobs, job 16 with -ot 100: tckts ovrts otckt ftckt stckt share."""
    tree = share_tree.parse(_golden("qconf_-sstree"))
    inp = TicketInput(policy=TicketPolicy(share_tree_tickets=10000), tree=tree, free_slots=1)
    tasks = [TicketTask(12, 1, "g5ta", False), TicketTask(13, 1, "g5ta", False), TicketTask(14, 1, "g5ta", False),
             TicketTask(15, 1, "g5tb", False), TicketTask(16, 1, "g5tb", False, override_tickets=100)]
    figs = tickets.tickets(tasks, inp)
    nt, _default = tickets.job_ntckts(figs)
    expected = {}
    for line in _golden("qstat_-ext.share_tree").splitlines()[2:]:
        f = line.split()
        expected[int(f[0])] = (float(f[2]), int(f[8]), int(f[10]), int(f[11]), int(f[12]), float(f[13]))
    got = {j: (round(nt[j], 5), int(t.tickets), int(t.otickets), int(t.ftickets), int(t.stickets), round(t.share, 2))
           for (j, _tid), t in figs.items()}
    assert got == expected


def test_functional_and_override_figures_of_8_1_9():
    """tests/golden/tickets/qstat_-ext.functional_override: a user with
    oticket 300 and fshare 10, weight_tickets_functional 1000, two pending jobs."""
    inp = TicketInput(policy=TicketPolicy(functional_tickets=1000), users={"u": Holder(fshare=10, oticket=300)})
    figs = tickets.tickets([TicketTask(31, 1, "u", False), TicketTask(32, 1, "u", False)], inp)
    nt, _default = tickets.job_ntckts(figs)
    want = [ln.split() for ln in _golden("qstat_-ext.functional_override").splitlines()[2:]]
    got = [[f"{nt[j]:.5f}", str(int(t.tickets)), "0", str(int(t.otickets)), str(int(t.ftickets)), str(int(t.stickets)),
            f"{t.share:.2f}"] for (j, _tid), t in sorted(figs.items())]
    assert got == [[w[2], *w[8:14]] for w in want]


users = st.lists(st.tuples(st.integers(1, 100), st.integers(0, 4), st.integers(0, 4),
                           st.floats(0, 1e6, allow_nan=False)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(users, st.integers(1, 100000))
def test_running_share_tree_tickets_sum_to_weight_tickets_share(spec, total):
    """Every running job maps to a leaf: the running jobs share exactly weight_tickets_share."""
    tree = _tree(*((f"u{i}", shares) for i, (shares, _r, _p, _u) in enumerate(spec)))
    tasks, usage = [], {}
    job = 1
    for i, (_shares, nrun, npend, use) in enumerate(spec):
        usage[(f"u{i}", None)] = {"cpu": use}
        for _ in range(nrun):
            tasks.append(TicketTask(job, 1, f"u{i}", True))
            job += 1
        for _ in range(npend):
            tasks.append(TicketTask(job, 1, f"u{i}", False))
            job += 1
    inp = TicketInput(policy=TicketPolicy(share_tree_tickets=total), tree=tree, user_usage=usage, free_slots=0)
    figs = tickets.tickets(tasks, inp)
    running = [figs[(t.job_id, 1)].stickets for t in tasks if t.running]
    if running:
        assert sum(running) == pytest.approx(total, rel=1e-9)
    pending = [figs[(t.job_id, 1)] for t in tasks if not t.running]
    if pending:
        assert sum(p.share for p in pending) == pytest.approx(1.0) or all(p.tickets == 0 for p in pending)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 50), st.integers(1, 4)), min_size=1, max_size=5), st.integers(1, 100000))
def test_running_functional_tickets_sum_to_weight_tickets_functional(spec, total):
    """Only users have functional shares: weight_user becomes 1 and the running jobs share the total."""
    tasks, holders = [], {}
    job = 1
    for i, (fshare, nrun) in enumerate(spec):
        holders[f"u{i}"] = Holder(fshare=fshare)
        for _ in range(nrun):
            tasks.append(TicketTask(job, 1, f"u{i}", True))
            job += 1
    inp = TicketInput(policy=TicketPolicy(functional_tickets=total), users=holders)
    figs = tickets.tickets(tasks, inp)
    assert sum(f.ftickets for f in figs.values()) == pytest.approx(total, rel=1e-9)
    for i, (fshare, _n) in enumerate(spec):  # each user's jobs together get its share
        mine = sum(figs[(t.job_id, 1)].ftickets for t in tasks if t.owner == f"u{i}")
        assert mine == pytest.approx(total * fshare / sum(f for f, _ in spec), rel=1e-9)


def test_equal_shares_interleave_the_pending_jobs_of_two_users():
    tree = _tree(("a", 50), ("b", 50))
    tasks = [TicketTask(j, 1, "a", False) for j in range(1, 5)] + [TicketTask(j, 1, "b", False) for j in range(5, 9)]
    figs = tickets.tickets(tasks, TicketInput(policy=TicketPolicy(share_tree_tickets=1000), tree=tree))
    order = sorted(figs, key=lambda k: (-figs[k].tickets, k))
    assert [tasks[k[0] - 1].owner for k in order] == ["a", "b"] * 4


def test_usage_and_finished_jobs_lower_a_users_pending_tickets():
    tree = _tree(("a", 50), ("b", 50))
    tasks = [TicketTask(1, 1, "a", False), TicketTask(2, 1, "b", False)]
    inp = TicketInput(policy=TicketPolicy(share_tree_tickets=1000), tree=tree,
                      user_usage={("a", None): {"cpu": 100.0, "finished_jobs": 3.0}})
    figs = tickets.tickets(tasks, inp)
    assert figs[(2, 1)].stickets > figs[(1, 1)].stickets


def test_override_tickets_shared_among_a_users_jobs():
    tasks = [TicketTask(1, 1, "a", True), TicketTask(2, 1, "a", True), TicketTask(3, 1, "a", False)]
    inp = TicketInput(users={"a": Holder(oticket=300)})
    figs = tickets.tickets(tasks, inp)
    assert [figs[(j, 1)].otickets for j in (1, 2)] == [150, 150]
    assert figs[(3, 1)].otickets == 100  # as if it ran next: 300 / 3
    unshared = tickets.tickets(tasks, TicketInput(policy=TicketPolicy(share_override_tickets=False),
                                                  users={"a": Holder(oticket=300)}))
    assert {t.otickets for t in unshared.values()} == {300}


def test_no_policy_no_tickets_ntckts_half():
    figs = tickets.tickets([TicketTask(1, 1, "a", False)], TicketInput())
    assert figs == {}
    assert tickets.job_ntckts(figs) == ({}, 0.5)


def test_usage_halves_in_halftime():
    (name, value), = tickets.decayed((("cpu", 1000.0),), 168 * 3600, 168, {})
    assert name == "cpu" and value == pytest.approx(500.0, rel=0.01)
    assert tickets.decayed((("cpu", 10.0),), 3600, 0, {}) == (("cpu", 10.0),)  # halftime 0: no decay
    assert tickets.decayed((("cpu", 10.0),), 60, 168, {"cpu": -1}) == (("cpu", 0.0),)  # forget at once


def test_user_spool_file_round_trip():
    u = user.User("alice", oticket=3, fshare=7, usage=(("cpu", 1.5), ("finished_jobs", 2.0)), usage_time_stamp=99,
                  project_usage=(("p1", (("cpu", 4.0),)),))
    assert user.parse(user.write_spool(u)) == u
    assert user.write(u) == "name alice\noticket 3\nfshare 7\ndelete_time 0\ndefault_project NONE\n"
