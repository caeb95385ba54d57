"""accounting(5): the ``$SGE_ROOT/$SGE_CELL/common/accounting`` file.

One line per finished job (or job attempt, array task, PE task): 45 fields
separated by ``:`` in the order of accounting(5), written by the qmaster
with ``ACTFILE_FPRINTF_FORMAT`` (sge_rusage.c): integers as integers, the
``%f`` fields with six decimals (``0.005643``), strings as they are, an
empty string as ``NONE``.  Grid Engine does not escape ``:`` in a field;
only the job category can contain one (a string resource request), so a
line with more than 45 fields is read with the surplus given back to the
category, as written.  A new file starts with the spool comment header
(:func:`header`); ``#`` lines and lines of one character or less are
skipped as qacct does.

Lines of older versions that stop after ``pe_taskid`` (42 fields) or
``maxvmem`` (43) are read with the missing fields 0; they are written back
with all 45.

minisge's one addition: the record of a job granted instances of a
resource map (sge_rsmap(5), Open Cluster Scheduler's RSMAP) has a 46th
field, ``resource_map``, as ``qstat -j`` shows it (``gpu=host1=(0 1)``);
it is told from a ``:`` in the category by its form
(:func:`is_resource_map_field`).  8.1.9's qacct reads such a line and
ignores the field; every other record stays 45 fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from minisge.formats.errors import FormatError
from minisge.formats.sge_status import (  # re-exported: the failed codes
    failed_text,
)

FIELD_NAMES: tuple[str, ...] = (
    "qname", "hostname", "group", "owner", "job_name", "job_number",
    "account", "priority", "submission_time", "start_time", "end_time",
    "failed", "exit_status", "ru_wallclock", "ru_utime", "ru_stime",
    "ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss",
    "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock",
    "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw",
    "project", "department", "granted_pe", "slots", "task_number", "cpu",
    "mem", "io", "category", "iow", "pe_taskid", "maxvmem", "arid",
    "ar_submission_time",
)
NFIELDS = 45
CATEGORY = FIELD_NAMES.index("category")  # 39 (0-based)

# The %f fields of ACTFILE_FPRINTF_FORMAT; every other numeric field is an
# integer (u_long32, u_long64 or %d).
FLOAT_FIELDS = frozenset({
    "ru_utime", "ru_stime", "ru_maxrss", "ru_inblock", "cpu", "mem", "io",
    "iow", "maxvmem",
})
STRING_FIELDS = frozenset({
    "qname", "hostname", "group", "owner", "job_name", "account", "project",
    "department", "granted_pe", "category", "pe_taskid",
})
INT_FIELDS = frozenset(FIELD_NAMES) - FLOAT_FIELDS - STRING_FIELDS



class AccountingRecord(NamedTuple):
    """One accounting line; the field names are qacct's (accounting(5)).

    A NamedTuple rather than an attrs class: qacct reads 100,000s of these
    and a frozen attrs ``__init__`` of 45 fields costs several times more.
    It is immutable and hashable like the attrs models; use ``_replace``.
    """

    qname: str  # cluster queue
    hostname: str
    group: str
    owner: str
    job_name: str
    job_number: int
    account: str = "sge"
    priority: int = 0
    submission_time: int = 0  # epoch seconds
    start_time: int = 0  # 0 if the job never ran
    end_time: int = 0
    failed: int = 0  # sge_status(5) code, see FAILED_TEXT
    exit_status: int = 0  # 128 + signal when killed
    ru_wallclock: int = 0  # seconds
    ru_utime: float = 0.0
    ru_stime: float = 0.0
    ru_maxrss: float = 0.0  # kB (getrusage)
    ru_ixrss: int = 0
    ru_ismrss: int = 0
    ru_idrss: int = 0
    ru_isrss: int = 0
    ru_minflt: int = 0
    ru_majflt: int = 0
    ru_nswap: int = 0
    ru_inblock: float = 0.0
    ru_oublock: int = 0
    ru_msgsnd: int = 0
    ru_msgrcv: int = 0
    ru_nsignals: int = 0
    ru_nvcsw: int = 0
    ru_nivcsw: int = 0
    project: str = "NONE"
    department: str = "defaultdepartment"
    granted_pe: str = "NONE"
    slots: int = 1
    task_number: int = 0  # 0 for a job that is not an array
    cpu: float = 0.0  # seconds
    mem: float = 0.0  # GB seconds
    io: float = 0.0  # GB
    category: str = "NONE"
    iow: float = 0.0  # seconds
    pe_taskid: str = "NONE"
    maxvmem: float = 0.0  # bytes
    arid: int = 0
    ar_submission_time: int = 0
    resource_map: str = ""  # minisge's 46th field: sge_rsmap(5) instances granted ("" none, not written)

    @property
    def failed_text(self) -> str:
        return failed_text(self.failed)

    @property
    def queue_instance(self) -> str:
        """``qname@hostname``."""
        return f"{self.qname}@{self.hostname}"


# --- reading ------------------------------------------------------------------------

_KINDS = tuple("f" if n in FLOAT_FIELDS else "s" if n in STRING_FIELDS else "i" for n in FIELD_NAMES)


def _field_error(fields: list[str], path: str, lineno: int) -> FormatError:
    """Name the first field that is not what accounting(5) says it is."""
    for i, (name, kind) in enumerate(zip(FIELD_NAMES, _KINDS, strict=True)):
        text = fields[i]
        if kind == "i" and not (text.isascii() and text.isdigit()):
            return FormatError(
                f'field {i + 1} ({name}) must be a non-negative integer, not "{text}"', path, lineno
            )
        if kind == "f":
            try:
                float(text)
            except ValueError:
                return FormatError(f'field {i + 1} ({name}) must be a number, not "{text}"', path, lineno)
            if text.strip() != text or "_" in text or " " in text:
                return FormatError(f'field {i + 1} ({name}) must be a number, not "{text}"', path, lineno)
    return FormatError("malformed accounting record", path, lineno)


_RESOURCE_MAP_ENTRY = r"[^=:()\s,]+=[^=:()\s,]+=\([^():,]*\)"
_RESOURCE_MAP_FIELD = re.compile(rf"{_RESOURCE_MAP_ENTRY}(?:,{_RESOURCE_MAP_ENTRY})*")


def is_resource_map_field(text: str) -> bool:
    """Whether the last field of a line longer than 45 fields is minisge's
    ``resource_map`` (``gpu=host1=(0 1),gpu=host2=(0)``)."""
    return _RESOURCE_MAP_FIELD.fullmatch(text) is not None


def _fields(line: str, path: str, lineno: int) -> list[str]:
    """Split a line into exactly 45 fields (see the module docstring)."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    f = line.split(":")
    n = len(f)
    if n == NFIELDS:
        return f
    if n > NFIELDS:
        tail = NFIELDS - CATEGORY - 1  # fields after the category
        return f[:CATEGORY] + [":".join(f[CATEGORY : n - tail])] + f[n - tail :]
    if n >= 42:  # written before maxvmem / arid / ar_sub_time existed
        return f + ["0"] * (NFIELDS - n)
    raise FormatError(f"an accounting record has {NFIELDS} fields separated by ':', this line has {n}", path, lineno)


