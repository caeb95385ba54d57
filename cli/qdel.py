"""qdel: delete jobs.  ``qdel [-f] [-u user_list] [job_task_list]``

8.1.9's reading of the command line: every word that is not ``-help``,
``-f``, ``-u`` (with its list) or ``-t`` (with a task range for the job
before it) is a job id, ``JOB.TASKRANGE`` or job name (pattern), split at
commas; even ``-x``, which the qmaster then does not find.  ``-f`` of a
user who may not force a deletion (not a manager, no ENABLE_FORCED_QDEL)
deletes as without it, then waits a minute printing a dot every five
seconds, as 8.1.9 does to keep ``-f`` for when it is needed.
"""

from __future__ import annotations

import os
import sys
import time

from minisge.formats.submit_options import is_job_task
from minisge.protocol import operations
from minisge.protocol.client import SAYS_CHANGE, call, refused

TYPE_CHECKING = False  # not typing's (nor collections'): qdel must start fast
if TYPE_CHECKING:
    from collections.abc import Callable

USAGE = """\
SGE 8.1.9
usage: qdel [options] job_task_list
   [-f]                                     force action
   [-help]                                  print this help
   [-u user_list]                           delete all jobs of users specified in list
   job_task_list                            delete all jobs given in list

job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
task_id_range           task_id['-'task_id[':'step]]
user_list               user[,user,...]
"""

NO_OPTION_ARGUMENT = "ERROR! no option argument"


def job_task_list(argv: list[str], prog: str) -> tuple[list[str], str | None]:
    """The job_tasks of the words (commas split them; ``-t range`` after a
    job names its tasks) and 8.1.9's error for a bad one, or None."""
    targets: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-t":
            if i + 1 >= len(argv):
                return targets, "ERROR! -t option must have a list of task id ranges"
            if not targets or "." in targets[-1]:
                return targets, (f"found lonely '-t {argv[i + 1]}' option "
                                 "(The -t option needs a leading job name).")
            targets[-1] += "." + argv[i + 1]
            i += 2
            continue
        targets.extend(w for w in a.split(",") if w)
        i += 1
    for t in targets:
        if not is_job_task(t):
            return targets, f'ERROR! "{t}" is an invalid job-task identifier'
    return targets, None


def wait_before_forcing(sleep: Callable[[float], None] = time.sleep) -> None:
    """qdel -f of a user who may not force: a minute, a dot every five seconds
    (``MINISGE_QDEL_DOT_SECONDS``, a number of seconds, shortens the wait for
    the tests: the dots and the outcome stay 8.1.9's)."""
    try:
        pause = max(0.0, float(os.environ.get("MINISGE_QDEL_DOT_SECONDS", "5")))
    except ValueError:
        pause = 5.0
    for _ in range(12):
        sys.stdout.write(".")
        sys.stdout.flush()
        sleep(pause)
    sys.stdout.write("\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    words: list[str] = []
    users: list[str] | None = None
    force = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a in ("-f", "--force"):
            force = True
        elif a == "-u":
            if i + 1 < len(argv):
                i += 1
                users = (users or []) + [u for u in argv[i].split(",") if u]
        else:
            words.append(a)
        i += 1
    targets, error = job_task_list(words, "qdel")
    if error:
        sys.stderr.write(f"error: {error}\n")
        return 1
    if not targets and not users:
        sys.stderr.write(USAGE)
        sys.stdout.write(NO_OPTION_ARGUMENT + "\n")
        return 1
    reply = call({"op": operations.QDEL, "targets": targets, "users": users, "force": force},
                 unreachable=SAYS_CHANGE)
    rc = refused(reply)
    if rc is not None:
        return rc
    for line in reply["lines"]:
        sys.stdout.write(line + "\n")
    if force and not reply.get("forced"):
        # 8.1.9's qdel -f of a user who may not force: deleted the ordinary way,
        # the dots while it waits, then its forced request refused: exit 1
        wait_before_forcing()
        return 1
    return int(reply["rc"])


if __name__ == "__main__":
    sys.exit(main())
