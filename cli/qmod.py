"""qmod: change queue and job states.

``qmod -d|-e|-c wc_queue_list`` disables, enables, clears the error state of
queue instances; ``qmod -cj job_list`` clears a job's error state.
"""

from __future__ import annotations

import sys

from minisge.client import call

ACTIONS = {"-d": "d", "-e": "e", "-c": "c", "-cq": "c", "-cj": "cj", "-s": "s", "-us": "us", "-r": "r"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    action = None
    targets: list[str] = []
    for a in argv:
        if a in ("-f",):
            continue
        if a in ACTIONS:
            action = ACTIONS[a]
        elif a.startswith("-"):
            sys.stderr.write(f'error: ERROR! invalid option argument "{a}"\n')
            return 1
        else:
            targets.extend(t for t in a.replace(",", " ").split() if t)
    if action is None or not targets:
        sys.stderr.write("usage: qmod [options] [job_task_list|wc_queue_list]\n")
        return 1
    reply = call({"op": "qmod", "action": action, "targets": targets})
    if not reply.get("ok"):
        sys.stderr.write(reply.get("error", "") + "\n")
        return reply.get("rc", 1)
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    return reply["rc"]


if __name__ == "__main__":
    sys.exit(main())
