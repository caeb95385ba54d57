"""The names of the operations a command asks for (direction ``COMMAND``):
what a command puts in its request's ``op``.

Each operation's direction, fields, limits and replies are in the
catalogue (:mod:`minisge.protocol.catalogue`, which defines every operation
of these names with them); the commands import these names alone: building
the catalogue's schemas costs a command's start about a millisecond, and a
command needs none of them (the daemon checks what it receives).
``tests/test_catalogue.py`` checks that the two name the same operations.
"""

PING = "ping"
SHUTDOWN = "shutdown"
SUBMIT = "submit"
QSTAT = "qstat"
QSTAT_FULL = "qstat_full"
JOB_DETAIL = "job_detail"
QDEL = "qdel"
QHOLD = "qhold"
QMOD = "qmod"
QCONF = "qconf"
PE_TASK = "pe_task"
QPING = "qping"
QQUOTA = "qquota"
SHARE_MON = "share_mon"
QRSUB = "qrsub"
QRSTAT = "qrstat"
QRDEL = "qrdel"
QALTER = "qalter"
QRESUB = "qresub"
QHOST = "qhost"
QSELECT = "qselect"
