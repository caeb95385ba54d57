"""A command's start is its imports (issue 14: ``qsub`` and ``qstat`` in
~20 ms, as Grid Engine's C binaries): the plain commands load none of the
standard library's heavy modules, neither when imported nor on their main
paths, and the launchers that start them (setup.py) import nothing of
their own.

Each command runs in a fresh interpreter; what it loads is what is in
``sys.modules`` after its import and its runs that was not there before
(so what the interpreter's own start loaded, whatever the environment's
.pth files do, is not counted against it).  Adding ``import json``, ``re``,
``typing``... back on one of these paths fails here.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: What a plain command must not load, and what each costs it (measured
#: with ``python -X importtime``, 2 cores, CPython 3.11: a bare start is ~12 ms).
HEAVY: dict[str, str] = {
    "json": "json.decoder imports re and compiles patterns (minisge.protocol.json_text instead)",
    "re": "~5 ms with enum and functools (minisge.formats.scan instead)",
    "enum": "~3 ms (signal's and re's enums)",
    "typing": "~5 ms (types under TYPE_CHECKING)",
    "collections": "~1.5 ms (collections.abc at run time imports the package)",
    "functools": "~1.5 ms",
    "dataclasses": "imports inspect, ast, dis, tokenize: ~10 ms",
    "inspect": "~8 ms", "ast": "~2 ms",
    "argparse": "~5 ms, with gettext and re",
    "pathlib": "~4 ms with fnmatch, re, urllib.parse",
    "fnmatch": "imports re",
    "signal": "its enums (_signal has the numbers and strsignal)",
    "socket": "its enums (_socket instead)",
    "subprocess": "~4 ms", "threading": "~1 ms", "contextlib": "~1 ms", "datetime": "~2 ms",
    "locale": "~1 ms", "tempfile": "~4 ms with random and shutil", "shutil": "~2 ms",
    "operator": "~0.3 ms: its ~60 functions (_operator has them)",
    "minisge.output.qstat_out": "the listing's formatting, ~0.7 ms (qsub -verify prints with job_detail_out)",
    "minisge.protocol.catalogue": "its schemas: ~1 ms (the commands send minisge.protocol.wire.operations' names)",
    "minisge.protocol.daemon_wire": "the daemons' side of the wire (frame decoder, peers, cell key): ~0.7 M instr.",
}

#: The commands held to HEAVY, with the arguments of their main paths
#: (run with no cell: they print their error; ``qsub -verify`` prints the job
#: as ``qstat -j`` would, sending nothing).
PLAIN: dict[str, list[list[str]]] = {
    "qsub": [["-b", "y", "/bin/true"], ["-verify", "-N", "x", "-l", "h_vmem=1G", "-b", "y", "/bin/true"],
             ["-h", "-t", "1-10:2", "-p", "-5", "-a", "202601011200.30", "-b", "y", "/bin/true"]],
    "qstat": [[], ["-f"], ["-j", "1"]],
    "qdel": [["1"]], "qhold": [["1"]], "qrls": [["1"]], "qmod": [["-d", "all.q"]], "qconf": [["-sql"]],
    "qhost": [[]], "qselect": [[]], "qquota": [[]], "qresub": [["1"]], "qrdel": [["1"]],
}

#: What a command of PLAIN may load of HEAVY, and why.
ALLOWED: dict[str, dict[str, str]] = {
    "qstat": {"minisge.output.qstat_out": "its listing"},
    # -fmt json: minisge.output.json_views prints every listing's JSON, qstat's too
    "qhost": {"minisge.output.qstat_out": "through json_views"},
    "qquota": {"minisge.output.qstat_out": "through json_views"},
}

PROBE = """
import sys
before = set(sys.modules)
out, name, heavy, runs = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
module = __import__(name, fromlist=["main"])
for run in runs:
    try:
        module.main(run.split("\\x1f") if run else [])
    except SystemExit:
        pass
with open(out, "w") as f:
    f.write(" ".join(sorted(m for m in heavy if m in sys.modules and m not in before)))
