"""What a finished task means for the job and the queue (sge_shepherd(8), SGE-FACTS §2)."""

from minisge.rules.exit_codes import failed_text, job_outcome


def test_exit_0_finishes():
    o = job_outcome({"failed": 0, "exit_status": 0}, False, False)
    assert (o.failed, o.requeue, o.job_error, o.queue_error) == (0, False, False, False)


def test_exit_99_requeues_unless_forbidden():
    assert job_outcome({"exit_status": 99}, False, False).requeue
    assert job_outcome({"exit_status": 99}, False, False).failed == 25
    forbidden = job_outcome({"exit_status": 99}, True, False)
    assert not forbidden.requeue and forbidden.failed == 0


def test_exit_100_puts_the_job_in_error_unless_forbidden():
    o = job_outcome({"exit_status": 100}, False, False)
    assert o.job_error and o.failed == 30 and o.reason == "exit_status of job start = 100"
    assert not job_outcome({"exit_status": 100}, False, True).job_error


def test_killed_job_is_failed_100_assumedly_after_job():
    o = job_outcome({"exit_status": 137, "signal": 9}, False, False)
    assert o.failed == 100 and failed_text(100) == "assumedly after job"


def test_h_rt_kill_is_failed_37():
    assert job_outcome({"exit_status": 137, "signal": 9, "limit": "h_rt"}, False, False).failed == 37


def test_prolog_failure_requeues_and_errors_the_queue():
    o = job_outcome({"failed": 8, "error": "exit_status of prolog = 1"}, False, False)
    assert o.requeue and o.queue_error and not o.job_error


def test_output_file_problem_is_a_job_error():
    o = job_outcome({"failed": 26}, False, False)
    assert o.job_error and not o.queue_error


def test_unknown_code_text():
    assert failed_text(77) == "invalid execution state"


def test_prolog_that_could_not_start_errors_every_queue_of_the_host():
    o = job_outcome({"failed": 7, "error": 'unknown variable "job_pid"'}, False, False)
    assert o.requeue and o.queue_error and o.host_error


def test_pe_stop_failure_errors_the_queue_without_requeue():
    o = job_outcome({"failed": 13, "exit_status": 4}, False, False)
    assert o.queue_error and not o.requeue and not o.job_error


def test_epilog_failure_requeues_and_errors_the_queue():
    o = job_outcome({"failed": 15, "exit_status": 5}, False, False)
    assert o.requeue and o.queue_error and not o.host_error


def test_reschedule_from_a_procedure_requeues_without_queue_error():
    o = job_outcome({"failed": 25, "error": "exit_status of prolog = 99"}, False, False)
    assert o.requeue and not o.queue_error and o.reason == "exit_status of prolog = 99"


def test_queue_error_message_is_grid_engines():
    from minisge.rules.exit_codes import queue_error_message

    assert queue_error_message("all.q", 5, "node1") == (
        "queue all.q marked QERROR as result of job 5's failure at host node1")


def test_an_attempt_requeued_after_a_prolog_failure_is_accounted_with_zero_times():
    # Grid Engine 8.1.9 writes such records with zero times, status and usage
    from minisge.qmaster import accounting_writer
    from minisge.qmaster.job import Grant, Job, Task

    job = Job(number=5, name="x", owner="u", uid=1, group="g", gid=1, submission_time=100.0, spec={})
    task = Task(task_id=1, start_time=200.0, granted=[Grant("all.q", "h", 1)])
    report = {"usage": {"start_time": "200", "end_time": "210", "ru_utime": "1"}, "exit_status": 3}
    r = accounting_writer.record_for(job, task, report, 8, "h", "NONE", 0)
    assert (r.submission_time, r.start_time, r.end_time, r.exit_status, r.ru_utime) == (0, 0, 0, 0, 0.0)
    r = accounting_writer.record_for(job, task, report, 0, "h", "NONE", 0)
    assert (r.submission_time, r.start_time, r.end_time, r.exit_status, r.ru_wallclock) == (100, 200, 210, 3, 10)


def test_a_task_the_execd_could_not_set_up_is_requeued_and_the_queue_errored():
    o = job_outcome({"failed": 3, "error": "can't set up the job on h1: disk full"}, False, False)
    assert o.requeue and o.queue_error and not o.job_error
    assert o.reason == "can't set up the job on h1: disk full"
