"""Grid Engine's classic text formats: one module per format.

Each module parses text into an attrs model and writes the model back the
way Grid Engine 8.1 writes it.  Parsers raise :class:`FormatError`, whose
message reads ``FILE:LINE: what is wrong``.
"""

from minisge.formats.errors import FormatError

__all__ = ["FormatError"]
