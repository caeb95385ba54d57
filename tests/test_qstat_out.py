"""qstat output against the real Grid Engine 8.1.9 (tests/golden/).

Each golden test rebuilds, by hand, the dicts the qmaster would send for the
state the golden file shows, and asserts the output is byte-identical.
Files named ``*.pe_array*``, ``*.long_name*`` etc. were captured from the
real Grid Engine on this machine (queue ho.q with 6 slots; jobs 36-40:
``-pe smp 2``, a long ``-N``, ``-t 1-8`` with task 1 running, ``-o`` to a
missing directory, ``-h -t 1-10:3``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from minisge.output import job_detail_out as jd
from minisge.output import qstat_out as q

GOLDEN = Path(__file__).parent / "golden"

T08 = 1795308728  # 11/22/2026 00:52:08 UTC
T09 = 1795308729
T29 = 1795308749
T3_33 = 1795316433  # 11/22/2026 03:00:33
T3_37 = 1795316437


@pytest.fixture(autouse=True)
def utc():
    """Grid Engine prints local time; the golden files were taken in UTC."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


def job(number, name, prio, state, submitted, started=None, queue=None, **extra):
    d = {"job_number": number, "name": name, "owner": "sgetest", "prio": prio,
         "state": state, "submission_time": submitted, "slots": 1}
    if queue:
        d.update(start_time=started, queue=queue)
    d.update(extra)
    return d


def first_jobs(extra=None):
    """Jobs 2-6 of the golden session: run1, run2 running; pend1, pend2, held."""
    extra = extra or {}
    jobs = [
        job(2, "run1", 0.75, "r", T08 - 3, T08, "all.q@vm"),
        job(3, "run2", 0.75, "r", T08, T08, "all.q@vm"),
        job(4, "pend1", 0.25, "qw", T09),
        job(5, "pend2", 0.25, "qw", T09),
        job(6, "held", 0.0, "hqw", T09),
    ]
    for j in jobs:
        j.update(extra.get(j["job_number"], {}))
    return jobs


def array_jobs(held5=False, held9=True):
    return [
        job(7, "arr", 0.0, "qw", T29, array=True,
            tasks=[{"task_number": i, "state": "qw"} for i in range(1, 6)]),
        job(8, "arr3", 0.0, "qw", T29, array=True,
            tasks=[{"ranges": [(1, 3, 1)], "state": "qw"}]),
        job(9, "after_run1", 0.0, "hqw" if held9 else "qw", T29),
    ]


ALL_Q = {"name": "all.q@vm", "qtype": "BIP", "resv": 0, "used": 2, "total": 2,
         "load_avg": 0.17334, "arch": "lx-amd64", "states": ""}


# ---------------------------------------------------------------- listings

def test_default_listing_shows_running_then_pending_jobs():
    assert q.format_job_list(first_jobs()) == golden("qstat")


def test_no_jobs_prints_nothing_at_all():
    assert q.format_job_list([]) == golden("qstat.idle") == ""


def test_pending_array_tasks_collapse_into_a_range():
    assert q.format_job_list(first_jobs() + array_jobs()) == golden(
        "qstat.with_array_and_hold_jid")


def test_user_hold_shows_h_and_release_removes_it():
    jobs = first_jobs({5: {"state": "hqw"}}) + array_jobs()
    assert q.format_job_list(jobs) == golden("qstat.after_qhold")


def test_listing_after_qdel_and_qalter_rename():
    jobs = first_jobs({5: {"name": "renamed"}, 6: {"state": "qw"}})
    jobs = [j for j in jobs if j["job_number"] not in (2, 4)] + array_jobs(held9=False)
    assert q.format_job_list(jobs) == golden("qstat.after_qdel")


@pytest.mark.parametrize("name,keep", [("qstat_-s_p", {4, 5, 6}), ("qstat_-s_r", {2, 3}),
                                       ("qstat_-s_h", {6})])
def test_state_selection_is_done_by_the_caller(name, keep):
    jobs = [j for j in first_jobs() if j["job_number"] in keep]
    assert q.format_job_list(jobs) == golden(name)


