"""An advance reservation as the qmaster spools it (qrsub(1), qrstat(1)).

Grid Engine 8.1.9's classic spooling keeps one file per advance reservation
in ``spool/qmaster/advance_reservations/ID``, written by its flat-file layer
from the fields of ``AR_Type`` (``AR_fields`` of sge_flatfile_obj.c), one
``name value`` line each, in this order::

    id                  1
    name                NONE
    account             sge
    owner               sgetest
    group               sgetest
    submission_time     1795431475
    start_time          1795431475
    end_time            1795432075
    duration            600
    verify              0
    error_handling      0
    state               2
    checkpoint_name     NONE
    resource_list       h_vmem=100M
    queue_list          all.q
    granted_slots       all.q@vm=1
    mail_options        0
    mail_list           a@b
    pe                  smp
    pe_range            1
    granted_pe          smp
    master_queue_list   NONE
    acl_list            sgetest,sgetest2
    xacl_list           NONE
    type                0

Times are seconds since the epoch; ``state`` is the number of 8.1.9's
``ar_state_t`` (1 w, 2 r, 3 x, 4 d, 5 E, 6 W); ``mail_options`` is kept as
the letters qrsub took (``be``), NONE for none.  Empty lists and strings are
``NONE``.  ``parse(write(x)) == x``.
"""

from __future__ import annotations

import attrs

from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes

ATTRIBUTES = (
    "id", "name", "account", "owner", "group", "submission_time", "start_time", "end_time", "duration",
    "verify", "error_handling", "state", "checkpoint_name", "resource_list", "queue_list", "granted_slots",
    "mail_options", "mail_list", "pe", "pe_range", "granted_pe", "master_queue_list", "acl_list", "xacl_list",
    "type",
)
NAME_WIDTH = 20  # the field width of AR_fields

#: ar_state_t of 8.1.9 and the letter qrstat(1) shows
STATE_LETTERS = {1: "w", 2: "r", 3: "x", 4: "d", 5: "E", 6: "W"}
WAITING, RUNNING, EXITED, DELETED, ERROR, WARNING = 1, 2, 3, 4, 5, 6


@attrs.frozen
class AdvanceReservation:
    """One advance reservation: who, when, what it asked for and what it was granted."""

    id: int
    owner: str
    group: str
    submission_time: int
    start_time: int
    end_time: int
    name: str = ""
    account: str = "sge"
    duration: int = 0
    verify: int = 0
    error_handling: bool = False  # qrsub -he y
    state: int = WAITING
    checkpoint_name: str = ""
    resource_list: tuple[tuple[str, str], ...] = ()  # -l name=value, in order
    queue_list: tuple[str, ...] = ()  # -q
    granted_slots: tuple[tuple[str, int], ...] = ()  # (queue instance, slots)
    mail_options: str = ""  # -m letters
    mail_list: tuple[str, ...] = ()  # -M
    pe: str = ""  # -pe name as requested
    pe_range: str = ""  # -pe slot range as requested
    granted_pe: str = ""
    master_queue_list: tuple[str, ...] = ()
    acl_list: tuple[str, ...] = ()  # -u
    xacl_list: tuple[str, ...] = ()
    type: int = 0

    @property
    def state_letter(self) -> str:
        return STATE_LETTERS.get(self.state, "u")

    @property
    def slots(self) -> int:
        return sum(n for _q, n in self.granted_slots)


def _none(text: str) -> str:
    return text if text else "NONE"


def _list(items: tuple[str, ...]) -> str:
    return ",".join(items) if items else "NONE"


def _pairs(items: tuple[tuple[str, object], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in items) if items else "NONE"


def write(ar: AdvanceReservation) -> str:
    """The spool file of ``ar``."""
    values = {
        "id": str(ar.id), "name": _none(ar.name), "account": _none(ar.account), "owner": ar.owner,
        "group": ar.group, "submission_time": str(ar.submission_time), "start_time": str(ar.start_time),
        "end_time": str(ar.end_time), "duration": str(ar.duration), "verify": str(ar.verify),
        "error_handling": str(int(ar.error_handling)), "state": str(ar.state),
        "checkpoint_name": _none(ar.checkpoint_name), "resource_list": _pairs(ar.resource_list),
        "queue_list": _list(ar.queue_list), "granted_slots": _pairs(ar.granted_slots),
        "mail_options": _none(ar.mail_options), "mail_list": _list(ar.mail_list), "pe": _none(ar.pe),
        "pe_range": _none(ar.pe_range), "granted_pe": _none(ar.granted_pe),
        "master_queue_list": _list(ar.master_queue_list), "acl_list": _list(ar.acl_list),
        "xacl_list": _list(ar.xacl_list), "type": str(ar.type),
    }
    return write_attributes(((k, values[k]) for k in ATTRIBUTES), NAME_WIDTH, wrap=False)


def parse(text: str, path: str = "<input>") -> AdvanceReservation:
    """An advance reservation's spool file; FormatError names the bad line."""
    a = read_attributes(text, path, known=ATTRIBUTES, required=ATTRIBUTES)

    def text_of(key: str) -> str:
        v = a[key].value
        return "" if v == "NONE" else v

    def number(key: str) -> int:
        try:
            return int(a[key].value)
        except ValueError:
            raise FormatError(f'{key} "{a[key].value}" is not a number', path, a[key].lineno) from None

    def items(key: str) -> tuple[str, ...]:
        v = text_of(key)
        return tuple(x for x in v.split(",") if x) if v else ()

    def pairs(key: str) -> list[tuple[str, str]]:
        out = []
        for item in items(key):
            k, sep, v = item.partition("=")
            if not sep or not k:
                raise FormatError(f'{key}: "{item}" is not name=value', path, a[key].lineno)
            out.append((k, v))
        return out

    granted = []
    for q, n in pairs("granted_slots"):
        try:
            granted.append((q, int(n)))
        except ValueError:
            raise FormatError(f'granted_slots: "{n}" is not a number', path, a["granted_slots"].lineno) from None
    return AdvanceReservation(
        id=number("id"), owner=a["owner"].value, group=a["group"].value,
        submission_time=number("submission_time"), start_time=number("start_time"),
        end_time=number("end_time"), name=text_of("name"), account=text_of("account"),
        duration=number("duration"), verify=number("verify"), error_handling=bool(number("error_handling")),
        state=number("state"), checkpoint_name=text_of("checkpoint_name"),
        resource_list=tuple(pairs("resource_list")), queue_list=items("queue_list"),
        granted_slots=tuple(granted), mail_options=text_of("mail_options"), mail_list=items("mail_list"),
        pe=text_of("pe"), pe_range=text_of("pe_range"), granted_pe=text_of("granted_pe"),
        master_queue_list=items("master_queue_list"), acl_list=items("acl_list"),
        xacl_list=items("xacl_list"), type=number("type"),
    )
