"""minisge.replay.plots: the series by hand, then the files matplotlib writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from minisge.replay.result import ReplayResult, TaskRun

plots = pytest.importorskip("minisge.replay.plots", reason="matplotlib (the 'teach' extra) is not installed")

HOSTS = (("node1", 2), ("node2", 1))
QUEUES = (("all.q", "node1", 2), ("all.q", "node2", 1))


def task(job: int, submit: float, start: float | None, end: float | None, slots: int = 1,
         placement: tuple[tuple[str, str, int], ...] = (("all.q", "node1", 1),), owner: str = "alice") -> TaskRun:
    run = 0.0 if start is None or end is None else end - start
    return TaskRun(job, 1, owner, None, submit, start, end, run, slots, placement)


def small() -> ReplayResult:
    """Three slots (node1: 2, node2: 1), four jobs, by hand:

    job 1 (alice, 1 slot)  submitted at 100, runs 100..160 on node1
    job 2 (bob,   2 slots) submitted at 110, runs 110..130, a slot on node1 and node2
    job 3 (alice, 1 slot)  submitted at 120, waits, runs 130..190 on node1
    job 4 (carol, 3 slots) submitted at 150, never starts
    """
    return ReplayResult("by hand", (
        task(1, 100, 100, 160),
        task(2, 110, 110, 130, 2, (("all.q", "node1", 1), ("all.q", "node2", 1)), "bob"),
        task(3, 120, 130, 190),
        task(4, 150, None, None, 3, (), "carol"),
    ), HOSTS, QUEUES)


def test_utilisation_steps_at_every_start_and_end() -> None:
    # busy slots 1 (job 1), 3 (job 2 too), 2 (job 2 ended, job 3 started), 1, 0 of 3
    assert plots.utilisation_steps(small()) == [(100, 1 / 3), (110, 1.0), (130, 2 / 3), (160, 1 / 3), (190, 0.0)]


def test_gantt_rows_reuse_a_slot_freed_by_an_end() -> None:
    layout = plots.gantt_layout(small())
    assert layout.rows == (("node1", 0), ("node1", 1), ("node2", 0))
    got = sorted((b.job_id, b.row, b.start, b.end) for b in layout.bars)
    # job 1 on node1's first slot; job 2 on node1's second and node2's only slot;
    # job 3 at 130 on node1's second slot, freed by job 2's end at 130
    assert got == [(1, 0, 100, 160), (2, 1, 110, 130), (2, 2, 110, 130), (3, 1, 130, 190)]


def test_gantt_adds_rows_where_a_host_runs_more_than_its_slots() -> None:
    r = ReplayResult("over", (task(1, 0, 0, 10, 2, (("all.q", "node2", 2),)),
                              task(2, 0, 0, 10, placement=(("other.q", "node3", 1),))), HOSTS, QUEUES)
    layout = plots.gantt_layout(r)
    assert layout.rows == (("node1", 0), ("node1", 1), ("node2", 0), ("node2", 1), ("node3", 0))
    assert sorted(b.row for b in layout.bars) == [2, 3, 4]


def test_a_task_takes_adjacent_free_rows_when_there_are_and_is_one_block() -> None:
    hosts = (("big", 3),)
    r = ReplayResult("adjacent", (
        task(1, 0, 0, 10, placement=(("all.q", "big", 1),)),
        task(2, 0, 0, 20, placement=(("all.q", "big", 1),)),
        task(3, 0, 0, 10, placement=(("all.q", "big", 1),)),
        # at 10 rows 0 and 2 are free, not adjacent: job 4 takes both, two blocks; at 20 all three, one block
        task(4, 0, 10, 15, 2, (("all.q", "big", 2),)),
        task(5, 0, 20, 30, 3, (("all.q", "big", 3),)),
    ), hosts, (("all.q", "big", 3),))
    layout = plots.gantt_layout(r)
    rows = {}
    for b in layout.bars:
        rows.setdefault(b.job_id, []).append(b.row)
    assert rows == {1: [0], 2: [1], 3: [2], 4: [0, 2], 5: [0, 1, 2]}
    blocks = plots.gantt_blocks(layout)
    assert [(b.job_id, b.row, b.rows) for b in blocks] == [(1, 0, 1), (2, 1, 1), (3, 2, 1), (4, 0, 1), (4, 2, 1),
                                                           (5, 0, 3)]


def test_adjacent_free_rows_come_before_lower_ones() -> None:
    hosts = (("big", 4),)
    r = ReplayResult("adjacent", (
        task(1, 0, 0, 10, placement=(("all.q", "big", 1),)),
        task(2, 0, 0, 20, placement=(("all.q", "big", 1),)),
        task(3, 0, 0, 10, placement=(("all.q", "big", 1),)),
        task(4, 0, 10, 15, 2, (("all.q", "big", 2),)),  # rows 0, 2, 3 free: 2 and 3 are adjacent
    ), hosts, (("all.q", "big", 4),))
    assert sorted(b.row for b in plots.gantt_layout(r).bars if b.job_id == 4) == [2, 3]


def test_the_legend_names_the_owners_with_the_most_slot_time() -> None:
    r = small()
    # slot-seconds: alice 60 + 60 = 120, bob 2 * 20 = 40, carol 0 (never started)
    assert plots.owner_ranking([r]) == ["alice", "bob", "carol"]
    assert plots.legend_entries([r]) == {"alice": "alice", "bob": "bob", "carol": "carol"}
    assert plots.legend_entries([r], limit=2) == {"alice": "alice", "bob": plots.OTHER_OWNERS,
                                                  "carol": plots.OTHER_OWNERS}


def test_bin_counts_as_a_histogram_counts() -> None:
    # each bin holds its left edge, the last its right edge too; outside: not counted
    assert plots.bin_counts([0, 1, 1.5, 2, 3, 4, 5], [0, 2, 4]) == [3, 3]
    assert plots.bin_counts([], [0, 1]) == [0]


@pytest.mark.parametrize(("span", "unit"), [(0, "s"), (600, "s"), (601, "min"), (36000, "min"),
                                            (36001, "h"), (10 * 86400 + 1, "d")])
def test_time_unit_fits_the_span(span: float, unit: str) -> None:
    assert plots.time_unit(span)[0] == unit


def what_if() -> list[ReplayResult]:
    base = small()
    fewer = ReplayResult("one host fewer", tuple(
        TaskRun(t.job_id, t.task_id, t.owner, t.project, t.submit_time,
                None if t.start_time is None else t.start_time + 5, None if t.end_time is None else t.end_time + 5,
                t.run_time, t.slots, t.placement) for t in base.tasks), HOSTS[:1], QUEUES[:1])
    return [base, ReplayResult("seqno", base.tasks, HOSTS, QUEUES), fewer]


def check_files(paths: list[str], titles: list[str]) -> None:
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".png"):
            assert data.startswith(b"\x89PNG\r\n\x1a\n"), path
        else:
            root = ET.fromstring(data)
            assert root.tag == "{http://www.w3.org/2000/svg}svg", path
            text = data.decode()
            # matplotlib writes each text as glyphs and keeps the string in a comment
            assert any(t in text for t in titles), (path, titles)


def test_one_result_writes_its_three_figures(tmp_path) -> None:
    paths = plots.write_plots([small()], str(tmp_path / "one"))
    names = ["gantt", "usage", "waits"]
    assert paths == sorted(str(tmp_path / "one" / f"{n}.{f}") for n in names for f in ("png", "svg"))
    check_files(paths, ["Task runs on the hosts", "Utilisation and queue length", "Wait times"])
    svg = {p: open(p).read() for p in paths if p.endswith(".svg")}
    assert "by hand" in svg[str(tmp_path / "one" / "gantt.svg")]
    assert "1 tasks never started" in svg[str(tmp_path / "one" / "gantt.svg")]
    assert "owner" in svg[str(tmp_path / "one" / "gantt.svg")]  # the legend


def test_three_results_side_by_side_and_their_metrics_the_same_bytes_twice(tmp_path) -> None:
    paths = plots.write_plots(what_if(), str(tmp_path / "three"))
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        "gantt.png", "gantt.svg", "metrics.png", "metrics.svg", "usage.png", "usage.svg", "waits.png", "waits.svg"]
    check_files(paths, ["Task runs", "The main metrics", "Utilisation", "Wait times"])
    metrics = open(tmp_path / "three" / "metrics.svg").read()
    for label in ("by hand", "seqno", "one host fewer", "mean bounded slowdown (bound 10 s)", "makespan (s)"):
        assert label in metrics
    # deterministic: the same results again give the same SVG files, byte for byte
    again = plots.write_plots(what_if(), str(tmp_path / "again"), formats=("svg",))
    assert len(again) == 4
    for path in again:
        first = tmp_path / "three" / path.rsplit("/", 1)[1]
        assert open(path, "rb").read() == first.read_bytes(), path


def test_nothing_to_plot_is_an_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="no replay"):
        plots.write_plots([], str(tmp_path))
    empty = ReplayResult("empty", (), HOSTS, QUEUES)
    assert len(plots.write_plots([empty], str(tmp_path), formats=("png",))) == 3
