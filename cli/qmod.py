"""qmod: change queue and job states.

``qmod -d|-e|-c wc_queue_list`` disables, enables, clears the error state of
queue instances; ``qmod -cj job_list`` clears a job's error state;
``-s|-us|-r job_wc_queue_list`` suspend, unsuspend, reschedule jobs or the
jobs of queues (``-sj/-usj/-rj`` jobs only, ``-sq/-usq/-rq`` queues only).
"""

from __future__ import annotations

import sys

from minisge.client import call

ACTIONS = {"-d": "d", "-e": "e", "-c": "c", "-cq": "c", "-cj": "cj", "-s": "s", "-us": "us", "-r": "r",
           "-sj": "sj", "-usj": "usj", "-sq": "sq", "-usq": "usq", "-rj": "rj", "-rq": "rq"}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    action = None
    targets: list[str] = []
    force = False
    for a in argv:
        if a in ("-f",):
            force = True  # qmod(1): force the action (-s: even if the job is not running; -r: even not rerunnable)
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
    reply = call({"op": "qmod", "action": action, "targets": targets, "force": force})
    if not reply.get("ok"):
        sys.stderr.write(reply.get("error", "") + "\n")
        return reply.get("rc", 1)
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    return reply["rc"]


if __name__ == "__main__":
    sys.exit(main())
