"""Resource limits and usage through the real daemon (queue_conf(5) RESOURCE
LIMITS, accounting(5)): real jobs run by a test user under the limits of the
queue and of their ``-l`` requests; what they see (/proc/self/limits), what
happens when they exceed them, and the usage in their accounting records.

The expectations are those of Grid Engine 8.1.9 on the peer (see the report
of the limits issue): e.g. /proc/self/limits of a 2-slot job shows cpu, data,
stack and address space doubled; an execd kill for h_cpu/h_vmem is failed 37
with exit status 137."""

from __future__ import annotations

import os
import re

import pytest
from cellutil import Cell, script, set_queue, user_cell_fixtures

pytestmark = pytest.mark.root

USER = "msgeuser1"
user, cell = user_cell_fixtures(USER)
M = 1024 * 1024
LIMITS_LINE = re.compile(r"^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)", re.M)

# accounting(5) field positions (0-based)
FAILED, EXIT_STATUS, RU_UTIME, RU_STIME, RU_MAXRSS, CPU, MEM, IO, IOW, MAXVMEM = 11, 12, 14, 15, 16, 36, 37, 38, 40, 42


def submit(c: Cell, *args: str, name: str = "t") -> int:
    return c.submit("-N", name, "-o", c.work, "-j", "y", *args, user=USER)


def output(c: Cell, job: int, name: str = "t") -> str:
    with open(os.path.join(c.work, f"{name}.o{job}")) as f:
        return f.read()


def proc_limits(text: str) -> dict[str, tuple[str, str]]:
    return {m.group(1): (m.group(2), m.group(3)) for m in LIMITS_LINE.finditer(text)}


def finished(c: Cell, job: int) -> list[str]:
    return c.wait_records(job)[0]


def test_job_runs_under_the_queue_limits_and_the_lower_requests(cell):
    for attr, value in (("h_vmem", "1G"), ("s_fsize", "5M"), ("h_fsize", "10M"), ("h_cpu", "0:10:0"),
                        ("h_core", "0"), ("h_rss", "500M")):
        set_queue(cell, attr, value)
    job = submit(cell, "-l", "h_cpu=100,s_cpu=90,s_vmem=900M,h_data=1G,s_data=800M,h_stack=64M,s_stack=16M",
                 "-b", "y", "/bin/cat", "/proc/self/limits")
    rec = finished(cell, job)
    assert rec[FAILED] == "0" and rec[EXIT_STATUS] == "0"
    got = proc_limits(output(cell, job))
    assert got["Max cpu time"] == ("90", "100")  # the request is lower than the queue's 10 minutes
    assert got["Max file size"] == (str(5 * M), str(10 * M))
    assert got["Max data size"] == (str(800 * M), str(1024 * M))
    assert got["Max stack size"] == (str(16 * M), str(64 * M))
    assert got["Max core file size"] == ("0", "0")
    assert got["Max resident set"] == (str(500 * M), str(500 * M))
    assert got["Max address space"] == (str(900 * M), str(1024 * M))


def test_a_parallel_job_gets_per_slot_limits_times_its_slots(cell):
    assert "job_is_first_task  TRUE" in cell.run("qconf", "-sp", "smp").out  # 2 slots on the host
    job = submit(cell, "-pe", "smp", "2", "-l", "h_cpu=100,s_cpu=90,h_vmem=1G,h_fsize=10M,h_rss=500M",
                 "-b", "y", "/bin/cat", "/proc/self/limits")
    rec = finished(cell, job)
    assert rec[FAILED] == "0"
    got = proc_limits(output(cell, job))
    assert got["Max cpu time"] == ("180", "200")
    assert got["Max address space"] == (str(2048 * M), str(2048 * M))
    assert got["Max file size"] == (str(10 * M), str(10 * M))  # per process: not multiplied
    assert got["Max resident set"] == (str(500 * M), str(500 * M))