"""


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_a_plain_command_loads_no_heavy_module(name, tmp_path):
    env = dict(os.environ, SGE_ROOT=str(tmp_path / "no-cell"), HOME=str(tmp_path))
    env.pop("SGE_CELL", None)
    out = tmp_path / "loaded"
    runs = ["\x1f".join(argv) for argv in PLAIN[name]]
    p = subprocess.run([sys.executable, "-c", PROBE, str(out), f"minisge.cli.{name}", ",".join(HEAVY), *runs],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    loaded = [m for m in out.read_text().split() if m not in ALLOWED.get(name, {})]
    assert not loaded, f"{name} loads " + "; ".join(f"{m} ({HEAVY[m]})" for m in loaded)


#: What the plainest qsub and qstat do not load of the modules they print or match nothing with
#: (minisge.output's and minisge.formats' WHEN_USED, loaded at their first use).
NOT_PRINTED = ("minisge.output.job_detail_out", "minisge.output.json_views", "minisge.output.submit_verify",
               "minisge.output.qacct_out", "minisge.output.qhost_out", "minisge.formats.wc_queue",
               "minisge.formats.wildcard",
               # the output package itself (minisge.WHEN_USED), and formats' errors (no parser of a format runs)
               "minisge.output", "minisge.formats.errors")


@pytest.mark.parametrize(("name", "runs"), [("qsub", [["-h", "-b", "y", "/bin/true"]]), ("qstat", [[], ["-f"]])])
def test_a_plain_qsub_or_qstat_loads_no_output_module_it_does_not_print_with(name, runs, tmp_path):
    """No -j, -verify, -fmt json, -q or -pe: job_detail_out, submit_verify,
    json_views (and the qacct and qhost output it imports), wc_queue and
    wildcard stay unloaded, ~6 M instructions of a qstat's 48 M."""
    env = dict(os.environ, SGE_ROOT=str(tmp_path / "no-cell"), HOME=str(tmp_path))
    env.pop("SGE_CELL", None)
    out = tmp_path / "loaded"
    p = subprocess.run([sys.executable, "-c", PROBE, str(out), f"minisge.cli.{name}", ",".join(NOT_PRINTED),
                        *("\x1f".join(argv) for argv in runs)],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.read_text().split() == []


#: The source tree's packages as an editable install maps them, for a probe
#: started without site.py (as the launchers start a command).
BARE_PROBE = """
import sys
from _frozen_importlib_external import spec_from_file_location

TREE = {"minisge": %(top)r + "/minisge", "minisge.cli": %(top)r + "/cli"}


class Tree:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        where = TREE.get(name)
        return where and spec_from_file_location(name, where + "/__init__.py", submodule_search_locations=[where])


sys.meta_path.append(Tree)
before = set(sys.modules)
module = __import__(sys.argv[1], fromlist=["main"])
try:
    module.main(sys.argv[2:])
except SystemExit:
    pass
print(" ".join(sorted(m for m in ("os", "posixpath", "_collections_abc") if m in sys.modules and m not in before)))
"""


@pytest.mark.parametrize(("name", "argv"), [("qsub", ["-h", "-b", "y", "/bin/true"]), ("qstat", [])])
def test_a_plain_qsub_or_qstat_started_as_the_launchers_start_it_loads_no_os(name, argv, tmp_path):
    """os, with collections.abc's classes, was ~5.6 M of a qsub's 42 M
    instructions: minisge.cell gives the environment and paths without it."""
    env = {"SGE_ROOT": str(tmp_path / "no-cell"), "HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    p = subprocess.run([sys.executable, "-I", "-S", "-c", BARE_PROBE % {"top": TOP}, f"minisge.cli.{name}", *argv],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[-2] == "", p.stdout


@pytest.mark.parametrize("package", ["output", "formats", ""])
def test_the_modules_loaded_when_used_are_there_when_used(package):
    """minisge's, minisge.output's and minisge.formats' WHEN_USED: each is an
    attribute of the package at its first use, the module itself; a name not
    listed is an AttributeError."""
    importing = f"from minisge import {package} as package" if package else "import minisge as package"
    probe = (f"import sys\n{importing}\n"
             "names = sorted(package.WHEN_USED)\n"
             "assert not [n for n in names if f'{package.__name__}.{n}' in sys.modules]\n"
             "for name in names:\n"
             "    assert getattr(package, name) is sys.modules[f'{package.__name__}.{name}'], name\n"
             "try:\n    package.no_such_module\nexcept AttributeError:\n    print('ok')\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "ok\n"


def test_the_probe_sees_a_heavy_import(tmp_path):
    """The probe itself: a module that imports json is caught."""
    (tmp_path / "heavy_cmd.py").write_text("import json\n\ndef main(argv):\n    return 0\n")
    out = tmp_path / "loaded"
    p = subprocess.run([sys.executable, "-c", PROBE, str(out), "heavy_cmd", ",".join(HEAVY), ""],
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)), capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "json" in out.read_text().split()


def _setup_module():
    """setup.py's functions, without running setup()."""
    with open(os.path.join(TOP, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    tree.body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call))]
    namespace: dict[str, object] = {"__file__": os.path.join(TOP, "setup.py")}
    exec(compile(tree, "setup.py", "exec"), namespace)
    return namespace


def test_the_launchers_import_gc_sys_and_their_command_only():
    setup = _setup_module()
    for name, module in setup["commands"]().items():
        text = setup["launcher"](name, module, "/usr/bin/python3")
        assert text.startswith("#!/bin/sh\n"), name  # setuptools and pip rewrite a "#!python" line, not this
        imports = sorted((n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))),
                         key=lambda n: n.lineno)
        assert [ast.unparse(n) for n in imports] == [
            "import gc", "import sys", f"from {module} import main",  # site-packages first: pip install
            "import __editable___minisge_finder", "import site",  # an editable install's finder, else site.py
            f"from {module} import main", "from minisge.cli import run"], name
        assert text.rstrip().endswith("\nrun(main)"), name  # the collector back on, the status out (minisge.cli.run)


