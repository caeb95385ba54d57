"""queue_conf(5) load_thresholds, suspend_thresholds/nsuspend/suspend_interval
and subordinate_list, as minisge.qmaster.load_control decides them (pure)."""

from __future__ import annotations

from scheduler_harness import CX, load_conf, running_task

from minisge.scheduler import load_alarms as lc

LOAD = {"np_load_avg": "0.082276", "load_avg": "0.164552", "num_proc": "2", "arch": "lx-amd64",
        "mem_free": "1000.000000M"}


# ---------------------------------------------------------------- load_thresholds


def test_load_below_threshold_is_no_alarm():
    assert lc.load_alarm((("np_load_avg", "1.75"),), CX, LOAD) is None


def test_load_over_threshold_gives_the_schedulers_words():
    why = lc.load_alarm((("np_load_avg", "0.001"),), CX, LOAD)
    assert why == "np_load_avg=0.082276 (no load adjustment) >= 0.001"


def test_load_equal_to_threshold_is_an_alarm_with_relop_ge():
    """resource_cmp(relop, load, limit): ``>=`` holds at equality."""
    assert lc.load_alarm((("np_load_avg", "0.082276"),), CX, LOAD) is not None


def test_relop_eq_alarms_when_the_value_matches():
    """num_proc (``==``): the 8.1.9 peer shows ``num_proc=2.000000 (no load adjustment) == 2``."""
    assert lc.load_alarm((("num_proc", "2"),), CX, LOAD) == "num_proc=2.000000 (no load adjustment) == 2"
    assert lc.load_alarm((("num_proc", "3"),), CX, LOAD) is None


def test_relop_le_alarms_when_the_value_falls_to_the_threshold():
    assert lc.load_alarm((("mem_free", "2G"),), CX, LOAD) is not None
    assert lc.load_alarm((("mem_free", "100M"),), CX, LOAD) is None


def test_missing_load_value_is_an_alarm():
    assert lc.load_alarm((("np_load_avg", "1.75"),), CX, {"num_proc": "2"}) == \
        'no value for complex attribute "np_load_avg"'


def test_host_without_its_first_load_report_is_not_overloaded():
    c = load_conf(load_thresholds=(("np_load_avg", "1.75"),))
    assert lc.evaluate([c], {}, CX, [], now=0.0).alarm == {}
    assert lc.qstat_alarms(c, CX, {}) == {}


def test_unknown_attribute_is_an_alarm():
    assert lc.load_alarm((("nosuch", "1"),), CX, LOAD) == 'no such complex attribute for threshold "nosuch"'


def test_queue_value_used_when_no_load_is_reported():
    why = lc.load_alarm((("num_proc", "4"),), CX, {}, queue_values={"num_proc": "4"})
    assert why == "num_proc=4.000000 (no load value) == 4"


def test_load_adjustment_as_the_peer_prints_it():
    """8.1.9: ``np_load_avg=0.532276 (= 0.082276 + 0.50 * 1.800000 with nproc=2) >= 0.001``."""
    adj = lc.Adjustment({"np_load_avg": "0.50"}, 450.0)
    why = lc.load_alarm((("np_load_avg", "0.001"),), CX, LOAD, adjustment=adj, lc_host=1.8)
    assert why == "np_load_avg=0.532276 (= 0.082276 + 0.50 * 1.800000 with nproc=2) >= 0.001"


def test_load_adjustment_can_cause_the_alarm():
    adj = lc.Adjustment({"np_load_avg": "0.50"}, 450.0)
    assert lc.load_alarm((("np_load_avg", "0.3"),), CX, LOAD) is None
    assert lc.load_alarm((("np_load_avg", "0.3"),), CX, LOAD, adjustment=adj, lc_host=1.0) is not None


def test_correction_factor_decays_linearly_per_slot():
    tasks = [running_task(1, 100.0, slots=2), running_task(2, 0.0), running_task(3, -1000.0)]
    hosts, _glob = lc.correction_factors(tasks, 100.0 + 45.0, 450.0, {"all.q@h1": "h1"})
    # task 1: (1 - 45/450) * 2 = 1.8; task 2: 1 - 145/450 = 0.677..; task 3 decayed
    assert hosts == {"h1": int(67.77777 + int(180.0))}


def test_explain_lists_every_threshold_with_its_origin():
    lines = lc.explain_lines((("np_load_avg", "0.001"), ("num_proc", "99")), CX, LOAD, kind="load")
    assert lines == ["alarm hl:np_load_avg=0.082276 load-threshold=0.001", "alarm hl:num_proc=2 load-threshold=99"]


