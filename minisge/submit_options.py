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

Client side only: ``sync`` (bool), ``terse`` (bool, command line only),
``verify`` (bool, -verify), ``warnings`` (lines qsub prints on stdout),
and ``help`` (True: print :data:`USAGE` and exit 0; nothing else is set).

Errors raise :class:`SubmitError` whose ``message`` is qsub's exact standard
error text (without the final newline) and ``exit_code`` its exit status.
"""

from __future__ import annotations

import re

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

    def __init__(self, switch: str, arg: str | None, value=None, soft: bool = False):
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
    m = re.match(r"[ \t\n\r\f\v]*([+-]?\d+)", text)
    if not m:
        return None, text
    return int(m.group(1)), text[m.end():]


def _no_decimal(text: str) -> _ParseError:
    return _ParseError(
        f'Numerical value invalid!\nThe initial portion of string "{text}" '
        "contains no decimal number", STATUS_ESYNTAX)


def _trailer(spec: str, rest: str) -> _ParseError:
    return _ParseError(f'Range specifier "{spec}" has unknown trailer "{rest}"', STATUS_ESYNTAX)


def parse_range(spec: str, step_allowed: bool, inf_allowed: bool):
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
    m = re.match(r"[ \t]*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text)
    if not m:
        raise _no_decimal(text)
    number = float(m.group(0))
    rest = text[m.end():]
    if number <= 0:
        raise _ParseError("Negative or zero step in range is not allowed", STATUS_ESYNTAX)
    if number != int(number):
        raise _no_decimal(text)
    if rest:
        raise _trailer(text, rest)
    return int(number)


def parse_task_range(spec: str) -> tuple[int, int, int]:
    """qsub -t: ``n[-m[:s]]``; a comma list must merge into one range."""
    ranges = []
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


def _merge_ranges(ranges):
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
    ranges = []
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


def format_ranges(ranges) -> str:
    """Ranges as Grid Engine prints them: ``2``, ``2-9999999``, ``1-4,8``."""
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


def _path_list(switch: str, text: str, what: str) -> list[dict]:
    """``[host:]path,...`` (cull_parse_path_list); a leading ``:`` means no host."""
    words = _gdi_list(text)
    if not words:
        raise _ParseError(f'Wrong {what} format "{text}" specified to {switch} option',
                          STATUS_ESYNTAX)
    result = []
    for word in words:
        if word.startswith(":"):
            host, path = None, word[1:]
        elif ":" in word:
            host, path = word.split(":", 1)
        else:
            host, path = None, word
        result.append({"host": host, "path": path})
    return result


def _var_list(text: str, env: dict | None) -> list[tuple[str, str | None]] | None:
    """``variable[=value],...``; without ``=`` the value comes from ``env``
    when given (qsub -v), else is None (-ac).  None when the list is bad."""
    words = _gdi_list(text)
    if not words:
        return None
    result = []
    for word in words:
        name, eq, value = word.partition("=")
        if name == "":
            return None
        if eq:
            result.append((name, value))
        else:
            result.append((name, env.get(name) if env is not None else None))
    return result


_DATE_TIME = re.compile(r"(\d{8}|\d{10}|\d{12})(\.\d\d)?")


def _date_time(switch: str, text: str) -> str:
    """``[[CC]YY]MMDDhhmm[.SS]`` (sge_types(5) date_time), kept as given."""
    m = _DATE_TIME.fullmatch(text)
    ok = m is not None
    if ok:
        digits = m.group(1)[-8:]
        month, day, hour, minute = (int(digits[i:i + 2]) for i in range(0, 8, 2))
        sec = int(m.group(2)[1:]) if m.group(2) else 0
        ok = 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and sec <= 60
    if not ok:
        raise _ParseError(f'Wrong date/time format "{text}" specified to {switch} option',
                          STATUS_ESYNTAX, preamble="\nInvalid format of date/hour-minute field.")
    return text


_TIME = re.compile(r"(\d*):(\d*):(\d*)|\d+")


def _seconds(text: str) -> int | None:
    """A time_specifier (sge_types(5)) in whole seconds, or None."""
    m = _TIME.fullmatch(text)
    if not m:
        return None
    if m.group(1) is None:
        return int(text)
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return h * 3600 + mi * 60 + s


def _unsigned(text: str) -> int | None:
    m = re.fullmatch(r"[ \t]*\+?(\d+)", text)
    return int(m.group(1)) if m else None


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

    def __init__(self, ctx: "_Context", opts: list[_Opt], warn_prefix: str, depth: int = 0):
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

    def _noarg_value(self, word: str):
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
            raise _ParseError(f"error opening {path}: {err.strerror or err}", STATUS_EDISK)
        sub = _Scanner(self.ctx, [], self.warn_prefix, self.depth + 1)
        for words in option_file_lines(text):
            sub.scan(words, pseudo=False)
        self.opts.extend(sub.opts)

    def _value(self, switch: str, arg: str):
        """The parsed value of ``switch arg`` (Grid Engine's checks and messages)."""
        if switch in ("-b", "-j", "-now", "-R", "-r", "-shell", "-sync", "-pty", "-he",
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
            if switch == "-binding" and not re.match(
                    r"((set|env|pe) )?(linear|striding|explicit)(:|$)", arg):
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
            m = re.fullmatch(r"[+-]?\d+", arg)
            if not m or not -1023 <= int(arg) <= 1024:
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
            value = _var_list(arg, self.ctx.env)
            if value is None:
                raise _ParseError(f'Wrong variable list format -v "{arg}" or environment '
                                  "variable not set", STATUS_ESYNTAX)
            return value
        if switch in ("-ac", "-dc", "-sc"):
            value = _var_list(arg, None)
            if value is None:
                raise _ParseError(f'Wrong context list format {switch} "{arg}"', STATUS_ESYNTAX)
            return value
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

    def __init__(self, env, cwd, read_file):
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
    seen, result = set(), []
    for f in files:
        key = re.sub(r"/+", "/", f)
        if key not in seen:
            seen.add(key)
            result.append(f)
    return result


def _scan_defaults(ctx: _Context, cell_root, home, cwd) -> list[_Opt]:
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


def _read_script(ctx: _Context, path: str | None, stdin_reader) -> str:
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


def parse_submission(argv: list[str], *, cwd: str, env: dict[str, str], home: str,
                     user: str | None = None, hostname: str | None = None,
                     cell_root: str | None = None, stdin_reader=None,
                     read_file=None) -> dict:
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


def _set_job(request: dict, ctx: _Context, cmd: _Scanner, script_text, stdin_reader) -> None:
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


def _merge_keyed(old: list, new: list, key) -> list:
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


def _keep_last(pairs: list) -> dict:
    """A name given twice keeps its last value, at its last position."""
    result: dict = {}
    for name, value in pairs:
        result.pop(name, None)
        result[name] = value
    return result


_ONLY_LAST = {"-A": "account", "-P": "project", "-N": "job_name", "-ckpt": "checkpoint",
              "-a": "start_time", "-dl": "deadline", "-ar": "ar", "-binding": "binding",
              "-p": "priority", "-js": "job_share", "-tc": "tc", "-w": "verify_level",
              "-j": "merge", "-R": "reserve", "-now": "now", "-pty": "pty", "-r": "restart",
              "-sync": "sync", "-b": "binary", "-C": "directive_prefix", "-wd": "cwd"}


def _empty_request() -> dict:
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
        "context": {}, "verify_level": "n", "sync": False, "terse": False,
        "verify": False,
    }


def _build(opts: list[_Opt], ctx: _Context, *, cwd: str, user: str, hostname: str) -> dict:
    """cull_parse_job_parameter: fold the merged option list into a request."""
    req = _empty_request()
    req["o_env"] = _o_env(ctx.env, cwd, hostname)
    hard_l: list = []
    soft_l: list = []
    env_pairs: list = []
    mail: list = []
    paths = {"-o": [], "-e": [], "-i": [], "-S": []}
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
    return req


def _apply_context(context: dict, switch: str, pairs) -> None:
    """-ac adds, -dc deletes, -sc replaces the job context, in order."""
    if switch == "-sc":
        context.clear()
    for name, value in pairs:
        if switch == "-dc":
            context.pop(name, None)
        else:
            context[name] = value


def _o_env(env: dict, cwd: str, hostname: str) -> dict:
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
    for char, word in _NAME_CHARS:
        if char in name:
            if char.isprintable():
                return f"{word} ('{char}') not allowed in objectname"
            return f"{word} not allowed in objectname"
    if name.upper() in ("NONE", "ALL", "TEMPLATE"):
        return f'Keyword ("{name.upper()}") not allowed as objectname'
    if " " in name:
        # Grid Engine 8.1.9's qmaster fails on a job name with a blank this way
        return "Error reading answer list from qmaster"
    return None


def qmaster_rejection(request: dict) -> str | None:
    """The reason the qmaster refuses a request regardless of cell state, or None."""
    reason = job_name_error(request["job_name"])
    if reason:
        return reason
    if request["array"] and request["array"][0] == 0:
        return "job rejected: 0 is an invalid task id"
    if request["pe"] and any(lo == 0 for lo, _ in request["pe"]["ranges"]):
        return '"job" rejected: pe range must be greater than zero'
    return None


# --------------------------------------------------------------------------
# Messages and output paths
# --------------------------------------------------------------------------

def job_id_text(job_id: int, array=None) -> str:
    """``7``, or ``8.1-10:1`` for a job array (the -terse output)."""
    if array:
        first, last, step = array
        return f"{job_id}.{first}-{last}:{step}"
    return str(job_id)


def submitted_message(job_id: int, name: str, array=None, terse: bool = False) -> str:
    """qsub's line on success: ``Your job 7 ("x.sh") has been submitted``."""
    ident = job_id_text(job_id, array)
    if terse:
        return ident
    kind = "job-array" if array else "job"
    return f'Your {kind} {ident} ("{name}") has been submitted'


_PSEUDO = re.compile(r"\$(HOME|USER|JOB_ID|JOB_NAME|HOSTNAME|TASK_ID)")


def expand_path(path: str, *, job_id: int, task_id: int | None, job_name: str,
                user: str, home: str, hostname: str, user_home=None) -> str:
    """qsub(1) -e: expand ``$HOME $USER $JOB_ID $JOB_NAME $HOSTNAME $TASK_ID``
    and a leading ``~`` (``~user`` through ``user_home(name)`` when given).

    ``task_id`` None (not an array job) expands ``$TASK_ID`` to ``0``, as
    Grid Engine 8.1.9 does.
    """
    if path.startswith("~"):
        head, sep, tail = path[1:].partition("/")
        if head == "":
            path = home + sep + tail
        elif user_home is not None and user_home(head) is not None:
            path = user_home(head) + sep + tail
    values = {"HOME": home, "USER": user, "JOB_ID": str(job_id), "JOB_NAME": job_name,
              "HOSTNAME": hostname, "TASK_ID": str(task_id if task_id is not None else 0)}
    return _PSEUDO.sub(lambda m: values[m.group(1)], path)


def select_path(entries: list[dict], hostname: str) -> str | None:
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


def output_path(kind: str, request: dict, *, job_id: int, task_id: int | None, user: str,
                home: str, hostname: str, is_dir=None, user_home=None) -> str:
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


def read_text_file(path: str) -> str:
    """A ``read_file`` for the command: the file's text (undecodable bytes kept)."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


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
