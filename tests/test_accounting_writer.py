"""The qmaster's accounting writer: one record per run, also across a qmaster restart."""

from __future__ import annotations

from minisge.formats import accounting
from minisge.qmaster import accounting_writer
from minisge.qmaster.job import Job

LINE = ("all.q:node1:users:alice:job:15:sge:0:1795406291:1795406292:1795406292:0:0:0:0.000871:0.003610:"
        "25408.000000:0:0:0:0:480:0:0:0.000000:0:0:0:0:5:1:NONE:defaultdepartment:NONE:1:0:0.004481:"
        "0.000000:0.000000:NONE:0.000000:NONE:0.000000:0:0")


def record(**changes) -> accounting.AccountingRecord:
    return accounting.parse_line(LINE)._replace(**changes)


def test_a_recorded_end_reported_again_after_a_restart_is_known(tmp_path):
    path = str(tmp_path / "accounting")
    accounting_writer.append(path, record(), sync=False)
    # the execd that reports it again no longer has its own cpu/mem/maxvmem samples
    assert accounting_writer.already_written(path, record(cpu=0.0, mem=0.0, maxvmem=0.0))


def test_a_rerun_that_started_in_the_same_second_is_another_run(tmp_path):
    # exit 99 (failed 25), then the re-run started and ended within the same second
    path = str(tmp_path / "accounting")
    accounting_writer.append(path, record(failed=25, exit_status=99), sync=False)
    rerun = record(ru_utime=0.000912, ru_minflt=478)
    assert not accounting_writer.already_written(path, rerun)
    accounting_writer.append(path, rerun, sync=False)
    assert accounting_writer.already_written(path, rerun)


def test_no_accounting_file_means_not_written(tmp_path):
    assert not accounting_writer.already_written(str(tmp_path / "accounting"), record())


def test_text_that_came_as_non_utf8_bytes_is_written_back_as_those_bytes(tmp_path):
    # qsub -A with a Latin-1 account string: decoded with surrogateescape on the way in
    path = tmp_path / "accounting"
    account = b"caf\xe9".decode("utf-8", "surrogateescape")
    accounting_writer.append(str(path), record(account=account), sync=False)
    assert b":caf\xe9:" in path.read_bytes()


def _job(**spec):
    return Job(number=5, name="x", owner="u", uid=1, group="g", gid=1, submission_time=100.0, spec=spec)


def test_the_category_has_8_1_9s_order_of_pseudo_options():
    job = _job(project="p1", pe={"name": "smp", "ranges": [[2, 4]]}, hard_queues=["all.q", "b.q"],
               master_queues=["m.q"], hard_resources={"h_rt": "600", "arch": "lx*"},
               soft_resources={"s_rt": "3600"}, now=True)
    assert accounting_writer.category(job, ["arusers", "staff"], True) == (
        "-U arusers,staff -q all.q,b.q -masterq m.q -l arch=lx*,h_rt=600 -soft -l s_rt=3600 -pe smp 2-4 -I y -P p1")


def test_the_categorys_resource_requests_are_sorted_by_name():
    # 8.1.9: qsub -l h_rt=60,arch=lx-amd64 gives "-l arch=lx-amd64,h_rt=60" in the accounting
    # category, and -l h_vmem=200M,h_rt=60,mf=10M -soft -l a=lx-amd64,s_rt=1:0:0 gives
    # "-l h_rt=60,h_vmem=200M,mem_free=10M -soft -l arch=lx-amd64,s_rt=3600" (the qmaster keeps
    # full names and TIME in seconds: ConfigState.normalised_resources)
    job = _job(hard_resources={"h_vmem": "200M", "h_rt": "60", "mem_free": "10M"},
               soft_resources={"s_rt": "3600", "arch": "lx-amd64"})
    assert accounting_writer.category(job) == (
        "-l h_rt=60,h_vmem=200M,mem_free=10M -soft -l arch=lx-amd64,s_rt=3600")


def test_the_category_leaves_out_a_project_no_queue_or_host_refers_to():
    assert accounting_writer.category(_job(project="p1")) == "NONE"
    assert accounting_writer.category(_job(project="p1", pe={"name": "smp", "ranges": [[2, 2]]})) == "-pe smp 2"


def test_a_stream_of_ends_shares_a_sync_and_none_is_told_synced_before_it_is(monkeypatch, tmp_path):
    """AccountingSync: a record is synced at once when the last sync is
    SYNC_GATHER old; those that come sooner wait out the rest of it and
    share one fdatasync; a record is told synced only after a sync that
    began after it was appended.  The clock moves only when told to."""
    import trio
    import trio.testing

    path = tmp_path / "accounting"
    path.write_text("")
    syncs: list[int] = []  # the records appended when each sync began
    acs = accounting_writer.AccountingSync(str(path))
    monkeypatch.setattr(accounting_writer, "sync", lambda p: syncs.append(acs.appended))
    clock = trio.testing.MockClock()

    async def main() -> None:
        told: list[int] = []
        event = [trio.Event()]

        async def synced() -> None:
            told.append(acs.synced)
            event[0].set()

        async def next_sync() -> None:
            with trio.fail_after(5):
                await event[0].wait()
            event[0] = trio.Event()

        async with trio.open_nursery() as nursery:
            await nursery.start(acs.run, synced)
            acs.appended_one()
            await next_sync()
            assert syncs == [1] and told == [1] and acs.is_synced(1)  # at once
            for _ in range(3):  # a stream of ends, each before SYNC_GATHER has passed
                acs.appended_one()
                await trio.testing.wait_all_tasks_blocked()
                clock.jump(accounting_writer.SYNC_GATHER / 4)
                assert syncs == [1] and not acs.is_synced(acs.appended)
            clock.jump(accounting_writer.SYNC_GATHER / 4)
            await next_sync()
            assert syncs == [1, 4] and told == [1, 4] and acs.is_synced(4)  # the three in one sync
            clock.jump(1)  # a quiet while: the next one is synced at once again
            acs.appended_one()
            await next_sync()
            assert syncs == [1, 4, 5]
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
