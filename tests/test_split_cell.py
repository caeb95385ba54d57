"""A cell spread over hosts: minisge init --split, a new execd joining
@allhosts, and what minisge status says of each role."""

from __future__ import annotations

import os
import ssl
import stat
import time

from minisge.cell import Cell
from minisge.cli.minisge import status_lines
from minisge.daemon.cell_init import init_cell
from minisge.daemon.roles import qmaster_tls
from minisge.protocol import tls
from minisge.qmaster.execd_links import admit_execd_host
from minisge.qmaster.qmaster import Qmaster


def _qmaster(tmp_path, split: bool) -> Qmaster:
    cell = Cell(str(tmp_path))
    init_cell(cell, "master", slots=2, env={}, split=split)
    qm = Qmaster(cell, "master")
    qm.load()
    return qm


def test_a_split_cell_has_no_execution_host_on_the_master_and_an_empty_allhosts(tmp_path):
    qm = _qmaster(tmp_path, split=True)
    assert "master" not in qm.config.exec_hosts
    assert qm.config.hostgroups["@allhosts"].hostlist == ()
    assert qm.config.queue_instances() == []
    assert "master" in qm.config.names("submit_hosts") and "master" in qm.config.names("admin_hosts")
    assert qm.execd_joins == "@allhosts"
    assert Cell(str(tmp_path)).bootstrap()["security_mode"] == "cell_key"


def test_a_new_execd_joins_allhosts_once_and_spooled(tmp_path):
    qm = _qmaster(tmp_path, split=True)
    admit_execd_host(qm, "ws1")
    admit_execd_host(qm, "ws2")
    assert qm.config.hostgroups["@allhosts"].hostlist == ("ws1", "ws2")
    assert sorted(f"{c.qname}@{h}" for c, h in qm.config.queue_instances()) == ["all.q@ws1", "all.q@ws2"]
    spool = os.path.join(qm.cell.qmaster_spool, "hostgroups", "@allhosts")
    assert "hostlist ws1 ws2" in open(spool).read()
    again = Qmaster(qm.cell, "master")
    again.load()
    assert again.config.hostgroups["@allhosts"].hostlist == ("ws1", "ws2")
    # the admin takes ws1 out again: its next registration does not put it back
    again.config.put_object("hostgroups", "@allhosts",
                            type(again.config.hostgroups["@allhosts"])("@allhosts", ("ws2",)))
    admit_execd_host(again, "ws1")
    assert again.config.hostgroups["@allhosts"].hostlist == ("ws2",)


def test_in_a_cell_that_is_not_split_a_new_execd_joins_nothing_and_is_told(tmp_path, caplog):
    qm = _qmaster(tmp_path, split=False)
    assert qm.execd_joins is None
    admit_execd_host(qm, "ws1")
    assert qm.config.hostgroups["@allhosts"].hostlist == ("master",)
    assert "ws1" in qm.config.exec_hosts
    assert "qconf -aattr hostgroup hostlist ws1 @allhosts" in caplog.text


def test_status_of_a_split_cell_names_each_role_and_no_execd_on_the_master(tmp_path):
    cell = Cell(str(tmp_path))
    init_cell(cell, "master", slots=2, env={"SGE_QMASTER_PORT": "7444", "SGE_EXECD_PORT": "7445"}, split=True)
    now = time.time()
    reply = {"ok": True, "host": "master", "cell": "default", "jobs": 3, "role": "qmaster", "started": now - 3725,
             "execds": [{"host": "ws1", "address": "10.0.0.2", "since": now - 61, "used": 1, "slots": 2}]}
    lines = status_lines(cell, reply, 4242, "master", None)
    assert lines[0] == f"cell default in {tmp_path}: qmaster and scheduler running on master (pid 4242), 3 jobs"
    assert lines[1] == f"  port 7444, up 1:02:05, log {cell.messages}"
    assert lines[2] == "  execd ws1: connected from 10.0.0.2, up 0:01:01, slots 1/2 used"
    assert len(lines) == 3 and "execd running" not in "\n".join(lines)
    # nothing connected yet: said so
    lines = status_lines(cell, {**reply, "execds": []}, 4242, "master", None)
    assert lines[-1] == "  no execd connected: start one on each execution host (minisge execd)"


def test_status_on_a_workstation_names_its_execd_and_the_qmaster_elsewhere(tmp_path):
    cell = Cell(str(tmp_path))
    init_cell(cell, "master", slots=2, env={"SGE_QMASTER_PORT": "7444", "SGE_EXECD_PORT": "7445"}, split=True)
    os.makedirs(cell.execd_spool("ws1"))
    with open(cell.execd_pid_file("ws1"), "w") as f:
        f.write("99\n")
    reply = {"ok": True, "host": "master", "cell": "default", "jobs": 0, "role": "qmaster", "execds": []}
    lines = status_lines(cell, reply, None, "ws1", 99)
    assert lines[0].endswith("qmaster and scheduler running on master (on another host), 0 jobs")
    assert lines[-2].startswith("execd ws1 running on this machine (pid 99, up 0:00:0")
    assert lines[-2].endswith("), qmaster master port 7444")
    assert lines[-1] == f"  log {cell.execd_spool('ws1')}/messages"
    # the qmaster does not answer: the execd is still told
    lines = status_lines(cell, None, None, "ws1", 99)
    assert lines[0].startswith("execd ws1 running on this machine")
    assert lines[-1] == "  the qmaster does not answer through it"


def test_init_makes_the_cell_certificate_and_a_qmaster_of_an_older_cell_makes_one(tmp_path, caplog):
    cell = Cell(str(tmp_path))
    init_cell(cell, "master", slots=1, env={})
    assert stat.S_IMODE(os.stat(cell.tls_file).st_mode) == 0o600
    tls.server_context(cell.tls_file)
    tls.client_context(cell.tls_file)
    os.unlink(cell.tls_file)  # a cell made before there were certificates
    assert isinstance(qmaster_tls(cell), ssl.SSLContext)
    assert stat.S_IMODE(os.stat(cell.tls_file).st_mode) == 0o600
    assert "copy it to every execution host" in caplog.text
