"""sge_rsmap(5) through the real daemons: a host offers gpu=2(0 1), jobs
asking -l gpu=1 each get their own instance (SGE_HGR_gpu and
CUDA_VISIBLE_DEVICES in their environment, qstat -j's resource_map line),
a third waits with the consumable's reason, and a restarted qmaster keeps
the grants."""

from __future__ import annotations

import os

import pytest
from cellutil import BINARY, Cell, ensure_user, script
from test_qrsh_cmd import SYSTEM_PYTHON, qrsh_for_jobs

pytestmark = pytest.mark.root

USER = "rsmapuser"
GPU = "gpu gpu RSMAP <= YES YES 0 0\n"


@pytest.fixture(scope="module")
def cell():
    ensure_user(USER)
    c = Cell(slots=4).start()
    try:
        r = c.run("qconf", "-sc")
        path = os.path.join(c.work, "complex.txt")
        with open(path, "w") as f:
            f.write(r.out + GPU)
        r = c.run("qconf", "-Mc", path)
        assert r.rc == 0, r
        yield c
    finally:
        c.cleanup()


def _env_job(c: Cell, go: str) -> str:
    return script(c, "gpujob.sh", f"echo \"$SGE_HGR_gpu|$CUDA_VISIBLE_DEVICES\" > {c.work}/env.$JOB_ID\n"
                                  f"while [ ! -e {go} ]; do sleep 0.1; done")


def _granted(c: Cell, job: int) -> str:
    path = os.path.join(c.work, f"env.{job}")
    return c.wait_for(lambda: os.path.exists(path) and (s := open(path).read()) and s.strip(),
                      what=f"job {job}'s environment")


def test_qconf_refuses_bad_resource_maps(cell):
    r = cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2(0)", cell.host)
    assert r.rc != 0 and 'RSMAP "gpu" value "2(0)" has amount 2 but 1 elements' in r.out + r.err, r
    r = cell.run("qconf", "-mattr", "queue", "complex_values", "gpu=2", "all.q")
    assert r.rc != 0 and "cannot be attached to a queue" in r.out + r.err, r
    r = cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=1", "global")
    assert r.rc != 0 and "global host" in r.out + r.err, r


def test_qconf_keeps_a_resource_map_in_its_long_form(cell):
    for value in ("gpu=3", "gpu=3(0-2)"):
        r = cell.run("qconf", "-mattr", "exechost", "complex_values", value, cell.host)
        assert r.rc == 0, r
        assert "complex_values        gpu=3(0 1 2)\n" in cell.run("qconf", "-se", cell.host).out


def test_jobs_get_distinct_instances_a_third_waits_and_a_restart_keeps_them(cell):
    r = cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=2(0 1)", cell.host)
    assert r.rc == 0, r
    assert "complex_values        gpu=2(0 1)" in cell.run("qconf", "-se", cell.host).out
    go = os.path.join(cell.work, "go")
    job_script = _env_job(cell, go)
    first, second, third = (cell.submit("-l", "gpu=1", job_script, user=USER) for _ in range(3))
    a, b = _granted(cell, first), _granted(cell, second)
    assert sorted([a, b]) == ["0|0", "1|1"]
    detail = cell.run("qstat", "-j", str(first)).out
    assert f"resource_map  1:            gpu={cell.host}=({a[0]})\n" in detail, detail
    cell.wait_for(lambda: "because it offers only hc:gpu=0.000000" in cell.run("qstat", "-j", str(third)).out,
                  what="the third job's reason")
    assert not os.path.exists(os.path.join(cell.work, f"env.{third}"))
    assert "hc:gpu=0.000000" in cell.run("qhost", "-F", "gpu").out  # counted as any consumable

    cell.stop()
    cell.start()
    detail = cell.run("qstat", "-j", str(first)).out
    assert f"resource_map  1:            gpu={cell.host}=({a[0]})\n" in detail, detail
    cell.wait_for(lambda: "because it offers only hc:gpu=0.000000" in cell.run("qstat", "-j", str(third)).out,
                  what="the third job still waits after the restart")

    r = cell.run("qdel", str(first))
    assert r.rc == 0, r
    assert _granted(cell, third) == a  # the instance the first job held, and no other
    open(go, "w").close()
    for job in (second, third):
        cell.wait_records(job)
    # accounting(5): minisge's 46th field; qacct -j shows it after the category
    assert cell.records_of(third)[0][-1] == f"gpu={cell.host}=({a[0]})"
    r = cell.run("qacct", "-j", str(third))
    assert f"resource_map gpu={cell.host}=({a[0]})\n" in r.out, r
    r = cell.run("qacct", "-j", str(second))
    assert f"resource_map gpu={cell.host}=({b[0]})\n" in r.out, r


@pytest.mark.skipif(not BINARY and not os.access(SYSTEM_PYTHON, os.X_OK), reason="needs a Python the test user may run")
def test_a_pe_job_gets_instances_per_host_and_its_slave_task_sees_its_host_s():
    """Two execds posing as node1 (gpu=2(GPU0 GPU1)) and node2 (gpu=2(0 1)),
    a tight PE of $round_robin: -pe tight 2 -l gpu=1 holds one instance on
    each host; the master task sees node1's, a qrsh -inherit task on node2
    sees node2's (and CUDA_VISIBLE_DEVICES, its names being indices)."""
    c = Cell(host="master").start_roles(("node1", "node2"), slots=2)
    try:
        path = os.path.join(c.dir, "tight.pe")
        with open(path, "w") as f:
            f.write("pe_name tight\nslots 99\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
                    "stop_proc_args NONE\nallocation_rule $round_robin\ncontrol_slaves TRUE\n"
                    "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
        for args in (("-Ap", path), ("-mattr", "queue", "pe_list", "tight", "all.q")):
            r = c.run("qconf", *args)
            assert r.rc == 0, r
        r = c.run("qconf", "-sc")
        complexes = os.path.join(c.work, "complex.txt")
        with open(complexes, "w") as f:
            f.write(r.out + GPU)
        assert c.run("qconf", "-Mc", complexes).rc == 0
        for node, value in (("node1", "gpu=2(GPU0 GPU1)"), ("node2", "gpu=2(0 1)")):
            r = c.run("qconf", "-mattr", "exechost", "complex_values", value, node)
            assert r.rc == 0, r
        qrsh = qrsh_for_jobs(c)
        out = os.path.join(c.work, "pe.out")
        body = (f"#!/bin/sh\necho \"master $HOSTNAME $SGE_HGR_gpu|$CUDA_VISIBLE_DEVICES\"\n"
                f"{qrsh} -inherit -nostdin node2 'echo \"slave $HOSTNAME $SGE_HGR_gpu|$CUDA_VISIBLE_DEVICES\"'\n")
        job = c.submit("-pe", "tight", "2", "-l", "gpu=1", "-j", "y", "-o", out, user=USER, input=body)
        c.wait_records(job)
        with open(out) as f:
            text = f.read()
        assert "master node1 GPU0|\n" in text and "slave node2 0|0\n" in text, text
    finally:
        c.cleanup()
