"""sge_conf(5): the global and the host-local cluster configuration.

The text is what ``qconf -sconf [host]`` prints: a ``#global:`` (or
``#<host>:``) line, ``name value`` lines with the value at column 29 and
Grid Engine's 80-column line breaking, and a blank line at the end.  The
classic spool file (``common/configuration``, ``common/local_conf/<host>``)
is read too: its ``# Version`` comment header and ``conf_name`` /
``conf_version`` lines are accepted.

The model keeps the entries as text in file order (a host-local
configuration has only the entries it overrides, in the order given), so
``write(parse(text)) == text``.  Typed accessors read the values the engine
needs (``min_uid`` as int, ``load_report_time`` as seconds, ``execd_params``
as a dict, ``prolog`` as a :class:`Method`) and fall back to the defaults
of the man page when the entry is absent; :func:`merge` gives the effective
configuration of a host as Grid Engine computes it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import logical_lines, write_attributes
from minisge.formats.procedure_variables import PROLOG_EPILOG_VARIABLES
from minisge.formats.sge_types import SpecifierError, parse_time

GLOBAL = "global"
VALUE_COLUMN = 29  # CF_name field width in sge_flatfile_obj.c

# --- attribute table -------------------------------------------------------

# Order of ``qconf -sconf`` on an installed 8.1.9 cell (the golden sample),
# followed by the attributes an installation may add.
ATTRIBUTE_ORDER: tuple[str, ...] = (
    "execd_spool_dir", "mailer", "xterm", "load_sensor", "prolog", "epilog",
    "shell_start_mode", "login_shells", "min_uid", "min_gid", "user_lists",
    "xuser_lists", "projects", "xprojects", "enforce_project", "enforce_user",
    "load_report_time", "max_unheard", "reschedule_unknown", "loglevel",
    "administrator_mail", "set_token_cmd", "pag_cmd", "token_extend_time",
    "shepherd_cmd", "qmaster_params", "execd_params", "reporting_params",
    "finished_jobs", "gid_range", "qlogin_command", "qlogin_daemon",
    "rlogin_command", "rlogin_daemon", "rsh_command", "rsh_daemon",
    "max_aj_instances", "max_aj_tasks", "max_u_jobs", "max_jobs",
    "max_advance_reservations", "auto_user_oticket", "auto_user_fshare",
    "auto_user_default_project", "auto_user_delete_time",
    "delegated_file_staging", "reprioritize", "jsv_url", "jsv_allowed_mod",
    "libjvm_path", "additional_jvm_args",
)

# Attributes a host-local configuration may override: those marked "may be
# overwritten by the execution host local configuration" on the man page
# (user/project lists "restrict access to that host further").
LOCAL_ATTRIBUTES = frozenset({
    "execd_spool_dir", "mailer", "xterm", "load_sensor", "prolog", "epilog",
    "user_lists", "xuser_lists", "projects", "xprojects", "load_report_time",
    "reschedule_unknown", "set_token_cmd", "pag_cmd", "token_extend_time",
    "shepherd_cmd", "execd_params", "gid_range", "qlogin_command",
    "qlogin_daemon", "rlogin_command", "rlogin_daemon", "rsh_command",
    "rsh_daemon", "libjvm_path", "additional_jvm_args",
    # not marked on the page but host-local in Grid Engine (conf_entries[]):
    "shell_start_mode", "login_shells", "reporting_params",
})

# Values that may contain blanks (read to the end of the line, read_CF_value
# in sge_flatfile_obj.c); every other attribute takes exactly one word.
MULTIWORD_ATTRIBUTES = frozenset({
    "user_lists", "xuser_lists", "projects", "xprojects", "prolog", "epilog",
    "qmaster_params", "execd_params", "reporting_params", "qlogin_command",
    "rlogin_command", "rsh_command", "jsv_url", "jsv_allowed_mod",
    "qlogin_daemon", "rlogin_daemon", "rsh_daemon", "additional_jvm_args",
})

# Defaults from sge_conf(5) where the page names one, else the installation's.
MAN_PAGE_DEFAULTS: dict[str, str] = {
    "execd_spool_dir": "/opt/sge/default/spool",
    "mailer": "/bin/mail",
    "xterm": "/usr/bin/xterm",
    "load_sensor": "none",
    "prolog": "none",
    "epilog": "none",
    "shell_start_mode": "posix_compliant",
    "login_shells": "sh,bash,csh,tcsh,ksh",
    "min_uid": "0",
    "min_gid": "0",
    "user_lists": "none",
    "xuser_lists": "none",
    "projects": "none",
    "xprojects": "none",
    "enforce_project": "false",
    "enforce_user": "auto",
    "load_report_time": "00:00:40",
    "max_unheard": "00:05:00",
    "reschedule_unknown": "00:00:00",
    "loglevel": "log_warning",
    "administrator_mail": "none",
    "set_token_cmd": "none",
    "pag_cmd": "none",
    "token_extend_time": "24:0:0",
    "shepherd_cmd": "none",
    "qmaster_params": "none",
    "execd_params": "none",
    "reporting_params": "accounting=true reporting=false flush_time=00:00:15 joblog=false sharelog=00:00:00",
    "finished_jobs": "100",
    "gid_range": "20000-20100",
    "qlogin_command": "builtin",
    "qlogin_daemon": "builtin",
    "rlogin_command": "builtin",
    "rlogin_daemon": "builtin",
    "rsh_command": "builtin",
    "rsh_daemon": "builtin",
    "max_aj_instances": "2000",
    "max_aj_tasks": "75000",
    "max_u_jobs": "0",
    "max_jobs": "0",
    "max_advance_reservations": "0",
    "auto_user_oticket": "0",
    "auto_user_fshare": "0",
    "auto_user_default_project": "none",
    "auto_user_delete_time": "86400",
    "delegated_file_staging": "false",
    "reprioritize": "0",
    "jsv_url": "none",
    "jsv_allowed_mod": "ac,h,i,e,o,j,M,N,p,w",
    "libjvm_path": "",
    "additional_jvm_args": "",
}


# --- parameter lists (qmaster_params, execd_params, reporting_params) ------

_BOOL, _TIME, _INT, _TEXT = "bool", "time", "int", "text"

QMASTER_PARAMS: dict[str, str] = {
    "ENABLE_ENFORCE_MASTER_LIMIT": _BOOL, "ENABLE_FORCED_QDEL_IF_UNKNOWN": _BOOL,
    "ENABLE_FORCED_QDEL": _BOOL, "FORBID_RESCHEDULE": _BOOL, "FORBID_APPERROR": _BOOL,
    "DISABLE_AUTO_RESCHEDULING": _BOOL, "ENABLE_RESCHEDULE_KILL": _BOOL,
    "ENABLE_RESCHEDULE_SLAVE": _BOOL, "MAX_DYN_EC": _INT, "MONITOR_TIME": _TIME,
    "LOG_MONITOR_MESSAGE": _BOOL, "PROF_SIGNAL": _BOOL, "PROF_WORKER": _BOOL,
    "PROF_LISTENER": _BOOL, "PROF_DELIVER": _BOOL, "PROF_TEVENT": _BOOL,
    "PROF_SCHEDULER": _BOOL, "STREE_SPOOL_INTERVAL": _TIME,
    "MAX_JOB_DELETION_TIME": _INT, "gdi_timeout": _INT, "gdi_retries": _INT,
    "cl_ping": _BOOL, "SCHEDULER_TIMEOUT": _INT, "jsv_timeout": _INT,
    "jsv_threshold": _INT, "OLD_RESCHEDULE_BEHAVIOR": _BOOL,
    "OLD_RESCHEDULE_BEHAVIOR_ARRAY_JOB": _BOOL, "SIMULATE_EXECDS": _BOOL,
    "NO_AUTHENTICATION": _BOOL, "NO_SECURITY": _BOOL, "ENABLE_MTRACE": _BOOL,
    "__TEST_SLEEP_AFTER_REQUEST": _BOOL, "print_malloc_info": _BOOL,
    "ENABLE_SUBMIT_LIB_PATH": _BOOL,
}

EXECD_PARAMS: dict[str, str] = {
    "ACCT_RESERVED_USAGE": _BOOL, "ENABLE_WINDOMACC": _BOOL,
    "IGNORE_NGROUPS_MAX_LIMIT": _BOOL, "KEEP_ACTIVE": _BOOL,
    "PTF_MIN_PRIORITY": _INT, "PTF_MAX_PRIORITY": _INT, "PROF_EXECD": _BOOL,
    "NOTIFY_KILL": _TEXT, "NOTIFY_SUSP": _TEXT, "SHARETREE_RESERVED_USAGE": _BOOL,
    "USE_QSUB_GID": _BOOL, "S_DESCRIPTORS": _TEXT, "H_DESCRIPTORS": _TEXT,
    "S_MAXPROC": _TEXT, "H_MAXPROC": _TEXT, "S_MEMORYLOCKED": _TEXT,
    "H_MEMORYLOCKED": _TEXT, "S_LOCKS": _TEXT, "H_LOCKS": _TEXT,
    "INHERIT_ENV": _BOOL, "SET_LIB_PATH": _BOOL, "ENABLE_ADDGRP_KILL": _BOOL,
    "PDC_INTERVAL": "pdc", "ENABLE_BINDING": _BOOL, "SIMULATE_JOBS": _BOOL,
    "NO_AUTHENTICATION": _BOOL, "DO_AUTHENTICATION": _BOOL, "NO_SECURITY": _BOOL,
    "USE_SYSLOG": _BOOL, "USE_QIDLE": _BOOL, "USE_CGROUPS": _BOOL,
    "USE_SMAPS": _BOOL, "print_malloc_info": _BOOL, "DEMAND_LS": _BOOL,
}

REPORTING_PARAMS: dict[str, str] = {
    "accounting": _BOOL, "reporting": _BOOL, "flush_time": _TIME,
    "accounting_flush_time": _TIME, "joblog": _BOOL, "sharelog": _TIME,
    "log_consumables": _BOOL,
}


@functools.lru_cache(maxsize=64)
def _known_params(attribute: str, text: str) -> tuple[tuple[str, bool | str], ...]:
    """parse_params of one of the configuration's parameter lists, remembered
    (the qmaster reads them at every job end)."""
    known = {"qmaster_params": QMASTER_PARAMS, "execd_params": EXECD_PARAMS,
             "reporting_params": REPORTING_PARAMS}[attribute]
    return tuple(parse_params(text, known, attribute).items())


def parse_params(
    text: str, known: dict[str, str] | None = None, attribute: str = "params"
) -> dict[str, bool | str]:
    """A parameter list: ``NAME`` or ``NAME=VALUE`` items separated by
    blanks, commas or semicolons; ``none`` is the empty list.

    Names are matched without regard to case (strncasecmp in sge_conf.c)
    and keyed by the spelling of the man page.  A boolean parameter given
    alone is true; ``=1``/``=true`` is true, ``=0``/``=false`` false (any
    case).  Time and integer parameters are checked and kept as text;
    unknown parameters are kept as given (``True`` when they have no value).
    Raises :class:`SpecifierError` naming the bad item.
    """
    out: dict[str, bool | str] = {}
    items = [t for t in re.split(r"[\s,;]+", text.strip()) if t]
    if len(items) == 1 and items[0].lower() == "none":
        return out
    canon = {k.lower(): k for k in (known or {})}
    for item in items:
        raw_name, eq, value = item.partition("=")
        if not raw_name:
            raise SpecifierError(f'{attribute}: "{item}" has no parameter name')
        name = canon.get(raw_name.lower(), raw_name)
        kind = (known or {}).get(name)
        if kind == _BOOL:
            out[name] = _param_bool(attribute, name, value if eq else None)
        elif not eq:
            out[name] = True if kind is None else _missing_param_value(attribute, name)
        elif kind == _TIME:
            _check(_seconds, value, f'{attribute}: "{name}" needs a time value, not "{value}"')
            out[name] = value
        elif kind == "pdc":
            if value.upper() not in ("NEVER", "PER_LOAD_REPORT"):
                _check(_seconds, value,
                       f'{attribute}: "{name}" must be NEVER, PER_LOAD_REPORT or a time, not "{value}"')
            out[name] = value
        elif kind == _INT:
            if not re.fullmatch(r"[+-]?\d+", value):
                raise SpecifierError(f'{attribute}: "{name}" needs an integer, not "{value}"')
            out[name] = value
        else:
            out[name] = value
    return out


def _param_bool(attribute: str, name: str, value: str | None) -> bool:
    """parse_bool_param (config_file.c): alone = true, 1/true, 0/false."""
    if value is None or value == "1" or value.lower() == "true":
        return True
    if value == "0" or value.lower() == "false":
        return False
    raise SpecifierError(f'{attribute}: "{name}" must be true or false, not "{value}"')


def _missing_param_value(attribute: str, name: str) -> str:
    raise SpecifierError(f'{attribute}: "{name}" needs a value ({name}=...)')


def _check(fn: Callable[[str], object], value: str, message: str) -> None:
    try:
        fn(value)
    except SpecifierError:
        raise SpecifierError(message) from None


# --- values ------------------------------------------------------------------


@attrs.frozen
class Method:
    """A prolog/epilog (or mailer) value: ``[user@]/path [args]``."""

    command: str  # the command line, user prefix removed
    user: str | None = None  # run as this user (default: the job owner)

    @property
    def path(self) -> str:
        return self.command.split()[0]


def parse_method(value: str) -> Method | None:
    """sge_conf(5) prolog/epilog: ``none`` or ``[user@]/absolute/path args``.

    The user prefix is what comes before an ``@`` that precedes the first
    blank (check_config in configuration_qmaster.c).
    """
    if value.lower() == "none":
        return None
    at, blank = value.find("@"), value.find(" ")
    if at != -1 and (blank == -1 or at < blank):
        return Method(value[at + 1 :], value[:at])
    return Method(value)


def _split_list(value: str) -> tuple[str, ...]:
    """A comma/blank separated list; ``none`` is empty."""
    items = tuple(p for p in re.split(r"[\s,]+", value) if p)
    if len(items) == 1 and items[0].lower() == "none":
        return ()
    return items


def parse_gid_range(value: str) -> tuple[tuple[int, int], ...]:
    """gid_range: ``m-n`` ranges (``m`` alone is ``m-m``) separated by
    commas, every number greater than 99 (GID_RANGE_NOT_ALLOWED_ID)."""
    if value.lower() == "none":
        return ()
    out = []
    for part in value.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise SpecifierError(f'gid_range: "{part}" is not a range m-n')
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if lo < 100 or hi < lo:
            raise SpecifierError(f'gid_range: "{part}": ids must be greater than 99 and m <= n')
        out.append((lo, hi))
    return tuple(out)


# --- validation of one value ---------------------------------------------------


def _is_abs(word: str) -> bool:
    return word.startswith("/")


def _v_abs_path(name: str, value: str) -> None:
    if not _is_abs(value):
        raise SpecifierError(f'the path given for "{name}" must start with a "/"')


def _v_none_or_abs(name: str, value: str) -> None:
    if value.lower() != "none":
        _v_abs_path(name, value)


def _v_method(name: str, value: str) -> None:
    """prolog/epilog/mailer: none or [user@]/path, known $variables only."""
    method = parse_method(value)
    if method is None:
        return
    if method.user == "" or not _is_abs(method.command):
        raise SpecifierError(f'the path given for "{name}" must start with a "/"')
    for var in re.findall(r"\$(\w*)", method.command):
        if not var:
            raise SpecifierError(f'parameter "{name}": "$" must be followed by a variable name')
        if var not in PROLOG_EPILOG_VARIABLES:
            raise SpecifierError(f'parameter "{name}": unknown variable "{var}"')


def _v_load_sensor(name: str, value: str) -> None:
    if value.lower() == "none":
        return
    for path in value.split(","):
        if not _is_abs(path):
            raise SpecifierError(f'the path given for "{name}" must start with a "/": "{path}"')


def _v_one_of(*choices: str) -> Callable[[str, str], None]:
    def check(name: str, value: str) -> None:
        if value.lower() not in choices:
            raise SpecifierError(f'got invalid value "{value}" for {name}; expected one of {", ".join(choices)}')

    return check


def _v_uint(name: str, value: str) -> None:
    if not value.isdigit() or not value.isascii():
        raise SpecifierError(f'"{name}" must be a non-negative integer, not "{value}"')


def _seconds(value: str) -> float:
    """A time value in seconds: not negative, INFINITY allowed."""
    out = parse_time(value)
    if math.isnan(out) or out < 0:
        raise SpecifierError(f'"{value}" is not a time value')
    return out


def _v_time(name: str, value: str) -> None:
    _check(_seconds, value, f'"{name}" must be a time value (h:m:s or seconds), not "{value}"')


def _v_finite_time(name: str, value: str) -> None:
    _v_time(name, value)
    if math.isinf(parse_time(value)):
        raise SpecifierError(f'infinity not allowed for attribute "{name}"')


def _v_time_or_none(name: str, value: str) -> None:
    if value.lower() != "none":
        _v_time(name, value)


def _v_names(name: str, value: str) -> None:
    for item in _split_list(value):
        if not re.fullmatch(r"[^\s,:@/\\]+", item):
            raise SpecifierError(f'"{name}": "{item}" is not a valid name')


def _v_params(known: dict[str, str]) -> Callable[[str, str], None]:
    def check(name: str, value: str) -> None:
        parse_params(value, known, name)

    return check


def _v_gid_range(name: str, value: str) -> None:
    parse_gid_range(value)


def _v_startup(name: str, value: str) -> None:
    """*_command: builtin, none or a command line; *_daemon: builtin or a path."""
    word = value.split()[0]
    if word.lower() == "builtin":
        return
    if name.endswith("_command") and word.lower() == "none":
        return
    _v_abs_path(name, word)


def _v_jsv_url(name: str, value: str) -> None:
    """jsv_url (sge_types(1)): none or ``[script:][user@]/path``."""
    if value.lower() == "none":
        return
    rest = value[len("script:"):] if value.startswith("script:") else value
    if "@" in rest:
        rest = rest.split("@", 1)[1]
    if not _is_abs(rest):
        raise SpecifierError(f'jsv_url "{value}" must name an absolute path ([script:][user@]/path)')


def _v_any(name: str, value: str) -> None:
    return None


VALIDATORS: dict[str, Callable[[str, str], None]] = {
    "execd_spool_dir": _v_abs_path,
    "mailer": _v_method,
    "xterm": _v_abs_path,
    "load_sensor": _v_load_sensor,
    "prolog": _v_method,
    "epilog": _v_method,
    "shell_start_mode": _v_one_of("unix_behavior", "posix_compliant", "script_from_stdin"),
    "login_shells": _v_names,
    "min_uid": _v_uint,
    "min_gid": _v_uint,
    "user_lists": _v_names,
    "xuser_lists": _v_names,
    "projects": _v_names,
    "xprojects": _v_names,
    "enforce_project": _v_one_of("true", "false"),
    "enforce_user": _v_one_of("true", "false", "auto"),
    "load_report_time": _v_finite_time,
    "max_unheard": _v_finite_time,
    "reschedule_unknown": _v_time,
    "loglevel": _v_one_of("log_crit", "log_err", "log_warning", "log_notice", "log_info", "log_debug"),
    "administrator_mail": _v_any,
    "set_token_cmd": _v_none_or_abs,
    "pag_cmd": _v_none_or_abs,
    "token_extend_time": _v_time_or_none,
    "shepherd_cmd": _v_none_or_abs,
    "qmaster_params": _v_params(QMASTER_PARAMS),
    "execd_params": _v_params(EXECD_PARAMS),
    "reporting_params": _v_params(REPORTING_PARAMS),
    "finished_jobs": _v_uint,
    "gid_range": _v_gid_range,
    "qlogin_command": _v_startup,
    "qlogin_daemon": _v_startup,
    "rlogin_command": _v_startup,
    "rlogin_daemon": _v_startup,
    "rsh_command": _v_startup,
    "rsh_daemon": _v_startup,
    "max_aj_instances": _v_uint,
    "max_aj_tasks": _v_uint,
    "max_u_jobs": _v_uint,
    "max_jobs": _v_uint,
    "max_advance_reservations": _v_uint,
    "auto_user_oticket": _v_uint,
    "auto_user_fshare": _v_uint,
    "auto_user_default_project": _v_names,
    "auto_user_delete_time": _v_time,
    "delegated_file_staging": _v_one_of("true", "false"),
    "reprioritize": _v_one_of("true", "false", "1", "0"),
    "jsv_url": _v_jsv_url,
    "jsv_allowed_mod": _v_names,
    "libjvm_path": _v_any,
    "additional_jvm_args": _v_any,
}
assert set(VALIDATORS) == set(ATTRIBUTE_ORDER)

# Attributes whose value may be empty (libjvm_path is written empty by an
# installation without Java).
EMPTY_ALLOWED = frozenset({"libjvm_path", "additional_jvm_args"})


def check_value(name: str, value: str, config_name: str = GLOBAL) -> None:
    """Check one ``name value`` pair; raises :class:`SpecifierError`."""
    if name not in VALIDATORS:
        raise SpecifierError(f'unknown attribute name "{name}"')
    if config_name != GLOBAL and name not in LOCAL_ATTRIBUTES:
        raise SpecifierError(
            f'"{name}" is a global configuration parameter only; '
            f'it cannot be set in the configuration of host "{config_name}"'
        )
    if value == "":
        if name in EMPTY_ALLOWED:
            return
        raise SpecifierError(f'value == NULL for attribute "{name}" in configuration list of "{config_name}"')
    if name not in MULTIWORD_ATTRIBUTES and len(value.split()) > 1:
        raise SpecifierError(f'only a single value is allowed for configuration attribute "{name}"')
    VALIDATORS[name](name, value)


# --- the model -------------------------------------------------------------------


#: sge_conf(5) attributes minisge reads, checks and keeps but does not act on
#: (man/man5/sge_conf.5, PARAMETERS KEPT WITHOUT EFFECT); execd_params and the
#: unknown ones of qmaster_params and reporting_params are named elsewhere
WITHOUT_EFFECT = (
    "execd_spool_dir", "xterm", "projects", "xprojects", "enforce_project",
    "enforce_user", "loglevel", "administrator_mail", "set_token_cmd", "pag_cmd", "token_extend_time",
    "shepherd_cmd", "gid_range", "qlogin_command", "qlogin_daemon", "rlogin_command", "rlogin_daemon",
    "rsh_daemon", "max_aj_instances", "max_advance_reservations", "auto_user_oticket", "auto_user_fshare",
    "auto_user_default_project", "auto_user_delete_time", "delegated_file_staging", "reprioritize",
    "jsv_url", "jsv_allowed_mod", "libjvm_path", "additional_jvm_args",
)


def without_effect(conf: Configuration) -> list[tuple[str, str]]:
    """The attributes of :data:`WITHOUT_EFFECT` that ``conf`` sets to
    other than their man page default, with their values (what a daemon
    names in its messages file, as 8.1.9's execd names execd_params it
    cannot use)."""
    return [(name, value) for name, value in conf.entries
            if name in WITHOUT_EFFECT and " ".join(value.split()).lower() != MAN_PAGE_DEFAULTS[name].lower()]


def _bool(value: str) -> bool:
    return value.lower() in ("true", "1")


@attrs.frozen
class Configuration:
    """A global (``name == "global"``) or host-local configuration.

    ``entries`` are the ``(attribute, value)`` pairs in file order, values as
    text.  The typed properties read an entry or, when absent, the man page
    default (see :data:`MAN_PAGE_DEFAULTS`); use :func:`merge` first to get
    a host's effective configuration.
    """

    name: str = GLOBAL
    entries: tuple[tuple[str, str], ...] = ()

    @property
    def is_global(self) -> bool:
        return self.name == GLOBAL

    def get(self, attribute: str, default: str | None = None) -> str | None:
        """The text of ``attribute``, or ``default`` when not set here."""
        for name, value in self.entries:
            if name == attribute:
                return value
        return default

    def value(self, attribute: str) -> str:
        """The text of ``attribute``, or its man page default."""
        got = self.get(attribute)
        return MAN_PAGE_DEFAULTS[attribute] if got is None else got

    def with_value(self, attribute: str, value: str) -> Configuration:
        """A copy with ``attribute`` set (replaced in place, or appended)."""
        check_value(attribute, value, self.name)
        entries = list(self.entries)
        for i, (name, _) in enumerate(entries):
            if name == attribute:
                entries[i] = (attribute, value)
                break
        else:
            entries.append((attribute, value))
        return attrs.evolve(self, entries=tuple(entries))

    def without(self, attribute: str) -> Configuration:
        """A copy without ``attribute``."""
        return attrs.evolve(self, entries=tuple(e for e in self.entries if e[0] != attribute))

    # paths and commands
    @property
    def execd_spool_dir(self) -> str:
        return self.value("execd_spool_dir")

    @property
    def mailer(self) -> Method:
        method = parse_method(self.value("mailer"))
        return method if method is not None else Method(MAN_PAGE_DEFAULTS["mailer"])

    @property
    def xterm(self) -> str:
        return self.value("xterm")

    @property
    def load_sensor(self) -> tuple[str, ...]:
        return _split_list(self.value("load_sensor"))

    @property
    def prolog(self) -> Method | None:
        return parse_method(self.value("prolog"))

    @property
    def epilog(self) -> Method | None:
        return parse_method(self.value("epilog"))

    @property
    def shepherd_cmd(self) -> str | None:
        v = self.value("shepherd_cmd")
        return None if v.lower() == "none" else v

    @property
    def shell_start_mode(self) -> str:
        return self.value("shell_start_mode").lower()

    @property
    def login_shells(self) -> tuple[str, ...]:
        return _split_list(self.value("login_shells"))

    # access
    @property
    def min_uid(self) -> int:
        return int(self.value("min_uid"))

    @property
    def min_gid(self) -> int:
        return int(self.value("min_gid"))

    @property
    def user_lists(self) -> tuple[str, ...]:
        return _split_list(self.value("user_lists"))

    @property
    def xuser_lists(self) -> tuple[str, ...]:
        return _split_list(self.value("xuser_lists"))

    @property
    def projects(self) -> tuple[str, ...]:
        return _split_list(self.value("projects"))

    @property
    def xprojects(self) -> tuple[str, ...]:
        return _split_list(self.value("xprojects"))

    @property
    def enforce_project(self) -> bool:
        return _bool(self.value("enforce_project"))

    @property
    def enforce_user(self) -> str:
        """``true``, ``false`` or ``auto``."""
        return self.value("enforce_user").lower()

    @property
    def administrator_mail(self) -> tuple[str, ...]:
        return _split_list(self.value("administrator_mail"))

    # times (seconds)
    @property
    def load_report_time(self) -> float:
        return parse_time(self.value("load_report_time"))

    @property
    def max_unheard(self) -> float:
        return parse_time(self.value("max_unheard"))

    @property
    def reschedule_unknown(self) -> float:
        return parse_time(self.value("reschedule_unknown"))

    @property
    def loglevel(self) -> str:
        return self.value("loglevel").lower()

    # parameter lists
    @property
    def qmaster_params(self) -> dict[str, bool | str]:
        return dict(_known_params("qmaster_params", self.value("qmaster_params")))

    @property
    def execd_params(self) -> dict[str, bool | str]:
        return dict(_known_params("execd_params", self.value("execd_params")))

    @property
    def reporting_params(self) -> dict[str, bool | str]:
        return dict(_known_params("reporting_params", self.value("reporting_params")))

    @property
    def forbid_reschedule(self) -> bool:
        """qmaster_params FORBID_RESCHEDULE (job exit 99 does not re-queue)."""
        return bool(self.qmaster_params.get("FORBID_RESCHEDULE", False))

    @property
    def forbid_apperror(self) -> bool:
        """qmaster_params FORBID_APPERROR (job exit 100 does not set Eqw)."""
        return bool(self.qmaster_params.get("FORBID_APPERROR", False))

    @property
    def accounting(self) -> bool:
        """reporting_params accounting (default true)."""
        return bool(self.reporting_params.get("accounting", True))

    @property
    def accounting_flush_time(self) -> float:
        """Seconds accounting records are buffered: accounting_flush_time,
        else flush_time, else 15 (sge_conf(5) reporting_params)."""
        params = self.reporting_params
        text = params.get("accounting_flush_time", params.get("flush_time", "15"))
        return parse_time(str(text))

    # limits
    @property
    def finished_jobs(self) -> int:
        return int(self.value("finished_jobs"))

    @property
    def gid_range(self) -> tuple[tuple[int, int], ...]:
        return parse_gid_range(self.value("gid_range"))

    @property
    def max_aj_instances(self) -> int:
        return int(self.value("max_aj_instances"))

    @property
    def max_aj_tasks(self) -> int:
        return int(self.value("max_aj_tasks"))

    @property
    def max_u_jobs(self) -> int:
        return int(self.value("max_u_jobs"))

    @property
    def max_jobs(self) -> int:
        return int(self.value("max_jobs"))

    @property
    def max_advance_reservations(self) -> int:
        return int(self.value("max_advance_reservations"))

    @property
    def delegated_file_staging(self) -> bool:
        return _bool(self.value("delegated_file_staging"))

    @property
    def reprioritize(self) -> bool:
        return _bool(self.value("reprioritize"))

    @property
    def jsv_url(self) -> str | None:
        v = self.value("jsv_url")
        return None if v.lower() == "none" else v

    @property
    def jsv_allowed_mod(self) -> tuple[str, ...]:
        return _split_list(self.value("jsv_allowed_mod"))


def template(sge_root: str = "/opt/sge", cell: str = "default") -> Configuration:
    """A global configuration with the defaults of sge_conf(5), in the order
    ``qconf -sconf`` prints (min_uid/min_gid 0 as on the page; an
    installation usually raises them)."""
    defaults = dict(MAN_PAGE_DEFAULTS)
    defaults["execd_spool_dir"] = f"{sge_root.rstrip('/')}/{cell}/spool"
    order = [a for a in ATTRIBUTE_ORDER if a not in ("max_advance_reservations", "libjvm_path", "additional_jvm_args")]
    return Configuration(GLOBAL, tuple((a, defaults[a]) for a in order))


def merge(global_conf: Configuration, local: Configuration | None) -> Configuration:
    """The effective configuration of a host (merge_configuration in
    sge_conf.c): the global entries, each overwritten by the host's entry of
    the same name where the attribute may be set locally."""
    entries = list(global_conf.entries)
    if local is not None:
        index = {name: i for i, (name, _) in enumerate(entries)}
        for name, value in local.entries:
            if name not in LOCAL_ATTRIBUTES:
                continue
            if name in index:
                entries[index[name]] = (name, value)
            else:
                index[name] = len(entries)
                entries.append((name, value))
    return Configuration(local.name if local is not None else global_conf.name, tuple(entries))


# --- reading and writing ------------------------------------------------------------

_HEADER = re.compile(r"#([^\s:]+):\s*\Z")


def parse(text: str, path: str = "<input>", name: str | None = None) -> Configuration:
    """Parse ``qconf -sconf`` output or a classic spool configuration file.

    The configuration's name comes from ``name``, else a ``conf_name`` line,
    else the ``#name:`` first line, else ``global``.  Unknown attributes,
    repeated ones, global-only attributes in a host configuration and bad
    values are errors (FILE:LINE).
    """
    first = text.split("\n", 1)[0].strip()
    m = _HEADER.match(first)
    header_name = m.group(1) if m else None
    raw: list[tuple[int, str, str]] = []
    spool_name: str | None = None
    seen: dict[str, int] = {}
    for ln in logical_lines(text, join="ge"):
        parts = ln.text.strip().split(None, 1)
        attr = parts[0]
        value = parts[1].strip() if len(parts) > 1 else ""
        if attr in ("conf_name", "conf_version"):
            if attr == "conf_version" and not value.isdigit():
                raise FormatError(f'conf_version must be a number, not "{value}"', path, ln.lineno)
            if attr == "conf_name":
                spool_name = value
            continue
        if attr in seen:
            raise FormatError(f'attribute "{attr}" given more than once (first on line {seen[attr]})', path, ln.lineno)
        seen[attr] = ln.lineno
        raw.append((ln.lineno, attr, value))
    conf_name = name or spool_name or header_name or GLOBAL
    for lineno, attr, value in raw:
        try:
            check_value(attr, value, conf_name)
        except SpecifierError as err:
            raise FormatError(str(err), path, lineno) from None
    return Configuration(conf_name, tuple((a, v) for _, a, v in raw))


def write(conf: Configuration) -> str:
    """The text ``qconf -sconf`` prints for ``conf``: the ``#name:`` line, the
    entries with values at column 29 (80-column line breaking) and a blank
    line at the end."""
    return f"#{conf.name}:\n" + write_attributes(conf.entries, VALUE_COLUMN) + "\n"


def entries_in_order(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Sort ``(attribute, value)`` pairs into ``qconf -sconf`` order (for a
    configuration built from a dict)."""
    rank = {a: i for i, a in enumerate(ATTRIBUTE_ORDER)}
    return tuple(sorted(pairs, key=lambda p: rank.get(p[0], len(rank))))
