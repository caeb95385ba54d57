"""qsh: an interactive X11 session (qsh(1)) -- refused by minisge.

8.1.9's qsh starts an xterm on the granted host that shows on the
submitter's X display (``-display`` or ``$DISPLAY``).  minisge starts no X
clients: qsh gives 8.1.9's own refusals when there is no display to use
(no or an empty DISPLAY) and otherwise says that it is not supported,
naming qlogin and qrsh, which give the same session on the caller's
terminal.  -help prints 8.1.9's usage.

Standard library only.
"""

from __future__ import annotations

import os
import sys

USAGE = """\
SGE 8.1.9
usage: qsh [options]
   [-ac context_list]                       add context variable(s)
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-cwd]                                   use current working directory
   [-dc simple_context_list]                delete context variable(s)
   [-hard]                                  consider following requests "hard"
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-js job_share]                          share tree or functional job share
   [-jsv jsv_url]                           job submission verification script to be used
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-N name]                                specify job name
   [-now y[es]|n[o]]                        start job immediately or not at all
   [-ot tickets]                            set job's override tickets
   [-p priority]                            define job's relative priority
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       bind job to queue(s)
   [-sc context_list]                       set job context (replaces old context)
   [-soft]                                  consider following requests as soft
   [-srqs [rqs_list]]                       show resource quota set(s)
   [-sss]                                   show scheduler state
   [-S path_list]                           command interpreter to be used
   [-v variable_list]                       export these environment variables
   [-verify]                                do not submit, just verify
   [-V]                                     export all environment variables
   [-wd working_directory]                  use working_directory
   [-@ file]                                read commandline input from file

account_string          account_name
complex_list            complex[,complex,...]
context_list            variable[=value][,variable[=value],...]
jsv_url                 [script:][username@]path
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
variable_list           variable[=value][,variable[=value],...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
"""
NO_DISPLAY = "error: no DISPLAY variable found with interactive job \n"  # 8.1.9's words (trailing blank too)
EMPTY_DISPLAY = "error: empty DISPLAY variable delivered with interactive job \n"
NOT_SUPPORTED = ("error: qsh is not supported by minisge: it needs an X11 xterm started on the execution host; "
                 "use qlogin or qrsh for an interactive session\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "-help" in argv:
        sys.stdout.write(USAGE)
        return 0
    display = os.environ.get("DISPLAY")
    if "-display" in argv:
        i = argv.index("-display")
        display = argv[i + 1] if i + 1 < len(argv) else ""
    if display is None:
        sys.stderr.write(NO_DISPLAY)
    elif not display:
        sys.stderr.write(EMPTY_DISPLAY)
    else:
        sys.stderr.write(NOT_SUPPORTED)
    return 1


if __name__ == "__main__":
    sys.exit(main())
