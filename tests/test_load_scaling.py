"""host_conf(5) load_scaling as a pure rule (minisge.scheduler.load_scaling),
and its effect on a scheduling pass: the load sort and -l see scaled values."""

from __future__ import annotations

from scheduler_harness import CX, host, qi, snap, task, where

from minisge.scheduler import schedule
from minisge.scheduler.load_scaling import scale, scaled_load


def test_a_value_is_kept_to_three_decimals_and_shown_with_six():
    assert scale(7.438, 0.5) == "3.719000"
    assert scale(1.23456, 1.0) == "1.235000"
    assert scale(3.0, 2) == "6.000000"


def test_only_numeric_complex_attributes_named_by_their_full_name_are_scaled():
    load = {"np_load_avg": "0.5", "arch": "lx-amd64", "mem_free": "1G", "custom": "3", "np_load_short": "0.5"}
    factors = {"np_load_avg": 2.0, "arch": 2.0, "mem_free": 0.5, "custom": 2.0, "nla": 3.0}
    out = scaled_load(load, factors, CX)
    assert out == {"np_load_avg": "1.000000", "arch": "lx-amd64", "mem_free": "536870912.000000",
                   "custom": "3", "np_load_short": "0.5"}
    assert load["np_load_avg"] == "0.5"  # the report itself is left alone


def test_without_factors_the_load_is_the_same_object():
    load = {"np_load_avg": "0.5"}
    assert scaled_load(load, {}, CX) is load


def test_an_unreadable_value_is_left_as_reported():
    assert scaled_load({"load_avg": "n/a"}, {"load_avg": 2.0}, CX) == {"load_avg": "n/a"}


def test_a_request_is_matched_against_the_scaled_value():
    # the qmaster puts the scaled values in the snapshot; -l mem_free=1G holds only on h2
    h1 = host("h1", load=scaled_load({"mem_free": "1.5G"}, {"mem_free": 0.5}, CX))
    h2 = host("h2", load={"mem_free": "1.5G"})
    s = snap([qi(host="h1"), qi(host="h2", seq=1)], [task(requests={"mem_free": "1G"})], hosts={"h1": h1, "h2": h2})
    assert where(schedule(s)) == ["all.q@h2"]
