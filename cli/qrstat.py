"""qrstat: show advance reservations.  ``qrstat [-ar ar_id_list] [-u user_list] [-xml] [-explain]``

Without ``-ar`` the summary of the caller's own reservations (``-u``: of
those users, ``*`` of all); ``-ar`` the details of the reservations named
(ids or names, commas between them), or, when none of them exists, their
list after "Following advance reservations do not exist:" and exit 1.
``-explain`` adds nothing in minisge (8.1.9 adds the reserved queue
instances' error messages, and minisge keeps none); ``-he`` is taken and
has no effect, as in 8.1.9's qrstat.
"""

from __future__ import annotations

import sys

from minisge.output import qrstat_out
from minisge.protocol import operations
from minisge.protocol.client import call, refused

USAGE = """\
SGE 8.1.9
usage: qrstat [options]
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-terse]                                 tersed output, print only the job-id
   [-u user_list]                           all advance reservations of users specified in list
   [-xml]                                   display the information in XML-Format

user_list               user[,user,...]
"""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ids: list[str] | None = None
    users: list[str] | None = None
    as_xml = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            sys.stdout.write(USAGE)
            return 0
        if a in ("-ar", "-u", "-he"):
            if i + 1 >= len(argv):
                sys.stderr.write(f"error: {a} option must have argument\n")
                return 1
            i += 1
            words = [w for w in argv[i].split(",") if w]
            if a == "-ar":
                ids = words  # the last -ar counts
            elif a == "-u":
                users = (users or []) + words
            elif argv[i] not in ("y", "yes", "n", "no"):
                sys.stderr.write(f'error: invalid option argument "{a} {argv[i]}"\n')
                return 1
        elif a == "-xml":
            as_xml = True
        elif a == "-explain":
            pass
        else:
            sys.stderr.write(f'error: invalid option argument "{a}"\n')
            return 1
        i += 1
    reply = call({"op": operations.QRSTAT, "ids": ids, "users": users})
    rc = refused(reply)
    if rc is not None:
        return rc
    ars, missing = reply["ars"], reply["missing"]
    if as_xml:
        sys.stdout.write(qrstat_out.xml(ars, ids is not None, missing if ids is not None and not ars else ()))
        return 1 if ids is not None and not ars else 0
    if ids is None:
        sys.stdout.write(qrstat_out.summary(ars))
        return 0
    if not ars:
        sys.stdout.write(qrstat_out.missing_text(missing))
        return 1
    sys.stdout.write("".join(qrstat_out.details(ar) for ar in ars))
    return 0


if __name__ == "__main__":
    sys.exit(main())
