"""queue_conf(5) initial_state: the state a queue instance starts in (minisge.qinstance_state)."""

from minisge import qinstance_state as qs


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


class _Conf:
    def __init__(self, qname):
        self.qname = qname


class _Config:
    """What qinstance_state reads of the qmaster's configuration."""

    def __init__(self, instances, initial, states=None):
        self.instances = instances  # [(qname, host)]
        self.initial = initial  # qname -> initial_state
        self.cqueues = {q: _Conf(q) for q, _h in instances}
        self.qi_states = dict(states or {})
        self.qi_messages = {}
        self.saved = 0

    def queue_instances(self):
        return [(self.cqueues[q], h) for q, h in self.instances]

    def qvalue(self, conf, attr, host):
        assert attr == "initial_state"
        return self.initial[conf.qname]

    def save_qi_states(self):
        self.saved += 1


def test_a_new_queue_instance_gets_its_initial_state():
    cfg = _Config([("a.q", "h1")], {"a.q": "disabled"})
    before = qs.qinstance_names(cfg)
    cfg.instances.append(("a.q", "h2"))
    qs.qinstances_changed(cfg, before)
    assert cfg.qi_states == {"a.q@h2": "d"}  # the existing instance is not touched
    assert cfg.saved == 1


def test_a_vanished_instance_loses_its_states():
    cfg = _Config([("a.q", "h1"), ("a.q", "h2")], {"a.q": "default"}, {"a.q@h2": "dE"})
    cfg.qi_messages["a.q@h2"] = ["error"]
    before = qs.qinstance_names(cfg)
    cfg.instances.remove(("a.q", "h2"))
    qs.qinstances_changed(cfg, before)
    assert cfg.qi_states == {} and cfg.qi_messages == {}


def test_nothing_changed_nothing_spooled():
    cfg = _Config([("a.q", "h1")], {"a.q": "enabled"}, {"a.q@h1": "d"})
    qs.qinstances_changed(cfg, qs.qinstance_names(cfg))
    assert cfg.qi_states == {"a.q@h1": "d"} and cfg.saved == 0


def test_execd_start_applies_the_initial_state_on_its_host_only():
    cfg = _Config([("a.q", "h1"), ("b.q", "h1"), ("a.q", "h2")], {"a.q": "enabled", "b.q": "disabled"},
                  {"a.q@h1": "d", "a.q@h2": "d"})
    qs.execd_started(cfg, "h1")
    assert cfg.qi_states == {"b.q@h1": "d", "a.q@h2": "d"}
