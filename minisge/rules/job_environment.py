"""What of a job's environment is not the job's own request nor Grid
Engine's per-task variables (those are built by
:func:`minisge.execd.shepherd_config.build_task_config`), as the real 8.1.9
sets it (tests/golden/job_env.*, /work/shared/golden/job_env.*):

- ``LANG`` of the execd's own environment reaches the job (8.1.9's shepherd
  passes its environment on, and the job then gets the rest of its variables
  over it: ``LANG=C`` in every job of an execd started with ``LANG=C``).
  minisge passes ``LANG`` alone: nothing else of the daemon's environment
  (no ``PYTHON*``, no ``LC_CTYPE`` Python set for itself, no ``PATH``).
- ``SGE_RSH_COMMAND`` in a job of a PE with ``control_slaves TRUE``: the
  sge_conf(5) ``rsh_command`` (``builtin`` by default), or, when it is
  ``none``, ``$SGE_ROOT/utilbin/$ARCH/rsh`` (exec_job.c).
- qsub sends ``TERM`` empty unless ``-v``/``-V`` give it, and no
  ``LC_CTYPE`` Python set for itself
  (:func:`minisge.formats.submit_options.submitter_environment`); a job
  gets ``TERM=``.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the variables of the execd's own environment a job gets
FROM_EXECD = ("LANG",)


def from_execd(execd_environment: Mapping[str, str]) -> dict[str, str]:
    """The part of the execd's environment a job starts with (overwritten by its own)."""
    return {k: execd_environment[k] for k in FROM_EXECD if k in execd_environment}


def rsh_command(configured: str, sge_root: str, arch: str) -> str:
    """SGE_RSH_COMMAND of a tightly integrated PE job."""
    if configured.strip().lower() in ("", "none"):
        return f"{sge_root}/utilbin/{arch}/rsh"
    return configured
