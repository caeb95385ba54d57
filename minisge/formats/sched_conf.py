"""sched_conf(5): the scheduler configuration (``qconf -ssconf``).

The text is ``name value`` lines with the value at column 34 (SC_fields in
sge_flatfile_obj.c), every attribute present, in the fixed order of
:data:`ATTRIBUTE_ORDER`.  Grid Engine keeps times and a few lists as text
(written back as given) and the numbers as numbers: unsigned integers print
as integers, reals with ``%f`` (``5.000000``), booleans as ``TRUE``/``FALSE``,
``usage_weight_list`` as ``cpu=1.000000,mem=0.000000,io=0.000000`` and an
empty ``job_load_adjustments`` as ``NONE``.  The model stores exactly that.

:func:`evaluate_load_formula` computes a host's weighted load from the
``load_formula`` as the scheduler does (``scaled_mixed_load`` in
sort_hosts.c).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import SpecifierError, parse_memory, parse_time

VALUE_COLUMN = 34  # field width 33 + the separating blank

ATTRIBUTE_ORDER: tuple[str, ...] = (
    "algorithm", "schedule_interval", "maxujobs", "queue_sort_method",
    "job_load_adjustments", "load_adjustment_decay_time", "load_formula",
    "schedd_job_info", "flush_submit_sec", "flush_finish_sec", "params",
    "reprioritize_interval", "halftime", "usage_weight_list",
    "compensation_factor", "weight_user", "weight_project",
    "weight_department", "weight_job", "weight_tickets_functional",
    "weight_tickets_share", "share_override_tickets",
    "share_functional_shares", "max_functional_jobs_to_schedule",
    "report_pjob_tickets", "max_pending_tasks_per_job",
    "halflife_decay_list", "policy_hierarchy", "weight_ticket",
    "weight_waiting_time", "weight_deadline", "weight_urgency",
    "weight_priority", "max_reservation", "default_duration",
)

ERROR_LOAD_VAL = 9999.0  # sort_hosts.h: the load of a host whose load cannot be computed

USAGE_NAMES = ("cpu", "mem", "io")
SCHEDULER_PARAMS = ("PROFILE", "MONITOR", "JC_FILTER", "DURATION_OFFSET", "PE_RANGE_ALG")
PE_RANGE_ALGORITHMS = ("auto", "least", "bin", "highest")


U_LONG32_MAX = 2**32 - 1


def _ulong(value: str) -> int:
    """An unsigned 32-bit integer (object_parse_ulong32_from_string: a
    whole number, not negative)."""
    if not (value.isascii() and value.isdigit()) or int(value) > U_LONG32_MAX:
        raise SpecifierError(f'"{value}" is not an unsigned integer')
    return int(value)


def seconds(value: str, allow_infinity: bool = False) -> float:
    """A time value in seconds, not negative (nor INFINITY unless allowed)."""
    out = parse_time(value)
    if math.isnan(out) or out < 0 or (math.isinf(out) and not allow_infinity):
        raise SpecifierError(f'"{value}" is not a valid time value')
    return out


def _real(value: str) -> float:
    """A real number as sscanf("%lf") reads it, finite."""
    try:
        out = float(value)
    except ValueError:
        raise SpecifierError(f'"{value}" is not a real number') from None
    if not math.isfinite(out):
        raise SpecifierError(f'"{value}" is not a finite real number')
    return out


def _bool(value: str) -> bool:
    """object_parse_bool_from_string: true/t/1/yes/y or false/f/0/no/n."""
    v = value.lower()
    if v in ("true", "t", "1", "yes", "y"):
        return True
    if v in ("false", "f", "0", "no", "n"):
        return False
    raise SpecifierError(f'"{value}" is not a boolean (true or false)')


def _fmt_real(x: float) -> str:
    return f"{x:f}"


def _time_text(value: str, allow_infinity: bool = False) -> str:
    """A time value kept as text (schedule_interval 0:0:15 stays 0:0:15)."""
    seconds(value, allow_infinity)
    return value


# --- the list-valued attributes ---------------------------------------------------


def parse_load_adjustments(value: str) -> tuple[tuple[str, str], ...]:
    """job_load_adjustments: ``NONE`` or ``name=value`` items separated by
    commas; the value is a load correction (a number, memory or time)."""
    if value.lower() == "none":
        return ()
    out = []
    for item in re.split(r"[\s,]+", value.strip()):
        name, eq, val = item.partition("=")
        if not name or not eq or not val:
            raise SpecifierError(f'job_load_adjustments: "{item}" is not name=value')
        try:
            x = parse_memory(val)
        except SpecifierError:
            x = math.nan
        if not math.isfinite(x):
            raise SpecifierError(f'job_load_adjustments: "{val}" is not a load correction value')
        out.append((name, val))
    return tuple(out)


def write_load_adjustments(items: tuple[tuple[str, str], ...]) -> str:
    return ",".join(f"{n}={v}" for n, v in items) if items else "NONE"


def parse_usage_weight_list(value: str) -> tuple[tuple[str, float], ...]:
    """usage_weight_list: ``cpu=wcpu,mem=wmem,io=wio`` with real weights."""
    out: list[tuple[str, float]] = []
    for item in re.split(r"[\s,]+", value.strip()):
        name, eq, val = item.partition("=")
        if name not in USAGE_NAMES or not eq:
            raise SpecifierError(f'usage_weight_list: "{item}" is not cpu=w, mem=w or io=w')
        if any(n == name for n, _ in out):
            raise SpecifierError(f'usage_weight_list: "{name}" given more than once')
        out.append((name, _real(val)))
    return tuple(out)


def write_usage_weight_list(items: tuple[tuple[str, float], ...]) -> str:
    return ",".join(f"{n}={_fmt_real(w)}" for n, w in items) if items else "NONE"


@functools.lru_cache(maxsize=16)
def _scheduler_params(value: str) -> tuple[tuple[str, str], ...]:
    """parse_scheduler_params, remembered (a pass reads MONITOR and DURATION_OFFSET)."""
    return tuple(parse_scheduler_params(value).items())


def parse_scheduler_params(value: str) -> dict[str, str]:
    """params: ``none`` or ``NAME=value`` items (PROFILE, MONITOR, JC_FILTER,
    DURATION_OFFSET, PE_RANGE_ALG) separated by blanks, commas or
    semicolons.  Unknown names are refused (MSG_UNKNOWN_PARAM_S)."""
    out: dict[str, str] = {}
    for item in (t for t in re.split(r"[\s,;]+", value.strip()) if t):
        raw, _, val = item.partition("=")
        if raw.upper() == "NONE":
            continue
        name = raw.upper()
        if name not in SCHEDULER_PARAMS:
            raise SpecifierError(f'unknown parameter "{item}" in params')
        if name == "DURATION_OFFSET":
            seconds(val)
        elif name == "PE_RANGE_ALG":
            if val.lower() not in PE_RANGE_ALGORITHMS:
                raise SpecifierError(f'params: PE_RANGE_ALG must be one of {", ".join(PE_RANGE_ALGORITHMS)}')
        elif val:
            _bool(val)
        out[name] = val if val else "1"
    return out


def check_schedd_job_info(value: str) -> None:
    """schedd_job_info: ``true``, ``false`` or ``job_list`` and job ids."""
    words = value.split(None, 1)
    if words[0] in ("true", "false") and len(words) == 1:
        return
    if words[0] == "job_list" and len(words) == 2:
        for part in words[1].replace(" ", ",").split(","):
            if part and not re.fullmatch(r"\d+(-\d+(:\d+)?)?", part):
                raise SpecifierError(f'schedd_job_info: "{part}" is not a job id or range')
        return
    raise SpecifierError('schedd_job_info must be "true", "false" or "job_list" and a list of job ids')


def schedd_job_info_lists(value: str, job_id: int) -> bool:
    """Does schedd_job_info ``value`` keep the scheduler's messages of job
    ``job_id``: ``true`` every job's, ``false`` none, ``job_list 1,5-9``
    those listed (ranges ``N-M`` and ``N-M:step``)."""
    words = value.split(None, 1)
    if words[0] != "job_list":
        return words[0] != "false"
    for part in words[1].replace(" ", ",").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", part)
        if m:
            lo = int(m.group(1))
            hi, step = int(m.group(2) or lo), int(m.group(3) or 1)
            if lo <= job_id <= hi and (job_id - lo) % max(step, 1) == 0:
                return True
    return False


def check_halflife_decay_list(value: str) -> None:
    """halflife_decay_list: none or ``usage=time[:usage=time...]``, the time
    in minutes (-1 = running jobs only, 0 = no decay)."""
    if value.lower() == "none":
        return
    for item in value.split(":"):
        name, eq, val = item.partition("=")
        if name not in USAGE_NAMES or not eq:
            raise SpecifierError(f'halflife_decay_list: "{item}" is not cpu=m, io=m or mem=m')
        _real(val)


def check_policy_hierarchy(value: str) -> None:
    """policy_hierarchy: NONE or up to three of O, F, S, each at most once."""
    if value.upper() == "NONE":
        return
    for i, c in enumerate(value):
        if c.upper() not in "OFS":
            raise SpecifierError(f'policy_hierarchy: invalid character "{c}" (use O, F and S)')
        if c.upper() in value[:i].upper():
            raise SpecifierError(f'policy_hierarchy: "{c}" given more than once')


# --- load formula ----------------------------------------------------------------

_NUMBER = re.compile(r"[+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\Z")


def _number(token: str) -> float | None:
    if not _NUMBER.match(token):
        return None
    t = token.lstrip("+")
    return float(int(t, 16)) if t[:2].lower() == "0x" else float(t)


@attrs.frozen
class LoadTerm:
    """One summand: ``sign * factor * weight``; ``factor`` is a load value
    name (str) or a number (float)."""

    sign: int
    factor: str | float
    weight: float = 1.0


@functools.lru_cache(maxsize=256)
def parse_load_formula(formula: str) -> tuple[LoadTerm, ...]:
    """sched_conf(5) load_formula: ``{w1|load_val1[*w1]}[{+|-}...]``.

    Terms are separated by ``+``/``-`` (a leading ``-`` negates the first);
    a term is a number or a load value name (``$`` prefix allowed) with an
    optional ``*weight`` (a number).  No blanks; ``none`` is refused
    (validate_load_formula in sge_centry.c).
    """
    if formula.lower() == "none":
        raise SpecifierError("load_formula: NONE is not allowed")
    if not formula or re.search(r"\s", formula):
        raise SpecifierError("load_formula: blanks are not allowed in the load formula")
    pieces = re.split(r"([+-])", formula)
    sign = 1
    if pieces[0] == "" and len(pieces) > 1:
        sign = -1 if pieces[1] == "-" else 1
        pieces = pieces[2:]
    terms: list[LoadTerm] = []
    for i in range(0, len(pieces), 2):
        term = pieces[i]
        if not term:
            raise SpecifierError(f'load_formula "{formula}": empty term')
        factors = term.split("*")
        if len(factors) > 2:
            raise SpecifierError(f'load_formula "{formula}": multiple weighting factors in "{term}"')
        first = factors[0]
        num = _number(first)
        if num is None:
            name = first[1:] if first.startswith("$") else first
            if not name or re.search(r"[/&|^=,]", name):
                raise SpecifierError(f'load_formula "{formula}": "{first}" is not a load value name')
            factor: str | float = name
        else:
            factor = num
        weight = 1.0
        if len(factors) == 2:
            w = _number(factors[1])
            if w is None:
                raise SpecifierError(f'load_formula "{formula}": weighting factor "{factors[1]}" is not a number')
            weight = w
        terms.append(LoadTerm(sign, factor, weight))
        if i + 1 < len(pieces):
            sign = -1 if pieces[i + 1] == "-" else 1
    return tuple(terms)


def evaluate_load_formula(formula: str, values: Mapping[str, float]) -> float:
    """The weighted load of a host: the formula's terms summed, each load
    value name looked up in ``values`` (load values and consumables of the
    host).  A name without a value makes the whole result
    :data:`ERROR_LOAD_VAL` (9999), so the host sorts as heavily loaded, as
    in Grid Engine.  A malformed formula raises :class:`SpecifierError`."""
    total = 0.0
    for term in parse_load_formula(formula):
        if isinstance(term.factor, str):
            got = values.get(term.factor)
            if got is None:
                return ERROR_LOAD_VAL
            x = float(got)
        else:
            x = term.factor
        total += term.sign * x * term.weight
    return total


# --- the model -------------------------------------------------------------------


def _check_load_formula(value: str) -> str:
    parse_load_formula(value)
    return value


def _check_algorithm(value: str) -> str:
    if value not in ("default", "simple_sched") and not value.startswith("ext_"):
        raise SpecifierError(f'"{value}" is not a valid algorithm name (default)')
    return value


def _check_queue_sort_method(value: str) -> str:
    if value.lower() not in ("load", "seqno"):
        raise SpecifierError(f'queue_sort_method must be "load" or "seqno", not "{value}"')
    return value.lower()


def _checked(check: Callable[[str], object]) -> Callable[[str], str]:
    """A reader that checks the text and keeps it as given."""

    def run(value: str) -> str:
        check(value)
        return value

    return run


@attrs.frozen
class SchedConf:
    """The scheduler configuration; defaults are Grid Engine's compiled-in
    ``sconf_create_default`` (what an 8.1.9 installation shows)."""

    algorithm: str = "default"
    schedule_interval: str = "0:0:15"
    maxujobs: int = 0
    queue_sort_method: str = "load"
    job_load_adjustments: tuple[tuple[str, str], ...] = (("np_load_avg", "0.50"),)
    load_adjustment_decay_time: str = "0:7:30"
    load_formula: str = "np_load_avg"
    schedd_job_info: str = "true"
    flush_submit_sec: int = 0
    flush_finish_sec: int = 0
    params: str = "none"
    reprioritize_interval: str = "0:0:0"
    halftime: int = 168
    usage_weight_list: tuple[tuple[str, float], ...] = (("cpu", 1.0), ("mem", 0.0), ("io", 0.0))
    compensation_factor: float = 5.0
    weight_user: float = 0.25
    weight_project: float = 0.25
    weight_department: float = 0.25
    weight_job: float = 0.25
    weight_tickets_functional: int = 0
    weight_tickets_share: int = 0
    share_override_tickets: bool = True
    share_functional_shares: bool = True
    max_functional_jobs_to_schedule: int = 200
    report_pjob_tickets: bool = True
    max_pending_tasks_per_job: int = 50
    halflife_decay_list: str = "none"
    policy_hierarchy: str = "OFS"
    weight_ticket: float = 0.5
    weight_waiting_time: float = 0.278
    weight_deadline: float = 3600000.0
    weight_urgency: float = 0.5
    weight_priority: float = 0.0
    max_reservation: int = 0
    default_duration: str = "INFINITY"

    # typed views
    @property
    def schedule_interval_seconds(self) -> float:
        return parse_time(self.schedule_interval)

    @property
    def load_adjustment_decay_seconds(self) -> float:
        return parse_time(self.load_adjustment_decay_time)

    @property
    def reprioritize_interval_seconds(self) -> float:
        return parse_time(self.reprioritize_interval)

    @property
    def default_duration_seconds(self) -> float:
        return parse_time(self.default_duration)

    @property
    def scheduler_params(self) -> dict[str, str]:
        return dict(_scheduler_params(self.params))

    @property
    def duration_offset(self) -> float:
        """params DURATION_OFFSET, default 60 seconds."""
        return parse_time(self.scheduler_params.get("DURATION_OFFSET", "60"))

    @property
    def monitor(self) -> bool:
        """params MONITOR: write the schedule file ($SGE_ROOT/$SGE_CELL/common/schedule) each pass."""
        return _bool(self.scheduler_params.get("MONITOR", "false"))

    @property
    def schedd_job_info_enabled(self) -> bool:
        return self.schedd_job_info != "false"

    def load(self, values: Mapping[str, float]) -> float:
        """The weighted load of a host by this configuration's formula."""
        return evaluate_load_formula(self.load_formula, values)


