"""qsub(1) option parsing: a command line becomes a job request.

Pure: no I/O, no clock.  Files and standard input are read through the
callables the caller passes (``read_file(path) -> str`` raising ``OSError``,
``stdin_reader() -> str``); the environment, working directory, home
directory, user and host name are arguments.  Imports the standard library
only, so that the ``qsub`` command starts fast.

Sources, in Grid Engine's order of precedence (qsub(1), sge_request(5)):
the cell default request file ``$SGE_ROOT/$SGE_CELL/common/sge_request``,
``~/.sge_request``, ``./.sge_request`` (a file met twice is read once), then
the ``#$`` directives of the script (prefix changed with ``-C``, ``-C ''``
disables them; ``-C`` inside the script is ignored; not read for ``-b y``),
then the command line; ``-@ file`` inserts a file's options where it stands.
Later options win for single values; lists merge as Grid Engine merges them
(``-l`` keeps the last value of each resource, ``-hold_jid`` appends, ``-v``,
``-M``, ``-o``/``-e``/``-i``/``-S`` replace the entry with the same key, a
``-q`` in a later source drops every ``-q`` of the earlier sources, ``-m n``
clears the mail options).  ``-clear`` discards every option before it.

The job request (the contract with the qmaster; JSON-able):

=================  =========================================================
key                value
=================  =========================================================
job_name           str (-N, else script/command basename, else ``STDIN``)
binary             bool (-b y)
command            str: the script path or command as given, ``STDIN``
script_path        str | None: the script path as given (None: stdin/binary)
script             str | None: the script text (None for binary jobs)
args               list[str]: command_args
directive_prefix   str | None (-C; None: default ``#$``)
cwd                str | None: working directory (-cwd: the submit cwd; -wd)
stdout_path        list[{"host": str|None, "path": str}] (-o)
stderr_path        same (-e)
stdin_path         same (-i)
merge              bool (-j y)
shell              same list (-S)
no_shell           bool (-shell n)
env                {name: value|None} (-v, -V; None: variable without value)
o_env              {"SGE_O_HOME", "SGE_O_LOGNAME", "SGE_O_PATH", "SGE_O_SHELL",
                   "SGE_O_TZ", "SGE_O_MAIL", "SGE_O_HOST", "SGE_O_WORKDIR"}
                   (the ones the submit environment defines)
hard_resources     {name: value} (-l; ``TRUE`` when no value), in GE's order
soft_resources     same, after -soft
hard_queues        list[str] (-q); soft_queues: after -soft
master_queues      list[str] (-masterq)
pe                 None | {"name": str, "ranges": [[min, max], ...]}
                   (max 9999999 = infinity)
priority           int (-p, -1023..1024, default 0)
restart            None | bool (-r)
account            str | None (-A; the qmaster applies the default ``sge``)
project            str | None (-P)
mail_options       str: letters of ``abes`` in that order (-m; "" = none)
mail_list          list[str] ``user`` or ``user@host`` (-M; default
                   ``user@hostname``)
notify             bool (-notify)
hold               bool (-h: user hold)
hold_jid           list[str] job ids / names / patterns (-hold_jid)
hold_jid_ad        list[str] (-hold_jid_ad)
array              None | [first, last, step] (-t)
tc                 None | int (-tc, 0 = no limit)
start_time         None | str date_time as given (-a); deadline: (-dl)
job_share          int (-js)
reserve            bool (-R y)
now                bool (-now y)
checkpoint         None | str (-ckpt name)
checkpoint_when    None | str occasion letters (-c); checkpoint_interval:
                   None | int seconds
ar                 None | int (-ar)
binding            None | str (-binding, recorded only)
pty                None | bool (-pty)
context            {name: value|None} (-ac, -dc, -sc applied in order)
verify_level       str: e w n v p (-w, default ``n``)
=================  =========================================================

Client side only: ``sync`` (bool: wait for the end, ``-sync y|x``),
``sync_start`` (bool: wait for the start, ``-sync r``), ``terse`` (bool, command line only),
``verify`` (bool, -verify), ``warnings`` (lines qsub prints on stdout),
and ``help`` (True: print :data:`USAGE` and exit 0; nothing else is set).

Errors raise :class:`SubmitError` whose ``message`` is qsub's exact standard
error text (without the final newline) and ``exit_code`` its exit status.
"""

from __future__ import annotations

from minisge.formats import scan

# The types are for the checker alone: qsub imports this module, and
# `typing` is not worth loading for it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any, TypedDict, TypeVar

    #: The job request qsub sends to the qmaster: a JSON object whose fields
    #: are those of :func:`_empty_request` (the protocol's catalogue checks
    #: their types at the qmaster).
    Request = dict[str, Any]
    #: A task range ``(first, last, step)``.
    Range = tuple[int, int, int]
    #: ``read_file(path)``: a file's text (raises OSError).
    FileReader = Callable[[str], str]
    #: ``stdin_reader()``: the script given on standard input.
    StdinReader = Callable[[], str]
    #: A ``name[=value]`` pair of -v, -ac, -l ... (None: no value).
    Pair = tuple[str, str | None]
    Item = TypeVar("Item")
    Value = TypeVar("Value")

    class PathEntry(TypedDict):
        """One ``[host:]path`` of -o, -e, -i, -S (host None: every host)."""

        host: str | None
        path: str

# Answer status codes of sge_answer.h that qsub returns as exit codes.
STATUS_ESEMANTIC = 2
STATUS_EEXIST = 3
STATUS_EUNKNOWN = 4
STATUS_ENOIMP = 5
STATUS_ESYNTAX = 7
STATUS_EDISK = 14

RANGE_INFINITY = 9999999
DEFAULT_PREFIX = "#$"
MAX_JOB_NAME = 512

_CMDLINE = "qsub: "              # prefix of command-line errors
_SCRIPT = "Unable to read script file because of error: "
_WARN_CMDLINE = "qsub: warning: "
_WARN = "warning: "


