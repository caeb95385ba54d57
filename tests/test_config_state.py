"""The qmaster's configuration (minisge.qmaster.config_state.ConfigState):
objects changed by kind, the name lists, load values, its caches."""

from __future__ import annotations

import attrs
import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats import hostgroup, queue_conf
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.spool import QmasterSpool


@pytest.fixture
def config(tmp_path):
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=1, env={})
    cfg = ConfigState(QmasterSpool(cell), "h1")
    cfg.load()
    return cfg


def test_objects_are_put_and_removed_by_kind(config):
    q = attrs.evolve(queue_conf.template("b.q"), hostlist=("h1",))
    config.put_object("cqueues", "b.q", q)
    assert config.objects("cqueues")["b.q"] is q and list(config.cqueues) == ["all.q", "b.q"]
    config.remove_object("cqueues", "b.q")
    assert "b.q" not in config.cqueues
    with pytest.raises(KeyError):
        config.objects("nosuchkind")


def test_a_replaced_object_refreshes_what_is_derived_from_it(config):
    assert {n for n, _h in [(c.qname, h) for c, h in config.queue_instances()]} == {"all.q"}
    before = config.config_key()
    config.put_object("hostgroups", "@more", hostgroup.HostGroup("@more", ("h2",)))
    assert "@more" in config.group_members() and config.config_key() != before
    conf = config.cqueues["all.q"]
    config.put_object("cqueues", "all.q", attrs.evolve(conf, hostlist=("h1", "@more")))
    assert sorted(h for _c, h in config.queue_instances()) == ["h1", "h2"]
    assert sorted(q.host for q in config.snapshot({}, {"h1": None, "h2": None}).qinstances) == ["h1", "h2"]


def test_name_lists_are_copies(config):
    managers = config.names("managers")
    managers.append("eve")
    assert "eve" not in config.names("managers")
    config.set_names("operators", ["op1"])
    assert config.operators == ["op1"]
    with pytest.raises(KeyError):
        config.set_names("nosuch", [])


def test_the_complex_index_follows_the_complex_list(config):
    cx = config.complex_index
    assert config.complex_index is cx
    config.complexes = attrs.evolve(config.complexes, attrs=config.complexes.attrs[:-1])
    assert config.complex_index is not cx


def test_load_values_are_kept_per_host(config):
    config.set_load_values("h1", {"load_avg": "0.5"})
    assert config.load_values == {"h1": {"load_avg": "0.5"}}


def test_a_resource_list_is_kept_with_full_names_in_the_order_written(config):
    # 8.1.9: qsub -l h_vmem=200M,h_rt=60,mf=10M shows "hard resource_list: h_vmem=200M,h_rt=60,mem_free=10M"
    # in qstat -j (and qalter -l h_rt=30,mf=5M "h_rt=30,mem_free=5M"); TIME values in seconds
    got = config.normalised_resources({"h_vmem": "200M", "h_rt": "1:00:00", "mf": "10M"})
    assert list(got.items()) == [("h_vmem", "200M"), ("h_rt", "3600"), ("mem_free", "10M")]
    # two spellings of one complex: the last written wins, where it was written
    assert list(config.normalised_resources({"mf": "1G", "a": "x", "mem_free": "2G"}).items()) == [
        ("arch", "x"), ("mem_free", "2G")]