def _probe_launcher(setup, where, python: str) -> None:
    """A launcher in ``where`` (a bin directory) for the command ``probe``:
    module ``probe_cmd``, whose main prints what the interpreter did at its start."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / "probe"
    path.write_text(setup["launcher"]("probe", "probe_cmd", python))
    path.chmod(0o755)


PROBE_CMD = ("import sys\n\ndef main():\n"
             "    print(sys.flags.no_site, sys.prefix, 'site' in sys.modules, sys.argv[1:])\n    return 3\n")


def test_a_launcher_in_a_virtual_environment_starts_python_without_site(tmp_path):
    """In a virtual environment (pyvenv.cfg above the bin directory): the
    environment's python3 with -S; the launcher sets the prefix and the
    site-packages as site.py would (the command module is found there)."""
    setup = _setup_module()
    real = os.path.realpath(sys.executable)
    env = tmp_path / "env"
    _probe_launcher(setup, env / "bin", "/nonexistent/python3")
    (env / "pyvenv.cfg").write_text(f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\n")
    os.symlink(real, env / "bin" / "python3")
    site_packages = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "probe_cmd.py").write_text(PROBE_CMD)
    (site_packages / "minisge" / "cli").mkdir(parents=True)  # the launcher's minisge.cli.run
    (site_packages / "minisge" / "__init__.py").write_text("")
    (site_packages / "minisge" / "cli" / "__init__.py").write_text(open(os.path.join(TOP, "cli", "__init__.py")).read())
    p = subprocess.run([str(env / "bin" / "probe"), "a b", "c"], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")})
    assert p.returncode == 3, p.stderr
    assert p.stdout.split("\n")[0] == f"1 {env} False ['a b', 'c']"


def test_a_launcher_elsewhere_starts_the_interpreter_that_built_it_with_site(tmp_path):
    """Outside a virtual environment (pip install --user, a system-wide
    install): the building interpreter, with site.py, as pip's scripts run."""
    setup = _setup_module()
    _probe_launcher(setup, tmp_path / "bin", sys.executable)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "probe_cmd.py").write_text(PROBE_CMD)
    p = subprocess.run([str(tmp_path / "bin" / "probe"), "x"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path / "lib")))
    assert p.returncode == 3, p.stderr
    assert p.stdout.split("\n")[0] == f"0 {sys.prefix} True ['x']"