class SubmitError(Exception):
    """A submission qsub refuses: ``message`` as qsub prints it on stderr."""

    def __init__(self, message: str, exit_code: int, warnings: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.warnings = list(warnings or [])


class _ParseError(Exception):
    """An error found while scanning one source; the caller adds the prefix."""

    def __init__(self, text: str, status: int, preamble: str = ""):
        super().__init__(text)
        self.text = text
        self.status = status
        self.preamble = preamble  # printed by GE before the prefixed message


# the same, for callers that read a single range or value with this module
ParseError = _ParseError


class _Opt:
    """One option as scanned: switch, argument text, parsed value, -soft flag."""

    __slots__ = ("switch", "arg", "value", "soft")

    def __init__(self, switch: str, arg: str | None, value: Any = None, soft: bool = False):
        # value: the parsed argument, its type depends on the switch (see _Scanner._value)
        self.switch = switch
        self.arg = arg
        self.value = value
        self.soft = soft


# --------------------------------------------------------------------------
# Tokenising directive lines and option files
# --------------------------------------------------------------------------

def split_directive_line(line: str) -> list[str]:
    """Split one ``#$`` line (prefix already removed) or option-file line.

    Grid Engine's rule: a ``#`` ends the line (even inside quotes), trailing
    white space is dropped, words are separated by blanks and tabs; once a
    word contains a quote character it runs to the end of the line; all
    quote characters are then removed from every word.
    """
    hash_at = line.find("#")
    if hash_at >= 0:
        line = line[:hash_at]
    line = line.rstrip()
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        while i < n and line[i] in " \t\n":
            i += 1
        if i >= n:
            break
        start = i
        while i < n and line[i] not in " \t\n":
            if line[i] in "\"'":
                i = n
                break
            i += 1
        words.append(line[start:i])
    return [w.replace('"', "").replace("'", "") for w in words]


def directive_lines(text: str, prefix: str) -> list[list[str]]:
    """The option words of each script line starting with ``prefix`` (qsub(1) -C)."""
    result = []
    for line in text.split("\n"):
        if line.startswith(prefix):
            words = split_directive_line(line[len(prefix):].lstrip())
            if words:
                result.append(words)
    return result


def option_file_lines(text: str) -> list[list[str]]:
    """The option words of each line of a default request or ``-@`` file.

    sge_request(5): blank lines and lines with ``#`` in the first column are
    skipped; a ``#`` later on the line starts a comment.
    """
    result = []
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        words = split_directive_line(line)
        if words:
            result.append(words)
    return result


# --------------------------------------------------------------------------
# Value parsers (each raises _ParseError with Grid Engine's message)
# --------------------------------------------------------------------------

def _gdi_list(text: str) -> list[str]:
    """Split a comma list as Grid Engine's string_list does (empty items dropped)."""
    items = []
    for word in split_comma_list(text):
        if word:
            items.append(word)
    return items


def split_comma_list(text: str) -> list[str]:
    """Comma-separated words; a word containing a quote runs to the end."""
    words, i, n = [], 0, len(text)
    while i < n:
        while i < n and text[i] == ",":
            i += 1
        if i >= n:
            break
        start = i
        while i < n and text[i] != ",":
            if text[i] in "\"'":
                i = n
                break
            i += 1
        words.append(text[start:i])
    return words


def sync_events(value: str) -> str:
    """``qsub -sync``: the events qsub waits for, ``""`` (none), ``"r"`` (the
    job's start), ``"x"`` (its end) or ``"rx"`` (both).  8.1.9 takes
    ``y[es]|n[o]`` in any case; Open Cluster Scheduler 9 adds the letters
    ``r`` (start), ``x`` or ``y`` (end) and ``n`` (none, alone), in any
    combination (``rx``), which minisge takes too."""
    low = value.lower()
    if low in ("y", "yes"):
        return "x"
    if low in ("n", "no"):
        return ""
    letters = set(value)
    if not letters or not letters <= set("rxy"):
        raise _ParseError(f'invalid option argument "-sync {value}"', STATUS_ESYNTAX)
    return "".join(e for e in "rx" if e in letters or (e == "x" and "y" in letters))


def _yes_no(switch: str, value: str) -> bool:
    """``y[es]|n[o]`` in any case (set_yn_option)."""
    low = value.lower()
    if low in ("y", "yes"):
        return True
    if low in ("n", "no"):
        return False
    raise _ParseError(f'invalid option argument "{switch} {value}"', STATUS_ESYNTAX)


def _strtol(text: str) -> tuple[int | None, str]:
    """C strtol(base 10): optional blanks and sign, digits; (None, text) if none."""
    start = scan.skip(text, 0, " \t\n\r\f\v")
    end = scan.decimal_end(text, digits := scan.sign_end(text, start))
    if end == digits:
        return None, text
    return int(text[start:end]), text[end:]


def _no_decimal(text: str) -> _ParseError:
    return _ParseError(
        f'Numerical value invalid!\nThe initial portion of string "{text}" '
        "contains no decimal number", STATUS_ESYNTAX)


def _trailer(spec: str, rest: str) -> _ParseError:
    return _ParseError(f'Range specifier "{spec}" has unknown trailer "{rest}"', STATUS_ESYNTAX)


def parse_range(spec: str, step_allowed: bool, inf_allowed: bool) -> Range | None:
    """One range ``n``, ``n-m``, ``-m``, ``n-`` (``n-m:s`` when steps are allowed).

    Returns ``(min, max, step)`` with min <= max (a reversed range is swapped,
    as Grid Engine does), or None for a form Grid Engine leaves undefined
    (``n-`` or ``-`` where infinity is not allowed).  Follows sge_types(5)
    and Grid Engine's reading of odd forms (``1x5`` is ``1-5``).
    """
    rest = spec
    lo = 0
    if rest.startswith("-"):
        lo = 1
        rest = rest[1:]
        if rest == "":
            return (1, RANGE_INFINITY, 1) if inf_allowed else None
    value, after = _strtol(rest)
    if value is None:
        raise _no_decimal(rest)
    if lo:
        # "-<n>": with steps allowed Grid Engine rejects even a bare "-<n>"
        if after != "" or (step_allowed and after[:1] != ":"):
            raise _trailer(spec, rest)
        hi, step = value, 1
    elif after == "":
        lo = hi = value
        step = 1
    else:
        ok = (after[0] == "-" or after[1:2].isdigit() or len(after) == 1
              or (step_allowed and after[0] == ":"))
        if not ok:
            raise _trailer(spec, after)
        lo = value
        rest = after[1:]
        step = 1
        if rest == "":
            if not inf_allowed:
                return None
            hi = RANGE_INFINITY
        else:
            value, after = _strtol(rest)
            if value is None:
                raise _no_decimal(rest)
            if not (after == "" or (step_allowed and after[0] == ":")):
                raise _trailer(rest, after)
            hi = value
            if step_allowed and after.startswith(":"):
                step = _parse_step(after[1:])
    if lo > hi:
        lo, hi = hi, lo
    return (lo, hi, step)


def _parse_step(text: str) -> int:
    """The ``:s`` step of a task range: a positive integer."""
    body = scan.sign_end(text, scan.skip(text, 0, " \t"))
    end = scan.decimal_number_end(text, body)
    if end == body:
        raise _no_decimal(text)
    number = float(text[:end])
    rest = text[end:]
    if number <= 0:
        raise _ParseError("Negative or zero step in range is not allowed", STATUS_ESYNTAX)
    if number != int(number):
        raise _no_decimal(text)
    if rest:
        raise _trailer(text, rest)
    return int(number)


def parse_task_range(spec: str) -> tuple[int, int, int]:
    """qsub -t: ``n[-m[:s]]``; a comma list must merge into one range."""
    ranges: list[Range] = []
    for word in spec.split(","):
        if word == "":
            continue
        r = parse_range(word, step_allowed=True, inf_allowed=False)
        if r is None:
            raise _ParseError(f'invalid task id range "{spec}"', STATUS_ESYNTAX)
        ranges.append(r)
    if not ranges:
        raise _ParseError(f'invalid task id range "{spec}"', STATUS_ESYNTAX)
    merged = _merge_ranges(ranges)
    if len(merged) > 1:
        raise _ParseError("-t option only allows one range specification", STATUS_ESYNTAX)
    return merged[0]


def expand_task_ranges(text: str) -> list[int] | None:
    """The task ids of ``n[-m[:s]][,...]`` (sge_types(5) ranges, read as qsub
    reads them; ``5.1-4:2`` names tasks of job 5 in qdel and qmod), in the
    order given; None for text that is no range."""
    out: list[int] = []
    for word in text.split(","):
        try:
            r = parse_range(word, step_allowed=True, inf_allowed=False) if word else None
        except ParseError:
            r = None
        if r is None:
            return None
        lo, hi, step = r
        out.extend(range(lo, hi + 1, step))
    return out


def _merge_ranges(ranges: list[Range]) -> list[Range]:
    """Sort and join overlapping or adjacent step-1 ranges."""
    if any(step != 1 for _, _, step in ranges):
        return sorted(set(ranges)) if len(set(ranges)) > 1 else [ranges[0]]
    out: list[list[int]] = []
    for lo, hi, _ in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi, 1) for lo, hi in out]


def parse_pe_ranges(spec: str) -> list[list[int]]:
    """qsub -pe slot range list ``n[-[m]]|[-]m,...`` (sge_types(5) range)."""
    ranges: list[Range] = []
    for word in spec.split(","):
        if word == "":
            continue
        r = parse_range(word, step_allowed=False, inf_allowed=True)
        if r is None:
            break
        ranges.append(r)
    if not ranges:
        raise _ParseError(f'invalid slot range "{spec}"', STATUS_ESYNTAX)
    return [[lo, hi] for lo, hi, _ in _merge_ranges(ranges)]


def format_ranges(ranges: Iterable[Sequence[int]]) -> str:
    """Ranges as Grid Engine prints them: ``2``, ``2-9999999``, ``1-4,8``."""
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


def _path_list(switch: str, text: str, what: str) -> list[PathEntry]:
    """``[host:]path,...`` (cull_parse_path_list); a leading ``:`` means no host."""
    words = _gdi_list(text)
    if not words:
        raise _ParseError(f'Wrong {what} format "{text}" specified to {switch} option',
                          STATUS_ESYNTAX)
    result: list[PathEntry] = []
    host: str | None
    for word in words:
        if word.startswith(":"):
            host, path = None, word[1:]
        elif ":" in word:
            host, path = word.split(":", 1)
        else:
            host, path = None, word
        result.append({"host": host, "path": path})
    return result


def _var_list(text: str, env: Mapping[str, str] | None) -> list[Pair] | None:
    """``variable[=value],...``; without ``=`` the value comes from ``env``
    when given (qsub -v), else is None (-ac).  None when the list is bad."""
    words = _gdi_list(text)
    if not words:
        return None
    result: list[Pair] = []
    for word in words:
        name, eq, value = word.partition("=")
        if name == "":
            return None
        if eq:
            result.append((name, value))
        else:
            result.append((name, env.get(name) if env is not None else None))
    return result


