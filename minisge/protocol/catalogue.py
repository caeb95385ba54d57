"""The catalogue of every operation of the protocol, and the one validator.

Standard library only (every command imports it).  Each operation is an
:class:`Op`: its name, its direction, the fields of its message with their
types, limits and whether they are required, and the fields of its replies.
The commands build their requests with the names below; the daemons look up
their handlers by the same names and call :func:`validate` on every message
they receive before any handler sees it.

Directions
    ``COMMAND``   a command to the qmaster, on the qmaster's Unix socket, or
                  on an execd's, which relays it (``RELAY``) unchanged;
    ``EXECD``     an execd to its qmaster (over TCP, or in the same process);
    ``QMASTER``   the qmaster to an execd;
    ``HANDSHAKE`` the cell-key handshake of a TCP connection
                  (:mod:`minisge.protocol.wire`).

What a daemon does with a message that fails validation
    A command's request gets an error reply naming the field (``refusal``),
    with Grid Engine's wording for the operation (``Unable to run job: ...``
    for a submission) and changes nothing.  A message between daemons is
    logged and dropped; the connection stays up.  Requests are strict: a key
    the catalogue does not name is refused.  Messages between daemons may
    carry keys the catalogue does not name (a newer peer), which are ignored.

The schema language is a handful of classes: :class:`Str`, :class:`Int`,
:class:`Num`, :class:`Bool`, :class:`Maybe` (or null), :class:`ListOf`,
:class:`Pair` (a fixed-length array), :class:`MapOf` (an object with free
keys), :class:`Record` (an object with named fields) and :class:`Json` (any
JSON value, bounded).  Each ``check(value, path)`` raises :class:`Invalid`.
"""

from __future__ import annotations

from minisge.protocol import operations
from minisge.protocol.wire import MAX_FIELD_LENGTH, MAX_HANDSHAKE_PAYLOAD, MAX_PAYLOAD, NONCE_SIZE, VERSION

TYPE_CHECKING = False  # not typing's: a command that imports the catalogue must not pay for typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    Rule = Callable[[dict[str, Any]], tuple[str, str] | None]

# ---------------------------------------------------------------- directions

COMMAND = "command->qmaster"
EXECD = "execd->qmaster"
QMASTER = "qmaster->execd"
HANDSHAKE = "handshake"
DIRECTIONS = (COMMAND, EXECD, QMASTER, HANDSHAKE)

# ---------------------------------------------------------------- limits

MAX_INT = 2**31 - 1  # Grid Engine's ids, counts and numbers are 32-bit
MAX_NAME = 1024  # a name: queue, PE, resource, user, project, context variable
MAX_PATH = 4096  # PATH_MAX
MAX_TEXT = 128 * 1024  # one argument or environment value (MAX_ARG_STRLEN)
MAX_ITEMS = 100_000  # entries of a list or map
MAX_JSON_DEPTH = 32
MAX_REQUEST = 1024 * 1024  # the frame of a command's request, unless its operation allows more
RANGE_INFINITY = 9_999_999  # sge_types(5) range: "n-" is n to 9999999
MAX_JOB_ID = 9_999_999  # job ids wrap there (Grid Engine's MAX_SEQNUM)


class Invalid(Exception):
    """A message does not match the catalogue: ``field`` (a path such as
    ``request.pe.ranges[0][1]``, "" for the message itself) and why."""

    def __init__(self, field: str, reason: str, op: Op | None = None):
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason
        self.op = op

    def text(self) -> str:
        """What is wrong, as one line: ``"request.tc" must be ..., not ...``."""
        if not self.field:
            return self.reason
        return f'"{self.field}" {self.reason}'


class UnknownOp(Invalid):
    """The message names no operation of its direction."""


# ---------------------------------------------------------------- the schema language


def _kind(value: object) -> str:
    """A value as a refusal mentions it: short, one line, never the whole value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 24 else "a number"
    if isinstance(value, str):
        if len(value) <= 40 and value.isprintable():
            return '"' + value.replace('"', '\\"') + '"'
        return f"a string of {len(value)} characters"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Spec:
    """A type of the schema language."""

    __slots__ = ()

    def check(self, value: object, path: str) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        """What the values are, for a refusal: ``must be <describe()>``."""
        raise NotImplementedError

    def fail(self, value: object, path: str) -> Invalid:
        return Invalid(path, f"must be {self.describe()}, not {_kind(value)}")


class Str(Spec):
    """A string of ``min_len`` to ``max_len`` characters.

    ``nul``: may hold NUL (no file name, argument or environment entry can);
    ``control``: may hold other control characters (a line a command prints
    or a file Grid Engine writes line by line must not); ``choices``: one of
    these; ``chars``: only these characters; ``forbid``: none of these;
    ``word``: printable ASCII without blanks (a Grid Engine object name: 8.1.9
    refuses others, and a Unicode digit is no digit of a job id).
    """

    __slots__ = ("min_len", "max_len", "nul", "control", "choices", "chars", "forbid", "word")

    def __init__(
        self,
        max_len: int = MAX_NAME,
        *,
        min_len: int = 0,
        nul: bool = False,
        control: bool = True,
        choices: tuple[str, ...] = (),
        chars: str = "",
        forbid: str = "",
        word: bool = False,
    ):
        self.min_len = min_len
        self.max_len = max_len
        self.nul = nul
        self.control = control
        self.choices = frozenset(choices)
        self.chars = frozenset(chars)
        self.forbid = forbid
        self.word = word

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in sorted(self.choices))
        if self.chars:
            return f'a string of the characters "{"".join(sorted(self.chars))}"'
        return "a string" if self.min_len == 0 else "a non-empty string"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, str):
            raise self.fail(value, path)
        if self.choices:
            if value not in self.choices:
                raise self.fail(value, path)
            return
        if len(value) > self.max_len:
            raise Invalid(path, f"must have at most {self.max_len} characters, not {len(value)}")
        if len(value) < self.min_len:
            raise Invalid(path, "must not be empty" if self.min_len == 1 else
                          f"must have at least {self.min_len} characters, not {len(value)}")
        if self.chars and not self.chars.issuperset(value):
            raise self.fail(value, path)
        if not self.nul and "\0" in value:
            raise Invalid(path, "must not hold a NUL character")
        if not self.control and not value.isprintable() and any(_is_control(c) for c in value):
            raise Invalid(path, "must not hold control characters")
        if self.word and not (value.isascii() and value.isprintable() and " " not in value):
            raise Invalid(path, "must be printable ASCII without blanks")
        for c in self.forbid:
            if c in value:
                raise Invalid(path, f'must not hold "{c}"')


def _is_control(c: str) -> bool:
    """C0 and C1 control characters, and the two Unicode line breaks."""
    return c < " " or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029"


class Int(Spec):
    """An integer (not a boolean, not a float) from ``lo`` to ``hi``."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int = -MAX_INT - 1, hi: int = MAX_INT):
        self.lo = lo
        self.hi = hi

    def describe(self) -> str:
        return f"an integer from {self.lo} to {self.hi}"

    def check(self, value: object, path: str) -> None:
        if type(value) is not int or not self.lo <= value <= self.hi:
            raise self.fail(value, path)


