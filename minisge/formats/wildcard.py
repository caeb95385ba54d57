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

import functools
import re
from collections.abc import Callable

#: The characters that make a request an expression rather than a plain text.
EXPRESSION_CHARS = frozenset("*?[]&|!()")
_PATTERN_CHARS = frozenset("*?[]")
_TERMINALS = frozenset("!|&() ")

_NEVER = "(?!)"  # a regex that matches nothing

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_CLASSES = {
    "alpha": "A-Za-z",
    "digit": "0-9",
    "alnum": "0-9A-Za-z",
    "upper": "A-Z",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "blank": " \\t",
    "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "cntrl": "\\x00-\\x1f\\x7f",
    "print": "\\x20-\\x7e",
    "graph": "\\x21-\\x7e",
}


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


def _class_item(c: str) -> str:
    """One literal character inside a regex character class."""
    return "\\" + c if c in "\\]^-[" else c


def _bracket(pattern: str, i: int) -> tuple[str | None, int]:
    """The regex for the ``[...]`` starting at ``pattern[i]`` and the index after it.

    glibc's reading: ``(None, i)`` for an unterminated bracket, which is a
    literal ``[`` (but a range or a backslash cut off by the end of the
    pattern makes it match nothing); a ``]`` right after ``[`` (or ``[!``, ``[^``) is literal;
    ``\\`` escapes; ranges with the ends reversed match nothing;
    ``[:class:]``, ``[=c=]`` and ``[.c.]`` as in the C locale (an unknown
    class or collating symbol makes the whole pattern match nothing).
    """
    n = len(pattern)
    j = i + 1
    negate = j < n and pattern[j] in "!^"
    if negate:
        j += 1
    items: list[str] = []
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
                items.append(_CLASSES[name])
                j = k + 2
                continue
            # not a class name: the "[" is an ordinary member
        elif c == "[" and nxt == "=":
            if not (j + 2 < n and pattern.startswith("=]", j + 3)):
                return _NEVER, n  # not a one-character [=c=]
            items.append(_class_item(pattern[j + 2]))
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
                items.append(_class_item(lo) + "-" + _class_item(hi))
            continue
        items.append(_class_item(lo))
    if not items:
        return ("(?s:.)" if negate else _NEVER), j
    return "[" + ("^" if negate else "") + "".join(items) + "]", j


@functools.lru_cache(maxsize=4096)
def _fnmatch_regex(pattern: str) -> re.Pattern[str] | None:
    """A compiled regex equivalent to fnmatch(3) with no flags (None: matches nothing)."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append(".*")
            continue
        if c == "?":
            out.append(".")
        elif c == "[":
            rx, j = _bracket(pattern, i)
            if rx is not None:
                out.append(rx)
                i = j
                continue
            out.append(re.escape("["))
        elif c == "\\":
            if i + 1 >= n:
                return None  # glibc: a trailing backslash matches nothing
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def fnmatch(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the shell ``pattern`` as fnmatch(3) with no flags has it."""
    rx = _fnmatch_regex(pattern)
    return rx is not None and rx.fullmatch(value) is not None


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


@functools.lru_cache(maxsize=4096)
def parse(expression: str) -> Node:
    """The expression tree of ``expression``; raises :class:`WildcardError` on bad syntax.

    A text without expression characters is one :class:`Pattern` compared as it is.
    """
    if not is_expression(expression):
        return Pattern(expression)
    return _Parser(expression).parse()


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
