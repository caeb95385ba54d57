"""Text a user gave (a path, a ``-v`` value, a context, a job's arguments, an
error naming them), made safe to print on one line of an output a person reads
or a program splits (standard library only).

Grid Engine 8.1.9 prints such text as it is: a ``-v X=$'1\\n2'`` shows in
``qstat -j`` as two lines, the second one forged by the job's owner, and an
escape sequence in it reaches the terminal of whoever reads it (measured).
Here a line break and every control character but the tab are written as a
C escape (``\\n``, ``\\r``, ``\\x1b``), and so are the Unicode line separators
and bidirectional overrides, and a byte that was not UTF-8 (kept as a lone
surrogate, ``\\xff``); text without them prints unchanged, as 8.1.9 prints it.
"""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r"}


def _unsafe(code: int) -> bool:
    """A code point written escaped: a control character but the tab, a Unicode
    line separator or bidirectional override, a lone surrogate (no ``re``: a
    command must not pay for importing it)."""
    return (code <= 0x1F and code != 0x09 or 0x7F <= code <= 0x9F or 0x2028 <= code <= 0x202E
            or 0x2066 <= code <= 0x2069 or 0xD800 <= code <= 0xDFFF)


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if not _unsafe(code):
        return c
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """``value`` as text that holds no line break and no control character
    (those are escaped, see the module)."""
    text = str(value)
    if text.isascii() and text.isprintable():  # the usual case, at no cost
        return text
    return "".join(map(_escape, text))


def xml_escape(value: object) -> str:
    """``value`` printable (:func:`printable`) and escaped for XML text or an
    attribute, as 8.1.9's ``-xml`` outputs escape it."""
    return (printable(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;"))