def _date_time(switch: str, text: str) -> str:
    """``[[CC]YY]MMDDhhmm[.SS]`` (sge_types(5) date_time), kept as given."""
    digits, dot, secs = text.partition(".")  # (\d{8}|\d{10}|\d{12})(\.\d\d)?
    ok = len(digits) in (8, 10, 12) and digits.isdecimal() and (not dot or len(secs) == 2 and secs.isdecimal())
    if ok:
        digits = digits[-8:]
        month, day, hour, minute = (int(digits[i:i + 2]) for i in range(0, 8, 2))
        sec = int(secs) if dot else 0
        ok = 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and sec <= 60
    if not ok:
        raise _ParseError(f'Wrong date/time format "{text}" specified to {switch} option',
                          STATUS_ESYNTAX, preamble="\nInvalid format of date/hour-minute field.")
    return text


def date_time_fields(text: str, current_year: int) -> tuple[int, int, int, int, int, int]:
    """A date_time of -a or -dl (as :func:`_date_time` let it through) as
    ``(year, month, day, hour, minute, second)``: a missing year is
    ``current_year``, a two-digit year below 70 is 20YY, else 19YY."""
    digits, _, secs = text.partition(".")
    year = current_year
    if len(digits) == 12:
        year, digits = int(digits[:4]), digits[4:]
    elif len(digits) == 10:
        yy, digits = int(digits[:2]), digits[2:]
        year = 1900 + yy + (100 if yy < 70 else 0)
    month, day, hour, minute = (int(digits[i:i + 2]) for i in range(0, 8, 2))
    return year, month, day, hour, minute, int(secs or 0)


def _seconds(text: str) -> int | None:
    """A time_specifier (sge_types(5)) in whole seconds, or None."""
    parts = text.split(":")  # (\d*):(\d*):(\d*) or \d+
    if len(parts) == 1:
        return int(text) if text.isdecimal() else None
    if len(parts) != 3 or not all(p.isdecimal() for p in parts if p):
        return None
    h, mi, s = (int(p) if p else 0 for p in parts)
    return h * 3600 + mi * 60 + s


def _binding_strategy(arg: str) -> bool:
    """Whether a -binding argument names a strategy: ``((set|env|pe) )?(linear|striding|explicit)(:|$)``."""
    for mode in ("set ", "env ", "pe "):
        if arg.startswith(mode):
            arg = arg[len(mode):]
            break
    for strategy in ("linear", "striding", "explicit"):
        if arg.startswith(strategy):
            rest = arg[len(strategy):]
            return rest in ("", "\n") or rest.startswith(":")
    return False


def _unsigned(text: str) -> int | None:
    start = scan.skip(text, 0, " \t")  # [ \t]*\+?(\d+)
    digits = text[start + 1:] if text[start:start + 1] == "+" else text[start:]
    return int(digits) if digits.isdecimal() else None


# --------------------------------------------------------------------------
# Scanning one source (cull_parse_cmdline)
# --------------------------------------------------------------------------

# Options whose second occurrence in one source draws a warning.
_WARN_TWICE = {"-a", "-A", "-b", "-C", "-dl", "-h", "-j", "-N", "-now", "-P", "-pe",
               "-r", "-R", "-shell", "-sync", "-w", "-display", "-he", "-d"}
# Switches Grid Engine's parser knows but qsub does not use: "Unknown option".
_FOREIGN_NOARG = {"-verbose", "-inherit", "-noshell", "-nostdin", "-explain", "-xml",
                  "-uall"}
_FOREIGN_ARG = {"-display", "-cell", "-cat"}
_UNSUPPORTED = {"-jsv"}
_NO_ARG_MESSAGE = {
    "-S": "-S option must have path_name argument",
    "-v": "-v option must have variable list argument",
    "-t": "-t option must have a list of task id ranges",
    "-q": "-q option must have queue list argument",
    "-masterq": "-masterq option must have queue list argument",
    "-ac": "-ac option must have a context_list list argument",
    "-dc": "-dc option must have a simple_context_list list argument",
    "-sc": "-sc option must have context list argument",
    "-@": "-@ option must have file argument",
    "-pe": "-pe option must have pe_name argument",
    "-u": "-u option must have a list usernames",
}
_NEEDS_ARG = {
    "-a", "-A", "-ac", "-ar", "-b", "-binding", "-c", "-ckpt", "-C", "-d", "-dc", "-dl",
    "-e", "-he", "-hold_jid", "-hold_jid_ad", "-i", "-j", "-js", "-jsv", "-l", "-m",
    "-masterq", "-M", "-N", "-now", "-o", "-ot", "-p", "-P", "-pe", "-pty", "-q", "-r",
    "-R", "-sc", "-shell", "-suspend_remote", "-sync", "-S", "-t", "-tc", "-u", "-v",
    "-w", "-wd", "-@", "-display", "-cell", "-cat",
}
_NO_ARG = {"-clear", "-cwd", "-h", "-hard", "-help", "-notify", "-soft", "-terse",
           "-verify", "-V"} | _FOREIGN_NOARG


