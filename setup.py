"""Builds minisge's DRMAA 1.0 library, ``minisge/drmaa/libdrmaa.so``, with the
system C compiler on ``pip install .`` and ``pip install -e .``, writes the
commands' launchers, and makes an editable install start light (everything
else is in pyproject.toml).

The commands' launchers (``build/launchers/NAME``, installed into the bin
directory) are written here from the table of commands, ``cli/commands.py``:
pip's console scripts would do the same but ``import re`` first, which costs
a ``qsub`` milliseconds of its ~15 (issue 14).  Each is a script that is both
a shell script and Python (``#!/bin/sh``: neither setuptools nor pip rewrites
that first line, as they would ``#!python``).  The shell's hop costs a command
~1 ms (an exec of ``sh`` more); a ``#!python -I -S`` line would save it but
does not survive an install: setuptools keeps the flags in the wheel, but
pip's ``fix_script`` (pip/_internal/operations/install/wheel.py, pip 23
and its later releases alike) writes ``#!`` and the interpreter's path alone
in place of a ``#!python`` line, the flags dropped, and Python started with
site.py costs more than the hop (15.2 against 11.0 ms for ``-c pass`` in a
fresh environment, 100 interleaved runs, load 0.9).  The shell part starts Python:
in a virtual environment (``../pyvenv.cfg`` beside the bin directory) its
``python3`` with ``-S``, without site.py, which would cost each command ~1.5 ms
(the environment's .pth files, setuptools' distutils hook among them), and
``-I``: no ``PYTHON*`` variable (a ``PYTHONDONTWRITEBYTECODE`` would make an
editable install compile every module of the command at every start, ~25 ms)
and not the bin directory on ``sys.path``; elsewhere (``pip install --user``, a
system-wide install) the interpreter that built the launchers, else
``python3``, with site.py as pip's scripts have it.  The Python part, when
started without site.py, puts the environment's site-packages on
``sys.path`` and imports its command's module from there (a plain ``pip
install``); if ``minisge`` is not there, it installs an editable install's
finder (below) on ``sys.meta_path``, else runs site.py after all, and imports
the module again; then it runs ``main``, with the
cyclic garbage collector off while the modules load (their objects live as
long as the command: the collections it would run find nothing, ~3 ms of a
``qstat``), through ``minisge.cli.run``: the modules' objects frozen out of
later collections, and the exit status given without the interpreter's
finalization when nothing needs it (about a fifth of a ``qstat``'s
instructions).

An editable install (``pip install -e .``) gets a finder of its own
(``EditableWheel``): setuptools' finder for this layout (``cli/`` is
``minisge.cli``, ``spool/`` is ``minisge.default_spool``) imports
``pathlib`` and with it ``re``, ``fnmatch``, ``urllib.parse`` in every start
of the environment's interpreter, ~10 ms of every command.  Ours maps the
three package folders with what the interpreter has loaded already.  If
setuptools changes the internals this leans on, its own finder is used.

The library is no Python extension: a setuptools ``Extension`` only gets it
compiled and linked by the compiler setuptools finds (``cc``), and
``NativeBuild`` gives it the plain name ``libdrmaa.so`` in the package
(``minisge.drmaa:library_path``), with no Python symbols to export.  The
bin directory of the interpreter that builds it is the fallback place of
the commands it runs (minisge/drmaa/README.md).
"""

import ast
import errno
import os
import shutil
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.editable_wheel import editable_wheel
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHERS = os.path.join("build", "launchers")


