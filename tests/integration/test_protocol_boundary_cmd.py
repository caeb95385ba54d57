"""The daemons check every message against the protocol catalogue at the boundary.

The security review's findings, through the real daemon and commands: a
crafted submission with fields of the wrong type is refused, names the
field, and changes nothing (nothing spooled, scheduling and qstat go on for
everyone, also after a restart); a job name with a newline cannot forge
qstat lines; and a peer daemon holding the cell key that sends junk has it
dropped and logged while its connection stays up.
"""

from __future__ import annotations

import os

import pytest
from cellutil import Cell, ensure_user

from minisge import cell as cell_mod
from minisge import protocol
from minisge.protocol import catalogue, handshake
from minisge.protocol.client import call

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="root only (jobs run as test users)")

USER = "msgeuser1"


@pytest.fixture(scope="module")
def one_cell():
    ensure_user(USER)
    c = Cell().start()
    try:
        yield c
    finally:
        c.cleanup()


def crafted(c: Cell, **fields) -> dict:
    """A submission as no qsub would send it."""
    spec = {"job_name": "crafted", "binary": True, "command": "/bin/true", "cwd": c.work, **fields}
    return call({"op": catalogue.SUBMIT, "request": spec}, cell=cell_mod.Cell(c.root))


def spooled_jobs(c: Cell) -> list[str]:
    return sorted(os.listdir(os.path.join(c.qmaster_spool, "jobs")))


def a_job_still_runs(c: Cell) -> None:
    r = c.run("qsub", "-sync", "y", "-b", "y", "/bin/true", user=USER, timeout=120)
    assert r.rc == 0 and "exited with exit code 0" in r.out, r


@pytest.mark.parametrize("field, value, named", [
    ("tc", "abc", '"tc" must be an integer'),
    ("pe", {"name": "smp", "ranges": 5}, '"pe.ranges" must be a list'),
    ("soft_queues", [1], '"soft_queues[0]" must be a non-empty string'),
    ("stdout_path", "/tmp/out", '"stdout_path" must be a list'),
    ("env", [["A", "b"]], '"env" must be an object'),
    ("cwd", ["/tmp"], '"cwd" must be a string'),
])
def test_a_submission_with_a_field_of_the_wrong_type_is_refused_and_changes_nothing(one_cell, field, value, named):
    before = spooled_jobs(one_cell)
    reply = crafted(one_cell, **{field: value})
    assert reply["ok"] is False and reply["rc"] == 1
    assert reply["error"].startswith(f"Unable to run job: job rejected: {named}")
    assert reply["error"].endswith("\nExiting.")
    assert spooled_jobs(one_cell) == before
    for user in (None, USER):  # qstat works for every user
        assert one_cell.run("qstat", "-u", "*", user=user).rc == 0
        assert one_cell.run("qstat", "-f", user=user).rc == 0
    assert queue_states(one_cell) == {"all.q@testhost": ""}  # no queue in error


def queue_states(c: Cell) -> dict[str, str]:
    out = {}
    for line in c.run("qstat", "-f").out.splitlines():
        if line.startswith("all.q@"):
            parts = line.split()
            out[parts[0]] = parts[5] if len(parts) > 5 else ""
    return out


def test_scheduling_goes_on_after_crafted_submissions_and_a_restart(one_cell):
    for fields in ({"tc": "abc"}, {"pe": {"name": "smp", "ranges": 5}}, {"soft_queues": [1]},
                   {"stdout_path": 7}, {"env": {"A": 5}}, {"cwd": {}}):
        assert crafted(one_cell, **fields)["ok"] is False
    a_job_still_runs(one_cell)
    one_cell.stop()
    one_cell.start()
    a_job_still_runs(one_cell)
    assert one_cell.run("qstat", "-u", "*", user=USER).rc == 0


def test_a_job_name_with_a_newline_is_refused_in_grid_engines_words(one_cell):
    expected = "Unable to run job: Return not allowed in objectname\nExiting."
    reply = crafted(one_cell, job_name="x\n1 0.5 forged root r 01/01/2026 00:00:00 all.q@testhost 1")
    assert reply == {"ok": False, "error": expected, "rc": 1}
    r = one_cell.run("qsub", "-N", "x\nforged", "-b", "y", "/bin/true")  # qsub refuses it itself, the same way
    assert (r.rc, r.err) == (1, expected + "\n")
    assert "forged" not in one_cell.run("qstat", "-u", "*").out
    # 8.1.9's qmaster fails on other control characters and on non-ASCII names
    assert crafted(one_cell, job_name="a\x1bb")["error"] == \
        "Unable to run job: Error reading answer list from qmaster\nExiting."


