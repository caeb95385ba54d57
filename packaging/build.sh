#!/bin/sh
# Build the single minisge binary and its tarball:
#   dist/minisge/minisge              the multi-call binary (with its libraries in dist/minisge/)
#   dist/minisge-VERSION-ARCH.tar.gz  lib/minisge/ plus bin/minisge, bin/qsub, bin/qstat, ... symlinks
# Needs: pip install '.[packaging]'   (PyInstaller)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cd "$top"
# a plain (non-editable) copy of the package, so that minisge.cli and
# minisge.default_spool sit where PyInstaller looks for them
rm -rf build/site
python -m pip install --quiet --no-deps --target build/site .
MINISGE_SITE="$top/build/site" python -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller "$here/minisge.spec"
version=$(python -c 'import minisge; print(minisge.__version__)')
arch=$(uname -m)
stage=build/tarball/minisge-$version
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
cp -a dist/minisge "$stage/lib/minisge"
ln -sf ../lib/minisge/minisge "$stage/bin/minisge"
for c in qsub qstat qdel qacct qconf qhold qrls qmod; do ln -sf ../lib/minisge/minisge "$stage/bin/$c"; done
cp README.md "$stage/"
tar -C build/tarball -czf "dist/minisge-$version-$arch.tar.gz" "minisge-$version"
echo "built dist/minisge/minisge and dist/minisge-$version-$arch.tar.gz"
