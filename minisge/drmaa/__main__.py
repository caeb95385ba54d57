"""``python -m minisge.drmaa``: the path of libdrmaa.so, for DRMAA_LIBRARY_PATH."""

from __future__ import annotations

import os
import sys

from minisge.drmaa import library_path


def main() -> int:
    path = library_path()
    if not os.path.isfile(path):
        sys.stderr.write(f"minisge.drmaa: {path} was not built (pip install minisge builds it with cc)\n")
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
