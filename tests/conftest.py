"""What every test shares: the hypothesis profiles and the root-only marker.

Hypothesis profiles, chosen with the environment variable
``HYPOTHESIS_PROFILE``:

``dev`` (the default)  few examples per property: the unit suite runs in
                       seconds, for the edit-test loop;
``ci``                 many examples (at least as many as any property was
                       ever given one by one): what CI runs
                       (``HYPOTHESIS_PROFILE=ci python -m pytest``).

A property test states no ``max_examples`` of its own: the profile decides.
Neither profile has a deadline (a loaded machine is slow, not wrong).

``@pytest.mark.root`` (or ``pytestmark = pytest.mark.root``) marks a test
that needs root: it creates Unix test users, runs jobs as them, starts
cells.  Run by anyone else it is skipped, with one reason, from here.

``mem_tmp_path``: pytest's ``tmp_path``, but on a memory file system
(/dev/shm) where there is one, for tests that lay down and spool whole
cells: creating a cell's hundred-odd files on a busy disk costs a tenth of
a second, in memory a few milliseconds.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

ROOT_ONLY = "needs root: creates Unix test users and runs jobs as them"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"root: the test {ROOT_ONLY} (skipped for other users)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason=ROOT_ONLY)
    for item in items:
        if item.get_closest_marker("root") is not None:
            item.add_marker(skip)


MEMORY_FS = "/dev/shm"


@pytest.fixture
def mem_tmp_path(request: pytest.FixtureRequest) -> Iterator[pathlib.Path]:
    """A new empty directory, in memory when the machine has a writable
    /dev/shm (removed after the test), else ``tmp_path``."""
    if not (os.path.isdir(MEMORY_FS) and os.access(MEMORY_FS, os.W_OK | os.X_OK)):
        yield request.getfixturevalue("tmp_path")
        return
    d = tempfile.mkdtemp(prefix="minisge-test-", dir=MEMORY_FS)
    try:
        yield pathlib.Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
