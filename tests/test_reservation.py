"""Resource reservation and backfilling (sched_conf(5) max_reservation, qsub -R y):
minisge.scheduler.reservation and its use by dispatch.schedule, pure."""

from __future__ import annotations

import dataclasses
import math
import pathlib

from hypothesis import given, settings
from hypothesis import strategies as st
from scheduler_harness import complexes, dispatched, host, pe, qi, snap, task

from minisge.scheduler import schedule
from minisge.scheduler.reservation import pass_entries, schedule_lines
from minisge.scheduler.snapshot import ScheduleEntry, Snapshot

NOW = 1_000_000.0


def running(job: int, start: float, h_rt: float, granted: tuple[tuple[str, str, int], ...] = (("all.q", "h1", 1),),
            requests: dict[str, str] | None = None, pe_name: str | None = None) -> ScheduleEntry:
    """A running task holding ``granted`` since ``start`` for ``h_rt`` + the 60 s DURATION_OFFSET."""
    return ScheduleEntry(job, 1, "RUNNING", start, h_rt + 60, granted, requests or {}, pe_name)


def peer_scenario(d_rt: float = 300) -> Snapshot:
    """As beside the peer: 2 slots, job 7 (h_rt 200) running 10 s; job 8 -R y
    -pe smp 2 (h_rt 60); job 9 h_rt 40; job 10 h_rt ``d_rt``."""
    return snap([qi(slots=2, used=1, pe_list=("smp",))],
                [task(8, pe=("smp", ((2, 2),)), reserve=True, duration=60),
                 task(9, duration=40), task(10, duration=d_rt)],
                pes=[pe("smp", "$pe_slots", used=0)], now=NOW, max_reservation=10,
                running_tasks=(running(7, NOW - 10, 200),))


GOLDEN = pathlib.Path(__file__).parent / "golden" / "schedule.reservation"
PEER_NOW = 1795451269  # the pass of tests/golden/schedule.reservation (job 9's STARTING time)


def test_the_peers_scenario_reserves_backfills_and_holds_back() -> None:
    s = peer_scenario()
    p = schedule(s)
    assert dispatched(p) == [9]  # job 9 ends before the reservation: it backfills; job 10 would delay it
    [r] = p.reservations
    assert (r.job_id, r.start, r.duration, r.granted, r.pe) == (8, NOW - 10 + 260, 120, (("all.q", "h1", 2),), "smp")
    assert 10 in p.reasons and 8 in p.reasons
    # the schedule file as 8.1.9 wrote it for the same pass beside the peer (its times, its host)
    s = dataclasses.replace(s, now=PEER_NOW, running_tasks=(
        dataclasses.replace(s.running_tasks[0], start=PEER_NOW - 15, granted=(("all.q", "vm", 1),)),),
        qinstances=(qi(host="vm", slots=2, used=1, pe_list=("smp",)),), hosts={"vm": host("vm")})
    p = schedule(s)
    lines = schedule_lines(s, pass_entries(s, p))
    assert "".join(line + "\n" for line in lines) == GOLDEN.read_text().partition("# ----\n")[2]


def test_without_max_reservation_or_without_r_nothing_is_reserved() -> None:
    s = peer_scenario()
    for variant in (dataclasses.replace(s, max_reservation=0),
                    dataclasses.replace(s, pending=tuple(dataclasses.replace(t, reserve=False) for t in s.pending))):
        p = schedule(variant)
        assert p.reservations == []
        assert dispatched(p) == [9]  # job 10 (h_rt 300) fits the free slot then: nothing holds it back


def test_a_free_slot_a_reservation_holds_is_said_to_be_held() -> None:
    """Without job 9 the slot is free now; job 10 (h_rt 300) would hold it into
    the reservation: 8.1.9's words for slots a reservation holds (as for an
    advance reservation beside the peer)."""
    s = peer_scenario()
    p = schedule(dataclasses.replace(s, pending=tuple(t for t in s.pending if t.job_id != 9)))
    assert dispatched(p) == []
    assert p.reasons[10] == ['(-l NONE) cannot run in queue "all.q@h1" because it offers only '
                             'qc:slots=0.000000 due to a reservation']


def test_a_long_job_backfills_where_no_reservation_holds_anything() -> None:
    s = snap([qi(slots=2, used=1, pe_list=("smp",)), qi(host="h2", slots=1)],
             [task(8, pe=("smp", ((2, 2),)), reserve=True, duration=60), task(10, duration=300)],
             pes=[pe("smp", "$pe_slots")], now=NOW, max_reservation=1,
             running_tasks=(running(7, NOW - 10, 200),))
    p = schedule(s)
    assert [r.job_id for r in p.reservations] == [8]
    assert [(d.job_id, d.granted) for d in p.dispatches] == [(10, [("all.q", "h2", 1)])]


def test_max_reservation_limits_the_reservations_highest_priority_first() -> None:
    s = snap([qi(slots=2, used=2)],
             [task(1, reserve=True, duration=100, priority=10), task(2, reserve=True, duration=100),
              task(3, reserve=True, duration=100, priority=-10)],
             now=NOW, max_reservation=2,
             running_tasks=(running(7, NOW, 100), running(8, NOW, 500)))
    p = schedule(s)
    assert [(r.job_id, r.start) for r in p.reservations] == [(1, NOW + 160), (2, NOW + 320)]  # job 2 after job 1


