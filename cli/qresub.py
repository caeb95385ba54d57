"""qresub: submit copies of submitted jobs.  ``qresub [-h hold_list] job_id_list``

Each job named gets a copy, a new job of the same owner, script and
options (see qresub(1)); ``-h`` holds the copies.
"""

from __future__ import annotations

import sys

from minisge.formats import submit_options
from minisge.protocol import operations
from minisge.protocol.client import SAYS_HOLD, call, print_lines

USAGE = """SGE 8.1.9
usage: qresub [options] job_id_list
   [-h hold_list]                           list of hold types concerned
   [-help]                                  print this help
   job_id_list

hold_list               `n' `u' `s' `o' `U' `S' `O'
job_id_list             job_id[,job_id,...]
"""

NO_OPTION = "ERROR! no option argument"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write(USAGE + NO_OPTION + "\n")
        return 1
    targets: list[str] = []
    hold: str | None = None
    unknown: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a == "-h":
            if i + 1 >= len(argv):
                sys.stderr.write("qresub: -h option must have argument\n")
                return submit_options.STATUS_ESEMANTIC
            arg = argv[i + 1]
            if not arg or any(c not in submit_options.HOLD_LIST_CHARS for c in arg):
                sys.stderr.write(f'qalter: Unknown hold list "{arg}" specified to -h option\n')
                return submit_options.STATUS_ESYNTAX
            hold = arg
            i += 2
            continue
        if a.startswith("-"):
            if a in submit_options.ALTER_SWITCHES or a in submit_options.ALTER_UNUSED:
                # qsub's options that qresub's parser reads but does not use (8.1.9: "Unknown option")
                takes_arg = a not in ("-cwd", "-hard", "-soft", "-notify", "-verify", "-V", "-clear", "-terse")
                unknown.append(a + (f" {argv[i + 1]}" if takes_arg and i + 1 < len(argv) else ""))
                i += 2 if takes_arg else 1
                continue
            sys.stderr.write(f'qresub: invalid option argument "{a}"\n')
            return submit_options.STATUS_ESEMANTIC
        targets.extend(t for t in a.split(",") if t)
        i += 1
    if unknown:
        sys.stderr.write("\n\n".join(f"Unknown option {u}" for u in unknown) + "\n\n")
        return submit_options.STATUS_ENOIMP
    if not targets:
        return 0
    reply = call({"op": operations.QRESUB, "targets": targets, "hold": hold}, unreachable=SAYS_HOLD)
    return print_lines(reply)


if __name__ == "__main__":
    sys.exit(main())
