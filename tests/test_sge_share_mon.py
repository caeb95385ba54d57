"""sge_share_mon, pure: the share tree's figures (minisge.scheduler.tickets:share_monitor)
and how the command prints them, against 8.1.9's captures (tests/golden/tickets)."""

from __future__ import annotations

import os

import pytest

from minisge.cli import sge_share_mon as mon
from minisge.formats import share_tree
from minisge.scheduler import tickets
from minisge.scheduler.tickets import TicketInput, TicketPolicy, TicketTask

GOLDEN = os.path.join(os.path.dirname(__file__), "golden", "tickets")


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name), encoding="utf-8") as f:
        return f.read().split("# ----\n", 1)[1]


def _tree(a: str, b: str, sa: int, sb: int) -> share_tree.ShareTree:
    return share_tree.parse(f"id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\nid=1\nname={a}\ntype=0\n"
                            f"shares={sa}\nchildnodes=NONE\nid=2\nname={b}\ntype=0\nshares={sb}\nchildnodes=NONE\n",
                            "stree")


def _rows(inp: TicketInput, tasks=(), users=("g5ta", "g5tb")) -> list[dict]:
    return [{**n._asdict(), "usage_time": 0} for n in tickets.share_monitor(inp, list(tasks), users)]


def test_the_capture_of_an_idle_tree_as_8_1_9_prints_it():
    """tests/golden/tickets/sge_share_mon_-c_1: no usage, no jobs; its curr_time is the capture's."""
    want = _golden("sge_share_mon_-c_1")
    now = int(want.split("\t", 1)[0])
    rows = _rows(TicketInput(tree=_tree("g5ta", "g5tb", 75, 25)))
    assert mon.nodes_text(rows, mon.Format(), now, False, []) == want


def test_usage_shares_and_the_options_of_the_output():
    """sgetest used 0.181904 cpu, root nothing (the peer's figures, tests/golden/tickets/sge_share_mon.*)."""
    inp = TicketInput(tree=_tree("sgetest", "root", 75, 25),
                      user_usage={("sgetest", None): {"cpu": 0.181904, "io": 0.000257}, ("root", None): {}})
    rows = _rows(inp, users=("sgetest", "root"))
    assert [(r["path"], r["user"], r["actual"], round(r["usage"], 6)) for r in rows] == [
        ("/", "", 1.0, 0.181904), ("/sgetest", "sgetest", 1.0, 0.181904), ("/root", "root", 0.0, 0.0)]
    fmt = mon.Format()
    fmt.name_format, fmt.fields = True, "node_name,user_name,shares,level%,total%".split(",")
    assert mon.nodes_text(rows, fmt, 0, False, []) == _golden("sge_share_mon.n")
    fmt = mon.Format()
    fmt.delim, fmt.fields = ",", ["node_name", "shares"]
    assert mon.nodes_text(rows, fmt, 0, True, []) == _golden("sge_share_mon.x")
    assert mon.header(mon.Format()) == _golden("sge_share_mon.h").split("\n", 1)[0] + "\n\n"
    fmt.fields = ["node_name", "bogus", "shares"]
    assert mon.nodes_text(rows, fmt, 0, False, ["/", "/root"]) == "/,1,\n/root,25,\n"
    fmt.fields = ["bogus"]
    assert mon.nodes_text(rows, fmt, 0, False, []) == ""


def test_targets_and_job_counts_only_under_the_share_tree_policy():
    tree = _tree("a", "b", 75, 25)
    tasks = [TicketTask(1, 1, "a", False), TicketTask(2, 1, "b", False), TicketTask(3, 1, "b", True)]
    idle = _rows(TicketInput(tree=tree), tasks, users=("a", "b"))
    assert [r["job_count"] for r in idle] == [0, 0, 0]
    rows = _rows(TicketInput(policy=TicketPolicy(share_tree_tickets=1000), tree=tree), tasks, users=("a", "b"))
    assert [r["job_count"] for r in rows] == [3, 1, 2]
    assert [r["long_target"] for r in rows] == pytest.approx([1.0, 0.75, 0.25])
    assert sum(r["short_target"] for r in rows[1:]) == pytest.approx(1.0)


def test_a_user_without_a_node_of_its_own_is_shown_under_default():
    tree = _tree("a", "default", 1, 1)
    rows = _rows(TicketInput(tree=tree), users=("a", "zed"))
    assert [(r["path"], r["user"], r["leaf"]) for r in rows] == [
        ("/", "", False), ("/a", "a", True), ("/default", "", False), ("/default/zed", "zed", True)]


@pytest.mark.parametrize("argv,err", [
    (["-z"], "sge_share_mon: invalid option -- 'z'\n"),
    (["-c"], "sge_share_mon: option requires an argument -- 'c'\n"),
    (["-c", "abc"], "abc is not a valid count"),
    (["-i", "x"], "x is not a valid interval"),
])
def test_bad_options_print_the_usage(argv, err, capsys, monkeypatch):
    monkeypatch.setattr("sys.argv", ["sge_share_mon"])
    assert mon.main(argv) == 1
    assert capsys.readouterr().err == err + _golden("sge_share_mon.usage.stderr")
