"""The environment of a procedure run around the job (pure).

queue_conf(5) prolog and epilog, and sge_pe(5) start_proc_args and
stop_proc_args, are ``[user@]path``: run as the job owner, or as ``user``.
Run as the job owner, a procedure gets the job's environment (submit(1)
ENVIRONMENTAL VARIABLES: the job's ``-v``/``-V`` variables and Grid
Engine's own).  Run as *another* user (``root@``, typically), it must not
run with what the job owner chose: ``qsub -v PATH=~/bin:...`` or ``-v
BASH_ENV=~/evil.sh`` or ``LD_PRELOAD`` would be the owner's code run as
root.  So it gets only the variables Grid Engine itself sets for the task
(JOB_ID, SGE_TASK_ID, SGE_O_WORKDIR, ...: :func:`grid_engine_variables`),
with ``PATH`` the default path, and none of the job's ``-v``/``-V``
variables.

Grid Engine 8.1.9, measured (a ``root@`` prolog writing its environment
for a job submitted with ``-V -v PATH=/home/u/bin:...,LD_PRELOAD=...,
ENV=...,IFS=x,PYTHONPATH=...`` and BASH_ENV in qsub's environment): it
dropped BASH_ENV, ENV, IFS, LD_PRELOAD, LD_LIBRARY_PATH and TMPDIR, set
``PATH=<TMPDIR>:<default path>``, but kept the rest of ``-V``/``-v``
(PYTHONPATH, LANG, TERM, ...).  minisge does more, on purpose: no job
variable at all, and PATH without the TMPDIR in front (a directory the job
owner may write to); TMPDIR is left out as 8.1.9 leaves it out, TMP kept.
"""

from __future__ import annotations

from collections.abc import Mapping

# submit(1): the PATH of a job that brings none, and of a procedure run as another user
DEFAULT_PATH = "/usr/local/bin:/usr/ucb:/bin:/usr/bin"

# what a procedure run as another user never gets of Grid Engine's own variables
# (8.1.9 leaves TMPDIR out: a directory the job owner writes to)
NOT_FOR_ANOTHER_USER = frozenset({"TMPDIR"})

# the variables qsub sets from its environment (submit(1) SGE_O_*), the only
# names of the submitted ``o_env`` that count as Grid Engine's
SUBMIT_PREFIX = "SGE_O_"


def grid_engine_variables(task_variables: Mapping[str, str], o_env: Mapping[str, str | None]) -> dict[str, str]:
    """The variables Grid Engine sets for a task: those the execd sets
    (``task_variables``: JOB_ID, QUEUE, PE_HOSTFILE, ...) and qsub's
    ``SGE_O_*`` ones; any other name a submit brings is the job's."""
    out = {k: v for k, v in o_env.items() if k.startswith(SUBMIT_PREFIX) and v is not None}
    out.update(task_variables)
    return out


def runs_as_another_user(procedure_uid: int, owner_uid: int) -> bool:
    """Does a procedure run as another user than the job owner?"""
    return procedure_uid != owner_uid


def procedure_environment(job_env: Mapping[str, str], grid_engine_env: Mapping[str, str],
                          as_another_user: bool) -> dict[str, str]:
    """The environment a procedure is run with: the job's when it runs as
    the job owner, else Grid Engine's variables alone, PATH the default."""
    if not as_another_user:
        return dict(job_env)
    env = {k: v for k, v in grid_engine_env.items() if k not in NOT_FOR_ANOTHER_USER}
    env["PATH"] = DEFAULT_PATH
    return env
