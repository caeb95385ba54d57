"""Advance reservations in the scheduler (minisge.scheduler.advance_reservation)
and qrstat's output (minisge.output.qrstat_out): pure, on plain data."""

from __future__ import annotations

import math

from scheduler_harness import pe, plan, qi, snap, task, where

from minisge.output import qrstat_out
from minisge.scheduler import Reservation, schedule
from minisge.scheduler.advance_reservation import ReservationRequest, grant

NOW = 1_000_000.0


def _ar(ar_id: int = 1, start: float = NOW, end: float = NOW + 600, slots: int = 2, **kw) -> Reservation:
    return Reservation(ar_id, start, end, (("all.q@h1", slots),), **kw)


def test_a_running_reservation_holds_its_slots_from_other_jobs():
    p = plan([qi(slots=2)], [task(1)], now=NOW, reservations=(_ar(slots=2),))
    assert where(p, 1) is None


def test_a_job_of_the_reservation_runs_in_its_slots():
    p = plan([qi(slots=2)], [task(1, ar=1)], now=NOW, reservations=(_ar(slots=2),))
    assert where(p, 1) == ["all.q@h1"]


def test_a_job_of_the_reservation_runs_only_in_its_queue_instances():
    ar = Reservation(1, NOW, NOW + 600, (("all.q@h2", 1),))
    p = plan([qi(host="h1", slots=2), qi(host="h2", slots=2)], [task(1, ar=1), task(2, ar=1)], now=NOW,
             reservations=(ar,))
    assert where(p, 1) == ["all.q@h2"] and where(p, 2) is None


def test_a_job_of_a_reservation_not_started_yet_waits():
    p = plan([qi(slots=2)], [task(1, ar=1)], now=NOW, reservations=(_ar(start=NOW + 60),))
    assert where(p, 1) is None and p.reasons[1]


def test_the_slots_left_beside_a_reservation_are_for_every_job():
    p = plan([qi(slots=3)], [task(1), task(2)], now=NOW, reservations=(_ar(slots=2),))
    assert where(p, 1) == ["all.q@h1"] and where(p, 2) is None


def test_a_job_without_h_rt_waits_for_a_future_reservation_of_every_slot():
    ar = _ar(start=NOW + 3600, end=NOW + 4200)
    p = plan([qi(slots=2)], [task(1), task(2, duration=60.0)], now=NOW, reservations=(ar,))
    assert where(p, 1) is None  # default_duration INFINITY meets the window
    assert where(p, 2) == ["all.q@h1"]  # ends before it starts


def test_the_jobs_of_the_reservation_do_not_count_twice():
    ar = _ar(slots=1, used={"all.q@h1": 1})
    p = plan([qi(slots=2, used=1)], [task(1)], now=NOW, reservations=(ar,))
    assert where(p, 1) == ["all.q@h1"]


def test_grant_finds_free_slots_and_refuses_what_is_held():
    s = snap([qi(slots=2, pe_list=("smp",))], now=NOW, pes=[pe("smp", "$pe_slots")])
    request = ReservationRequest(owner="u", start=NOW, end=NOW + 600, pe=("smp", ((2, 2),)))
    d = grant(s, request, schedule)
    assert d is not None and d.granted == [("all.q", "h1", 2)] and d.pe == "smp"
    held = snap([qi(slots=2, pe_list=("smp",))], now=NOW, pes=[pe("smp", "$pe_slots")], reservations=(_ar(slots=1),))
    assert grant(held, request, schedule) is None
    later = ReservationRequest(owner="u", start=NOW + 600, end=NOW + 1200, pe=("smp", ((2, 2),)))
    assert grant(held, later, schedule) is not None  # after the other window


def test_grant_counts_running_jobs_only_for_a_window_that_starts_now():
    s = snap([qi(slots=2, used=2)], now=NOW)
    assert grant(s, ReservationRequest(owner="u", start=NOW, end=NOW + 60), schedule) is None
    assert grant(s, ReservationRequest(owner="u", start=NOW + 60, end=NOW + 120), schedule) is not None


def test_a_pending_task_holds_its_slots_for_ever_by_default():
    assert task(1).duration == math.inf


AR = {"id": 4, "name": "later", "owner": "sgetest", "state_letter": "w", "start_time": 0, "end_time": 600,
      "duration": 600, "submission_time": 0, "group": "g", "account": "sge", "resource_list": [["h_vmem", "1G"]],
      "error_handling": False, "granted_slots": [["all.q@vm", 2]], "pe": "smp", "pe_range": "2",
      "master_queue_list": [], "checkpoint_name": "", "mail_options": "", "mail_list": [], "acl_list": [],
      "xacl_list": []}


def test_qrstat_prints_8_1_9s_columns():
    out = qrstat_out.summary([AR])
    head, dashes, line = out.splitlines()
    assert head == "ar-id   name       owner        state start at             end at               duration"
    assert dashes == "-" * 90
    assert line.startswith("      4 later      sgetest      w     ") and line.endswith("  00:10:00")
    assert qrstat_out.summary([]) == ""


def test_qrstat_ar_prints_the_attributes_that_are_set():
    text = qrstat_out.details(AR)
    assert "resource_list                  h_vmem=1G\n" in text
    assert "granted_parallel_environment   smp slots 2\n" in text
    assert "mail_list" not in text and "error_handling" not in text


def test_grant_considers_queue_instances_in_any_state_but_orphaned():
    request = ReservationRequest(owner="u", start=NOW, end=NOW + 60)
    assert grant(snap([qi(slots=1, states="a", load_alarm="np_load_avg=2")], now=NOW), request, schedule)
    assert grant(snap([qi(slots=1, states="d")], now=NOW), request, schedule)
    assert grant(snap([qi(slots=1, states="o")], now=NOW), request, schedule) is None


def test_a_job_held_back_by_a_reservation_is_told_so_in_8_1_9s_words():
    p = plan([qi(host="vm", slots=2)], [task(1)], now=NOW,
             reservations=(Reservation(1, NOW + 3600, NOW + 4200, (("all.q@vm", 2),)),))
    assert p.reasons[1] == ['(-l NONE) cannot run in queue "all.q@vm" because it offers only qc:slots=0.000000 '
                            "due to a reservation"]
    assert p.global_messages == []


def test_he_y_keeps_the_jobs_of_a_reservation_in_error_from_starting():
    p = plan([qi(slots=2)], [task(1, ar=1)], now=NOW, reservations=(_ar(slots=2, in_error=True),))
    assert where(p, 1) is None
    assert p.reasons[1] == ["cannot run because requested advance reservation 1 is in error state"]


def test_he_n_lets_the_jobs_of_a_reservation_in_error_run_where_they_can():
    p = plan([qi(slots=2)], [task(1, ar=1)], now=NOW, reservations=(_ar(slots=2, in_error=False),))
    assert where(p, 1) == ["all.q@h1"]
