"""Configuration that is acted on, through real daemons: project(5)
``acl``/``xacl`` at submission, host_conf(5) access lists and projects in
the scheduler, sge_conf(5) ``reporting_params`` and ``execd_params`` --
with 8.1.9's messages (tests/golden/qsub/ holds the peer's)."""

from __future__ import annotations

import os
import re

import pytest
from cellutil import Cell
from golden import normalise, read_golden

pytestmark = pytest.mark.root


def write(cell: Cell, name: str, text: str) -> str:
    path = os.path.join(cell.work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def ok(r) -> None:
    assert r.rc == 0, r


def _scheduling_info(c: Cell, job: int) -> str:
    r = c.run("qstat", "-j", str(job))
    return r.out.split("scheduling info:", 1)[1] if "scheduling info:" in r.out else ""


def _wait_info(c: Cell, job: int, text: str) -> str:
    return c.wait_for(lambda: text in (s := _scheduling_info(c, job)) and s, what=text)


def test_a_project_refuses_users_outside_its_acl_or_in_its_xacl(cell, users):
    """project(5): as on the real 8.1.9 (peer: projects d8prj acl d8acl and
    d8xprj xacl d8acl, d8acl holding sgetest2)."""
    one, two = users[0].pw_name, users[1].pw_name
    ok(cell.run("qconf", "-au", two, "d8acl"))
    ok(cell.run("qconf", "-Aprj", write(cell, "d8prj", "name d8prj\noticket 0\nfshare 0\nacl d8acl\nxacl NONE\n")))
    ok(cell.run("qconf", "-Aprj", write(cell, "d8xprj", "name d8xprj\noticket 0\nfshare 0\nacl NONE\nxacl d8acl\n")))
    for case, project, user, peer_user in (("-P.not_in_acl", "d8prj", one, "sgetest"),
                                           ("-P.in_xacl", "d8xprj", two, "sgetest2")):
        out, err = read_golden(f"qsub/{case}"), read_golden(f"qsub/{case}.stderr")
        r = cell.run("qsub", "-P", project, "-b", "y", "/bin/true", user=user)
        assert (r.rc, r.out, r.err) == (err.exit, out.text, err.text.replace(peer_user, user))
    assert cell.run("qstat", "-u", "*").out == ""  # nothing was submitted
    job = cell.submit("-P", "d8prj", "-b", "y", "/bin/true", user=two)
    cell.wait_records(job)
    job = cell.submit("-P", "d8xprj", "-b", "y", "/bin/true", user=one)
    cell.wait_records(job)


def test_a_host_whose_access_lists_exclude_the_owner_runs_none_of_its_jobs(cell, users):
    one, two = users[0].pw_name, users[1].pw_name
    ok(cell.run("qconf", "-au", one, "banned"))
    ok(cell.run("qconf", "-rattr", "exechost", "xuser_lists", "banned", cell.host))
    job = cell.submit("-b", "y", "/bin/true", user=one)
    _wait_info(cell, job, f'has no permission for host "{cell.host}"')
    other = cell.submit("-b", "y", "/bin/true", user=two)
    cell.wait_records(other)
    assert cell.qstat_states().get(job) == "qw"
    ok(cell.run("qconf", "-rattr", "exechost", "xuser_lists", "NONE", cell.host))
    cell.wait_records(job)


def test_the_global_hosts_projects_hold_for_every_host(cell, users):
    one = users[0].pw_name
    ok(cell.run("qconf", "-Aprj", write(cell, "p1", "name p1\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")))
    ok(cell.run("qconf", "-rattr", "exechost", "projects", "p1", "global"))
    job = cell.submit("-b", "y", "/bin/true", user=one)
    _wait_info(cell, job, '(no project) does not have the correct project to run in host "global"')
    cell.wait_records(cell.submit("-P", "p1", "-b", "y", "/bin/true", user=one))
    assert not cell.records_of(job)


def set_global(c: Cell, **values: str) -> None:
    """Change attributes of the global configuration with ``qconf -Mconf``."""
    conf = c.run("qconf", "-sconf").out
    for name, value in values.items():
        conf, n = re.subn(rf"(?m)^{name} (?:.*\\\n)*.*$", f"{name:<28} {value}", conf)
        assert n == 1, name
    ok(c.run("qconf", "-Mconf", write(c, "global", conf)))


def _gone(c: Cell, job: int) -> bool:
    return str(job) not in c.run("qstat", "-u", "*").out.split()


def test_reporting_params_accounting_false_writes_no_record(cell, users):
    user = users[0].pw_name
    set_global(cell, reporting_params="accounting=false reporting=false flush_time=00:00:15 joblog=false "
                                      "sharelog=00:00:00")
    job = cell.submit("-b", "y", "/bin/true", user=user)
    cell.wait_for(lambda: _gone(cell, job), what=f"job {job} ended")
    set_global(cell, reporting_params="accounting=true reporting=false flush_time=00:00:15 joblog=false "
                                      "sharelog=00:00:00")
    later = cell.submit("-b", "y", "/bin/true", user=user)
    cell.wait_records(later)
    assert not cell.records_of(job)
    r = cell.run("qacct", "-j", str(job))
    assert (r.rc, r.out, r.err) == (1, "", f"error: job id {job} not found\n")


def test_execd_params_keep_active_keeps_the_task_directory(cell, users):
    user = users[0].pw_name
    active = os.path.join(cell.root, "default", "spool", cell.host, "active_jobs")
    job = cell.submit("-b", "y", "/bin/true", user=user)
    cell.wait_records(job)
    cell.wait_for(lambda: not os.path.exists(os.path.join(active, f"{job}.1")), what="the directory removed")
    set_global(cell, execd_params="KEEP_ACTIVE=true,S_DESCRIPTORS=100")
    job = cell.submit("-b", "y", "/bin/true", user=user)
    cell.wait_records(job)
    kept = os.path.join(active, f"{job}.1")
    cell.wait_for(lambda: os.path.exists(os.path.join(kept, "kept")), what="the directory kept")
    assert os.path.exists(os.path.join(kept, "exit_status"))
    with open(os.path.join(cell.qmaster_spool, "messages")) as f:  # the all-in-one daemon's messages
        assert "execd_params S_DESCRIPTORS: not supported by minisge's execd, without effect" in f.read()
    # a restarted cell does not report the kept task again
    cell.stop()
    cell.start()
    again = cell.submit("-b", "y", "/bin/true", user=user)
    cell.wait_records(again)
    assert len(cell.records_of(job)) == 1


def test_load_scaling_puts_a_host_in_alarm_and_qstat_shows_the_scaled_values(users):
    """host_conf(5) load_scaling: np_load_avg 1.000000 scaled by 2 crosses
    all.q's load_thresholds np_load_avg=1.75 (8.1.9 on the peer: qstat -F
    prints ``hl:load_avg=3.719000`` for 7.438 scaled by 0.5, qstat -f's
    load_avg column 3.72, and the alarm state a)."""
    c = Cell(environ={"MINISGE_LOAD_OVERRIDE": "np_load_avg=1.000000,load_avg=7.438000"}).start()
    try:
        user = users[0].pw_name
        c.wait_for(lambda: "hl:np_load_avg=1.000000" in c.run("qstat", "-F", "np_load_avg").out, what="a report")
        out = read_golden("qconf/-rattr_exechost_load_scaling.unknown_attribute")
        err = read_golden("qconf/-rattr_exechost_load_scaling.unknown_attribute.stderr")
        r = c.run("qconf", "-rattr", "exechost", "load_scaling", "nosuch=2", c.host)
        assert (r.rc, r.out, r.err) == (err.exit, out.text, normalise(err.text, hosts=["vm"]).replace("HOST", c.host))
        ok(c.run("qconf", "-rattr", "exechost", "load_scaling", "np_load_avg=2,load_avg=0.5", c.host))
        out = c.run("qstat", "-F", "np_load_avg,load_avg").out
        assert "\thl:load_avg=3.719000\n\thl:np_load_avg=2.000000\n" in out, out
        line = c.run("qstat", "-f").out.splitlines()[2]
        assert line.split()[3:4] == ["3.72"] and line.split()[-1] == "a", line
        assert "load_avg=7.438000" in c.run("qconf", "-se", c.host).out  # what was reported
        job = c.submit("-b", "y", "/bin/true", user=user)
        _wait_info(c, job, "queue instance \"all.q@testhost\" dropped because it is overloaded")
        ok(c.run("qconf", "-rattr", "exechost", "load_scaling", "NONE", c.host))
        c.wait_records(job)
    finally:
        c.cleanup()


def _listed(out: str) -> list[str]:
    """The first column of a listing's job and queue lines."""
    return [ln.split()[0] for ln in out.splitlines() if ln.strip() and not ln.startswith(("-", "#", "job-ID",
                                                                                          "queuename", " - "))]


def test_qstat_l_and_U_select_queues_and_the_pending_jobs_that_fit_them(cell, users):
    """As 8.1.9 on the peer: with -l or -U a pending job that fits none of the
    queue instances selected is not listed; -l with no instance selected
    prints nothing (exit 0), an unknown resource nothing (exit 1); load values
    other than the static ones (arch, num_proc, mem_total ...) select nothing."""
    one, two = users[0].pw_name, users[1].pw_name
    ok(cell.run("qconf", "-mattr", "queue", "slots", "0", "all.q"))  # everything stays pending
    plain = cell.submit("-b", "y", "/bin/true", user=one)
    foo = cell.submit("-l", "arch=foo", "-b", "y", "/bin/true", user=one)
    assert _listed(cell.run("qstat", "-u", "*").out) == [str(plain), str(foo)]
    assert _listed(cell.run("qstat", "-u", "*", "-l", f"hostname={cell.host}").out) == [str(plain)]
    assert _listed(cell.run("qstat", "-u", "*", "-U", one).out) == [str(plain)]
    out = cell.run("qstat", "-u", "*", "-f", "-l", "slots=0").out
    assert _listed(out) == [f"all.q@{cell.host}", str(plain)], out
    for case, args in (("-l.no_queue_matches", ("-l", "arch=foo")),
                       ("-l.unknown_resource", ("-l", "nosuch=1")),
                       ("-f_-l.load_value_mem_free", ("-f", "-l", "mem_free=1G")),
                       ("-f_-l.slots_over_the_queues", ("-f", "-l", "slots=3"))):
        out, err = read_golden(f"qstat_{case}"), read_golden(f"qstat_{case}.stderr")
        r = cell.run("qstat", *args, user=one)
        assert (r.rc, r.out, r.err) == (out.exit, out.text, err.text), case
    # -U: a queue instance some named user may not use is not shown
    ok(cell.run("qconf", "-au", two, "banned"))
    ok(cell.run("qconf", "-rattr", "queue", "xuser_lists", "banned", "all.q"))
    r = cell.run("qstat", "-f", "-U", one)
    assert _listed(r.out)[0] == f"all.q@{cell.host}"
    r = cell.run("qstat", "-f", "-U", f"{one},{two}")
    assert (r.rc, r.out) == (1, "")


def test_the_cells_sge_qstat_file_gives_default_options(cell, users):
    """sge_qstat(5): the options of common/sge_qstat apply unless the command
    line gives the same option (as 8.1.9's qstat; checked on the peer)."""
    job = cell.submit("-h", "-b", "y", "/bin/true", user=users[0].pw_name)
    assert cell.run("qstat").out == ""  # root's own jobs: none
    with open(os.path.join(cell.common, "sge_qstat"), "w") as f:
        f.write("# every user's jobs\n-u *\n")
    assert _listed(cell.run("qstat").out) == [str(job)]
    assert cell.run("qstat", "-u", "root").out == ""
    with open(os.path.join(cell.common, "sge_qstat"), "w") as f:
        f.write("-u * -bad\n")
    r = cell.run("qstat")
    assert r.rc == 1 and r.err.endswith('invalid option argument "-bad"\n')


def test_qacct_l_counts_the_jobs_of_queue_instances_that_offer_the_resources(cell, users):
    """qacct -l as 8.1.9 (goldens from the peer): the queue instance a job ran
    in must still exist and offer the attributes as in an empty cell."""
    job = cell.submit("-b", "y", "/bin/true", user=users[0].pw_name)
    rec = cell.wait_records(job)[0]
    for case, args in (("-l.unknown_resource", ("-l", "nosuch=1")),
                       ("-l.no_queue_offers_it", ("-l", "arch=foo"))):
        out, err = read_golden(f"qacct/{case}"), read_golden(f"qacct/{case}.stderr")
        r = cell.run("qacct", *args, user=users[0].pw_name)
        assert (r.rc, r.out, r.err) == (out.exit, out.text, err.text), case
    everything = cell.run("qacct").out
    assert cell.run("qacct", "-l", f"hostname={cell.host}").out == everything
    assert str(job) in cell.run("qacct", "-l", f"hostname={cell.host}", "-j", str(job)).out
    r = cell.run("qacct", "-l", "arch=foo", "-j", str(job))  # left out by -l: not "not found"
    assert (r.rc, r.out, r.err) == (0, "", "")
    gone = write(cell, "acct", "# Version: 8.1.9\n" + ":".join([rec[0], "gone", *rec[2:]]) + "\n")
    out, err = read_golden("qacct/-l.master_queue_gone"), read_golden("qacct/-l.master_queue_gone.stderr")
    r = cell.run("qacct", "-l", "arch=lx-amd64", "-f", gone)
    assert (r.rc, r.out, r.err) == (out.exit, out.text, err.text)
