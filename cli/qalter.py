"""qalter: change submitted jobs.  See qalter(1) (qsub's options, as a change).

``qalter [options] job_task_list`` or ``qalter [options] -u user_list``: the
options are parsed by :func:`minisge.formats.submit_options.parse_alteration`
and sent to the qmaster in one request; the qmaster answers a line for each
field it changed (or why it refused), which qalter prints.

Standard library, the protocol and the option parser only.
"""

from __future__ import annotations

import os
import re
import sys

from minisge.formats import submit_options
from minisge.protocol import operations
from minisge.protocol.client import SAYS_CHANGE, call, print_lines

USAGE = """SGE 8.1.9
usage: qalter [options] job_task_list
   [-a date_time]                           request a start time
   [-ac context_list]                       add context variable(s)
   [-ackpt ckpt_name]                       add a checkpointing interface definition
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-binding [env|pe|set] exp|lin|str]      binds job to processor cores
   [-c ckpt_selector]                       define type of checkpointing for job
   [-cwd]                                   use current working directory
   [-dc simple_context_list]                delete context variable(s)
   [-dul listname_list]                     delete userset list(s) completely
   [-e path_list]                           specify standard error stream path(s)
   [-h hold_list]                           list of hold types concerned
   [-hard]                                  consider following requests "hard"
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-hold_jid job_identifier_list]          define jobnet interdependencies
   [-hold_jid_ad job_identifier_list]       define jobnet array interdependencies
   [-i file_list]                           specify standard input stream file(s)
   [-j y[es]|n[o]]                          merge stdout and stderr stream of job
   [-js job_share]                          share tree or functional job share
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-N name]                                specify job name
   [-notify]                                notify job before killing/suspending it
   [-o path_list]                           specify standard output stream path(s)
   [-ot tickets]                            set job's override tickets
   [-P project_name]                        set job's project
   [-p priority]                            define job's relative priority
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       bind job to queue(s)
   [-r y[es]|n[o]]                          define job as (not) restartable
   [-sc context_list]                       set job context (replaces old context)
   [-soft]                                  consider following requests as soft
   [-srqs [rqs_list]]                       show resource quota set(s)
   [-S path_list]                           command interpreter to be used
   [-u user_list]                           specify a list of users
                                            (not allowed in combination with job_task_list)
   [-v variable_list]                       export these environment variables
   [-verify]                                do not submit, just verify
   [-V]                                     export all environment variables
   [-wd working_directory]                  use working_directory
   job_task_list                            jobids (and taskids) of jobs to be altered

account_string          account_name
complex_list            complex[,complex,...]
context_list            variable[=value][,variable[=value],...]
ckpt_selector           `n' `s' `m' `x' `r' <interval>
date_time               [[CC]YY]MMDDhhmm[.SS]
hold_list               `n' `u' `s' `o' `U' `S' `O'
job_identifier_list     {job_id|job_name|reg_exp}[,{job_id|job_name|reg_exp},...]
listname_list           listname[,listname,...]
rqs_list                rqs_name[,rqs_name,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' `s'
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
working_directory       path
path_list               [host:]path[,[host:]path,...]
priority                -1023 - 1024
resource_list           resource[=value][,resource[=value],...]
simple_context_list     variable[,variable,...]
slot_range              [n[-m]|[-]m] - n,m > 0
job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
task_id_range           task_id['-'task_id[':'step]]
user_list               user[,user,...]
variable_list           variable[=value][,variable[=value],...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
exp                     explicit:<socket>,<core>[:...]
lin                     linear[:<amount>[:<socket>,<core>]]
str                     striding:<amount>:<stepsize>[:<socket>,<core>]
"""

NO_OPTION = "ERROR! no option argument"
# a job_task_list word: an id, an id with a task range, or a job name (pattern)
_TASK_REF = re.compile(r"[1-9]\d*(\.\d+(-\d+(:\d+)?)?)?")


def read_text_file(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        cwd = os.getcwd()
    except FileNotFoundError:
        cwd = os.environ.get("PWD", "/")
    try:
        req = submit_options.parse_alteration(argv, cwd=cwd, env=dict(os.environ), read_file=read_text_file)
    except submit_options.SubmitError as e:
        if not e.message:  # nothing on the command line
            sys.stderr.write(USAGE + NO_OPTION + "\n")
        else:
            sys.stderr.write(e.message + "\n")
        return e.exit_code
    if req.get("help"):
        sys.stdout.write(USAGE)
        return 0
    if req["verify"]:
        sys.stderr.write('qalter: Unsupported: "-verify" is not supported in this version\n')
        return submit_options.STATUS_ENOIMP
    targets: list[str] = req["targets"]
    for t in targets:
        if t[:1].isdigit() and not _TASK_REF.fullmatch(t):
            sys.stderr.write(f'ERROR! "{t}" is an invalid job-task identifier\n')
            return submit_options.STATUS_ESEMANTIC
    if any("." in t for t in targets if t[:1].isdigit()) and (req["changes"] or req["context_ops"]):
        sys.stderr.write("denied: the selected option works only on jobs and not on tasks\n")
        return submit_options.STATUS_EUNKNOWN
    if not targets and req["users"] is None:
        return 0  # 8.1.9 sends nothing and says nothing
    reply = call({"op": operations.QALTER, "targets": targets, "users": req["users"], "changes": req["changes"],
                  "context_ops": req["context_ops"], "hold": req["hold"]}, unreachable=SAYS_CHANGE)
    return print_lines(reply)


if __name__ == "__main__":
    sys.exit(main())
