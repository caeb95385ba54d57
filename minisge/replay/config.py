"""A replay's configuration: a cell's spool, read only, or a small TOML file.

The TOML file describes the objects of a cell in Grid Engine's own attribute
names and values (the man pages': queue_conf(5), host_conf(5), hostgroup(5),
sge_pe(5), sge_resource_quota(5), complex(5), sched_conf(5)); an attribute
left out keeps the value ``qconf -aq`` & co. start from (the template)::

    [exec_hosts.node1]                 # host_conf(5); [exec_hosts.global] too
    [exec_hosts.node2]
    [hostgroups."@allhosts"]
    hostlist = "node1 node2"
    [queues."all.q"]                   # queue_conf(5)
    hostlist = "@allhosts"
    slots = 4
    pe_list = "smp"
    [pes.smp]                          # sge_pe(5)
    slots = 999
    allocation_rule = "$pe_slots"
    [resource_quotas.per_user]         # sge_resource_quota(5): limit is a list
    limit = ["users {*} to slots=4"]
    [complexes]                        # complex(5): lines added to the default complex
    mem_free = "mf MEMORY <= YES YES 0 0"
    [sched_conf]                       # sched_conf(5)
    queue_sort_method = "seqno"
    [replay]                           # how the trace's jobs are submitted
    pe = "smp"                         # the PE of a job of more than one slot (default: the first by name)
    qsub = "-R y"                      # options added to every job's qsub

A number or a boolean is written as its text; a list's items are joined by
spaces (``limit``: one line each).  ``minisge replay --describe`` writes this
file of any cell (:func:`describe`), with only the attributes that differ
from the templates.

Each object is turned into the text ``qconf -s…`` shows and read with the
format module that reads the spool, so what a TOML file may say is exactly
what a cell may hold.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import tomli_w

from minisge.cell import Cell
from minisge.formats import complex as complex_fmt
from minisge.formats import host_conf, hostgroup, lines, queue_conf, resource_quota, sched_conf, sge_conf, sge_pe
from minisge.formats import share_tree as share_tree_fmt
from minisge.formats.errors import FormatError
from minisge.qmaster.config_state import ConfigState
from minisge.qmaster.share_usage import ShareUsage
from minisge.qmaster.spool import QmasterSpool

#: the TOML tables of objects: table -> (template of a name, parse, write, ConfigState attribute)
OBJECTS: dict[str, tuple[Callable[[str], Any], Callable[[str, str], Any], Callable[[Any], str], str]] = {
    "exec_hosts": (host_conf.template, host_conf.parse, lambda h: host_conf.write(h, show_load=False), "exec_hosts"),
    "hostgroups": (hostgroup.template, hostgroup.parse, hostgroup.write, "hostgroups"),
    "queues": (queue_conf.template, queue_conf.parse, queue_conf.write, "cqueues"),
    "pes": (sge_pe.template, sge_pe.parse, sge_pe.write, "pes"),
}
TABLES = (*OBJECTS, "resource_quotas", "complexes", "sched_conf", "replay")
REPLAY_KEYS = ("pe", "qsub")


class ConfigError(ValueError):
    """A configuration that cannot be used: ``FILE: what is wrong``."""


@dataclass
class ReplayConfig:
    """The configuration a replay runs under: the qmaster's configuration
    objects, and how the trace's jobs are submitted."""

    label: str
    config: ConfigState
    pe: str | None = None  # the PE of multi-slot jobs
    qsub: tuple[str, ...] = ()  # options added to every job
    share_tree: share_tree_fmt.ShareTree | None = None  # share_tree(5) of a cell (a TOML file has none)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    return str(value)


def _attributes(text: str) -> dict[str, str]:
    return {name: a.value for name, a in lines.read_attributes(text, allow_empty=True).items()}


def _overlay(template_text: str, values: Mapping[str, Any]) -> str:
    """The template's text with ``values`` put in (the name attribute first, as written)."""
    attrs = _attributes(template_text)
    for k, v in values.items():
        attrs[k] = _text(v)
    return "".join(f"{k} {v}\n" for k, v in attrs.items())


def _rqs_text(name: str, values: Mapping[str, Any]) -> str:
    limits = values.get("limit", [])
    limits = [limits] if isinstance(limits, str) else limits
    out = ["{", f"name {name}", f"description {_text(values.get('description', 'NONE'))}",
           f"enabled {_text(values.get('enabled', True))}"]
    out += [f"limit {_text(x)}" for x in limits]
    unknown = sorted(set(values) - {"limit", "description", "enabled", "name"})
    if unknown:
        raise FormatError(f'unknown attribute name "{unknown[0]}"')
    return "\n".join([*out, "}"]) + "\n"