class _Scanner:
    """Scans word lists into options, as one call of Grid Engine's parser.

    ``pseudo`` is true for the command line: there the first word that is not
    an option is the script (or command) and the rest its arguments.
    """

    def __init__(self, ctx: _Context, opts: list[_Opt], warn_prefix: str, depth: int = 0):
        self.ctx = ctx
        self.opts = opts
        self.warn_prefix = warn_prefix
        self.depth = depth
        self.script: str | None = None
        self.args: list[str] = []
        self.has_script = False

    def scan(self, words: list[str], pseudo: bool) -> None:
        """One word list; -hard/-soft state starts hard for every list."""
        soft = False
        i, n = 0, len(words)
        while i < n:
            word = words[i]
            if word == "--" and pseudo:
                if i + 1 >= n:
                    raise _ParseError("-- option must be followed by job arguments",
                                      STATUS_ESEMANTIC)
                self.args.extend(words[i + 1:])
                return
            if not word.startswith("-") or word == "--":
                if pseudo:
                    self.has_script = True
                    self.script = word
                    self.args.extend(words[i + 1:])
                    return
                self.opts.append(_Opt(word if word == "--" else "", None))
                i += 1
                continue
            if word not in _NEEDS_ARG and word not in _NO_ARG:
                raise _ParseError(f'invalid option argument "{word}"', STATUS_ESEMANTIC)
            if word in _NO_ARG:
                if word == "-hard":
                    soft = False
                elif word == "-soft":
                    soft = True
                self._add(_Opt(word if word != "-cwd" else "-wd", None,
                               self._noarg_value(word)))
                i += 1
                continue
            if i + 1 >= n:
                raise _ParseError(_NO_ARG_MESSAGE.get(word, f"{word} option must have argument"),
                                  STATUS_ESEMANTIC)
            arg = words[i + 1]
            if word == "-pe":
                if i + 2 >= n:
                    raise _ParseError("-pe option must have range as 2nd argument",
                                      STATUS_ESEMANTIC)
                rng = words[i + 2]
                self._add(_Opt("-pe", f"{arg} {rng}",
                               {"name": arg, "ranges": parse_pe_ranges(rng)}))
                i += 3
                continue
            if word == "-@":
                self._option_file(arg)
                i += 2
                continue
            value = self._value(word, arg)
            self._add(_Opt(word, arg, value, soft if word in ("-l", "-q") else False))
            i += 2

    def _add(self, opt: _Opt) -> None:
        if opt.switch in _WARN_TWICE and any(o.switch == opt.switch for o in self.opts):
            self.ctx.warnings.append(
                f'{self.warn_prefix}"{opt.switch}" option has already been set, '
                "overriding previous setting")
        self.opts.append(opt)

    def _noarg_value(self, word: str) -> list[tuple[str, str]] | bool | None:
        if word == "-V":
            return list(self.ctx.env.items())
        if word == "-h":
            return True
        return None

    def _option_file(self, path: str) -> None:
        """-@ file: its options are inserted here (no script in it)."""
        if self.depth >= 16:
            raise _ParseError(f"-@ files nested too deeply at {path}", STATUS_ESEMANTIC)
        try:
            text = self.ctx.read(path)
        except OSError as err:
            raise _ParseError(f"error opening {path}: {err.strerror or err}", STATUS_EDISK) from None
        sub = _Scanner(self.ctx, [], self.warn_prefix, self.depth + 1)
        for words in option_file_lines(text):
            sub.scan(words, pseudo=False)
        self.opts.extend(sub.opts)

    def _value(self, switch: str, arg: str) -> Any:  # its type depends on the switch
        """The parsed value of ``switch arg`` (Grid Engine's checks and messages)."""
        if switch == "-sync":
            return sync_events(arg)
        if switch in ("-b", "-j", "-now", "-R", "-r", "-shell", "-pty", "-he",
                      "-suspend_remote"):
            if switch == "-suspend_remote":
                self.ctx.warnings.append(
                    f'{self.warn_prefix}Unsupported: "-suspend_remote" is not supported '
                    "in this version")
            return _yes_no(switch, arg)
        if switch == "-N":
            if "/" in arg:
                raise _ParseError("argument to -N option must not contain / ", STATUS_ESEMANTIC)
            return arg
        if switch in ("-A", "-P", "-ckpt", "-C", "-wd", "-display", "-cell", "-cat", "-binding"):
            if switch == "-binding" and not _binding_strategy(arg):
                raise _ParseError("-binding option contains errors: couldn't parse binding "
                                  "parameter (no strategy found)", STATUS_ESEMANTIC)
            return arg
        if switch in ("-a", "-dl"):
            return _date_time(switch, arg)
        if switch == "-d":
            if _seconds(arg) is None:
                raise _ParseError(f'Wrong time format "{arg}" specified to -d option',
                                  STATUS_ESYNTAX)
            return arg
        if switch in ("-o", "-e", "-i", "-S"):
            what = {"-o": "stdout path list", "-e": "path list", "-i": "path list",
                    "-S": "shell list"}[switch]
            shown = "-e" if switch == "-i" else switch
            return _path_list(shown, arg, what)
        if switch in ("-hold_jid", "-hold_jid_ad"):
            items = _gdi_list(arg)
            if not items:
                kind = "jid_hold" if switch == "-hold_jid" else "jid_hold_ad"
                raise _ParseError(f'Wrong {kind} list format "{arg}" specified to {switch} option',
                                  STATUS_ESYNTAX)
            return items
        if switch in ("-q", "-masterq"):
            items = _gdi_list(arg)
            if not items:
                raise _ParseError(f'Wrong queue list format "{arg}" specified to {switch} option',
                                  STATUS_ESYNTAX)
            return items
        if switch == "-l":
            return self._resources(arg)
        if switch == "-m":
            return _mail_options(arg)
        if switch == "-M":
            return _mail_list(arg)
        if switch == "-p":
            if not scan.is_integer(arg) or not -1023 <= int(arg) <= 1024:
                raise _ParseError(f'invalid priority "{arg}".  Must be an integer from '
                                  "-1023 to 1024", STATUS_ESYNTAX)
            return int(arg)
        if switch == "-tc":
            value = _unsigned(arg)
            if value is None:
                raise _ParseError(f'invalid task concurrency number "{arg}". Must be an '
                                  "integer greater or equal to 0.", STATUS_ESYNTAX)
            return value
        if switch in ("-js", "-ar", "-ot"):
            value = _unsigned(arg)
            if value is None:
                what = {"-js": "jobshare", "-ar": "advance reservation id",
                        "-ot": "override tickets"}[switch]
                raise _ParseError(f"invalid {what}, must be an unsigned integer",
                                  STATUS_ESEMANTIC)
            return value
        if switch == "-t":
            return parse_task_range(arg)
        if switch == "-v":
            variables = _var_list(arg, self.ctx.env)
            if variables is None:
                raise _ParseError(f'Wrong variable list format -v "{arg}" or environment '
                                  "variable not set", STATUS_ESYNTAX)
            return variables
        if switch in ("-ac", "-dc", "-sc"):
            context = _var_list(arg, None)
            if context is None:
                raise _ParseError(f'Wrong context list format {switch} "{arg}"', STATUS_ESYNTAX)
            return context
        if switch == "-w":
            if arg not in ("e", "w", "n", "v", "p"):
                raise _ParseError(f'invalid option argument "-w {arg}"', STATUS_ESYNTAX)
            return arg
        if switch == "-c":
            return _checkpoint_when(arg)
        if switch == "-u":
            return _gdi_list(arg)
        if switch in _UNSUPPORTED:
            raise _ParseError(f'Unsupported: "{switch}" is not supported in this version',
                              STATUS_ENOIMP)
        raise AssertionError(switch)  # every switch in _NEEDS_ARG is handled above

    def _resources(self, arg: str) -> list[tuple[str, str]]:
        """-l ``resource[=value],...``; a name alone requests ``TRUE``."""
        result = []
        for word in _gdi_list(arg):
            name, eq, value = word.partition("=")
            if name == "":
                raise _ParseError(f'Wrong resource list format "{arg}" specified to -l option',
                                  STATUS_ESYNTAX, preamble='error: unknown resource ""')
            result.append((name, value if eq else "TRUE"))
        return result


def _mail_options(arg: str) -> str:
    """-m: letters of ``beasn``; ``n`` anywhere means no mail."""
    if not arg or any(c not in "beasn" for c in arg):
        raise _ParseError(f'Wrong mail options list format "{arg}" specified to -m option',
                          STATUS_ESYNTAX)
    if "n" in arg:
        return ""
    return "".join(c for c in "abes" if c in arg)


def _mail_list(arg: str) -> list[tuple[str, str | None]]:
    """-M ``user[@host],...`` (a second ``@`` and what follows are dropped)."""
    words = _gdi_list(arg)
    if not words:
        raise _ParseError(f'Wrong mail list format "{arg}" specified to -M option',
                          STATUS_ESYNTAX)
    result = []
    for word in words:
        parts = word.split("@")
        result.append((parts[0], parts[1] if len(parts) > 1 else None))
    return result


def _checkpoint_when(arg: str) -> tuple[str, object]:
    """-c: occasion letters ``n s m x r``, or an interval (a time_specifier)."""
    if arg[:1].isdigit() or arg[:1] == ":":
        seconds = _seconds(arg)
        if not seconds:
            raise _ParseError("-c argument invalid", STATUS_ESEMANTIC)
        return ("interval", seconds)
    if any(c not in "nsmxr" for c in arg):
        raise _ParseError("-c specifier invalid", STATUS_ESEMANTIC)
    return ("occasion", arg)


# --------------------------------------------------------------------------
# The whole submission
# --------------------------------------------------------------------------

class _Context:
    """What every scan shares: environment, file access, warnings."""

    def __init__(self, env: Mapping[str, str], cwd: str, read_file: FileReader | None):
        self.env = env
        self.cwd = cwd
        self._read_file = read_file
        self.warnings: list[str] = []

    def absolute(self, path: str) -> str:
        if path.startswith("/") or not self.cwd:
            return path
        return self.cwd.rstrip("/") + "/" + path

    def read(self, path: str) -> str:
        if self._read_file is None:
            raise FileNotFoundError(2, "No such file or directory", path)
        return self._read_file(self.absolute(path))


def _raise(err: _ParseError, prefix: str, ctx: _Context) -> None:
    text = prefix + err.text
    if err.preamble:
        text = err.preamble + "\n" + text
    raise SubmitError(text, err.status, ctx.warnings) from None


def _default_files(cell_root: str | None, home: str, cwd: str) -> list[str]:
    """sge_request(5): cell, home, working-directory files, each once."""
    files = []
    if cell_root:
        files.append(cell_root.rstrip("/") + "/common/sge_request")
    if home:
        files.append(home.rstrip("/") + "/.sge_request")
    if cwd:
        files.append(cwd.rstrip("/") + "/.sge_request")
    seen: set[str] = set()
    result: list[str] = []
    for f in files:
        key = f
        while "//" in key:  # the same file however many slashes
            key = key.replace("//", "/")
        if key not in seen:
            seen.add(key)
            result.append(f)
    return result


def _scan_defaults(ctx: _Context, cell_root: str | None, home: str, cwd: str) -> list[_Opt]:
    opts: list[_Opt] = []
    for path in _default_files(cell_root, home, cwd):
        try:
            text = ctx.read(path)
        except FileNotFoundError:
            continue
        except OSError as err:  # Grid Engine turns a disk error here into a warning
            ctx.warnings.append(f"{_WARN}error opening {path}: {err.strerror or err}")
            continue
        sc = _Scanner(ctx, [], _WARN)
        try:
            for words in option_file_lines(text):
                sc.scan(words, pseudo=False)
        except _ParseError as err:
            _raise(err, "", ctx)
        opts.extend(sc.opts)
    return opts


