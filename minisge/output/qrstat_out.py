"""How qrstat(1) prints advance reservations, byte for byte as 8.1.9 does.

The summary (``qrstat``, ``qrstat -u``): a header, a line of dashes and a
line per reservation; the details (``qrstat -ar``): a line of 80 dashes,
then ``name value`` lines, the name in 30 columns, the optional attributes
only when set, in 8.1.9's order; ``-xml`` the same in qrstat's XML.  A
reservation is the dict the qmaster sends (the fields of
:class:`minisge.formats.advance_reservation.AdvanceReservation`, plus
``state_letter``).  Standard library only.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

Ar = Mapping[str, Any]

HEADER = (f"{'ar-id':<7.7} {'name':<10.10} {'owner':<12.12} {'state':<5.5} {'start at':<20.20} "
          f"{'end at':<20.20} {'duration':>8}\n") + "-" * 90 + "\n"
XML_HEAD = ("<?xml version='1.0'?>\n<qrstat xmlns:xsd=\"http://arc.liv.ac.uk/repos/darcs/sge/source/dist/"
            "util/resources/schemas/qrstat/qrstat.xsd\">\n")


def date(seconds: float) -> str:
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(seconds))


def xml_date(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(seconds))


def duration(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def summary(ars: Iterable[Ar]) -> str:
    """``qrstat``: the header and a line each (nothing at all for none)."""
    lines = [f"{ar['id']:7d} {ar['name']:<10.10} {ar['owner']:<12.12} {ar['state_letter']:<5.5} "
             f"{date(ar['start_time']):<20.20} {date(ar['end_time']):<20.20} {duration(ar['duration'])}\n"
             for ar in ars]
    return HEADER + "".join(lines) if lines else ""


def _row(name: str, value: object) -> str:
    return f"{name:<30.30} {value}\n"


def details(ar: Ar) -> str:
    """``qrstat -ar ID``: one reservation's attributes."""
    out = ["-" * 80 + "\n", _row("id", ar["id"]), _row("name", ar["name"]), _row("owner", ar["owner"]),
           _row("state", ar["state_letter"]), _row("start_time", date(ar["start_time"])),
           _row("end_time", date(ar["end_time"])), _row("duration", duration(ar["duration"])),
           _row("submission_time", date(ar["submission_time"])), _row("group", ar["group"]),
           _row("account", ar["account"])]
    if ar["resource_list"]:
        out.append(_row("resource_list", ", ".join(f"{k}={v}" for k, v in ar["resource_list"])))
    if ar["error_handling"]:
        out.append(_row("error_handling", "true"))
    if ar["granted_slots"]:
        out.append(_row("granted_slots_list", ",".join(f"{q}={n}" for q, n in ar["granted_slots"])))
    if ar["pe"]:
        out.append(_row("granted_parallel_environment", f"{ar['pe']} slots {ar['pe_range']}"))
    if ar["master_queue_list"]:
        out.append(_row("master hard queue_list", ",".join(ar["master_queue_list"])))
    if ar["checkpoint_name"]:
        out.append(_row("checkpoint_name", ar["checkpoint_name"]))
    if ar["mail_options"]:
        out.append(_row("mail_options", ar["mail_options"]))
    if ar["mail_list"]:
        out.append(_row("mail_list", ",".join(ar["mail_list"])))
    if ar["acl_list"]:
        out.append(_row("acl_list", ",".join(ar["acl_list"])))
    if ar["xacl_list"]:
        out.append(_row("xacl_list", ",".join(ar["xacl_list"])))
    return "".join(out)


def missing_text(ids: Iterable[str]) -> str:
    """The ids ``qrstat -ar`` did not find."""
    return "Following advance reservations do not exist:\n" + "".join(f"{i}\n" for i in ids)


def _x(tag: str, value: object) -> str:
    text = str(value)
    return f"      <{tag}>{escape(text)}</{tag}>\n" if text else f"      <{tag}/>\n"


def xml(ars: Iterable[Ar], detail: bool, missing: Iterable[str] = ()) -> str:
    """``qrstat -xml`` (``-ar``: ``detail``)."""
    out = [XML_HEAD]
    for i in missing:
        out.append(f"   <ar_unknown>\n      <id>{escape(i)}</id>\n   </ar_unknown>\n")
    for ar in ars:
        out += ["   <ar_summary>\n", _x("id", ar["id"]), _x("name", ar["name"]), _x("owner", ar["owner"]),
                _x("state", ar["state_letter"]), _x("start_time", xml_date(ar["start_time"])),
                _x("end_time", xml_date(ar["end_time"])), _x("duration", duration(ar["duration"]))]
        if detail:
            out += [_x("submission_time", xml_date(ar["submission_time"])), _x("group", ar["group"]),
                    _x("account", ar["account"])]
            if ar["resource_list"]:
                out.append("      <resource_list>\n")
                out += [f"         <resource name={quoteattr(k)} type={quoteattr(v)}/>\n"
                        for k, v in ar["resource_list"]]
                out.append("      </resource_list>\n")
            if ar["error_handling"]:
                out.append(_x("error_handling", "true"))
            if ar["granted_slots"]:
                out.append("      <granted_slots_list>\n")
                out += [f"         <granted_slots  queue_instance={quoteattr(q)} slots=\"{n}\"/>\n"
                        for q, n in ar["granted_slots"]]
                out.append("      </granted_slots_list>\n")
            if ar["pe"]:
                out += ["      <granted_parallel_environment>\n",
                        f"         <parallel_environment>{escape(ar['pe'])}</parallel_environment>\n",
                        f"         <slots>{escape(ar['pe_range'])}</slots>\n",
                        "      </granted_parallel_environment>\n"]
            if ar["checkpoint_name"]:
                out.append(_x("checkpoint_name", ar["checkpoint_name"]))
            if ar["mail_options"]:
                out.append(_x("mail_options", ar["mail_options"]))
            if ar["mail_list"]:
                out.append("      <mail_list>\n")
                for m in ar["mail_list"]:
                    user, _sep, host = m.partition("@")
                    out.append(f"         <mail  user={quoteattr(user)} host={quoteattr(host)}/>\n")
                out.append("      </mail_list>\n")
            for kind in ("acl", "xacl"):
                if ar[f"{kind}_list"]:
                    out.append(f"      <{kind}_list>\n")
                    out += [f"         <{kind}  user={quoteattr(u)}/>\n" for u in ar[f"{kind}_list"]]
                    out.append(f"      </{kind}_list>\n")
        out.append("   </ar_summary>\n")
    out.append("</qrstat>\n")
    return "".join(out)
