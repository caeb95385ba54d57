"""qacct -efficiency's figures and block (minisge.output.efficiency), from records alone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from minisge.output.efficiency import category_requests, format_efficiency, job_figures

MIB = 1024.0**2


def record(**fields):
    r = {"job_number": 7, "job_name": "burn", "owner": "u", "task_number": 0, "slots": 1, "cpu": 30.0,
         "ru_wallclock": 60, "maxvmem": 100 * MIB, "category": "NONE", "pe_taskid": "NONE"}
    r.update(fields)
    return r


def test_category_requests_reads_the_hard_l_with_shortcuts_and_units():
    assert category_requests("-U a,b -q all.q -l h_rt=3600,mf=1G,arch=lx-amd64 -soft -l h_vmem=1G -pe smp 2") == {
        "h_rt": 3600.0, "mem_free": 1024.0**3}
    assert category_requests("-l h_vmem=512M") == {"h_vmem": 512 * MIB}
    assert category_requests("NONE") == {}


def test_category_requests_leaves_out_infinity_and_garbage():
    assert category_requests("-l h_vmem=INFINITY,h_rt=abc,mem_free=0") == {}


def test_cpu_efficiency_is_cpu_over_wallclock_times_slots():
    f = job_figures([record(slots=4, cpu=120.0, ru_wallclock=60)])
    assert f["cpu_efficiency"] == 0.5 and f["slot_seconds"] == 240


def test_an_array_job_sums_its_tasks_and_weighs_its_largest_run():
    rs = [record(task_number=1, cpu=10.0, ru_wallclock=20, maxvmem=50 * MIB, category="-l h_vmem=200M,h_rt=100"),
          record(task_number=2, cpu=30.0, ru_wallclock=40, maxvmem=150 * MIB, category="-l h_vmem=200M,h_rt=100")]
    f = job_figures(rs)
    assert f["tasks"] == [1, 2] and f["cpu"] == 40.0 and f["cpu_efficiency"] == 40.0 / 60
    assert f["used"] == {"h_vmem": (200 * MIB, 0.75), "h_rt": (100.0, 0.4)}


def test_memory_requests_are_per_slot():
    f = job_figures([record(slots=2, maxvmem=100 * MIB, category="-l h_vmem=100M -pe smp 2")])
    assert f["used"]["h_vmem"] == (100 * MIB, 0.5)


def test_pe_task_records_add_cpu_not_slot_time():
    rs = [record(slots=2, cpu=10.0, ru_wallclock=10), record(slots=1, cpu=10.0, ru_wallclock=9, pe_taskid="1.node1")]
    assert job_figures(rs)["cpu_efficiency"] == 1.0


def test_a_job_that_never_ran_has_no_efficiency():
    out = format_efficiency([record(ru_wallclock=0, cpu=0.0)])
    assert "cpu_eff      -" in out


def test_the_block_of_a_job_and_the_total_of_several():
    out = format_efficiency([record(category="-l h_vmem=200M,h_rt=120"), record(job_number=8, cpu=60.0)])
    blocks = out.split("=" * 62 + "\n")[1:]
    assert len(blocks) == 3
    assert blocks[0] == (
        "jobnumber    7\n"
        "jobname      burn\n"
        "owner        u\n"
        "tasks        1\n"
        "slots        1\n"
        "cpu          30.000s\n"
        "ru_wallclock 60.000s\n"
        "cpu_eff      50.0%        cpu / (ru_wallclock x slots)\n"
        "maxvmem      100.000MB\n"
        "h_vmem       200.000MB per slot   peak 50.0% of the request\n"
        "h_rt         120s                 longest run 60.000s: 50.0% of the request\n")
    assert blocks[2] == (
        "total        2 jobs of u\n"
        "cpu          90.000s\n"
        "slot_time    120.000s\n"
        "cpu_eff      75.0%        cpu / (ru_wallclock x slots), all jobs\n"
        "h_vmem       highest 50.0% (job 7), lowest 50.0% (job 7), 1 job with the request\n"
        "h_rt         highest 50.0% (job 7), lowest 50.0% (job 7), 1 job with the request\n")


@given(st.lists(st.tuples(st.floats(0, 1e6), st.integers(0, 10**6), st.integers(1, 64)), min_size=1, max_size=8))
def test_the_total_efficiency_is_total_cpu_over_total_slot_time(runs):
    rs = [record(job_number=i + 1, cpu=c, ru_wallclock=w, slots=s) for i, (c, w, s) in enumerate(runs)]
    slot_time = sum(w * s for _, w, s in runs)
    figures = [job_figures([r]) for r in rs]
    assert sum(f["slot_seconds"] for f in figures) == slot_time
    out = format_efficiency(rs)
    if len(rs) > 1:
        expected = "-" if slot_time == 0 else f"{sum(c for c, _, _ in runs) / slot_time * 100:.1f}%"
        assert out.split("total", 1)[1].split("cpu_eff", 1)[1].split()[0] == expected
