"""The import contract of minisge (DESIGN.md, "Import rules"), as tests.

The source is read with :mod:`ast` (nothing of minisge is imported for the
static rules), so the whole contract is checked in well under a second; the
commands are also started as real processes to see what they load.  Each
test lists every violation it finds, with FILE:LINE, in its failure message.

The rules:

- no import cycles among minisge modules (imports executed at import time:
  module level, not under ``if TYPE_CHECKING``);
- no ``_private`` name of one minisge module used by another (``from x
  import _y``, or ``x._y`` through an imported module);
- no imports inside functions (ruff's PLC0415 says the same in CI);
- ``minisge/qmaster/`` never imports ``minisge/execd/`` and the reverse;
  only ``minisge/daemon/`` and ``minisge/offline.py`` import both;
- the pure packages (``scheduler/``, ``rules/``, ``formats/``) import no I/O
  package and call no clock, file or console (:data:`PURE_FORBIDDEN_MODULES`,
  :data:`PURE_FORBIDDEN_NAMES` say what and why);
- the commands (``cli/``, ``output/``, ``cell.py``) import the standard
  library, the protocol's wire and client, the formats and the output
  modules only (and ``minisge.web``'s package alone, for its defaults);
  started as processes, every command of the table (cli/commands.py) loads
  none of trio, attrs, cattrs, hypercorn, neither when imported nor on its
  main paths (``-help``, and a submit, a qstat, a ``minisge status`` and a
  ``minisge web`` that find no cell), nor matplotlib;
- no minisge module imports ``minisge.replay.plots`` (matplotlib is an
  optional extra: the replay loads the plots with importlib for ``--plot``);
- the web view (``minisge/web/``) is a client of the cell like the
  commands: it asks through the protocol and imports none of the daemons
  (:data:`PROTOCOL_CLIENTS`).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------- the rules' data

#: What the pure packages must not import, and why.  A pure module computes:
#: text in, model out; snapshot in, plan out.  Whatever touches the world
#: (files, processes, the network, the clock, randomness, global state) is
#: its caller's business (the daemons, the commands).
PURE_FORBIDDEN_MODULES: dict[str, str] = {
    # event loops, sockets, clocks
    "trio": "async I/O", "anyio": "async I/O", "asyncio": "async I/O",
    # the network
    "socket": "network", "ssl": "network", "select": "network", "selectors": "network",
    "socketserver": "network", "http": "network", "urllib": "network",
    # processes, threads, signals
    "subprocess": "processes", "multiprocessing": "processes", "concurrent": "threads",
    "threading": "threads", "_thread": "threads", "pty": "processes",
    # files and the system's databases
    "os": "files and the process environment", "shutil": "files", "tempfile": "files",
    "pathlib": "files", "glob": "files", "fileinput": "files", "mmap": "files", "io": "files and streams",
    "pwd": "the user database", "grp": "the group database",
    # global state
    "sys": "process-global state (argv, streams, modules)",
    "gc": "the collector is process-global state: pausing it is the caller's choice",
    "logging": "logging writes through process-global handlers: return what happened, the caller logs",
    # nondeterminism
    "random": "nondeterminism", "secrets": "nondeterminism", "uuid": "nondeterminism (uuid1 reads the clock)",
}

#: Names that read the clock or touch the process, though their module is
#: allowed (time's conversions, resource's RLIMIT_* constants and signal's names are pure).
PURE_FORBIDDEN_NAMES: dict[str, str] = {
    **{f"time.{n}": "reads the clock (the caller passes `now`)" for n in (
        "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "process_time",
        "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime", "clock_gettime_ns", "sleep")},
    **{f"datetime.{c}.{n}": "reads the clock (the caller passes `now`)"
       for c, n in (("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today"))},
    **{f"signal.{n}": "handles or sends signals (the table of signal names is pure)" for n in (
        "signal", "alarm", "setitimer", "pause", "raise_signal", "pthread_kill", "pthread_sigmask",
        "sigwait", "sigwaitinfo", "sigtimedwait", "set_wakeup_fd", "siginterrupt", "pidfd_send_signal")},
    **{f"resource.{n}": "reads or changes the process's limits" for n in (
        "getrlimit", "setrlimit", "prlimit", "getrusage")},
}

#: Builtins that do I/O.
PURE_FORBIDDEN_BUILTINS: dict[str, str] = {"open": "files", "print": "the console", "input": "the console"}

#: time's conversions that read the clock when their time argument is left
#: out: name -> the number of arguments that leaves it out.
PURE_CLOCK_WITHOUT_ARGUMENT: dict[str, int] = {
    "time.localtime": 0, "time.gmtime": 0, "time.ctime": 0, "time.asctime": 0, "time.strftime": 1,
}

#: The only third-party package a pure package may use (DESIGN.md: the
#: formats parse text into attrs models).
PURE_THIRD_PARTY = {"attrs"}

PURE_PACKAGES = ("minisge.formats", "minisge.rules", "minisge.scheduler")

#: The minisge modules the pure packages must not import: the daemons, the
#: wire, the commands and what reads files (the pure packages sit below them).
PURE_FORBIDDEN_MINISGE = ("minisge.qmaster", "minisge.execd", "minisge.daemon", "minisge.protocol",
                          "minisge.cli", "minisge.output", "minisge.cell", "minisge.offline", "minisge.replay")

#: What the command modules may import of minisge (all else is the daemons'):
#: the protocol's wire, client and catalogue (not its trio side), the cell's
#: paths, the formats (qsub parses its options with one) and the output modules.
COMMAND_PACKAGES = ("minisge.cli", "minisge.output", "minisge.cell")
COMMAND_MAY_IMPORT = ("minisge", "minisge.cli", "minisge.output", "minisge.cell", "minisge.formats",
                      "minisge.protocol", "minisge.protocol.wire", "minisge.protocol.client",
                      "minisge.protocol.operations", "minisge.protocol.json_text",
                      "minisge.web")  # the package alone: minisge web's defaults (its server is a process of its own)

#: Loaded by no command (DESIGN.md decision 3: importing trio costs ~0.1 s;
#: hypercorn is the web view's server, run as a process of its own).
COMMAND_FORBIDDEN_LOADS = ("trio", "attrs", "attr", "cattrs", "hypercorn", "matplotlib")

#: Modules no minisge module imports by name: the replay's plots import matplotlib
#: (the optional extra ``teach``), loaded with importlib only when ``--plot`` asks.
IMPORTED_BY_NONE = ("minisge.replay.plots",)

#: Processes that are clients of the cell as the commands are: they ask
#: through the protocol (client, catalogue), never by importing a daemon.
PROTOCOL_CLIENTS = ("minisge.web",)
PROTOCOL_CLIENTS_MAY_NOT_IMPORT = ("minisge.qmaster", "minisge.execd", "minisge.daemon", "minisge.offline",
                                   "minisge.scheduler", "minisge.replay")

#: The only modules that may import both the qmaster and the execd.
COMPOSITION_ROOTS = ("minisge.daemon", "minisge.offline")

#: Other files of the repository held to the rules on private names and
#: imports inside functions (they are not minisge modules).
EXTRA_SOURCES = ("packaging/entry.py", "packaging/links.py")

# ---------------------------------------------------------------- reading the source


@dataclass(frozen=True)
class Import:
    importer: str  # module name
    target: str  # the module imported (for `from m import name`: m, or m.name if that is a module)
    name: str | None  # the name taken from `target` by `from target import name`, else None
    line: int
    where: str  # "module", "function" or "type_checking"


@dataclass
class Module:
    name: str
    path: str  # relative to TOP
    tree: ast.Module
    is_package: bool
    imports: list[Import] = field(default_factory=list)

    def loc(self, line: int) -> str:
        return f"{self.path}:{line}"


@cache
def package_dirs() -> dict[str, str]:
    """The install's package -> directory mapping (pyproject.toml): the
    source layout the module names come from (cli/ is minisge.cli)."""
    with open(os.path.join(TOP, "pyproject.toml"), "rb") as f:
        mapping: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    return mapping


def _walk_package(package: str, directory: str, mapped: set[str]) -> Iterator[tuple[str, str, bool]]:
    for dirpath, dirnames, filenames in os.walk(os.path.join(TOP, directory)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, os.path.join(TOP, directory))
        parts = [] if rel == "." else rel.split(os.sep)
        prefix = ".".join([package, *parts])
        if prefix != package and prefix in mapped:
            dirnames[:] = []
            continue
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            path = os.path.relpath(os.path.join(dirpath, filename), TOP)
            if filename == "__init__.py":
                yield prefix, path, True
            else:
                yield f"{prefix}.{filename[:-3]}", path, False


@cache
def modules() -> dict[str, Module]:
    """Every minisge module of the source tree, by name, with its imports."""
    mapping = package_dirs()
    found: dict[str, Module] = {}
    for package, directory in mapping.items():
        for name, path, is_package in _walk_package(package, directory, set(mapping)):
            with open(os.path.join(TOP, path), encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            found[name] = Module(name, path, tree, is_package)
    for m in found.values():
        m.imports = list(_imports(m, found))
    return found


@cache
def extra_sources() -> list[Module]:
    """The repository's other sources held to some rules (named by path)."""
    out = []
    for path in EXTRA_SOURCES:
        with open(os.path.join(TOP, path), encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        m = Module(path, path, tree, False)
        m.imports = list(_imports(m, modules()))
        out.append(m)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve_relative(m: Module, level: int, module: str | None) -> str:
    package = m.name if m.is_package else m.name.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{module}" if module else package


def _imports(m: Module, known: dict[str, Module]) -> Iterator[Import]:
    def visit(node: ast.AST, where: str) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield Import(m.name, alias.name, None, child.lineno, where)
            elif isinstance(child, ast.ImportFrom):
                base = _resolve_relative(m, child.level, child.module) if child.level else (child.module or "")
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    if sub in known:
                        yield Import(m.name, sub, None, child.lineno, where)
                    else:
                        yield Import(m.name, base, alias.name, child.lineno, where)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from visit(child, "function")
            elif isinstance(child, ast.If) and _is_type_checking(child.test) and where == "module":
                for stmt in child.body:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), "type_checking")
                for stmt in child.orelse:
                    yield from visit(ast.Module(body=[stmt], type_ignores=[]), where)
            else:
                yield from visit(child, where)

    yield from visit(m.tree, "module")