def test_g_d_prints_one_line_per_pending_task():
    jobs = first_jobs() + array_jobs()
    assert q.format_job_list(jobs, expand_arrays=True) == golden("qstat_-g_d.with_array")


def test_t_shows_master_column_and_task_headers():
    assert q.format_job_list(first_jobs(), tasks=True) == golden("qstat_-t")


def test_g_t_shows_master_column():
    assert q.format_job_list(first_jobs(), group_tasks=True) == golden("qstat_-g_t")


def test_r_adds_requested_resources_under_each_job():
    assert q.format_job_list(first_jobs(), resources=True) == golden("qstat_-r")


def test_ext_shows_tickets_project_department_and_usage():
    ext = {"ntckts": 0.5, "department": "defaultdepartment"}
    jobs = first_jobs({2: ext, 3: dict(ext, cpu=0, mem=0.0, io=0.00003), 4: ext, 5: ext,
                       6: {"department": "defaultdepartment"}})
    assert q.format_job_list(jobs, ext=True) == golden("qstat_-ext")


def test_pri_shows_normalized_urgency_priority_and_tickets():
    pri = {"nurg": 1.0, "nppri": 0.5, "ntckts": 0.5}
    low = {"nurg": 0.0, "nppri": 0.5, "ntckts": 0.5}
    jobs = first_jobs({2: pri, 3: pri, 4: low, 5: low})
    assert q.format_job_list(jobs, pri=True) == golden("qstat_-pri")


def test_urg_shows_urgency_contributions():
    run = {"nurg": 1.0, "urg": 1005, "rrcontr": 1000, "wtcontr": 5}
    pend = {"urg": 1004, "rrcontr": 1000, "wtcontr": 4}
    jobs = first_jobs({2: run, 3: run, 4: pend, 5: pend})
    assert q.format_job_list(jobs, urg=True) == golden("qstat_-urg")


def pe_array_jobs(ext=False):
    """Jobs 36-40 on ho.q (captured from the real Grid Engine)."""
    e = (lambda **kw: kw) if ext else (lambda **kw: {})
    dep = {"department": "defaultdepartment"}
    return [
        job(36, "ho_pe", 0.75, "r", T3_33 - 1, T3_37, "ho.q@vm", slots=2,
            pe="smp", pe_range="2", granted_pe="smp", hard_queues=["ho.q"],
            nurg=1.0, nppri=0.5, ntckts=0.5, urg=2018, rrcontr=2000, wtcontr=18,
            **dep, **e(cpu=0, mem=0.0, io=0.00003)),
        job(37, "ho_memjob_with_a_long_name", 0.25014, "r", T3_33 - 1, T3_37, "ho.q@vm",
            hard_queues=["ho.q"], nurg=0.00028, nppri=0.5, ntckts=0.5, urg=1018,
            rrcontr=1000, wtcontr=18, **dep, **e(cpu=0, mem=0.0043, io=0.00007)),
        job(38, "ho_arr", 0.25, "qw", T3_33, array=True, hard_queues=["ho.q"],
            nppri=0.5, ntckts=0.5, urg=1018, rrcontr=1000, wtcontr=18, **dep,
            tasks=[{"task_number": 1, "state": "r", "queue": "ho.q@vm",
                    "start_time": T3_37, **e(cpu=0, mem=0.0, io=0.00003)}]
            + [{"task_number": i, "state": "qw"} for i in range(2, 9)]),
        job(39, "ho_err", 0.25, "qw", T3_33, hard_queues=["ho.q"], nppri=0.5,
            ntckts=0.5, urg=1018, rrcontr=1000, wtcontr=18, **dep),
        job(40, "ho_harr", 0.0, "hqw", T3_33, array=True, hard_queues=["ho.q"], **dep,
            tasks=[{"ranges": [(1, 10, 3)], "state": "hqw"}]),
    ]


HO_Q = {"name": "ho.q@vm", "qtype": "BIP", "resv": 0, "used": 4, "total": 6,
        "load_avg": 2.046875, "arch": "lx-amd64", "states": ""}


