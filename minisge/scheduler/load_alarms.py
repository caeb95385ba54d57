"""Load control: load and suspend thresholds, and queue-wise subordination.

queue_conf(5): a queue instance whose host's load crosses one of its
``load_thresholds`` is in *load alarm* (state ``a``) and gets no new jobs;
one crossing a ``suspend_thresholds`` value is in *suspend alarm* (``A``):
it gets no new jobs either, and every ``suspend_interval`` another
``nsuspend`` of its running jobs are suspended, until no threshold is
crossed (then ``nsuspend`` are resumed per interval) or none is left.  A
queue instance whose ``subordinate_list`` names another cluster queue
suspends that queue's instance on the same host (``S``, its jobs too) while
N of its own slots (all of them without ``=N``) are in use.

Pure (no I/O, no clock): the rules as Grid Engine 8.1.9's
``sge_load_alarm``/``load_check_alarm`` (``libs/sched/sge_select_queue.c``),
``correct_load`` (``load_correction.c``), ``suspend_job_in_queues`` /
``unsuspend_job_in_queues`` (``suspend_thresholds.c``) and ``tst_sos``
(``sge_subordinate.c``) apply them, and the texts ``qstat -explain a|A`` and
``qstat -j`` print.  The qmaster's side (:mod:`minisge.qmaster.load_control`)
feeds them its model, suspends and resumes what they decide and marks the
scheduler's snapshot.

Rules worth knowing (from the source, not the page):

- The alarm holds when ``load RELOP threshold`` holds with the complex's
  relop (``np_load_avg`` ``>=``: a load equal to the threshold is an
  alarm; ``num_proc`` ``==``: a host with exactly that many processors;
  a string attribute: when the value matches the threshold).
- The scheduler adds the load adjustment of the jobs started within
  ``load_adjustment_decay_time`` (sched_conf(5) ``job_load_adjustments``,
  decaying linearly, per slot, divided by ``num_proc`` for ``np_*`` values);
  ``qstat`` does not.
- ``qstat -explain a`` lists every threshold of the queue once it is in
  alarm, not only the crossed one.
- Suspension picks the running task that started last (shortest run time);
  resumption the threshold-suspended task that started first, ``nsuspend``
  of each per ``suspend_interval``, counted from the last suspension or
  resumption in that queue instance (the first one happens at once).
  Suspend thresholds do not look at consumables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from minisge.formats.complex import ComplexAttr
from minisge.formats.sge_types import SpecifierError, parse_number
from minisge.scheduler.complexes import ComplexIndex
from minisge.scheduler.queue_filter import overload_message, suspend_alarm_message

#: a threshold of queue_conf(5) load_thresholds or suspend_thresholds: (complex name, value text)
Threshold = tuple[str, str]

# ---------------------------------------------------------------- model


@dataclass(frozen=True)
class QueueLoadConf:
    """The load-control part of one queue instance's configuration."""

    cqueue: str
    host: str
    slots: int = 1
    load_thresholds: tuple[Threshold, ...] = ()  # ((name, value text), ...)
    suspend_thresholds: tuple[Threshold, ...] = ()
    nsuspend: int = 1
    suspend_interval: float = 300.0  # seconds
    subordinates: tuple[tuple[str, int], ...] = ()  # ((cqueue, threshold), ...): 0 = all slots
    values: Mapping[str, str] = field(default_factory=dict)  # complex_values of the instance
    states: str = ""  # states set by hand or by events (d, s, C, E, u)
    ambiguous: tuple[tuple[str, str, str], ...] = ()  # ((attribute, host group, other host group), ...): state c

    @property
    def name(self) -> str:
        return f"{self.cqueue}@{self.host}"


@dataclass(frozen=True)
class RunningTask:
    """A dispatched task as load control sees it: where (master first), since when, why stopped."""

    job_id: int
    task_id: int
    start_time: float
    granted: tuple[tuple[str, int], ...]  # ((qinstance name, slots), ...), master queue first
    suspended_by: frozenset[str] = frozenset()

    @property
    def key(self) -> tuple[int, int]:
        return (self.job_id, self.task_id)

    @property
    def master_queue(self) -> str | None:
        return self.granted[0][0] if self.granted else None


@dataclass(frozen=True)
class Adjustment:
    """sched_conf(5) ``job_load_adjustments`` and ``load_adjustment_decay_time``."""

    values: Mapping[str, str] = field(default_factory=dict)  # name -> value text
    decay_time: float = 450.0


