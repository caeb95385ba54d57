"""host_conf(5) ``user_lists``/``xuser_lists`` and ``projects``/``xprojects``
of an execution host and of the global host, through the pure scheduler:
a job never runs on a host whose lists shut its owner or project out, and
``qstat -j`` says why in 8.1.9's words (sge_select_queue.c
``sge_host_match_static``, msg_schedd.h 47043-47046)."""

from __future__ import annotations

import functools

import scheduler_harness
from scheduler_harness import host, pe, plan, task, where

from minisge.formats import access_list

ACLS = {
    "staff": access_list.AccessList(name="staff", entries=("alice", "@wheel")),
    "banned": access_list.AccessList(name="banned", entries=("mallory",)),
}
qi = functools.partial(scheduler_harness.qi, pe_list=("mpi",))


def run(hosts, tasks, **kw):
    """all.q on h1 (seq 0) and h2 (seq 1), 2 slots each, the given hosts."""
    qis = [qi(host="h1", slots=2, seq=0), qi(host="h2", slots=2, seq=1)]
    hmap = {h.name: h for h in hosts}
    for q in qis:
        hmap.setdefault(q.host, host(q.host))
    return plan(qis, tasks, hosts=hmap, acls=ACLS, **kw)


def test_a_host_xuser_list_keeps_its_members_off_the_host():
    p = run([host("h1", xuser_lists=("banned",))], [task(owner="mallory")])
    assert where(p) == ["all.q@h2"]
    assert where(run([host("h1", xuser_lists=("banned",))], [task(owner="alice")])) == ["all.q@h1"]


def test_a_host_user_list_admits_its_members_only():
    hosts = [host("h1", user_lists=("staff",))]
    assert where(run(hosts, [task(owner="alice")])) == ["all.q@h1"]
    assert where(run(hosts, [task(owner="bob", group="wheel")])) == ["all.q@h1"]
    assert where(run(hosts, [task(owner="bob")])) == ["all.q@h2"]


def test_refused_on_every_host_the_job_waits_and_says_so_once_per_host():
    hosts = [host("h1", xuser_lists=("banned",)), host("h2", user_lists=("staff",))]
    p = run(hosts, [task(owner="mallory")])
    assert p.dispatches == []
    assert p.reasons[1] == ['has no permission for host "h1"', 'has no permission for host "h2"']


def test_host_projects_need_a_listed_project():
    hosts = [host("h1", projects=("p1",)), host("h2", projects=("p1",))]
    assert where(run(hosts, [task(project="p1")])) == ["all.q@h1"]
    p = run(hosts, [task()])
    assert p.reasons[1] == ['(no project) does not have the correct project to run in host "h1"',
                            '(no project) does not have the correct project to run in host "h2"']
    p = run(hosts, [task(project="p2")])
    assert p.reasons[1] == ['(project p2) does not have the correct project to run in host "h1"',
                            '(project p2) does not have the correct project to run in host "h2"']


def test_host_xprojects_exclude_a_project():
    hosts = [host("h1", xprojects=("p2",))]
    assert where(run(hosts, [task(project="p2")])) == ["all.q@h2"]
    assert where(run(hosts, [task(project="p1")])) == ["all.q@h1"]
    assert where(run(hosts, [task()])) == ["all.q@h1"]
    p = run([host("h1", xprojects=("p2",)), host("h2", xprojects=("p2",))], [task(project="p2")])
    assert p.reasons[1][0] == ('(project p2) is not allowed to run in host "h1" based on the excluded project list')


def test_the_global_host_lists_hold_for_every_host():
    g = host("global", xuser_lists=("banned",))
    p = run([], [task(owner="mallory"), task(job=2, owner="alice")], global_host=g)
    assert p.reasons[1] == ['has no permission for host "global"']
    assert where(p, job=2) == ["all.q@h1"]
    p = run([], [task(project="p1")], global_host=host("global", projects=("p2",)))
    assert p.reasons[1] == ['(project p1) does not have the correct project to run in host "global"']
    p = run([], [task(project="p2")], global_host=host("global", projects=("p2",)))
    assert where(p) == ["all.q@h1"]


def test_a_parallel_job_takes_only_the_hosts_it_may_use():
    pes = [pe("mpi", "$round_robin")]
    hosts = [host("h1", xuser_lists=("banned",))]
    p = run(hosts, [task(owner="mallory", pe=("mpi", ((2, 2),)))], pes=pes)
    assert where(p) == ["all.q@h2"]
    p = run(hosts, [task(owner="mallory", pe=("mpi", ((3, 3),)))], pes=pes)
    assert p.dispatches == []
    assert 'has no permission for host "h1"' in p.reasons[1]


def test_a_cluster_queue_refusal_is_said_before_the_host_one():
    qis = [qi(host="h1", xuser_lists=("banned",))]
    p = plan(qis, [task(owner="mallory")], hosts={"h1": host("h1", xuser_lists=("banned",))}, acls=ACLS)
    assert p.reasons[1] == ['has no permission for cluster queue "all.q"']