def test_an_array_over_max_aj_tasks_is_refused_as_8_1_9_does(one_cell):
    r = one_cell.run("qsub", "-t", "1-100000", "-b", "y", "/bin/true")
    assert (r.rc, r.err) == (1, "Unable to run job: job rejected: you tried to submit a job with more than "
                                "75000 tasks\nExiting.\n")
    assert crafted(one_cell, array=[1, 2**31 - 1, 1])["error"].startswith("Unable to run job: job rejected: you tried")


def test_a_request_without_op_or_with_junk_keeps_the_connection(one_cell):
    with protocol.connect_unix(os.path.join(one_cell.qmaster_spool, "qmaster.sock")) as sock:
        assert protocol.request(sock, {"nop": 1})["error"] == 'error: "op" must name an operation, not null'
        assert protocol.request(sock, {"op": "frobnicate"})["error"] == 'error: unknown operation "frobnicate"'
        assert protocol.request(sock, {"op": catalogue.QDEL, "targets": [["1"]]})["error"].startswith(
            'error: "targets[0]" must be a non-empty string')
        assert protocol.request(sock, {"op": catalogue.PING})["ok"] is True


# ---------------------------------------------------------------- between daemons


@pytest.fixture
def roles():
    c = Cell(host="master")
    try:
        c.start_roles(hosts=("node1",), slots=1)
        yield c
    finally:
        c.cleanup()


def _port(c: Cell) -> int:
    for line in open(os.path.join(c.common, "settings.sh")):
        if "SGE_QMASTER_PORT=" in line:
            return int(line.split("=")[1])
    raise AssertionError("no port")


def test_junk_from_an_execd_with_the_cell_key_is_dropped_and_logged_and_the_link_stays(roles):
    key = protocol.read_key(os.path.join(roles.common, "cell_key"))
    junk = [
        {"op": catalogue.TASK_END, "job_id": "1", "task_id": 1, "failed": 0, "usage": {}},
        {"op": catalogue.TASK_END, "job_id": 1, "task_id": 1, "failed": 0, "usage": []},
        {"op": catalogue.LOAD, "values": {"load_avg": [1]}},
        {"op": catalogue.PE_TASK_OUTPUT, "job_id": 1, "task_id": 1, "pe_task_id": "1.x", "stream": "in", "data": ""},
        {"op": catalogue.RELAY, "rid": 1, "host": "x", "pid": 1, "uid": "0", "gid": 0, "request": {}},
        {"op": catalogue.REGISTER, "known": []},  # only the first message registers
        {"op": "frobnicate"},
        {"nop": True},
    ]
    with handshake.connect_tcp("127.0.0.1", _port(roles), key, "execd", "crafty", expect_role="qmaster",
                               tls=roles.tls()) as sock:
        protocol.send(sock, {"op": catalogue.REGISTER, "known": [], "startup": False})
        for msg in junk:
            protocol.send(sock, msg)
        # the link is up: a relayed request is answered, a bad one refused in the catalogue's words
        for rid, request in ((7, {"op": catalogue.PING}), (8, {"op": catalogue.QDEL, "targets": 3})):
            protocol.send(sock, {"op": catalogue.RELAY, "rid": rid, "host": "crafty", "pid": 1, "uid": 0, "gid": 0,
                                 "request": request})
            answer = protocol.recv(sock)
            while answer.get("op") != catalogue.RELAY_REPLY:  # whatever else the qmaster sends an execd
                answer = protocol.recv(sock)
            assert answer["rid"] == rid
            if rid == 7:
                assert answer["reply"]["ok"] is True
            else:
                assert answer["reply"]["error"] == 'error: "targets" must be a list of a non-empty string, not 3'
    with open(os.path.join(roles.qmaster_spool, "messages")) as f:
        log = f.read()
    assert log.count("dropped an invalid message from execd crafty") == len(junk)
    assert "Traceback" not in log
    r = roles.run("qsub", "-sync", "y", "-b", "y", "/bin/true", user=ensure_user(USER).pw_name, timeout=120)
    assert r.rc == 0, r


def test_a_bad_request_on_an_execds_socket_is_refused_there_and_a_good_one_relayed(roles):
    path = os.path.join(roles.root, "default", "spool", "node1", "execd.sock")
    with protocol.connect_unix(path) as sock:
        reply = protocol.request(sock, {"op": catalogue.SUBMIT, "request": {"job_name": "x", "command": "y",
                                                                             "tc": "abc"}})
        assert reply["error"].startswith('Unable to run job: job rejected: "tc" must be an integer')
        assert protocol.request(sock, {"op": catalogue.PING})["host"] == "master"
