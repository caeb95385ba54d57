"""The one error every format parser raises."""

from __future__ import annotations


class FormatError(ValueError):
    """Bad input in a classic Grid Engine format.

    ``str(err)`` reads ``FILE:LINE: what is wrong``; ``line`` is 1-based, or
    0 when the error concerns the file as a whole (a missing attribute).
    """

    def __init__(self, message: str, path: str = "<input>", line: int = 0):
        self.message = message
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {message}")

    def located(self, path: str | None = None, line: int | None = None) -> FormatError:
        """A copy of this error placed in ``path`` at ``line`` (where not set)."""
        return FormatError(
            self.message,
            path if path is not None and self.path == "<input>" else self.path,
            line if line is not None and self.line == 0 else self.line,
        )
