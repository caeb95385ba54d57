"""Wildcard expressions: how STRING, CSTRING, RESTRING and HOST requests match.

sge_types(5) "expression"::

    expression = ["!"] ["("] valExp [")"] [ AND_OR expression ]*
    valExp     = pattern | expression
    AND_OR     = "&" | "|"

``&`` binds tighter than ``|``; ``!`` negates the pattern or parenthesised
expression after it.  A pattern is a shell pattern as fnmatch(3) reads it
with no flags: ``*``, ``?``, ``[...]`` (ranges ``a-z``; ``!`` or ``^`` first
negates -- glibc's reading, which the real Grid Engine has, although the man
page says ``^`` is literal), ``\\`` escapes the next character.

The details follow Grid Engine's evaluator (``sge_eval_expression``), checked
against the real 8.1.9 with ``qhost -l arch=...``:

- a text with none of ``* ? [ ] & | ! ( )`` is compared as it is (``\\`` is then
  an ordinary character);
- the operators end a pattern wherever they stand, also inside brackets:
  ``lx2[4|6]-x86`` is the two patterns ``lx2[4`` and ``6]-x86`` (complex(5)
  in the seed says so; the 8.1.9 man page's "lx24 OR lx26" is wrong);
- white space between tokens is skipped, white space inside a pattern ends
  it, so ``"lx* sol*"`` is a syntax error;
- an expression with a syntax error matches nothing.

``match(pattern, value)`` is the question the scheduler asks; ``evaluate`` is
Grid Engine's three-valued answer (0 match, 1 no match, -1 syntax error) for
callers that need to tell a bad expression apart.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: qstat imports this module, and must not pay for typing
if TYPE_CHECKING:
    from collections.abc import Callable

#: The characters that make a request an expression rather than a plain text.
EXPRESSION_CHARS = frozenset("*?[]&|!()")
_PATTERN_CHARS = frozenset("*?[]")
_TERMINALS = frozenset("!|&() ")

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _chars(lo: str, hi: str) -> str:
    return "".join(chr(c) for c in range(ord(lo), ord(hi) + 1))


_UPPER, _LOWER, _DIGIT = _chars("A", "Z"), _chars("a", "z"), _chars("0", "9")

#: The character classes of the C locale, ``[:name:]`` inside a bracket.
_CLASSES = {
    "alpha": frozenset(_UPPER + _LOWER),
    "digit": frozenset(_DIGIT),
    "alnum": frozenset(_DIGIT + _UPPER + _LOWER),
    "upper": frozenset(_UPPER),
    "lower": frozenset(_LOWER),
    "space": frozenset(" \t\n\r\f\v"),
    "blank": frozenset(" \t"),
    "xdigit": frozenset(_DIGIT + "ABCDEFabcdef"),
    "punct": frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "cntrl": frozenset(_chars("\x00", "\x1f") + "\x7f"),
    "print": frozenset(_chars("\x20", "\x7e")),
    "graph": frozenset(_chars("\x21", "\x7e")),
}

#: The patterns and expressions met so far (a plain dict: functools would cost qstat its import).
_REMEMBERED = 4096


class WildcardError(ValueError):
    """A wildcard expression with a syntax error; ``pos`` is the offset where it was found."""

    def __init__(self, message: str, expression: str, pos: int):
        self.expression = expression
        self.pos = pos
        super().__init__(f'{message} at position {pos} of "{expression}"')


def lower_ascii(text: str) -> str:
    """``tolower`` of the C locale: only A-Z change (CSTRING and HOST comparisons)."""
    return text.translate(_ASCII_LOWER)


def is_expression(text: str) -> bool:
    """Whether ``text`` holds any of ``* ? [ ] & | ! ( )`` (``sge_is_expression``)."""
    return any(c in EXPRESSION_CHARS for c in text)


# ---------------------------------------------------------------- fnmatch(3)
#
# A pattern is read once into a ShellPattern: the parts between its stars,
# each a plain string or a tuple of one-character items (a character, None
# for "?", a Bracket).  Every item matches exactly one character, so a part
# has a fixed length: the first part is matched at the start, the last at
# the end, the ones between at their leftmost place after the one before
# (a star takes what lies between; the leftmost place leaves the most room
# for the rest).  No regular expressions: ``re`` costs qstat milliseconds.


class Bracket:
    """``[...]``: one character among ``chars`` or within ``ranges``, or, ``negate``d, any other."""

    __slots__ = ("chars", "ranges", "negate")

    def __init__(self, chars: frozenset[str], ranges: tuple[tuple[str, str], ...], negate: bool) -> None:
        self.chars = chars
        self.ranges = ranges
        self.negate = negate

    def test(self, c: str) -> bool:
        hit = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges)
        return hit != self.negate


Item = str | Bracket | None
Part = str | tuple[Item, ...]

#: A bracket that makes the whole pattern match nothing (glibc: an unknown class, a cut-off range ...).
_NEVER = Bracket(frozenset(), (), False)


def _bracket(pattern: str, i: int) -> tuple[Bracket | None, int]:
    """The bracket starting at ``pattern[i]`` and the index after it.

    glibc's reading: ``(None, i)`` for an unterminated bracket, which is a
    literal ``[`` (but a range or a backslash cut off by the end of the
    pattern makes it match nothing: ``_NEVER``); a ``]`` right after ``[`` (or ``[!``, ``[^``) is literal;
    ``\\`` escapes; ranges with the ends reversed match nothing;
    ``[:class:]``, ``[=c=]`` and ``[.c.]`` as in the C locale (an unknown
    class or collating symbol makes the whole pattern match nothing).
    """
    n = len(pattern)
    j = i + 1
    negate = j < n and pattern[j] in "!^"
    if negate:
        j += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    first = True
    while True:
        if j >= n:
            return None, i
        c = pattern[j]
        if c == "]" and not first:
            j += 1
            break
        first = False
        nxt = pattern[j + 1 : j + 2]
        if c == "[" and nxt == ":":
            k = j + 2
            while k < n and "a" <= pattern[k] < "z":
                k += 1
            if pattern.startswith(":]", k):
                name = pattern[j + 2 : k]
                if name not in _CLASSES:
                    return _NEVER, n
                chars.update(_CLASSES[name])
                j = k + 2
                continue
            # not a class name: the "[" is an ordinary member
        elif c == "[" and nxt == "=":
            if not (j + 2 < n and pattern.startswith("=]", j + 3)):
                return _NEVER, n  # not a one-character [=c=]
            chars.add(pattern[j + 2])
            j += 5
            continue
        elif c == "[" and nxt == ".":
            end = pattern.find(".]", j + 3)
            if end == -1 or end != j + 3:
                return _NEVER, n  # unterminated, or not a one-character symbol
            c = pattern[j + 2]
            j += 4  # j + 1 below steps over the closing "]"
        elif c == "\\":
            j += 1
            if j >= n:
                return _NEVER, n  # a backslash ending the pattern
            c = pattern[j]
        lo = c
        j += 1
        if pattern[j : j + 1] == "-" and pattern[j + 1 : j + 2] != "]":
            if j + 1 >= n:
                return _NEVER, n  # a range cut off by the end of the pattern
            hi = pattern[j + 1]
            j += 2
            if hi == "\\":
                if j >= n:
                    return _NEVER, n
                hi = pattern[j]
                j += 1
            if lo <= hi:
                ranges.append((lo, hi))
            continue
        chars.add(lo)
    if not chars and not ranges:
        return (Bracket(frozenset(), (), True) if negate else _NEVER), j
    return Bracket(frozenset(chars), tuple(ranges), negate), j


def _part(items: list[Item]) -> Part:
    """A part between stars: a plain string when it is characters only."""
    if all(type(item) is str for item in items):
        return "".join(items)  # type: ignore[arg-type]
    return tuple(items)


def _at(part: Part, value: str, i: int) -> bool:
    """Whether ``part`` matches ``value`` at ``i`` (the caller knows it fits)."""
    if type(part) is str:
        return value.startswith(part, i)
    for item in part:
        c = value[i]
        if item is not None and (item != c if type(item) is str else not item.test(c)):  # type: ignore[union-attr]
            return False
        i += 1
    return True


class ShellPattern:
    """A pattern as fnmatch(3) with no flags reads it (:func:`shell_pattern`)."""

    __slots__ = ("first", "middle", "last", "star", "plain")

    def __init__(self, parts: list[Part], star: bool) -> None:
        self.first = parts[0]
        self.middle = parts[1:-1]
        self.last = parts[-1] if star else ""
        self.star = star
        self.plain = all(type(part) is str for part in parts)  # stars and characters only

    def matches(self, value: str) -> bool:
        first, last = self.first, self.last
        if not self.star:
            return value == first if self.plain else len(value) == len(first) and _at(first, value, 0)
        end = len(value) - len(last)
        if end < len(first):
            return False
        if self.plain:
            if not (value.startswith(first) and value.endswith(last)):  # type: ignore[arg-type]
                return False
        elif not (_at(first, value, 0) and _at(last, value, end)):
            return False
        pos = len(first)
        for part in self.middle:
            if type(part) is str:
                pos = value.find(part, pos, end)
                if pos < 0:
                    return False
            else:
                size = len(part)
                while pos + size <= end and not _at(part, value, pos):
                    pos += 1
                if pos + size > end:
                    return False
            pos += len(part)
        return True


_PATTERNS: dict[str, ShellPattern | None] = {}


def shell_pattern(pattern: str) -> ShellPattern | None:
    """``pattern`` read as fnmatch(3) with no flags reads it (None: it matches nothing)."""
    if pattern in _PATTERNS:
        return _PATTERNS[pattern]
    parts: list[Part] = []
    items: list[Item] = []
    star = False
    i = 0
    n = len(pattern)
    result: ShellPattern | None = None
    while i < n:
        c = pattern[i]
        if c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            parts.append(_part(items))
            items = []
            star = True
            continue
        if c == "?":
            items.append(None)
        elif c == "[":
            bracket, j = _bracket(pattern, i)
            if bracket is _NEVER:
                break
            if bracket is not None:
                items.append(bracket)
                i = j
                continue
            items.append("[")
        elif c == "\\":
            if i + 1 >= n:
                break  # glibc: a trailing backslash matches nothing
            i += 1
            items.append(pattern[i])
        else:
            items.append(c)
        i += 1
    else:
        parts.append(_part(items))
        result = ShellPattern(parts, star)
    if len(_PATTERNS) >= _REMEMBERED:
        _PATTERNS.clear()
    _PATTERNS[pattern] = result
    return result


def fnmatch(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the shell ``pattern`` as fnmatch(3) with no flags has it."""
    compiled = _PATTERNS[pattern] if pattern in _PATTERNS else shell_pattern(pattern)
    return compiled is not None and compiled.matches(value)


# ---------------------------------------------------------------- expressions


class Pattern:
    """One pattern; ``text`` is matched with fnmatch if it has ``* ? [ ]``, else compared.
    (The nodes are plain classes: ``dataclasses`` costs qstat its import.)"""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def test(self, value: str, lower: Callable[[str], str] | None) -> bool:
        pat = lower(self.text) if lower else self.text
        if any(c in _PATTERN_CHARS for c in pat):
            return fnmatch(pat, value)
        return pat == value


class Not:
    __slots__ = ("operand",)

    def __init__(self, operand: Node) -> None:
        self.operand = operand

    def test(self, value: str, lower: Callable[[str], str] | None) -> bool:
        return not self.operand.test(value, lower)


class And:
    __slots__ = ("operands",)

    def __init__(self, operands: tuple[Node, ...]) -> None:
        self.operands = operands

    def test(self, value: str, lower: Callable[[str], str] | None) -> bool:
        return all(op.test(value, lower) for op in self.operands)


class Or:
    __slots__ = ("operands",)

    def __init__(self, operands: tuple[Node, ...]) -> None:
        self.operands = operands

    def test(self, value: str, lower: Callable[[str], str] | None) -> bool:
        return any(op.test(value, lower) for op in self.operands)


Node = Pattern | Not | And | Or


def _tokens(expr: str) -> list[tuple[str, str, int]]:
    """``(kind, text, position)`` tokens: ``!|&()`` operators, ``pat`` patterns, then ``end``."""
    out = []
    i = 0
    n = len(expr)
    while True:
        while i < n and expr[i] == " ":
            i += 1
        if i >= n:
            out.append(("end", "", i))
            return out
        c = expr[i]
        if c in "!|&()":
            out.append((c, c, i))
            i += 1
            continue
        j = i
        while j < n and expr[j] not in _TERMINALS:
            j += 1
        out.append(("pat", expr[i:j], i))
        i = j


class _Parser:
    """Recursive descent over the grammar of sge_types(5) "expression"."""

    def __init__(self, expr: str):
        self.expr = expr
        self.toks = _tokens(expr)
        self.k = 0

    def peek(self) -> str:
        return self.toks[self.k][0]

    def error(self, what: str) -> WildcardError:
        kind, text, pos = self.toks[self.k]
        found = "the end" if kind == "end" else f'"{text}"'
        return WildcardError(f"{what} expected, found {found}", self.expr, pos)

    def parse(self) -> Node:
        node = self.or_expr()
        if self.peek() != "end":
            raise self.error("an operator or the end")
        return node

    def or_expr(self) -> Node:
        ops = [self.and_expr()]
        while self.peek() == "|":
            self.k += 1
            ops.append(self.and_expr())
        return ops[0] if len(ops) == 1 else Or(tuple(ops))

    def and_expr(self) -> Node:
        ops = [self.simple()]
        while self.peek() == "&":
            self.k += 1
            ops.append(self.simple())
        return ops[0] if len(ops) == 1 else And(tuple(ops))

    def simple(self) -> Node:
        kind, text, _ = self.toks[self.k]
        if kind == "pat":
            self.k += 1
            return Pattern(text)
        if kind == "!":
            self.k += 1
            return Not(self.simple())
        if kind == "(":
            self.k += 1
            node = self.or_expr()
            if self.peek() != ")":
                raise self.error('")"')
            self.k += 1
            return node
        raise self.error("a pattern")


_EXPRESSIONS: dict[str, Node] = {}


def parse(expression: str) -> Node:
    """The expression tree of ``expression``; raises :class:`WildcardError` on bad syntax.

    A text without expression characters is one :class:`Pattern` compared as it is.
    """
    node = _EXPRESSIONS.get(expression)
    if node is None:
        node = _Parser(expression).parse() if is_expression(expression) else Pattern(expression)
        if len(_EXPRESSIONS) >= _REMEMBERED:
            _EXPRESSIONS.clear()
        _EXPRESSIONS[expression] = node
    return node


def check(expression: str) -> None:
    """Raise :class:`WildcardError` if ``expression`` is not a valid wildcard expression."""
    parse(expression)


def evaluate(expression: str, value: str, ignore_case: bool = False) -> int:
    """Grid Engine's answer (``sge_eval_expression``): 0 match, 1 no match, -1 syntax error.

    ``ignore_case`` is the CSTRING and HOST comparison (ASCII letters only).
    """
    try:
        node = parse(expression)
    except WildcardError:
        return -1
    if ignore_case:
        return 0 if node.test(lower_ascii(value), lower_ascii) else 1
    return 0 if node.test(value, None) else 1


def match(pattern: str, value: str, ignore_case: bool = False) -> bool:
    """Whether the request ``pattern`` matches the offered ``value``.

    complex(5): ``-l arch="*x24*|sol*"`` results in arch=lx24-x86 OR
    arch=sol-sparc ...; ``-l arch="!lx24-x86&!sol-sparc"`` in NEITHER.
    """
    return evaluate(pattern, value, ignore_case) == 0
