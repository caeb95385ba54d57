"""The oldest glibc the single binary can run on: the highest ``GLIBC_x.y``
symbol version that any ELF file of the built binary's directory requires,
and which files and symbols ask for it.

    python packaging/glibc_needs.py dist/minisge

Reads the dynamic symbol tables with ``objdump -T`` (binutils, which
PyInstaller itself needs on Linux).  build.sh prints its answer; the README
says why it is what it is.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

VERSIONED = re.compile(r"\(GLIBC_(\d+(?:\.\d+)+)\)\s+(\S+)")


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def elf_files(top: str) -> list[str]:
    """Every ELF file under ``top`` (the executable, libraries, extension modules)."""
    found = []
    for folder, _dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return sorted(found)


def glibc_symbols(path: str) -> list[tuple[str, str]]:
    """(glibc version, symbol) for every undefined symbol ``path`` takes from glibc
    (none for a statically linked program, such as the C shepherd)."""
    run = subprocess.run(["objdump", "-T", path], capture_output=True, text=True)
    if run.returncode != 0 and "not a dynamic object" in run.stderr:
        return []
    run.check_returncode()
    out = run.stdout
    return [(m.group(1), m.group(2)) for line in out.splitlines() if "*UND*" in line
            for m in [VERSIONED.search(line)] if m]


def needs(top: str) -> tuple[str, dict[str, list[str]]]:
    """The highest glibc version the files under ``top`` require, and for it,
    file (relative to ``top``) -> the symbols that require it."""
    highest = "0"
    by_file: dict[str, list[str]] = {}
    for path in elf_files(top):
        for version, symbol in glibc_symbols(path):
            if version_key(version) > version_key(highest):
                highest, by_file = version, {}
            if version == highest:
                by_file.setdefault(os.path.relpath(path, top), []).append(symbol)
    return highest, by_file


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: python packaging/glibc_needs.py BINARY_DIR", file=sys.stderr)
        return 2
    highest, by_file = needs(argv[0])
    print(f"needs glibc >= {highest}")
    for name, symbols in sorted(by_file.items()):
        print(f"  {name}: {', '.join(sorted(set(symbols)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
