"""The shepherd's ``config`` of a task: what the execd resolves before it forks.

From the qmaster's start message: the paths of the job's files (qsub(1)
``-o``/``-e``/``-i`` with their pseudo variables, the PE procedures' own
files), the job's environment (submit(1) ENVIRONMENTAL VARIABLES), the
special variables of the procedures' command lines (sge_conf(5) prolog,
sge_pe(5) start_proc_args) and the ids each procedure runs under.  The
shepherd (:mod:`minisge.execd.shepherd`) reads it back from the task's
directory.
"""

from __future__ import annotations

import os
import pwd
import sys
from collections.abc import Callable, Mapping
from typing import Any

from minisge.cell import Cell
from minisge.execd.load import ARCH
from minisge.formats import rsmap, submit_options
from minisge.name_service import passwd_entry
from minisge.rules import job_environment, mail
from minisge.rules.procedure_environment import DEFAULT_PATH, grid_engine_variables


def home_and_shell(uid: int) -> tuple[str, str]:
    """The home directory and login shell of ``uid`` (``/`` and ``/bin/sh``
    for a uid the password database does not know), as the name service
    keeps them (:mod:`minisge.name_service`)."""
    try:
        pw = passwd_entry(uid)
    except KeyError:
        return "/", "/bin/sh"
    return pw.pw_dir, pw.pw_shell or "/bin/sh"


