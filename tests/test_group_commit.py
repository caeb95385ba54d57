"""spool.GroupCommit: requests that come together share one sync, each
returns only once its files are synced, and a failure reaches exactly the
requests it concerns."""

from __future__ import annotations

import errno
import functools
import os
import threading

import pytest
import trio

from minisge.qmaster.spool import GroupCommit, SpoolError, atomic_write, sync_paths


class Recorder:
    """A sync that records what it was asked to sync (and may fail, or wait)."""

    def __init__(self, fail: OSError | None = None) -> None:
        self.batches: list[list[str]] = []
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self, paths) -> None:
        with self.lock:
            self.batches.append(list(paths))
        if self.fail is not None:
            raise SpoolError(self.batches[-1][0], self.fail)

    def synced(self) -> set[str]:
        return {p for b in self.batches for p in b}


def write(path: str, text: str = "x") -> functools.partial[str]:
    return functools.partial(write_returning, path, text)


def write_returning(path: str, text: str) -> str:
    atomic_write(path, text, sync=False)
    return path


async def submit_all(group: GroupCommit, paths: list[str], results: dict[str, object], once=None) -> None:
    async def one(p: str) -> None:
        try:
            await group.durable([write(p)], once)
            results[p] = "ok"
            assert p in group.sync.synced()  # type: ignore[attr-defined]  # synced before it returns
        except SpoolError as err:
            results[p] = err

    async with trio.open_nursery() as n:
        for p in paths:
            n.start_soon(one, p)


def run_with_committer(group: GroupCommit, body) -> None:
    async def main() -> None:
        async with trio.open_nursery() as n:
            await n.start(group.run)
            await body()
            n.cancel_scope.cancel()

    trio.run(main)


def test_requests_that_come_together_share_the_syncs(tmp_path):
    rec = Recorder()
    group = GroupCommit(sync=rec)
    paths = [str(tmp_path / f"f{i}") for i in range(50)]
    results: dict[str, object] = {}
    counter = str(tmp_path / "seq")
    run_with_committer(group, lambda: submit_all(group, paths, results, {counter: write(counter, "50")}))
    assert results == {p: "ok" for p in paths}
    assert all(open(p).read() == "x" for p in paths)
    assert len(rec.batches) < 10 and group.batches == len(rec.batches) and group.units == 50
    assert rec.synced() == set(paths) | {counter}  # the once-write is synced with its batch


def test_a_failed_sync_fails_every_request_of_its_batch(tmp_path):
    rec = Recorder(fail=OSError(errno.EIO, os.strerror(errno.EIO)))
    group = GroupCommit(sync=rec)
    paths = [str(tmp_path / f"f{i}") for i in range(10)]
    results: dict[str, object] = {}
    run_with_committer(group, lambda: submit_all(group, paths, results))
    assert set(results) == set(paths)
    assert all(isinstance(r, SpoolError) and "Input/output error" in str(r) for r in results.values())


def test_a_write_that_fails_fails_its_request_alone(tmp_path):
    rec = Recorder()
    group = GroupCommit(sync=rec)
    good = str(tmp_path / "good")
    bad = str(tmp_path / "missing-dir" / "bad")
    results: dict[str, object] = {}
    run_with_committer(group, lambda: submit_all(group, [good, bad], results))
    assert results[good] == "ok"
    assert isinstance(results[bad], SpoolError) and str(results[bad]).startswith(f'error writing to file "{bad}"')
    assert bad not in rec.synced()


def test_without_a_committer_a_request_syncs_at_once(tmp_path):
    rec = Recorder()
    group = GroupCommit(sync=rec)
    p = str(tmp_path / "alone")
    trio.run(group.durable, [write(p)])
    assert rec.batches == [[p]] and open(p).read() == "x"


def test_the_real_sync_syncs_and_names_what_it_cannot(tmp_path):
    p = write_returning(str(tmp_path / "f"), "data")
    sync_paths([p])  # syncfs of its file system, or an fsync of the file and its directory
    with pytest.raises(SpoolError):
        sync_paths([str(tmp_path / "no-such-dir" / "f")])


def test_requests_that_do_not_wait_are_told_in_their_order_once_synced(tmp_path):
    rec = Recorder()
    group = GroupCommit(sync=rec)
    good = [str(tmp_path / f"f{i}") for i in range(5)]
    bad = str(tmp_path / "missing-dir" / "bad")
    told: list[tuple[str, object]] = []
    all_told = trio.Event()

    def committed(path: str, err: SpoolError | None) -> None:
        assert err is not None or path in rec.synced()  # told only once synced
        told.append((path, err))
        if len(told) == 6:
            all_told.set()

    async def body() -> None:
        for p in [*good[:2], bad, *good[2:]]:  # from the loop, without waiting
            group.add([write(p)], None, functools.partial(committed, p))
        with trio.fail_after(10):
            await all_told.wait()

    run_with_committer(group, body)
    assert [p for p, _ in told] == [*good[:2], bad, *good[2:]]
    assert all(err is None for p, err in told if p != bad) and isinstance(dict(told)[bad], SpoolError)
