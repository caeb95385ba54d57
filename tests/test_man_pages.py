"""The manual pages (man/man1, man/man5): every command of cli/commands.py and
every file format minisge reads or writes has one, each renders without a
warning (``groff -ww``, as ``man -l`` renders it at 80 columns, and
``mandoc -T lint`` where mandoc is installed), and the exit-code table of
minisge_exit_codes(5) says what minisge/rules/exit_codes.py does.

CI (.ci/run) installs groff and mandoc; without groff the rendering tests
skip, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from minisge.cli.commands import COMMANDS
from minisge.rules import exit_codes

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAN = os.path.join(TOP, "man")

# every file format minisge reads or writes (issue 12), and the exit codes
FORMAT_PAGES = (
    "queue_conf", "complex", "sge_pe", "sge_resource_quota", "host_conf", "hostgroup", "access_list", "project",
    "sge_conf", "sched_conf", "accounting", "sge_request", "sge_types", "minisge_exit_codes",
)


def pages() -> list[str]:
    found = []
    for section in sorted(os.listdir(MAN)):
        directory = os.path.join(MAN, section)
        if section.startswith("man") and os.path.isdir(directory):
            found += [os.path.join(section, name) for name in sorted(os.listdir(directory))]
    return found


PAGES = pages()
GROFF = shutil.which("groff")
MANDOC = shutil.which("mandoc")


def test_every_command_has_a_page_in_man1():
    missing = [name for name in COMMANDS if f"man1/{name}.1" not in PAGES]
    assert not missing, f"no man/man1 page for {missing}"


def test_every_file_format_has_a_page_in_man5():
    missing = [name for name in FORMAT_PAGES if f"man5/{name}.5" not in PAGES]
    assert not missing, f"no man/man5 page for {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_the_page_is_named_for_its_section_and_title(page):
    section, name = page.split("/")
    stem, _, suffix = name.rpartition(".")
    assert section == f"man{suffix}", page
    with open(os.path.join(MAN, page), encoding="utf-8") as f:
        text = f.read()
    th = re.search(r"^\.TH (\S+) (\S+) ", text, re.M)
    assert th, f"{page}: no .TH line"
    assert (th.group(1), th.group(2)) == (stem.upper(), suffix), page
    name_section = re.search(r"^\.SH NAME\n(.*)$", text, re.M)
    assert name_section and name_section.group(1).startswith(stem + r" \- "), page


@pytest.mark.skipif(GROFF is None, reason="groff is not installed (apt-get install groff-base; .ci/run installs it)")
@pytest.mark.parametrize("page", PAGES)
def test_the_page_renders_without_warnings_in_groff(page):
    # as man(1) renders it on an 80-column terminal: tbl first, then -man
    r = subprocess.run([GROFF, "-t", "-ww", "-man", "-Tutf8", "-rLL=78n", "-rLT=78n", os.path.join(MAN, page)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert len(r.stdout.splitlines()) > 10, r.stdout
    assert max(len(line) for line in re.sub(r"\x1b\[[0-9;]*m|.\x08", "", r.stdout).splitlines()) <= 80, page


@pytest.mark.skipif(MANDOC is None, reason="mandoc is not installed (apt-get install mandoc; .ci/run installs it)")
@pytest.mark.parametrize("page", PAGES)
def test_the_page_passes_mandoc_lint(page):
    r = subprocess.run([MANDOC, "-T", "lint", "-W", "warning", os.path.join(MAN, page)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stdout and not r.stderr, r.stdout + r.stderr


# pages of other projects that minisge's pages may name
FOREIGN_PAGES = {"sge_shepherd(8)", "setrlimit(2)", "getrusage(2)", "fnmatch(3)", "man(7)"}


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_named_exist(page):
    """Every ``name(N)`` a page refers to is a page of man/ (or a known page
    of another project): no reference leads nowhere."""
    with open(os.path.join(MAN, page), encoding="utf-8") as f:
        text = f.read()
    named = {f"{m[0]}({m[1]})" for m in re.findall(r"^\.BR ([a-z_]+) \(([1-8])\)", text, re.M)}
    named |= {f"{m[0]}({m[1]})" for m in re.findall(r"\b([a-z_]+)\(([1-8])\)", text)}
    ours = {f"{p.split('/')[1].rpartition('.')[0]}({p.split('/')[0][3:]})" for p in PAGES}
    assert named - ours - FOREIGN_PAGES == set(), page


# ---------------------------------------------------------------- the exit codes page
def exit_code_rows() -> list[tuple[str, str, str]]:
    """(who, exit, failed) of each row of the EXIT CODES tables: the first
    table's rows are who, exit, failed, what; the second's event (its signal
    in parentheses), failed, what (its exit is \"-\")."""
    with open(os.path.join(MAN, "man5", "minisge_exit_codes.5"), encoding="utf-8") as f:
        text = f.read()
    section = text.split(".SH EXIT CODES", 1)[1].split("\n.SH ", 1)[0]
    rows: list[tuple[str, str, str]] = []
    for table in re.findall(r"^\.TS\n.*?\.\n(.*?)^\.TE$", section, re.M | re.S):
        table = re.sub(r"T\{\n(.*?)\nT\}", lambda m: m.group(1).replace("\n", " "), table, flags=re.S)
        for line in table.replace("\\-", "-").split("\n"):
            cells = [c.strip() for c in line.split("\t")]
            if len(cells) == 4:
                rows.append((cells[0], cells[1], cells[2]))
            elif len(cells) == 3:
                rows.append((cells[0], "-", cells[1]))
    return rows


def test_the_exit_codes_page_matches_the_rules():
    rows = exit_code_rows()
    procedures = {"prolog": "prolog", "pe_start": "pe_start", "pe_stop": "pe_stop", "epilog": "epilog"}
    checked = 0
    for who, code, failed in rows:
        if who in procedures:
            states = exit_codes.PROCEDURE_STATES[procedures[who]]
            if code == "0":
                assert failed == "-", (who, code, failed)
            elif code == "cannot start":
                assert failed == str(states.before), (who, code, failed)
            elif code == "other":
                assert failed == str(states.failed), (who, code, failed)
            else:
                codes = [int(c) for c in code.split(" / ")]
                assert failed == " / ".join(str(exit_codes.procedure_state(who, c)) for c in codes), (who, code)
            checked += 1
        elif who == "job":
            if code == "signal":
                assert failed == str(exit_codes.SSTATE_FAILURE_AFTER_JOB)
                outcome = exit_codes.job_outcome({"signal": 9, "exit_status": 137}, False, False)
                assert outcome.failed == exit_codes.SSTATE_FAILURE_AFTER_JOB
            elif code == "other":
                assert failed == "0" and exit_codes.job_state(3, False, False) == 0
            else:
                assert failed == str(exit_codes.job_state(int(code), False, False)), (who, code, failed)
            checked += 1
        elif who.startswith("execd: h_rt"):
            assert failed == str(exit_codes.SSTATE_QMASTER_ENFORCED_LIMIT)
            assert {"h_rt", "h_cpu", "h_vmem"} == set(exit_codes.ENFORCED_LIMITS)
            checked += 1
        elif who.startswith("shepherd killed"):
            assert failed == str(exit_codes.lost_shepherd_state(True))
            checked += 1
        elif who.startswith("host lost"):
            assert failed == str(exit_codes.lost_shepherd_state(False))
            checked += 1
    assert checked >= 20, rows


def test_the_exit_codes_page_says_what_the_procedures_failures_do():
    """The re-queue / error-state words of the table agree with failure_outcome."""
    for who, code, failed in exit_code_rows():
        if who in ("prolog", "pe_start", "epilog") and code == "other":
            outcome = exit_codes.failure_outcome(int(failed), "")
            assert outcome.requeue and outcome.queue_error and not outcome.job_error, who
        if who == "pe_stop" and code == "other":
            outcome = exit_codes.failure_outcome(int(failed), "")
            assert not outcome.requeue and outcome.queue_error, who
        if who == "prolog" and code == "cannot start":
            assert exit_codes.failure_outcome(int(failed), "").host_error