@dataclass
class Decision:
    """What load control finds and wants done in one evaluation."""

    alarm: dict[str, str] = field(default_factory=dict)  # qinstance -> reason (scheduler words, adjusted)
    suspend_alarm: dict[str, str] = field(default_factory=dict)  # qinstance -> reason
    subordinated: dict[str, str] = field(default_factory=dict)  # qinstance -> the superordinated instance
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # qinstance -> -explain c lines
    suspend: list[tuple[tuple[int, int], str]] = field(default_factory=list)  # [((job, task), cause)]
    resume: list[tuple[tuple[int, int], str]] = field(default_factory=list)
    last_check: dict[str, float] = field(default_factory=dict)  # qinstance -> time of its last (un)suspension
    next_due: float | None = None  # when an interval ends with work waiting for it

    def states(self, qinstance: str) -> str:
        """The letters this decision adds to the instance (``a``, ``A``, ``S``)."""
        return (("a" if qinstance in self.alarm else "") + ("A" if qinstance in self.suspend_alarm else "")
                + ("S" if qinstance in self.subordinated else "") + ("c" if qinstance in self.ambiguous else ""))


# ---------------------------------------------------------------- comparisons

_NUMERIC = ("INT", "DOUBLE", "TIME", "MEMORY", "BOOL", "RSMAP")
_STRINGS = ("STRING", "CSTRING", "RESTRING", "HOST")


def relop_holds(relop: str, load: float, limit: float) -> bool:
    """``load RELOP limit`` (Grid Engine's ``resource_cmp`` as the load
    check calls it: the load on the left)."""
    return {
        "==": load == limit, "<=": load <= limit, "<": load < limit,
        ">": load > limit, ">=": load >= limit, "!=": load != limit,
    }.get(relop, False)


def _number(text: str) -> float | None:
    try:
        return float(parse_number(str(text).strip()))
    except (SpecifierError, ValueError):
        return None


def _fmt_f(x: float) -> str:
    """C's ``%f``."""
    return f"{x:f}"


def correction_factors(tasks: Iterable[RunningTask], now: float, decay_time: float,
                       host_of: Mapping[str, str]) -> tuple[dict[str, int], int]:
    """``correct_load``: per host, the sum over the slots of tasks started less
    than ``decay_time`` ago of ``1 - running/decay`` (kept ×100 as an integer,
    as Grid Engine keeps it), and the global factor (per task, not per slot)."""
    hosts: dict[str, int] = {}
    glob = 0.0
    if decay_time <= 0:
        return hosts, 0
    for t in tasks:
        running = now - t.start_time
        if running > decay_time:
            continue
        lcf = 1.0 - running / decay_time
        for qi, slots in t.granted:
            host = host_of.get(qi) or qi.partition("@")[2]
            glob += lcf
            hosts[host] = int(lcf * slots * 100 + hosts.get(host, 0))
    return hosts, int(glob * 100)


def _lookup(name: str, host_load: Mapping[str, str], global_load: Mapping[str, str],
            queue_values: Mapping[str, str]) -> tuple[str | None, str]:
    """The value a threshold is compared with and where it came from:
    ``host`` (load), ``global`` (load) or ``queue`` (a configured value)."""
    if name in host_load:
        return host_load[name], "host"
    if name in global_load:
        return global_load[name], "global"
    if name in queue_values:
        return queue_values[name], "queue"
    return None, ""


