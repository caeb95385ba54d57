"""Upgrades keep working: a cell spooled by minisge 0.1.0 (tests/data/cell-0.1.0,
made as tests/data/README.md tells, never to be regenerated) is started by
today's minisge.  Every job, queue, quota set, project, configuration and
queue instance state it held is there, the accounting of before is read, and
the jobs run.  The same for the last cell of spool version 1
(tests/data/spool-1, made by main at 42bb850); both are brought to this
minisge's spool version (minisge.daemon.spool_version), and a cell of a newer
or unreadable version is refused with what to run."""

from __future__ import annotations

import os

import pytest
from cellutil import Cell

import minisge
from minisge.daemon.spool_version import SPOOL_VERSION

pytestmark = pytest.mark.root

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "cell-0.1.0")
SPOOL_1 = os.path.join(os.path.dirname(DATA), "spool-1")
# directories 0.1.0 made empty, which git does not keep
EMPTY_DIRS = ("calendars", "ckpt", "users", "zombies")

# accounting(5) field positions (0-based)
QNAME, HOSTNAME, JOB_NAME, JOB_NUMBER, START, END, FAILED, EXIT_STATUS, TASK_NUMBER, GRANTED_PE, SLOTS = (
    0, 1, 4, 5, 9, 10, 11, 12, 35, 33, 34)


def lay_down(c: Cell, data: str = DATA) -> None:
    """Copy the saved cell into ``c``'s SGE_ROOT as cell ``default``, the
    placeholders (@@HOST@@, @@SGE_ROOT@@, @@WORK@@, in names and texts)
    replaced by this cell's host, root and work directory."""
    subst = {"@@HOST@@": c.host, "@@SGE_ROOT@@": c.root, "@@WORK@@": c.work}

    def fill(text: str) -> str:
        for placeholder, value in subst.items():
            text = text.replace(placeholder, value)
        return text

    cell_dir = os.path.join(c.root, "default")
    for dirpath, _dirs, files in os.walk(data):
        target = os.path.normpath(os.path.join(cell_dir, fill(os.path.relpath(dirpath, data))))
        os.makedirs(target, exist_ok=True)
        for name in files:
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                text = fill(f.read())
            with open(os.path.join(target, fill(name)), "w", encoding="utf-8") as f:
                f.write(text)
    for d in EMPTY_DIRS:
        os.makedirs(os.path.join(c.qmaster_spool, d), exist_ok=True)
    os.chmod(os.path.join(c.common, "cell_key"), 0o600)  # git keeps no mode but x


@pytest.fixture
def old_cell():
    c = Cell()
    try:
        lay_down(c)
        c.start()
        yield c
    finally:
        c.cleanup()


def qstat_j(c: Cell, job: int) -> dict[str, str]:
    """``qstat -j JOB`` as {field: value} (continuation lines left out)."""
    r = c.run("qstat", "-j", str(job))
    assert r.rc == 0, r
    out = {}
    for line in r.out.splitlines():
        key, sep, value = line.partition(":")
        if sep and not key.startswith(" "):
            out[key] = value.strip()
    return out


def test_the_saved_cell_lays_down_complete():
    # the data itself: what the other test relies on is all there
    names = {os.path.relpath(os.path.join(d, f), DATA) for d, _, fs in os.walk(DATA) for f in fs}
    for must in ("common/configuration", "common/sched_configuration", "common/accounting", "common/cell_key",
                 "common/local_conf/@@HOST@@", "spool/qmaster/cqueues/all.q", "spool/qmaster/cqueues/old.q",
                 "spool/qmaster/resource_quotas/maxslots", "spool/qmaster/projects/upgproj",
                 "spool/qmaster/qinstance_states", "spool/qmaster/jobseqnum", "spool/qmaster/job_scripts/8"):
        assert must in names, must
    assert len([n for n in names if n.startswith("spool/qmaster/jobs/")]) == 8  # jobs 2 to 9