def test_explain_suspend_threshold_wording():
    assert lc.explain_lines((("num_proc", "2"),), CX, LOAD, kind="suspend") == [
        "alarm hl:num_proc=2 suspend-threshold=2"]


def test_qstat_alarms_need_nsuspend_and_interval_for_A():
    c = load_conf(load_thresholds=(("num_proc", "2"),), suspend_thresholds=(("num_proc", "2"),), nsuspend=0)
    assert set(lc.qstat_alarms(c, CX, LOAD)) == {"a"}
    c = load_conf(load_thresholds=(("num_proc", "2"),), suspend_thresholds=(("num_proc", "2"),))
    assert set(lc.qstat_alarms(c, CX, LOAD)) == {"a", "A"}


def test_alarm_in_evaluation_and_scheduler_message():
    c = load_conf(load_thresholds=(("num_proc", "2"),))
    d = lc.evaluate([c], {"h1": LOAD}, CX, [], now=1000.0)
    assert d.states("all.q@h1") == "a"
    assert lc.scheduler_messages(d) == [
        'queue instance "all.q@h1" dropped because it is overloaded: num_proc=2.000000 (no load adjustment) == 2']


def test_unknown_host_shows_au_but_the_scheduler_says_not_available():
    """qstat computes ``a`` without a load value (``au``); the scheduler drops a
    ``u`` instance before it looks at load, so no overload message."""
    c = load_conf(load_thresholds=(("np_load_avg", "1.75"),), states="u")
    assert lc.qstat_alarms(c, CX, LOAD) == {
        "a": ['error: no value for "np_load_avg" because execd is in unknown state']}
    assert lc.evaluate([c], {"h1": LOAD}, CX, [], now=0.0).alarm == {}


# ---------------------------------------------------------------- suspend thresholds


def sconf(**kw):
    base = dict(suspend_thresholds=(("num_proc", "2"),), nsuspend=1, suspend_interval=60.0, slots=4)
    base.update(kw)
    return load_conf(**base)


def test_suspend_alarm_suspends_the_task_that_started_last_at_once():
    tasks = [running_task(1, 10.0), running_task(2, 30.0), running_task(3, 20.0)]
    d = lc.evaluate([sconf()], {"h1": LOAD}, CX, tasks, now=100.0)
    assert d.states("all.q@h1") == "A"
    assert d.suspend == [((2, 1), "threshold")]
    assert d.last_check == {"all.q@h1": 100.0}
    assert d.next_due == 160.0


def test_next_suspension_waits_for_the_interval():
    tasks = [running_task(1, 10.0), running_task(2, 30.0, by={"threshold"}), running_task(3, 20.0)]
    d = lc.evaluate([sconf()], {"h1": LOAD}, CX, tasks, now=120.0, last_check={"all.q@h1": 100.0})
    assert d.suspend == [] and d.next_due == 160.0
    d = lc.evaluate([sconf()], {"h1": LOAD}, CX, tasks, now=161.0, last_check={"all.q@h1": 100.0})
    assert d.suspend == [((3, 1), "threshold")]


def test_nsuspend_tasks_per_interval():
    tasks = [running_task(1, 10.0), running_task(2, 30.0), running_task(3, 20.0)]
    d = lc.evaluate([sconf(nsuspend=2)], {"h1": LOAD}, CX, tasks, now=100.0)
    assert d.suspend == [((2, 1), "threshold"), ((3, 1), "threshold")]


def test_tasks_suspended_by_their_owner_are_not_picked():
    tasks = [running_task(1, 10.0), running_task(2, 30.0, by={"job"})]
    d = lc.evaluate([sconf()], {"h1": LOAD}, CX, tasks, now=100.0)
    assert d.suspend == [((1, 1), "threshold")]


def test_below_threshold_resumes_the_longest_running_first():
    low = dict(LOAD, num_proc="8")
    tasks = [running_task(1, 10.0, by={"threshold"}), running_task(2, 30.0, by={"threshold"}), running_task(3, 5.0)]
    d = lc.evaluate([sconf()], {"h1": low}, CX, tasks, now=200.0, last_check={"all.q@h1": 100.0})
    assert d.states("all.q@h1") == ""
    assert d.resume == [((1, 1), "threshold")]
    assert d.next_due == 260.0


def test_resumption_waits_for_the_interval_too():
    low = dict(LOAD, num_proc="8")
    tasks = [running_task(1, 10.0, by={"threshold"})]
    d = lc.evaluate([sconf()], {"h1": low}, CX, tasks, now=130.0, last_check={"all.q@h1": 100.0})
    assert d.resume == [] and d.next_due == 160.0


