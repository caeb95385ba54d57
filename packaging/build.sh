#!/bin/sh
# Build the single minisge binary and its tarball:
#   dist/minisge/minisge              the multi-call binary (its libraries in dist/minisge/_internal/)
#   dist/minisge-VERSION-ARCH.tar.gz  minisge-VERSION/bin/minisge (the binary) and bin/_internal/,
#                                     bin/qsub, bin/qstat, ...: links to it, one for every
#                                     name of the table of commands; the manual pages in
#                                     share/man/ (man(1) finds them beside bin/ on PATH);
#                                     lib/libdrmaa.so and include/drmaa.h (DRMAA 1.0)
# The binary sits in bin/ itself, beside its links: its sys.executable is
# then bin/minisge, the directory a cell's settings.sh puts on PATH, and
# ../share/man beside it holds the manual pages.
# Needs: pip install '.[packaging]'   (PyInstaller; it uses binutils' objdump)
#        PYTHON=... to build with another interpreter than `python` (the one
#        PyInstaller is installed in: the binary carries that interpreter)
set -eu
python=${PYTHON:-python}
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
# a plain (non-editable) copy of the package, so that minisge.cli and
# minisge.default_spool sit where PyInstaller looks for them
rm -rf build/site
"$python" -m pip install --quiet --no-deps --target build/site .
MINISGE_SITE="$top/build/site" "$python" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller "$here/minisge.spec"
version=$("$python" -c 'import minisge; print(minisge.__version__)')
arch=$(uname -m)
stage=build/tarball/minisge-$version
rm -rf "$stage"
mkdir -p "$stage"
cp -a dist/minisge "$stage/bin"
# bin/qsub, bin/qstat, ... -> minisge: every name of the table of commands (cli/commands.py)
"$python" "$here/links.py" "$stage/bin" minisge
# DRMAA 1.0: lib/libdrmaa.so (built by setup.py into the plain copy) and
# include/drmaa.h; the library runs the commands of bin/ beside lib/
mkdir -p "$stage/lib" "$stage/include"
cp build/site/minisge/drmaa/libdrmaa.so "$stage/lib/"
cp minisge/drmaa/drmaa.h "$stage/include/"
cp README.md "$stage/"
mkdir -p "$stage/share"
cp -a man "$stage/share/man"
tar -C build/tarball -czf "dist/minisge-$version-$arch.tar.gz" "minisge-$version"
echo "built dist/minisge/minisge and dist/minisge-$version-$arch.tar.gz"
# the oldest glibc it runs on (README.md, "Single binary", says why)
"$python" "$here/glibc_needs.py" dist/minisge