class Num(Spec):
    """A finite number (integer or float) from ``lo`` to ``hi``."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float = -1e18, hi: float = 1e18):
        self.lo = lo
        self.hi = hi

    def describe(self) -> str:
        return f"a number from {self.lo:g} to {self.hi:g}"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not self.lo <= value <= self.hi:
            raise self.fail(value, path)  # NaN fails the comparison too


class Bool(Spec):
    __slots__ = ()

    def describe(self) -> str:
        return "true or false"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, bool):
            raise self.fail(value, path)


class Maybe(Spec):
    """``inner`` or null."""

    __slots__ = ("inner",)

    def __init__(self, inner: Spec):
        self.inner = inner

    def describe(self) -> str:
        return f"{self.inner.describe()} or null"

    def check(self, value: object, path: str) -> None:
        if value is not None:
            self.inner.check(value, path)


class AnyOf(Spec):
    """One of ``options`` (tried in order)."""

    __slots__ = ("options",)

    def __init__(self, *options: Spec):
        self.options = options

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)

    def check(self, value: object, path: str) -> None:
        for option in self.options:
            try:
                option.check(value, path)
                return
            except Invalid:
                continue
        raise self.fail(value, path)


class ListOf(Spec):
    """A JSON array of ``min_items`` to ``max_items`` values of ``item``."""

    __slots__ = ("item", "min_items", "max_items")

    def __init__(self, item: Spec, *, min_items: int = 0, max_items: int = MAX_ITEMS):
        self.item = item
        self.min_items = min_items
        self.max_items = max_items

    def describe(self) -> str:
        return f"a list of {self.item.describe()}"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, list):
            raise self.fail(value, path)
        if not self.min_items <= len(value) <= self.max_items:
            raise Invalid(path, _count_reason(len(value), self.min_items, self.max_items))
        for i, item in enumerate(value):
            self.item.check(item, f"{path}[{i}]")


def _count_reason(n: int, least: int, most: int) -> str:
    if n < least:
        return "must not be empty" if least == 1 else f"must have at least {least} entries, not {n}"
    return f"must have at most {most} entries, not {n}"


class Pair(Spec):
    """A JSON array of fixed length, one spec per position (``[lo, hi]``)."""

    __slots__ = ("items",)

    def __init__(self, *items: Spec):
        self.items = items

    def describe(self) -> str:
        return "[" + ", ".join(i.describe() for i in self.items) + "]"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, list) or len(value) != len(self.items):
            raise self.fail(value, path)
        for i, (spec, item) in enumerate(zip(self.items, value, strict=True)):
            spec.check(item, f"{path}[{i}]")


class MapOf(Spec):
    """A JSON object with free keys (``key``) and values of ``value``."""

    __slots__ = ("key", "value", "max_items")

    def __init__(self, key: Str, value: Spec, *, max_items: int = MAX_ITEMS):
        self.key = key
        self.value = value
        self.max_items = max_items

    def describe(self) -> str:
        return f"an object of {self.value.describe()}"

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise self.fail(value, path)
        if len(value) > self.max_items:
            raise Invalid(path, _count_reason(len(value), 0, self.max_items))
        for key, item in value.items():
            try:
                self.key.check(key, path)
            except Invalid as err:
                raise Invalid(path, f"has a key that {err.reason.replace('must', 'should', 1)}") from None
            where = _join(path, key) if key.isidentifier() and len(key) <= 64 else f"{path}[{_kind(key)}]"
            self.value.check(item, where)


class Field:
    """A field of a :class:`Record`: its spec, and whether it must be there."""

    __slots__ = ("spec", "required")

    def __init__(self, spec: Spec, required: bool = False):
        self.spec = spec
        self.required = required


def req(spec: Spec) -> Field:
    """A field that must be there."""
    return Field(spec, True)


def opt(spec: Spec) -> Field:
    """A field that may be left out."""
    return Field(spec, False)


class Record(Spec):
    """A JSON object with named fields; ``extra``: keys not named are let
    through (messages between daemons) rather than refused (requests).
    ``rule(value) -> (field, reason) | None`` checks what spans fields."""

    __slots__ = ("fields", "extra", "rule")

    def __init__(
        self,
        fields: Mapping[str, Field],
        *,
        extra: bool = False,
        rule: Rule | None = None,
    ):
        self.fields = dict(fields)
        self.extra = extra
        self.rule = rule

    def describe(self) -> str:
        names = list(self.fields)
        if not names or len(names) > 3:
            return "an object"
        return "an object with " + " and ".join(f'"{n}"' for n in names)

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise self.fail(value, path)
        for name, field in self.fields.items():
            if name in value:
                field.spec.check(value[name], _join(path, name))
            elif field.required:
                raise Invalid(_join(path, name), "is required")
        if not self.extra:
            for name in value:
                if name not in self.fields:
                    raise Invalid(_join(path, str(name)), "is not a field of this message")
        if self.rule is not None:
            broken = self.rule(value)
            if broken is not None:
                raise Invalid(_join(path, broken[0]), broken[1])


class Json(Spec):
    """Any JSON value at most ``depth`` deep (what is only passed on or shown)."""

    __slots__ = ("depth",)

    def __init__(self, depth: int = MAX_JSON_DEPTH):
        self.depth = depth

    def describe(self) -> str:
        return f"a JSON value at most {self.depth} deep"

    def check(self, value: object, path: str) -> None:
        stack: list[tuple[object, int]] = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, (list, dict)):
                if depth >= self.depth:
                    raise self.fail(value, path)
                stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))


# ---------------------------------------------------------------- operations


class Op:
    """One operation: ``message`` is the message's schema (without ``op``);
    ``reply`` the schema of its final ok reply, ``more`` of its intermediate
    ones (None: it has none), for the operations that are answered.
    ``refusal`` words the error a command prints for a bad request.
    ``max_frame``: the largest frame (payload bytes) a daemon reads for it
    (:func:`frame_limits`; a command's request is small unless it says so)."""

    __slots__ = ("name", "direction", "message", "doc", "reply", "more", "refusal", "max_frame")

    def __init__(self, name: str, direction: str, message: Record, doc: str, reply: Record | None = None,
                 more: Record | None = None, refusal: str = "error: {}", max_frame: int = MAX_PAYLOAD):
        self.name = name
        self.direction = direction
        self.message = message
        self.doc = doc
        self.reply = reply
        self.more = more
        self.refusal = refusal
        self.max_frame = max_frame

    def __repr__(self) -> str:
        return f"Op({self.name!r}, {self.direction!r})"


_OPS: dict[tuple[str, str], Op] = {}


_DEFAULT_FRAME = {COMMAND: MAX_REQUEST, EXECD: MAX_PAYLOAD, QMASTER: MAX_PAYLOAD, HANDSHAKE: MAX_HANDSHAKE_PAYLOAD}


def _op(name: str, direction: str, doc: str, fields: Mapping[str, Field], *,
        reply: Mapping[str, Field] | None = None, more: Mapping[str, Field] | None = None,
        refusal: str = "error: {}", rule: Rule | None = None, max_frame: int | None = None) -> str:
    extra = direction in (EXECD, QMASTER)
    op = Op(
        name=name,
        direction=direction,
        message=Record(fields, extra=extra, rule=rule),
        doc=doc,
        reply=Record(reply, extra=True) if reply is not None else None,
        more=Record(more, extra=True) if more is not None else None,
        refusal=refusal,
        max_frame=_DEFAULT_FRAME[direction] if max_frame is None else max_frame,
    )
    if (name, direction) in _OPS:
        raise ValueError(f"operation {name!r} ({direction}) is in the catalogue twice")
    _OPS[(name, direction)] = op
    return name


# ---- types shared by several operations

NAME = Str(MAX_NAME, min_len=1, control=False, word=True)  # a queue, PE, resource, host group name ...
USER = Str(MAX_NAME, min_len=1, control=False)  # a user name as the password database has it
TEXT_LINE = Str(MAX_TEXT, control=False)  # a value that ends up on one line of output or a file
PATH = Str(MAX_PATH, min_len=1)
HOST = Str(MAX_FIELD_LENGTH, min_len=1, control=False, forbid="/", word=True)
JOB_ID = Int(1, MAX_INT)
TASK_ID = Int(1, MAX_INT)
ARG = Str(MAX_TEXT)
ENV_NAME = Str(MAX_NAME, min_len=1, forbid="=")
ENV_VALUE = Str(MAX_TEXT)
TARGETS = ListOf(NAME)  # job ids and names, users, queues: Grid Engine object names
COUNT = Int(0, MAX_INT)
EXIT_STATUS = Int(-MAX_INT - 1, MAX_INT)
SIGNAL_NAME = Str(16, min_len=1, chars="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-")
METHOD = Record({"signal": opt(Int(0, 128)), "command": opt(Str(MAX_TEXT, min_len=1))})
USAGE = MapOf(Str(MAX_NAME, min_len=1), AnyOf(Str(MAX_NAME), Num()))
LINES = ListOf(Str(MAX_TEXT))

# ---- the job request (what formats/submit_options.py makes and qsub sends)

# qsub(1) [host:]path: what precedes the first colon is the host, even in "/tmp/a:b"
PATH_LIST = ListOf(Record({"host": req(Maybe(Str(MAX_PATH))), "path": req(Str(MAX_PATH))}), max_items=1000)
RESOURCES = MapOf(NAME, Str(MAX_NAME, control=False), max_items=1000)
QUEUES = ListOf(NAME, max_items=10_000)
DATE_TIME = Maybe(Str(15, min_len=8, chars="0123456789."))


def _range_rule(field: str, lo: int, hi: int, what: str) -> tuple[str, str] | None:
    if lo > hi:
        return field, f"must have its first {what} not greater than its last, not {lo} > {hi}"
    return None


def _job_request_rule(spec: dict[str, Any]) -> tuple[str, str] | None:
    """What spans fields of a job request: ranges run upwards."""
    array = spec.get("array")
    if array is not None:
        broken = _range_rule("array", array[0], array[1], "task id")
        if broken:
            return broken
    pe = spec.get("pe")
    if pe is not None:
        for i, (lo, hi) in enumerate(pe["ranges"]):
            broken = _range_rule(f"pe.ranges[{i}]", lo, hi, "slot count")
            if broken:
                return broken
    return None


O_ENV_NAMES = ("SGE_O_HOME", "SGE_O_LOGNAME", "SGE_O_PATH", "SGE_O_SHELL", "SGE_O_TZ", "SGE_O_MAIL",
               "SGE_O_HOST", "SGE_O_WORKDIR")

JOB_REQUEST = Record(
    {
        # the GE rules of a job name (characters, length) are the qmaster's:
        # minisge.formats.submit_options.qmaster_rejection, with 8.1.9's words
        "job_name": req(Str(MAX_PATH, min_len=0)),
        "binary": opt(Bool()),
        "command": req(Str(MAX_PATH)),
        "script_path": opt(Maybe(Str(MAX_PATH))),
        "script": opt(Maybe(Str(MAX_PAYLOAD, nul=True))),
        "args": opt(ListOf(ARG)),
        "directive_prefix": opt(Maybe(Str(MAX_NAME))),
        "cwd": opt(Maybe(Str(MAX_PATH))),
        "stdout_path": opt(PATH_LIST),
        "stderr_path": opt(PATH_LIST),
        "stdin_path": opt(PATH_LIST),
        "merge": opt(Bool()),
        "shell": opt(PATH_LIST),
        "no_shell": opt(Bool()),
        "env": opt(MapOf(ENV_NAME, Maybe(ENV_VALUE))),
        "o_env": opt(MapOf(Str(choices=O_ENV_NAMES), Str(MAX_TEXT))),
        "hard_resources": opt(RESOURCES),
        "soft_resources": opt(RESOURCES),
        "hard_queues": opt(QUEUES),
        "soft_queues": opt(QUEUES),
        "master_queues": opt(QUEUES),
        "pe": opt(Maybe(Record({
            "name": req(NAME),
            "ranges": req(ListOf(Pair(Int(0, RANGE_INFINITY), Int(0, RANGE_INFINITY)), min_items=1, max_items=1000)),
        }))),
        "priority": opt(Int(-1023, 1024)),
        "restart": opt(Maybe(Bool())),
        "account": opt(Maybe(TEXT_LINE)),
        "project": opt(Maybe(NAME)),
        "mail_options": opt(Str(4, chars="abes")),
        "mail_list": opt(ListOf(NAME, max_items=1000)),
        "notify": opt(Bool()),
        "hold": opt(Bool()),
        "hold_jid": opt(ListOf(NAME, max_items=10_000)),
        "hold_jid_ad": opt(ListOf(NAME, max_items=10_000)),
        # task ids from 1 (0 gets 8.1.9's own refusal, see qmaster_rejection); step from 1
        "array": opt(Maybe(Pair(Int(0, MAX_INT), Int(0, MAX_INT), Int(1, MAX_INT)))),
        "tc": opt(Maybe(COUNT)),
        "start_time": opt(DATE_TIME),
        "deadline": opt(DATE_TIME),
        "job_share": opt(COUNT),
        "reserve": opt(Bool()),
        "now": opt(Bool()),
        "checkpoint": opt(Maybe(NAME)),
        "checkpoint_when": opt(Maybe(Str(5, min_len=1, chars="nsmxr"))),
        "checkpoint_interval": opt(Maybe(Int(1, MAX_INT))),
        "ar": opt(Maybe(COUNT)),
        "binding": opt(Maybe(TEXT_LINE)),
        "pty": opt(Maybe(Bool())),
        "context": opt(MapOf(NAME, Maybe(TEXT_LINE))),
        # qrsh/qlogin (an interactive job): where qrsh waits for its shepherd
        # (minisge.protocol.interactive_stream) and what the job runs
        "interactive": opt(Maybe(Record({
            "kind": req(Str(choices=("qrsh", "qlogin"))),
            "login": req(Bool()),
            "pty": req(Bool()),
            "port": req(Str(MAX_FIELD_LENGTH, min_len=3, control=False, word=True)),
            "token": req(Str(64, min_len=16, chars="0123456789abcdef")),
        }))),
        "verify_level": opt(Str(choices=("e", "w", "n", "v", "p"))),
        # qsub's own, sent by older callers: never acted on by the qmaster
        "sync": opt(Bool()),
        "terse": opt(Bool()),
        "verify": opt(Bool()),
    },
    rule=_job_request_rule,
)

# a job request as the qmaster keeps it and sends it to an execd (the script is in a file)
STORED_JOB_REQUEST = Record(JOB_REQUEST.fields, extra=True, rule=_job_request_rule)

# ---- command -> qmaster

_SUBMITTED = {"job_id": req(Int(1, MAX_JOB_ID)), "name": opt(Str(MAX_PATH)),
              "array": opt(Maybe(Pair(Int(), Int(), Int()))),
              "warnings": opt(LINES),  # qsub -w w
              "scheduled": opt(Bool()),  # qsub -now y: the job's one pass started it
              # qsub -sync r: the task that started first, 0 when the job ended before any did
              "started": opt(Int(0, MAX_INT))}

PING = _op(operations.PING, COMMAND, "Is the daemon there? (minisge start, status)", {},
           reply={"host": req(Str()), "cell": req(Str()), "jobs": req(COUNT),
                  # minisge status: the daemon's role (allinone, qmaster), when it started, and its
                  # execds: {"host", "address", "since", "used", "slots"} each
                  "role": opt(Str()), "started": opt(Json()), "execds": opt(ListOf(Json())),
                  # minisge web: the user the qmaster runs as (a manager whatever the manager list says)
                  "admin_user": opt(Str())})
SHUTDOWN = _op(operations.SHUTDOWN, COMMAND, "Stop the cell (a manager only).", {}, reply={})
SUBMIT = _op(
    operations.SUBMIT, COMMAND,
    "qsub: a job request; with sync (-sync y|x: its end) or sync_start (-sync r: its start), a first"
    " reply (more) when it is submitted, one when a task started (sync_start), the final one at its end.",
    {"request": req(JOB_REQUEST), "sync": opt(Bool()), "sync_start": opt(Bool())},
    reply={**_SUBMITTED, "tasks": opt(ListOf(Json()))},
    more=_SUBMITTED,
    refusal="Unable to run job: job rejected: {}\nExiting.",
    max_frame=MAX_PAYLOAD,  # the script travels in it
)
#: A plain listing's pending jobs that are no array and have no task record
#: of their own (nearly every line of a long queue), sent in columns rather
#: than as job dicts (``brief_jobs``; qstat asks with ``brief``;
#: minisge.output.qstat_out.BriefJobs): the listing shapes they share, each
#: [name, owner, slots, prio, state, holds], and per job its number,
#: submission time and shape's index, three by three in one list of ints.
BRIEF_SHAPE = Pair(Str(MAX_PATH), Str(MAX_PATH), COUNT, Num(), Str(8), Str(8))
BRIEF_JOBS = Record({"shapes": req(ListOf(BRIEF_SHAPE, max_items=MAX_JOB_ID)),
                     "columns": req(ListOf(Int(), max_items=3 * MAX_JOB_ID))})
_QSTAT_FIELDS = {
    "users": opt(Maybe(TARGETS)),
    "detail": opt(Bool()),
    "brief": opt(Bool()),  # with detail false: such jobs in brief_jobs (BRIEF_JOBS)
    "resources": opt(Bool()),
    "finished": opt(Bool()),  # -s z: the finished jobs too
    "requests": opt(ListOf(NAME)),  # -l resource=value: the queue instances where they hold
    "queue_users": opt(TARGETS),  # -U: the queue instances these users may use
}
_JOBS = ListOf(Json(), max_items=MAX_JOB_ID)
QSTAT = _op(operations.QSTAT, COMMAND, "qstat: the job listing.", _QSTAT_FIELDS,
            reply={"jobs": req(_JOBS), "queues": req(ListOf(Str())), "finished": opt(ListOf(Json())),
                   "brief_jobs": opt(BRIEF_JOBS)})
QSTAT_FULL = _op(operations.QSTAT_FULL, COMMAND,
                 "qstat -f, -F, -g c, -q, -qs, -pe: the listing and the queue instances.",
                 _QSTAT_FIELDS,
                 reply={"jobs": req(_JOBS), "queues": req(ListOf(Str())), "queue_info": req(ListOf(Json())),
                        "finished": opt(ListOf(Json())), "brief_jobs": opt(BRIEF_JOBS),
                        "hide_pending": opt(ListOf(Int())),  # -l/-U: jobs whose pending tasks fit no instance shown
                        "unknown_resource": opt(Str())})  # -l of an unknown name: qstat prints nothing, exits 1
JOB_DETAIL = _op(operations.JOB_DETAIL, COMMAND, "qstat -j [job_list] [-xml].",
                 {"ids": opt(TARGETS), "xml": opt(Bool())},
                 reply={"jobs": req(ListOf(Json())), "missing": req(ListOf(Str())), "global": req(ListOf(Str())),
                        "reasons": req(MapOf(Str(), Json())), "summary": opt(ListOf(Json()))})
_LINES_RC = {"lines": req(LINES), "rc": req(COUNT)}
QDEL = _op(operations.QDEL, COMMAND, "qdel [-f] [-u user_list] [job_task_list].",
           {"targets": opt(TARGETS), "users": opt(Maybe(TARGETS)), "force": opt(Bool())},
           reply={**_LINES_RC, "forced": opt(Bool())})
QHOLD = _op(operations.QHOLD, COMMAND, "qhold/qrls [-h u|o|s] [-u user_list] job_task_list.",
            {"targets": opt(TARGETS), "hold": opt(Str(4, min_len=1, chars="uosn")), "release": opt(Bool()),
             "users": opt(Maybe(TARGETS))},
            reply=_LINES_RC)
QMOD_ACTIONS = ("d", "e", "c", "cq", "cj", "s", "us", "r", "sj", "usj", "sq", "usq", "rj", "rq")
QMOD = _op(operations.QMOD, COMMAND, "qmod -d|-e|-c|-cj|-s|-us|-r|... targets.",
           {"action": req(Str(choices=QMOD_ACTIONS)), "targets": opt(TARGETS), "force": opt(Bool())},
           reply=_LINES_RC)
QCONF_FILE = Record({"path": req(Str(MAX_PATH)), "text": req(Maybe(Str(MAX_PAYLOAD, nul=True)))})
QCONF_FILE_OPTIONS = ("-Aconf", "-Mconf")  # their args are the files qconf read, the others' are words


def _qconf_rule(msg: dict[str, Any]) -> tuple[str, str] | None:
    files = msg["cmd"] in QCONF_FILE_OPTIONS
    for i, arg in enumerate(msg.get("args", ())):
        if isinstance(arg, dict) != files:
            return f"args[{i}]", ("must be a file (path and text) for -Aconf and -Mconf" if files else
                                  f"must be a string for {msg['cmd']}")
    return None


QCONF = _op(
    operations.QCONF, COMMAND,
    "qconf: one option; args as qconf(1) takes them (-Aconf/-Mconf: files), text and path of a file it read.",
    {"cmd": req(Str(64, min_len=1, control=False)),
     "args": opt(ListOf(AnyOf(Str(MAX_TEXT), QCONF_FILE), max_items=10_000)),
     "text": opt(Maybe(Str(MAX_PAYLOAD, nul=True))),
     "path": opt(Maybe(Str(MAX_PATH)))},
    reply={"out": req(Str(MAX_PAYLOAD, nul=True)), "err": req(Str(MAX_PAYLOAD, nul=True)), "rc": req(COUNT)},
    rule=_qconf_rule,
    max_frame=16 * 1024 * 1024,  # the files of -A/-M (a host group or complex of many thousand lines)
)
PE_TASK = _op(
    operations.PE_TASK, COMMAND,
    "qrsh -inherit: a task of a running parallel job on one of its hosts; its output comes back (more).",
    {"job_id": req(JOB_ID), "task_id": opt(TASK_ID), "host": req(HOST),
     "command": req(ListOf(ARG, min_items=1)), "env": opt(MapOf(ENV_NAME, ENV_VALUE)), "verbose": opt(Bool())},
    reply={"pe_task_id": req(Str()), "exit_status": req(EXIT_STATUS), "failed": req(Int()),
           "error": opt(Str(MAX_TEXT))},
    more={"stream": req(Str(choices=("out", "err"))), "data": req(Str(MAX_PAYLOAD, nul=True))},
    max_frame=4 * 1024 * 1024,  # the command and its environment (qrsh -V)
)
QPING = _op(operations.QPING, COMMAND,
            "qping: is the daemon at host/port/name/id up, and its status (the qmaster answers).",
            {"host": req(HOST), "port": req(Int(0, 65535)), "name": req(NAME), "id": req(COUNT)},
            reply={"state": req(Str(choices=("up", "refused", "denied", "unknown"))),
                   "start_time": opt(Num(0, 1e12)), "clients": opt(COUNT), "info": opt(TEXT_LINE),
                   "local": opt(Str(MAX_TEXT)), "now": req(Num(0, 1e12))})
QQUOTA = _op(operations.QQUOTA, COMMAND, "qquota: the usage of the resource quota sets.",
             {k: opt(TARGETS) for k in ("users", "projects", "pes", "queues", "hosts", "resources")},
             reply={"rows": req(ListOf(Json()))})

SHARE_MON = _op(operations.SHARE_MON, COMMAND,
                "sge_share_mon: the share tree's nodes with shares, targets and usage (decayed to now: decay).",
                {"decay": opt(Bool())}, reply={"rows": req(ListOf(Json()))})

# advance reservations: qrsub(1), qrstat(1), qrdel(1)
AR_PE = Record({"name": req(NAME), "ranges": req(ListOf(Pair(Int(1, RANGE_INFINITY), Int(1, RANGE_INFINITY)),
                                                          min_items=1, max_items=1000)),
                "text": req(Str(MAX_NAME, min_len=1, control=False))})
QRSUB = _op(
    operations.QRSUB, COMMAND, "qrsub: an advance reservation request; the lines to print and the exit code.",
    {"start_time": opt(DATE_TIME), "end_time": opt(DATE_TIME),
     "duration": opt(Maybe(Str(32, min_len=1, control=False))),
     "name": opt(Maybe(NAME)), "account": opt(Maybe(NAME)), "resources": opt(RESOURCES), "queues": opt(QUEUES),
     "master_queues": opt(QUEUES), "pe": opt(Maybe(AR_PE)), "users": opt(TARGETS),
     "mail_options": opt(Maybe(Str(8, chars="beasn"))),
     "mail_list": opt(ListOf(Str(MAX_NAME, min_len=1, control=False))),
     "error_handling": opt(Bool()), "verify": opt(Str(choices=("e", "v"))), "checkpoint": opt(Maybe(NAME))},
    reply=_LINES_RC)
QRSTAT = _op(operations.QRSTAT, COMMAND, "qrstat [-ar ar_id_list] [-u user_list]: the advance reservations.",
             {"ids": opt(Maybe(TARGETS)), "users": opt(Maybe(TARGETS))},
             reply={"ars": req(ListOf(Json())), "missing": req(ListOf(Str()))})
QRDEL = _op(operations.QRDEL, COMMAND,
            "qrdel [-f] [-u user_list] [ar_id_list]: delete advance reservations and their jobs.",
            {"targets": opt(TARGETS), "users": opt(Maybe(TARGETS)), "force": opt(Bool())},
            reply=_LINES_RC)

# qalter: the fields of a job request that qalter(1) changes (each optional; -ot's override tickets besides)
ALTERABLE = ("start_time", "account", "ar", "binding", "cwd", "checkpoint", "checkpoint_when", "checkpoint_interval",
             "deadline", "stderr_path", "stdin_path", "stdout_path", "hold_jid", "hold_jid_ad", "reserve", "merge",
             "hard_resources", "soft_resources", "mail_options", "mail_list", "job_name", "notify", "priority",
             "job_share", "project", "pe", "hard_queues", "soft_queues", "master_queues", "restart", "verify_level",
             "shell", "env", "tc")
JOB_CHANGES = Record({**{name: opt(JOB_REQUEST.fields[name].spec) for name in ALTERABLE},
                      "override_tickets": opt(COUNT)}, rule=_job_request_rule)
CONTEXT_OP = Pair(Str(choices=("-ac", "-dc", "-sc")),
                  ListOf(Pair(NAME, Maybe(TEXT_LINE)), max_items=10_000))
HOLD_LIST = Str(7, min_len=1, chars="nusoUSO")
QALTER = _op(
    operations.QALTER, COMMAND,
    "qalter: change submitted jobs (job_task_list or -u users) as a new qsub would; -h hold_list; -w verify.",
    {"targets": opt(ListOf(Str(MAX_NAME, min_len=1, control=False))), "users": opt(Maybe(TARGETS)),
     "changes": req(JOB_CHANGES), "context_ops": opt(ListOf(CONTEXT_OP, max_items=10_000)),
     "hold": opt(Maybe(HOLD_LIST))},
    reply=_LINES_RC,
)
QRESUB = _op(operations.QRESUB, COMMAND, "qresub [-h hold_list] job_id_list: new jobs copied from these.",
             {"targets": req(ListOf(Str(MAX_NAME, min_len=1, control=False), min_items=1)),
              "hold": opt(Maybe(HOLD_LIST))},
             reply=_LINES_RC)
QHOST = _op(operations.QHOST, COMMAND,
            "qhost: the hosts with their load values; -F resources, -q queue instances, -j (-u) running jobs.",
            {"hosts": opt(ListOf(HOST)), "requests": opt(ListOf(TEXT_LINE)), "resources": opt(TARGETS),
             "queues": opt(Bool()), "jobs": opt(Bool()), "users": opt(TARGETS)},
            reply={"hosts": req(ListOf(Json())), "unknown_host": opt(TEXT_LINE)})
QSELECT = _op(operations.QSELECT, COMMAND, "qselect: the queue instances -q, -qs, -pe, -U and -l select.",
              {"queues": opt(TARGETS), "states": opt(Str(64, chars="acdosuACDES")), "pes": opt(TARGETS),
               "users": opt(TARGETS), "requests": opt(ListOf(TEXT_LINE))},
              reply={"queues": req(ListOf(Str()))})

# ---- execd -> qmaster

_TASK = {"job_id": req(JOB_ID), "task_id": req(TASK_ID)}
_REPORT = {
    "host": opt(HOST),  # the qmaster takes the host from the connection, never from this
    "failed": req(Int(0, MAX_INT)),
    "usage": req(USAGE),
    "exit_status": opt(EXIT_STATUS),
    "signal": opt(Int(0, MAX_INT)),
    "error": opt(Str(MAX_TEXT)),
    "limit": opt(Str(MAX_TEXT)),
    "dispatched": opt(Num(0, 1e12)),  # the run's identity: the start message's
}
REGISTER = _op("register", EXECD, "An execd's first message: the tasks it knows; startup: not a reconnection.",
               {"known": req(ListOf(Pair(JOB_ID, TASK_ID))), "startup": opt(Bool())})
TASK_END = _op("task_end", EXECD, "A task (its shepherd) ended: failed state, usage, exit status.",
               {**_TASK, **_REPORT})
ONLINE_USAGE = Record({"job_id": req(JOB_ID), "task_id": req(TASK_ID), "cpu": req(Num(0)), "mem": req(Num(0)),
                       "io": req(Num(0)), "vmem": req(Num(0)), "maxvmem": req(Num(0)),
                       "binding": opt(Str(MAX_NAME))})  # qsub -binding: the host's topology, its cores lower case
LOAD = _op("load", EXECD, "The host's load values (sge_conf(5) load_report_time) and the online usage of "
           "the tasks it runs (qstat -j usage, qstat -ext cpu/mem/io).",
           {"host": opt(HOST), "values": req(MapOf(NAME, AnyOf(Str(MAX_NAME), Num()), max_items=10_000)),
            "usage": opt(ListOf(ONLINE_USAGE))})
RELAY = _op("relay", EXECD, "A command's request on the execd's socket, with the kernel's word on its caller.",
            {"rid": req(Int(0, MAX_INT)), "host": req(HOST), "pid": req(Int(0, MAX_INT)), "uid": req(Int(0, MAX_INT)),
             "gid": req(Int(0, MAX_INT)), "request": req(MapOf(Str(MAX_NAME), Json()))})
PE_TASK_OUTPUT = _op("pe_task_output", EXECD, "Output of a PE task, as it comes.",
                     {**_TASK, "pe_task_id": req(NAME), "host": opt(HOST),
                      "stream": req(Str(choices=("out", "err"))), "data": req(Str(MAX_PAYLOAD, nul=True))})
PE_TASK_END = _op("pe_task_end", EXECD, "A PE task ended.", {**_TASK, "pe_task_id": req(NAME), **_REPORT})

# ---- qmaster -> execd

_START = {
    **_TASK,
    "owner": req(USER),
    "uid": req(Int(0, MAX_INT)),
    "gid": req(Int(0, MAX_INT)),
    "spec": req(STORED_JOB_REQUEST),
    "queue": req(NAME),
    "slots": opt(COUNT),
    "nhosts": opt(COUNT),
    "nqueues": opt(COUNT),
    "pe": opt(Maybe(NAME)),
    "pe_hostfile": opt(Maybe(Str(MAX_PAYLOAD))),
    "script_file": opt(Maybe(Str(MAX_PATH))),
    "tmpdir": opt(Maybe(Str(MAX_PATH))),
    "h_rt": opt(Maybe(Num(-1e18, 1e18))),
    "limits": opt(MapOf(NAME, Json(2))),
    "host_slots": opt(COUNT),
    "consumable_job": opt(ListOf(NAME)),
    "procedures": opt(MapOf(NAME, Record({"command": req(Str(MAX_TEXT)), "user": opt(Maybe(Str(MAX_NAME)))}))),
    "login_shells": opt(ListOf(Str(MAX_PATH))),
    "mailer": opt(Maybe(Str(MAX_PATH))),  # sge_conf(5) mailer, for qsub -m
    "rsh_command": opt(Maybe(Str(MAX_PATH))),  # sge_conf(5) rsh_command, for SGE_RSH_COMMAND of a tight PE
    "dispatched": opt(Num(0, 1e12)),  # when the qmaster dispatched this run: echoed in its end report
    # sge_rsmap(5): the instances of each resource map granted on the receiving host (SGE_HGR_<name>)
    "resource_map": opt(MapOf(NAME, ListOf(Str(MAX_NAME)))),
}
START = _op("start", QMASTER, "Start a task of a job (the job's request and its queue's settings).", _START)
SIGNAL = _op("signal", QMASTER, "Send a signal to a task's job.", {**_TASK, "signal": opt(SIGNAL_NAME)})
_CONTROL = {**_TASK, "method": opt(METHOD), "notify": opt(Num(0, 1e12)), "notify_signal": opt(Int(0, 128))}
SUSPEND = _op("suspend", QMASTER, "Stop a task (queue_conf(5) suspend_method, -notify).", _CONTROL)
RESUME = _op("resume", QMASTER, "Continue a task (resume_method).", _CONTROL)
TERMINATE = _op("terminate", QMASTER, "End a task (terminate_method).", _CONTROL)
ACK_END = _op("ack_end", QMASTER, "The task's end is recorded: its directory may go.", _TASK)
PE_TASK_START = _op("pe_task_start", QMASTER, "Start a PE task (qrsh -inherit): a start message and the task's own.",
                    {**_START, "pe_task_id": req(NAME), "command": req(ListOf(ARG, min_items=1)),
                     "task_env": opt(MapOf(ENV_NAME, ENV_VALUE)), "suspended": opt(Bool()),
                     "suspend_method": opt(METHOD)})
PE_TASK_KILL = _op("pe_task_kill", QMASTER, "Signal the job's PE tasks on this host.",
                   {**_TASK, "signal": opt(SIGNAL_NAME)})
PE_TASK_SUSPEND = _op("pe_task_suspend", QMASTER, "Stop the job's PE tasks on this host.",
                      {**_TASK, "method": opt(METHOD)})
PE_TASK_RESUME = _op("pe_task_resume", QMASTER, "Continue the job's PE tasks on this host.",
                     {**_TASK, "method": opt(METHOD)})


def _reply_rule(reply: dict[str, Any]) -> tuple[str, str] | None:
    if reply["ok"] is False and ("error" not in reply or "rc" not in reply):
        return "error", "and rc are required in a failed reply"
    return None


REPLY = Record({"ok": req(Bool()), "more": opt(Bool()), "error": opt(Str(MAX_PAYLOAD, nul=True)), "rc": opt(Int())},
               extra=True, rule=_reply_rule)
RELAY_REPLY = _op("relay_reply", QMASTER, "A reply to a relayed request (same rid).",
                  {"rid": req(Int(0, MAX_INT)), "reply": req(REPLY)})

# ---- handshake (checked by minisge.protocol.wire's handshake classes)

_NONCE = Str(2 * NONCE_SIZE, min_len=2 * NONCE_SIZE, chars="0123456789abcdefABCDEF")
_PEER = {"role": req(Str(MAX_FIELD_LENGTH, min_len=1)), "name": req(Str(MAX_FIELD_LENGTH, min_len=1))}
HELLO = _op("hello", HANDSHAKE, "Server to client, first: who it is and its nonce.",
            {"protocol": req(Int(VERSION, VERSION)), **_PEER, "nonce": req(_NONCE)})
AUTH = _op("auth", HANDSHAKE, "Client to server: who it is, its nonce, its proof of the cell key.",
           {**_PEER, "nonce": req(_NONCE), "proof": req(Str(64, min_len=64, chars="0123456789abcdefABCDEF"))},
           reply={"proof": req(Str(64, min_len=64, chars="0123456789abcdefABCDEF"))})

# ---------------------------------------------------------------- replies

ERROR_REPLY = Record({"ok": req(Bool()), "error": req(Str(MAX_PAYLOAD, nul=True)), "rc": req(Int()),
                      "more": opt(Bool())}, extra=True)


# ---------------------------------------------------------------- the validator


def ops(direction: str | None = None) -> list[Op]:
    """The operations of ``direction`` (all of them with None), in catalogue order."""
    return [op for op in _OPS.values() if direction is None or op.direction == direction]


def find(name: str, direction: str) -> Op | None:
    """The operation ``name`` of ``direction``, or None."""
    return _OPS.get((name, direction))


def frame_limits(direction: str) -> dict[str, int]:
    """The operations of ``direction`` whose frames may be larger than the
    direction's default (a command's: ``MAX_REQUEST``), with their limits:
    what a daemon gives ``FrameDecoder(max_payload, op_limits)``."""
    default = _DEFAULT_FRAME[direction]
    return {op.name: op.max_frame for op in ops(direction) if op.max_frame > default}


def max_frame(direction: str) -> int:
    """The frame limit of ``direction``'s operations that name no larger one."""
    return _DEFAULT_FRAME[direction]


def op_name(msg: Mapping[str, object]) -> str:
    """The ``op`` of a message, or :class:`UnknownOp` if it has none."""
    name = msg.get("op")
    if not isinstance(name, str):
        raise UnknownOp("op", f"must name an operation, not {_kind(name)}")
    return name


def validate(msg: Mapping[str, object], direction: str) -> Op:
    """The operation of ``msg`` (a decoded message, received in ``direction``)
    once every field is checked; :class:`Invalid` (or :class:`UnknownOp`)
    naming the first field that is wrong."""
    name = op_name(msg)
    op = _OPS.get((name, direction))
    if op is None:
        raise UnknownOp("", f'unknown operation {_kind(name)}')
    body = {k: v for k, v in msg.items() if k != "op"}
    try:
        op.message.check(body, "")
    except Invalid as err:
        raise Invalid(err.field, err.reason, op) from None
    return op


def check_reply(op: Op, reply: Mapping[str, object], final: bool = True) -> None:
    """Check a reply to ``op`` against the catalogue (tests, and a careful
    client): an error reply, or the op's final (``final``) or intermediate reply."""
    if reply.get("ok") is False:
        ERROR_REPLY.check(dict(reply), "")
        return
    schema = op.reply if final else op.more
    if schema is None or reply.get("ok") is not True:
        raise Invalid("ok", f"no {'final' if final else 'intermediate'} ok reply is expected to {op.name}")
    schema.check({k: v for k, v in reply.items() if k not in ("ok", "more")}, "")


def refusal(err: Invalid) -> dict[str, object]:
    """The error reply a command gets for a request that failed validation,
    worded as Grid Engine words the operation's errors."""
    if err.op is None:
        text = f"error: {err.text()}"
    else:
        text = err.op.refusal.format(_user_text(err))
    return {"ok": False, "error": text, "rc": 1}


def _user_text(err: Invalid) -> str:
    """The field as the user knows it: a submission's fields without ``request.``."""
    if err.op is not None and err.op.name == SUBMIT and err.field.startswith("request."):
        return Invalid(err.field[len("request."):], err.reason).text()
    return err.text()
