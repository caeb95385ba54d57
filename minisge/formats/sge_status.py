"""sge_status(5): the codes of accounting(5)'s ``failed`` field and their texts.

One table for every reader: the accounting writer, ``qacct``, ``qstat -j``
and the exit-code rules (``minisge.rules.exit_codes``).  Standard library only
(the commands import it).
"""

from __future__ import annotations

# sge_status(5) / execution_states.c: the text after a ``failed`` code (qacct, qstat -j)
FAILED_TEXT: dict[int, str] = {
    0: "",
    1: "assumedly before job",
    2: "on executing shepherd",
    3: "before writing config",
    4: "before writing pid",
    5: "on reading config file",
    6: "setting processor set",
    7: "before prolog",
    8: "in prolog",
    9: "before pestart",
    10: "in pestart",
    11: "before job",
    12: "before pestop",
    13: "in pestop",
    14: "before epilog",
    15: "in epilog",
    16: "releasing processor set",
    17: "through signal",
    18: "shepherd returned error",
    19: "before writing exit_status",
    20: "found unexpected error file",
    21: "in recognizing job",
    22: "removed manually",
    24: "migrating",
    25: "rescheduling",
    26: "opening input/output file",
    27: "searching requested shell",
    28: "changing into working directory",
    29: "AFS setup",
    30: "application error returned",
    31: "accessing sgepasswd file",
    32: "entry is missing in sgepasswd file",
    33: "wrong password",
    34: "communicating with Grid Engine Helper Service",
    35: "before job in Grid Engine Helper Service",
    36: "checking configured daemons",
    37: "qmaster enforced h_rt, h_cpu, or h_vmem limit",
    38: "adding supplementary group",
    100: "assumedly after job",
}


def failed_text(code: int) -> str:
    """The text of a ``failed`` code (``invalid execution state`` for an unknown one)."""
    return FAILED_TEXT.get(code, "invalid execution state")

