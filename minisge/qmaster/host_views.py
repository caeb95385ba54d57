"""What the qmaster tells ``qhost`` and ``qselect``: plain dicts in the shape
:mod:`minisge.output.qhost_out` prints (its docstring is the contract), and
the queue instances qselect's options select.

qhost (``sge_qhost.c``): the global host first, then the execution hosts by
name; per host its load values (the ten of the listing, as reported), with
``-F`` its resources (``hl`` load values, ``hf``/``hc`` host complex
values, ``gf``/``gc`` global ones, each printed by its complex type), with
``-q`` its queue instances and with ``-j`` the tasks running there.  ``-h``
keeps the hosts named (and the global one); ``-l`` keeps the hosts whose
values satisfy the requests (all of them, the global one too, when the
global values alone do).
"""

from __future__ import annotations

import fnmatch
import pwd
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from minisge.formats import access_list, rsmap, wc_queue
from minisge.formats.complex import Consumable
from minisge.formats.sge_types import SpecifierError, format_double, parse_number
from minisge.output.resource_value import resource_text
from minisge.qmaster import views
from minisge.qmaster.config_state import RequestError
from minisge.qmaster.qconf import Admin
from minisge.qmaster.qmaster import Qmaster
from minisge.qmaster.users import group_name, user_name
from minisge.scheduler import matching
from minisge.scheduler.matching import Level

GLOBAL = "global"

#: the load values of qhost's listing (and of its -xml ``hostvalue`` elements)
LISTED = ("arch", "num_proc", "m_socket", "m_core", "m_thread", "load_avg", "mem_total", "mem_used",
          "swap_total", "swap_used")


class UnknownHost(Exception):
    """``-h`` named a host that cannot be resolved (qhost: usage, then the error)."""


def _hosts(qm: Qmaster, names: Sequence[str] | None, uid: int) -> list[str]:
    """The global host, then the execution hosts by name; with ``-h`` only
    those named (resolved as qconf resolves them) and the global one."""
    hosts = sorted(h for h in qm.config.exec_hosts if h != GLOBAL)
    if names is None:
        return [GLOBAL, *hosts]
    admin = Admin(qm, user_name(uid), uid)
    wanted = set()
    for n in names:
        resolved = n if n == GLOBAL else admin.resolve_host(n)
        if resolved is None:
            raise UnknownHost(f'can\'t resolve hostname "{n}"')
        wanted.add(resolved.lower())
    return [GLOBAL, *(h for h in hosts if h.lower() in wanted)]


def _levels(qm: Qmaster, host: str, booked: tuple[dict, dict, dict]) -> list[Level]:
    """complex(5) levels of a host: the global one, then the host's own."""
    g = qm.config.exec_hosts.get(GLOBAL)
    out = [Level("g", "globally", dict(g.complex_values) if g else {}, booked[2], None)]
    if host != GLOBAL:
        eh = qm.config.exec_hosts.get(host)
        out.append(Level("h", f'at host "{host}"', dict(eh.complex_values) if eh else {},
                         booked[1].get(host, {}), qm.config.load_values.get(host, {})))
    return out


def _requests(qm: Qmaster, texts: Iterable[str]) -> dict[str, str]:
    """``-l a=1,b`` as {name: value} (a bare name asks for TRUE), full names;
    an unknown name is refused as 8.1.9's qhost refuses it."""
    cx = qm.config.complex_index
    out: dict[str, str] = {}
    for text in texts:
        for item in text.split(","):
            if not item:
                continue
            name, eq, value = item.partition("=")
            attr = cx.get(name)
            if attr is None:
                raise RequestError(f'error: unknown resource "{name}"')
            out[attr.name] = value if eq else "TRUE"
    return out


def _selected_by_requests(qm: Qmaster, hosts: list[str], requests: dict[str, str],
                          booked: tuple[dict, dict, dict]) -> list[str]:
    """qhost -l: every host (the global one too) when the global values
    satisfy the requests, else the execution hosts whose values do."""
    cx = qm.config.complex_index
    wanted_host = requests.pop("hostname", None)
    if matching.requests_reject(cx, _levels(qm, GLOBAL, booked), GLOBAL, requests, 1, defaults=False) is None:
        return hosts if wanted_host is None else [h for h in hosts if h.lower() == wanted_host.lower()]
    out = []
    for h in hosts:
        if h == GLOBAL:
            continue
        if wanted_host is not None and h.lower() != wanted_host.lower():
            continue
        if matching.requests_reject(cx, _levels(qm, h, booked), h, requests, 1, defaults=False) is None:
            out.append(h)
    return out


