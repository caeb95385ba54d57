"""Resource limits and usage (queue_conf(5) RESOURCE LIMITS, accounting(5)):
the pure rules of minisge.rules.limits and minisge.execd.usage."""

from __future__ import annotations

import os
import resource

from qmaster_harness import small_qmaster

from minisge.execd import usage
from minisge.rules import limits
from minisge.rules.limits import INF, Action

G = 1024 ** 3
M = 1024 ** 2


# ------------------------------------------------------------ which limits apply
def test_queue_limit_applies_without_a_request():
    assert limits.job_limits({"h_rt": "0:10:0", "h_vmem": "2G"}, {}) == {"h_rt": 600, "h_vmem": 2 * G}


def test_the_lower_of_queue_value_and_request_wins():
    got = limits.job_limits({"h_cpu": "100", "h_vmem": "1G"}, {"h_cpu": "0:0:30", "h_vmem": "4G"})
    assert got == {"h_cpu": 30, "h_vmem": G}


def test_a_request_limits_an_infinite_queue_value():
    assert limits.job_limits({"s_fsize": "INFINITY"}, {"s_fsize": "1M"}) == {"s_fsize": M}


def test_infinity_everywhere_is_no_limit():
    assert limits.job_limits({n: "INFINITY" for n in limits.LIMIT_NAMES}, {}) == {}


def test_requests_of_other_complexes_are_not_limits():
    assert limits.job_limits({}, {"arch": "lx-amd64", "slots": "2"}) == {}


# ------------------------------------------------------------ setrlimit pairs
def test_each_limit_is_its_rlimit_soft_and_hard():
    got = limits.rlimits({"s_cpu": 90, "h_cpu": 100, "s_fsize": 5 * M, "h_fsize": 10 * M, "h_core": 0,
                          "s_rss": 400 * M, "h_rss": 500 * M, "s_vmem": 900 * M, "h_vmem": G,
                          "s_data": 800 * M, "h_data": G, "s_stack": 16 * M, "h_stack": 64 * M})
    # as /proc/self/limits of such a job shows them on Grid Engine 8.1.9
    assert got == {"cpu": (90, 100), "fsize": (5 * M, 10 * M), "data": (800 * M, G), "stack": (16 * M, 64 * M),
                   "core": (0, 0), "vmem": (900 * M, G), "rss": (400 * M, 500 * M)}


def test_vmem_is_the_address_space_limit():
    assert limits.RLIMIT_OF["vmem"] == resource.RLIMIT_AS
    assert limits.RLIMIT_OF["fsize"] == resource.RLIMIT_FSIZE


def test_cpu_vmem_data_stack_are_multiplied_by_the_slots_on_the_host():
    got = limits.rlimits({"s_cpu": 90, "h_cpu": 100, "h_vmem": G, "h_data": G, "h_stack": 64 * M,
                          "h_fsize": 10 * M, "h_rss": 500 * M, "h_core": 0}, host_slots=2)
    assert got["cpu"] == (180, 200)
    assert got["vmem"] == (2 * G, 2 * G)
    assert got["data"] == (2 * G, 2 * G)
    assert got["stack"] == (128 * M, 128 * M)
    # file size, resident set and core size are per process: not multiplied
    assert got["fsize"] == (10 * M, 10 * M) and got["rss"] == (500 * M, 500 * M) and got["core"] == (0, 0)


def test_a_job_consumable_is_not_multiplied():
    got = limits.rlimits({"h_vmem": G}, host_slots=4, consumable_job={"h_vmem"})
    assert got["vmem"] == (G, G)


def test_soft_limit_above_hard_is_lowered_to_it():
    assert limits.rlimits({"s_fsize": 10 * M, "h_fsize": M})["fsize"] == (M, M)


def test_a_soft_limit_alone_leaves_the_hard_one_unlimited():
    assert limits.rlimits({"s_cpu": 3})["cpu"] == (3, INF)