def test_long_job_names_are_cut_to_ten_columns_and_running_tasks_get_own_line():
    assert q.format_job_list(pe_array_jobs()) == golden("qstat.pe_array_long_name")


def test_r_shows_pe_request_grant_and_queue_request():
    assert q.format_job_list(pe_array_jobs(), resources=True) == golden("qstat_-r.pe_array")


def test_f_r_shows_pe_and_queue_requests_under_queues():
    out = q.format_full([HO_Q], pe_array_jobs(), resources=True)
    assert out == golden("qstat_-f_-r.pe_array")


def test_ext_with_running_array_task_usage():
    assert q.format_job_list(pe_array_jobs(ext=True), ext=True) == golden("qstat_-ext.pe_array")


def test_pri_with_pe_and_array_jobs():
    assert q.format_job_list(pe_array_jobs(), pri=True) == golden("qstat_-pri.pe_array")


def test_urg_with_pe_and_array_jobs():
    assert q.format_job_list(pe_array_jobs(), urg=True) == golden("qstat_-urg.pe_array")


def test_f_lists_pe_job_slots_and_array_task_under_its_queue():
    assert q.format_full([HO_Q], pe_array_jobs()) == golden("qstat_-f.pe_array_long_name")


def test_g_t_prints_a_slave_line_per_pe_slot():
    out = q.format_job_list(pe_array_jobs(), group_tasks=True)
    lines = out.splitlines()
    assert lines[2].startswith("     36 0.75000 ho_pe ") and "MASTER" in lines[2]
    assert lines[3] == " " * 66 + f"{'ho.q@vm':<30} SLAVE         "


def test_job_ids_wider_than_seven_digits_widen_the_column():
    out = q.format_job_list([job(12345678, "big", 0.0, "qw", T09),
                             job(1000000, "million", 0.0, "qw", T09)])
    assert out.splitlines()[2].startswith("1000000 0.00000 million ")
    assert out.splitlines()[3].startswith("12345678 0.00000 big ")


def test_long_queue_names_are_cut_to_the_queue_width():
    name = "averyveryverylongqueuename.q@node1"
    line = q.format_job_list([job(1, "x", 0.5, "r", T08, T08, name)]).splitlines()[2]
    assert line[66:97] == name[:30] + " "


def test_sge_long_qnames_widens_queue_column_and_rule():
    name = "averyveryverylongqueuename.q@node1"
    out = q.format_job_list([job(1, "x", 0.5, "r", T08, T08, name)], queue_width=len(name))
    head, rule, line = out.splitlines()
    assert len(rule) == 93 + len(name) - 10
    assert name + " " in line


def test_error_state_job():
    line = q.format_job_list([job(5, "bad", 0.5, "Eqw", T09)]).splitlines()[2]
    assert line == "      5 0.50000 bad        sgetest      Eqw   11/22/2026 00:52:09" + \
        " " * 36 + "1        "


def test_pending_tasks_with_different_states_get_one_line_each():
    j = job(7, "arr", 0.0, "qw", T29, array=True,
            tasks=[{"task_number": 1, "state": "hqw"}, {"task_number": 2, "state": "qw"},
                   {"task_number": 3, "state": "hqw"}, {"task_number": 4, "state": "qw"}])
    lines = q.format_job_list([j]).splitlines()
    assert [ln.split()[-1] for ln in lines[2:]] == ["1,3", "2,4"]
    assert [ln.split()[4] for ln in lines[2:]] == ["hqw", "qw"]


def test_pending_jobs_are_sorted_by_priority_then_job_number():
    jobs = [job(3, "c", 0.1, "qw", T09), job(1, "a", 0.1, "qw", T09), job(2, "b", 0.9, "qw", T09)]
    out = q.format_job_list(jobs)
    assert [ln.split()[0] for ln in out.splitlines()[2:]] == ["2", "1", "3"]