_tuple_new = tuple.__new__


def parse_line(line: str, path: str = "<input>", lineno: int = 0) -> AccountingRecord:
    """One accounting line (with or without its newline) as a record."""
    line = line.rstrip("\n").removesuffix("\r")
    head, colon, last = line.rpartition(":")
    resource_map = ""
    if colon and head.count(":") >= NFIELDS - 1 and is_resource_map_field(last):
        line, resource_map = head, last
    f = _fields(line, path, lineno)
    # int() would also take "-1", " 1" and "1_0": the integers are digits only.
    if not (
        f[5] + f[7] + f[8] + f[9] + f[10] + f[11] + f[12] + f[13] + f[17] + f[18] + f[19]
        + f[20] + f[21] + f[22] + f[23] + f[25] + f[26] + f[27] + f[28] + f[29] + f[30]
        + f[34] + f[35] + f[43] + f[44]
    ).isdigit():
        raise _field_error(f, path, lineno)
    try:
        fl = f[14] + f[15] + f[16] + f[24] + f[36] + f[37] + f[38] + f[40] + f[42]
        if " " in fl or "_" in fl:
            raise ValueError
        return _tuple_new(AccountingRecord, (
            f[0], f[1], f[2], f[3], f[4], int(f[5]), f[6], int(f[7]), int(f[8]),
            int(f[9]), int(f[10]), int(f[11]), int(f[12]), int(f[13]),
            float(f[14]), float(f[15]), float(f[16]), int(f[17]), int(f[18]),
            int(f[19]), int(f[20]), int(f[21]), int(f[22]), int(f[23]),
            float(f[24]), int(f[25]), int(f[26]), int(f[27]), int(f[28]),
            int(f[29]), int(f[30]), f[31], f[32], f[33], int(f[34]), int(f[35]),
            float(f[36]), float(f[37]), float(f[38]), f[39], float(f[40]), f[41],
            float(f[42]), int(f[43]), int(f[44]), resource_map,
        ))
    except ValueError:
        raise _field_error(f, path, lineno) from None