def threshold_reason(name: str, limit: str, value: str, source: str, attr: ComplexAttr, host_load: Mapping[str, str],
                     adjustment: Adjustment | None, lc_host: float, lc_global: float) -> str | None:
    """``load_check_alarm``: None when ``value`` does not cross ``limit``,
    else the reason in Grid Engine's words (``np_load_avg=0.532276 (= 0.082276
    + 0.50 * 1.800000 with nproc=2) >= 1.75``)."""
    relop = str(attr.relop)
    vtype = str(attr.type)
    if vtype in _NUMERIC:
        load = _number(value)
        if load is None:
            return f'invalid load value "{value}" for theshold {name}'
        lim = _number(limit)
        if lim is None:
            return f"invalid threshold value {name}={limit}"
        adj_text = (adjustment.values.get(name) if adjustment is not None else None)
        if source == "queue":
            diag = "no load value"
        elif adj_text is not None and ((source == "host" and lc_host) or (source == "global" and lc_global)):
            corr = _number(adj_text)
            if corr is None:
                return f"invalid load adjustment value {name}={adj_text}"
            if source == "host":
                corr *= lc_host
                nproc = _np_divisor(name, host_load)
                if nproc:
                    if nproc > 1:
                        corr /= nproc
                    what = f"{adj_text} * {_fmt_f(lc_host)} with nproc={nproc}"
                else:
                    what = f"{adj_text} * {_fmt_f(lc_host)}"
            else:
                corr *= lc_global
                what = f"{adj_text} * {_fmt_f(lc_global)} global"
            if relop in (">=", ">"):
                load += corr
                diag = f"= {value} + {what}"
            else:
                load -= corr
                diag = f"= {value} - {what}"
        else:
            diag = "no load adjustment"
        if relop_holds(relop, load, lim):
            if vtype == "BOOL":
                return f"{name}={'true' if load else 'false'} ({diag}) {relop} {limit}"
            return f"{name}={_fmt_f(load)} ({diag}) {relop} {limit}"
        return None
    if vtype in _STRINGS:
        same = (value.lower() == limit.lower()) if vtype in ("CSTRING", "HOST") else value == limit
        return f"{name}={value} {relop} {limit}" if same else None
    return f"unknown complex attribute type for threshold {name}"


def _np_divisor(name: str, host_load: Mapping[str, str]) -> int:
    """``load_np_value_adjustment``: for an ``np_*`` value the host's
    ``num_proc`` (1 when not reported), else 0."""
    if not name.startswith("np_"):
        return 0
    text = host_load.get("num_proc")
    if text is None:
        return 1
    try:
        return int(float(text))
    except ValueError:
        return 0


def load_alarm(thresholds: Iterable[Threshold], complexes: ComplexIndex, host_load: Mapping[str, str],
               global_load: Mapping[str, str] | None = None, queue_values: Mapping[str, str] | None = None,
               *, consumables: bool = True, adjustment: Adjustment | None = None,
               lc_host: float = 0.0, lc_global: float = 0.0) -> str | None:
    """``sge_load_alarm``: the reason the first crossed threshold gives, or
    None when none is crossed.  An unknown attribute or a missing value is
    an alarm too (a host that never reported is overloaded).  With
    ``consumables`` False (suspend thresholds) consumable attributes are
    skipped."""
    global_load = global_load or {}
    queue_values = queue_values or {}
    for name, limit in thresholds:
        attr = complexes.get(name)
        if attr is None:
            return f'no such complex attribute for threshold "{name}"'
        if not consumables and attr.is_consumable:
            continue
        value, source = _lookup(attr.name, host_load, global_load, queue_values)
        if value is None:
            return f'no value for complex attribute "{name}"'
        why = threshold_reason(name, limit, value, source, attr, host_load, adjustment, lc_host, lc_global)
        if why:
            return why
    return None


def explain_lines(thresholds: Iterable[Threshold], complexes: ComplexIndex, host_load: Mapping[str, str],
                  global_load: Mapping[str, str] | None = None, queue_values: Mapping[str, str] | None = None,
                  host_values: Mapping[str, str] | None = None, global_values: Mapping[str, str] | None = None,
                  kind: str = "load", unknown: bool = False) -> list[str]:
    """``sge_load_alarm_reason``: what ``qstat -explain a`` (kind ``load``)
    or ``-explain A`` (``suspend``) prints for an instance in that alarm, one
    line per threshold: ``alarm hl:np_load_avg=0.069336 load-threshold=1.75``
    (``hl`` host load, ``gl`` global load, ``qf``/``hf``/``gf`` a configured
    value of the queue, host or global level)."""
    layers = (
        ("hl", host_load or {}), ("gl", global_load or {}), ("qf", queue_values or {}),
        ("hf", host_values or {}), ("gf", global_values or {}),
    )
    out = []
    for name, limit in thresholds:
        attr = complexes.get(name)
        key = attr.name if attr is not None else name
        found = next(((dom, values[key]) for dom, values in layers if key in values), None)
        if found is None:
            if unknown:
                out.append(f'error: no value for "{name}" because execd is in unknown state')
            else:
                out.append(f"error: no complex attribute for threshold {name}")
            continue
        dom, value = found
        out.append(f"alarm {dom}:{name}={value} {kind}-threshold={limit}")
    return out


