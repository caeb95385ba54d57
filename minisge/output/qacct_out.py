"""``qacct`` output, byte-exact with Grid Engine 8.1.9 (standard library only).

Input: accounting records, one per line of the accounting file, as plain dicts
(or any object with these attributes), keyed by the field names of
accounting(5)::

    qname hostname group owner job_name job_number account priority
    submission_time start_time end_time failed exit_status ru_wallclock
    ru_utime ru_stime ru_maxrss ru_ixrss ru_ismrss ru_idrss ru_isrss
    ru_minflt ru_majflt ru_nswap ru_inblock ru_oublock ru_msgsnd ru_msgrcv
    ru_nsignals ru_nvcsw ru_nivcsw project department granted_pe slots
    task_number cpu mem io category iow pe_taskid maxvmem arid
    ar_submission_time

Times are epoch seconds (0 = never), ``mem`` is GB·s, ``io`` GB, ``maxvmem``
bytes, the rest as the accounting file holds them.  A missing string field
prints as ``(NULL)`` (qacct's placeholder for an empty field), a missing number
as 0.  Selecting records (``-j``, ``-o user``, ``-b``/``-e``/``-d``, ``-t``...)
is the command's work; these functions print what they are given.

Public functions:

* :func:`format_qacct_job` — one ``qacct -j`` block;
  :func:`format_qacct_jobs` — all blocks of a ``qacct -j`` run.
* :func:`format_qacct_summary` — ``qacct`` (``Total System Usage``) and the
  per-column summaries ``-h -q -g -o -P -D -pe -slots -ar -A``.
* :func:`format_job_not_found` and friends — the stderr lines of a ``-j``
  that matched nothing (qacct then exits 1).
* :func:`failed_description`, :func:`format_memory` — the helpers they use.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's strsignal, without signal's enums
import time
from _collections_abc import Mapping  # collections.abc's own, without importing collections

from minisge.formats.sge_status import FAILED_TEXT
from minisge.output.text import printable

TYPE_CHECKING = False  # not typing's: the commands must not pay for importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = [
    "FAILED_TEXT",
    "SUMMARY_COLUMNS",
    "failed_description",
    "format_memory",
    "format_qacct_job",
    "format_qacct_jobs",
    "format_qacct_summary",
    "format_job_not_found",
    "format_job_name_not_found",
    "format_tasks_not_found",
]

SEPARATOR = "=" * 62
NULL = "(NULL)"


_STRING_FIELDS = frozenset(
    "qname hostname group owner job_name account project department granted_pe "
    "category pe_taskid".split()
)


def _get(record: Any, name: str) -> Any:
    """Field ``name`` of a record given as a mapping or as an object."""
    if isinstance(record, Mapping):
        value = record.get(name)
    else:
        value = getattr(record, name, None)
    if value is None and name not in _STRING_FIELDS:
        return 0
    return value


def _text(record: Any, name: str) -> str:
    """A string field; qacct prints ``(NULL)`` for an empty one."""
    value = _get(record, name)
    return NULL if value is None or value == "" else printable(value)


def failed_description(code: int) -> str:
    """The text qacct prints for a ``failed`` code ("invalid execution state"
    for a code Grid Engine does not know)."""
    return FAILED_TEXT.get(int(code), "invalid execution state")


def _signal_name(number: int) -> str:
    """strsignal(3) of ``number``, as glibc words it."""
    try:
        text = _signal.strsignal(number)
    except ValueError:
        text = None
    return text if text else f"Unknown signal {number}"


def format_memory(value: float) -> str:
    """A byte count in 1024 steps, ``%.3f`` with K/M/G/T, then ``B``.

    ``0`` → ``0.000B``; ``4964`` → ``4.848KB``; ``3313664`` → ``3.160MB``
    (qacct -j: ru_maxrss..ru_isrss, io, maxvmem; mem adds ``s``).
    """
    value = float(value)
    magnitude = abs(value)
    for unit, size in (("T", 1024.0**4), ("G", 1024.0**3), ("M", 1024.0**2), ("K", 1024.0)):
        if magnitude >= size:
            return f"{value / size:.3f}{unit}B"
    return f"{magnitude:.3f}B"


def _ctime(epoch: int) -> str:
    """ctime(3) without the newline, in local time: ``Sun Nov 22 00:52:09 2026``."""
    return time.asctime(time.localtime(int(epoch)))


def _line(key: str, value: str) -> str:
    """``%-13.12s%s``: the key cut to 12 characters in a 13-column field."""
    return f"{key[:12]:<13}{value}\n"


def _padded(key: str, value: Any) -> str:
    """``%-13.12s%-20s``: the value padded to 20 columns."""
    return _line(key, f"{value!s:<20}")


def _time_line(key: str, epoch: int) -> str:
    """A date line; ``-/-`` when the time is 0 (start/end of a job that never ran)."""
    if not epoch:
        return _line(key, "-/-")
    return _line(key, f"{_ctime(epoch):<20}")


def format_qacct_job(record: Any) -> str:
    """One ``qacct -j`` block: a line of 62 ``=`` then one ``key value`` line
    per field, in qacct's order (qacct.c showjob)."""
    r = record
    failed = int(_get(r, "failed"))
    exit_status = int(_get(r, "exit_status"))
    task = int(_get(r, "task_number"))
    arid = int(_get(r, "arid"))
    ar_sub = int(_get(r, "ar_submission_time"))
    exit_text = f"{exit_status:<20}"
    if exit_status > 127:
        exit_text += f" ({_signal_name(exit_status - 128)})"
    out = [
        SEPARATOR + "\n",
        _padded("qname", _text(r, "qname")),
        _padded("hostname", _text(r, "hostname")),
        _padded("group", _text(r, "group")),
        _padded("owner", _text(r, "owner")),
        _padded("project", _text(r, "project")),
        _padded("department", _text(r, "department")),
        _padded("jobname", _text(r, "job_name")),
        _padded("jobnumber", int(_get(r, "job_number"))),
        _padded("taskid", task) if task else _line("taskid", "undefined"),
        _padded("account", _text(r, "account")),
        _padded("priority", int(_get(r, "priority"))),
        _line("qsub_time", f"{_ctime(_get(r, 'submission_time')):<20}"),
        _time_line("start_time", _get(r, "start_time")),
        _time_line("end_time", _get(r, "end_time")),
        _padded("granted_pe", _text(r, "granted_pe")),
        _padded("slots", int(_get(r, "slots"))),
        _line("failed", f"{failed:<3} {':' if failed else ''} {failed_description(failed)}"),
        _line("exit_status", exit_text),
        _line("ru_wallclock", f"{float(_get(r, 'ru_wallclock')):.0f}s"),
        _line("ru_utime", f"{float(_get(r, 'ru_utime')):.3f}s"),
        _line("ru_stime", f"{float(_get(r, 'ru_stime')):.3f}s"),
    ]
    for name in ("ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss"):
        out.append(_line(name, format_memory(_get(r, name))))
    for name in ("ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock",
                 "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw"):
        out.append(_padded(name, int(float(_get(r, name)))))
    gib = 1024.0**3
    out += [
        _line("cpu", f"{float(_get(r, 'cpu')):.3f}s"),
        _line("mem", format_memory(float(_get(r, "mem")) * gib) + "s"),
        _line("io", format_memory(float(_get(r, "io")) * gib)),
        _line("iow", f"{float(_get(r, 'iow')):.3f}s"),
        _line("maxvmem", format_memory(_get(r, "maxvmem"))),
        _padded("arid", arid) if arid else _line("arid", "undefined"),
        _line("ar_sub_time", f"{_ctime(ar_sub):<20}") if ar_sub else _line("ar_sub_time", "undefined"),
        _line("category", _text(r, "category") if _get(r, "category") else "NONE"),
    ]
    if _get(r, "resource_map"):  # minisge's: the instances of sge_rsmap(5) granted (no line in 8.1.9)
        out.append(_line("resource_map", _text(r, "resource_map")))
    return "".join(out)


