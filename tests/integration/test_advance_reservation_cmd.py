"""Advance reservations against a running cell: qrsub(1), qrstat(1),
qrdel(1), qsub -ar, and the scheduler holding a reservation's slots,
compared with what the real 8.1.9 printed (tests/golden/qrsub, qrstat, qrdel).

The cell's host is called ``vm`` and its users are the peer's (``sgetest``,
``sgetest2``), so that the captures compare after normalising dates alone.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from cellutil import Cell, ensure_user
from fake_mailer import install_mailer, mails
from golden import normalise, read_golden

pytestmark = pytest.mark.root

USER = "sgetest"
OTHER = "sgetest2"


@pytest.fixture
def vm_cell():
    ensure_user(USER)
    ensure_user(OTHER)
    c = Cell(host="vm", slots=2)
    c.start()
    try:
        yield c
    finally:
        c.cleanup()


def _same(c: Cell, case: str, user: str | None = None, *, stderr: bool = False) -> None:
    """The command of golden ``case`` run as its user prints what 8.1.9 printed, with its exit code."""
    g = read_golden(case)
    cmd, *args = g.command.split()
    r = c.run(cmd, *args, user=user or g.user)
    got = r.err if stderr else r.out
    assert (normalise(got), r.rc) == (normalise(g.text), g.exit), r


def _arusers(c: Cell, *users: str) -> None:
    for u in users:
        assert c.run("qconf", "-au", u, "arusers").rc == 0


def test_help_texts_are_8_1_9s(vm_cell):
    for case in ("qrsub/help", "qrstat/help", "qrdel/help"):
        _same(vm_cell, case)
    for case in ("qrsub/no_options.stderr", "qrsub/invalid_option.stderr", "qrsub/missing_argument.stderr",
                 "qrsub/bad_start.stderr", "qrsub/bad_end.stderr", "qrsub/bad_slot_range.stderr",
                 "qrsub/bad_duration.stderr", "qrsub/bad_mail_options.stderr", "qrsub/explain.stderr",
                 "qrsub/astnode.stderr", "qrsub/bad_he.stderr",
                 "qrstat/invalid_option.stderr", "qrstat/missing_argument.stderr", "qrdel/no_options.stderr",
                 "qrdel/invalid_option.stderr"):
        _same(vm_cell, case, stderr=True)


def test_only_arusers_and_managers_may_reserve(vm_cell):
    _same(vm_cell, "qrsub/not_in_arusers")
    _same(vm_cell, "qrdel/not_in_arusers")
    _same(vm_cell, "qrstat/none")
    _same(vm_cell, "qrstat/not_found")  # -ar of an id that does not exist
    _same(vm_cell, "qrstat/not_found_xml")


def test_qrsub_grants_and_refuses_as_8_1_9(vm_cell):
    c = vm_cell
    _arusers(c, USER, OTHER)
    for case in ("qrsub/start_later_than_end", "qrsub/start_in_past", "qrsub/unknown_queue",
                 "qrsub/unknown_resource", "qrsub/unknown_ckpt"):
        _same(c, case)
    _same(c, "qrsub/granted")  # the first id is 1
    _same(c, "qrsub/no_suitable_queues")  # 10 slots of a cell of 2
    r = c.run("qrstat", user=USER)
    assert (normalise(r.out), r.rc) == (normalise(read_golden("qrstat/summary").text), 0)
    # the details: 8.1.9 shows the qmaster's admin group as the group (sgeadmin beside the peer);
    # minisge shows the owner's primary group, as qrsub(1) says the reservation's group is
    g = read_golden("qrstat/detail_pe")
    r = c.run("qrstat", "-ar", "1", user=USER)
    assert normalise(r.out) == normalise(g.text).replace("sgeadmin", USER) and r.rc == 0
    g = read_golden("qrstat/detail_pe_xml")
    r = c.run("qrstat", "-ar", "1", "-xml", user=USER)
    assert normalise(r.out) == normalise(g.text).replace("sgeadmin", USER) and r.rc == 0
    _same(c, "qrstat/summary_xml")
    # a reservation no other user sees by default, and may not delete
    assert c.run("qrstat", user=OTHER).out == ""
    _same(c, "qrdel/no_ar_of_users")
    r = c.run("qrdel", "1", user=OTHER)
    assert (r.out, r.rc) == ('sgetest2 - you do not have the necessary privileges to delete the '
                             'advance_reservation "1"\n', 1)
    # ids are used by refusals after the grant decision too: 2 went to the refusal above
    r = c.run("qrsub", "-d", "60", "-N", "second", user=USER)
    assert r.out == "Your advance reservation 3 has been granted\n", r
    r = c.run("qrdel", "3", user=USER)
    assert (r.out, r.rc) == ("sgetest has deleted advance_reservation 3\n", 0)
    _same(c, "qrsub/verify_found")  # -w v: nothing granted, but its id is used (4), as beside the peer
    r = c.run("qrsub", "-d", "60", user=USER)
    assert r.out == "Your advance reservation 5 has been granted\n", r
    # sge_conf(5) max_advance_reservations (qconf -sconf leaves it out while 0): exit 25 above it
    path = os.path.join(c.work, "global")
    with open(path, "w") as f:
        f.write(c.run("qconf", "-sconf").out + "max_advance_reservations     2\n")
    assert c.run("qconf", "-Mconf", path).rc == 0
    r = c.run("qrsub", "-d", "60", user=USER)
    assert (r.out, r.rc) == ("rejected: only 2 advance reservations are allowed per cluster\n", 25), r
    r = c.run("qrdel", "3", user=USER)
    assert (r.out, r.rc) == ('denied: advance_reservation "3" does not exist\n', 1)


def test_full_details_of_a_future_reservation(vm_cell):
    c = vm_cell
    _arusers(c, USER)
    start = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 7200))
    r = c.run("qrsub", "-a", start, "-d", "1:0:0", "-N", "det", "-A", "acct1", "-u", "sgetest,sgetest2",
              "-m", "be", "-M", "a@b", "-he", "y", "-l", "h_vmem=100M", "-q", "all.q", "-w", "e", user=USER)
    assert r.out == "Your advance reservation 1 has been granted\n", r
    for case in ("qrstat/detail_full", "qrstat/detail_full_xml"):
        g = read_golden(case)
        r = c.run("qrstat", "-ar", "1", *(["-xml"] if case.endswith("xml") else []), user=USER)
        want = normalise(g.text).replace("sgeadmin", USER).replace("<id>10<", "<id>1<")
        want = want.replace("id                             10", "id                             1")
        assert normalise(r.out) == want, r
    # the spool holds it in the classic format, and a restart keeps it
    path = os.path.join(c.qmaster_spool, "advance_reservations", "1")
    assert "granted_slots       all.q@vm=1" in open(path).read()
    c.stop()
    c.start()
    r = c.run("qrstat", "-ar", "1", user=USER)
    assert "acl_list                       sgetest,sgetest2" in r.out and r.rc == 0


def test_a_reservation_holds_its_slots_for_its_jobs(vm_cell):
    c = vm_cell
    _arusers(c, USER)
    assert c.run("qrsub", "-d", "3600", "-pe", "smp", "2", user=USER).rc == 0
    outside = c.submit("-b", "y", "/bin/sleep", "1", user=USER)
    inside = c.submit("-ar", "1", "-b", "y", "/bin/sleep", "1", user=USER)
    records = c.wait_records(inside)
    assert records[0][-2] == "1" and records[0][-1] != "0"  # arid, ar_submission_time
    assert "-ar 1" in records[0]  # the category
    r = c.run("qacct", "-ar", "1")
    assert r.out.splitlines()[2].startswith("    1 ") and r.rc == 0, r
    # qstat -f: the reservation's slots in resv, as 8.1.9 shows them ("1/1/2" beside the peer)
    line = next(ln for ln in c.run("qstat", "-f").out.splitlines() if ln.startswith("all.q@vm"))
    assert " 2/0/2 " in line, line
    assert c.qstat_states().get(outside) == "qw"  # the two slots are the reservation's
    r = c.run("qstat", "-j", str(outside), user=USER)
    assert "ar_id" not in r.out
    # a job of the reservation names it in qstat -j
    held = c.submit("-ar", "1", "-h", "-b", "y", "/bin/true", user=USER)
    assert "ar_id:                      1" in c.run("qstat", "-j", str(held), user=USER).out
    # qrdel deletes the reservation's jobs, then the reservation; the other job runs then
    r = c.run("qrdel", "1", user=USER)
    assert r.out == "sgetest has deleted advance_reservation 1\n", r
    c.wait_for(lambda: held not in c.qstat_states(), what="the reservation's job deleted")
    c.wait_records(outside)


def test_jobs_of_an_unknown_or_foreign_reservation_are_refused(vm_cell):
    c = vm_cell
    _arusers(c, USER)
    r = c.run("qsub", "-ar", "5", "-b", "y", "/bin/true", user=USER)
    assert (r.err, r.rc) == ("Unable to run job: the advance reservation id 5 is invalid\nExiting.\n", 1)
    assert c.run("qrsub", "-d", "600", user=USER).rc == 0
    r = c.run("qsub", "-ar", "1", "-b", "y", "/bin/true", user=OTHER)  # not in its -u list (none: the owner)
    assert r.rc == 1 and "the advance reservation id 1 is invalid" in r.err
    r = c.run("qsub", "-ar", "1", "-l", "h_rt=3600", "-b", "y", "/bin/true", user=USER)
    assert (r.err, r.rc) == ("Unable to run job: the job duration is longer than duration of the advance "
                             "reservation id 1\nExiting.\n", 1)


def test_a_future_reservation_holds_back_jobs_that_would_overlap_it(vm_cell):
    """8.1.9 beside the peer: a job without h_rt (sched_conf default_duration
    INFINITY) stays pending next to a reservation of every slot that starts
    later ("offers only qc:slots=0.000000 due to a reservation"); one whose
    h_rt ends before the reservation starts runs."""
    c = vm_cell
    _arusers(c, USER)
    start = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 7200))
    assert c.run("qrsub", "-a", start, "-d", "600", "-pe", "smp", "2", user=USER).rc == 0
    forever = c.submit("-b", "y", "/bin/true", user=USER)
    short = c.submit("-l", "h_rt=60", "-b", "y", "/bin/true", user=USER)
    c.wait_records(short)
    assert c.qstat_states().get(forever) == "qw"
    info = [ln for ln in c.run("qstat", "-j", str(forever), user=USER).out.splitlines()
            if ln.startswith("scheduling info:")]
    assert info == ['scheduling info:            (-l NONE) cannot run in queue "all.q@vm" because it offers only '
                    "qc:slots=0.000000 due to a reservation"], info  # job 404's words beside the peer


def test_a_reservation_ends_with_its_jobs(vm_cell):
    c = vm_cell
    _arusers(c, USER)
    assert c.run("qrsub", "-d", "8", user=USER).rc == 0
    job = c.submit("-ar", "1", "-b", "y", "/bin/sleep", "100", user=USER)
    c.wait_for(lambda: c.qstat_states().get(job) == "r", what="the job of the reservation running")
    c.wait_for(lambda: job not in c.qstat_states(), what="the job deleted at the reservation's end")
    assert c.run("qrstat", user=USER).out == ""
    assert not os.path.exists(os.path.join(c.qmaster_spool, "advance_reservations", "1"))


def test_qrdel_of_a_reservation_with_a_running_job_waits_for_it(vm_cell):
    """8.1.9's qrdel deletes the reservation's jobs first; while one is still
    being killed the reservation stays, in state d ("has registered the
    advance_reservation N for deletion"), and goes once the job is gone."""
    c = vm_cell
    _arusers(c, USER)
    assert c.run("qrsub", "-d", "3600", user=USER).rc == 0
    job = c.submit("-ar", "1", "-b", "y", "/bin/sleep", "100", user=USER)
    c.wait_for(lambda: c.qstat_states().get(job) == "r", what="the job of the reservation running")
    r = c.run("qrdel", "1", user=USER)
    assert (r.out, r.rc) == ("sgetest has registered the advance_reservation 1 for deletion\n", 0), r
    assert "      1            sgetest      d " in c.run("qrstat", user=USER).out or \
        job not in c.qstat_states()  # the kill may already be through
    c.wait_for(lambda: job not in c.qstat_states(), what="the job killed")
    c.wait_for(lambda: c.run("qrstat", user=USER).out == "", what="the reservation gone")
    assert c.wait_records(job)[0][-2] == "1"


def _ar_state(c: Cell, ar_id: int) -> str:
    for line in c.run("qrstat", "-u", "*").out.splitlines()[2:]:
        words = line.split()
        if words and words[0] == str(ar_id):
            return words[3] if len(words) > 8 else words[2]  # a reservation without a name
    return ""


def _ar_mails(c: Cell) -> dict[str, tuple[str, str]]:
    """subject -> (recipient, body) of what the test mailer got."""
    got = {}
    for text in mails(c):
        head, _, body = text.partition("\n")
        _argv0, flag, subject, to = head.split("|")
        assert flag == "-s"
        got[subject] = (to, body.rstrip("\n"))
    return got


def _same_mail(got: dict[str, tuple[str, str]], case: str, ar_id: int, owner: str, name: str = "armail") -> None:
    """The mail of golden ``case`` (sent by the peer's qmaster, captured from
    /var/mail/sgetest) came to sgetest@vm, alike but for the id, the owner and the time."""
    text = read_golden(f"mail/{case}").text
    head, _, body = text.partition("\n\n")
    found = re.search(r"Reservation (\d+) \(([^)]*)\)", head)
    assert found
    theirs, ours_ref = found.group(0), f"Reservation {ar_id} ({name})"
    subject = head.removeprefix("Subject: ").replace(theirs, ours_ref)
    assert subject in got, (subject, sorted(got))
    to, ours = got[subject]
    assert to == f"{USER}@vm"
    date = re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d")
    expected = body.rstrip("\n").replace(theirs, ours_ref).replace("User       = root", f"User       = {owner}")
    assert date.sub("DATE", ours) == date.sub("DATE", expected)


def test_m_mails_as_8_1_9(vm_cell):
    """qrsub -m b|e|a mails at the start, at qrdel, into and out of state E
    (a reserved queue instance disabled), at the end, to the -M list.
    8.1.9 beside the peer (qmod -d/-e of all.q@vm): tests/golden/mail/ar.*."""
    c = vm_cell
    _arusers(c, USER)
    install_mailer(c)
    r = c.run("qrsub", "-d", "3600", "-m", "bea", "-M", f"{USER}@vm", "-he", "y", "-N", "armail", user=USER)
    assert r.rc == 0, r
    got = c.wait_for(lambda: len(m := _ar_mails(c)) == 1 and m, what="the start mail")
    _same_mail(got, "ar.started", 1, USER)
    assert c.run("qmod", "-d", "all.q@vm").rc == 0
    c.wait_for(lambda: _ar_state(c, 1) == "E", what="the reservation in state E")
    assert c.run("qmod", "-e", "all.q@vm").rc == 0
    c.wait_for(lambda: _ar_state(c, 1) == "r", what="the reservation back in state r")
    assert c.run("qrdel", "1", user=USER).rc == 0
    got = c.wait_for(lambda: len(m := _ar_mails(c)) == 4 and m, what="4 mails")
    for case in ("ar.error", "ar.resolved", "ar.deleted"):  # the peer's ar.deleted had no name: (none)
        _same_mail(got, case, 1, USER)
    # -m e alone: the end mail and no other; without -N the name is "none" (as 8.1.9's ar.deleted)
    assert c.run("qrsub", "-d", "3", "-m", "e", "-M", f"{USER}@vm", user=USER).rc == 0
    got = c.wait_for(lambda: len(m := _ar_mails(c)) == 5 and m, what="the end mail")
    assert "Advance Reservation 2 (none) Finished" in got
    _same_mail(got, "ar.finished", 2, USER, "none")


def _two_queues(c: Cell) -> None:
    """all.q@vm and b.q@vm with a slot each, both offering the PE smp."""
    assert c.run("qconf", "-mattr", "queue", "slots", "1", "all.q").rc == 0
    text = re.sub(r"(?m)^qname .*$", "qname b.q", c.run("qconf", "-sq", "all.q").out)
    path = os.path.join(c.work, "b.q")
    with open(path, "w") as f:
        f.write(text)
    r = c.run("qconf", "-Aq", path)
    assert r.rc == 0, r


@pytest.mark.parametrize("he", ["y", "n"])
def test_he_y_holds_back_the_jobs_of_a_reservation_in_error(vm_cell, he):
    """The reservation holds a slot in all.q@vm and one in b.q@vm; b.q@vm
    disabled puts it in E.  -he y: its job waits ("cannot run because
    requested advance reservation 1 is in error state", msg_schedd.h),
    until b.q@vm is enabled again; -he n: it runs in all.q@vm meanwhile."""
    c = vm_cell
    _arusers(c, USER)
    _two_queues(c)
    r = c.run("qrsub", "-d", "3600", "-pe", "smp", "2", "-he", he, user=USER)
    assert r.rc == 0, r
    assert "all.q@vm=1" in (d := c.run("qrstat", "-ar", "1", user=USER).out) and "b.q@vm=1" in d, d
    assert c.run("qmod", "-d", "b.q@vm").rc == 0
    c.wait_for(lambda: _ar_state(c, 1) == "E", what="the reservation in state E")
    job = c.submit("-ar", "1", "-b", "y", "/bin/true", user=USER)
    if he == "y":
        c.wait_for(lambda: "cannot run because requested advance reservation 1 is in error state"
                   in c.run("qstat", "-j", str(job)).out, what="the job told why it waits")
        assert c.qstat_states().get(job) == "qw"
        assert c.run("qmod", "-e", "b.q@vm").rc == 0
        c.wait_for(lambda: _ar_state(c, 1) == "r", what="the reservation back in state r")
    assert c.wait_records(job)[0][0] == "all.q"


def test_a_waiting_reservation_goes_to_w_and_a_running_one_to_e(vm_cell):
    """While a queue instance it holds is disabled, a reservation whose start
    is to come is in W, a running one in E (8.1.9's qrstat, beside the peer: E);
    both back to w and r when it is enabled."""
    c = vm_cell
    _arusers(c, USER)
    start = time.strftime("%Y%m%d%H%M", time.localtime(time.time() + 3600))
    assert c.run("qrsub", "-a", start, "-d", "600", user=USER).rc == 0
    assert c.run("qrsub", "-d", "600", user=USER).rc == 0
    assert c.run("qmod", "-d", "all.q@vm").rc == 0
    c.wait_for(lambda: (_ar_state(c, 1), _ar_state(c, 2)) == ("W", "E"), what="states W and E")
    assert c.run("qmod", "-e", "all.q@vm").rc == 0
    c.wait_for(lambda: (_ar_state(c, 1), _ar_state(c, 2)) == ("w", "r"), what="states w and r")
