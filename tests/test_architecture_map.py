"""The map stays true: ARCHITECTURE.md and the packages' README files.

The documents are read as text and the source with :mod:`ast` (nothing of
minisge is imported but the format modules whose attribute lists the term
tables must cover), so the checks take well under a second:

- every reference in backticks resolves: ``minisge.pkg.module:Name`` and
  ``minisge.pkg.module:Class.member`` (a def, class, assignment or import at
  the top of the module; for a member, a method, a class attribute or a
  ``self.member`` assignment in one of the class's methods), a dotted name
  ``minisge.pkg.module`` (a module or package, optionally followed by a name
  in it), and a path (``minisge/execd/shepherd.py``, ``tests/...``); in a
  package README, ``name.py`` and ``name.py:Name`` are files of its folder;
- every package has a README.md, or else an ``__init__`` docstring, that
  names each of its modules (``name.py``);
- the term tables of ARCHITECTURE.md have a row for every attribute of
  queue_conf(5), sge_pe(5), sched_conf(5) and sge_conf(5) as the format
  modules know them, the eight columns of complex(5), the parameters of
  sge_resource_quota(5), every ``failed`` code of sge_status(5) and every
  option qsub's usage lists.

A failure lists every broken reference with FILE:LINE.
"""

from __future__ import annotations

import ast
import os
import re
import tomllib
from collections.abc import Iterator
from functools import cache

import pytest

from minisge.formats import queue_conf, sched_conf, sge_conf, sge_pe, sge_status, submit_options

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP = "ARCHITECTURE.md"

#: the folders a backticked path may start with (checked to exist)
PATH_ROOTS = ("minisge/", "cli/", "tests/", "man/", "spool/", "packaging/", "bench/", ".ci/")

BACKTICKED = re.compile(r"`([^`\s]+)`")
DOTTED = re.compile(r"minisge(\.[A-Za-z_]\w*)+(:[A-Za-z_][\w.]*)?")
LOCAL = re.compile(r"([A-Za-z_]\w*)\.py(?::([A-Za-z_][\w.]*))?")


# ---------------------------------------------------------------- the source