def format_qacct_jobs(records: Iterable[Any]) -> str:
    """Every block of a ``qacct -j`` run (array tasks and re-runs each have one)."""
    return "".join(format_qacct_job(r) for r in records)


def format_job_not_found(job_number: int) -> str:
    """stderr of ``qacct -j N`` when no record matches (qacct exits 1)."""
    return f"error: job id {int(job_number)} not found\n"


def format_job_name_not_found(job_name: str) -> str:
    """stderr of ``qacct -j NAME`` when no record matches (qacct exits 1)."""
    return f"error: job name {printable(job_name)} not found\n"


def format_tasks_not_found(job: int | str, start: int, end: int, step: int) -> str:
    """stderr of ``qacct -j JOB -t start-end:step`` when no record matches."""
    if isinstance(job, str) and not job.isdigit():
        job = f'"{job}"'
    return f"error: Job-array tasks {job}.{start}-{end}:{step} not found\n"


#: Summary columns in qacct's order: (record field, header).
SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("hostname", "HOST"),
    ("qname", "CLUSTER QUEUE"),
    ("group", "GROUP"),
    ("owner", "OWNER"),
    ("project", "PROJECT"),
    ("department", "DEPARTMENT"),
    ("granted_pe", "PE"),
    ("slots", "SLOTS"),
    ("arid", "AR"),
    ("account", "ACCOUNT"),
)
_COLUMN_FIELDS = tuple(field for field, _ in SUMMARY_COLUMNS)
_NUMERIC_COLUMNS = ("slots", "arid")
_USAGE = ("ru_wallclock", "ru_utime", "ru_stime", "cpu", "mem", "io", "iow")
_TITLE = " ".join(f"{title:>{width}.{width}}" for title, width in (
    ("WALLCLOCK", 13), ("UTIME", 13), ("STIME", 13), ("CPU", 13), ("MEMORY", 18), ("IO", 18), ("IOW", 18)))


