"""qlogin: an interactive login session (qlogin(1), the login form of qrsh).

``qlogin [options]``: qsub's options as qrsh takes them; the job, named
``QLOGIN``, is a login shell on a pty of the granted host, reached through
the same direct stream as qrsh's (:func:`minisge.cli.qrsh.run_interactive`).
qlogin says what it does as 8.1.9 does (the job's submission on stdout,
its scheduling and the session's host on stderr); qrsh says nothing.

Standard library and minisge.protocol only.
"""

from __future__ import annotations

import sys

from .qrsh import run_interactive, split_command

USAGE = """\
SGE 8.1.9
usage: qlogin [options]
   [-ac context_list]                       add context variable(s)
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-dc simple_context_list]                delete context variable(s)
   [-hard]                                  consider following requests "hard"
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-js job_share]                          share tree or functional job share
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-mattr obj_nm attr_nm val obj_id_list]  modify an attribute (or element in a sublist) of an object
   [-N name]                                specify job name
   [-now y[es]|n[o]]                        start job immediately or not at all
   [-ot tickets]                            set job's override tickets
   [-p priority]                            define job's relative priority
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       bind job to queue(s)
   [-sc context_list]                       set job context (replaces old context)
   [-soft]                                  consider following requests as soft
   [-srqs [rqs_list]]                       show resource quota set(s)
   [-verify]                                do not submit, just verify
   [-@ file]                                read commandline input from file

account_string          account_name
complex_list            complex[,complex,...]
context_list            variable[=value][,variable[=value],...]
rqs_list                rqs_name[,rqs_name,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' `s'
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
priority                -1023 - 1024
resource_list           resource[=value][,resource[=value],...]
simple_context_list     variable[,variable,...]
slot_range              [n[-m]|[-]m] - n,m > 0
obj_nm                  "queue"|"exechost"|"pe"|"ckpt"|"hostgroup"|"resource_quota"
attr_nm                 (see man pages)
obj_id_list             objectname [ objectname ...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts, _ = split_command(argv)
    if "-help" in opts:
        sys.stdout.write(USAGE)
        return 0
    return run_interactive("qlogin", argv)


if __name__ == "__main__":
    sys.exit(main())