def test_running_jobs_are_listed_queue_by_queue():
    jobs = [job(1, "a", 0.5, "r", T08, T08, "b.q@n1"), job(2, "b", 0.5, "r", T08, T08, "a.q@n1")]
    out = q.format_job_list(jobs)
    assert [ln.split()[0] for ln in out.splitlines()[2:]] == ["2", "1"]


@pytest.mark.parametrize("ids,text", [
    ([1, 2, 3, 4, 5], "1-5:1"), ([2, 3, 4, 5, 6, 7, 8], "2-8:1"), ([1, 4, 7, 10], "1-10:3"),
    ([4], "4"), ([4, 5], "4,5"), ([1, 3], "1,3"), ([1, 2, 3, 7, 8, 9], "1-3:1,7-9:1"),
])
def test_task_id_ranges(ids, text):
    assert q.format_task_ranges(q.compress_task_ids(ids)) == text


# ---------------------------------------------------------------- qstat -f

def test_f_lists_queue_instances_with_their_jobs_and_pending_banner():
    assert q.format_full([ALL_Q], first_jobs()) == golden("qstat_-f")


def test_f_idle_cluster_prints_queue_lines_only():
    assert q.format_full([dict(ALL_Q, used=0)], []) == golden("qstat_-f.idle")


def test_f_disabled_queue_shows_d_and_pending_array():
    jobs = [job(18, "true", 0.0, "qw", 1795308884, array=True,
                tasks=[{"ranges": [(1, 5, 1)], "state": "qw"}])]
    queue = dict(ALL_Q, used=0, load_avg=0.13, states="d")
    assert q.format_full([queue], jobs) == golden("qstat_-f.disabled")


def test_f_r_adds_resources_under_queued_and_pending_jobs():
    assert q.format_full([ALL_Q], first_jobs(), resources=True) == golden("qstat_-f_-r")


def test_capital_f_prints_queue_resources_after_the_queue_line():
    text = golden("qstat_-F")
    resources = []
    for line in text.splitlines():
        if line.startswith("\t"):
            dom, rest = line[1:].split(":", 1)
            name, value = rest.split("=", 1)
            resources.append((dom, name, value))
    queue = dict(ALL_Q, resources=resources)
    assert q.format_full([queue], first_jobs()) == text


def test_every_queue_instance_gets_its_own_rule_line():
    queues = [dict(ALL_Q, used=0), dict(ALL_Q, name="b.q@vm", used=0, load_avg=None, arch=None,
                                        states="au")]
    lines = q.format_full(queues, []).splitlines()
    assert lines[1] == lines[3] == "-" * 81
    assert lines[4] == f"{'b.q@vm':<30} BIP   0/0/2          -NA-     -NA-          au"


# ---------------------------------------------------------------- qstat -g c

def test_g_c_cluster_queue_summary():
    cq = {"name": "all.q", "load": 0.09, "used": 2, "resv": 0, "available": 0, "total": 2}
    assert q.format_cluster_summary([cq]) == golden("qstat_-g_c")
    assert q.format_cluster_summary([dict(cq, used=0, available=2)]) == golden("qstat_-g_c.idle")


def test_g_c_queue_without_load_shows_na():
    cqs = [{"name": "all.q", "load": 1.02, "available": 2, "total": 2},
           {"name": "hc_q", "load": None},
           {"name": "ho.q", "load": 1.02, "used": 4, "available": 2, "total": 6},
           {"name": "hq_sub.q", "load": 1.02, "available": 2, "total": 2}]
    assert q.format_cluster_summary(cqs) == golden("qstat_-g_c.four_queues")


# ---------------------------------------------------------------- XML

def test_xml_running_and_pending_jobs():
    assert q.format_xml(first_jobs()) == golden("qstat_-xml")


def test_xml_idle():
    assert q.format_xml([]) == golden("qstat_-xml.idle")


def test_xml_array_tasks_element():
    assert q.format_xml(first_jobs() + array_jobs()) == golden("qstat_-xml.with_array_and_hold_jid")


