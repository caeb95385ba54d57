"""qrdel: delete advance reservations.  ``qrdel [-f] [-u user_list] [ar_id_list]``

The reservations named (ids or names, commas between them), or with
``-u`` alone every reservation of those users, are deleted with their jobs
(qdel(1) of each); one whose jobs still run waits for them (state ``d``),
unless ``-f`` kills them at once.  Only managers, operators and the users
of the access list ``arusers`` may, and a user only their own
reservations.  ``-he`` is taken and has no effect, as in 8.1.9's qrdel.
"""

from __future__ import annotations

import sys

from minisge.protocol import operations
from minisge.protocol.client import call, print_lines

USAGE = """\
SGE 8.1.9
usage: qrdel [options]
   [-f]                                     force action
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-u user_list]                           all advance reservations of users specified in list

user_list               user[,user,...]
"""

NO_OPTION_ARGUMENT = "ERROR! no option argument"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    targets: list[str] = []
    users: list[str] | None = None
    force = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a == "-f":
            force = True
        elif a in ("-u", "-he"):
            if i + 1 >= len(argv):
                sys.stderr.write(USAGE + f"error: {a} option must have argument\n")
                return 1
            i += 1
            if a == "-u":
                users = (users or []) + [w for w in argv[i].split(",") if w]
        elif a.startswith("-"):
            sys.stderr.write(USAGE + f'error: invalid option argument "{a}"\n')
            return 1
        else:
            targets += [w for w in a.split(",") if w]
        i += 1
    if not targets and not users:
        sys.stderr.write(USAGE + NO_OPTION_ARGUMENT + "\n")
        return 1
    reply = call({"op": operations.QRDEL, "targets": targets, "users": users, "force": force})
    return print_lines(reply)


if __name__ == "__main__":
    sys.exit(main())
