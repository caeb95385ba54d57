"""A user's text never breaks a line of output or reaches a terminal as a
control sequence (qstat, qstat -j, qacct); text without those prints as
Grid Engine 8.1.9 prints it."""

from __future__ import annotations

import pytest

from minisge.formats import submit_options
from minisge.output import job_detail_out, qacct_out, qstat_out
from minisge.output.text import printable


@pytest.mark.parametrize("text, shown", [
    ("plain/path with blanks,=:", "plain/path with blanks,=:"),
    ("caf\xe9 \u4e2d", "caf\xe9 \u4e2d"),
    ("tab\tkept", "tab\tkept"),
    ("a\nb", "a\\nb"),
    ("a\r\nb", "a\\r\\nb"),
    ("red \x1b[31m", "red \\x1b[31m"),
    ("del\x7f c1\x85", "del\\x7f c1\\x85"),
    ("line\u2028sep", "line\\u2028sep"),
    ("bidi\u202eevil", "bidi\\u202eevil"),
    ("byte\udcff", "byte\\xff"),
    (42, "42"),
])
def test_printable(text, shown):
    assert printable(text) == shown


def test_qstat_j_keeps_a_users_text_on_its_line():
    job = {"job_number": 7, "owner": "u", "group": "g", "job_name": "ok",
           "cwd": "/tmp/w\nd", "env_list": [("X", "1\nowner: root"), ("Y", "\x1b]0;title\x07")],
           "context": [("C", "p\nq")], "job_args": ["a\nb"], "stdout_path_list": [(None, "/tmp/o\nx")],
           "account": "sge", "tasks": [{"task_number": 1, "messages": ["can't open /tmp/o\nx"]}]}
    out = job_detail_out.format_job_detail(job, ["scheduling info\nforged"])
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    assert "env_list:                   X=1\\nowner: root,Y=\\x1b]0;title\\x07" in lines
    assert "cwd:                        /tmp/w\\nd" in lines
    assert "context:                    C=p\\nq" in lines
    assert "job_args:                   a\\nb" in lines
    assert "stdout_path_list:           NONE:NONE:/tmp/o\\nx" in lines
    assert not any(line.startswith(("owner: root", "forged", "q", "d", "x")) for line in lines)


def test_qstat_job_list_shows_an_old_job_name_without_its_control_characters():
    job = {"job_number": 1, "name": "a\nb\x1b", "owner": "u", "submission_time": 0, "slots": 1, "state": "qw"}
    out = qstat_out.format_job_list([job])
    assert len(out.splitlines()) == 3 and "a\\nb\\x1b" in out


def test_qacct_shows_a_records_text_without_control_characters():
    record = {"qname": "all.q", "hostname": "h", "group": "g", "owner": "u", "job_name": "x\x1b[2J",
              "account": "a\rb", "category": "-l h=\x07"}
    out = qacct_out.format_qacct_job(record)
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "jobname      x\\x1b[2J" in out


@pytest.mark.parametrize("account, reason", [
    ("a:b", "Colon (':') not allowed in objectname"),
    ("a/b", "Slash ('/') not allowed in objectname"),
    ("a@b", "At ('@') not allowed in objectname"),
    ("a\nb", "Return not allowed in objectname"),
    ("a\tb", "Tab not allowed in objectname"),
    ("a\x1bb:c", "Colon (':') not allowed in objectname"),
    ("NONE", 'Keyword ("NONE") not allowed as objectname'),
    ("template", 'Keyword ("TEMPLATE") not allowed as objectname'),
    ("a" * 600, "string is longer than 512, this is not allowed for objectnames"),
    ("a b", "Error reading answer list from qmaster"),
    ("\xe9", "Error reading answer list from qmaster"),
    ("1abc", None), ("a,b", None), ("a=b", None), ("a[b", None), ("", None), (None, None),
])
def test_an_account_follows_8_1_9s_object_name_rules(account, reason):
    # measured on Grid Engine 8.1.9: qsub -A ACCOUNT
    assert submit_options.account_error(account) == reason
    request = {"job_name": "j", "account": account}
    assert submit_options.qmaster_rejection(request) == reason