def test_f_xml_nests_jobs_in_queue_list():
    assert q.format_xml(first_jobs(), [ALL_Q], full=True) == golden("qstat_-f_-xml")
    assert q.format_xml([], [dict(ALL_Q, used=0)], full=True) == golden("qstat_-f_-xml.idle")


def test_xml_pe_array_long_name():
    assert q.format_xml(pe_array_jobs()) == golden("qstat_-xml.pe_array")
    assert q.format_xml(pe_array_jobs(), [HO_Q], full=True) == golden("qstat_-f_-xml.pe_array")


def test_xml_g_t_has_master_element_per_slot():
    assert q.format_xml(pe_array_jobs(), group_tasks=True) == golden("qstat_-g_t_-xml.pe_array")


def test_xml_ext_has_empty_project_and_usage():
    assert q.format_xml(pe_array_jobs(ext=True), ext=True) == golden("qstat_-ext_-xml.pe_array")


def test_xml_escapes_markup_in_names():
    out = q.format_xml([job(1, "a<b&c", 0.0, "qw", T09)])
    assert "<JB_name>a&lt;b&amp;c</JB_name>" in out


# ---------------------------------------------------------------- qstat -j

DROPPED = ['queue instance "all.q@vm" dropped because it is full',
           "All queues dropped because of overload or full"]


def detail(number, name, submitted, **extra):
    d = {"job_number": number, "exec_file": f"job_scripts/{number}",
         "submission_time": submitted, "owner": "sgetest", "uid": 1001, "group": "sgetest",
         "gid": 1001, "sge_o_home": "/home/sgetest", "sge_o_log_name": "sgetest",
         "sge_o_path": "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games",
         "sge_o_shell": "/bin/bash", "sge_o_workdir": "/home/sgetest", "sge_o_host": "vm",
         "account": "sge", "mail_list": ["sgetest@vm"], "notify": False, "job_name": name,
         "jobshare": 0, "env_list": [("TERM", None)], "binding": "NONE",
         "job_type": ["binary"]}
    d.update(extra)
    return d


def test_j_pending_job():
    d = detail(4, "pend1", T09, job_args=["5"], script_file="/bin/sleep")
    assert jd.format_job_detail(d, DROPPED) == golden("qstat_-j_JOBID.pending")


def test_j_running_job_shows_usage_and_binding_per_task():
    d = detail(2, "run1", T08 - 3, job_args=["600"], script_file="/bin/sleep",
               tasks=[{"task_number": 1, "running": True, "cpu": 0, "mem": 0.0, "io": 0.0}])
    assert jd.format_job_detail(d, DROPPED) == golden("qstat_-j_JOBID.running")


def test_j_held_job_adds_hold_reason():
    d = detail(6, "held", T09, script_file="/bin/true")
    out = jd.format_job_detail(d, DROPPED + ["Job is in hold state"])
    assert out == golden("qstat_-j_JOBID.held")


def test_j_array_job_shows_task_range():
    d = detail(7, "arr", T29, script_file="/bin/true", array=(1, 5, 1))
    assert jd.format_job_detail(d, DROPPED) == golden("qstat_-j_JOBID.array")


def test_j_hold_jid_shows_predecessors():
    d = detail(9, "after_run1", T29, script_file="/bin/true",
               jid_predecessor_request=["2"], jid_predecessor_list=[2])
    assert jd.format_job_detail(d, DROPPED) == golden("qstat_-j_JOBID.hold_jid")


def test_j_pe_job_shows_parallel_environment_range():
    d = detail(21, "pe4", 1795308886, script_file="/bin/true", pe="smp", pe_range="4")
    info = [DROPPED[0], 'cannot run in PE "smp" because it only offers 0 slots']
    assert jd.format_job_detail(d, info) == golden("qstat_-j_JOBID.pe_smp_4_unschedulable")


OVERLOAD = [f'queue instance "{qi}" dropped because it is overloaded: np_load_avg=1.885938 '
            "(= 1.023438 + 0.50 * 3.450000 with nproc=2) >= 1.75"
            for qi in ("all.q@vm", "hq_sub.q@vm", "ho.q@vm")] + [DROPPED[1]]