def _within(name: str, packages: tuple[str, ...] | str) -> bool:
    if isinstance(packages, str):
        packages = (packages,)
    return any(name == p or name.startswith(p + ".") for p in packages)


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _by_place(violation: str) -> tuple[str, int, str]:
    path, line, rest = (violation.split(":", 2) + ["", ""])[:3]
    return (path, int(line), rest) if line.isdigit() else (violation, 0, "")


def _report(violations: list[str], what: str) -> str:
    """The failure message: every violation, in file and line order."""
    return f"{len(violations)} {what}:\n  " + "\n  ".join(sorted(set(violations), key=_by_place))


# ---------------------------------------------------------------- cycles


def _import_graph() -> dict[str, dict[str, int]]:
    """module -> {module it needs at import time: line}.  Importing
    ``a.b.c`` also runs the packages ``a.b``'s ``__init__`` (unless the
    importer is inside that package, which is then already being imported)."""
    mods = modules()
    graph: dict[str, dict[str, int]] = {name: {} for name in mods}
    for m in mods.values():
        for imp in m.imports:
            if imp.where != "module" or imp.target not in mods:
                continue
            parts = imp.target.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in mods and not (target != imp.target and _within(m.name, target)):
                    graph[m.name].setdefault(target, imp.line)
    return graph


