"""A configuration change is read back, before it is written, by the code the
qmaster loads its spool with: a value that would stop the next start is
refused and nothing is written; a spool that does not load names FILE:LINE.

8.1.9 refuses a 513-character host name ("unable to resolve host", 100
characters of it shown); it takes a value with a new line inside and writes
what its own reader then reads differently (a ``tmpdir`` that sets ``slots``,
two managers for one): minisge refuses those.
"""

from __future__ import annotations

import os

import pytest
from cellutil import Cell

pytestmark = pytest.mark.root

H513 = "h" * 513
QUEUE = """qname                 {name}
hostlist              NONE
"""


def spool_files(c: Cell) -> dict[str, bytes]:
    """The configuration as the next start reads it (not the log, socket, pid, jobs)."""
    out = {}
    for top in (c.common, c.qmaster_spool):
        for dirpath, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in ("jobs", "job_scripts")]
            for fn in files:
                if fn in ("messages", "qmaster.pid", "qmaster.sock", "accounting"):
                    continue
                with open(os.path.join(dirpath, fn), "rb") as f:
                    out[os.path.join(dirpath, fn)] = f.read()
    return out


def a_file(c: Cell, name: str, text: str) -> str:
    path = os.path.join(c.work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def bad_requests(c: Cell) -> list[tuple[list[str], str]]:
    """(qconf arguments, what stderr says): each must be refused."""
    queue_file = a_file(c, "q", open(os.path.join(c.qmaster_spool, "cqueues", "all.q")).read()
                        .replace("qname                 all.q", "qname                 long.q")
                        .replace("@allhosts", H513))
    return [
        (["-aattr", "queue", "hostlist", H513, "all.q"], f'unable to resolve host "{"h" * 100}"\n'),
        (["-Aq", queue_file], f'error: error reading file: "{queue_file}"\n'),
        (["-aattr", "hostgroup", "hostlist", H513, "@allhosts"], "unable to resolve host"),
        (["-mattr", "queue", "tmpdir", "/tmp\nslots 99", "all.q"], "slots"),
        (["-mattr", "queue", "prolog", "/bin/true\nrerun TRUE", "all.q"], "rerun"),
        (["-mattr", "queue", "tmpdir", "/tmp@testhost=/var/tmp\nslots 99", "all.q"], ""),
        (["-am", "mallory\nroot2"], 'denied: "mallory\nroot2" is not a valid manager name\n'),
        (["-ao", "eve\n#x"], 'denied: "eve\n#x" is not a valid operator name\n'),
        (["-mattr", "exechost", "complex_values", "slots=1\nfoo bar", "testhost"], "foo"),
        (["-mattr", "pe", "start_proc_args", "/bin/true\nslots 5", "smp"], "slots"),
        (["-mattr", "queue", "slots", "99999999999999999999", "all.q"], "u_long32"),
    ]


def test_a_change_the_spool_could_not_load_is_refused_and_nothing_written(cell):
    before = spool_files(cell)
    for args, err in bad_requests(cell):
        r = cell.run("qconf", *args)
        assert r.rc != 0 and err in r.err, (args, r)
        assert r.out == "", (args, r)
        assert spool_files(cell) == before, args
    # the cell restarts from that spool, and still takes a good change
    cell.stop()
    cell.start()
    r = cell.run("qconf", "-mattr", "queue", "tmpdir", "/var/tmp", "all.q")
    assert r.rc == 0, r
    job = cell.submit("-b", "y", "/bin/true")
    cell.wait_records(job)


def test_a_spool_that_does_not_load_names_the_file_and_line(cell):
    cell.stop()
    path = os.path.join(cell.qmaster_spool, "cqueues", "all.q")
    text = open(path).read()
    lines = text.splitlines(keepends=True)
    n = next(i for i, ln in enumerate(lines) if ln.startswith("slots "))
    lines[n] = "slots                 many\n"
    with open(path, "w") as f:
        f.write("".join(lines))
    r = cell.minisge("start", "--hostname", cell.host, "--slots", "2", check=False)
    assert r.rc != 0
    messages = open(os.path.join(cell.qmaster_spool, "messages")).read()
    assert f"cannot start: {path}:{n + 1}: " in messages, messages[-2000:]
    assert "Traceback" not in messages