def test_a_request_above_the_queue_limit_does_not_fit_the_queue(cell):
    set_queue(cell, "h_vmem", "100M")
    job = submit(cell, "-l", "h_vmem=200M", "-b", "y", "/bin/true")
    cell.wait_for(lambda: "h_vmem" in cell.run("qstat", "-j", str(job)).out, what="a scheduling reason")
    assert cell.qstat_states().get(job) == "qw"
    assert cell.records_of(job) == []


def test_h_vmem_is_the_address_space_a_job_cannot_exceed(cell):
    job = submit(cell, "-l", "h_vmem=100M", script(cell, "big.sh", "python3 -c 'bytearray(300*1024*1024)'"))
    rec = finished(cell, job)
    assert rec[EXIT_STATUS] == "1" and rec[FAILED] == "0"
    assert "MemoryError" in output(cell, job)


def test_h_vmem_summed_over_the_jobs_processes_is_killed_by_the_execd(cell):
    body = ("python3 -c 'import time; b=bytearray(60*1024*1024); b[::4096]=b\"x\"*len(b[::4096]); time.sleep(60)' &\n"
            "python3 -c 'import time; b=bytearray(60*1024*1024); b[::4096]=b\"x\"*len(b[::4096]); time.sleep(60)'\n"
            "wait\n")
    job = submit(cell, "-l", "h_vmem=100M", script(cell, "vmem2.sh", body))
    rec = finished(cell, job)
    # each process fits in 100M, both together do not: 8.1.9 writes failed 37, 137
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("37", "137")
    assert float(rec[MAXVMEM]) > 100 * M


def test_s_vmem_summed_over_the_jobs_processes_gets_sigxcpu(cell):
    body = ("python3 -c 'import time; b=bytearray(60*1024*1024); b[::4096]=b\"x\"*len(b[::4096]); time.sleep(60)' &\n"
            "python3 -c 'import time; b=bytearray(60*1024*1024); b[::4096]=b\"x\"*len(b[::4096]); time.sleep(60)'\n"
            "wait\n")
    job = submit(cell, "-l", "s_vmem=100M", script(cell, "svmem2.sh", body))
    rec = finished(cell, job)
    # SIGXCPU's default action ends the job's shell: 8.1.9 writes failed 100, 152
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("100", "152")


def burn(seconds: float) -> str:
    """A job script line: a process that uses ``seconds`` of CPU time, then
    idles until it is killed."""
    return f"python3 -c 'import time\nwhile time.process_time() < {seconds}: pass\ntime.sleep(300)'"


# h_cpu is enforced twice, as in 8.1.9: the shepherd sets RLIMIT_CPU (the kernel
# SIGKILLs a process at max(h_cpu, 2 s) of its own CPU, setrlimits.c), and the
# execd sums the CPU of the job's processes every PDC interval and SIGKILLs the
# job above h_cpu (execd_ck_to_do.c force_job_rlimit: failed 37).  When the
# kernel is first, the job's shell sees its child killed and exits 137 (8.1.9:
# failed 0).  A job that spins until one or the other kills it is a race the
# load of the machine decides; these jobs stop short of the kernel's limit, so
# only the execd can end them.
def test_h_cpu_exceeded_kills_the_job(cell):
    job = submit(cell, "-l", "h_cpu=1", script(cell, "loop.sh", burn(1.5)))
    rec = finished(cell, job)
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("37", "137")
    assert float(rec[CPU]) >= 1.0


def test_h_cpu_of_the_queue_exceeded_kills_the_job(cell):
    set_queue(cell, "h_cpu", "0:0:1")
    # each process stays below h_cpu, their sum does not
    job = submit(cell, script(cell, "loop.sh", f"{burn(0.7)} &\n{burn(0.7)}\nwait"))
    rec = finished(cell, job)
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("37", "137")
    assert float(rec[CPU]) >= 1.0