def ambiguity_messages(ambiguous: Iterable[tuple[str, str, str]]) -> list[str]:
    """queue_conf(5): a host that gets an attribute from two host groups puts
    its instance in state ``c``; ``qstat -explain c`` says why (the first two
    groups that name it, as the qmaster's ``MSG_ATTR_HASAMBVAL_SSS``)."""
    return [f'warning: "{attr}" has ambiguous value ("{g1}", "{g2}")' for attr, g1, g2 in ambiguous]


def suspension_enabled(conf: QueueLoadConf) -> bool:
    """queue_conf(5): suspend thresholds act only with ``nsuspend`` and
    ``suspend_interval`` both non-zero."""
    return bool(conf.suspend_thresholds) and conf.nsuspend > 0 and conf.suspend_interval > 0


# ---------------------------------------------------------------- subordination


def subordinated(confs: Iterable[QueueLoadConf], used: Mapping[str, int]) -> dict[str, str]:
    """queue_conf(5) subordinate_list (queue-wise): ``tst_sos`` -- the
    instances of the named cluster queues on the same host are suspended
    while the superordinated instance has ``N`` slots in use (all its slots
    without ``=N``).  Returns subordinated instance -> superordinated one."""
    confs = list(confs)
    names = {c.name for c in confs}
    out: dict[str, str] = {}
    for c in confs:
        for cqueue, threshold in c.subordinates:
            sub = f"{cqueue}@{c.host}"
            if sub not in names or sub == c.name:
                continue
            n = used.get(c.name, 0)
            if (n >= threshold) if threshold else (n >= c.slots):
                out.setdefault(sub, c.name)
    return out


# ---------------------------------------------------------------- the evaluation


# states that keep a queue instance out of the scheduler's pass (sge_sched_thread.c:
# suspended, subordinated, error, ambiguous, unknown; disabled; calendar)
_UNAVAILABLE = "sSEcudDC"


def _select_for_suspension(conf: QueueLoadConf, tasks: list[RunningTask],
                           taken: set[tuple[int, int]]) -> RunningTask | None:
    """``select4suspension``: the running task (not suspended, by its job's
    owner or by a threshold) with a slot in the instance that started last."""
    best = None
    for t in tasks:
        if t.key in taken or t.suspended_by & {"job", "threshold"}:
            continue
        if not any(qi == conf.name for qi, _n in t.granted):
            continue
        if best is None or best.start_time < t.start_time:
            best = t
    return best


def _select_for_resumption(conf: QueueLoadConf, tasks: list[RunningTask],
                           taken: set[tuple[int, int]]) -> RunningTask | None:
    """``select4unsuspension``: the threshold-suspended task whose master
    queue is the instance that started first."""
    best = None
    for t in tasks:
        if t.key in taken or "threshold" not in t.suspended_by or t.master_queue != conf.name:
            continue
        if best is None or best.start_time > t.start_time:
            best = t
    return best