def test_a_cell_of_0_1_0_starts_with_all_it_held_and_runs_its_jobs(old_cell):
    c = old_cell
    # ---------------------------------------------------------------- the jobs
    # job 2 was running when 0.1.0 stopped; its execd's spool was not kept, so
    # it was never started as far as this cell knows: back to pending, to run once
    assert c.qstat_states() == {2: "qw", 3: "hqw", 4: "qw", 5: "qw", 6: "hqw", 7: "qw", 8: "qw", 9: "qw"}
    assert qstat_j(c, 4)["job-array tasks"] == "1-3:1"
    assert qstat_j(c, 5)["parallel environment"] == "smp range: 2"
    assert qstat_j(c, 6)["jid_predecessor_list (req)"] == "3"
    seven = qstat_j(c, 7)
    assert (seven["hard_queue_list"], seven["project"], seven["hard resource_list"]) == ("old.q", "upgproj",
                                                                                         "h_rt=0:10:0")
    assert seven["cwd"] == c.work
    nine = qstat_j(c, 9)
    assert (nine["env_list"], nine["priority"]) == ("UPGRADE_VAR=kept", "-100")
    assert qstat_j(c, 8)["job_name"] == "scripted"  # from the script's #$ -N

    # ------------------------------------------------- configuration and objects
    assert c.run("qconf", "-sql").out == "all.q\nold.q\n"
    old_q = c.run("qconf", "-sq", "old.q").out
    assert "\nslots                 1\n" in old_q and "\nh_rt                  1:0:0\n" in old_q
    rqs = c.run("qconf", "-srqs", "maxslots").out
    assert "limit        users {*} to slots=10" in rqs and "enabled      TRUE" in rqs
    assert "name upgproj" in c.run("qconf", "-sprj", "upgproj").out
    assert "\nmaxujobs                          50\n" in c.run("qconf", "-ssconf").out
    assert "\nmax_u_jobs                   100\n" in c.run("qconf", "-sconf").out
    assert c.run("qconf", "-sconf", c.host).out.split()[-2:] == ["mailer", "/bin/true"]
    assert c.run("qconf", "-spl").out == "make\nsmp\n"
    states = {ln.split()[0]: ln.split()[5] for ln in c.run("qstat", "-f").out.splitlines() if "@" in ln}
    assert states == {f"all.q@{c.host}": "d", f"old.q@{c.host}": "d"}
    before = c.records_of(1)
    assert len(before) == 1 and (before[0][JOB_NAME], before[0][HOSTNAME]) == ("finished", c.host)
    r = c.run("qacct", "-j", "1")
    assert r.rc == 0 and "jobname      finished" in r.out, r

    # -------------------------------------------------------------- and they run
    assert c.run("qmod", "-e", "all.q", "old.q").rc == 0
    assert c.run("qrls", "3").rc == 0
    c.wait_for(lambda: c.qstat_states().get(2) == "r", what="job 2 running again")
    assert c.run("qdel", "2").rc == 0
    for job in (3, 5, 6, 7, 8, 9):
        (rec,) = c.wait_records(job)
        assert (rec[FAILED], rec[EXIT_STATUS]) == ("0", "0"), rec
    assert sorted(r[TASK_NUMBER] for r in c.wait_records(4, 3)) == ["1", "2", "3"]
    assert c.wait_records(2)[0][FAILED] == "100"  # qdel of a running job
    assert int(c.records_of(6)[0][START]) >= int(c.records_of(3)[0][END])  # after its predecessor
    assert (c.records_of(5)[0][GRANTED_PE], c.records_of(5)[0][SLOTS]) == ("smp", "2")
    assert c.records_of(7)[0][QNAME] == "old.q"
    with open(os.path.join(c.work, "envjob.o9")) as f:
        assert f.read() == "kept\n"  # printenv UPGRADE_VAR
    with open(os.path.join(c.work, "scripted.o8")) as f:
        assert f.read() == "scripted 8 scripted\n"
    # the job numbers go on
    assert c.submit("-b", "y", "/bin/true") == 10


def assert_upgraded(c: Cell, qport: str, eport: str) -> None:
    """The cell's files are of this minisge's spool version: the version
    file, settings.sh with PATH and MANPATH (its ports kept), settings.csh."""
    with open(os.path.join(c.common, "spool_version")) as f:
        assert f.read().splitlines()[-1] == f"spool_version {SPOOL_VERSION}"
    with open(os.path.join(c.common, "settings.sh")) as f:
        settings = f.read()
    assert f"export SGE_QMASTER_PORT={qport}\n" in settings and f"export SGE_EXECD_PORT={eport}\n" in settings
    assert "PATH=" in settings and "MANPATH=" in settings
    assert os.path.exists(os.path.join(c.common, "settings.csh"))
    with open(os.path.join(c.qmaster_spool, "messages")) as f:
        assert f"upgraded the cell's files in {c.root}/default to spool version {SPOOL_VERSION}" in f.read()


