"""The conformance suite's pure parts (tests/conformance/case.py): every case
file parses, its captures are whole, and the pieces both sides share."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "conformance"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "integration"))

from case import all_cases, expand, normalise_side, parse_case, submitted_ids
from golden import read_golden

CASES = all_cases()


def test_there_are_cases_for_every_command_of_the_suite():
    commands = {c.name.split("/")[0] for c in CASES}
    assert commands >= {"qsub", "qstat", "qdel", "qhold", "qrls", "qmod", "qconf", "qacct", "qquota"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_capture_is_whole_and_names_its_command_and_user(case):
    if not os.path.exists(case.expected("peer", "out")):
        pytest.skip("not captured yet")
    out, err = read_golden(case.expected("peer", "out")), read_golden(case.expected("peer", "err"))
    assert out.command == err.command and out.command.split()[0] == case.command.split()[0]
    assert out.user == err.user == case.user and out.exit == err.exit
    assert {"jobs", "host", "cwd", "root", "execd_spool"} <= set(out.fields)
    if case.differs is not None and os.path.exists(case.expected("minisge", "out")):
        assert read_golden(case.expected("minisge", "out")).user == case.user


def test_a_case_file_reads_its_directives(tmp_path):
    p = tmp_path / "x.case"
    p.write_text("# comment\nuser: cfuser2\nfile: job.sh #!/bin/sh\\necho hi\nsetup: qsub -h job.sh\n"
                 "setup as root: qmod -d all.q\nwait: running 1\nquiet: yes\nmask: (?P<m>\\d+)\n"
                 "command: qstat -j $JOB1\ncleanup as root: qmod -e all.q\ndiffers: on purpose\n")
    c = parse_case(str(p))
    assert (c.user, c.files, c.command, c.quiet, c.masks, c.differs) == \
        ("cfuser2", {"job.sh": "#!/bin/sh\necho hi"}, "qstat -j $JOB1", "yes", ["(?P<m>\\d+)"], "on purpose")
    assert [(s.user, s.line) for s in c.setup] == [("cfuser2", "qsub -h job.sh"), ("root", "qmod -d all.q")]
    assert c.waits == [(2, "running 1")]
    assert [(s.user, s.line) for s in c.cleanup] == [("root", "qmod -e all.q")]


def test_a_line_that_is_no_directive_is_refused(tmp_path):
    p = tmp_path / "x.case"
    p.write_text("command: qstat\nqstat -f\n")
    with pytest.raises(ValueError, match="not a directive"):
        parse_case(str(p))


def test_submitted_ids_reads_plain_array_and_terse_messages():
    out = ('Your job 12 ("a") has been submitted\nYour job-array 13.1-3:1 ("b") has been submitted\n'
           "14\n15.1-5:1\n")
    assert submitted_ids(out) == [12, 13, 14, 15]


class _Side:
    host = "vm"
    root = "/r"
    execd_spool = "/s"


def test_expand_fills_in_job_ids_host_and_work_directory():
    assert expand("qdel $JOB2 $JOB1.2 all.q@$HOST $CWD/x", [7, 8], _Side(), "/w") == \
        ["qdel", "8", "7.2", "all.q@vm", "/w/x"]
    with pytest.raises(AssertionError):
        expand("qdel $JOB3", [7], _Side(), "/w")


def test_normalise_side_masks_group_m_with_one_star():
    text = "all.q@vm                       BIP   0/0/2          2.06     lx-amd64\njob 7 in /w\n"
    out = normalise_side(text, jobs=[7], host="vm", cwd="/w", root="/r", execd_spool="/s",
                         masks=[r"(?m)^all\.q@HOST\s+BIP\s+\S+\s+(?P<m>\S+)"])
    assert out == "all.q@HOST                     BIP   0/0/2          *     lx-amd64\njob JOBID1 in CWD\n"
