"""What the qmaster tells qstat about a job (minisge.qmaster.views), as qstat prints it."""

from __future__ import annotations

from minisge.output import qstat_out
from minisge.qmaster import views
from minisge.qmaster.job import Grant, Job, Task


def pending_job(**spec) -> Job:
    return Job(number=5, name="x", owner="u", uid=1000, group="g", gid=1000, submission_time=0.0,
               spec={"job_name": "x", **spec}, pending=[1])


def qstat_r(job: Job) -> str:
    return qstat_out.format_job_list([views.job_row(job)], resources=True)


def test_qstat_r_shows_the_requested_pe_and_its_range():
    assert "       Requested PE:     smp 2-4\n" in qstat_r(pending_job(pe={"name": "smp", "ranges": [[2, 4]]}))
    assert "       Requested PE:     mpi 8\n" in qstat_r(pending_job(pe={"name": "mpi", "ranges": [[8, 8]]}))


def test_qstat_r_shows_the_checkpoint_environment_of_qsub_ckpt():
    assert "       Checkpoint Env.:  ck\n" in qstat_r(pending_job(checkpoint="ck"))
    assert "Checkpoint Env." not in qstat_r(pending_job())


def test_qstat_j_shows_the_shell_list_of_S_as_host_and_path():
    # qsub -S /bin/bash (or "#$ -S /bin/bash"): qsub's path entries, once a KeyError
    job = pending_job(shell=[{"host": None, "path": "/bin/bash"}, {"host": "node1", "path": "/bin/csh"}])
    out = qstat_out.format_job_detail(views.detail_dict(job))
    assert "shell_list:                 NONE:/bin/bash,node1:/bin/csh\n" in out


def running_job() -> Job:
    job = Job(number=5, name="x", owner="u", uid=1000, group="g", gid=1000, submission_time=0.0,
              spec={"job_name": "x"}, pending=[])
    job.add_task(Task(task_id=1, start_time=10.0, granted=[Grant("all.q", "h", 1)]))
    return job


def test_qstat_j_shows_the_online_usage_of_a_running_task():
    usage = {1: {"cpu": 65.0, "mem": 0.25, "io": 0.001, "vmem": 3.188 * 1024**2, "maxvmem": 4 * 1024**2}}
    out = qstat_out.format_job_detail(views.detail_dict(running_job(), usage=usage))
    assert ("usage         1:            cpu=00:01:05, mem=0.25000 GB s, io=0.00100 GB, vmem=3.188M, "
            "maxvmem=4.000M\n") in out
    # before its execd reported any: zeros and N/A, as 8.1.9 right after the start
    out = qstat_out.format_job_detail(views.detail_dict(running_job()))
    assert "cpu=00:00:00, mem=0.00000 GB s, io=0.00000 GB, vmem=N/A, maxvmem=N/A\n" in out


def test_qstat_ext_shows_the_online_usage_of_a_running_task():
    row = views.job_row(running_job(), usage={1: {"cpu": 65.0, "mem": 0.25, "io": 0.001, "vmem": 0.0,
                                                  "maxvmem": 0.0}})
    line = qstat_out.format_job_list([row], ext=True).splitlines()[2]
    assert " r     0:00:01:05 0.25000 0.00100 " in line
    # no report yet: NA
    line = qstat_out.format_job_list([views.job_row(running_job())], ext=True).splitlines()[2]
    assert " r     NA         NA      NA      " in line


def test_qstat_j_shows_the_binding_with_its_mode():
    # the peer: qsub -binding linear:1 -> "binding: set linear:1"; -binding env linear:2 -> "env linear:2"
    out = qstat_out.format_job_detail(views.detail_dict(pending_job(binding="linear:1")))
    assert "binding:                    set linear:1\n" in out
    assert views.binding_text("env linear:2") == "env linear:2"
    assert "binding:                    NONE\n" in qstat_out.format_job_detail(views.detail_dict(pending_job()))


def test_qstat_j_shows_the_cores_a_running_task_took():
    # the peer: a -binding linear:1 job on a host of two cores: "binding 1: ScC"
    out = qstat_out.format_job_detail(views.detail_dict(running_job(), usage={1: {"binding": "ScC"}}))
    assert "binding       1:            ScC\n" in out