def test_minimums_keep_a_job_startable():
    got = limits.rlimits({"h_cpu": 1, "h_vmem": 1024, "h_stack": 1, "h_fsize": 1})
    assert got["cpu"] == (2, 2)
    assert got["vmem"] == (10 * M, 10 * M)
    assert got["stack"] == (M, M)
    assert got["fsize"] == (15 * 1024, 15 * 1024)


def test_no_limits_set_nothing():
    assert limits.rlimits({}) == {}


def test_infinity_is_rlim_infinity():
    assert limits.as_rlim(INF) == resource.RLIM_INFINITY
    assert limits.as_rlim(100.0) == 100


# ------------------------------------------------------------ the execd's checks
def test_summed_limits_are_per_slot():
    assert limits.job_totals({"h_cpu": 10, "s_vmem": G, "h_rt": 5}, host_slots=3) == {"h_cpu": 30, "s_vmem": 3 * G}


def test_hard_cpu_exceeded_kills():
    assert limits.check_usage({"h_cpu": 1}, cpu=1.5, vmem=0) == Action("KILL", "h_cpu")


def test_hard_vmem_exceeded_kills():
    assert limits.check_usage({"h_vmem": 100 * M}, cpu=0, vmem=140 * M) == Action("KILL", "h_vmem")


def test_soft_limits_exceeded_send_sigxcpu():
    assert limits.check_usage({"s_cpu": 3, "h_cpu": 10}, cpu=4, vmem=0) == Action("XCPU", "s_cpu")
    assert limits.check_usage({"s_vmem": 100 * M}, cpu=0, vmem=101 * M) == Action("XCPU", "s_vmem")


def test_hard_limit_before_soft():
    assert limits.check_usage({"s_cpu": 1, "h_vmem": M}, cpu=5, vmem=2 * M) == Action("KILL", "h_vmem")


def test_within_limits_nothing_happens():
    assert limits.check_usage({"h_cpu": 10, "h_vmem": G}, cpu=10, vmem=G) is None
    assert limits.check_usage({}, cpu=1e9, vmem=1e15) is None


def test_hard_wallclock_kills():
    assert limits.wallclock_action({"h_rt": 5}, 5.2, None) == Action("KILL", "h_rt")


def test_soft_wallclock_sends_sigusr1_and_repeats_it_every_90s():
    lim = {"s_rt": 5}
    assert limits.wallclock_action(lim, 4.9, None) is None
    assert limits.wallclock_action(lim, 5.1, None) == Action("USR1", "s_rt")
    assert limits.wallclock_action(lim, 60, 5.1) is None
    assert limits.wallclock_action(lim, 95.2, 5.1) == Action("USR1", "s_rt")


def test_after_an_s_rt_warning_h_rt_still_kills_on_time():
    # queue_conf(5): h_rt aborts the job when exceeded (8.1.9 was seen to
    # wait out its 90 s signal repeat first; we follow the page)
    lim = {"s_rt": 3, "h_rt": 8}
    assert limits.wallclock_action(lim, 3.2, None) == Action("USR1", "s_rt")
    assert limits.wallclock_action(lim, 7.9, 3.2) is None
    assert limits.wallclock_action(lim, 8.1, 3.2) == Action("KILL", "h_rt")


def test_s_rt_aborts_the_job_when_the_notify_time_has_passed_after_the_warning():
    # queue_conf(5): "first warned via SIGUSR1 ... finally aborted after the
    # notification time defined in ... notify"
    lim = {"s_rt": 5, limits.S_RT_NOTIFY: 10}
    assert limits.wallclock_action(lim, 5.1, None) == Action("USR1", "s_rt")
    assert limits.wallclock_action(lim, 14.9, 5.1) is None
    assert limits.wallclock_action(lim, 15.2, 5.1) == Action("KILL", "s_rt")
    # never warned yet (e.g. the execd was down): the warning comes first
    assert limits.wallclock_action(lim, 20, None) == Action("USR1", "s_rt")