def test_consumables_are_reserved_on_the_host() -> None:
    cx = complexes("mem         mem        MEMORY      <=    YES         YES        0        0\n")
    s = snap([qi(slots=4, used=1), qi(host="h2", slots=4)],
             [task(1, requests={"mem": "6G"}, reserve=True, duration=100),
              task(2, requests={"mem": "3G"}, duration=1000),
              task(3, requests={"mem": "2G"}, duration=10)],
             hosts={"h1": host("h1", values={"mem": "8G"}, consumed={"mem": 4 * 2**30}),
                    "h2": host("h2", values={"mem": "4G"})},
             complexes=cx, now=NOW, max_reservation=1,
             running_tasks=(running(7, NOW, 100, requests={"mem": "4G"}),))
    p = schedule(s)
    [r] = p.reservations
    assert (r.job_id, r.start, r.granted) == (1, NOW + 160, (("all.q", "h1", 1),))
    # job 2 (long) goes to h2 where the reservation holds nothing; job 3 (short) fits h1 before it
    assert {d.job_id: d.granted[0][1] for d in p.dispatches} == {2: "h2", 3: "h1"}


# ---------------------------------------------------------------- the property


@st.composite
def cells(draw: st.DrawFn) -> Snapshot:
    """Two hosts of 1-3 slots, some running tasks with ends, a -R y PE job
    (high priority) and some small jobs of various lengths."""
    slots = [draw(st.integers(1, 3)) for _ in range(2)]
    runs = []
    used = [0, 0]
    job = 100
    for h in range(2):
        for _ in range(draw(st.integers(0, slots[h]))):
            job += 1
            used[h] += 1
            runs.append(running(job, NOW - draw(st.integers(0, 50)), draw(st.integers(1, 400)),
                                ((("all.q", f"h{h + 1}", 1)),)))
    qis = [qi(host=f"h{h + 1}", slots=slots[h], used=used[h], pe_list=("mpi",)) for h in range(2)]
    want = draw(st.integers(1, sum(slots)))
    pending = [task(1, pe=("mpi", ((want, want),)), reserve=True, duration=draw(st.integers(1, 300)), priority=100)]
    for j in range(2, 2 + draw(st.integers(0, 6))):
        pending.append(task(j, duration=draw(st.sampled_from([5, 50, 200, 1000, math.inf]))))
    return snap(qis, pending, pes=[pe("mpi", "$fill_up")], now=NOW, max_reservation=1, running_tasks=tuple(runs))


@settings(max_examples=150, deadline=None)
@given(cells())
def test_a_backfilled_job_never_delays_the_reservation(s: Snapshot) -> None:
    """Whatever starts now, at the reservation's start the reserved slots are
    free: per host, slots - (running tasks and new dispatches still running
    then) >= what the reservation holds there."""
    p = schedule(s)
    if not p.reservations:
        assert 1 in dispatched(p)  # the -R y job started now (or nothing could ever hold it)
        return
    [r] = p.reservations
    durations = {t.job_id: t.duration + s.duration_offset for t in s.pending}
    for q in s.qinstances:
        for t in (r.start, (r.start + r.end) / 2):
            if not r.start <= t < r.end:
                continue
            busy = sum(n for e in s.running_tasks if max(e.end, s.now + 1) > t
                       for c, h, n in e.granted if f"{c}@{h}" == q.name)
            busy += sum(n for d in p.dispatches if s.now + durations[d.job_id] > t
                        for c, h, n in d.granted if f"{c}@{h}" == q.name)
            held = sum(n for c, h, n in r.granted if f"{c}@{h}" == q.name)
            assert busy + held <= q.slots, (q.name, t, busy, held)


def test_schedule_lines_of_a_pe_job_over_two_hosts_with_consumables() -> None:
    cx = complexes("mem         mem        MEMORY      <=    YES         YES        0        0\n"
                   "lic         lic        INT         <=    YES         JOB        0        0\n")
    s = snap([qi(values={"lic": "4"}, complex_names=frozenset({"lic"})), qi(host="h2", values={"lic": "4"},
              complex_names=frozenset({"lic"}))], complexes=cx, global_values={"mem": "100G", "lic": "10"},
             hosts={"h1": host("h1", values={"mem": "8G"}), "h2": host("h2", values={"mem": "8G"})})
    e = ScheduleEntry(5, 1, "RESERVING", 1000.0, 160.0, (("all.q", "h2", 2), ("all.q", "h1", 1)),
                      {"mem": "1G", "lic": "1"}, "mpi")
    assert schedule_lines(s, [e]) == [
        "5:1:RESERVING:1000:160:P:mpi:slots:3.000000",
        "5:1:RESERVING:1000:160:G:global:lic:1.000000",
        "5:1:RESERVING:1000:160:G:global:mem:3221225472.000000",
        "5:1:RESERVING:1000:160:H:h2:mem:2147483648.000000",
        "5:1:RESERVING:1000:160:H:h1:mem:1073741824.000000",
        "5:1:RESERVING:1000:160:Q:all.q@h2:slots:2.000000",
        "5:1:RESERVING:1000:160:Q:all.q@h2:lic:1.000000",
        "5:1:RESERVING:1000:160:Q:all.q@h1:slots:1.000000",
        "::::::::",
    ]