def _host_resources(qm: Qmaster, host: str, booked: tuple[dict, dict, dict]) -> list[list[str]]:
    """qhost -F: the global then the host's load values and complex values
    (a consumable: its capacity less what running jobs book), each name
    once, the host's value before the global one, printed by its type as
    qhost prints (INT with ``%f``)."""
    cx = qm.config.complex_index
    out: dict[str, list[str]] = {}

    def add(dom: str, name: str, raw: str) -> None:
        attr = cx.get(name)
        if attr is None or attr.name != name:
            return
        out[name] = [dom, name, resource_text(attr.type.value, raw, int_as_double=True)]

    def configured(letter: str, values: Mapping[str, str], consumed: Mapping[str, float]) -> None:
        for name, raw in values.items():
            attr = cx.get(name)
            if attr is None:
                continue
            if attr.consumable is not Consumable.NO:
                try:
                    free = parse_number(rsmap.amount_text(str(raw))) - consumed.get(attr.name, 0.0)
                except SpecifierError:
                    continue
                add(letter + "c", attr.name, format_double(free))
            else:
                add(letter + "f", attr.name, str(raw))

    slots = _used_slots(qm)
    g = qm.config.exec_hosts.get(GLOBAL)
    configured("g", dict(g.complex_values) if g else {}, {**booked[2], "slots": float(sum(slots.values()))})
    if host != GLOBAL:
        for row in views.load_resources(qm, host, int_as_double=True):
            out[row[1]] = row
        eh = qm.config.exec_hosts.get(host)
        configured("h", dict(eh.complex_values) if eh else {},
                   {**booked[1].get(host, {}), "slots": float(slots.get(host, 0))})
    return list(out.values())


def execd_links(qm: Qmaster) -> list[dict[str, Any]]:
    """The execds connected now, for ``minisge status``: host, the address it
    connected from, since when, the slots its running tasks hold and the
    slots of its queue instances."""
    used = _used_slots(qm)
    slots: dict[str, int] = {}
    for conf, host in qm.config.queue_instances():
        try:
            slots[host] = slots.get(host, 0) + int(qm.config.qvalue(conf, "slots", host))
        except ValueError:
            continue
    return [{"host": host, "address": link.address, "since": link.since, "used": used.get(host, 0),
             "slots": slots.get(host, 0)} for host, link in sorted(qm.execds.items())]


def _used_slots(qm: Qmaster) -> dict[str, int]:
    """The slots running tasks hold per host (the consumable ``slots``,
    which the booking of consumables leaves to the queue instances)."""
    used: dict[str, int] = {}
    for qinstance, n in views.used_slots(qm).items():
        host = qinstance.partition("@")[2]
        used[host] = used.get(host, 0) + n
    return used


def _named(qm: Qmaster, rows: list[list[str]], names: Sequence[str]) -> list[list[str]]:
    """qhost -F names: the rows of those attributes (by name or shortcut); all without names."""
    if not names:
        return rows
    cx = qm.config.complex_index
    wanted = set(names)
    return [r for r in rows if r[1] in wanted or ((a := cx.get(r[1])) is not None and a.shortcut in wanted)]