# ------------------------------------------------------------ usage from /proc
STAT = ("4242 (my (odd) job) S 4200 4242 4100 0 -1 4194560 300 0 0 0 250 50 0 0 20 0 1 0 "
        "123456 104857600 2000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")


def test_parse_stat_reads_session_cpu_and_vsize():
    pid, session, start, cpu, vsize = usage.parse_stat(STAT)
    assert (pid, session, start, vsize) == (4242, 4100, 123456, 104857600)
    assert cpu == (250 + 50) / usage.CLK_TCK


def test_parse_stat_of_garbage_is_none():
    assert usage.parse_stat("nonsense") is None


def test_io_is_rchar_plus_wchar():
    text = "rchar: 1000\nwchar: 24\nsyscr: 5\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
    assert usage.parse_io(text) == 1024


def proc(pid, cpu, vsize, io=0, start=1):
    return usage.Proc(pid, 1, start, cpu, vsize, io)


def test_usage_sums_live_processes_and_keeps_the_peak():
    u = usage.JobUsage()
    u.sample([proc(10, 1.0, 100 * M), proc(11, 0.5, 50 * M)])
    assert u.cpu == 1.5 and u.vmem == 150 * M and u.maxvmem == 150 * M
    u.sample([proc(10, 2.0, 20 * M)])  # 11 ended: its CPU stays counted
    assert u.cpu == 2.5 and u.vmem == 20 * M and u.maxvmem == 150 * M


def test_mem_is_cpu_time_times_mean_vsize_in_gb_seconds():
    u = usage.JobUsage()
    u.sample([proc(10, 1.0, G)])  # first sample: from 0 to 1 GB over 1 s of CPU
    assert u.mem == 0.5
    u.sample([proc(10, 3.0, G)])  # 2 more CPU seconds at 1 GB
    assert u.mem == 2.5


def test_a_sleeping_job_accumulates_no_mem():
    u = usage.JobUsage()
    for _ in range(5):
        u.sample([proc(10, 0.0, G)])
    assert u.mem == 0 and u.maxvmem == G


def test_io_adds_the_growth_of_every_process():
    u = usage.JobUsage()
    u.sample([proc(10, 0, 0, io=1000), proc(11, 0, 0, io=500)])
    u.sample([proc(10, 0, 0, io=1500), proc(12, 0, 0, io=100)])
    assert u.iochars == 2100


def test_a_reused_pid_is_another_process():
    u = usage.JobUsage()
    u.sample([proc(10, 5.0, 0, start=1)])
    u.sample([proc(10, 1.0, 0, start=2)])
    assert u.cpu == 6.0