# name -> (parse text to value, value to text); the values' types differ by
# field (the attrs class SchedConf says which), hence Any
_FIELDS: dict[str, tuple[Callable[[str], Any], Callable[[Any], str]]] = {
    "algorithm": (_check_algorithm, str),
    "schedule_interval": (_time_text, str),
    "maxujobs": (_ulong, str),
    "queue_sort_method": (_check_queue_sort_method, str),
    "job_load_adjustments": (parse_load_adjustments, write_load_adjustments),
    "load_adjustment_decay_time": (_time_text, str),
    "load_formula": (_check_load_formula, str),
    "schedd_job_info": (_checked(check_schedd_job_info), str),
    "flush_submit_sec": (_ulong, str),
    "flush_finish_sec": (_ulong, str),
    "params": (_checked(parse_scheduler_params), str),
    "reprioritize_interval": (_time_text, str),
    "halftime": (_ulong, str),
    "usage_weight_list": (parse_usage_weight_list, write_usage_weight_list),
    "compensation_factor": (_real, _fmt_real),
    "weight_user": (_real, _fmt_real),
    "weight_project": (_real, _fmt_real),
    "weight_department": (_real, _fmt_real),
    "weight_job": (_real, _fmt_real),
    "weight_tickets_functional": (_ulong, str),
    "weight_tickets_share": (_ulong, str),
    "share_override_tickets": (_bool, lambda b: "TRUE" if b else "FALSE"),
    "share_functional_shares": (_bool, lambda b: "TRUE" if b else "FALSE"),
    "max_functional_jobs_to_schedule": (_ulong, str),
    "report_pjob_tickets": (_bool, lambda b: "TRUE" if b else "FALSE"),
    "max_pending_tasks_per_job": (_ulong, str),
    "halflife_decay_list": (_checked(check_halflife_decay_list), str),
    "policy_hierarchy": (_checked(check_policy_hierarchy), str),
    "weight_ticket": (_real, _fmt_real),
    "weight_waiting_time": (_real, _fmt_real),
    "weight_deadline": (_real, _fmt_real),
    "weight_urgency": (_real, _fmt_real),
    "weight_priority": (_real, _fmt_real),
    "max_reservation": (_ulong, str),
    "default_duration": (lambda v: _time_text(v, allow_infinity=True), str),
}
assert tuple(_FIELDS) == ATTRIBUTE_ORDER


