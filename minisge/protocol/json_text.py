"""JSON text as the wire and the ``-fmt json`` views write and read it, without
importing :mod:`json`.

``import json`` costs a command about as much as the rest of its start-up
(``json.decoder`` imports :mod:`re`, which imports :mod:`enum`, and compiles
its patterns): a plain ``qsub`` or ``qstat`` must not pay that.  The work of
``json.dumps``/``json.loads`` is done by CPython's accelerator ``_json``
anyway; this module calls it the way ``json`` does, with the same results
and the same error texts (``Expecting value: line 1 column 1 (char 0)``).
An interpreter without ``_json`` gets the :mod:`json` module itself.

Standard library only.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see minisge.protocol.wire
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # not CPython: the json module's own way
    import json

    _json = None  # type: ignore[assignment]

WHITESPACE = " \t\n\r"


class DecodeError(ValueError):
    """Text that is not one JSON value; ``str()`` is json's own message."""

    def __init__(self, msg: str, doc: str, pos: int) -> None:
        lineno = doc.count("\n", 0, pos) + 1
        colno = pos - doc.rfind("\n", 0, pos)
        super().__init__(f"{msg}: line {lineno} column {colno} (char {pos})")
        self.msg, self.doc, self.pos, self.lineno, self.colno = msg, doc, pos, lineno, colno


def _not_serializable(o: object) -> None:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj: object, ascii: bool = True) -> str:
    """``json.dumps(obj, ensure_ascii=ascii, separators=(",", ":"), allow_nan=False)``:
    TypeError for what JSON cannot hold, ValueError for NaN and the infinities
    (and for a value that holds itself)."""
    if _json is None:
        return json.dumps(obj, ensure_ascii=ascii, separators=(",", ":"), allow_nan=False)
    string = _json.encode_basestring_ascii if ascii else _json.encode_basestring
    if isinstance(obj, str):
        return string(obj)
    # a new markers dict per call, as json's: a failed call leaves entries in it
    chunks = _json.make_encoder({}, _not_serializable, string, None, ":", ",", False, False, False)(obj, 0)
    return "".join(chunks)


class _Context:
    """What ``_json.make_scanner`` reads of a decoder (json.JSONDecoder's attributes)."""

    def __init__(self, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
                 parse_constant: Callable[[str], Any]) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = parse_constant


def _constant(name: str) -> float:
    return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


class Decoder:
    """``json.loads(text, object_pairs_hook=..., parse_constant=...)`` as a
    reusable object: ``decode(text)`` is the value, or ValueError (json's
    message) for text that is not one JSON value."""

    __slots__ = ("_scan", "_decoder")

    def __init__(self, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
                 parse_constant: Callable[[str], Any] = _constant) -> None:
        self._decoder: Any = None
        self._scan: Any = None
        if _json is None:
            self._decoder = json.JSONDecoder(object_pairs_hook=object_pairs_hook, parse_constant=parse_constant)
        else:
            context: Any = _Context(object_pairs_hook, parse_constant)
            self._scan = _json.make_scanner(context)

    def decode(self, text: str) -> Any:
        if self._scan is None:
            return self._decoder.decode(text)
        if text.startswith("\ufeff"):
            raise DecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        start = len(text) - len(text.lstrip(WHITESPACE))
        try:
            obj, end = self._scan(text, start)
        except StopIteration as err:
            raise DecodeError("Expecting value", text, err.value) from None
        rest = text[end:]
        if rest:
            end += len(rest) - len(rest.lstrip(WHITESPACE))
            if end != len(text):
                raise DecodeError("Extra data", text, end)
        return obj


_PLAIN = Decoder()


def loads(text: str) -> Any:
    """``json.loads(text)``."""
    return _PLAIN.decode(text)