def test_j_running_pe_job_usage_with_vmem():
    d = detail(36, "ho_pe", T3_33 - 1, sge_o_workdir="/tmp", hard_queue_list=["ho.q"],
               job_args=["150"], script_file="/bin/sleep", pe="smp", pe_range="2",
               tasks=[{"task_number": 1, "running": True, "cpu": 0.0, "mem": 0.0,
                       "io": 0.00003, "vmem": 3.188 * 1024**2, "maxvmem": 3.188 * 1024**2}])
    assert jd.format_job_detail(d, OVERLOAD) == golden("qstat_-j_JOBID.pe_running_usage")


def test_j_long_name_and_args_with_commas_and_quotes():
    args = ["-c", '"x=bytearray(80*1024*1024); import time; x[::4096]=b\\"1\\"*len(x[::4096]);'
            ' time.sleep(150)"']
    d = detail(37, "ho_memjob_with_a_long_name", T3_33 - 1, sge_o_workdir="/tmp",
               hard_queue_list=["ho.q"], job_args=args, script_file="/usr/bin/python3",
               tasks=[{"task_number": 1, "running": True, "cpu": 0.4, "mem": 0.0043,
                       "io": 0.00007, "vmem": 89.867 * 1024**2,
                       "maxvmem": 89.867 * 1024**2}])
    assert jd.format_job_detail(d, OVERLOAD) == golden("qstat_-j_JOBID.long_name_vmem")


def test_j_stdout_path_list():
    d = detail(39, "ho_err", T3_33, sge_o_workdir="/tmp", hard_queue_list=["ho.q"],
               stdout_path_list=["/nonexistent_dir/out"], script_file="/bin/true")
    assert jd.format_job_detail(d, OVERLOAD) == golden("qstat_-j_JOBID.stdout_path")


def test_j_held_array_with_step():
    d = detail(40, "ho_harr", T3_33, sge_o_workdir="/tmp", hard_queue_list=["ho.q"],
               script_file="/bin/true", array=(1, 10, 3))
    out = jd.format_job_detail(d, OVERLOAD + ["Job is in hold state"])
    assert out == golden("qstat_-j_JOBID.held_array_step")


def test_j_error_reason_per_task():
    d = detail(5, "bad", T09, tasks=[{"task_number": 1, "messages": [
        "01/02/2024 10:11:12 [1000:4242]: exit_status of job start = 100"]}])
    assert ("error reason          1:      01/02/2024 10:11:12 [1000:4242]: "
            "exit_status of job start = 100\n") in jd.format_job_detail(d)


def test_j_several_jobs_each_get_global_and_own_messages():
    a = detail(4, "pend1", T09, job_args=["5"], script_file="/bin/sleep")
    b = detail(6, "held", T09, script_file="/bin/true")
    out = jd.format_job_details([a, b], DROPPED, {6: ["Job is in hold state"]})
    assert out == golden("qstat_-j_JOBID.pending") + golden("qstat_-j_JOBID.held")


def test_j_without_ids_summarizes_scheduler_reasons():
    out = jd.format_scheduling_summary(DROPPED, [("Jobs dropped because of hold state", [6])])
    assert out == golden("qstat_-j.all_own_jobs")


def test_j_without_ids_with_held_array_and_overload():
    out = jd.format_scheduling_summary(OVERLOAD, [("Jobs dropped because of hold state", [40])])
    assert out == golden("qstat_-j.held_array")


def test_j_summary_wraps_after_eight_ids():
    out = jd.format_scheduling_summary([], [("Jobs dropped because of hold state", range(1, 11))])
    assert out == ("Jobs dropped because of hold state\n"
                   "\t1,\t2,\t3,\t4,\t5,\t6,\t7,\t8,\n\t9,\t10\n")


def test_j_unknown_jobs_message():
    assert jd.format_unknown_jobs([999999]) == golden("qstat_-j.nonexistent_job.stderr")
    assert jd.format_unknown_jobs([999998, 999997]) == golden(
        "qstat_-j.two_nonexistent_jobs.stderr")


