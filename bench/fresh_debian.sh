#!/bin/bash
# The README's first line on a fresh Debian 12, for real (root; needs debootstrap):
#   bench/fresh_debian.sh [CHROOT_DIR]
# makes (or reuses) a minimal Debian 12 in CHROOT_DIR with debootstrap (python3,
# python3-venv, ca-certificates, man-db: what a fresh server with Python has, plus
# the venv module Debian keeps apart), copies this clone's committed tree into the
# home of a new user "newcomer", runs the README's first Quick start line as that
# user (timed), then checks what a new login shell finds after reading the cell's
# settings.sh (the commands, `man minisge`, `man qsub`, `man 5 queue_conf`), and
# stops the cell.  Downloads from PyPI (pip) and Debian (debootstrap).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-/tmp/minisge-deb12}"
if [ ! -x "$root/usr/bin/python3" ]; then
    echo "+ debootstrap bookworm $root"
    time debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,man-db,procps \
        bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
cleanup() {
    chroot "$root" su - newcomer -c '~/.minisge/bin/minisge stop' >/dev/null 2>&1 || true
    for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
chroot "$root" sh -c 'id newcomer >/dev/null 2>&1 || useradd -m -s /bin/bash newcomer'
chroot "$root" sh -c 'rm -rf /home/newcomer/minisge /home/newcomer/.minisge /home/newcomer/.cache /home/newcomer/echo.*'  # pip's cache too: a first install
mkdir "$root/home/newcomer/minisge"
git -C "$top" archive HEAD | tar -x -C "$root/home/newcomer/minisge"
chroot "$root" chown -R newcomer: /home/newcomer/minisge
echo "+ the system's Python: $(chroot "$root" python3 --version)"
echo "+ pip install outside a virtual environment (PEP 668):"
chroot "$root" su - newcomer -c 'python3 -m pip --version' 2>&1 | sed 's/^/    /' || true
line=$(python3 - "$top/README.md" <<'PY'
import re, sys
qs = open(sys.argv[1], encoding="utf-8").read().split("## Quick start", 1)[1]
print(re.search(r"```sh\n(.*?)```", qs, re.S).group(1).strip().splitlines()[0])
PY
)
# a machine whose traffic goes through a TLS-inspecting proxy (this workplace's sandbox)
# names the proxy's certificate authority in PIP_CERT: the chroot's pip is given it too
# (a lab's machine, with no such proxy, needs nothing of the kind)
pip_env=""
if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    cp "$PIP_CERT" "$root/etc/ssl/certs/proxy-ca.crt"
    pip_env="export PIP_CERT=/etc/ssl/certs/proxy-ca.crt; "
    echo "+ (the host's PIP_CERT given to the chroot's pip: $PIP_CERT)"
fi
echo "+ as newcomer, in ~/minisge: $line"
start=$(date +%s.%N)
chroot "$root" su - newcomer -c "${pip_env}cd minisge && $line"
end=$(date +%s.%N)
echo "+ the first line took $(python3 -c "print(f'{$end - $start:.1f}')") s"
echo "+ a new login shell, after . ~/.minisge/default/common/settings.sh:"
chroot "$root" su - newcomer -c '. ~/.minisge/default/common/settings.sh && command -v qsub qstat minisge \
    && man -w minisge qsub && man -w 5 queue_conf && qstat -f && cat ~/echo.o1' | sed 's/^/    /'
