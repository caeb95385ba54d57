"""Load control on the qmaster: load reports, the load alarm rules, their timer.

The rules themselves are pure (:mod:`minisge.scheduler.load_alarms`):
:class:`LoadControl` stores the execds' load reports, builds the rules' input
from the qmaster's configuration and jobs, applies their decision before
every scheduling pass (suspend and resume through the qmaster's job
control, the alarm states marked in the scheduler's snapshot), keeps that
decision for ``qstat`` and runs the timer of queue_conf(5)
``suspend_interval`` (:meth:`LoadControl.run_timer`, started by the nursery
of the role that owns the qmaster).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

import trio

from minisge import scheduler
from minisge.formats import queue_conf
from minisge.formats.sge_types import SpecifierError, parse_number
from minisge.qmaster.running_jobs import RunningJob, running_tasks
from minisge.scheduler.load_alarms import (
    Adjustment,
    Decision,
    QueueLoadConf,
    RunningTask,
    ambiguity_messages,
    evaluate,
    qstat_alarms,
)

log = logging.getLogger("minisge.load_control")


def valid_load_values(values: object) -> dict[str, str] | None:
    """An execd's load report as the qmaster keeps it: a mapping of load value
    names to their text; None for anything else."""
    if not isinstance(values, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        return None
    return dict(values)


def alarms_changed(before: Decision | None, after: Decision) -> bool:
    """A threshold was crossed either way (the scheduler must look again)."""
    return (before is None or set(after.alarm) != set(before.alarm)
            or set(after.suspend_alarm) != set(before.suspend_alarm))


def _threshold_list(text: str) -> tuple[Any, ...]:
    return tuple(queue_conf.decode("load_thresholds", text))


class LoadControl:
    """The load values, the last load-control decision and its timer."""

    def __init__(self, qm: Any):  # minisge.qmaster.qmaster.Qmaster, which creates it
        self.qm = qm
        self.decision: Decision | None = None  # of the last scheduling pass (qstat, the timer)
        self._rearm = trio.Event()  # set by every pass: the timer looks at the decision again
        self._confs_key: tuple[Any, ...] | None = None
        self._confs: list[QueueLoadConf] = []

    # ------------------------------------------------------------ load reports
    def store_report(self, host: str, values: object) -> bool:
        """An execd's load report: the host's values are replaced and the
        scheduler is woken when an alarm changed (a threshold crossed either
        way), not on every report.  A report that is no mapping of names to
        texts is refused (False) and changes nothing."""
        checked = valid_load_values(values)
        if checked is None:
            log.warning("execd %s sent load values that are not names and texts: ignored", host)
            return False
        self.qm.config.set_load_values(host, checked)
        try:
            d = self.decide()
        except Exception:  # a bad value must not cost the execd its link; logged
            log.exception("load control: evaluating the load report of %s failed", host)
            return True
        if alarms_changed(self.decision, d):
            self.qm.changed()
        return True

    # ------------------------------------------------------------ the rules' input
    def queue_confs(self) -> list[QueueLoadConf]:
        """Every queue instance's load-control configuration (cached until the
        configuration changes)."""
        config = self.qm.config
        key = config.config_key()
        if key == self._confs_key:
            return self._confs
        groups = config.group_members()
        out = []
        for conf, host in config.queue_instances():
            def value(attr: str, conf: queue_conf.QueueConf = conf, host: str = host) -> str:
                return str(config.qvalue(conf, attr, host))

            subs = queue_conf.decode("subordinate_list", value("subordinate_list"))
            queuewise = tuple((s.queue, int(s.threshold or 0)) for s in subs) if isinstance(subs, tuple) else ()
            try:
                interval = parse_number(value("suspend_interval"))
            except SpecifierError:
                interval = 0.0
            ambiguous = []
            for attr in queue_conf.ambiguous_attributes(conf, host, groups):
                try:
                    queue_conf.value_for(conf, attr, host, groups)
                except queue_conf.AmbiguousSetting as e:
                    ambiguous.append((attr, e.groups[0], e.groups[1]))
            out.append(QueueLoadConf(
                cqueue=conf.qname, host=host, slots=int(value("slots")), ambiguous=tuple(ambiguous),
                load_thresholds=_threshold_list(value("load_thresholds")),
                suspend_thresholds=_threshold_list(value("suspend_thresholds")),
                nsuspend=int(value("nsuspend")), suspend_interval=float(interval),
                subordinates=queuewise,
                values=dict(queue_conf.decode("complex_values", value("complex_values"))),
            ))
        self._confs_key, self._confs = key, out
        return out

    def _with_states(self, confs: list[QueueLoadConf]) -> list[QueueLoadConf]:
        qm = self.qm
        out = []
        for c in confs:
            states = qm.config.qi_states.get(c.name, "")
            if c.host not in qm.execds:
                states += "u"
            out.append(dataclasses.replace(c, states=states) if states else c)
        return out

    def running_tasks(self) -> list[RunningTask]:
        """The dispatched tasks as load control sees them."""
        return running_tasks(self.qm.config.running_jobs_of(self.qm.jobs))

    def _adjustment(self) -> Adjustment | None:
        sc = self.qm.config.sched_conf
        values = dict(sc.job_load_adjustments or ())
        if not values:
            return None
        try:
            decay = float(parse_number(str(sc.load_adjustment_decay_time)))
        except SpecifierError:
            decay = 0.0
        return Adjustment(values, decay)

    def decide(self, now: float | None = None, counted: Mapping[int, RunningJob] | None = None) -> Decision:
        """The decision for the qmaster's present state (nothing applied);
        ``counted``: the pass's count of the jobs, if it has one."""
        qm = self.qm
        now = qm.clock() if now is None else now
        prev = self.decision
        tasks = self.running_tasks() if counted is None else running_tasks(counted)
        return evaluate(self._with_states(self.queue_confs()), qm.config.scaled_loads(), qm.config.complex_index,
                        tasks, now, prev.last_check if prev is not None else None, self._adjustment())

    # ------------------------------------------------------------ the scheduling pass
    def apply(self, snapshot: scheduler.Snapshot,
              counted: Mapping[int, RunningJob] | None = None) -> scheduler.Snapshot:
        """Before a scheduling pass: decide, suspend and resume through the
        qmaster's job control, remember the decision (qstat, the interval
        timer) and return the snapshot with the alarm and subordinate states
        (and the alarms' reasons) added, so the scheduler dispatches nothing
        there and says why."""
        qm = self.qm
        d = self.decide(counted=counted)
        for todo, act in ((d.resume, qm.job_control.resume_task), (d.suspend, qm.job_control.suspend_task)):
            for (job_id, task_id), cause in todo:
                job = qm.jobs.get(job_id)
                task = job.tasks.get(task_id) if job is not None else None
                if task is not None:
                    act(job, task, cause)
        self.decision = d
        self._rearm.set()
        if not (d.alarm or d.suspend_alarm or d.subordinated):
            return snapshot
        # the states, and the reasons the pass words its global messages with
        qis = tuple(dataclasses.replace(q, states=q.states + d.states(q.name), load_alarm=d.alarm.get(q.name, ""),
                                        suspend_alarm=d.suspend_alarm.get(q.name, ""))
                    if d.states(q.name) else q
                    for q in snapshot.qinstances)
        return dataclasses.replace(snapshot, qinstances=qis)

    def dispatched(self) -> None:
        """After a pass started tasks: another pass when a subordinate_list may
        now suspend a queue instance (the decision was made before the dispatch)."""
        if any(c.subordinates for c in self.queue_confs()):
            self.qm.changed()

    async def run_timer(self) -> None:
        """queue_conf(5) suspend_interval: wake the scheduler when the interval
        load control waits for ends (the decision's ``next_due``); re-armed
        by every pass."""
        qm = self.qm
        while True:
            self._rearm = rearm = trio.Event()
            due = self.decision.next_due if self.decision is not None else None
            if due is None:
                await rearm.wait()
                continue
            with trio.move_on_after(max(0.0, due - qm.clock()) + 0.05):
                await rearm.wait()
                continue
            qm.changed()
            await rearm.wait()  # the pass it starts re-arms the timer

    # ------------------------------------------------------------ qstat
    def qstat_view(self, conf: queue_conf.QueueConf, host: str) -> dict[str, list[str]]:
        """For ``qstat -f``: the alarm letters (``a``, ``A``) qstat computes for
        one instance, with their ``-explain`` lines, plus ``S`` (no lines) when
        the last pass found it subordinated."""
        config = self.qm.config
        name = f"{conf.qname}@{host}"
        c = next((x for x in self._with_states(self.queue_confs()) if x.name == name), None)
        if c is None:
            return {}
        eh = config.exec_hosts.get(host)
        g = config.exec_hosts.get("global")
        out = qstat_alarms(c, config.complex_index, config.scaled_load(host),
                           config.scaled_load("global"),
                           dict(eh.complex_values) if eh is not None else {},
                           dict(g.complex_values) if g is not None else {})
        if self.decision is not None and name in self.decision.subordinated:
            out["S"] = []
        if c.ambiguous:
            out["c"] = ambiguity_messages(c.ambiguous)
        return out
