"""qdel: delete jobs.  ``qdel [-f] [-u user_list] [job_task_list]``"""

from __future__ import annotations

import sys

from minisge.client import call

USAGE = "usage: qdel [options] job_task_list\n   [-f]                               force action\n   [-help]                            print this help\n   [-u user_list]                     delete all jobs of users specified in list\n   job_task_list                      delete all jobs given in list\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    targets: list[str] = []
    users: list[str] | None = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a == "-f":
            pass
        elif a == "-u":
            i += 1
            if i >= len(argv):
                sys.stderr.write("error: ERROR! -u option must have argument\n")
                return 1
            users = [u for u in argv[i].replace(",", " ").split() if u]
        elif a.startswith("-"):
            sys.stderr.write(f'error: ERROR! invalid option argument "{a}"\n')
            return 1
        else:
            targets.extend(t for t in a.replace(",", " ").split() if t)
        i += 1
    if not targets and users is None:
        sys.stderr.write(USAGE)
        return 1
    reply = call({"op": "qdel", "targets": targets, "users": users})
    if not reply.get("ok"):
        sys.stderr.write(reply.get("error", "") + "\n")
        return reply.get("rc", 1)
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    return reply["rc"]


if __name__ == "__main__":
    sys.exit(main())