def parse(text: str, path: str = "<input>") -> SchedConf:
    """Parse ``qconf -ssconf`` output or a ``sched_configuration`` file.

    Every attribute must be present once; the values are checked as
    sched_conf(5) and ``sconf_validate_config_`` require (FILE:LINE).
    """
    attrs_ = read_attributes(text, path, known=ATTRIBUTE_ORDER, required=ATTRIBUTE_ORDER, join="ge")
    values = {}
    for name, (read, _) in _FIELDS.items():
        attr = attrs_[name]
        value = attr.value
        if name not in ("schedd_job_info", "params") and len(value.split()) > 1:
            raise FormatError(f'"{name}" takes a single value, not "{value}"', path, attr.lineno)
        try:
            values[name] = read(value)
        except SpecifierError as err:
            msg = str(err)
            if name not in msg:
                msg = f'{name}: {msg}'
            raise FormatError(msg, path, attr.lineno) from None
    conf = SchedConf(**values)
    _check_whole(conf, path, {n: a.lineno for n, a in attrs_.items()})
    return conf


def _check_whole(conf: SchedConf, path: str, lines: dict[str, int]) -> None:
    """Rules that tie attributes together (sconf_validate_config_)."""
    if conf.max_pending_tasks_per_job == 0:
        raise FormatError("max_pending_tasks_per_job must be >0", path, lines.get("max_pending_tasks_per_job", 0))
    if conf.max_reservation != 0 and parse_time(conf.default_duration) == 0:
        raise FormatError(
            "default_duration must be non-zero when max_reservation is enabled",
            path, lines.get("default_duration", 0),
        )


def write(conf: SchedConf) -> str:
    """The text ``qconf -ssconf`` prints for ``conf``."""
    pairs = [(name, fmt(getattr(conf, name))) for name, (_, fmt) in _FIELDS.items()]
    return write_attributes(pairs, VALUE_COLUMN)


def default() -> SchedConf:
    """Grid Engine's compiled-in default (``sconf_create_default``)."""
    return SchedConf()


def template(profile: str = "normal") -> SchedConf:
    """The installation templates ``inst_schedd_{normal,high,max}.conf``."""
    normal = SchedConf(
        schedd_job_info="false", weight_ticket=0.01, weight_waiting_time=0.0,
        weight_urgency=0.1, weight_priority=1.0,
    )
    if profile == "normal":
        return normal
    high = attrs.evolve(normal, job_load_adjustments=(), load_adjustment_decay_time="0:0:0")
    if profile == "high":
        return high
    if profile == "max":
        return attrs.evolve(
            high, schedule_interval="0:2:0", flush_submit_sec=4, flush_finish_sec=4,
            report_pjob_tickets=False,
        )
    raise ValueError(f"unknown scheduler profile {profile!r} (normal, high, max)")
