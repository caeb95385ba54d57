"""qquota: show the current usage of resource quotas (Grid Engine 8.1 qquota(1)).

``qquota [-h wc_host|wc_hostgroup,...] [-help] [-l resource_name,...]
[-u wc_user,...] [-P wc_project,...] [-pe wc_pe_name,...] [-q wc_cqueue,...]
[-xml] [-fmt plain|json|xml]``

Options are read from ``$SGE_ROOT/$SGE_CELL/common/sge_qquota``, then
``$HOME/.sge_qquota``, then the command line.  The qmaster computes the
lines (:func:`minisge.scheduler.quota.report`); this module prints them as qquota
does: a ``%-18s %-20.20s %s`` table under a header, printed only when there
is a line, or the XML document.  ``-fmt json`` (or ``-json``) prints
:func:`minisge.output.json_views.qquota_view`.  Standard library, the client
and the output modules only.
"""

from __future__ import annotations

import os
import sys

from minisge.output import json_views
from minisge.protocol import operations
from minisge.protocol.client import SAYS_LISTING, call, refused

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USAGE_8_1_9 = """SGE 8.1.9
usage: qquota [options]
  [-help]                              print this help
  [-h wc_host_list|wc_hostgroup_list]  display only selected hosts
  [-l resource_attributes]             request the given resources
  [-u user_list]                       display only selected users
  [-pe wc_pe_list]                     display only selected parallel environments
  [-P wc_project_list]                 display only selected projects
  [-q wc_cqueue_list]                  display only selected queues
  [-xml]                               display the information in XML format

resource_attributes     resource_name,resource_name,...
wc_cqueue               wildcard expression matching a cluster queue
wc_cqueue_list          wc_cqueue[,wc_cqueue,...]
wc_host                 wildcard expression matching a host
wc_host_list            wc_host[,wc_host,...]
wc_hostgroup            wildcard expression matching a hostgroup
wc_hostgroup_list       wc_hostgroup[,wc_hostgroup,...]
wc_pe                   wildcard expression matching a parallel environment
wc_pe_list              wc_pe[,wc_pe,...]
wc_project              wildcard expression matching a project
wc_project_list         wc_project[,wc_project,...]
user_list               user[,user,...]
"""

#: -fmt (Open Cluster Scheduler 9's spelling and words), before -help as there.
FMT_USAGE = "  [-fmt plain|json|xml]                specifies the display output format\n"
USAGE = USAGE_8_1_9.replace("  [-help] ", FMT_USAGE + "  [-help] ", 1)
FORMATS = ("plain", "json", "xml")

#: option -> key of the request; each takes the following words up to the next option
LIST_OPTIONS = {"-h": "hosts", "-l": "resources", "-u": "users", "-pe": "pes", "-P": "projects", "-q": "queues"}

HEAD_FORMAT = "%-18s %-20.20s %s\n"
RULE_LINE = "-" * 80 + "\n"
XML_NAMESPACE = "http://arc.liv.ac.uk/repos/darcs/sge/source/source/dist/util/resources/schemas/qquota/qquota.xsd"


class Usage(Exception):
    """A word qquota does not know: usage on stderr, then the error; exit 1."""


def parse_args(argv: list[str], opts: dict[str, Any] | None = None) -> dict[str, Any]:
    """Stage one of qquota's parsing: ``-help``, ``-xml`` and the list
    options (each with the words after it up to the next ``-`` word, comma
    lists split); anything else is an invalid option argument."""
    opts = opts if opts is not None else {"help": False, "xml": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-help":
            opts["help"] = True
        elif a in ("-xml", "-json"):
            opts["xml"], opts["json"] = a == "-xml", a == "-json"
        elif a == "-fmt":
            if i + 1 >= len(argv) or argv[i + 1] not in FORMATS:
                raise Usage(argv[i + 1] if i + 1 < len(argv) else a)
            i += 1
            opts["xml"], opts["json"] = argv[i] == "xml", argv[i] == "json"
        elif a in LIST_OPTIONS:
            key = LIST_OPTIONS[a]
            while i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                i += 1
                opts.setdefault(key, []).extend(x for x in argv[i].split(",") if x)
        else:
            raise Usage(a)
        i += 1
    return opts


def default_files() -> list[str]:
    """The cluster then the user defaults file (qquota(1) FILES)."""
    root = os.environ.get("SGE_ROOT", "")
    cell = os.environ.get("SGE_CELL") or "default"
    files = [os.path.join(root, cell, "common", "sge_qquota")] if root else []
    home = os.environ.get("HOME")
    if home:
        files.append(os.path.join(home, ".sge_qquota"))
    return files


def read_defaults(opts: dict[str, Any]) -> dict[str, Any]:
    for path in default_files():
        try:
            with open(path, encoding="utf-8") as f:
                words = f.read().split()
        except OSError:
            continue
        parse_args(words, opts)
    return opts


def format_text(rows: list[dict[str, Any]]) -> str:
    """The table: header and rule line before the first line, none without lines."""
    if not rows:
        return ""
    out = [HEAD_FORMAT % ("resource quota rule", "limit", "filter"), RULE_LINE]
    for r in rows:
        if r["value"] is None:
            limitation = f"{r['resource']}={r['limit']}"
        else:
            limitation = f"{r['resource']}={r['value']}/{r['limit']}"
        out.append(HEAD_FORMAT % (r["rule"], limitation, r["filter"]))
    return "".join(out)


def xml_escape(text: str) -> str:
    """Grid Engine's escape_string (which writes ``<`` as ``%lt;``)."""
    return (text.replace("&", "&amp;").replace("<", "%lt;").replace(">", "&gt;")
            .replace("'", "&apos;").replace('"', "&quot;"))


def format_xml(rows: list[dict[str, Any]]) -> str:
    out = ["<?xml version='1.0'?>\n", f'<qquota_result xmlns="{XML_NAMESPACE}">\n']
    for r in rows:
        out.append(f" <qquota_rule name='{xml_escape(r['rule'])}'>\n")
        for kind, entries in r["filters"]:
            for name, excluded in entries:
                tag = ("x" if excluded else "") + xml_escape(kind)
                out.append(f"   <{tag}>{xml_escape(name)}</{tag}>\n")
        limit = f"   <limit resource='{xml_escape(r['resource'])}' limit='{xml_escape(r['limit'])}'"
        if r["value"] is not None:
            limit += f" value='{xml_escape(r['value'])}'"
        out.append(limit + "/>\n")
        out.append(" </qquota_rule>\n")
    out.append("</qquota_result>\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv, read_defaults({"help": False, "xml": False}))
    except Usage as e:
        sys.stderr.write(USAGE)
        sys.stderr.write(f'error: invalid option argument "{e}"\n')
        return 1
    if opts["help"]:
        sys.stdout.write(USAGE)
        return 0
    request = {"op": operations.QQUOTA}
    for key in LIST_OPTIONS.values():
        if opts.get(key):
            request[key] = opts[key]
    reply = call(request, unreachable=SAYS_LISTING)
    rc = refused(reply)
    if rc is not None:
        return rc
    rows = reply.get("rows") or []
    if opts.get("json"):
        sys.stdout.flush()
        sys.stdout.buffer.write(json_views.dumps(json_views.qquota_view(rows)))
        return 0
    sys.stdout.write(format_xml(rows) if opts["xml"] else format_text(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