def test_a_cell_of_0_1_0_is_brought_to_this_spool_version(old_cell):
    assert_upgraded(old_cell, "45623", "59341")


@pytest.fixture
def spool_1_cell():
    c = Cell()
    try:
        lay_down(c, SPOOL_1)
        yield c
    finally:
        c.cleanup()


def test_the_last_cell_of_spool_version_1_starts_with_all_it_held_and_runs_its_jobs(spool_1_cell):
    c = spool_1_cell.start()
    assert_upgraded(c, "16444", "16445")
    assert c.qstat_states() == {2: "hqw", 3: "qw", 4: "qw"}
    assert "\nh_rt                  1:0:0\n" in c.run("qconf", "-sq", "all.q").out
    states = {ln.split()[0]: ln.split()[5] for ln in c.run("qstat", "-f").out.splitlines() if "@" in ln}
    assert states == {f"all.q@{c.host}": "d"}
    r = c.run("qacct", "-j", "1")
    assert r.rc == 0 and "jobname      finished" in r.out, r
    assert c.run("qmod", "-e", "all.q").rc == 0
    assert sorted(r[TASK_NUMBER] for r in c.wait_records(3, 3)) == ["1", "2", "3"]
    (rec,) = c.wait_records(4)
    assert (rec[FAILED], rec[EXIT_STATUS]) == ("0", "0"), rec
    with open(os.path.join(c.work, "scripted.o4")) as f:
        assert f.read() == "scripted 4 scripted\n"
    assert c.qstat_states() == {2: "hqw"}
    assert c.submit("-b", "y", "/bin/true") == 5


def _files(c: Cell) -> dict[str, str]:
    out = {}
    for d, _, names in os.walk(os.path.join(c.root, "default")):
        for n in names:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.join(d, n)] = f.read().decode("utf-8", "replace")
    return out


@pytest.mark.parametrize("says", [f"# written by minisge 9.0\nspool_version {SPOOL_VERSION + 1}\n", "banana\n"])
def test_a_cell_of_a_newer_or_unknown_spool_version_is_refused_with_what_to_run(spool_1_cell, says):
    c = spool_1_cell
    version_file = os.path.join(c.common, "spool_version")
    with open(version_file, "w") as f:
        f.write(says)
    before = _files(c)
    r = c.minisge("start", "--hostname", c.host, check=False)
    assert r.rc == 1 and r.out == ""
    readable = f"this minisge {minisge.__version__} reads spool versions 1 to {SPOOL_VERSION}"
    if "9.0" in says:
        expected = (f"minisge: cannot start: the cell in {c.root}/default has spool version {SPOOL_VERSION + 1} "
                    f"(written by minisge 9.0), newer than {readable}: start it with the minisge that made it "
                    f"('. {c.common}/settings.sh' puts it first in PATH, then 'minisge start'), or install that "
                    "minisge here\n")
    else:
        expected = (f"minisge: cannot start: {version_file} says 'banana', not 'spool_version N' ({readable}): "
                    "start the cell with the minisge that made it, or write the line back "
                    f"('spool_version {SPOOL_VERSION}' for a cell of this minisge)\n")
    assert r.err.startswith(expected), r.err
    assert r.err.endswith(f"minisge: the daemon exited with status 1; see {c.qmaster_spool}/messages\n")
    after = _files(c)
    # the refused start changed nothing but the log (and the daemon's output file)
    logs = {os.path.join(c.qmaster_spool, n) for n in ("messages", "daemon.out")}
    assert {k: v for k, v in after.items() if k not in logs} == {k: v for k, v in before.items() if k not in logs}
    with open(os.path.join(c.qmaster_spool, "messages")) as f:
        assert f"cannot start: {expected.removeprefix('minisge: cannot start: ')}" in f.read()