def _running_lines(row: dict[str, Any], pes: Mapping[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    """(queue instance, job entry) for each queue instance a task of job
    ``row`` (views.job_row) holds."""
    tasks = row.get("tasks")
    for t in (tasks if tasks is not None else [row]):
        granted = t.get("granted") or []
        if not granted:
            continue
        pe = pes.get(row.get("granted_pe") or "")
        adjust = pe is not None and not pe.job_is_first_task
        for i, (qinstance, slots) in enumerate(granted):
            yield qinstance, {
                "job_number": row["job_number"],
                "task_number": t.get("task_number") if row.get("array") else None,
                "prio": t.get("prio", row.get("prio", 0.0)),
                "name": row["name"],
                "owner": row["owner"],
                "state": t.get("state", ""),
                "start_time": t.get("start_time"),
                "submission_time": row.get("submission_time", 0),
                "slots": slots,
                "master": i == 0,
                "slot_adjust": adjust and i == 0,
            }


def qhost(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qhost``: the hosts and what the request asks to see of them."""
    try:
        hosts = _hosts(qm, req.get("hosts"), uid)
    except UnknownHost as e:
        return {"hosts": [], "unknown_host": str(e)}
    booked = qm.config.booked_consumables(qm.jobs)
    if req.get("requests"):
        hosts = _selected_by_requests(qm, hosts, _requests(qm, req["requests"]), booked)
    show_queues, show_jobs = bool(req.get("queues")), bool(req.get("jobs"))
    queue_info: dict[str, list[dict]] = {}
    job_lines: dict[str, list[dict]] = {}
    if show_queues or show_jobs:
        full = views.full_list(qm, {"users": ["*"], "detail": False}, uid)
        for q in full["queue_info"]:
            queue_info.setdefault(q["host"], []).append(q)
        if show_jobs:
            users = req.get("users")
            for row in full["jobs"]:
                if users and not any(fnmatch.fnmatchcase(row["owner"], u) for u in users):
                    continue
                for qinstance, entry in _running_lines(row, qm.config.pes):
                    job_lines.setdefault(qinstance, []).append(entry)
    out = []
    for h in hosts:
        load = qm.config.load_values.get(h, {}) if h != GLOBAL else {}
        host: dict[str, Any] = {"name": h, "values": {k: load.get(k) for k in LISTED}}
        if req.get("resources") is not None:
            host["resources"] = _named(qm, _host_resources(qm, h, booked), req["resources"])
        if show_queues or show_jobs:
            host["queues"] = [
                {"name": q["cqueue"], "qinstance": q["name"], "qtype": q["qtype"], "resv": q["resv"],
                 "used": q["used"], "total": q["total"], "states": q["states"],
                 "jobs": job_lines.get(q["name"], []) if show_jobs else []}
                for q in queue_info.get(h, [])
            ]
        out.append(host)
    return {"hosts": out}


# ---------------------------------------------------------------- qselect

def qselect(qm: Qmaster, req: dict, uid: int) -> dict:
    """``qselect``: the queue instances (by cluster queue, then host)
    that every given selection keeps: ``queues`` (wc_queue_list), ``states``
    (-qs letters), ``pes``, ``users`` (-U: those who have access) and
    ``requests`` (-l: the queue instance's values satisfy them).  An
    unknown PE is refused as 8.1.9 refuses it."""
    pes = req.get("pes")
    if pes is not None and not any(p in qm.config.pes for p in pes):
        raise RequestError("error: no such parallel environment")
    full = views.full_list(qm, {"users": [], "detail": False}, uid)
    cx = qm.config.complex_index
    requests: dict[str, str] | None = None
    if req.get("requests"):
        try:
            requests = _requests(qm, req["requests"])
        except RequestError:
            return {"queues": []}  # 8.1.9's qselect: no queue, no word
    snap = qm.config.snapshot(qm.jobs, qm.execds) if requests or req.get("users") is not None else None
    qis = {qi.name: qi for qi in snap.qinstances} if snap is not None else {}
    booked = qm.config.booked_consumables(qm.jobs) if requests else ({}, {}, {})
    groups = qm.config.group_members()
    out = []
    # as qstat orders them: by cluster queue, then host
    for q in sorted(full["queue_info"], key=lambda q: (q["cqueue"], q["host"])):
        name = q["name"]
        if req.get("queues") is not None and not any(
                wc_queue.matches(p, q["cqueue"], q["host"], groups) for p in req["queues"]):
            continue
        if req.get("states") and not any(c in q["states"] for c in req["states"]):
            continue
        if pes is not None and not any(p in q["pe_list"] for p in pes):
            continue
        qi = qis.get(name)
        if req.get("users") is not None and qi is not None and not all(
                _has_access(snap, qi, u) for u in req["users"]):
            continue
        if requests is not None:
            queue_level = {**(qi.values if qi else {}), "slots": str(q["total"])}
            queue_booked = {**booked[0].get(name, {}), "slots": float(q["used"])}
            levels = [*_levels(qm, q["host"], booked),
                      Level("q", f'in queue "{name}"', queue_level, queue_booked, None)]
            wanted = dict(requests)
            host = wanted.pop("hostname", None)
            if host is not None and host.lower() != q["host"].lower():
                continue
            if matching.requests_reject(cx, levels, name, wanted, 1, defaults=False) is not None:
                continue
        out.append(name)
    return {"queues": out}


def _has_access(snap: Any, qi: Any, user: str) -> bool:
    """Whether ``user`` (with the primary group the password database
    names) may use queue instance ``qi`` (queue_conf(5) user_lists and
    xuser_lists)."""
    try:
        groups: tuple[str, ...] = (group_name(pwd.getpwnam(user).pw_gid),)
    except KeyError:
        groups = ()
    return access_list.has_access(user, groups, qi.user_lists, qi.xuser_lists, snap.acls)