def build_task_config(msg: Mapping[str, Any], host: str, cell: Cell, job_dir: str) -> dict[str, Any]:
    """The shepherd's config for a start message: paths resolved, environment built."""
    spec = msg["spec"]
    job_id, task_id = msg["job_id"], msg["task_id"]
    array = spec.get("array")
    task = task_id if array else None
    home, login_shell = home_and_shell(msg["uid"])
    user = msg["owner"]
    name = spec["job_name"]
    ctx = dict(job_id=job_id, task_id=task, user=user, home=home, hostname=host)
    cwd = spec.get("cwd") or home
    if spec.get("cwd"):
        cwd = submit_options.expand_path(cwd, job_name=name, **ctx)
        spec = dict(spec, cwd=cwd)
    stdout = submit_options.output_path("o", spec, is_dir=os.path.isdir, **ctx)
    merge = bool(spec.get("merge"))
    stderr = submit_options.output_path("e", spec, is_dir=os.path.isdir, **ctx)
    stdin = submit_options.output_path("i", spec, **ctx)
    shell = submit_options.select_path(spec.get("shell") or [], host) or msg.get("queue_shell") or "/bin/sh"
    q = msg["queue"]
    tmpdir = os.path.join(msg.get("tmpdir") or "/tmp", f"{job_id}.{task_id}.{q}")
    nslots = msg.get("slots", 1)
    env: dict[str, str] = job_environment.from_execd(os.environ)  # LANG, as 8.1.9's execd passes it on
    env.update({k: (v if v is not None else "") for k, v in (spec.get("env") or {}).items()})
    o_env = spec.get("o_env") or {}
    env.update({k: v for k, v in o_env.items() if v is not None})
    path_env = env.get("PATH") or DEFAULT_PATH
    ge: dict[str, str] = {  # Grid Engine's own variables
        "HOME": home,
        "USER": user,
        "LOGNAME": user,
        "SHELL": shell,
        "PATH": path_env,
        "ARC": ARCH,
        "SGE_ARCH": ARCH,
        "ENVIRONMENT": "BATCH",
        "HOSTNAME": host,
        "JOB_ID": str(job_id),
        "JOB_NAME": name,
        "REQUEST": name,
        "REQNAME": name,
        "QUEUE": q,
        "RESTARTED": str(msg.get("restarted", 0)),
        "NSLOTS": str(nslots),
        "NHOSTS": str(msg.get("nhosts", 1)),
        "NQUEUES": str(msg.get("nqueues", 1)),
        "SGE_ROOT": cell.root,
        "SGE_CELL": cell.name,
        "SGE_ACCOUNT": spec.get("account") or "sge",
        "SGE_BINARY_PATH": os.path.dirname(sys.executable),
        "SGE_JOB_SPOOL_DIR": job_dir,
        "SGE_STDOUT_PATH": stdout,
        "SGE_STDERR_PATH": stderr,
        "SGE_STDIN_PATH": stdin,
        "SGE_CWD_PATH": cwd,
        "TMPDIR": tmpdir,
        "TMP": tmpdir,
    }
    if array:
        ge.update(SGE_TASK_ID=str(task_id), SGE_TASK_FIRST=str(array[0]), SGE_TASK_LAST=str(array[1]),
                  SGE_TASK_STEPSIZE=str(array[2]))
    else:
        ge.update(SGE_TASK_ID="undefined", SGE_TASK_FIRST="undefined", SGE_TASK_LAST="undefined",
                  SGE_TASK_STEPSIZE="undefined")
    if msg.get("pe"):
        ge["PE"] = msg["pe"]
        ge["PE_HOSTFILE"] = os.path.join(job_dir, "pe_hostfile")
        if msg.get("rsh_command"):  # control_slaves TRUE: how the job reaches its slave hosts
            ge["SGE_RSH_COMMAND"] = job_environment.rsh_command(msg["rsh_command"], cell.root, ARCH)
    ge.update(rsmap.job_environment(msg.get("resource_map") or {}))
    interactive = spec.get("interactive")
    if interactive:  # 8.1.9's JOB_SCRIPT of a qrsh / qlogin job
        ge["JOB_SCRIPT"] = "QLOGIN" if interactive.get("kind") == "qlogin" else "QRSH"
    elif spec.get("binary"):
        ge["JOB_SCRIPT"] = spec["command"]
    else:
        ge["JOB_SCRIPT"] = msg["script_file"]
    env.update(ge)
    pe_out = pe_output_path("o", spec, cwd, is_dir=os.path.isdir, **ctx) if msg.get("pe") else None
    pe_err = pe_output_path("e", spec, cwd, is_dir=os.path.isdir, **ctx) if msg.get("pe") else None
    owner = {"uid": msg["uid"], "gid": msg["gid"]}
    variables = procedure_variables(msg, host, cell, job_dir, name=name, task=task, stdin=stdin,
                                    stdout=stdout, stderr=stderr, merge=merge)
    procedures = {
        step: resolve_procedure(p, owner)
        for step, p in (msg.get("procedures") or {}).items() if p
    }
    # what the procedures alone read, written only for a task that has some (the config is
    # written at every task's start: a third of it, and of its cost, for nothing otherwise):
    # sge_pe(5) $stdout_path/$stderr_path of the PE procedures are their own files, and a
    # procedure run as another user than the owner gets Grid Engine's variables alone
    # (minisge.rules.procedure_environment)
    for_procedures = {
        "pe_variables": dict(variables, stdout_path=pe_out, stderr_path=pe_err),
        "sge_env": grid_engine_variables(ge, o_env),
    } if procedures else {}
    return {
        "job_id": job_id,
        "task_id": task_id,
        "dispatched": msg.get("dispatched"),  # the run's identity, echoed in its end report
        "uid": msg["uid"],
        "gid": msg["gid"],
        "cwd": cwd,
        "stdout_path": stdout,
        "stderr_path": stderr,
        "stdin_path": stdin,
        "merge": merge,
        "shell": shell,
        "shell_start_mode": msg.get("shell_start_mode", "posix_compliant"),
        "binary": bool(spec.get("binary")),
        "noshell": bool(spec.get("no_shell")),
        "command": spec.get("command"),
        "args": spec.get("args") or [],
        "script_file": msg.get("script_file"),
        "env": env,
        "tmpdir": tmpdir,
        "pe_hostfile": msg.get("pe_hostfile"),
        "pe": msg.get("pe"),
        "pe_stdout_path": pe_out,
        "pe_stderr_path": pe_err,
        "procedures": procedures,
        # qsub -m/-M: the execd's mails (minisge.execd.mail) through sge_conf(5) mailer
        "mail": {"mailer": msg.get("mailer") or "/bin/mail", "options": spec.get("mail_options") or "",
                 "list": mail.recipients(spec.get("mail_list") or [], user, o_env.get("SGE_O_HOST") or ""),
                 "job_name": name, "owner": user, "cqueue": q, "task": task, "start_time": msg.get("dispatched")},
        "variables": variables,  # the procedures' and the job control methods' (queue_conf(5) suspend_method)
        **for_procedures,
        "forbid_reschedule": bool(msg.get("forbid_reschedule")),
        "forbid_apperror": bool(msg.get("forbid_apperror")),
        "starter_method": msg.get("starter_method"),
        "priority": msg.get("priority"),
        "login_shells": msg.get("login_shells") or [],
        # qrsh, qlogin (minisge.execd.interactive): where qrsh waits, and the owner's login shell
        "interactive": dict(interactive) if interactive else None,
        "login_shell": login_shell,
    }


