"""queue_conf(5) initial_state: the state a queue instance starts in (minisge.rules.initial_state)."""

import json
import os

import attrs
import pytest

from minisge.cell import Cell
from minisge.daemon.cell_init import init_cell
from minisge.formats import queue_conf
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.spool import QmasterSpool
from minisge.rules import initial_state as qs


def test_disabled_sets_d():
    assert qs.apply_initial_state("", "disabled") == "d"


def test_disabled_keeps_other_states_and_adds_d_once():
    assert qs.apply_initial_state("E", "disabled") == "Ed"
    assert qs.apply_initial_state("d", "disabled") == "d"


def test_enabled_clears_d_only():
    assert qs.apply_initial_state("Eds", "enabled") == "Es"
    assert qs.apply_initial_state("", "enabled") == ""


def test_default_leaves_the_instance_as_it_is():
    assert qs.apply_initial_state("d", "default") == "d"
    assert qs.apply_initial_state("", "default") == ""


def test_words_are_read_case_insensitively():
    assert qs.wants_disabled("DISABLED") is True
    assert qs.wants_disabled(" Enabled ") is False
    assert qs.wants_disabled("default") is None
    assert qs.wants_disabled(None) is None


def test_appeared_and_vanished_instances():
    before = {"a.q@h1", "a.q@h2"}
    after = {"a.q@h2", "a.q@h3", "b.q@h1"}
    assert qs.appeared(before, after) == ["a.q@h3", "b.q@h1"]
    assert qs.vanished(before, after) == ["a.q@h1"]


# ---------------------------------------------------------------- on the qmaster's ConfigState


@pytest.fixture
def config(tmp_path):
    """A real cell's configuration; all.q (on h1) is left out of the way."""
    cell = Cell(str(tmp_path / "root"))
    init_cell(cell, "h1", slots=1, env={})
    cfg = ConfigState(QmasterSpool(cell), "h1")
    cfg.load()
    cfg.remove_object("cqueues", "all.q")
    cfg.qi_states.clear()
    return cfg


def put_queue(cfg, name, hosts, initial):
    q = attrs.evolve(queue_conf.template(name), hostlist=tuple(hosts),
                     initial_state=queue_conf.HostValues(initial))
    cfg.spool.write_object("cqueues", name, queue_conf.write(q))
    cfg.put_object("cqueues", name, q)


def spooled_states(cfg):
    with open(os.path.join(cfg.spool.dir, "qinstance_states"), encoding="utf-8") as f:
        return json.load(f)["states"]


def test_a_new_queue_instance_gets_its_initial_state(config):
    put_queue(config, "a.q", ["h1"], "disabled")
    assert config.qi_states == {"a.q@h1": "d"}
    config.set_qi_states("a.q@h1", "")  # qmod -e
    put_queue(config, "a.q", ["h1", "h2"], "disabled")
    assert config.qi_states == {"a.q@h2": "d"}  # the existing instance is not touched
    assert spooled_states(config) == {"a.q@h2": "d"}


def test_a_vanished_instance_loses_its_states(config):
    put_queue(config, "a.q", ["h1", "h2"], "default")
    config.set_qi_states("a.q@h2", "dE")
    config.qi_messages["a.q@h2"] = ["error"]
    put_queue(config, "a.q", ["h1"], "default")
    assert config.qi_states == {} and config.qi_messages == {}


def test_nothing_changed_nothing_spooled(config):
    put_queue(config, "a.q", ["h1"], "enabled")
    config.set_qi_states("a.q@h1", "d")
    path = os.path.join(config.spool.dir, "qinstance_states")
    if os.path.exists(path):
        os.unlink(path)
    config.qinstances_changed(config.qinstance_names())
    assert config.qi_states == {"a.q@h1": "d"}
    assert not os.path.exists(os.path.join(config.spool.dir, "qinstance_states"))


def test_execd_start_applies_the_initial_state_on_its_host_only(config):
    put_queue(config, "a.q", ["h1", "h2"], "enabled")
    put_queue(config, "b.q", ["h1"], "disabled")
    config.qi_states.update({"a.q@h1": "d", "a.q@h2": "d"})
    config.set_qi_states("b.q@h1", "")  # qmod -e since
    config.execd_started("h1")
    assert config.qi_states == {"b.q@h1": "d", "a.q@h2": "d"}
    assert spooled_states(config) == {"b.q@h1": "d", "a.q@h2": "d"}
