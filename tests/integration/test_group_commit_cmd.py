"""Group commit of submissions (spool.py:GroupCommit) under a SIGKILL.

Many clients submit at once, each over its own connection, so that the
daemon always has a batch of submissions being written and synced; the
daemon is killed in the middle.  After the restart every job that got a
"yes" is there, whole (its spooled script, its name, it runs); no job is
there twice; the next job id is above every id given.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest
from cellutil import Cell, process_gone

from minisge import protocol
from minisge.formats import submit_options

pytestmark = pytest.mark.root

CLIENTS = 12


def script_of(name: str) -> str:
    return f"#!/bin/sh\necho {name}\n"


def request(c: Cell, name: str) -> dict:
    """A held script job named ``name``, as qsub sends it."""
    path = os.path.join(c.work, f"{name}.sh")

    def read_file(p: str) -> str:
        if p != path:
            raise FileNotFoundError(p)
        return script_of(name)

    req = submit_options.parse_submission(["-h", "-N", name, path], cwd=c.work, env={}, home=c.work, user="root",
                                          hostname=c.host, read_file=read_file)
    for k in ("sync", "sync_start", "terse", "warnings", "verify"):
        req.pop(k, None)
    return req


class Client(threading.Thread):
    """Submits over one connection until the daemon goes away."""

    def __init__(self, c: Cell, n: int, answered: dict[int, str], lock: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.cell, self.n, self.answered, self.lock = c, n, answered, lock
        self.in_flight: str | None = None  # the submission the daemon's end left without an answer

    def run(self) -> None:
        sock = protocol.connect_unix(os.path.join(self.cell.qmaster_spool, "qmaster.sock"), 30)
        try:
            for k in range(100000):
                name = f"g{self.n:02d}x{k:04d}"
                req = request(self.cell, name)
                self.in_flight = name
                try:
                    reply = protocol.request(sock, {"op": "submit", "request": req})
                except (OSError, protocol.ProtocolError):
                    return
                assert reply.get("ok"), reply
                self.in_flight = None
                with self.lock:
                    self.answered[int(reply["job_id"])] = name
        finally:
            sock.close()


def listed(c: Cell) -> list[tuple[int, str]]:
    """(job id, name) of every job qstat lists."""
    return [(int(p[0]), p[2]) for p in (ln.split() for ln in c.run("qstat", "-u", "*").out.splitlines()[2:])]


def test_a_daemon_killed_in_the_middle_of_group_commits_keeps_every_job_it_said_yes_to():
    c = Cell().start()
    try:
        answered: dict[int, str] = {}
        lock = threading.Lock()
        clients = [Client(c, n, answered, lock) for n in range(CLIENTS)]
        for t in clients:
            t.start()
        c.wait_for(lambda: len(answered) >= 150, what="150 submissions answered")
        pid = c.daemon_pid()
        os.kill(pid, signal.SIGKILL)
        c.wait_for(lambda: process_gone(pid), what="the daemon's end")
        for t in clients:
            t.join(30)
        unanswered = [t.in_flight for t in clients if t.in_flight is not None]
        assert unanswered, "no submission was in flight when the daemon was killed"
        with lock:
            said_yes = dict(answered)

        c.start()
        jobs = listed(c)
        ids = [j for j, _ in jobs]
        names = [n for _, n in jobs]
        assert len(set(ids)) == len(ids) and len(set(names)) == len(names), "a job is there twice"
        by_id = dict(jobs)
        lost = {j: n for j, n in said_yes.items() if by_id.get(j) != n}
        assert not lost, f"jobs answered yes and lost (or renamed): {lost}"
        # the others are submissions that were in flight (written, never answered)
        assert set(names) - set(said_yes.values()) <= set(unanswered)
        for j, name in said_yes.items():  # whole: the script spooled as it was sent
            with open(os.path.join(c.qmaster_spool, "job_scripts", str(j))) as f:
                assert f.read() == script_of(name), j
        # ids are not given again
        nxt = c.submit("-h", "-b", "y", "/bin/true")
        assert nxt > max(ids)
        # and they run: a few released end with their own output
        some = sorted(said_yes)[:: max(1, len(said_yes) // 3)][:3]
        r = c.run("qrls", *map(str, some))
        assert r.rc == 0, r
        for j in some:
            assert c.wait_records(j)[0][11] == "0"
            with open(os.path.join(os.path.expanduser("~root"), f"{said_yes[j]}.o{j}")) as f:
                assert f.read() == f"{said_yes[j]}\n"
            os.unlink(os.path.join(os.path.expanduser("~root"), f"{said_yes[j]}.o{j}"))
            os.unlink(os.path.join(os.path.expanduser("~root"), f"{said_yes[j]}.e{j}"))
    finally:
        c.cleanup()


def test_requests_sent_ahead_over_one_connection_are_answered_in_order_each_seeing_the_earlier_ones(cell):
    """Submissions pipelined over one connection are synced together, yet
    every request sees what the earlier ones did and the replies come in
    the order of the requests: a qdel of a job submitted just before it
    finds it, a -hold_jid on it names it."""
    sock = protocol.connect_unix(os.path.join(cell.qmaster_spool, "qmaster.sock"), 30)
    try:
        names = [f"pipe{k}" for k in range(20)]
        for name in names:
            protocol.send(sock, {"op": "submit", "request": request(cell, name)})
        protocol.send(sock, {"op": "qdel", "targets": ["pipe3"]})
        protocol.send(sock, {"op": "submit", "request": request(cell, "pipelast")})
        protocol.send(sock, {"op": "submit", "request": {**request(cell, "pipewait"), "hold_jid": ["pipelast"]}})
        replies = [protocol.recv(sock) for _ in range(len(names) + 3)]
    finally:
        sock.close()
    assert all(r["ok"] for r in replies), replies
    ids = [r["job_id"] for r in replies[:20]]
    assert ids == list(range(ids[0], ids[0] + 20)) and [r["name"] for r in replies[:20]] == names
    assert replies[20]["lines"] == [f"root has deleted job {ids[3]}"], replies[20]
    last, waiting = replies[21]["job_id"], replies[22]["job_id"]
    assert (last, waiting) == (ids[-1] + 1, ids[-1] + 2)
    listed_now = dict(listed(cell))
    assert ids[3] not in listed_now and all(listed_now[j] == f"pipe{k}" for k, j in enumerate(ids) if k != 3)
    detail = cell.run("qstat", "-j", str(waiting)).out
    assert f"jid_predecessor_list:       {last}" in detail, detail