def _strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    out.append(sorted(component))
    return out


def _a_cycle(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """The shortest way from the component's first module back to itself."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    return [*paths[node], start]
                if child in members and child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    return [start, start]


def test_no_import_cycles():
    graph = _import_graph()
    mods = modules()
    violations = []
    for component in _strongly_connected(graph):
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        cycle = _a_cycle(graph, component)
        steps = " -> ".join(f"{a} ({mods[a].loc(graph[a][b])})" for a, b in zip(cycle, cycle[1:], strict=False))
        violations.append(f"{steps} -> {cycle[0]}" + (
            f"  [the cycle's modules: {', '.join(component)}]" if len(component) > len(cycle) - 1 else ""))
    assert not violations, _report(violations, "import cycles")


# ---------------------------------------------------------------- private names


def _module_aliases(m: Module) -> dict[str, str]:
    """Local name -> the minisge module it is bound to by an import."""
    mods = modules()
    aliases = {}
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(m, node.level, node.module) if node.level else (node.module or "")
            for alias in node.names:
                if f"{base}.{alias.name}" in mods:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    return {k: v for k, v in aliases.items() if v in mods}


def _dotted(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _private_uses(m: Module) -> Iterator[str]:
    mods = modules()
    for imp in m.imports:
        if imp.name is not None and _is_private(imp.name) and imp.target in mods and imp.target != m.name:
            yield f"{m.loc(imp.line)}: from {imp.target} import {imp.name}"
    aliases = _module_aliases(m)
    for node in ast.walk(m.tree):
        if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
            continue
        parts = _dotted(node)
        if not parts or parts[0] not in aliases:
            continue
        owner = ".".join([aliases[parts[0]], *parts[1:-1]])
        if owner in mods and owner != m.name:
            yield f"{m.loc(node.lineno)}: {'.'.join(parts)} (private name of {owner})"


def test_no_private_name_of_another_module():
    violations = [v for m in [*modules().values(), *extra_sources()] for v in _private_uses(m)]
    assert not violations, _report(violations, "private names used from another module")


# ---------------------------------------------------------------- imports inside functions


def test_no_imports_inside_functions():
    violations = [f"{m.loc(imp.line)}: " + (f"import {imp.target}" if imp.name is None else
                                             f"from {imp.target} import {imp.name}")
                  for m in [*modules().values(), *extra_sources()] for imp in m.imports if imp.where == "function"]
    assert not violations, _report(violations, "imports inside functions (lift them to the module's top)")


# ---------------------------------------------------------------- qmaster and execd


def test_qmaster_and_execd_never_import_each_other():
    violations = []
    for m in modules().values():
        for imp in m.imports:
            for mine, theirs in (("minisge.qmaster", "minisge.execd"), ("minisge.execd", "minisge.qmaster")):
                if _within(m.name, mine) and _within(imp.target, theirs):
                    violations.append(f"{m.loc(imp.line)}: {m.name} imports {imp.target}")
    assert not violations, _report(violations, "imports between the qmaster and the execd")


def test_only_the_composition_roots_import_both_daemons():
    violations = []
    for m in modules().values():
        if _within(m.name, COMPOSITION_ROOTS):
            continue
        qmaster = [i for i in m.imports if _within(i.target, "minisge.qmaster")]
        execd = [i for i in m.imports if _within(i.target, "minisge.execd")]
        if qmaster and execd:
            violations.append(f"{m.loc(qmaster[0].line)}: {m.name} imports {qmaster[0].target} and "
                              f"{execd[0].target} (line {execd[0].line})")
    assert not violations, _report(violations, f"modules other than {', '.join(COMPOSITION_ROOTS)} "
                                               "importing both the qmaster and the execd")


def test_no_module_imports_the_plots():
    violations = [f"{m.loc(i.line)}: {m.name} imports {i.target}" for m in modules().values() for i in m.imports
                  if any(_within(i.target, n) or f"{i.target}.{i.name}" == n for n in IMPORTED_BY_NONE)]
    assert not violations, _report(violations, f"imports of {', '.join(IMPORTED_BY_NONE)} (importlib only)")


# ---------------------------------------------------------------- the pure packages


def _name_bindings(m: Module) -> dict[str, str]:
    """Local name -> the dotted name an import binds it to (``import time``:
    time; ``from time import monotonic as now``: now -> time.monotonic)."""
    out = {}
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else _top(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _pure_violations(m: Module) -> Iterator[str]:
    stdlib = sys.stdlib_module_names
    for imp in m.imports:
        full = imp.target if imp.name is None else f"{imp.target}.{imp.name}"
        top = _top(imp.target)
        if top in PURE_FORBIDDEN_MODULES:
            yield f"{m.loc(imp.line)}: imports {imp.target} ({PURE_FORBIDDEN_MODULES[top]})"
        elif full in PURE_FORBIDDEN_NAMES:
            yield f"{m.loc(imp.line)}: imports {full} ({PURE_FORBIDDEN_NAMES[full]})"
        elif top == "minisge":
            if any(_within(imp.target, p) for p in PURE_FORBIDDEN_MINISGE):
                yield f"{m.loc(imp.line)}: imports {imp.target} (the pure packages sit below it)"
        elif top not in stdlib and top not in PURE_THIRD_PARTY and top != "__future__":
            yield f"{m.loc(imp.line)}: imports {imp.target} (third-party: only {', '.join(PURE_THIRD_PARTY)})"
    bindings = _name_bindings(m)
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Attribute):
            parts = _dotted(node)
            if parts and parts[0] in bindings:
                full = ".".join([bindings[parts[0]], *parts[1:]])
                if full in PURE_FORBIDDEN_NAMES:
                    yield f"{m.loc(node.lineno)}: {'.'.join(parts)} ({PURE_FORBIDDEN_NAMES[full]})"
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in PURE_FORBIDDEN_BUILTINS and (
                    node.func.id not in bindings):
                yield f"{m.loc(node.lineno)}: {node.func.id}() ({PURE_FORBIDDEN_BUILTINS[node.func.id]})"
            parts = _dotted(node.func)
            if parts and parts[0] in bindings:
                full = ".".join([bindings[parts[0]], *parts[1:]])
                if full in PURE_CLOCK_WITHOUT_ARGUMENT and len(node.args) <= PURE_CLOCK_WITHOUT_ARGUMENT[full]:
                    yield f"{m.loc(node.lineno)}: {'.'.join(parts)}() without a time reads the clock"


def test_the_pure_packages_do_no_io():
    violations = [v for m in modules().values() if _within(m.name, PURE_PACKAGES) for v in _pure_violations(m)]
    assert not violations, _report(violations, "I/O in the pure packages (" + ", ".join(PURE_PACKAGES) + ")")


# ---------------------------------------------------------------- the commands


def test_the_commands_import_only_what_a_command_may():
    stdlib = sys.stdlib_module_names
    violations = []
    for m in modules().values():
        if not _within(m.name, COMMAND_PACKAGES):
            continue
        for imp in m.imports:
            top = _top(imp.target)
            if top == "minisge":
                if not (imp.target in COMMAND_MAY_IMPORT or _within(imp.target, ("minisge.cli", "minisge.output",
                                                                                  "minisge.formats"))):
                    violations.append(f"{m.loc(imp.line)}: {m.name} imports {imp.target}")
            elif top not in stdlib and top != "__future__":
                violations.append(f"{m.loc(imp.line)}: {m.name} imports {imp.target} (not the standard library)")
    assert not violations, _report(violations, "imports a command may not make")


def test_the_web_view_asks_the_cell_through_the_protocol_only():
    violations = [f"{m.loc(imp.line)}: {m.name} imports {imp.target}"
                  for m in modules().values() if _within(m.name, PROTOCOL_CLIENTS)
                  for imp in m.imports if _within(imp.target, PROTOCOL_CLIENTS_MAY_NOT_IMPORT)]
    assert not violations, _report(violations, "imports of a daemon by a client of the cell")


#: Run in a fresh interpreter per command: import it, then run its main
#: paths; print what of COMMAND_FORBIDDEN_LOADS is loaded after each step.
PROBE = """
import contextlib, importlib, io, json, sys
heavy = json.loads(sys.argv[2])
loaded = lambda: sorted(m for m in heavy if m in sys.modules)
importlib.import_module(sys.argv[1])
steps = [["import", loaded()]]
for argv in json.loads(sys.argv[3]):
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            importlib.import_module(sys.argv[1]).main(argv)
    except SystemExit:
        pass
    steps.append([" ".join(argv), loaded()])
sys.__stdout__.write(json.dumps(steps))
"""

#: The main paths each command is run on (besides being imported).
MAIN_PATHS: dict[str, list[list[str]]] = {
    "minisge": [["-help"], ["status"], ["web", "-help"], ["web"]],
    "qsub": [["-help"], ["-b", "y", "/bin/true"]],
    "qstat": [["-help"], []],
    "qhost": [["-help"], ["-x"]],
    "qselect": [["-help"], ["-x"]],
}


def _command_names() -> list[str]:
    with open(os.path.join(TOP, "cli", "commands.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "COMMANDS":
            assert isinstance(node.value, ast.Dict)
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    raise AssertionError("cli/commands.py has no COMMANDS table")


@pytest.mark.parametrize("name", _command_names())
def test_a_command_loads_no_trio_attrs_or_cattrs(name, tmp_path):
    env = dict(os.environ, SGE_ROOT=str(tmp_path / "no-cell"), HOME=str(tmp_path))
    env.pop("SGE_CELL", None)
    paths = MAIN_PATHS.get(name, [["-help"]])
    p = subprocess.run([sys.executable, "-c", PROBE, f"minisge.cli.{name}", json.dumps(COMMAND_FORBIDDEN_LOADS),
                        json.dumps(paths)], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    violations = [f"minisge.cli.{name}: {step}: loads {', '.join(loaded)}" for step, loaded in json.loads(p.stdout)
                  if loaded]
    assert not violations, _report(violations, f"steps of {name} that load what a command must not")
