"""Make the tarball's command links: ``BIN_DIR/NAME -> TARGET`` for every
name of the table of commands (cli/commands.py), ``minisge`` included unless
TARGET is ``BIN_DIR/minisge`` itself (the tarball's case: the binary sits in
bin/ and every other name links to it).

    python packaging/links.py BIN_DIR TARGET

Reads the table from the source tree (no install needed); build.sh runs it.
"""

from __future__ import annotations

import os
import runpy
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command_names() -> list[str]:
    """The names of the table of commands, read from cli/commands.py."""
    table = runpy.run_path(os.path.join(TOP, "cli", "commands.py"))
    return list(table["COMMANDS"])


def make_links(bin_dir: str, target: str) -> list[str]:
    """Link every command name in ``bin_dir`` to ``target`` (relative to
    ``bin_dir``), but the target itself; returns the names linked."""
    os.makedirs(bin_dir, exist_ok=True)
    names = [name for name in command_names()
             if os.path.normpath(os.path.join(bin_dir, name)) != os.path.normpath(os.path.join(bin_dir, target))]
    for name in names:
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(target, link)
    return names


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python packaging/links.py BIN_DIR TARGET", file=sys.stderr)
        return 2
    make_links(argv[0], argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
