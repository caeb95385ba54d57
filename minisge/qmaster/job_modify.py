"""qalter(1): a change to a submitted job (Grid Engine's mod_job_attributes).

:func:`modify` applies the changes of one qalter request to one job, field
by field in the order 8.1.9's qmaster takes them, and returns the lines it
answers ("modified hard resource list of job 7", "sgetest@vm sets
scheduling priority of job 7 to -5", ...).  The first field it refuses
raises :class:`ModifyRefused` with the lines said so far and the refusal:
the caller (``Qmaster.alter_job``) then puts the job back as it was, so a
change is all or nothing for each job.  The checks are those of a
submission (:class:`minisge.qmaster.config_state.ConfigState`'s, one home
each) with qalter's words, plus the rights a change needs: a higher
priority, an operator or system hold, override tickets (an operator or
manager), and what a running job may not change (its project, its
consumable requests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from minisge.formats import submit_options
from minisge.formats.sge_types import is_decimal
from minisge.qmaster import job_dependencies
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.job import RUNNING, Job

# qalter -w v|p: the verification of the changed job; None when a queue
# would take it, else the scheduler's reasons (Qmaster.unsuitable)
Verify = Callable[[Job], "list[str] | None"]

HELD_OR_RUNNING = "verification: job is already running or is held"
FOUND = "verification: found suitable queue(s)"


class ModifyRefused(Exception):
    """The change is refused: ``lines`` (what was said before, then why)."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