def _first(opts: list[_Opt], switch: str) -> _Opt | None:
    return next((o for o in opts if o.switch == switch), None)


def _read_script(ctx: _Context, path: str | None, stdin_reader: StdinReader | None) -> str:
    """The script text: a file (read_file) or standard input."""
    if path is None:
        text = stdin_reader() if stdin_reader is not None else ""
        if text == "":
            raise SubmitError(_SCRIPT + "no input read from stdin", STATUS_EUNKNOWN, ctx.warnings)
        return text
    try:
        return ctx.read(path)
    except IsADirectoryError:
        raise SubmitError(f'error: fread("{path}") failed: Is a directory\n{_SCRIPT}'
                          f"error reading from file {path}", STATUS_EUNKNOWN,
                          ctx.warnings) from None
    except OSError as err:
        raise SubmitError(f"{_SCRIPT}error opening {path}: {err.strerror or err}",
                          STATUS_EDISK, ctx.warnings) from None


def _scan_script(ctx: _Context, text: str, prefix: str) -> list[_Opt]:
    sc = _Scanner(ctx, [], _WARN)
    try:
        for words in directive_lines(text, prefix):
            sc.scan(words, pseudo=False)
    except _ParseError as err:
        _raise(err, _SCRIPT, ctx)
    return [o for o in sc.opts if o.switch != "-C"]  # -C in the script is ignored


def _override_queues(earlier: list[_Opt], later: list[_Opt]) -> list[_Opt]:
    """A -q in a later source removes every -q of the earlier ones."""
    if any(o.switch == "-q" for o in later):
        earlier = [o for o in earlier if o.switch != "-q"]
    return earlier + later


def _apply_clear(opts: list[_Opt]) -> list[_Opt]:
    """-clear resets everything that came before it (qsub(1))."""
    last = max((i for i, o in enumerate(opts) if o.switch == "-clear"), default=-1)
    return opts[last + 1:]


def parse_submission(argv: list[str], *, cwd: str, env: Mapping[str, str], home: str,
                     user: str | None = None, hostname: str | None = None,
                     cell_root: str | None = None, stdin_reader: StdinReader | None = None,
                     read_file: FileReader | None = None) -> Request:
    """Turn qsub's arguments (without ``argv[0]``) into a job request dict.

    ``cell_root`` defaults to ``$SGE_ROOT/$SGE_CELL`` (cell ``default``);
    ``user`` to ``$LOGNAME``/``$USER``; ``hostname`` to ``$HOST``.
    ``read_file(path)`` gets absolute paths and raises ``OSError`` (a missing
    default request file is skipped); ``stdin_reader()`` returns the script
    when none is named.  Raises :class:`SubmitError`.
    """
    user = user or env.get("LOGNAME") or env.get("USER") or ""
    hostname = hostname or env.get("HOST") or ""
    if cell_root is None and env.get("SGE_ROOT"):
        cell_root = env["SGE_ROOT"].rstrip("/") + "/" + (env.get("SGE_CELL") or "default")
    ctx = _Context(env, cwd, read_file)

    defaults = _scan_defaults(ctx, cell_root, home, cwd)

    cmd = _Scanner(ctx, [], _WARN_CMDLINE)
    try:
        cmd.scan(list(argv), pseudo=True)
    except _ParseError as err:
        _raise(err, _CMDLINE, ctx)
    if _first(cmd.opts, "-help"):
        return {"help": True, "warnings": ctx.warnings}

    # -b on the command line (else in the defaults) decides if the script is read
    b_opt = _first(cmd.opts, "-b") or _first(defaults, "-b")
    binary_decided = bool(b_opt and b_opt.value)
    script_text = None
    script_opts: list[_Opt] = []
    if not binary_decided:
        script_text = _read_script(ctx, cmd.script, stdin_reader)
        c_opt = _first(cmd.opts, "-C")
        prefix = DEFAULT_PREFIX if c_opt is None else c_opt.value
        if prefix:
            script_opts = _scan_script(ctx, script_text, prefix)

    merged = _override_queues(_override_queues(defaults, script_opts), cmd.opts)
    request = _build(_apply_clear(merged), ctx, cwd=cwd, user=user, hostname=hostname)

    request["terse"] = _first(cmd.opts, "-terse") is not None
    _set_job(request, ctx, cmd, script_text, stdin_reader)
    request["warnings"] = ctx.warnings
    reason = qmaster_rejection(request)
    if reason is not None:
        raise SubmitError(f"Unable to run job: {reason}\nExiting.", 1, ctx.warnings)
    return request


def _set_job(request: Request, ctx: _Context, cmd: _Scanner, script_text: str | None,
             stdin_reader: StdinReader | None) -> None:
    """Script or command, arguments, and the default job name."""
    request["args"] = list(cmd.args)
    if request["binary"]:
        if cmd.script is None:
            raise SubmitError(_CMDLINE + "command required for a binary job",
                              STATUS_ESEMANTIC, ctx.warnings)
        request.update(command=cmd.script, script_path=None, script=None)
    else:
        if script_text is None:  # -b y on the command line, undone by -clear
            script_text = _read_script(ctx, cmd.script, stdin_reader)
        request.update(command=cmd.script if cmd.script is not None else "STDIN",
                       script_path=cmd.script, script=script_text)
    if request["job_name"] is None:
        request["job_name"] = request["command"].rsplit("/", 1)[-1]


def _merge_keyed(old: list[Item], new: list[Item], key: Callable[[Item], object]) -> list[Item]:
    """cull_merge_definition_list: replace the entry with the same key, else append."""
    if not old:
        return list(new)
    result = list(old)
    for item in new:
        for i, existing in enumerate(result):
            if key(existing) == key(item):
                result[i] = item
                break
        else:
            result.append(item)
    return result


def _keep_last(pairs: list[tuple[str, Value]]) -> dict[str, Value]:
    """A name given twice keeps its last value, at its last position."""
    result: dict[str, Value] = {}
    for name, value in pairs:
        result.pop(name, None)
        result[name] = value
    return result


_ONLY_LAST = {"-A": "account", "-P": "project", "-N": "job_name", "-ckpt": "checkpoint",
              "-a": "start_time", "-dl": "deadline", "-ar": "ar", "-binding": "binding",
              "-p": "priority", "-js": "job_share", "-tc": "tc", "-w": "verify_level",
              "-j": "merge", "-R": "reserve", "-now": "now", "-pty": "pty", "-r": "restart",
              "-sync": "sync", "-b": "binary", "-C": "directive_prefix", "-wd": "cwd"}


def _empty_request() -> Request:
    return {
        "job_name": None, "binary": False, "command": None, "script_path": None,
        "script": None, "args": [], "directive_prefix": None, "cwd": None,
        "stdout_path": [], "stderr_path": [], "stdin_path": [], "merge": False,
        "shell": [], "no_shell": False, "env": {}, "o_env": {},
        "hard_resources": {}, "soft_resources": {}, "hard_queues": [], "soft_queues": [],
        "master_queues": [], "pe": None, "priority": 0, "restart": None, "account": None,
        "project": None, "mail_options": "", "mail_list": [], "notify": False,
        "hold": False, "hold_jid": [], "hold_jid_ad": [], "array": None, "tc": None,
        "start_time": None, "deadline": None, "job_share": 0, "reserve": False,
        "now": False, "checkpoint": None, "checkpoint_when": None,
        "checkpoint_interval": None, "ar": None, "binding": None, "pty": None,
        "context": {}, "verify_level": "n", "sync": False, "sync_start": False, "terse": False,
        "verify": False,
    }