def pe_output_path(kind: str, spec: Mapping[str, Any], workdir: str, *, is_dir: Callable[[str], bool], job_id: int,
                   task_id: int | None, user: str, home: str, hostname: str) -> str:
    """Where the PE start/stop procedures write (sge_pe(5), exec_job.c): the
    job's -o/-e path when it names a file, else ``REQUEST.poJID`` /
    ``REQUEST.peJID`` in that directory or the working directory."""
    key = "stdout_path" if kind == "o" else "stderr_path"
    chosen = submit_options.select_path(spec.get(key) or [], hostname)
    name = submit_options.default_output_name("p" + kind, spec["job_name"], job_id, task_id)
    if not chosen:
        return workdir.rstrip("/") + "/" + name
    path = submit_options.expand_path(chosen, job_id=job_id, task_id=task_id, job_name=spec["job_name"],
                                      user=user, home=home, hostname=hostname)
    if not path.startswith("/"):
        path = workdir.rstrip("/") + "/" + path
    return path.rstrip("/") + "/" + name if is_dir(path) else path


def procedure_variables(msg: Mapping[str, Any], host: str, cell: Cell, job_dir: str, *, name: str, task: int | None,
                        stdin: str, stdout: str, stderr: str, merge: bool) -> dict[str, str | None]:
    """The values of the special variables of procedure command lines
    (sge_conf(5) prolog, sge_pe(5) start_proc_args): as Grid Engine 8.1.9
    gives them, e.g. ``$ja_task_id`` 0 for a job that is no array and
    ``$processors`` the queue's value (``UNDEFINED`` by default)."""
    values = {
        "host": host,
        "job_owner": msg["owner"],
        "job_id": str(msg["job_id"]),
        "job_name": name,
        "queue": msg["queue"],
        "processors": msg.get("processors") or "UNDEFINED",
        "sge_cell": cell.name,
        "sge_root": cell.root,
        "stdin_path": stdin,
        "stdout_path": stdout,
        "stderr_path": stderr,
        "merge_stderr": "1" if merge else "0",
        "ja_task_id": str(task or 0),
    }
    for stream in ("stdin", "stdout", "stderr"):  # no file staging in minisge
        values.update({f"fs_{stream}_host": "", f"fs_{stream}_path": "", f"fs_{stream}_tmp_path": "",
                       f"fs_{stream}_file_staging": "0"})
    if msg.get("pe"):
        values.update(pe=msg["pe"], pe_slots=str(msg.get("slots", 1)),
                      pe_hostfile=os.path.join(job_dir, "pe_hostfile"))
    return values


def resolve_procedure(proc: Mapping[str, Any], owner: Mapping[str, int]) -> dict[str, Any]:
    """A procedure's command with the ids it runs under: the ``user@``
    prefix's, or the job owner's (queue_conf(5) prolog)."""
    user = proc.get("user")
    out = {"command": proc["command"], "user": user}
    if not user:
        return dict(out, uid=owner["uid"], gid=owner["gid"])
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return dict(out, error=f'can\'t get password entry for user "{user}". '
                               'Either the user does not exist or NIS error!')
    try:
        groups = os.getgrouplist(user, pw.pw_gid)
    except OSError:
        groups = [pw.pw_gid]
    return dict(out, uid=pw.pw_uid, gid=pw.pw_gid, groups=groups)