#: A command's main for the tests of minisge.cli.run: what argv[1] asks.
EXIT_CMD = """import os
import sys

class Finalized:  # says so (on fd 2, after stderr's lines) if the interpreter's finalization reaches it
    def __del__(self, write=os.write):
        write(2, b"finalized\\n")

KEPT = Finalized()

def main():
    how = sys.argv[1]
    sys.stdout.write("out\\n")  # buffered: a pipe
    sys.stderr.write("err\\n")
    if how == "thread":
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.2), sys.stdout.write("thread\\n"))).start()
    if how == "atexit":
        import atexit
        atexit.register(lambda: sys.stdout.write("atexit\\n"))
    if how == "exit":
        sys.exit(int(sys.argv[2]))
    if how == "message":
        sys.exit("bad news")
    if how == "raise":
        raise ValueError("boom")
    return int(sys.argv[2]) if len(sys.argv) > 2 else None
"""


@pytest.mark.parametrize(("argv", "rc", "out", "err"), [
    (["return", "3"], 3, "out\n", "err\n"),  # no finalization: KEPT's __del__ never runs
    (["return", "-1"], 255, "out\n", "err\n"),
    (["return"], 0, "out\n", "err\n"),
    (["exit", "4"], 4, "out\n", "err\n"),
    (["message"], 1, "out\n", "err\nbad news\nfinalized\n"),  # not an int: the ordinary way
    (["thread", "0"], 0, "out\nthread\n", "err\nfinalized\n"),  # a thread: joined, the ordinary way
    (["atexit", "0"], 0, "out\natexit\n", "err\nfinalized\n"),  # an exit handler: run
])
def test_a_launcher_leaves_without_finalization_when_nothing_needs_it(tmp_path, argv, rc, out, err):
    """minisge.cli.run: the exit status as sys.exit(main()) gives it, the
    output flushed; the interpreter's finalization skipped unless threads,
    exit handlers or a status that is not an int need it."""
    setup = _setup_module()
    where = tmp_path / "bin"
    where.mkdir()
    (where / "probe").write_text(setup["launcher"]("probe", "exit_cmd", sys.executable))
    (where / "probe").chmod(0o755)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "exit_cmd.py").write_text(EXIT_CMD)
    p = subprocess.run([str(where / "probe"), *argv], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path / "lib")))
    assert (p.returncode, p.stdout, p.stderr) == (rc, out, err)


def test_a_launcher_whose_output_cannot_be_written_says_so_as_python_does(tmp_path):
    """A flush that fails (stdout a pipe nobody reads) leaves the ordinary
    way: the same status and message as ``sys.exit(main())``."""
    setup = _setup_module()
    (tmp_path / "probe").write_text(setup["launcher"]("probe", "exit_cmd", sys.executable))
    (tmp_path / "probe").chmod(0o755)
    (tmp_path / "exit_cmd.py").write_text(EXIT_CMD)
    results = []
    for argv in ([str(tmp_path / "probe"), "return", "0"],
                 [sys.executable, "-c", "import sys, exit_cmd; sys.exit(exit_cmd.main())", "return", "0"]):
        read, write = os.pipe()
        os.close(read)
        p = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=str(tmp_path)))
        os.close(write)
        results.append((p.returncode, "BrokenPipeError" in p.stderr, p.stderr.endswith("finalized\n")))
    assert results[0] == results[1]
    assert results[0][:2] in ((120, True), (1, True))  # at the flush of the exit (120), or at the write (unbuffered)


def test_the_editable_finder_imports_nothing_the_interpreter_has_not(tmp_path):
    """The finder an editable install puts in every start of its environment
    (setup.py's FINDER) loads no module, and finds the three package folders."""
    setup = _setup_module()
    mapping = {"minisge": os.path.join(TOP, "minisge"), "minisge.cli": os.path.join(TOP, "cli"),
               "minisge.default_spool": os.path.join(TOP, "spool")}
    (tmp_path / "light_finder.py").write_text(setup["FINDER"] % mapping)
    probe = ("import sys\nbefore = set(sys.modules)\nimport light_finder\nlight_finder.install()\n"
             "new = set(sys.modules) - before - {'light_finder'}\n"
             "import minisge.cli.commands, minisge.default_spool\n"
             "print(sorted(new), minisge.cli.commands.__file__, minisge.default_spool.__file__)\n")
    p = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
                        + probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    new, commands, spool = p.stdout.split()
    assert new == "[]"
    assert commands == os.path.join(TOP, "cli", "commands.py")
    assert spool == os.path.join(TOP, "spool", "__init__.py")