def test_memory_and_cpu_time_formats():
    assert q.format_memory(3.188 * 1024**2) == "3.188M"
    assert q.format_memory(512) == "512.000"
    assert q.format_memory(2 * 1024**4) == "2.000T"
    assert jd.format_cpu_time(3 * 86400 + 61) == "72:01:01"


def _capture(name: str) -> str:
    """A capture with the ``# command:`` header (tests/integration/golden.py)."""
    head, sep, text = golden(name).partition("# ----\n")
    assert sep, name
    return text


T_52 = 1795416924  # Mon Nov 23 06:55:24 2026


def test_j_shell_list_env_list_and_time_requests_in_seconds():
    # qsub -h -N d3rich -v FOO=bar,EMPTY -l h_rt=1:00:00,h_vmem=1G -soft -l s_rt=100 -hard
    # d3rich.sh, whose "#$ -S /bin/bash" gives the shell_list
    d = detail(52, "d3rich", T_52, uid=1003, gid=1003, sge_o_workdir="/tmp", script_file="/tmp/d3rich.sh",
               job_type=None, shell_list=[(None, "/bin/bash")],
               env_list=[("TERM", None), ("FOO", "bar"), ("EMPTY", None)],
               hard_resource_list=[("h_rt", "3600"), ("h_vmem", "1G")], soft_resource_list=[("s_rt", "100")])
    assert jd.format_job_detail(d) == _capture("qstat_-j_JOBID.shell_env_resources")


def test_j_shell_list_of_S_on_the_command_line():
    d = detail(53, "d3S", T_52, uid=1003, gid=1003, sge_o_workdir="/tmp", script_file="/tmp/d3rich.sh",
               job_type=None, shell_list=[(None, "/bin/sh")])
    assert jd.format_job_detail(d) == _capture("qstat_-j_JOBID.shell_S")


def test_j_shell_list_with_a_host():
    assert "shell_list:                 node1:/bin/csh,NONE:/bin/sh\n" in jd.format_job_detail(
        detail(1, "x", T_52, shell_list=[("node1", "/bin/csh"), (None, "/bin/sh")]))


def _peer_env(*extra):
    """The environment 8.1.9's qsub gave sgetest's jobs on the peer, from /tmp."""
    return [["__SGE_PREFIX__O_HOME", "/home/sgetest"], ["__SGE_PREFIX__O_LOGNAME", "sgetest"],
            ["__SGE_PREFIX__O_PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"],
            ["__SGE_PREFIX__O_SHELL", "/bin/bash"], ["__SGE_PREFIX__O_MAIL", "/var/mail/sgetest"],
            ["TERM", None], ["__SGE_PREFIX__O_HOST", "vm"], ["__SGE_PREFIX__O_WORKDIR", "/tmp"], *extra]


def test_j_xml_of_a_job_with_S_env_and_resources():
    d = detail(52, "d3rich", T_52, uid=1003, gid=1003, sge_o_workdir="/tmp", script_file="/tmp/d3rich.sh",
               job_type=None, shell_list=[(None, "/bin/bash")],
               xml={"hard_requests": [["h_rt", 3, "3600", 3600.0], ["h_vmem", 4, "1G", 1024.0**3]],
                    "soft_requests": [["s_rt", 3, "100", 100.0]],
                    "env": _peer_env(["FOO", "bar"], ["EMPTY", None]), "type": 0})
    assert jd.format_job_details_xml([d]) == _capture("qstat_-j_JOBID_-xml.shell_env_resources")


