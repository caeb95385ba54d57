"""Outputs captured from the real Grid Engine 8.1.9, and the one way both
sides are normalised before they are compared.

A golden file (``tests/golden/<command>/<case>``, its stderr in
``<case>.stderr``) starts with a header that says how it was made::

    # command: qstat -j 12
    # user: sgetest
    # exit: 0
    # ----
    <the output, byte for byte>

Further ``# name: value`` lines before ``# ----`` are kept in
:attr:`Golden.fields` (the conformance captures record the peer's job ids
and host there: ``# jobs: 88 89``, ``# host: vm``).  ``relpath`` may also be
an absolute path (a capture beside its case in tests/conformance/cases/).

Only what differs between two cells by nature is normalised: job ids (each
distinct id of the given list becomes JOBID1, JOBID2... in the order given),
dates and times, host names, paths and the cell's name.
"""

from __future__ import annotations

import os
import re

from minisge.cli import qacct, qhost, qquota, qstat

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")

_DATES = [
    (re.compile(r"\b\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}(\.\d{3})?\b"), "MM/DD/YYYY hh:mm:ss"),  # qstat
    (re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\b"), "YYYY-MM-DDThh:mm:ss"),  # -xml
    (re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                r"[ \d]\d \d{2}:\d{2}:\d{2}(\.\d{3})? \d{4}\b"), "Www Mmm DD hh:mm:ss YYYY"),  # qstat -j, qacct
]


#: The usage lines minisge adds to 8.1.9's: ``-fmt`` (Open Cluster Scheduler 9's
#: option, minisge's JSON views), the one deliberate difference in a usage text.
FMT_USAGE_LINES = (qstat.FMT_USAGE, qhost.FMT_USAGE, qquota.FMT_USAGE, qacct.FMT_USAGE)


def without_fmt_usage(text: str) -> str:
    """``text`` without the ``-fmt`` lines minisge adds to a usage text."""
    for line in FMT_USAGE_LINES:
        text = text.replace(line, "")
    return text


class Golden:
    """One captured case: its header fields and its text."""

    def __init__(self, command: str, user: str, exit: int, text: str, fields: dict[str, str] | None = None):
        self.command = command
        self.user = user
        self.exit = exit
        self.text = text
        self.fields = dict(fields or {})


def read_golden(relpath: str) -> Golden:
    """The golden file ``tests/golden/<relpath>``."""
    with open(os.path.join(GOLDEN, relpath), encoding="utf-8", errors="surrogateescape", newline="") as f:
        data = f.read()
    head, sep, text = data.partition("# ----\n")
    if not sep:
        raise ValueError(f"{relpath}: no '# ----' line after the header")
    fields = dict(ln[2:].split(": ", 1) for ln in head.splitlines() if ln.startswith("# ") and ": " in ln)
    return Golden(fields.get("command", ""), fields.get("user", ""), int(fields.get("exit", "0")), text, fields)


def write_golden(relpath: str, command: str, user: str, exit: int, text: str,
                 fields: dict[str, str] | None = None) -> None:
    """Write a capture (used where the peer runs, by hand or by a capture
    script); ``fields`` are further header lines after ``# exit:``."""
    path = os.path.join(GOLDEN, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    extra = "".join(f"# {name}: {value}\n" for name, value in (fields or {}).items())
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(f"# command: {command}\n# user: {user}\n# exit: {exit}\n{extra}# ----\n{text}")


def normalise(text: str, *, job_ids: tuple[int, ...] | list[int] = (), hosts: tuple[str, ...] | list[str] = (),
              paths: dict[str, str] | None = None, cell: str | None = None,
              users: dict[str, str] | None = None) -> str:
    """``text`` with what differs between two cells by nature replaced:
    ``job_ids`` (JOBID1, JOBID2... in that order; an id that opens a line
    after spaces is a right-aligned column and keeps the column's width,
    "     51" and "      1" both give " JOBID1"; elsewhere the spaces
    before it stay as they are, "job_number:   51" gives
    "job_number:   JOBID1"; one padded at the end of a line keeps that
    width, "jobnumber    51    " gives "jobnumber    JOBID1"), dates,
    ``hosts`` (HOST; padded with two or more spaces it keeps its column's width),
    ``paths`` (each key replaced by its value; longest first), ``cell``
    (CELL) and ``users`` (each user name, a whole word, replaced by its
    value: the peer's submit users and a test's are not the same), and
    without the ``-fmt`` usage lines only minisge prints (:func:`without_fmt_usage`)."""
    text = without_fmt_usage(text)
    for prefix, name in sorted((paths or {}).items(), key=lambda kv: -len(kv[0])):
        text = text.replace(prefix, name)
    for user, name in sorted((users or {}).items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"(?<![\w.-]){re.escape(user)}(?![\w-])", name, text)
    for pattern, name in _DATES:
        text = pattern.sub(name, text)
    for n, job_id in enumerate(job_ids, 1):
        token = f"JOBID{n}"
        # a right-aligned id keeps its column's width: "     51" and "      1" both give " JOBID1"
        text = re.sub(rf"^( *){job_id}(?!\d)", lambda m, t=token: t.rjust(len(m.group(0))), text,
                      flags=re.MULTILINE)
        # a left-aligned id padded to its column's width at the end of a line (qacct's "jobnumber    51   ")
        text = re.sub(rf"(?<![\w.]){job_id}( +)$", lambda m, t=token: t.ljust(len(m.group(0))), text,
                      flags=re.MULTILINE)
        # after a label or in a sentence the id is left-aligned: the spaces before it are the label's
        text = re.sub(rf"(?<![\w.]){job_id}(?!\d)", token, text)
    for host in sorted(hosts, key=len, reverse=True):
        # a host padded in a column ("all.q@vm" and two or more spaces) keeps the column's width
        text = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])(  +)?",
                      lambda m, h=host: "HOST" + (" " * max(1, len(h) + len(m.group(1)) - 4) if m.group(1) else ""),
                      text)
    if cell:
        text = re.sub(rf"(?<![\w.-]){re.escape(cell)}(?![\w-])", "CELL", text)
    return text