def _build(opts: list[_Opt], ctx: _Context, *, cwd: str, user: str, hostname: str) -> Request:
    """cull_parse_job_parameter: fold the merged option list into a request."""
    req = _empty_request()
    req["o_env"] = _o_env(ctx.env, cwd, hostname)
    hard_l: list[Pair] = []
    soft_l: list[Pair] = []
    env_pairs: list[Pair] = [("TERM", "")]  # 8.1.9's qsub always sends TERM, empty unless -v/-V set it
    mail: list[Pair] = []
    paths: dict[str, list[PathEntry]] = {"-o": [], "-e": [], "-i": [], "-S": []}
    unknown: list[_Opt] = []
    for opt in opts:
        sw, v = opt.switch, opt.value
        if sw in _ONLY_LAST:
            if sw == "-wd" and v is None:  # -cwd
                v = cwd
            req[_ONLY_LAST[sw]] = None if (sw == "-C" and v == "") else v
        elif sw in paths:
            paths[sw] = _merge_keyed(paths[sw], v, key=lambda p: p["host"])
        elif sw == "-l":
            (soft_l if opt.soft else hard_l).extend(v)
        elif sw == "-q":
            req["soft_queues" if opt.soft else "hard_queues"].extend(v)
        elif sw == "-masterq":
            req["master_queues"].extend(v)
        elif sw in ("-hold_jid", "-hold_jid_ad"):
            req[sw[1:]].extend(v)
        elif sw == "-m":
            req["mail_options"] = "" if v == "" else "".join(
                c for c in "abes" if c in v or c in req["mail_options"])
        elif sw == "-M":
            mail = _merge_keyed(mail, v, key=lambda m: m[1])
        elif sw in ("-v", "-V"):
            env_pairs = _merge_keyed(env_pairs, v, key=lambda p: p[0])
        elif sw in ("-ac", "-dc", "-sc"):
            _apply_context(req["context"], sw, v)
        elif sw == "-pe":
            req["pe"] = v
        elif sw == "-t":
            req["array"] = list(v)
        elif sw == "-c":
            req["checkpoint_when" if v[0] == "occasion" else "checkpoint_interval"] = v[1]
        elif sw == "-h":
            req["hold"] = True
        elif sw == "-notify":
            req["notify"] = True
        elif sw == "-shell":
            req["no_shell"] = not v
        elif sw == "-verify":
            req["verify"] = True
        elif sw == "-help":
            raise SubmitError(_CMDLINE + "-help not allowed in this context", STATUS_ENOIMP,
                              ctx.warnings)
        elif sw in ("-hard", "-soft", "-terse", "-u"):
            pass
        else:
            unknown.append(opt)
    if unknown:
        lines = [f"{_CMDLINE}Unknown option {o.switch}" + (f" {o.arg}" if o.arg is not None else "")
                 for o in unknown]
        raise SubmitError("\n\n".join(lines) + "\n", STATUS_ENOIMP, ctx.warnings)
    req["stdout_path"], req["stderr_path"] = paths["-o"], paths["-e"]
    req["stdin_path"], req["shell"] = paths["-i"], paths["-S"]
    req["hard_resources"] = _keep_last(hard_l)
    req["soft_resources"] = _keep_last(soft_l)
    req["env"] = _keep_last(env_pairs)
    if not mail:
        mail = [(user, hostname or None)]
    req["mail_list"] = [u if h is None else f"{u}@{h}" for u, h in mail]
    events = req["sync"] or ""
    req["sync"], req["sync_start"] = "x" in events, "r" in events
    return req


def _apply_context(context: dict[str, str | None], switch: str, pairs: list[Pair]) -> None:
    """-ac adds, -dc deletes, -sc replaces the job context, in order."""
    if switch == "-sc":
        context.clear()
    for name, value in pairs:
        if switch == "-dc":
            context.pop(name, None)
        else:
            context[name] = value


def submitter_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """qsub's environment as the user made it (what -V and -v send): without
    the ``LC_CTYPE`` Python sets for itself when it starts in the C locale
    (PEP 538 coercion: no LC_ALL, LANG the C locale or unset, LC_CTYPE one
    of the coercion targets), which 8.1.9's qsub, a C program, never saw."""
    env = dict(environ)
    coerced = (not env.get("LC_ALL") and env.get("LANG", "C") in ("C", "POSIX", "")
               and env.get("LC_CTYPE") in ("C.UTF-8", "C.utf8", "UTF-8"))
    if coerced:
        del env["LC_CTYPE"]
    return env


def _o_env(env: Mapping[str, str], cwd: str, hostname: str) -> dict[str, str]:
    """SGE_O_* of qsub(1): HOME LOGNAME PATH SHELL TZ MAIL from the
    environment, HOST from $HOST or the host name, WORKDIR the cwd."""
    result = {}
    for name in ("HOME", "LOGNAME", "PATH", "SHELL", "TZ", "MAIL"):
        if env.get(name) is not None:
            result["SGE_O_" + name] = env[name]
    result["SGE_O_HOST"] = env.get("HOST") or hostname
    result["SGE_O_WORKDIR"] = cwd
    return result


# --------------------------------------------------------------------------
# What the qmaster rejects whatever the cell looks like
# --------------------------------------------------------------------------

# verify_str_key's table for job names, in Grid Engine's order of checking.
_NAME_CHARS = [("\n", "Return"), ("\t", "Tab"), ("\r", "Carriage return"), ("/", "Slash"),
               (":", "Colon"), ("@", "At"), ("\\", "Backslash"), ("*", "Asterisk"),
               ("?", "Questionmark")]


def job_name_error(name: str) -> str | None:
    """Why the qmaster refuses ``name`` as a job name (sge_types(5) name), or None."""
    if name == "":
        return "job rejected cause there is no job_name in the request"
    if len(name) > MAX_JOB_NAME:
        return f"job name too long, maximum allowed length is {MAX_JOB_NAME} characters"
    if name[0].isdigit():
        return f'denied: "{name}" is not a valid object name (cannot start with a digit)'
    return object_name_error(name)


def object_name_error(name: str) -> str | None:
    """Why 8.1.9 refuses ``name`` as an object name (a job name's, an
    account's rules after their own length checks), or None."""
    for char, word in _NAME_CHARS:
        if char in name:
            if char.isprintable():
                return f"{word} ('{char}') not allowed in objectname"
            return f"{word} not allowed in objectname"
    if name.upper() in ("NONE", "ALL", "TEMPLATE"):
        return f'Keyword ("{name.upper()}") not allowed as objectname'
    if any(not "!" <= c <= "~" for c in name):
        # Grid Engine 8.1.9's qmaster fails this way on a name with a blank, a
        # control character or a character outside ASCII (measured: "a b",
        # "a\x01b", "a\x1bb", "a\x7fb", "a\u2028b", "a\xe9b")
        return "Error reading answer list from qmaster"
    return None


def account_error(account: str | None) -> str | None:
    """Why the qmaster refuses ``account`` (``-A``), or None: Grid Engine
    8.1.9 holds it to the rules of an object name, but for a leading digit
    (measured: "a:b", "a/b", "a@b", "a*b", "a?b", "a\tb", "a\nb", "NONE",
    600 characters; "a b", "a\x1bb" and "\xe9" fail like a job name's; "1abc",
    "a,b", "a=b", "a[b" and "" pass).  A colon would also cut the
    accounting(5) record it is written into."""
    if not account:
        return None
    if len(account) > MAX_JOB_NAME:
        return f"string is longer than {MAX_JOB_NAME}, this is not allowed for objectnames"
    return object_name_error(account)


def qmaster_rejection(request: Mapping[str, Any]) -> str | None:
    """The reason the qmaster refuses a request regardless of cell state, or None
    (``request`` as qsub makes it, or any request the protocol catalogue lets
    through: ``array`` and ``pe`` may be left out)."""
    reason = job_name_error(request["job_name"]) or account_error(request.get("account"))
    if reason:
        return reason
    array, pe = request.get("array"), request.get("pe")
    if array and array[0] == 0:
        return "job rejected: 0 is an invalid task id"
    if pe and any(lo == 0 for lo, _ in pe["ranges"]):
        return '"job" rejected: pe range must be greater than zero'
    return None


# --------------------------------------------------------------------------
# Messages and output paths
# --------------------------------------------------------------------------

def job_id_text(job_id: int, array: Sequence[int] | None = None) -> str:
    """``7``, or ``8.1-10:1`` for a job array (the -terse output)."""
    if array:
        first, last, step = array
        return f"{job_id}.{first}-{last}:{step}"
    return str(job_id)


def submitted_message(job_id: int, name: str, array: Sequence[int] | None = None, terse: bool = False) -> str:
    """qsub's line on success: ``Your job 7 ("x.sh") has been submitted``."""
    ident = job_id_text(job_id, array)
    if terse:
        return ident
    kind = "job-array" if array else "job"
    return f'Your {kind} {ident} ("{name}") has been submitted'


_PSEUDO = ("HOME", "USER", "JOB_ID", "JOB_NAME", "HOSTNAME", "TASK_ID")


