"""qhold: put jobs on hold.  ``qhold [-h u|o|s] job_task_list``"""

from __future__ import annotations

import sys

from minisge.client import call


def run(argv: list[str], release: bool, prog: str) -> int:
    kind = "u"
    targets: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-h":
            i += 1
            if i >= len(argv) or not argv[i] or set(argv[i]) - set("uosn"):
                sys.stderr.write("error: ERROR! -h option must have argument\n")
                return 1
            kind = argv[i]
        elif a.startswith("-"):
            sys.stderr.write(f'error: ERROR! invalid option argument "{a}"\n')
            return 1
        else:
            targets.extend(t for t in a.replace(",", " ").split() if t)
        i += 1
    if not targets:
        sys.stderr.write(f"usage: {prog} [options] job_task_list\n")
        return 1
    reply = call({"op": "qhold", "targets": targets, "hold": kind, "release": release})
    if not reply.get("ok"):
        sys.stderr.write(reply.get("error", "") + "\n")
        return reply.get("rc", 1)
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    return reply["rc"]


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, False, "qhold")


if __name__ == "__main__":
    sys.exit(main())
