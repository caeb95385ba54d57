"""Builds minisge's DRMAA 1.0 library, ``minisge/drmaa/libdrmaa.so``, with the
system C compiler on ``pip install .`` and ``pip install -e .`` (everything
else is in pyproject.toml).

The library is no Python extension: a setuptools ``Extension`` only gets it
compiled and linked by the compiler setuptools finds (``cc``), and
``DrmaaBuild`` gives it the plain name ``libdrmaa.so`` in the package
(``minisge.drmaa:library_path``), with no Python symbols to export.  The
bin directory of the interpreter that builds it is the fallback place of
the commands it runs (minisge/drmaa/README.md).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def version() -> str:
    with open(os.path.join(HERE, "minisge", "__init__.py")) as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip("\"'")
    return "0"


class DrmaaBuild(build_ext):
    def get_ext_filename(self, fullname: str) -> str:
        return os.path.join(*fullname.split(".")) + ".so"

    def get_export_symbols(self, ext: Extension) -> list[str]:
        return []


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

setup(ext_modules=[libdrmaa], cmdclass={"build_ext": DrmaaBuild})