def read_file(
    text: str,
    path: str = "<input>",
    on_error: Callable[[FormatError], None] | None = None,
) -> Iterator[AccountingRecord]:
    """The records of an accounting file, in order.

    ``#`` comment lines (the header) and lines of one character or less are
    skipped (accounting(5)).  A malformed line raises :class:`FormatError`,
    or, with ``on_error``, is passed to it and skipped (qacct's "ignoring
    invalid entry in line N").
    """
    for lineno, line in enumerate(text.split("\n"), 1):
        if len(line) <= 1 or line[0] == "#":
            continue
        if on_error is None:
            yield parse_line(line, path, lineno)
            continue
        try:
            yield parse_line(line, path, lineno)
        except FormatError as err:
            on_error(err)


# --- writing ------------------------------------------------------------------------


def _s(value: str) -> str:
    """none_string (sge_rusage.c): an empty string is written NONE."""
    return value if value else "NONE"


def write_line(r: AccountingRecord) -> str:
    """The line the qmaster appends for ``r``, newline included."""
    return (
        f"{r.qname}:{r.hostname}:{r.group}:{r.owner}:{r.job_name}:{r.job_number}:"
        f"{r.account}:{r.priority}:{r.submission_time}:{r.start_time}:{r.end_time}:"
        f"{r.failed}:{r.exit_status}:{r.ru_wallclock}:{r.ru_utime:f}:{r.ru_stime:f}:"
        f"{r.ru_maxrss:f}:{r.ru_ixrss}:{r.ru_ismrss}:{r.ru_idrss}:{r.ru_isrss}:"
        f"{r.ru_minflt}:{r.ru_majflt}:{r.ru_nswap}:{r.ru_inblock:f}:{r.ru_oublock}:"
        f"{r.ru_msgsnd}:{r.ru_msgrcv}:{r.ru_nsignals}:{r.ru_nvcsw}:{r.ru_nivcsw}:"
        f"{_s(r.project)}:{_s(r.department)}:{_s(r.granted_pe)}:{r.slots}:"
        f"{r.task_number}:{r.cpu:f}:{r.mem:f}:{r.io:f}:{_s(r.category)}:{r.iow:f}:"
        f"{_s(r.pe_taskid)}:{r.maxvmem:f}:{r.arid}:{r.ar_submission_time}"
        f"{':' + r.resource_map if r.resource_map else ''}\n"
    )


def header(version: str = "8.1.9") -> str:
    """The comment header of a new accounting file (sge_spoolmsg_write)."""
    return f"# Version: {version}\n# \n# DO NOT MODIFY THIS FILE MANUALLY!\n# \n"


def split_queue_instance(qinstance: str) -> tuple[str, str]:
    """``all.q@node1`` -> (``all.q``, ``node1``); without ``@`` the host is
    empty (cqueue_name_split)."""
    q, _, host = qinstance.partition("@")
    return q, host