def test_removed_suspend_thresholds_resume_at_once():
    tasks = [running_task(1, 10.0, by={"threshold"}), running_task(2, 11.0, by={"threshold"})]
    d = lc.evaluate([load_conf(slots=4)], {"h1": LOAD}, CX, tasks, now=130.0, last_check={"all.q@h1": 100.0})
    assert sorted(d.resume) == [((1, 1), "threshold"), ((2, 1), "threshold")]


def test_suspend_thresholds_skip_consumables():
    assert lc.load_alarm((("slots", "0"),), CX, {"slots": "0"}, consumables=False) is None


def test_manually_suspended_instance_is_left_alone():
    d = lc.evaluate([sconf(states="s")], {"h1": LOAD}, CX, [running_task(1, 10.0)], now=100.0)
    assert d.suspend == []


# ---------------------------------------------------------------- subordinate_list


def test_subordinate_suspended_when_all_slots_of_the_superordinated_are_used():
    hi = load_conf("high.q", slots=2, subordinates=(("low.q", 0),))
    lo = load_conf("low.q", slots=2)
    assert lc.subordinated([hi, lo], {"high.q@h1": 1}) == {}
    assert lc.subordinated([hi, lo], {"high.q@h1": 2}) == {"low.q@h1": "high.q@h1"}


def test_subordinate_threshold_counts_slots():
    hi = load_conf("high.q", slots=4, subordinates=(("low.q", 1),))
    lo = load_conf("low.q", slots=2)
    assert lc.subordinated([hi, lo], {"high.q@h1": 1}) == {"low.q@h1": "high.q@h1"}


def test_subordination_is_per_host():
    hi = load_conf("high.q", host="h1", slots=1, subordinates=(("low.q", 0),))
    lo1, lo2 = load_conf("low.q", host="h1"), load_conf("low.q", host="h2")
    assert set(lc.subordinated([hi, lo1, lo2], {"high.q@h1": 1})) == {"low.q@h1"}


def test_subordinated_tasks_are_suspended_and_resumed():
    hi = load_conf("high.q", slots=1, subordinates=(("low.q", 0),))
    lo = load_conf("low.q", slots=2)
    tasks = [running_task(1, 10.0, qi="low.q@h1"), running_task(2, 20.0, qi="high.q@h1")]
    d = lc.evaluate([hi, lo], {"h1": LOAD}, CX, tasks, now=30.0)
    assert d.states("low.q@h1") == "S"
    assert d.suspend == [((1, 1), "subordinate")]
    tasks = [running_task(1, 10.0, qi="low.q@h1", by={"subordinate"})]
    d = lc.evaluate([hi, lo], {"h1": LOAD}, CX, tasks, now=40.0)
    assert d.states("low.q@h1") == "" and d.resume == [((1, 1), "subordinate")]


# ---------------------------------------------------------------- configuration ambiguous


def test_ambiguous_instance_is_in_state_c_with_the_explain_text():
    c = load_conf(ambiguous=(("slots", "@a", "@b"),))
    d = lc.evaluate([c], {"h1": LOAD}, CX, [], now=0.0)
    assert d.states("all.q@h1") == "c"
    assert d.ambiguous["all.q@h1"] == ['warning: "slots" has ambiguous value ("@a", "@b")']


# ---------------------------------------------------------------- load_sensor (sge_conf(5))


def test_sensor_report_keeps_the_hosts_values():
    from minisge.execd.load_sensor import parse_report

    lines = ["h1:np_load_avg:0.5", "H1:users:3", "other:np_load_avg:9", "global:lic:4", "garbage", "h1::x"]
    assert parse_report(lines, "h1") == {"np_load_avg": "0.5", "users": "3"}


def test_local_load_sensor_wins_over_the_global_one(tmp_path):
    from minisge.execd.load_sensor import configured_sensors

    (tmp_path / "configuration").write_text("load_sensor /g/sensor\n")
    assert configured_sensors(str(tmp_path), "h1") == ("/g/sensor",)
    (tmp_path / "local_conf").mkdir()
    (tmp_path / "local_conf" / "h1").write_text("load_sensor /l/one,/l/two\n")
    assert configured_sensors(str(tmp_path), "h1") == ("/l/one", "/l/two")
    assert configured_sensors(str(tmp_path), "h2") == ("/g/sensor",)


def test_load_override_values():
    from minisge.execd.load import fixed_values

    assert fixed_values("np_load_avg=0.000000, num_proc=4,bad") == {"np_load_avg": "0.000000", "num_proc": "4"}
    assert fixed_values("") == {}
