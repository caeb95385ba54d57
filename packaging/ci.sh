#!/bin/bash
# CI's single-binary stage (.ci/run runs it last):
#   builds the binary and its tarball with packaging/build.sh, unpacks the
#   tarball where the test users may run it, and runs a subset of the
#   integration tests with every command and daemon going through the
#   binary's links (MINISGE_TEST_BINARY, tests/integration/cellutil.py):
#   test_binary.py (the links, each command's -help, the man pages, the
#   daemon and the shepherds' launcher being the binary), test_cell.py (a
#   cell driven through its commands), test_roles.py (qmaster and execds as
#   separate processes over TCP), test_qrsh_cmd.py (qrsh -inherit from
#   inside parallel jobs), test_service_readiness.py (READY=1 to systemd) and
#   two of test_drmaa_cmd.py (the tarball's lib/libdrmaa.so running bin/'s qsub).  About 3 minutes; it prints how long it took.
#   PYTHON: the interpreter the project is installed in (default: python).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
start=$(date +%s)
# pyproject's packaging extra, alone: '.[packaging]' would reinstall the
# project over the editable install the tests run
echo "+ $python -m pip install 'pyinstaller>=6.0'"
"$python" -m pip install --quiet 'pyinstaller>=6.0' 2>&1 | grep -v "^WARNING: Location" || true
"$python" -c 'import PyInstaller' || { echo "error: PyInstaller could not be installed" >&2; exit 1; }
echo "+ packaging/build.sh"
mkdir -p build
PYTHON="$python" sh packaging/build.sh > build/binary-build.log 2>&1 \
    || { tail -40 build/binary-build.log; exit 1; }
tail -3 build/binary-build.log
built=$(date +%s)
# unpacked where the test users may read and run it (a clone under /root may not be)
unpacked=$(mktemp -d /tmp/minisge-binary.XXXXXX)
trap 'rm -rf "$unpacked"' EXIT
chmod 755 "$unpacked"
tar -C "$unpacked" -xzf dist/minisge-*.tar.gz
bin=$(echo "$unpacked"/minisge-*/bin)
echo "+ MINISGE_TEST_BINARY=$bin $python -m pytest (through the binary)"
MINISGE_TEST_BINARY="$bin" "$python" -m pytest -p no:cacheprovider -n 3 --dist worksteal \
    tests/integration/test_binary.py tests/integration/test_cell.py \
    tests/integration/test_roles.py tests/integration/test_qrsh_cmd.py \
    tests/integration/test_service_readiness.py
MINISGE_TEST_BINARY="$bin" "$python" -m pytest -p no:cacheprovider tests/integration/test_drmaa_cmd.py \
    -k "session_facts or a_failing_job"
end=$(date +%s)
echo "binary stage: built in $((built - start)) s, tests through the binary in $((end - built)) s"
