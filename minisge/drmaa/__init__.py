"""minisge's DRMAA 1.0 library: ``libdrmaa.so``, built from ``libdrmaa.c`` and
``drmaa.h`` by setup.py on ``pip install``; README.md here says how it works.
``python -m minisge.drmaa`` (``__main__.py``) prints its path, for ``DRMAA_LIBRARY_PATH``."""

from __future__ import annotations

import os

LIBRARY_NAME = "libdrmaa.so"


def library_path() -> str:
    """Where this installation's libdrmaa.so is (whether built or not)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)