def evaluate(confs: Iterable[QueueLoadConf], loads: Mapping[str, Mapping[str, str]], complexes: ComplexIndex,
             tasks: Iterable[RunningTask], now: float, last_check: Mapping[str, float] | None = None,
             adjustment: Adjustment | None = None) -> Decision:
    """One load-control pass over every queue instance: the alarms the
    scheduler honours (with the load adjustment), subordination, and the
    tasks to suspend or resume now.  ``loads`` maps host names (and
    ``global``) to reported load values; ``last_check`` is the previous
    decision's, so intervals carry over."""
    confs = list(confs)
    tasks = list(tasks)
    d = Decision(last_check=dict(last_check or {}))
    lc_hosts: dict[str, int] = {}
    lc_glob = 0
    correcting = adjustment is not None and bool(adjustment.values) and any(loads.get(c.host) for c in confs)
    subordinating = any(c.subordinates for c in confs)
    suspended = [t for t in tasks if t.suspended_by]
    # The order of the tasks decides between equals (suspension, resumption);
    # a pass with no threshold, subordination, correction or suspended task
    # has nothing to order (the common case: it skips the sort and the sums).
    if correcting or subordinating or suspended or any(suspension_enabled(c) for c in confs):
        tasks.sort(key=lambda t: t.key)
        suspended.sort(key=lambda t: t.key)
    if correcting:
        assert adjustment is not None
        # (an instance whose host reported no load is checked against no threshold)
        lc_hosts, lc_glob = correction_factors(tasks, now, adjustment.decay_time, {c.name: c.host for c in confs})
    glob = loads.get("global", {})
    if subordinating:
        used: dict[str, int] = {}
        for t in tasks:
            for qi, n in t.granted:
                used[qi] = used.get(qi, 0) + n
        d.subordinated = subordinated(confs, used)
    taken: set[tuple[int, int]] = set()
    by_threshold = [t for t in suspended if "threshold" in t.suspended_by]  # (in task order)
    for c in confs:
        if c.ambiguous:
            d.ambiguous[c.name] = ambiguity_messages(c.ambiguous)
        host_load = loads.get(c.host, {})
        lc_host = lc_hosts.get(c.host, 0) / 100.0
        unavailable = (bool(c.states) and any(s in _UNAVAILABLE for s in c.states)) or bool(c.ambiguous) \
            or c.name in d.subordinated
        # an execd that has not yet sent its first load report is not overloaded
        unavailable = unavailable or not host_load
        if unavailable:
            pass  # the scheduler drops it anyway ("temporarily not available") and leaves its jobs be
        elif c.load_thresholds:
            why = load_alarm(c.load_thresholds, complexes, host_load, glob, c.values, adjustment=adjustment,
                             lc_host=lc_host, lc_global=lc_glob / 100.0)
            if why:
                d.alarm[c.name] = why
        if not suspension_enabled(c):
            for t in by_threshold:  # thresholds removed: nothing resumes these any more but this
                if t.master_queue == c.name and t.key not in taken:
                    taken.add(t.key)
                    d.resume.append((t.key, "threshold"))
            continue
        if unavailable:
            continue
        why = load_alarm(c.suspend_thresholds, complexes, host_load, glob, c.values, consumables=False,
                         adjustment=adjustment, lc_host=lc_host, lc_global=lc_glob / 100.0)
        if why:
            d.suspend_alarm[c.name] = why
        due = d.last_check.get(c.name, 0.0) + c.suspend_interval if d.last_check.get(c.name) else 0.0
        pick = _select_for_suspension if why else _select_for_resumption
        if pick(c, tasks, taken) is None:
            continue
        if now < due:
            d.next_due = due if d.next_due is None else min(d.next_due, due)
            continue
        for _ in range(c.nsuspend):
            picked = pick(c, tasks, taken)
            if picked is None:
                break
            taken.add(picked.key)
            (d.suspend if why else d.resume).append((picked.key, "threshold"))
        d.last_check[c.name] = now
        if pick(c, tasks, taken) is not None:
            nd = now + c.suspend_interval
            d.next_due = nd if d.next_due is None else min(d.next_due, nd)
    for t in tasks if d.subordinated else suspended:  # (not subordinated: only resumptions)
        in_sub = bool(d.subordinated) and any(qi in d.subordinated for qi, _n in t.granted)
        if in_sub and "subordinate" not in t.suspended_by:
            d.suspend.append((t.key, "subordinate"))
        elif not in_sub and "subordinate" in t.suspended_by:
            d.resume.append((t.key, "subordinate"))
    return d


def qstat_alarms(conf: QueueLoadConf, complexes: ComplexIndex, host_load: Mapping[str, str],
                 global_load: Mapping[str, str] | None = None, host_values: Mapping[str, str] | None = None,
                 global_values: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """What ``qstat -f`` computes itself for an instance (no load
    adjustment): ``{"a": explain lines}`` when in load alarm, ``"A"`` when
    in suspend alarm (only with nsuspend and suspend_interval non-zero)."""
    out: dict[str, list[str]] = {}
    unknown = "u" in conf.states
    load = {} if unknown else host_load
    if not unknown and not host_load:
        return out  # registered, first load report still to come
    for letter, kind, thresholds, enabled, consumables in (
            ("a", "load", conf.load_thresholds, bool(conf.load_thresholds), True),
            ("A", "suspend", conf.suspend_thresholds, suspension_enabled(conf), False)):
        if enabled and load_alarm(thresholds, complexes, load, global_load, conf.values, consumables=consumables):
            out[letter] = explain_lines(thresholds, complexes, load, global_load, conf.values, host_values,
                                        global_values, kind=kind, unknown=unknown)
    return out


def scheduler_messages(d: Decision) -> list[str]:
    """The scheduler's cell-wide messages about these alarms, as ``qstat -j``
    shows them: suspend alarms first, then overloads."""
    out = [suspend_alarm_message(q, why) for q, why in d.suspend_alarm.items()]
    out += [overload_message(q, why) for q, why in d.alarm.items() if q not in d.suspend_alarm]
    return out