def expand_path(path: str, *, job_id: int, task_id: int | None, job_name: str,
                user: str, home: str, hostname: str,
                user_home: Callable[[str], str | None] | None = None) -> str:
    """qsub(1) -e: expand ``$HOME $USER $JOB_ID $JOB_NAME $HOSTNAME $TASK_ID``
    and a leading ``~`` (``~user`` through ``user_home(name)`` when given).

    ``task_id`` None (not an array job) expands ``$TASK_ID`` to ``0``, as
    Grid Engine 8.1.9 does.
    """
    if path.startswith("~"):
        head, sep, tail = path[1:].partition("/")
        if head == "":
            path = home + sep + tail
        elif user_home is not None and (their_home := user_home(head)) is not None:
            path = their_home + sep + tail
    values = {"HOME": home, "USER": user, "JOB_ID": str(job_id), "JOB_NAME": job_name,
              "HOSTNAME": hostname, "TASK_ID": str(task_id if task_id is not None else 0)}
    out = []
    done = 0
    while (dollar := path.find("$", done)) >= 0:
        name = next((n for n in _PSEUDO if path.startswith(n, dollar + 1)), None)
        out.append(path[done:dollar] if name else path[done:dollar + 1])
        if name:
            out.append(values[name])
        done = dollar + 1 + len(name or "")
    out.append(path[done:])
    return "".join(out)


def select_path(entries: Sequence[Mapping[str, str | None]], hostname: str) -> str | None:
    """The path for ``hostname``: its own entry, else the first without host."""
    for entry in entries:
        if entry["host"] == hostname:
            return entry["path"]
    for entry in entries:
        if entry["host"] is None:
            return entry["path"]
    return entries[-1]["path"] if entries else None


def default_output_name(kind: str, job_name: str, job_id: int, task_id: int | None) -> str:
    """``NAME.oJID`` / ``NAME.eJID``, with ``.TASK`` for an array task."""
    name = f"{job_name}.{kind}{job_id}"
    return name if task_id is None else f"{name}.{task_id}"


def output_path(kind: str, request: Mapping[str, Any], *, job_id: int, task_id: int | None, user: str,
                home: str, hostname: str, is_dir: Callable[[str], bool] | None = None,
                user_home: Callable[[str], str | None] | None = None) -> str:
    """Where the execd writes stream ``kind`` (``o``, ``e`` or ``i``) of a task.

    Relative paths are taken from the job's working directory (-cwd/-wd)
    or the home directory; no path, or a directory, gets the default name;
    stdin defaults to ``/dev/null``; with -j y stderr is the stdout file.
    ``is_dir(path)`` tells whether an expanded path is a directory.
    """
    if kind == "e" and request.get("merge"):
        kind = "o"
    key = {"o": "stdout_path", "e": "stderr_path", "i": "stdin_path"}[kind]
    chosen = select_path(request.get(key) or [], hostname)
    workdir = request.get("cwd") or home
    if chosen:
        path = expand_path(chosen, job_id=job_id, task_id=task_id, job_name=request["job_name"],
                           user=user, home=home, hostname=hostname, user_home=user_home)
        if not path.startswith("/"):
            path = workdir.rstrip("/") + "/" + path
    elif kind == "i":
        return "/dev/null"
    else:
        path = workdir
    if kind != "i" and (not chosen or (is_dir is not None and is_dir(path))):
        path = path.rstrip("/") + "/" + default_output_name(kind, request["job_name"],
                                                            job_id, task_id)
    return path


# qsub -help: Grid Engine 8.1.9 prints this (qconf lines included) on stdout, exit 0.
USAGE = """SGE 8.1.9
usage: qsub [options]
   [-a date_time]                           request a start time
   [-ac context_list]                       add context variable(s)
   [-Ap fname]                              add a new parallel environment from file
   [-astnode node_shares_list]              add sharetree node(s)
   [-at thread_name]                        add/start qmaster thread
   [-A account_string]                      account string in accounting record
   [-b y[es]|n[o]]                          handle command as binary
   [-binding [env|pe|set] exp|lin|str]      binds job to processor cores
   [-c ckpt_selector]                       define type of checkpointing for job
   [-cwd]                                   use current working directory
   [-C directive_prefix]                    define command prefix for job script
   [-dc simple_context_list]                delete context variable(s)
   [-dul listname_list]                     delete userset list(s) completely
   [-e path_list]                           specify standard error stream path(s)
   [-h]                                     place user hold on job
   [-hard]                                  consider following requests "hard"
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-hold_jid job_identifier_list]          define jobnet interdependencies
   [-hold_jid_ad job_identifier_list]       define jobnet array interdependencies
   [-i file_list]                           specify standard input stream file(s)
   [-j y[es]|n[o]]                          merge stdout and stderr stream of job
   [-js job_share]                          share tree or functional job share
   [-jsv jsv_url]                           job submission verification script to be used
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-mattr obj_nm attr_nm val obj_id_list]  modify an attribute (or element in a sublist) of an object
   [-N name]                                specify job name
   [-notify]                                notify job before killing/suspending it
   [-now y[es]|n[o]]                        start job immediately or not at all
   [-o path_list]                           specify standard output stream path(s)
   [-ot tickets]                            set job's override tickets
   [-P project_name]                        set job's project
   [-p priority]                            define job's relative priority
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       bind job to queue(s)
   [-r y[es]|n[o]]                          define job as (not) restartable
   [-sc context_list]                       set job context (replaces old context)
   [-shell y[es]|n[o]]                      start command with or without wrapping <loginshell> -c
   [-soft]                                  consider following requests as soft
   [-srqs [rqs_list]]                       show resource quota set(s)
   [-sync y[es]|n[o]]                       wait for job to end and return exit code
   [-S path_list]                           command interpreter to be used
   [-t task_id_range]                       create a job-array with these tasks
   [-v variable_list]                       export these environment variables
   [-verify]                                do not submit, just verify
   [-V]                                     export all environment variables
   [-wd working_directory]                  use working_directory
   [-@ file]                                read commandline input from file
   [{command|-} [command_args]]

account_string          account_name
complex_list            complex[,complex,...]
context_list            variable[=value][,variable[=value],...]
ckpt_selector           `n' `s' `m' `x' `r' <interval>
date_time               [[CC]YY]MMDDhhmm[.SS]
job_identifier_list     {job_id|job_name|reg_exp}[,{job_id|job_name|reg_exp},...]
jsv_url                 [script:][username@]path
listname_list           listname[,listname,...]
rqs_list                rqs_name[,rqs_name,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' `s'
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
working_directory       path
path_list               [host:]path[,[host:]path,...]
priority                -1023 - 1024
resource_list           resource[=value][,resource[=value],...]
simple_context_list     variable[,variable,...]
slot_range              [n[-m]|[-]m] - n,m > 0
task_id_range           task_id['-'task_id[':'step]]
variable_list           variable[=value][,variable[=value],...]
obj_nm                  "queue"|"exechost"|"pe"|"ckpt"|"hostgroup"|"resource_quota"
attr_nm                 (see man pages)
obj_id_list             objectname [ objectname ...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
thread_name             "scheduler"|"jvm"
exp                     explicit:<socket>,<core>[:...]
lin                     linear[:<amount>[:<socket>,<core>]]
str                     striding:<amount>:<stepsize>[:<socket>,<core>]
"""


# --------------------------------------------------------------------------
# qalter(1): the options of a change to submitted jobs
# --------------------------------------------------------------------------

# What qalter takes and sends (qalter.c's qalter_parse_job_parameter): a
# switch qsub knows that qalter does not is "invalid option argument"; one
# Grid Engine's parser reads for qalter but no job field takes is "Unknown
# option" (ALTER_UNUSED).
ALTER_SWITCHES = {
    "-a", "-A", "-ac", "-ar", "-binding", "-c", "-ckpt", "-cwd", "-dc", "-dl", "-e", "-h",
    "-hard", "-help", "-hold_jid", "-hold_jid_ad", "-i", "-j", "-js", "-l", "-m", "-M",
    "-masterq", "-N", "-notify", "-o", "-ot", "-p", "-P", "-pe", "-q", "-r", "-R", "-sc",
    "-soft", "-S", "-t", "-tc", "-u", "-v", "-V", "-verify", "-w", "-wd", "-@", "-jsv",
}
ALTER_UNUSED = {"-C", "-clear", "-d", "-display", "-he", "-now", "-pty", "-sync", "-terse"}
_ALTER_UNUSED_HERE = ALTER_UNUSED | {"-t"}
_ALTER_PREFIX = "qalter: "
HOLD_LIST_CHARS = "nusoUSO"


def _alter_error(text: str, status: int) -> SubmitError:
    return SubmitError(_ALTER_PREFIX + text, status)


