"""sge_types(5) wc_queue_list: the one rule every queue list goes through
(qsub -q/-soft -q/-masterq in the scheduler, qmod, qconf -sq, qstat -q).

The examples are the man page's (sge_types(5) wc_cqueue, wc_qinstance,
wc_qdomain, wc_queue); host and host group names compare without regard to
case, as Grid Engine's TYPE_HOST (sge_qref.c qref_list_host_rejected)."""

import subprocess
import sys

import pytest

from minisge.formats.wc_queue import cqueue_matches, host_matches, list_matches, matches

CQUEUES = ["all.q", "adam", "amber", "big_1", "big_21", "big_2", "small"]
HOSTS = ["fangorn", "bilbo", "balin", "celeborn", "node1"]
GROUPS = {"@solaris": frozenset({"bilbo", "balin"}), "@linux": frozenset({"node1", "fangorn"}),
          "@empty": frozenset()}


def cqueues(pattern: str) -> set[str]:
    return {cq for cq in CQUEUES if cqueue_matches(pattern, cq)}


def instances(pattern: str, groups=GROUPS) -> set[str]:
    return {f"{cq}@{h}" for cq in CQUEUES for h in HOSTS if matches(pattern, cq, h, groups)}


@pytest.mark.parametrize("pattern, expected", [
    ("*", set(CQUEUES)),  # all cluster queues
    ("a*", {"all.q", "adam", "amber"}),  # all cluster queues beginning with an 'a'
    ("a*&!adam", {"all.q", "amber"}),  # ... but not adam
    ("big_*1", {"big_1", "big_21"}),  # begin with "big_" and end with "1"
    ("big_*&!*1", {"big_2"}),  # begin with "big_", but do not end with "1"
    ("all.q", {"all.q"}),
    ("ALL.Q", set()),  # cluster queue names keep their case
    ("none.q", set()),
    ("a*&(", set()),  # a syntax error names nothing
])
def test_wc_cqueue(pattern, expected):
    assert cqueues(pattern) == expected


def test_a_wc_cqueue_names_every_instance_of_its_cluster_queues():
    assert instances("adam") == {f"adam@{h}" for h in HOSTS}


def test_wc_qinstance():
    assert instances("*@*") == {f"{cq}@{h}" for cq in CQUEUES for h in HOSTS}  # all queue instances
    assert instances("*@b*") == {f"{cq}@{h}" for cq in CQUEUES for h in ("bilbo", "balin")}
    assert instances("small@b*|c*") == {"small@bilbo", "small@balin", "small@celeborn"}
    assert instances("*@fangorn") == {f"{cq}@fangorn" for cq in CQUEUES}  # all qinstances on host fangorn
    assert instances("all.q@node1") == {"all.q@node1"}


def test_host_names_compare_without_case():
    assert matches("all.q@NODE1", "all.q", "node1")
    assert matches("all.q@node*", "all.q", "Node1")
    assert not matches("ALL.Q@node1", "all.q", "node1")


def test_wc_qdomain_names_the_instances_on_the_hosts_of_the_host_groups():
    assert instances("small@@solaris") == {"small@bilbo", "small@balin"}
    assert instances("*@@*") == {f"{cq}@{h}" for cq in CQUEUES for h in ("bilbo", "balin", "node1", "fangorn")}
    assert instances("a*@@l*") == {f"{cq}@{h}" for cq in ("all.q", "adam", "amber") for h in ("node1", "fangorn")}
    assert instances("small@@SOLARIS") == {"small@bilbo", "small@balin"}  # group names without case
    assert instances("small@@empty") == set()
    assert instances("small@@nosuch") == set()


def test_without_host_groups_a_queue_domain_names_nothing():
    assert not host_matches("@solaris", "bilbo")
    assert not matches("small@@solaris", "small", "bilbo")
    assert not matches("small@@solaris", "small", "bilbo", {})


def test_an_empty_part_is_every_name():
    assert matches("@node1", "all.q", "node1") and matches("all.q@", "all.q", "node1")


def test_a_list_names_what_any_of_its_items_names():
    assert list_matches(["none.q", "small@@solaris"], "small", "balin", GROUPS)
    assert not list_matches(["none.q", "small@@solaris"], "small", "node1", GROUPS)
    assert not list_matches([], "small", "node1")


def test_the_commands_can_use_it_without_attrs():
    """qstat reads queue lists with this module: the commands' import path stays free of attrs and trio."""
    code = ("import sys; import minisge.formats.wc_queue; "
            "print(sorted(m for m in ('attrs', 'cattrs', 'trio') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