def from_toml(path: str) -> ReplayConfig:
    """The configuration a TOML file describes; ConfigError ``FILE: what``."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise ConfigError(f"{path}: unknown table [{unknown[0]}] (known: {', '.join(TABLES)})")
    cfg = ConfigState(None, "replay")  # type: ignore[arg-type]  # the replay gives it its spool
    cfg.global_conf = sge_conf.Configuration()
    cfg.sched_conf = sched_conf.default()
    cfg.complexes = complex_fmt.default_complex()
    where = ""
    try:
        for table, (template, parse, write, attr) in OBJECTS.items():
            objects = getattr(cfg, attr)
            for name, values in (data.get(table) or {}).items():
                where = f"[{table}.{name}]"
                if not isinstance(values, dict):
                    raise FormatError("not a table of attributes")
                objects[name] = parse(_overlay(write(template(name)), values), path)
        if "global" not in cfg.exec_hosts:
            cfg.exec_hosts["global"] = host_conf.template("global")
        for name, values in (data.get("resource_quotas") or {}).items():
            where = f"[resource_quotas.{name}]"
            cfg.rqs[name] = resource_quota.parse(_rqs_text(name, values), path)
        if data.get("complexes"):
            where = "[complexes]"
            rows = {line.split()[0]: line for line in complex_fmt.write(cfg.complexes).splitlines()
                    if line.strip() and not line.startswith("#")}
            for name, value in data["complexes"].items():
                rows[name] = f"{name} {_text(value)}"
            cfg.complexes = complex_fmt.parse("".join(r + "\n" for r in rows.values()), path)
        if data.get("sched_conf"):
            where = "[sched_conf]"
            cfg.sched_conf = sched_conf.parse(_overlay(sched_conf.write(cfg.sched_conf), data["sched_conf"]), path)
    except FormatError as e:
        raise ConfigError(f"{path}: {where}: {e.message}") from None
    replay = data.get("replay") or {}
    bad = sorted(set(replay) - set(REPLAY_KEYS))
    if bad:
        raise ConfigError(f"{path}: [replay]: unknown key {bad[0]} (known: {', '.join(REPLAY_KEYS)})")
    pe = replay.get("pe")
    if pe is not None and pe not in cfg.pes:
        raise ConfigError(f'{path}: [replay]: pe "{pe}" is not a parallel environment of the configuration')
    label = os.path.splitext(os.path.basename(path))[0]
    return ReplayConfig(label, cfg, pe, tuple(str(replay.get("qsub") or "").split()))


def _differences(text: str, template_text: str, skip: str) -> dict[str, str]:
    have, default = _attributes(text), _attributes(template_text)
    return {k: v for k, v in have.items() if k != skip and default.get(k) != v}


def describe(cfg: ConfigState) -> str:
    """The TOML of a cell's configuration (what :func:`from_toml` reads):
    every object, with the attributes that differ from the templates."""
    data: dict[str, Any] = {}
    for table, (template, _parse, write, attr) in OBJECTS.items():
        objects = getattr(cfg, attr)
        out = {}
        for name in sorted(objects):
            text = write(objects[name])
            first = text.split(None, 1)[0]  # qname, hostname, group_name, pe_name
            diff = _differences(text, write(template(name)), first)
            if name == "global" and not diff:
                continue
            out[name] = diff
        if out:
            data[table] = out
    rqs = {}
    for name in sorted(cfg.rqs):
        text = resource_quota.write(cfg.rqs[name])
        entry: dict[str, Any] = {"limit": []}
        for line in text.splitlines()[1:-1]:
            key, _, value = line.strip().partition(" ")
            value = value.strip()
            if key == "limit":
                entry["limit"].append(value)
            elif key in ("description", "enabled"):
                entry[key] = value
        rqs[name] = entry
    if rqs:
        data["resource_quotas"] = rqs
    default_rows = set(complex_fmt.write(complex_fmt.default_complex()).splitlines())
    added = {line.split()[0]: " ".join(line.split()[1:]) for line in complex_fmt.write(cfg.complexes).splitlines()
             if line.strip() and not line.startswith("#") and line not in default_rows}
    if added:
        data["complexes"] = added
    sc = _differences(sched_conf.write(cfg.sched_conf), sched_conf.write(sched_conf.default()), "")
    if sc:
        data["sched_conf"] = sc
    head = "# minisge replay configuration (minisge replay --describe): a cell's objects, in\n" \
           "# Grid Engine's attribute names; what is left out is the template's value\n"
    return head + tomli_w.dumps(data)


def from_cell(cell_dir: str) -> ReplayConfig:
    """The configuration of the cell at ``cell_dir`` (``$SGE_ROOT/$SGE_CELL``),
    read from its spool as the qmaster reads it at start-up (only read:
    running or not), with its share tree and its users' usage; its jobs and
    advance reservations are not the replay's."""
    cell_dir = os.path.abspath(cell_dir)
    cell = Cell(os.path.dirname(cell_dir), os.path.basename(cell_dir))
    if not cell.exists():
        raise ConfigError(f"{cell_dir}: no minisge cell here")
    spool = QmasterSpool(cell)
    cfg = ConfigState(spool, "replay")
    usage = ShareUsage(spool, cfg)
    try:
        cfg.load()
        usage.load()
    except FormatError as e:
        raise ConfigError(str(e)) from None
    except OSError as e:
        raise ConfigError(f"{cell_dir}: {e}") from None
    return ReplayConfig(os.path.basename(cell_dir), cfg, share_tree=usage.tree)
