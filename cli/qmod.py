"""qmod: change queue and job states.

``qmod -d|-e|-c wc_queue_list`` disables, enables, clears the error state of
queue instances; ``qmod -cj job_list`` clears a job's error state;
``-s|-us|-r job_wc_queue_list`` suspend, unsuspend, reschedule jobs or the
jobs of queues (``-sj/-usj/-rj`` jobs only, ``-sq/-usq/-rq`` queues only).
"""

from __future__ import annotations

import sys

from minisge.formats.submit_options import is_job_task
from minisge.protocol import operations
from minisge.protocol.client import SAYS_CHANGE, call, print_lines

USAGE = """\
SGE 8.1.9
usage: qmod [options]
   [-c job_wc_queue_list]  clear error state
   [-cj job_list]          clear job error state
   [-cq wc_queue_list]     clear queue error state
   [-d wc_queue_list]      disable
   [-e wc_queue_list]      enable
   [-f]                    force action
   [-help]                 print this help
   [-r job_wc_queue_list]  reschedule jobs (running in queue)
   [-rj job_list]          reschedule jobs
   [-rq wc_queue_list]     reschedule all jobs in a queue
   [-s job_wc_queue_list]  suspend
   [-sj job_list]          suspend jobs
   [-sq wc_queue_list]     suspend queues
   [-us job_wc_queue_list] unsuspend
   [-usj job_list]         unsuspend jobs
   [-usq wc_queue_list]    unsuspend queues

job_wc_queue_list          {job_tasks|wc_queue}[{','|' '}{job_tasks|wc_queue}[{','|' '}...]]
job_list                   {job_tasks}[{','|' '}job_tasks[{','|' '}...]]
job_tasks                  {{job_id'.'task_id_range}|job_name|pattern}[' -t 'task_id_range]
task_id_range              task_id['-'task_id[':'step]]
wc_cqueue                  wildcard expression matching a cluster queue
wc_host                    wildcard expression matching a host
wc_hostgroup               wildcard expression matching a hostgroup
wc_qinstance               wc_cqueue@wc_host
wc_qdomain                 wc_cqueue@wc_hostgroup
wc_queue                   wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list              wc_queue[','wc_queue[','...]]
"""

ACTIONS = {"-d": "d", "-e": "e", "-c": "c", "-cq": "cq", "-cj": "cj", "-s": "s", "-us": "us", "-r": "r",
           "-sj": "sj", "-usj": "usj", "-sq": "sq", "-usq": "usq", "-rj": "rj", "-rq": "rq"}
JOB_OPTIONS = ("-c", "-cj", "-s", "-us", "-r", "-sj", "-usj", "-rj")  # their lists may name jobs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    action = None
    option = ""
    targets: list[str] = []
    force = False
    for i, a in enumerate(argv):
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a in ("-f",):
            force = True  # qmod(1): force the action (-s: even if the job is not running; -r: even not rerunnable)
            continue
        if a in ACTIONS:
            if i + 1 >= len(argv):
                sys.stderr.write(f"{a} option must have argument\n")
                return 1
            action = ACTIONS[a]
            option = a
        elif a.startswith("-"):
            sys.stderr.write(f'{USAGE}invalid option argument "{a}"\n')
            return 1
        else:
            words = [t for t in a.replace(",", " ").split() if t]
            if option in JOB_OPTIONS:
                for w in words:
                    if w[:1].isdigit() and not is_job_task(w) and "@" not in w:
                        sys.stderr.write(f'ERROR! "{w}" is an invalid job-task identifier\n')
                        return 1
            targets.extend(words)
    if action is None or not targets:
        sys.stderr.write(USAGE + "ERROR! no option argument\n")
        return 1
    reply = call({"op": operations.QMOD, "action": action, "targets": targets, "force": force},
                 unreachable=SAYS_CHANGE)
    return print_lines(reply)


if __name__ == "__main__":
    sys.exit(main())