def _cell(width: int, text: str) -> str:
    """qacct's print_full: the text, then blanks up to ``width`` (never cut)."""
    return text + " " * max(0, width - len(text))


def _column_text(field: str, value: Any) -> str:
    """A summary cell: ``%5u`` for slots and AR ids, the string otherwise."""
    if field in _NUMERIC_COLUMNS:
        return f"{int(value or 0):>5}"
    return "" if value is None else printable(value)


def _usage_row(totals: Sequence[float]) -> str:
    wall, utime, stime, cpu, mem, io, iow = totals
    return (f"{wall:13.0f} {utime:13.3f} {stime:13.3f} {cpu:13.3f} "
            f"{mem:18.3f} {io:18.3f} {iow:18.3f}\n")


def _usage(record: Any) -> list[float]:
    return [float(_get(record, name)) for name in _USAGE]


#: A summary row's key: the values of the grouping columns (ints for slots and AR).
GroupKey = tuple[int | str, ...]


def _group_key(record: Any, field: str) -> int | str:
    value = _get(record, field)
    if field in _NUMERIC_COLUMNS:
        return int(value or 0)
    return "" if value is None else str(value)


def _sort_key(fields: Sequence[str], key: GroupKey) -> GroupKey:
    """qacct's sort: host, queue, group, owner, project, department, PE, slots,
    AR, all ascending (hosts without regard to case); account is no sort key,
    so accounts keep the order in which they first appear."""
    parts: list[int | str] = []
    for field, value in zip(fields, key, strict=True):
        if field == "account":
            continue
        parts.append(str(value).lower() if field == "hostname" else value)
    return tuple(parts)