def parse_alteration(argv: list[str], *, cwd: str, env: Mapping[str, str],
                     read_file: FileReader | None = None) -> Request:
    """qalter's arguments (without ``argv[0]``) as a change request.

    Returns ``{"help": True}`` for -help, else a dict: ``targets`` (the
    job_task_list words: ``N``, ``N.range``, a job name or pattern; ``-t``
    after one adds its range), ``users`` (-u, or None), ``changes`` (the
    fields of the job request that change, with the keys and values of a
    submission, see the table at the top of this module), ``context_ops``
    (``[switch, [[name, value], ...]]`` of -ac/-dc/-sc in order), ``hold``
    (the -h hold_list, or None), ``verify`` (-verify).  Raises
    :class:`SubmitError` with qalter's text and exit status.
    """
    ctx = _Context(env, cwd, read_file)
    opts: list[_Opt] = []
    targets: list[str] = []
    try:
        _scan_alteration(ctx, list(argv), opts, targets, depth=0)
    except _ParseError as err:
        raise SubmitError(_ALTER_PREFIX + err.text if not err.text.startswith("found lonely")
                          else err.text, err.status) from None
    if not opts and not targets:
        raise SubmitError("", 1)  # the caller prints the usage and "ERROR! no option argument"
    if _first(opts, "-help"):
        return {"help": True}
    unused = [o for o in opts if o.switch in _ALTER_UNUSED_HERE]
    if unused:
        lines = [f"Unknown option {o.switch}" + (f" {o.arg}" if o.arg is not None else "") for o in unused]
        raise SubmitError("\n\n".join(lines) + "\n", STATUS_ENOIMP)
    return _alteration(opts, targets, cwd=cwd, env=env)


def _scan_alteration(ctx: _Context, words: list[str], opts: list[_Opt], targets: list[str],
                     depth: int) -> None:
    soft = False
    sc = _Scanner(ctx, opts, _ALTER_PREFIX)
    i, n = 0, len(words)
    while i < n:
        word = words[i]
        if not word.startswith("-"):
            targets.extend(_gdi_list(word))
            i += 1
            continue
        if word not in ALTER_SWITCHES and word not in ALTER_UNUSED:
            raise _ParseError(f'invalid option argument "{word}"', STATUS_ESEMANTIC)
        if word in ("-hard", "-soft", "-help", "-notify", "-verify", "-cwd", "-V", "-clear", "-terse"):
            soft = True if word == "-soft" else False if word == "-hard" else soft
            opts.append(_Opt(word if word != "-cwd" else "-wd", None,
                             ctx.cwd if word == "-cwd" else sc._noarg_value(word)))
            i += 1
            continue
        if i + 1 >= n:
            raise _ParseError(_NO_ARG_MESSAGE.get(word, f"{word} option must have argument"),
                              STATUS_ESEMANTIC)
        arg = words[i + 1]
        if word == "-t":
            if not targets:
                if any(not w.startswith("-") for w in words[i + 2:]):
                    raise _ParseError(f"found lonely '-t {arg}' option (The -t option needs a leading "
                                      "job name).", STATUS_ESEMANTIC)
                opts.append(_Opt("-t", arg))  # 8.1.9: an "Unknown option" when no job follows
                i += 2
                continue
            first, last, step = parse_task_range(arg)
            targets[-1] = f"{targets[-1].split('.', 1)[0]}.{first}-{last}:{step}"
            i += 2
            continue
        if word == "-h":
            if not arg or any(c not in HOLD_LIST_CHARS for c in arg):
                raise _ParseError(f'Unknown hold list "{arg}" specified to -h option', STATUS_ESYNTAX)
            opts.append(_Opt("-h", arg, arg))
            i += 2
            continue
        if word == "-pe":
            if i + 2 >= n:
                raise _ParseError("-pe option must have range as 2nd argument", STATUS_ESEMANTIC)
            rng = words[i + 2]
            opts.append(_Opt("-pe", f"{arg} {rng}", {"name": arg, "ranges": parse_pe_ranges(rng)}))
            i += 3
            continue
        if word == "-@":
            if depth >= 16:
                raise _ParseError(f"-@ files nested too deeply at {arg}", STATUS_ESEMANTIC)
            try:
                text = ctx.read(arg)
            except OSError as err:
                raise _ParseError(f"error opening {arg}: {err.strerror or err}", STATUS_EDISK) from None
            for line in option_file_lines(text):
                _scan_alteration(ctx, line, opts, targets, depth + 1)
            i += 2
            continue
        if word in ALTER_UNUSED:
            opts.append(_Opt(word, arg))
            i += 2
            continue
        opts.append(_Opt(word, arg, sc._value(word, arg), soft if word in ("-l", "-q") else False))
        i += 2


# qalter's switch -> the job request's key, for the switches of one value (the last wins)
_ALTER_ONE = {"-a": "start_time", "-A": "account", "-ar": "ar", "-binding": "binding", "-wd": "cwd",
              "-ckpt": "checkpoint", "-dl": "deadline", "-R": "reserve", "-j": "merge", "-N": "job_name",
              "-p": "priority", "-js": "job_share", "-P": "project", "-pe": "pe", "-ot": "override_tickets",
              "-r": "restart", "-w": "verify_level", "-tc": "tc"}
_ALTER_PATHS = {"-e": "stderr_path", "-i": "stdin_path", "-o": "stdout_path", "-S": "shell"}


def _alteration(opts: list[_Opt], targets: list[str], *, cwd: str, env: Mapping[str, str]) -> Request:
    changes: Request = {}
    context_ops: list[list[Any]] = []
    hard_l: list[Pair] = []
    soft_l: list[Pair] = []
    env_pairs: list[Pair] = []
    mail: list[tuple[str, str | None]] = []
    users: list[str] | None = None
    hold: str | None = None
    verify = False
    for opt in opts:
        sw, v = opt.switch, opt.value
        if sw in _ALTER_ONE:
            changes[_ALTER_ONE[sw]] = v
        elif sw in _ALTER_PATHS:
            key = _ALTER_PATHS[sw]
            changes[key] = _merge_keyed(changes.get(key, []), v, key=lambda p: p["host"])
        elif sw == "-c":
            changes["checkpoint_when" if v[0] == "occasion" else "checkpoint_interval"] = v[1]
        elif sw in ("-hold_jid", "-hold_jid_ad"):
            changes.setdefault(sw[1:], []).extend(v)
        elif sw == "-l":
            (soft_l if opt.soft else hard_l).extend(v)
        elif sw == "-q":
            changes.setdefault("soft_queues" if opt.soft else "hard_queues", []).extend(v)
        elif sw == "-masterq":
            changes.setdefault("master_queues", []).extend(v)
        elif sw == "-m":
            changes["mail_options"] = "" if v == "" else "".join(
                c for c in "abes" if c in v or c in changes.get("mail_options", ""))
        elif sw == "-M":
            mail = _merge_keyed(mail, v, key=lambda m: m[1])
        elif sw in ("-v", "-V"):
            env_pairs = _merge_keyed(env_pairs, v, key=lambda p: p[0])
            changes["env"] = None  # filled below
        elif sw in ("-ac", "-dc", "-sc"):
            context_ops.append([sw, [list(p) for p in v]])
        elif sw == "-notify":
            changes["notify"] = True
        elif sw == "-u":
            users = (users or []) + list(v)
        elif sw == "-h":
            hold = v
        elif sw == "-verify":
            verify = True
    if hard_l:
        changes["hard_resources"] = _keep_last(hard_l)
    if soft_l:
        changes["soft_resources"] = _keep_last(soft_l)
    if "env" in changes:
        changes["env"] = _keep_last(env_pairs)
    if mail:
        changes["mail_list"] = [u if h is None else f"{u}@{h}" for u, h in mail]
    if users is not None:
        targets = []  # -u: every job of these users (8.1.9 drops a job list given with it)
    return {"targets": targets, "users": users, "changes": changes, "context_ops": context_ops,
            "hold": hold, "verify": verify}


def is_job_task(word: str) -> bool:
    """One ``job_tasks`` of qdel, qhold, qrls and qmod (sge_types(5)): a job
    id with an optional ``.task_id_range``, or a job name or pattern (a word
    not starting with a digit).  False for ``73abc`` or ``73.x``, which
    8.1.9's commands call an invalid job-task identifier."""
    ref, dot, rng = word.partition(".")
    if not ref[:1].isdigit():
        return True
    if not ref.isdigit():
        return False
    if not dot:
        return True
    try:
        return rng == "0" or parse_range(rng, step_allowed=True, inf_allowed=False) is not None
    except ParseError:
        return False