def test_j_xml_of_a_job_with_every_option():
    d = detail(308, "d3all", 1795418462, uid=1003, gid=1003, sge_o_workdir="/tmp", account="d3acct",
               merge=True, project="d3prj", notify=True, stdout_path_list=[(None, "/tmp/d3o")],
               hard_queue_list=["all.q"], soft_queue_list=["all.q"], job_args=["hello", "world"],
               script_file="/bin/echo", context=[("ctx", "1")], cwd="/tmp", stderr_path_list=[(None, "/tmp/d3e")],
               jid_predecessor_list=[144], jid_predecessor_request=["144"], execution_time=1893456000,
               reserve=True, priority=-10, master_hard_queue_list=["all.q"], pe="smp", array=(1, 3, 2),
               task_concurrency=2,
               xml={"hard_requests": [["h_rt", 3, "100", 100.0]], "env": _peer_env(["A", "1"]),
                    "mail_options": 1572864, "restart": 1, "pe_ranges": [[1, 2]], "type": 192,
                    "mail_list_given": True})  # -M: a "mail_list" element list (qsub's default one is unnamed)
    dropped = ['queue instance "all.q@vm" dropped because it is overloaded: np_load_avg=3.528564 '
               "(no load adjustment) >= 1.75", "All queues dropped because of overload or full"]
    out = jd.format_job_details_xml([d], dropped, {308: ["Job is in hold state"]})
    assert out == _capture("qstat_-j_JOBID_-xml.all_options")


def test_j_without_ids_lists_a_held_job_under_its_hold_and_a_waiting_one_under_dependencies():
    dropped = ['queue instance "all.q@vm" dropped because it is overloaded: np_load_avg=3.824463 '
               "(no load adjustment) >= 1.75", "All queues dropped because of overload or full"]
    out = jd.format_scheduling_summary(dropped, [("Jobs dropped because of hold state", [308]),
                                                ("Job dropped because of job dependencies", [314])])
    assert out == _capture("qstat_-j.hold_and_dependency")


T_315 = 1795419098  # Mon Nov 23 07:31:38 2026
T_315_START = 1795419453


def _job_315(**extra):
    """The peer's job 315 (qsub -t 1-2 -N d3usage -b y /bin/sleep 40; qalter -p 1000), both tasks
    running, task 2's usage reported, task 1's not yet."""
    vmem = 3112960.0
    usage2 = {"cpu": 0.0, "mem": 0.0, "io": 0.00003, "vmem": vmem, "maxvmem": vmem}
    return detail(315, "d3usage", T_315, uid=1003, gid=1003, priority=1000, job_args=["40"],
                  script_file="/bin/sleep", array=(1, 2, 1),
                  tasks=[{"task_number": 1, "running": True, "cpu": 0.0, "mem": 0.0, "io": 0.0},
                         {"task_number": 2, "running": True, **usage2}],
                  xml={"env": _peer_env()[:7] + [["__SGE_PREFIX__O_WORKDIR", "/home/sgetest"]], "type": 192,
                       "nurg": 0.136327,
                       "ja_tasks": [{"task_number": 1, "start_time": T_315_START, "usage": None, "ntix": 0.5},
                                    {"task_number": 2, "start_time": T_315_START, "usage": usage2, "ntix": 0.5}]},
                  **extra)


def test_j_labels_every_running_tasks_usage_and_binding():
    out = jd.format_job_detail(_job_315(), ['queue instance "all.q@vm" dropped because it is full'])
    assert out == _capture("qstat_-j_JOBID.array_usage")


def test_j_xml_shows_the_running_tasks_and_their_reported_usage():
    out = jd.format_job_details_xml([_job_315()], ['queue instance "all.q@vm" dropped because it is full'])
    assert out == _capture("qstat_-j_JOBID_-xml.array_usage")


def test_ext_shows_na_until_a_running_tasks_usage_is_reported():
    # the peer's job 315 (tests/golden/qstat_-ext.array_usage, whose other lines are other jobs')
    ext = {"ntckts": 0.5, "department": "defaultdepartment"}
    run = dict(ext, queue="all.q@vm", start_time=T_315_START, state="r")
    jobs = [dict(job(315, "d3usage", 0.31816, "r", T_315), array=True, **ext,
                 tasks=[dict(run, task_number=1), dict(run, task_number=2, cpu=0.0, mem=0.0, io=0.00003)])]
    want = _capture("qstat_-ext.array_usage").splitlines(keepends=True)
    assert q.format_job_list(jobs, ext=True).splitlines(keepends=True) == want[:4]