@cache
def pyproject() -> dict:
    with open(os.path.join(TOP, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def package_dirs() -> dict[str, str]:
    """package -> folder (pyproject's package-dir: minisge.cli is cli/)."""
    setup = pyproject()["tool"]["setuptools"]
    dirs: dict[str, str] = dict(setup["package-dir"])
    for package in setup["packages"]:
        if package not in dirs:
            parent = max((p for p in dirs if package.startswith(p + ".")), key=len)
            dirs[package] = os.path.join(dirs[parent], *package[len(parent) + 1:].split("."))
    return dirs


def module_file(name: str) -> str | None:
    """The source file of module or package ``name``, relative to the top, or None."""
    dirs = package_dirs()
    base = max((p for p in dirs if name == p or name.startswith(p + ".")), key=len, default=None)
    if base is None:
        return None
    rest = name[len(base) + 1:].split(".") if name != base else []
    path = os.path.join(dirs[base], *rest)
    for candidate in (path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(os.path.join(TOP, candidate)):
            return candidate
    return None


@cache
def tree(path: str) -> ast.Module:
    with open(os.path.join(TOP, path), encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def _top_level(body: list[ast.stmt]) -> Iterator[tuple[str, ast.AST | None]]:
    """The names a module or class body binds (``if``/``try`` blocks included)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        yield n.id, None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, None
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name).split(".")[0], None
        elif isinstance(node, ast.If | ast.Try):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from _top_level(block)


def _members(cls: ast.ClassDef) -> dict[str, ast.AST | None]:
    """A class's methods and attributes, and what its methods assign to ``self``."""
    out = dict(_top_level(cls.body))
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.setdefault(t.attr, None)
    return out


def resolves(path: str, dotted: str) -> bool:
    """Does ``Name`` or ``Class.member`` (nested classes allowed) exist in the module at ``path``?"""
    scope: dict[str, ast.AST | None] = dict(_top_level(tree(path).body))
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part not in scope:
            return False
        node = scope[part]
        if i + 1 < len(parts):
            if not isinstance(node, ast.ClassDef):
                return False
            scope = _members(node)
    return True


def dotted_resolves(ref: str) -> bool:
    """``minisge.a.b[:X.y]`` or ``minisge.a.b.X``: the longest module prefix, then names in it."""
    name, _, member = ref.partition(":")
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:i]))
        if path is None:
            continue
        rest = ".".join(parts[i:])
        if member:
            return not rest and resolves(path, member)
        return not rest or resolves(path, rest)
    return False


# ---------------------------------------------------------------- the documents


def documents() -> list[str]:
    """The map, the top README and every package's README, relative to the top."""
    out = [MAP, "README.md"]
    for folder in sorted(set(package_dirs().values())):
        if os.path.isfile(os.path.join(TOP, folder, "README.md")):
            out.append(os.path.join(folder, "README.md"))
    return out


def references(doc: str) -> Iterator[tuple[int, str]]:
    with open(os.path.join(TOP, doc), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            for m in BACKTICKED.finditer(line):
                yield number, m.group(1)


def broken(doc: str, number: int, ref: str) -> str | None:
    """Why ``ref`` (backticked in ``doc``) names nothing, or None (also for what is no reference)."""
    folder = os.path.dirname(doc)
    where = f"{doc}:{number}: `{ref}`"
    if DOTTED.fullmatch(ref):
        return None if dotted_resolves(ref) else f"{where} names no module, function, class or member"
    if ref.startswith(PATH_ROOTS):
        path = ref.split(":", 1)[0]
        return None if os.path.exists(os.path.join(TOP, path)) else f"{where}: no such file or folder"
    m = LOCAL.fullmatch(ref)
    if m and folder:
        path = os.path.join(folder, m.group(1) + ".py")
        if not os.path.isfile(os.path.join(TOP, path)):
            return f"{where}: no {path}"
        if m.group(2) and not resolves(path, m.group(2)):
            return f"{where}: {path} has no {m.group(2)}"
    return None


@pytest.mark.parametrize("doc", documents())
def test_every_reference_of_the_map_resolves(doc):
    bad = [why for number, ref in references(doc) if (why := broken(doc, number, ref))]
    assert not bad, f"{len(bad)} references that name nothing:\n  " + "\n  ".join(bad)


def test_the_map_names_the_import_contract_and_the_modules_that_hold_the_rules():
    refs = [ref for _n, ref in references(MAP)]
    assert "tests/test_architecture.py" in refs
    assert sum(1 for r in refs if DOTTED.fullmatch(r) and ":" in r) > 300  # a map, not a sketch


# ---------------------------------------------------------------- every package lists its modules


def package_text(folder: str, package: str) -> tuple[str, str]:
    """(where, text): the package's README.md, else its __init__ docstring."""
    readme = os.path.join(folder, "README.md")
    if os.path.isfile(os.path.join(TOP, readme)):
        with open(os.path.join(TOP, readme), encoding="utf-8") as f:
            return readme, f.read()
    init = os.path.join(folder, "__init__.py")
    return init, ast.get_docstring(tree(init)) or ""


@pytest.mark.parametrize("package", sorted(package_dirs()))
def test_every_package_lists_its_modules(package):
    folder = package_dirs()[package]
    names = sorted(f for f in os.listdir(os.path.join(TOP, folder)) if f.endswith(".py") and f != "__init__.py")
    if not names:
        pytest.skip(f"{package} holds no module but its __init__ (data: the default cell)")
    where, text = package_text(folder, package)
    missing = [n for n in names if n not in text]
    assert text, f"{package}: neither {folder}/README.md nor a docstring in {folder}/__init__.py"
    assert not missing, f"{where} does not name {', '.join(missing)}"


# ---------------------------------------------------------------- the term tables are complete


def section(title: str) -> list[str]:
    """The lines of the map's section whose heading starts with ``title`` (up to the next heading)."""
    with open(os.path.join(TOP, MAP), encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("#") and ln.lstrip("# ").startswith(title)), None)
    assert start is not None, f"{MAP} has no section {title!r}"
    out = []
    for ln in lines[start + 1:]:
        if ln.startswith("#"):
            break
        out.append(ln)
    return out


def first_cells(title: str) -> set[str]:
    """The backticked words of the first cell of every table row of a section."""
    found: set[str] = set()
    for ln in section(title):
        if ln.startswith("|") and not set(ln) <= set("|- :"):
            cell = ln.split("|")[1]
            found.update(BACKTICKED.findall(cell))
            found.update(re.findall(r"\b\d+\b", cell))
    return found


RQS_PARAMETERS = ("name", "description", "enabled", "limit", "users", "projects", "pes", "queues", "hosts", "to")
COMPLEX_COLUMNS = ("name", "shortcut", "type", "relop", "requestable", "consumable", "default", "urgency")


def qsub_options() -> list[str]:
    """The options of qsub's usage text (``[-a date_time]`` ... ``[-@ file]``)."""
    return re.findall(r"^\s+\[(-[\w@]+)", submit_options.USAGE, re.M)


@pytest.mark.parametrize(("title", "expected"), [
    ("queue_conf(5)", queue_conf.ATTRIBUTES),
    ("complex(5)", COMPLEX_COLUMNS),
    ("sge_pe(5)", sge_pe.ATTRIBUTES),
    ("sge_resource_quota(5)", RQS_PARAMETERS),
    ("sge_conf(5)", sge_conf.ATTRIBUTE_ORDER),
    ("sched_conf(5)", sched_conf.ATTRIBUTE_ORDER),
    ("sge_shepherd(8)", tuple(str(code) for code in sge_status.FAILED_TEXT)),
    ("qsub(1)", tuple(qsub_options())),
], ids=lambda v: v if isinstance(v, str) else None)
def test_every_grid_engine_term_has_a_row(title, expected):
    assert len(expected) > 7  # the lists were read
    missing = [name for name in expected if name not in first_cells(title)]
    assert not missing, f"{MAP}, section {title}: no row for {', '.join(missing)}"
