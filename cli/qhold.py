"""qhold: put jobs or tasks on hold.  ``qhold [-h u|o|s] [-u user_list] job_task_list``

8.1.9's qhold and qrls are qalter under another name (their errors say
``qalter:``): ``-h`` names the holds (any of ``u``, ``o``, ``s``; user by
default), ``-u`` every job of the users named (the job_task_list is then not
looked at), a job_tasks is a job id, ``JOB.TASKRANGE`` or job name pattern.
"""

from __future__ import annotations

import sys

from minisge.protocol import operations
from minisge.protocol.client import SAYS_HOLD, call, print_lines

from .qdel import NO_OPTION_ARGUMENT, job_task_list

USAGE = """\
SGE 8.1.9
usage: {prog} [options] job_task_list
   [-h hold_list]                           list of hold types concerned
   [-help]                                  print this help
   [-u user_list]                           specify a list of users
                                            (not allowed in combination with job_task_list)
   job_task_list                            jobids (and taskids) of jobs to be altered

hold_list               `u' `s' `o'
job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
task_id_range           task_id['-'task_id[':'step]]
user_list               user[,user,...]
"""


def run(argv: list[str], release: bool, prog: str) -> int:
    usage = USAGE.format(prog=prog)
    kind = "u"
    words: list[str] = []
    users: list[str] | None = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(usage)
            return 0
        if a == "-h":
            i += 1
            if i >= len(argv):
                sys.stderr.write("qalter: -h option must have argument\n")
                return 2
            if not argv[i] or set(argv[i]) - set("uos"):
                sys.stderr.write(f'qalter: Unknown hold list "{argv[i]}" specified to -h option\n')
                return 7
            kind = argv[i]
        elif a == "-u":
            i += 1
            if i >= len(argv):
                sys.stderr.write("qalter: -u option must have a list usernames\n")
                return 2
            users = (users or []) + [u for u in argv[i].split(",") if u]
        elif a.startswith("-") and a != "-t":
            sys.stderr.write(f'qalter: invalid option argument "{a}"\n')
            return 2
        else:
            words.append(a)
        i += 1
    targets, error = job_task_list(words, prog)
    if error:
        sys.stderr.write(error + "\n")
        return 2
    if not targets and not users:
        sys.stderr.write(usage + NO_OPTION_ARGUMENT + "\n")
        return 1
    reply = call({"op": operations.QHOLD, "targets": targets, "hold": kind, "release": release, "users": users},
                 unreachable=SAYS_HOLD)
    return print_lines(reply)


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, False, "qhold")


if __name__ == "__main__":
    sys.exit(main())