def version() -> str:
    with open(os.path.join(HERE, "minisge", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip("\"'")
    return "0"


SHEPHERD_SOURCE = os.path.join("minisge", "execd", "sge_shepherd.c")


class NativeBuild(build_ext):
    """libdrmaa.so, then the C shepherd, ``minisge/execd/sge_shepherd``: an
    executable, linked statically where the C library allows it (no
    dynamic loader's work at each of its starts, one per task), else
    dynamically; without a C compiler minisge installs all the same and
    every task runs the Python shepherd (minisge/execd/shepherd_plan.py).

    With musl's compiler wrapper on the PATH (``musl-gcc``, Debian's
    musl-tools) the shepherd is linked with musl, statically: a static
    glibc program's start asks the processor what it is (``cpuid``, dozens
    of times, for the string functions' variants and the cache sizes), and
    in a virtual machine each ask traps to the hypervisor; here that start
    cost ~0.34 ms of the 0.47 ms of starting a program that does nothing,
    against ~0.02 ms with musl, and the shepherd starts once per task.  Its
    error messages (an errno's text) are made Python's, ``os.strerror``,
    as the Python shepherd's are (a header of them, SHEPHERD_MESSAGES):
    musl words some of them differently from glibc."""

    def get_ext_filename(self, fullname: str) -> str:
        return os.path.join(*fullname.split(".")) + ".so"

    def get_export_symbols(self, ext: Extension) -> list[str]:
        return []

    def run(self) -> None:
        super().run()
        self.build_shepherd()

    def build_shepherd(self) -> None:
        if self.inplace:
            out_dir = os.path.abspath(self.get_finalized_command("build_py").get_package_dir("minisge.execd"))
        else:
            out_dir = os.path.join(self.build_lib, "minisge", "execd")
        os.makedirs(self.build_temp, exist_ok=True)
        messages = os.path.join(self.build_temp, "shepherd_messages.h")
        with open(messages, "w", encoding="utf-8") as f:
            f.write("static const char *const shepherd_messages[] = {\n")
            f.writelines(f"    {c_string(os.strerror(n))},\n" for n in range(max(errno.errorcode) + 1))
            f.write("};\n")
        flags = ["-std=gnu11", "-O2", "-DSHEPHERD_MESSAGES", "-include", messages]
        musl = shutil.which("musl-gcc")
        if musl:
            try:
                os.makedirs(out_dir, exist_ok=True)
                self.spawn([musl, *flags, "-static", "-o", os.path.join(out_dir, "sge_shepherd"), SHEPHERD_SOURCE])
                return
            except (ExecError, OSError) as e:
                self.warn(f"the C shepherd could not be linked with musl ({e}): linked with the C library")
        try:  # the compiler build_ext made for libdrmaa
            objects = self.compiler.compile([SHEPHERD_SOURCE], output_dir=self.build_temp, extra_postargs=flags)
            try:
                self.compiler.link_executable(objects, "sge_shepherd", output_dir=out_dir, extra_postargs=["-static"])
            except LinkError:
                self.compiler.link_executable(objects, "sge_shepherd", output_dir=out_dir)
        except (CCompilerError, CompileError, ExecError, LinkError) as e:
            self.warn(f"the C shepherd was not built ({e}): every task runs the Python shepherd")


def c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


libdrmaa = Extension(
    "minisge.drmaa.libdrmaa",
    sources=["minisge/drmaa/libdrmaa.c"],
    depends=["minisge/drmaa/drmaa.h"],
    define_macros=[("MINISGE_VERSION", c_string(version())),
                   ("MINISGE_BIN_DIR", c_string(os.path.dirname(os.path.abspath(sys.executable))))],
    extra_compile_args=["-std=gnu11", "-fvisibility=default"],
    libraries=["pthread", "dl"],
    # without a C compiler minisge installs all the same, without DRMAA
    optional=True,
)

def commands() -> dict[str, str]:
    """The table of commands (cli/commands.py): name -> the module whose main runs."""
    with open(os.path.join(HERE, "cli", "commands.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "COMMANDS":
            assert isinstance(node.value, ast.Dict)
            return {k.value: v.args[0].value for k, v in zip(node.value.keys, node.value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Call) and isinstance(v.args[0], ast.Constant)}
    raise SystemExit("cli/commands.py has no COMMANDS table")


#: A command's launcher: ``#!/bin/sh`` and Python at once (the shell reads
#: ``''':'`` as the command ``:``, Python as the start of a string).
LAUNCHER = """#!/bin/sh
''':'
# %(name)s: minisge's launcher (setup.py, from cli/commands.py): in a virtual environment, Python isolated, no site.py
here=${0%%/*}
if [ -f "$here/../pyvenv.cfg" ] && [ -x "$here/python3" ]; then exec "$here/python3" -I -S "$0" "$@"; fi
if [ -x %(python)s ]; then exec %(python)s "$0" "$@"; fi
exec python3 "$0" "$@"
'''
import gc
import sys

gc.disable()  # no collection while the modules load: their objects live as long as the command
if sys.flags.no_site:  # what site.py does in a virtual environment: its prefix, its site-packages
    sys.prefix = sys.exec_prefix = sys.executable.rpartition("/")[0].rpartition("/")[0]
    sys.path.append(f"{sys.prefix}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages")
try:
    from %(module)s import main
except ModuleNotFoundError as err:
    if not sys.flags.no_site or err.name not in ("minisge", "minisge.cli"):
        raise
    try:  # pip install -e: the finder its .pth installs (setup.py's FINDER), tried after site-packages
        import __editable___minisge_finder
    except ModuleNotFoundError:  # another layout: site.py's work after all
        import site

        site.main()
    else:
        __editable___minisge_finder.install()
    from %(module)s import main
from minisge.cli import run  # the collector back on; the status out, without finalization when none is needed

run(main)
"""


def shell_word(text: str) -> str:
    """``text`` as one word of the shell, quoted."""
    return "'" + text.replace("'", "'\\''") + "'"


def launcher(name: str, module: str, python: str = sys.executable) -> str:
    """The script that runs command ``name`` (``python``: the interpreter outside a virtual environment)."""
    return LAUNCHER % {"name": name, "module": module, "python": shell_word(python)}


def write_launchers() -> list[str]:
    """Every command's launcher in build/launchers; their paths, relative as setup() wants them."""
    os.makedirs(os.path.join(HERE, LAUNCHERS), exist_ok=True)
    paths = []
    for name, module in commands().items():
        path = os.path.join(LAUNCHERS, name)
        with open(os.path.join(HERE, path), "w", encoding="utf-8") as f:
            f.write(launcher(name, module))
        os.chmod(os.path.join(HERE, path), 0o755)
        paths.append(path)
    return paths


FINDER = '''"""minisge's editable install: its packages where the source tree keeps them
(written by minisge's setup.py; see there)."""
import sys

try:
    from _frozen_importlib_external import spec_from_file_location  # loaded at start: no import
except ImportError:
    from importlib.util import spec_from_file_location

MAPPING = %r


class MinisgeEditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        where = MAPPING.get(fullname)
        if where is None:
            return None
        return spec_from_file_location(fullname, where + "/__init__.py", submodule_search_locations=[where])

    @classmethod
    def invalidate_caches(cls):
        pass


def install():
    if MinisgeEditableFinder not in sys.meta_path:
        sys.meta_path.append(MinisgeEditableFinder)
'''


class LightFinder:
    """An editable install's strategy (setuptools' ``EditableStrategy``): a .pth
    that installs :data:`FINDER` for the packages of ``package_dir``."""

    def __init__(self, name: str, mapping: dict[str, str]) -> None:
        self.name, self.mapping = name, mapping

    def __call__(self, wheel, files, mapping) -> None:
        module = "__editable___minisge_finder"
        wheel.writestr(f"{module}.py", (FINDER % self.mapping).encode("utf-8"))
        wheel.writestr(f"__editable__.{self.name}.pth", f"import {module}; {module}.install()\n".encode())

    def __enter__(self) -> "LightFinder":
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class EditableWheel(editable_wheel):
    def _select_strategy(self, name, tag, build_lib):
        strategy = super()._select_strategy(name, tag, build_lib)
        package_dir = self.distribution.package_dir or {}
        if type(strategy).__name__ != "_TopLevelFinder" or "" in package_dir:
            return strategy  # not the layout this finder is for: setuptools' own way
        root = os.path.abspath(self.project_dir or HERE)
        return LightFinder(name, {pkg: os.path.join(root, folder) for pkg, folder in package_dir.items()})


setup(ext_modules=[libdrmaa], scripts=write_launchers(),
      cmdclass={"build_ext": NativeBuild, "editable_wheel": EditableWheel})
