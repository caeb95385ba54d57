"""A job's pending tasks as ranges (minisge.qmaster.range_list) behave as the set of their ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from minisge.output.qstat_out import compress_task_ids, compress_task_runs
from minisge.qmaster.range_list import RangeList, TaskSelection

ops = st.lists(st.tuples(st.sampled_from(["add", "discard"]), st.integers(0, 40)), max_size=60)


@given(first=st.integers(1, 5), count=st.integers(0, 30), step=st.integers(1, 4), ops=ops)
def test_a_range_list_is_the_set_of_its_ids(first, count, step, ops):
    r = RangeList.of_array(first, first + (count - 1) * step, step) if count else RangeList(step=step)
    model = set(range(first, first + count * step, step))
    for op, k in ops:
        tid = first + k * step  # a task of the array: on its lattice
        if op == "add":
            r.add(tid)
            model.add(tid)
        else:
            assert r.discard(tid) == (tid in model)
            model.discard(tid)
        assert list(r) == sorted(model) and len(r) == len(model)
        assert all((t in r) == (t in model) for t in range(0, first + 45 * step))
        assert r.ranges() == [(lo, hi, step) for lo, hi, _ in r.ranges()]
        assert RangeList(r.ranges(), step=step) == r  # the spool's form reads back
        assert compress_task_runs(r.runs()) == compress_task_ids(model)
        assert r.first(3, skip={first}) == [t for t in sorted(model) if t != first][:3]
        assert all(r.first(n) == sorted(model)[:n] for n in (0, 1, 2, 5, 50))


@given(count=st.integers(0, 50), step=st.integers(1, 3),
       sel=st.lists(st.tuples(st.integers(1, 60), st.integers(0, 30), st.integers(1, 5)), min_size=1, max_size=3))
def test_a_selection_picks_the_ids_it_names(count, step, sel):
    r = RangeList.of_array(1, 1 + (count - 1) * step, step) if count else RangeList(step=step)
    ranges = [(lo, lo + n, s) for lo, n, s in sel]
    selection = TaskSelection(ranges)
    named = {t for lo, hi, s in ranges for t in range(lo, hi + 1, s)}
    before = list(r)
    assert list(r.select(selection)) == sorted(set(r) & named) and list(r) == before
    taken = r.take(selection)
    assert list(taken) == sorted(set(before) & named) and list(r) == sorted(set(before) - named)
    assert len(r) + len(taken) == len(before)
    assert all((t in selection) == (t in named) for t in range(0, 100))


def test_a_huge_array_is_one_range():
    r = RangeList.of_array(1, 2**31 - 1, 1)
    assert len(r) == 2**31 - 1 and r.ranges() == [(1, 2**31 - 1, 1)]
    assert r.discard(5) and 5 not in r and 6 in r and r.ranges() == [(1, 4, 1), (6, 2**31 - 1, 1)]
    assert list(r.select(TaskSelection.parse("3-2147483647:1000000000"))) == [3, 1000000003, 2000000003]
    taken = r.take(TaskSelection.parse("100-2147483646"))
    assert len(taken) == 2147483547 and r.ranges() == [(1, 4, 1), (6, 99, 1), (2**31 - 1, 2**31 - 1, 1)]
    assert r.first(3) == [1, 2, 3]


def test_a_selection_is_parsed_as_qdel_reads_it():
    assert TaskSelection.parse("1-4:2,7").ranges == ((1, 4, 2), (7, 7, 1))
    assert TaskSelection.parse("x") is None and TaskSelection.parse("3-") is None


def test_ids_of_an_old_spool_read_as_ranges():
    r = RangeList.of_ids([5, 1, 2, 3, 9])
    assert r.ranges() == [(1, 3, 1), (5, 5, 1), (9, 9, 1)] and r == [1, 2, 3, 5, 9]