def test_s_cpu_exceeded_sends_sigxcpu_the_job_may_catch(cell):
    prog = ("import signal, time\n"
            "seen = []\n"
            "signal.signal(signal.SIGXCPU, lambda s, f: seen.append(1))\n"
            "while not seen: pass\n"
            "print('caught SIGXCPU', flush=True)\n")
    path = os.path.join(cell.work, "xcpu.py")
    with open(path, "w") as f:
        f.write(prog)
    job = submit(cell, "-l", "s_cpu=2", "-b", "y", "/usr/bin/python3", path)
    rec = finished(cell, job)
    assert "caught SIGXCPU" in output(cell, job)
    assert rec[EXIT_STATUS] == "0"


def test_s_fsize_exceeded_sends_sigxfsz(cell):
    body = f"dd if=/dev/zero of={cell.work}/big bs=1M count=20 2>/dev/null\necho dd exit $?"
    job = submit(cell, "-l", "s_fsize=1M", script(cell, "fsize.sh", body))
    finished(cell, job)
    assert "dd exit 153" in output(cell, job)  # 128 + SIGXFSZ
    assert os.path.getsize(os.path.join(cell.work, "big")) == M


def test_s_rt_sends_sigusr1_and_the_job_goes_on(cell):
    body = ("trap 'echo got USR1' USR1\n"
            "i=0; while [ $i -lt 8 ]; do sleep 1; i=$((i+1)); done\n"
            "echo end")
    job = submit(cell, "-l", "s_rt=0:0:2", script(cell, "srt.sh", body))
    rec = finished(cell, job)
    out = output(cell, job)
    assert "got USR1" in out and "end" in out
    assert rec[FAILED] == "0" and rec[EXIT_STATUS] == "0"


def test_s_rt_aborts_the_job_after_the_queues_notify_time(cell):
    set_queue(cell, "notify", "00:00:02")
    body = ("trap 'echo got USR1' USR1\n"
            "i=0; while [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done\n"
            "echo end")
    job = submit(cell, "-l", "s_rt=0:0:2", script(cell, "srtkill.sh", body))
    rec = finished(cell, job)
    out = output(cell, job)
    assert "got USR1" in out and "end" not in out
    assert rec[EXIT_STATUS] == "137"


def test_h_rt_exceeded_is_failed_37(cell):
    job = submit(cell, "-l", "h_rt=0:0:1", "-b", "y", "/bin/sleep", "60")
    rec = finished(cell, job)
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("37", "137")


def test_usage_of_a_job_holding_100mb_shows_in_accounting_and_qacct(cell):
    prog = ("import time\n"
            "b = bytearray(100 * 1024 * 1024)\n"
            "for i in range(0, len(b), 4096): b[i] = 1\n"
            "while time.process_time() < 1.5: pass\n"
            "time.sleep(3)\n")
    path = os.path.join(cell.work, "mem.py")
    with open(path, "w") as f:
        f.write(prog)
    job = submit(cell, "-b", "y", "/usr/bin/python3", path)
    rec = finished(cell, job)
    assert rec[FAILED] == "0"
    assert float(rec[MAXVMEM]) >= 100 * M
    assert float(rec[CPU]) >= 1.5  # busy for 1.5 s of CPU
    assert float(rec[CPU]) >= float(rec[RU_UTIME]) + float(rec[RU_STIME]) - 0.001
    assert float(rec[MEM]) > 0  # GB·s: CPU time at ~100 MB
    assert float(rec[IO]) > 0  # python read its modules: rchar
    assert float(rec[RU_MAXRSS]) >= 100 * 1024  # kB
    assert rec[IOW] == "0.000000"
    r = cell.run("qacct", "-j", str(job))
    assert r.rc == 0, r
    maxvmem = re.search(r"^maxvmem\s+(\S+)", r.out, re.M).group(1)
    assert maxvmem.endswith("MB") and float(maxvmem[:-2]) >= 100
    assert re.search(r"^cpu\s+(\d+\.\d{3})s", r.out, re.M)