def test_accounting_fields_in_accounting_units():
    u = usage.JobUsage()
    u.sample([proc(10, 2.0, G, io=G // 2)])
    f = u.fields()
    assert f["mem"] == "1.000000" and f["io"] == "0.500000" and f["maxvmem"] == f"{float(G):.6f}"
    assert f["iow"] == "0.000000" and f["cpu_pdc"] == "2.000000"


def test_online_usage_in_qstats_units():
    u = usage.JobUsage()
    u.sample([proc(10, 2.0, G, io=G // 2)])
    u.sample([proc(10, 4.0, G // 2, io=G)])
    assert u.online() == {"cpu": 4.0, "mem": 1.0 + 1.5, "io": 1.0, "vmem": float(G // 2), "maxvmem": float(G)}


def test_read_processes_finds_the_shepherds_session_but_not_the_shepherd(tmp_path):
    for pid, session in ((100, 100), (101, 100), (102, 999)):
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "stat").write_text(f"{pid} (x) S 1 {pid} {session} 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 77 4096 1 0\n")
        (d / "io").write_text("rchar: 7\nwchar: 3\n")
    (tmp_path / "self").mkdir()
    got = usage.read_processes({100}, proc=str(tmp_path))
    assert [p.pid for p in got[100]] == [101]
    assert got[100][0].iochars == 10 and got[100][0].vsize == 4096


# ------------------------------------------------------------ what reaches the execd
def test_start_message_carries_the_lower_limits_and_the_slots_on_the_host(mem_tmp_path):
    from minisge.cell import Cell
    from minisge.daemon.cell_init import init_cell
    from minisge.qmaster.job import RUNNING, Grant, Task
    from minisge.qmaster.qmaster import Qmaster

    cell = Cell(str(mem_tmp_path / "root"))
    init_cell(cell, "h1", slots=4, env={})
    qm = Qmaster(cell, "h1")
    qm.load()
    qm.config.cell_owner_only = False
    req = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp",
           "hard_resources": {"h_cpu": "0:1:0", "s_vmem": "1G", "arch": "lx-amd64"}, "hold": True}
    job = qm.jobs[qm.submit(req, 0, 0)["job_id"]]
    task = Task(task_id=1, state=RUNNING, start_time=0, granted=[Grant("all.q", "h1", 2)], granted_pe="smp")
    msg = qm.config.start_message(job, task, "/tmp/x")
    assert msg["limits"] == {"h_cpu": 60, "s_vmem": G}
    assert msg["host_slots"] == 2 and msg["consumable_job"] == []
    assert msg["dispatched"] == task.start_time  # the run's identity, echoed by its end report


def test_start_message_follows_qalter_a_replaced_queue_and_the_local_configuration(mem_tmp_path):
    """The start message's configured part is kept from one task to the next
    (ConfigState.start_facts); each thing it derives from changes it."""
    import re

    from minisge.formats import queue_conf
    from minisge.qmaster.job import RUNNING, Grant, Task

    qm = small_qmaster(mem_tmp_path / "root", slots=4)
    req = {"job_name": "x", "binary": True, "command": "/bin/true", "args": [], "cwd": "/tmp",
           "array": [1, 10, 1], "hard_resources": {"h_cpu": "0:1:0"}, "hold": True}
    job = qm.jobs[qm.submit(req, 0, 0)["job_id"]]

    def start(task_id: int) -> dict:
        task = Task(task_id=task_id, state=RUNNING, start_time=task_id, granted=[Grant("all.q", "h1", 1)])
        return qm.config.start_message(job, task, "/tmp/x")

    first = start(1)
    assert first["limits"] == {"h_cpu": 60} and first["task_id"] == 1 and first["dispatched"] == 1
    again = start(2)
    assert again["task_id"] == 2 and again["dispatched"] == 2 and again["limits"] == {"h_cpu": 60}
    # qalter -l gives the job a new hard resource list (job_modify)
    job.own_spec()
    job.spec["hard_resources"] = {"h_cpu": "0:2:0"}
    assert start(3)["limits"] == {"h_cpu": 120}
    # qconf -mq replaces the queue (the models are immutable)
    text = queue_conf.write(qm.config.cqueues["all.q"])
    text = re.sub(r"(?m)^h_cpu +\S+$", "h_cpu                 0:0:30", text)
    text = re.sub(r"(?m)^tmpdir +\S+$", "tmpdir                /var/tmp", text)
    qm.config.cqueues["all.q"] = queue_conf.parse(text)
    msg = start(4)
    assert msg["limits"] == {"h_cpu": 30} and msg["tmpdir"] == "/var/tmp"
    # the host's local configuration (qconf -mconf h1) names another mailer
    default = msg["mailer"]
    local = qm.config.local_conf_path("h1")
    os.makedirs(os.path.dirname(local), exist_ok=True)
    with open(local, "w") as f:
        f.write("mailer /usr/bin/mailx\n")
    assert start(5)["mailer"] == "/usr/bin/mailx"
    os.unlink(local)
    assert default != "/usr/bin/mailx" and start(6)["mailer"] == default
