"""The tests run from a plain checkout as well as from an install.

The install lays the packages out as pyproject.toml's package-dir says:
``minisge.cli`` is ``cli/`` and ``minisge.default_spool`` is ``spool/``.  In a
fresh clone with only the dependencies installed (or with a non-editable
install shadowed by the checkout's ``minisge/``), ``minisge.cli`` is not
importable.  Then this builds that layout as symbolic links to the checkout in
a temporary directory, puts it first on ``sys.path`` before any test imports
minisge, and exports it to the processes the tests start (the commands, the
daemons: ``python -m minisge.cli.X``, ``python -m minisge.daemon``) as
``PYTHONPATH``, with ``PYTHONSAFEPATH=1`` so that a ``python -m`` started in
the checkout does not take its bare ``minisge/`` first.  With the project
installed (``pip install -e .``) nothing is changed.

This is the checkout's root conftest (not tests/conftest.py) because it must
run before any other conftest imports minisge.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import tomllib

TOP = os.path.dirname(os.path.abspath(__file__))


def installed_layout_importable() -> bool:
    try:
        importlib.import_module("minisge.cli")
        importlib.import_module("minisge.default_spool")
    except ModuleNotFoundError:
        return False
    return True


def build_layout(site: str) -> None:
    """``site/minisge/...``: the checkout's packages where the install puts
    them (each entry a symbolic link into the checkout)."""
    with open(os.path.join(TOP, "pyproject.toml"), "rb") as f:
        package_dirs: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    top_dir = os.path.join(TOP, package_dirs["minisge"])
    os.makedirs(os.path.join(site, "minisge"))
    for entry in os.listdir(top_dir):
        if entry != "__pycache__":
            os.symlink(os.path.join(top_dir, entry), os.path.join(site, "minisge", entry))
    for package, directory in package_dirs.items():
        parent, _, name = package.rpartition(".")
        if package != "minisge":
            assert parent == "minisge", f"package-dir {package}: only minisge.NAME is mapped here"
            os.symlink(os.path.join(TOP, directory), os.path.join(site, "minisge", name))


def use_checkout_layout() -> str:
    """Make the checkout importable as installed; returns the layout's directory."""
    for name in [m for m in sys.modules if m == "minisge" or m.startswith("minisge.")]:
        del sys.modules[name]
    site = tempfile.mkdtemp(prefix="minisge-checkout-")
    os.chmod(site, 0o755)
    build_layout(site)
    sys.path.insert(0, site)
    importlib.invalidate_caches()
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH")) if p)
    os.environ["PYTHONSAFEPATH"] = "1"
    if not installed_layout_importable():
        raise RuntimeError(f"minisge.cli is not importable from {site} either")
    return site


CHECKOUT_LAYOUT = None if installed_layout_importable() else use_checkout_layout()


def pytest_report_header() -> str:
    where = f"layout of the checkout in {CHECKOUT_LAYOUT}" if CHECKOUT_LAYOUT else "as installed"
    return f"minisge: {os.path.dirname(importlib.import_module('minisge').__file__ or '')} ({where})"


def pytest_unconfigure() -> None:
    if CHECKOUT_LAYOUT:
        shutil.rmtree(CHECKOUT_LAYOUT, ignore_errors=True)
