"""sge_rsmap(5): the RSMAP complex type -- its value in complex_values, and
the scheduler granting named instances that no two running jobs share."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scheduler_harness import complexes, host, pe, qi, snap, task

from minisge.formats import complex as complex_fmt
from minisge.formats import host_conf, rsmap
from minisge.formats import resource_quota as rq
from minisge.formats.accounting import AccountingRecord, parse_line, write_line
from minisge.formats.errors import FormatError
from minisge.formats.sge_types import SpecifierError
from minisge.scheduler import Reservation, job_order, schedule
from minisge.scheduler.quota import QuotaContext

GPU_LINE = "gpu                 gpu        RSMAP     <=    YES         YES        0        0\n"
GPU_JOB_LINE = "gpu                 gpu        RSMAP     <=    YES         JOB        0        0\n"
CX = complexes(GPU_LINE)


# ---------------------------------------------------------------- the format


def test_rsmap_line_is_read_and_written_back():
    clist = complex_fmt.parse(complex_fmt.DEFAULT_COMPLEX_TEXT + GPU_LINE)
    assert clist["gpu"].type is complex_fmt.ValueType.RSMAP
    assert "gpu                 gpu        RSMAP     <=" in complex_fmt.write(clist)


@pytest.mark.parametrize(("line", "message"), [
    ("gpu gpu RSMAP <= YES NO 0 0", 'RSMAP complex "gpu" needs to be a consumable'),
    ("gpu gpu RSMAP >= YES YES 0 0", 'Consumable "gpu" can have only <= as an relational operator'),
    ("gpu gpu RSMAP == YES YES 0 0", 'Consumable "gpu" can have only <= as an relational operator'),
])
def test_rsmap_must_be_a_consumable_with_le(line, message):
    with pytest.raises(FormatError, match=message):
        complex_fmt.parse(line + "\n")


@pytest.mark.parametrize(("text", "ids"), [
    ("2(0 1)", ("0", "1")),
    ("2(GPU0 GPU1)", ("GPU0", "GPU1")),
    ("4(0-3)", ("0", "1", "2", "3")),
    ("3", ("0", "1", "2")),
    ("0", ()),
    ("4(0 0 1 1)", ("0", "0", "1", "1")),
])
def test_resource_map_values(text, ids):
    assert rsmap.parse(text).ids == ids
    assert rsmap.parse(rsmap.write(rsmap.parse(text))).ids == ids


@pytest.mark.parametrize("text", ["2(0)", "1(0 1)", "x", "2(a,b)", "2(gpu0[memory=8G] gpu1)", "2(3-1)", "600"])
def test_bad_resource_map_values_are_refused(text):
    with pytest.raises(SpecifierError):
        rsmap.parse(text)


def test_host_complex_values_keep_an_id_list_with_blanks():
    assert host_conf.parse_complex_values("complex_values", "h_vmem=4G,gpu=2(0 1)") == (
        ("h_vmem", "4G"), ("gpu", "2(0 1)"))


def test_a_long_id_list_is_broken_at_80_columns_and_read_back():
    ids = " ".join(f"GPU{i}" for i in range(24))
    text = ("hostname n1\nload_scaling NONE\ncomplex_values h_vmem=100G,gpu=24(" + ids + ")\nuser_lists NONE\n"
            "xuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n")
    eh = host_conf.parse(text)
    written = host_conf.write(eh)
    assert max(len(line) for line in written.splitlines()) <= 80
    assert host_conf.parse(written).complex_values == eh.complex_values == (("h_vmem", "100G"), ("gpu", f"24({ids})"))


def test_cuda_visible_devices_only_for_device_indices():
    assert rsmap.device_indices(["1", "0"]) == "1,0"
    assert rsmap.device_indices(["0", "0"]) == "0"
    assert rsmap.device_indices(["GPU0"]) is None


# ---------------------------------------------------------------- the scheduler


def gpu_host(value: str = "2(0 1)", used: tuple[str, ...] = ()):
    consumed = {"gpu": float(len(used))} if used else {}
    return {"h1": host("h1", values={"gpu": value}, consumed=consumed,
                       rsmap_used={"gpu": used} if used else {})}


def test_two_jobs_get_different_instances_and_a_third_waits():
    p = schedule(snap([qi()], [task(job=j, requests={"gpu": "1"}) for j in (1, 2, 3)],
                      hosts=gpu_host(), complexes=CX))
    maps = {d.job_id: d.resource_maps for d in p.dispatches}
    assert maps == {1: [{"gpu": ["0"]}], 2: [{"gpu": ["1"]}]}
    assert p.reasons[3] == ['(-l gpu=1) cannot run at host "h1" because it offers only hc:gpu=0.000000']


def test_instances_held_by_running_jobs_are_not_granted():
    p = schedule(snap([qi()], [task(requests={"gpu": "1"})], hosts=gpu_host("2(GPU0 GPU1)", ("GPU0",)),
                      complexes=CX))
    assert p.dispatches[0].resource_maps == [{"gpu": ["GPU1"]}]


def test_a_job_not_asking_gets_no_instance():
    p = schedule(snap([qi()], [task()], hosts=gpu_host(), complexes=CX))
    assert p.dispatches[0].resource_maps == []


def test_pe_job_gets_instances_per_slot_on_each_host():
    hosts = {h: host(h, values={"gpu": "2(0 1)"}) for h in ("h1", "h2")}
    p = schedule(snap([qi(host="h1", slots=1, pe_list=("mpi",)), qi(host="h2", slots=2, pe_list=("mpi",))],
                      [task(requests={"gpu": "1"}, pe=("mpi", ((3, 3),)))],
                      hosts=hosts, complexes=CX, pes=[pe("mpi", "$fill_up")]))
    d = p.dispatches[0]
    assert {g[1]: m for g, m in zip(d.granted, d.resource_maps, strict=True)} == {
        "h1": {"gpu": ["0"]}, "h2": {"gpu": ["0", "1"]}}


def test_job_consumable_is_granted_once_on_the_master_host():
    hosts = {h: host(h, values={"gpu": "2(0 1)"}) for h in ("h1", "h2")}
    p = schedule(snap([qi(host="h1", slots=1, pe_list=("mpi",)), qi(host="h2", slots=2, pe_list=("mpi",))],
                      [task(requests={"gpu": "2"}, pe=("mpi", ((3, 3),)))],
                      hosts=hosts, complexes=complexes(GPU_JOB_LINE), pes=[pe("mpi", "$fill_up")]))
    d = p.dispatches[0]
    assert d.resource_maps[0] == {"gpu": ["0", "1"]}
    assert all(not m for m in d.resource_maps[1:])


@given(amount=st.integers(0, 6), asks=st.lists(st.integers(1, 3), max_size=8),
       held=st.integers(0, 6), names=st.sampled_from(["idx", "named"]))
def test_concurrent_jobs_never_share_an_instance(amount, asks, held, names):
    ids = [str(i) if names == "idx" else f"GPU{i}" for i in range(amount)]
    value = f"{amount}({' '.join(ids)})"
    used = tuple(ids[:min(held, amount)])
    p = schedule(snap([qi(slots=20)], [task(job=j + 1, requests={"gpu": str(n)}) for j, n in enumerate(asks)],
                      hosts=gpu_host(value, used), complexes=CX))
    granted = list(used)
    for d in p.dispatches:
        got = [i for m in d.resource_maps for i in m.get("gpu", [])]
        n = asks[d.job_id - 1]
        assert len(got) == n
        granted += got
    assert len(granted) == len(set(granted)) <= amount


# ---------------------------------------------------------------- accounting(5)


def test_the_resource_map_field_is_written_only_when_granted_and_read_back():
    plain = AccountingRecord(qname="all.q", hostname="h1", group="g", owner="u", job_name="j", job_number=1,
                             category="-l h_rt=1:0:0")
    assert write_line(plain).count(":") == 44 + 2  # the category's own colons
    assert parse_line(write_line(plain)) == plain
    granted = plain._replace(resource_map="gpu=h1=(0 1),gpu=h2=(GPU0)")
    assert write_line(granted).endswith(":gpu=h1=(0 1),gpu=h2=(GPU0)\n")
    assert parse_line(write_line(granted)) == granted


# ---------------------------------------------------------------- as any consumable: urgency, quotas, reservations


def test_urgency_counts_a_resource_map_request_as_a_number():
    cx = {"slots": job_order.Urgency("slots", "INT", "1000"), "gpu": job_order.Urgency("gpu", "RSMAP", "100")}
    total, per = job_order.resource_contribution((("gpu", "2"),), 1, cx)
    assert per == (("gpu", "2", 200.0),) and total == 1200.0


def test_a_quota_on_a_resource_map_limits_the_instances_a_user_gets():
    rules = rq.parse("{\n   name         gpus\n   enabled      TRUE\n   limit        users {*} to gpu=1\n}\n")
    p = schedule(snap([qi()], [task(job=j, requests={"gpu": "1"}) for j in (1, 2)], hosts=gpu_host(),
                      complexes=CX, quotas=QuotaContext(sets=(rules,), complexes=CX)))
    assert [d.job_id for d in p.dispatches] == [1]
    assert "exceeds limit" in p.reasons[2][0]


def test_jobs_in_and_out_of_a_reservation_never_share_an_instance():
    now = 1_000_000.0
    ar = Reservation(1, now, now + 600, (("all.q@h1", 1),), requests={"gpu": "1"})
    p = schedule(snap([qi()], [task(job=1, requests={"gpu": "1"}, ar=1), task(job=2, requests={"gpu": "1"})],
                      hosts=gpu_host(), complexes=CX, now=now, reservations=(ar,)))
    got = sorted(i for d in p.dispatches for m in d.resource_maps for i in m["gpu"])
    assert got == ["0", "1"]


@given(amounts=st.tuples(st.integers(0, 4), st.integers(0, 4)),
       jobs=st.lists(st.tuples(st.integers(1, 2), st.integers(1, 3)), max_size=6))
def test_pe_jobs_over_two_hosts_never_share_an_instance_and_get_what_they_book(amounts, jobs):
    hosts = {h: host(h, values={"gpu": f"{n}({' '.join(f'{h}-{i}' for i in range(n))})"})
             for h, n in zip(("h1", "h2"), amounts, strict=True)}
    qis = [qi(host=h, slots=3, pe_list=("mpi",)) for h in hosts]
    pending = [task(job=j + 1, requests={"gpu": str(ask)}, pe=("mpi", ((slots, slots),)))
               for j, (ask, slots) in enumerate(jobs)]
    p = schedule(snap(qis, pending, hosts=hosts, complexes=CX, pes=[pe("mpi", "$round_robin")]))
    granted: dict[str, list[str]] = {"h1": [], "h2": []}
    for d in p.dispatches:
        ask = jobs[d.job_id - 1][0]
        maps = d.resource_maps or [{} for _ in d.granted]
        for (_cq, h, slots), m in zip(d.granted, maps, strict=True):
            ids = m.get("gpu", [])
            assert len(ids) == ask * slots and all(i.startswith(f"{h}-") for i in ids)
            granted[h] += ids
    for ids in granted.values():
        assert len(ids) == len(set(ids))