def format_qacct_summary(
    records: Iterable[Any],
    by: Sequence[str] = (),
    fixed: Mapping[str, Any] | None = None,
) -> str:
    """``qacct`` without ``-j``: usage sums.

    ``by`` names the columns given as bare flags (``-h`` → ``"hostname"``,
    ``-q`` → ``"qname"``, ``-g`` → ``"group"``, ``-o``/``-u`` → ``"owner"``,
    ``-P`` → ``"project"``, ``-D`` → ``"department"``, ``-pe`` →
    ``"granted_pe"``, ``-slots`` → ``"slots"``, ``-ar`` → ``"arid"``, ``-A``
    → ``"account"``): one row per distinct combination, sorted.  ``fixed``
    maps the columns given with a value (``-o sgetest``) to that value: the
    column is printed with the value on the single row of totals (the command
    has already kept only matching records).  With neither, the header is
    ``Total System Usage``.  As in Grid Engine, no data row is printed when the
    total wall clock time is 0.
    """
    fixed = dict(fixed or {})
    flags = [f for f in _COLUMN_FIELDS if f in by and f not in fixed]
    unknown = set(by).union(fixed) - set(_COLUMN_FIELDS)
    if unknown:
        raise ValueError(f"unknown qacct summary column(s): {', '.join(sorted(unknown))}")
    shown = [f for f in _COLUMN_FIELDS if f in fixed or f in flags]

    totals = [0.0] * len(_USAGE)
    groups: dict[GroupKey, list[float]] = {}
    for record in records:
        usage = _usage(record)
        totals = [a + b for a, b in zip(totals, usage, strict=True)]
        if flags:
            key = tuple(_group_key(record, f) for f in flags)
            sums = groups.setdefault(key, [0.0] * len(_USAGE))
            groups[key] = [a + b for a, b in zip(sums, usage, strict=True)]
    rows = sorted(groups.items(), key=lambda item: _sort_key(flags, item[0]))

    widths = _summary_widths(shown, flags, fixed, [k for k, _ in rows])
    out: list[str] = []
    header = "".join(_cell(widths[f], dict(SUMMARY_COLUMNS)[f]) for f in shown)
    if not shown:
        out.append("Total System Usage\n")
    # The AR header is padded to the slots width (a quirk of qacct.c).
    out.append(header + _TITLE + "\n")
    out.append("=" * (sum(_header_width(f, widths) for f in shown) + len(_TITLE)) + "\n")
    if not totals[0]:
        return "".join(out)
    if flags:
        for key, sums in rows:
            values = dict(zip(flags, key, strict=True))
            cells = "".join(
                _cell(_value_width(f, widths), _column_text(f, fixed[f] if f in fixed else values[f]))
                for f in shown)
            out.append(cells + _usage_row(sums))
    else:
        cells = "".join(_cell(_value_width(f, widths), _column_text(f, fixed[f])) for f in shown)
        out.append(cells + _usage_row(totals))
    return "".join(out)


def _summary_widths(shown: Sequence[str], flags: Sequence[str], fixed: Mapping[str, Any],
                    keys: Sequence[GroupKey]) -> dict[str, int]:
    """Column widths as qacct computes them: header length + 1 at least, the
    longest value + 1 otherwise; slots and AR start at 5 and grow to one more
    than their ``%5u`` text."""
    headers = dict(SUMMARY_COLUMNS)
    widths: dict[str, int] = {}
    for field in _COLUMN_FIELDS:
        if field in _NUMERIC_COLUMNS:
            widths[field] = 5
        else:
            widths[field] = len(headers[field]) + 1
    for field, value in fixed.items():
        if field not in _NUMERIC_COLUMNS:
            widths[field] = max(len(str(value)) + 1, len(headers[field]) + 1)
    for key in keys:
        for field, value in zip(flags, key, strict=True):
            length = len(_column_text(field, value))
            if widths[field] <= length:
                widths[field] = length + 1
    if keys:
        # calc_column_sizes sees one entry whose unset slots/AR are 0 ("    0").
        for field in _NUMERIC_COLUMNS:
            if field not in flags and widths[field] <= 5:
                widths[field] = 6
    widths["_ar_header"] = widths["slots"]
    return widths


def _header_width(field: str, widths: Mapping[str, int]) -> int:
    """Width used for the header cell (and the ``=`` count) of a column."""
    return widths["_ar_header"] if field == "arid" else widths[field]


def _value_width(field: str, widths: Mapping[str, int]) -> int:
    return widths[field]