class Verified(Exception):
    """qalter -w v|p: the verification is the whole answer; nothing changes."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


@attrs.frozen
class Caller:
    """Who asks, and from where (8.1.9's ``user@host`` of its answers)."""

    name: str
    host: str
    operator: bool
    manager: bool


# the fields whose change is one "modified <what> of job N" line, in the
# order of 8.1.9's mod_job_attributes (the others have lines of their own)
_FIELD_WORDS = {
    "start_time": "start time",
    "account": "account",
    "cwd": "working directory",
    "stderr_path": "stderr path list",
    "stdin_path": "stdin path list",
    "reserve": "reservation behaviour",
    "merge": "output merge behaviour",
    "mail_options": "mail options",
    "mail_list": "mail list",
    "notify": "notify behaviour",
    "stdout_path": "stdout path list",
    "binding": "binding",
    "hard_queues": "hard queue list",
    "soft_queues": "soft queue list",
    "master_queues": "master hard queue list",
    "restart": "restart behaviour",
    "shell": "shell list",
    "env": "environment",
}

HOLD_KINDS = "uos"


class _Modification:
    """One job's change: the job (changed in place), the request, and the lines so far."""

    def __init__(self, job: Job, changes: Mapping[str, Any], caller: Caller, config: ConfigState,
                 jobs: Mapping[int, Job], verify: Verify):
        self.job = job
        self.changes = changes
        self.caller = caller
        self.config = config
        self.jobs = jobs
        self.verify = verify
        self.lines: list[str] = []
        self.running = any(t.state == RUNNING for t in job.tasks.values())
        self.may_not_be_running = False
        self.warned = False  # -w w found no queue: changed, and qalter exits 1

    def refuse(self, text: str) -> ModifyRefused:
        return ModifyRefused([*self.lines, text])

    def said(self, what: str) -> None:
        self.lines.append(f"modified {what} of job {self.job.number}")

    def set(self, key: str) -> None:
        """A field that changes as it is given, with its line."""
        if key in self.changes:
            self.job.spec[key] = self.changes[key]
            self.said(_FIELD_WORDS[key])

    # ------------------------------------------------------------ the fields, in 8.1.9's order
    def holds(self, hold_list: str | None) -> None:
        """-h: ``n`` clears, lower case letters set, upper case letters clear."""
        if hold_list is None:
            return
        job, caller = self.job, self.caller
        if "n" in hold_list:
            on, kinds = False, HOLD_KINDS
        else:
            on = not any(c.isupper() for c in hold_list)
            kinds = "".join(k for k in HOLD_KINDS if k in hold_list.lower())
        old = {"u": job.user_hold, "o": job.operator_hold, "s": job.system_hold}
        if all(old[k] == on for k in kinds):
            return
        if "s" in kinds and not caller.manager:
            raise self.refuse(f'denied: "{caller.name}" must be manager to '
                              f'{"set" if on else "remove"} manager hold')
        if "o" in kinds and not caller.operator:
            raise self.refuse(f'denied: "{caller.name}" must be operator to '
                              f'{"set" if on else "remove"} operator hold')
        letters = job.hold_letters
        letters = "".join(k for k in HOLD_KINDS if (k in kinds and on) or (k not in kinds and k in letters))
        job.set_hold_letters(None, letters)  # qalter -h: the job and all its tasks (minisge holds per job here)
        if job.is_array:
            ids = sorted(set(job.pending) | set(job.tasks))
            self.lines.extend(f"modified hold of job-array task {job.number}.{t}" for t in ids)
        else:
            self.said("hold")

    def override_tickets(self) -> None:
        if "override_tickets" not in self.changes:
            return
        if not self.caller.operator:
            raise self.refuse(f'denied: "{self.caller.name}" must be operator to change amount of override tickets')
        value = int(self.changes["override_tickets"])
        self.job.spec["override_tickets"] = value
        self.lines.append(f"{self.caller.name}@{self.caller.host} sets override tickets of job "
                          f"{self.job.number} to {value}")

    def priority(self) -> None:
        if "priority" not in self.changes:
            return
        value = int(self.changes["priority"])
        if value > self.job.priority and not self.caller.operator:
            raise self.refuse(f'denied: "{self.caller.name}" must be operator to increase job priority')
        self.job.priority = value
        self.job.spec["priority"] = value
        self.lines.append(f"{self.caller.name}@{self.caller.host} sets scheduling priority of job "
                          f"{self.job.number} to {value}")

    def job_share(self) -> None:
        if "job_share" not in self.changes:
            return
        value = int(self.changes["job_share"])
        self.job.spec["job_share"] = value
        self.lines.append(f"{self.caller.name}@{self.caller.host} sets job share of job {self.job.number} to {value}")

    def advance_reservation(self) -> None:
        if "ar" not in self.changes:
            return
        value = int(self.changes["ar"] or 0)
        if value != int(self.job.spec.get("ar") or 0):
            self.may_not_be_running = True
        self.job.spec["ar"] = value or None
        self.lines.append(f"{self.caller.name}@{self.caller.host} sets job advance reservation of job "
                          f"{self.job.number} to {value}")

    def deadline(self) -> None:
        if "deadline" not in self.changes:
            return
        if not self.config.is_deadline_user(self.caller.name):
            raise self.refuse(f'job rejected: the user "{self.caller.name}" is not a deadline initiation user')
        self.job.spec["deadline"] = self.changes["deadline"]
        self.said("deadline time")

    def account(self) -> None:
        if "account" not in self.changes:
            return
        reason = submit_options.account_error(self.changes["account"])
        if reason:
            raise self.refuse(reason)
        self.set("account")

    def checkpoint(self) -> None:
        """-ckpt: minisge has no checkpointing environments, so every name is unknown."""
        if "checkpoint" in self.changes and self.changes["checkpoint"]:
            raise self.refuse(f'denied: checkpointing environment "{self.changes["checkpoint"]}" does not exist')

    def resources(self) -> None:
        for kind, word in (("hard_resources", "hard resource list"), ("soft_resources", "soft resource list")):
            if kind not in self.changes:
                continue
            new = self.changes[kind]
            reason = self.config.resource_error(new)
            if reason:
                raise self.refuse(reason)
            if kind == "soft_resources":
                for name in new:
                    attr = self.config.complex_index.get(name)
                    if attr is not None and attr.is_consumable:
                        raise self.refuse(f'denied: soft requests on consumables like "{name}" are not supported')
            elif self.running:
                reason = self.consumable_change(self.job.spec.get(kind) or {}, new)
                if reason:
                    raise self.refuse(reason)
            self.job.spec[kind] = self.config.normalised_resources(new)
            self.said(word)

    def consumable_change(self, old: Mapping[str, str], new: Mapping[str, str]) -> str | None:
        """A running job keeps its consumable requests as they are (what it was booked)."""
        cx = self.config.complex_index

        def consumables(requests: Mapping[str, str]) -> dict[str, str]:
            out = {}
            for name, value in requests.items():
                attr = cx.get(name)
                if attr is not None and attr.is_consumable:
                    out[attr.name] = value
            return out

        before, after = consumables(old), consumables(new)
        for name in before:
            if name not in after:
                return f'denied: former resource request on consumable "{name}" of running job lacks in new ' \
                       "resource request"
        for name, value in after.items():
            if name not in before:
                return f'denied: resource request on consumable "{name}" of running job was not contained ' \
                       "former resource request"
            if value != before[name]:
                return f'denied: can\'t change consumable resource request "{name}" of running job'
        return None

    def job_name(self) -> None:
        if "job_name" not in self.changes:
            return
        name = str(self.changes["job_name"])
        if name != self.job.name:
            reason = submit_options.job_name_error(name)
            if reason:
                raise self.refuse(reason)
        self.job.name = name
        self.job.spec["job_name"] = name
        self.said("job name")

    def dependencies(self) -> None:
        """-hold_jid, -hold_jid_ad: the predecessors are looked up anew; ids of jobs that left are "exited"."""
        for key, what, attr in (("hold_jid", "job id hold list", "predecessors"),
                                ("hold_jid_ad", "job id hold array list", "ad_predecessors")):
            if key not in self.changes:
                continue
            refs = list(self.changes[key])
            job = self.job
            try:
                found = job_dependencies.resolve(refs, job.owner, job.number, self.jobs)
                if key == "hold_jid_ad":
                    job_dependencies.check_array_dependency(job.array if job.is_array else None, bool(refs),
                                                            [self.jobs[n] for n in found])
            except job_dependencies.DependencyError as e:
                raise self.refuse(str(e)) from None
            cycle = self.cycle(found)
            if cycle is not None:
                raise self.refuse(f"job {job.number} dependency change would generate a dependency cycle "
                                  f"with job {cycle}")
            exited = sorted({job_dependencies.leading_number(r) for r in refs if is_decimal(r[:1])} - set(self.jobs))
            job.spec[key] = refs
            setattr(job, attr, found)
            if key == "hold_jid_ad":
                job.ad_held = set()
                job_dependencies.init_array_holds(job, self.jobs)
            self.lines.append(f"modified {what} of job {job.number}\n"
                              f"   blocking jobs: {','.join(map(str, found)) or 'NONE'}\n"
                              f"   exited jobs:   {','.join(map(str, exited)) or 'NONE'}")

    def cycle(self, predecessors: list[int]) -> int | None:
        """The job whose predecessors would lead back to this one, or None."""
        seen: set[int] = set()
        stack = [(n, self.job.number) for n in predecessors]
        while stack:
            number, via = stack.pop()
            if number == self.job.number:
                return via
            if number in seen or number not in self.jobs:
                continue
            seen.add(number)
            pre = self.jobs[number]
            stack.extend((n, number) for n in [*pre.predecessors, *pre.ad_predecessors])
        return None

    def project(self) -> None:
        if "project" not in self.changes:
            return
        new = self.changes["project"] or None
        if new == (self.job.spec.get("project") or None):
            return
        reason = self.config.project_error(new)
        if reason:
            raise self.refuse(reason)
        self.job.spec["project"] = new
        self.may_not_be_running = True
        self.said("project")

    def parallel_environment(self) -> None:
        pe = self.changes.get("pe")
        if pe is None:
            return
        if not self.config.pe_exists(pe["name"]):
            raise self.refuse(f'denied: parallel environment "{pe["name"]}" does not exist')
        self.job.spec["pe"] = {"name": pe["name"], "ranges": [list(r) for r in pe["ranges"]]}
        self.said("parallel environment")
        self.said("slot range")

    def queues(self) -> None:
        for key in ("hard_queues", "soft_queues", "master_queues"):
            if key in self.changes:
                reason = self.config.queue_error(self.changes[key])
                if reason:
                    raise self.refuse(reason)
                self.set(key)

    def verification(self, level: str | None) -> None:
        """-w (8.1.9's answers, measured): ``v``/``p`` answer the verification
        alone and change nothing; ``e`` refuses a job no queue takes with its
        error alone; ``w`` changes the job and warns (exit status 1)."""
        if level is None:
            return
        self.job.spec["verify_level"] = level
        if level == "n":
            return
        only = level in ("v", "p")
        if self.job.held or not self.job.pending:
            if only:
                raise Verified([HELD_OR_RUNNING])
            self.lines.append(HELD_OR_RUNNING)
            return
        reasons = self.verify(self.job)
        if reasons is None:
            if only:
                raise Verified([FOUND])
            return
        if only:
            raise ModifyRefused([*reasons[:1], "verification: no suitable queues"])
        if level == "e":
            raise ModifyRefused(["error: no suitable queues"])
        self.lines.append("warning: no suitable queues")
        self.warned = True

    def context(self, ops: list[list[Any]]) -> None:
        if not ops:
            return
        context: dict[str, str | None] = dict(self.job.spec.get("context") or {})
        for switch, pairs in ops:
            if switch == "-sc":
                context.clear()
            for name, value in pairs:
                if switch == "-dc":
                    context.pop(name, None)
                else:
                    context[name] = value
        self.job.spec["context"] = context
        self.said("context")

    def task_concurrency(self) -> None:
        if "tc" not in self.changes:
            return
        value = int(self.changes["tc"] or 0)
        if value > 0 and not self.job.is_array:
            raise self.refuse('invalid option argument "task concurrency"')
        self.job.spec["tc"] = value
        self.said("task concurrency")


def modify(job: Job, changes: Mapping[str, Any], context_ops: list[list[Any]], hold: str | None,
           caller: Caller, config: ConfigState, jobs: Mapping[int, Job], verify: Verify) -> tuple[list[str], bool]:
    """Apply one qalter request to ``job`` (in place) and return its lines
    and whether all went well (False: -w w warned, the job changed all the same);
    raises :class:`ModifyRefused` (the job must be put back) or
    :class:`Verified` (-w v|p: put back too, the lines are the answer)."""
    m = _Modification(job, changes, caller, config, jobs, verify)
    m.holds(hold)
    m.override_tickets()
    m.priority()
    m.job_share()
    m.advance_reservation()
    m.deadline()
    m.set("start_time")
    m.account()
    m.set("cwd")
    m.checkpoint()
    m.set("stderr_path")
    m.set("stdin_path")
    m.set("reserve")
    m.set("merge")
    m.resources()
    m.set("mail_options")
    m.set("mail_list")
    m.job_name()
    m.dependencies()
    m.set("notify")
    m.set("stdout_path")
    m.project()
    m.parallel_environment()
    m.set("binding")
    m.queues()
    m.set("restart")
    m.set("shell")
    m.set("env")
    for key in ("checkpoint_when", "checkpoint_interval"):  # -c: 8.1.9 answers nothing to it
        if key in changes:
            job.spec[key] = changes[key]
    m.verification(changes.get("verify_level"))
    m.context(context_ops)
    m.task_concurrency()
    if m.may_not_be_running and m.running:
        raise m.refuse(f"job {job.number} can't modify running jobs")
    return m.lines, not m.warned
