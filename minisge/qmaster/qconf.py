"""The qmaster side of ``qconf``: show, add, modify and delete configuration.

:func:`handle` answers one ``qconf`` request ``{"cmd": "-Aq", "args": [...],
"text": ..., "path": ...}`` with ``(stdout, stderr, rc)`` exactly as Grid
Engine 8.1's ``qconf`` prints them.  The command sends the text of a file it
was given (``-Aq FILE``), never parses it: the qmaster parses, with the
file's name in the error messages.

Rules (qconf(1), and what the real Grid Engine does where the page is
silent):

* Anyone may show; only managers change (``denied: "USER" must be manager
  for this operation``); adding users to access lists needs an operator.
* A change is checked completely first (syntax, then references: a queue's
  ``pe_list`` names existing PEs, a PE still used by a queue cannot be
  deleted, ...); a rejected change changes nothing.
* An accepted change is spooled (atomically, one file per object) before the
  in-memory model is replaced and the answer is given; the caller
  (``op_qconf``) then wakes the scheduler.
"""

from __future__ import annotations

import os
import pwd
import socket
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from minisge.formats import (
    access_list,
    host_conf,
    hostgroup,
    project,
    queue_conf,
    resource_quota,
    rsmap,
    sched_conf,
    sge_conf,
    sge_pe,
    sge_types,
    share_tree,
    user,
    wc_queue,
)
from minisge.formats import complex as complex_fmt
from minisge.formats.errors import FormatError
from minisge.formats.lines import read_attributes, write_attributes
from minisge.formats.sge_types import SpecifierError
from minisge.qmaster.config_state import CENTRY_FIELDS
from minisge.qmaster.spool import SpoolError, atomic_write, remove_file
from minisge.qmaster.users import user_name


class Refused(Exception):
    """A request refused: ``lines`` go to stderr, the command exits ``rc``."""

    def __init__(self, *lines: str, rc: int = 1):
        super().__init__("\n".join(lines))
        self.lines = list(lines)
        self.rc = rc


class Answer:
    """What one request prints: stdout and stderr lines, and the exit code."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.err: list[str] = []
        self.rc = 0

    def text(self) -> tuple[str, str, int]:
        return "".join(f"{s}\n" for s in self.out), "".join(f"{s}\n" for s in self.err), self.rc


# --------------------------------------------------------------------- entry
def handle(qm, req: dict[str, Any], uid: int) -> tuple[str, str, int]:
    """Answer one qconf request (see the module docstring)."""
    cmd = str(req.get("cmd"))
    spec = COMMANDS.get(cmd)
    if spec is None:
        return "", f'error: invalid option argument "{cmd}"\nUsage: qconf -help\n', 1
    func, right = spec
    admin = Admin(qm, user_name(uid), uid, req.get("path") or "<input>", cmd)
    ans = Answer()
    try:
        if right == "manager" and not qm.is_manager(uid):
            raise Refused(f'denied: "{admin.user}" must be manager for this operation')
        if right == "operator" and not qm.is_operator(uid):
            raise Refused(f'denied: "{admin.user}" must be operator for this operation')
        func(admin, ans, list(req.get("args") or []), req.get("text"), req.get("path") or "<input>")
    except Refused as e:
        ans.err.extend(e.lines)
        ans.rc = e.rc
    except SpoolError as e:  # a full or read-only spool: the change is not made (the model follows the spool)
        ans.err.append(str(e))
        ans.rc = 1
    return ans.text()


# --------------------------------------------------------------------- the state
class Admin:
    """The configuration a request reads and changes, and its spool."""

    def __init__(self, qm, user: str, uid: int, path: str = "<input>", cmd: str = ""):
        self.qm = qm
        self.cmd = cmd  # the option asked
        self.cfg = qm.config
        self.spool = qm.spool
        self.user = user
        self.uid = uid
        self.who = f"{user}@{qm.host}"
        self.path = path  # the file the request's text came from, for the messages

    # --- messages (sge_gdi's ADDEDTOLIST / MODIFIEDINLIST / REMOVEDFROMLIST)
    def added(self, name: str, what: str) -> str:
        return f'{self.who} added "{name}" to {what} list'

    def modified(self, name: str, what: str) -> str:
        return f'{self.who} modified "{name}" in {what} list'

    def removed(self, name: str, what: str) -> str:
        return f'{self.who} removed "{name}" from {what} list'

    # --- host names
    def known_hosts(self) -> list[str]:
        c = self.cfg
        return [self.qm.host, *c.exec_hosts, *c.admin_hosts, *c.submit_hosts]

    def resolve_host(self, name: str) -> str | None:
        """The cell's name for host ``name`` (GE resolves every host name it is
        given); None when it cannot be resolved."""
        for h in self.known_hosts():
            if h.lower() == name.lower():
                return h
        me = socket.gethostname()
        if name in ("localhost", me, me.split(".")[0]):
            return self.qm.host
        if not name or name.startswith("@"):
            return None
        try:
            socket.getaddrinfo(name, None)
        except (OSError, UnicodeError):
            return None
        return name.split(".")[0]

    def group_members(self) -> dict[str, frozenset]:
        out = {}
        for n in self.cfg.hostgroups:
            try:
                out[n] = hostgroup.resolve(self.cfg.hostgroups, n)
            except hostgroup.HostGroupError:
                out[n] = frozenset()
        return out

    # --- spooling: checked as the next start will read it, the spool, then the model
    def unloadable(self, err: FormatError) -> Refused:
        """A change whose spool file would not load (a value the request's
        parsing let through, e.g. a new line inside a value): refused."""
        return Refused(err.message, f'error reading file: "{self.path}"')

    def save(self, kind: str, name: str, text: str) -> None:
        try:
            self.cfg.check_object(kind, name, text)
        except FormatError as e:
            raise self.unloadable(e) from e
        self.spool.write_object(kind, name, text)

    def save_common(self, name: str, text: str) -> None:
        """``configuration``, ``sched_configuration`` or ``local_conf/HOST``."""
        try:
            parsed = self.cfg.parse_common(name, text)
        except FormatError as e:
            raise self.unloadable(e) from e
        if name != "sched_configuration":
            self.cfg.name_without_effect(parsed)
        if name.startswith("local_conf/"):
            try:
                os.makedirs(_local_conf_dir(self), exist_ok=True)
            except OSError as err:
                raise SpoolError(_local_conf_dir(self), err) from None
            atomic_write(os.path.join(self.spool.cell.common, name), text)
        else:
            self.spool.write_common(name, text)

    def save_names(self, kind: str, names: list[str], what: str) -> None:
        """``managers`` or ``operators``."""
        bad = self.cfg.check_names(names)
        if bad is not None:
            raise Refused(f'denied: "{bad}" is not a valid {what} name')
        self.spool.write_list(kind, names)

    def drop(self, kind: str, name: str) -> None:
        self.spool.delete_object(kind, name)


# --------------------------------------------------------------------- parse errors
_PREFIXES = ("attribute ", "")


def _core(err: FormatError, attr_names=()) -> str:
    """A format error's message in Grid Engine's words (the format modules
    name the attribute in front, ``slots: ...``; qconf does not)."""
    m = err.message
    for a in attr_names:
        for p in (f"{a}: ", f'attribute "{a}": '):
            if m.startswith(p):
                return m[len(p):]
    if m.startswith("missing attribute "):
        return f"required attribute {m[len('missing attribute '):]} is missing"
    return m


def _line_value(text: str, err: FormatError) -> tuple[str | None, str | None]:
    """The attribute name and value on the line an error points at."""
    if not err.line:
        return None, None
    lines = text.splitlines()
    if err.line > len(lines):
        return None, None
    parts = lines[err.line - 1].split(None, 1)
    if not parts:
        return None, None
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def file_error(style: str, err: FormatError, text: str, path: str, attr_names=()) -> Refused:
    """What qconf prints when the file of ``-A``/``-M`` does not parse.

    Grid Engine frames the reason differently per object: the queue reader
    adds the bad value and the file, the flat-file readers the file and
    ``error reading in file``, ``-Mc`` names the complex file."""
    name, value = _line_value(text, err)
    msg = _core(err, [name] if name else attr_names)
    value_error = name is not None and err.message != msg and not err.message.startswith("missing")
    if style == "queue":
        lines = [f"error: {msg}"]
        if value_error:
            lines.append(f'error: Error during parsing of attribute value "{value}"')
        lines.append(f'error: error reading file: "{path}"')
        return Refused(*lines)
    if style == "complex":
        return Refused(f"error: {msg}", f'Complex attribute file "{path}" is not correct')
    if style == "plain":
        return Refused(msg)
    if not err.line:
        return Refused(f"error: {msg}", "error reading in file")
    return Refused(f"error: {msg}", f'error: error reading file: "{path}"', "error reading in file")


# --------------------------------------------------------------------- show
def _lines(text: str) -> list[str]:
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n")


def _names(arg: str) -> list[str]:
    return [n for n in arg.replace(" ", ",").split(",") if n]


def _need(args: list[str], n: int = 1) -> None:
    if len(args) < n:
        raise Refused("error: no option argument provided")


def show_list(names, what: str) -> Callable:
    """``-sql``, ``-spl``...: the names, sorted; ``no WHAT defined`` and exit 1 when none."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        found = sorted(n for n in names(a) if n not in ("global", "template"))
        if not found:
            raise Refused(f"no {what} defined")
        ans.out.extend(found)

    return run


def s_queue(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sq [wc_queue_list]``: the cluster queues (or queue instances) named;
    no name: the template."""
    if not args:
        ans.out.extend(_lines(queue_conf.write(queue_conf.template())))
        return
    for pattern in _names(args[0]):
        _qp, at, hp = pattern.partition("@")
        matches = sorted(n for n in a.cfg.cqueues if wc_queue.cqueue_matches(pattern, n))
        shown = False
        for n in matches:
            conf = a.cfg.cqueues[n]
            if not at:
                ans.out.extend(_lines(queue_conf.write(conf)))
                shown = True
                continue
            groups = a.group_members()
            try:
                hosts = queue_conf.hosts_of(conf, groups)
            except KeyError:
                hosts = ()
            for h in hosts:
                if wc_queue.host_matches(hp, h, groups):
                    ans.out.extend(_qinstance_lines(conf, h, groups))
                    shown = True
        if not shown:
            raise Refused(f'No cluster queue or queue instance matches the phrase "{pattern}"')


def _qinstance_lines(conf, host: str, groups) -> list[str]:
    """``qconf -sq q@host``: the instance's own values (qname, hostname, then
    each attribute as it applies on that host)."""
    pairs = [("qname", conf.qname), ("hostname", host)]
    for attr in queue_conf.HOST_ATTRIBUTES:
        value = queue_conf.value_for(conf, attr, host, groups, strict=False)
        if attr == "qtype" and value != "NONE":
            value += " "
        elif attr in ("complex_values", "load_thresholds", "suspend_thresholds"):
            value = value.replace(",", " ")
        pairs.append((attr, value))
    return _lines(write_attributes(pairs, queue_conf.NAME_WIDTH, wrap=False))


def _show_named(table: Callable, write: Callable, missing: Callable[[str], str]) -> Callable:
    """``-sp``, ``-su``, ``-sprj``: each named object as its format writes it,
    or Grid Engine's message for the first unknown name."""
    def show(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        for n in _names(args[0]):
            obj = table(a).get(n)
            if obj is None:
                raise Refused(missing(n))
            ans.out.extend(_lines(write(obj)))
    return show


s_pe = _show_named(lambda a: a.cfg.pes, sge_pe.write, lambda n: f"{n} is not a parallel environment")
s_userset = _show_named(lambda a: a.cfg.usersets, access_list.write,
                        lambda n: f'denied: access list "{n}" does not exist')
s_project = _show_named(lambda a: a.cfg.projects, project.write, lambda n: f"{n} is not known as a project")


def s_hostgroup(mode: str) -> Callable:
    """``-shgrp``, ``-shgrp_tree``, ``-shgrp_resolved``."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        for n in _names(args[0]):
            hg = a.cfg.hostgroups.get(n)
            if hg is None:
                raise Refused(f'Host group "{n}" does not exist')
            try:
                if mode == "tree":
                    ans.out.extend(_lines(hostgroup.tree(a.cfg.hostgroups, n)))
                elif mode == "resolved":
                    ans.out.append(" ".join(_resolved_order(a.cfg.hostgroups, n)))
                else:
                    ans.out.extend(_lines(hostgroup.write(hg)))
            except hostgroup.HostGroupError as e:
                raise Refused(str(e)) from e

    return run


def _resolved_order(groups, name: str, seen=None) -> list[str]:
    """The hosts of a group in the order they appear, subgroups expanded."""
    seen = set() if seen is None else seen
    out: list[str] = []
    for h in groups[name].hostlist:
        if h.startswith("@"):
            if h not in seen and h in groups:
                seen.add(h)
                out += [x for x in _resolved_order(groups, h, seen) if x not in out]
        elif h not in out:
            out.append(h)
    return out


def s_exechost(a: Admin, ans: Answer, args, text, path) -> None:
    """``-se HOST``: the configuration plus what the execd reports."""
    _need(args)
    for n in _names(args[0]):
        host = n if n == "global" else a.resolve_host(n)
        if host is None:
            raise Refused(f'can\'t resolve hostname "{n}"')
        eh = a.cfg.exec_hosts.get(host)
        if eh is None:
            raise Refused(f'denied: exechost "{host}" does not exist')
        load = a.cfg.load_values.get(host) or {}
        if load:
            procs = eh.processors
            try:
                procs = int(float(load.get("num_proc", procs)))
            except ValueError:
                pass
            eh = attrs.evolve(eh, load_values=tuple((k, str(v)) for k, v in load.items()), processors=procs)
        ans.out.extend(_lines(host_conf.write(eh)))


def s_rqs(a: Admin, ans: Answer, args, text, path) -> None:
    sets = a.cfg.rqs
    names = _names(args[0]) if args else sorted(sets)
    chosen = [sets[n] for n in names if n in sets]
    if not chosen or (args and len(chosen) != len(names)):
        raise Refused("No resource quota set found")
    ans.out.extend(_lines(resource_quota.write_sets(chosen)))


def s_complex(a: Admin, ans: Answer, args, text, path) -> None:
    ans.out.extend(_lines(complex_fmt.write(a.cfg.complexes)))


def s_sched_conf(a: Admin, ans: Answer, args, text, path) -> None:
    ans.out.extend(_lines(sched_conf.write(a.cfg.sched_conf)))


def _local_conf_dir(a: Admin) -> str:
    return os.path.join(a.spool.cell.common, "local_conf")


def _local_conf(a: Admin, host: str):
    return a.cfg.host_conf_of(host)


def _local_conf_names(a: Admin) -> list[str]:
    d = _local_conf_dir(a)
    return sorted(n for n in os.listdir(d) if not n.startswith(".")) if os.path.isdir(d) else []


def s_conf(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sconf [host_list|global]``."""
    for n in _names(args[0]) if args else ["global"]:
        if n == "global":
            ans.out.extend(_lines(sge_conf.write(a.cfg.global_conf)))
            continue
        host = a.resolve_host(n)
        if host is None:
            raise Refused(f'can\'t resolve hostname "{n}": can\'t resolve host name')
        conf = _local_conf(a, host)
        if conf is None:
            raise Refused(f"configuration {host} not defined")
        ans.out.extend(_lines(sge_conf.write(conf)))


def s_fixed(message: str) -> Callable:
    """Objects minisge does not keep (calendars, checkpointing, share tree)."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        raise Refused(message)

    return run


# --------------------------------------------------------------------- reference checks
def _all_values(conf, attr: str) -> list[str]:
    hv = getattr(conf, attr)
    return [hv.default] + [v for _, v in hv.overrides]


def _decoded_names(conf, attr: str) -> list[str]:
    out = []
    for text in _all_values(conf, attr):
        for item in queue_conf.decode(attr, text) or ():
            if isinstance(item, tuple):
                out.append(item[0])
            elif isinstance(item, str):
                out.append(item)
            elif hasattr(item, "queues"):
                out += [s.queue for s in item.queues]
            elif hasattr(item, "queue"):
                out.append(item.queue)
    return out


def check_queue(a: Admin, conf) -> None:
    """What the qmaster checks in a cluster queue before it takes it."""
    if not queue_conf.is_object_name(conf.qname):
        raise Refused(f'cluster queue name "{conf.qname}" is not valid')
    groups = a.cfg.hostgroups
    for h in conf.hostlist:
        if h.startswith("@") and h not in groups:
            raise Refused(f'denied: host group "{h}" does not exist')
        if not queue_conf.is_host_identifier(h):  # no such name resolves (8.1.9 shows 100 characters)
            raise Refused(f'unable to resolve host "{h[:100]}"')
    for attr in queue_conf.HOST_ATTRIBUTES:
        for h, _ in getattr(conf, attr).overrides:
            if h.startswith("@") and h not in groups:
                raise Refused(f'denied: host group "{h}" does not exist')
    for n in _decoded_names(conf, "pe_list"):
        if n not in a.cfg.pes:
            raise Refused(f'Parallel environment "{n}" does not exist')
    for n in _decoded_names(conf, "ckpt_list"):
        raise Refused(f'Ckpt "{n}" does not exist')
    for attr in ("user_lists", "xuser_lists"):
        for n in _decoded_names(conf, attr):
            if n not in a.cfg.usersets:
                raise Refused(f'Userset "{n}" does not exist')
    for attr in ("projects", "xprojects"):
        for n in _decoded_names(conf, attr):
            if n not in a.cfg.projects:
                raise Refused(f'Project "{n}" does not exist')
    for attr in ("complex_values", "load_thresholds", "suspend_thresholds"):
        for n in _decoded_names(conf, attr):
            found = a.cfg.complexes.get(n)
            if found is None:
                raise Refused(f'Complex attribute "{n}" does not exist')
            if found.type.is_resource_map:  # sge_rsmap(5): "A resource map cannot be attached to a queue."
                raise Refused(f'denied: RSMAP "{found.name}" cannot be attached to a queue, only to a host')
    for n in _decoded_names(conf, "subordinate_list"):
        if n == conf.qname:
            raise Refused(f'Cluster queue "{n}" can\'t get subordinated by itself')
        if n not in a.cfg.cqueues:
            raise Refused(f'Subordinated cluster queue "{n}" referenced in "{conf.qname}" does not exist')
    for cal in _all_values(conf, "calendar"):
        if cal.upper() != "NONE":
            raise Refused(f'Calendar "{cal}" does not exist')


def check_usersets(a: Admin, names) -> None:
    for n in names:
        if n not in a.cfg.usersets:
            raise Refused(f'Userset "{n}" does not exist')


def check_pe(a: Admin, pe) -> None:
    check_usersets(a, (*pe.user_lists, *pe.xuser_lists))


def check_exechost(a: Admin, eh) -> None:
    """complex_values name complex attributes and suit their type; load_scaling
    names complex attributes; lists exist."""
    for name, value in eh.complex_values:
        attr = a.cfg.complexes.get(name)
        if attr is None:
            raise Refused(f'denied: attribute "{name}" is not a complex attribute')
        problem = _value_problem(attr, value)
        if problem:
            raise Refused(problem)
        if attr.type.is_resource_map and eh.hostname == "global":
            raise Refused(f'denied: RSMAP "{attr.name}" can be attached to an execution host only, not to the '
                          "global host (not supported by minisge)")
    for name, _factor in eh.load_scaling:  # 8.1.9 takes a shortcut too (and never scales by it)
        if a.cfg.complex_index.get(name) is None:
            raise Refused(f'denied: scaling attribute "{name}" is not configured for host "{eh.hostname}"')
    check_usersets(a, (*eh.user_lists, *eh.xuser_lists))
    for n in (*eh.projects, *eh.xprojects):
        if n not in a.cfg.projects:
            raise Refused(f'Project "{n}" does not exist')


def long_form_resource_maps(a: Admin, eh):
    """sge_rsmap(5): a resource map is "stored and displayed" in its long
    form (``gpu=4`` as ``gpu=4(0 1 2 3)``, ``4(0-3)`` likewise); ``eh``
    passed :func:`check_exechost`."""
    values = []
    for name, value in eh.complex_values:
        attr = a.cfg.complexes.get(name)
        if attr is not None and attr.type.is_resource_map:
            value = rsmap.write(rsmap.parse(value, attr.name))
        values.append((name, value))
    return attrs.evolve(eh, complex_values=tuple(values))


_TYPE_WORDS = {"INT": "an integer", "DOUBLE": "a double", "MEMORY": "a memory", "TIME": "a time", "BOOL": "a boolean"}


def _value_problem(attr, value: str) -> str | None:
    """``attribute "h_vmem" is not a memory value`` when ``value`` does not suit."""
    t = str(attr.type)
    try:
        if t == "MEMORY":
            sge_types.parse_memory(value)
        elif t == "TIME":
            sge_types.parse_time(value)
        elif t == "RSMAP":
            rsmap.parse(value, attr.name)
        elif t in ("INT", "DOUBLE"):
            sge_types.parse_number(value)
        elif t == "BOOL":
            if value.lower() not in ("true", "false", "1", "0", "t", "f", "yes", "no", "y", "n"):
                raise SpecifierError(value)
        else:
            return None
    except (SpecifierError, ValueError) as err:
        if t == "RSMAP":
            return str(err)
        word = _TYPE_WORDS.get(t, "a")
        return f'attribute "{attr.name}" is not {word} value'
    return None


def check_hostgroup(a: Admin, hg, groups=None) -> None:
    groups = dict(a.cfg.hostgroups if groups is None else groups)
    for h in hg.hostlist:
        if h.startswith("@"):
            if h not in groups:
                raise Refused(f'denied: host group "{h}" does not exist')
        elif a.resolve_host(h) is None:
            raise Refused(f'unable to resolve host "{h}"')
    groups[hg.name] = hg
    cycle = hostgroup.find_cycle(groups)
    if cycle:
        inner = cycle[1] if len(cycle) > 1 else cycle[0]
        raise Refused(f'Hostgroup "{inner}" in specification of "{cycle[0]}" would create a cycle')


def check_project(a: Admin, prj) -> None:
    check_usersets(a, (*prj.acl, *prj.xacl))


def check_rqs(a: Admin, rqs, path: str):
    try:
        return resource_quota.resolve_complexes(rqs, _complex_objects(a), path)
    except FormatError as e:
        raise Refused(e.message) from e


def _complex_objects(a: Admin):
    return [
        type("C", (), {"name": c.name, "shortcut": c.shortcut, "type": str(c.type), "consumable": str(c.consumable)})
        for c in a.cfg.complexes.attrs
    ]


# --------------------------------------------------------------------- object kinds
@attrs.frozen
class Kind:
    """One kind of configuration object and Grid Engine's words for it."""

    store: str  # ConfigState attribute (a dict name -> model)
    spool: str  # spool directory
    fmt: Any  # format module (parse/write)
    noun: str  # 'cluster queue "x" already exists'
    list_name: str  # 'added "x" to LIST list'
    style: str  # how a parse error is framed (see file_error)
    check: Callable
    name_of: Callable
    removed_list: str = ""
    write: Callable | None = None

    def text(self, model) -> str:
        return self.write(model) if self.write else self.fmt.write(model)


KINDS = {
    "queue": Kind("cqueues", "cqueues", queue_conf, "cluster queue", "cluster queue", "queue", check_queue,
                  lambda m: m.qname),
    "pe": Kind("pes", "pe", sge_pe, "parallel environment", "parallel environment", "flat", check_pe,
               lambda m: m.name),
    "userset": Kind("usersets", "usersets", access_list, "userset", "userset", "flat",
                    lambda a, m: None, lambda m: m.name),
    "hostgroup": Kind("hostgroups", "hostgroups", hostgroup, "host group", "host group", "flat", check_hostgroup,
                      lambda m: m.name, removed_list="host group entry"),
    "project": Kind("projects", "projects", project, "project", "project", "flat", check_project,
                    lambda m: m.name),
    "user": Kind("users", "users", user, "user", "user", "flat", lambda a, m: check_user(a, m), lambda m: m.name,
                 write=user.write_spool),
    "exechost": Kind("exec_hosts", "exec_hosts", host_conf, "exechost", "exechost", "flat", check_exechost,
                     lambda m: m.hostname, removed_list="execution host",
                     write=lambda m: host_conf.write(m, show_load=False)),
}


def _parse(kind: Kind, text: str, path: str):
    try:
        return kind.fmt.parse(text, path)
    except FormatError as e:
        raise file_error(kind.style, e, text, path) from e


def _store(a: Admin, kind: Kind) -> Mapping[str, Any]:
    return a.cfg.objects(kind.store)


def _put(a: Admin, kind: Kind, model) -> None:
    """Spool the object, then put it in the model (queue_conf(5) initial_state
    for the queue instances it adds)."""
    name = kind.name_of(model)
    a.save(kind.spool, name, kind.text(model))
    a.cfg.put_object(kind.store, name, model)


def _remove(a: Admin, kind: Kind, name: str) -> None:
    a.drop(kind.spool, name)
    a.cfg.remove_object(kind.store, name)


def add_from_file(kind_name: str) -> Callable:
    """``-Aq``, ``-Ap``, ``-Au``, ``-Ahgrp``, ``-Aprj``, ``-Ae``: a new object."""
    kind = KINDS[kind_name]

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        model = _parse(kind, text or "", path)
        model = _resolve_exechost(a, kind_name, model)
        name = kind.name_of(model)
        if name in _store(a, kind):
            raise Refused(f'{kind.noun} "{name}" already exists')
        kind.check(a, model)
        if kind_name == "exechost":
            model = long_form_resource_maps(a, model)
        _put(a, kind, model)
        ans.err.append(a.added(name, kind.list_name))

    return run


def modify_from_file(kind_name: str) -> Callable:
    """``-Mq``, ``-Mp``, ``-Mu``, ``-Mhgrp``, ``-Mprj``, ``-Me``: replace an object."""
    kind = KINDS[kind_name]

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        model = _parse(kind, text or "", path)
        model = _resolve_exechost(a, kind_name, model)
        name = kind.name_of(model)
        if name not in _store(a, kind):
            raise Refused(f'denied: {kind.noun} "{name}" does not exist')
        kind.check(a, model)
        if kind_name == "exechost":
            model = attrs.evolve(long_form_resource_maps(a, model), load_values=(),
                                 processors=_store(a, kind)[name].processors)
        if kind_name == "user":  # the usage is the qmaster's, not the file's
            old = _store(a, kind)[name]
            model = attrs.evolve(model, usage=old.usage, usage_time_stamp=old.usage_time_stamp,
                                 project_usage=old.project_usage)
        _put(a, kind, model)
        ans.err.append(a.modified(name, kind.list_name))

    return run


def _resolve_exechost(a: Admin, kind_name: str, model):
    if kind_name != "exechost" or model.hostname == "global":
        return model
    host = a.resolve_host(model.hostname)
    if host is None:
        raise Refused(f'can\'t resolve hostname "{model.hostname}"')
    return attrs.evolve(model, hostname=host)


def delete(kind_name: str, referenced: Callable) -> Callable:
    """``-dq``, ``-dp``, ``-dul``, ``-dhgrp``, ``-dprj``, ``-de``: each name in turn;
    one still in use is refused with Grid Engine's reason."""
    kind = KINDS[kind_name]

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        for n in _names(args[0]):
            name = n
            if kind_name == "exechost" and n != "global":
                resolved = a.resolve_host(n)
                if resolved is None:
                    raise Refused(f'can\'t resolve hostname "{n}"')
                name = resolved
            if name not in _store(a, kind):
                raise Refused(f'denied: {kind.noun} "{name}" does not exist')
            reason = referenced(a, name)
            if reason:
                raise Refused(reason)
            _remove(a, kind, name)
            ans.err.append(a.removed(name, kind.removed_list or kind.list_name))

    return run


def queue_in_use(a: Admin, name: str) -> str | None:
    for other in a.cfg.cqueues.values():
        if other.qname != name and name in _decoded_names(other, "subordinate_list"):
            return (f'Cluster queue "{name}" is referenced in cluster queue "{other.qname}" as a subordinate. '
                    "Deletion denied")
    for job in a.qm.jobs.values():
        for t in job.tasks.values():
            if any(g.qinstance.partition("@")[0] == name for g in t.granted):
                return "There are still running jobs in the queue. Deletion denied."
    return None


def pe_in_use(a: Admin, name: str) -> str | None:
    for q in a.cfg.cqueues.values():
        if name in _decoded_names(q, "pe_list"):
            return f'denied: Parallel environment "{name}" is still referenced in queue "{q.qname}".'
    for job in a.qm.jobs.values():
        if job.tasks and any(t.granted_pe == name for t in job.tasks.values()):
            return f'Pe "{name}" is still referenced in job {job.number}.'
    return None


def userset_in_use(a: Admin, name: str) -> str | None:
    def ref(where: str, kind: str, obj: str) -> str:
        return f'denied: userset "{name}" is still referenced in {where} of {kind} "{obj}"'

    for q in a.cfg.cqueues.values():
        for attr, where in (("user_lists", "user list"), ("xuser_lists", "xuser list")):
            if name in _decoded_names(q, attr):
                return ref(where, "queue", q.qname)
    for pe in a.cfg.pes.values():
        if name in pe.user_lists:
            return ref("user list", "parallel environment", pe.name)
        if name in pe.xuser_lists:
            return ref("xuser list", "parallel environment", pe.name)
    for prj in a.cfg.projects.values():
        if name in prj.acl:
            return ref("user list", "project", prj.name)
        if name in prj.xacl:
            return ref("xuser list", "project", prj.name)
    for eh in a.cfg.exec_hosts.values():
        if name in eh.user_lists:
            return ref("user list", "host", eh.hostname)
        if name in eh.xuser_lists:
            return ref("xuser list", "host", eh.hostname)
    return None


def project_in_use(a: Admin, name: str) -> str | None:
    for q in a.cfg.cqueues.values():
        for attr in ("projects", "xprojects"):
            if name in _decoded_names(q, attr):
                return f'denied: project "{name}" is still referenced in {attr} of queue "{q.qname}"'
    for eh in a.cfg.exec_hosts.values():
        for attr in ("projects", "xprojects"):
            if name in getattr(eh, attr):
                return f'denied: project "{name}" is still referenced in {attr} of host "{eh.hostname}"'
    return None


def hostgroup_in_use(a: Admin, name: str) -> str | None:
    users = []
    for q in a.cfg.cqueues.values():
        if name in q.hostlist or any(
            h == name for attr in queue_conf.HOST_ATTRIBUTES for h, _ in getattr(q, attr).overrides
        ):
            users.append(q.qname)
    if users:
        return f'denied: these cluster queues still reference "{name}": {", ".join(users)}'
    for g in a.cfg.hostgroups.values():
        if name in g.hostlist:
            return f'Host object "{name}" is still referenced in host group "{g.name}".'
    return None


def exechost_in_use(a: Admin, name: str) -> str | None:
    if name == "global":
        return 'denied: pseudo host "global" may not be deleted'
    groups = a.group_members()
    for q in a.cfg.cqueues.values():
        try:
            hosts = queue_conf.hosts_of(q, groups)
        except KeyError:
            hosts = ()
        if any(h.lower() == name.lower() for h in hosts):
            return f'Host object "{name}" is still referenced in cluster queue "{q.qname}".'
    for g in a.cfg.hostgroups.values():
        if name in g.hostlist:
            return f'Host object "{name}" is still referenced in host group "{g.name}".'
    return None


# --------------------------------------------------------------------- resource quota sets
def _parse_rqs_sets(a: Admin, text: str, path: str):
    try:
        sets = resource_quota.parse_sets(text or "", path)
    except FormatError as e:
        raise file_error("plain", e, text or "", path) from e
    return [check_rqs(a, s, path) for s in sets]


def _put_rqs(a: Admin, rqs) -> None:
    a.save("resource_quotas", rqs.name, resource_quota.write(rqs))
    a.cfg.rqs = dict(sorted({**a.cfg.rqs, rqs.name: rqs}.items()))


def a_rqs(a: Admin, ans: Answer, args, text, path) -> None:
    """``-Arqs FILE``: every set of the file, none if one already exists."""
    sets = _parse_rqs_sets(a, text, path)
    for s in sets:
        if s.name in a.cfg.rqs:
            raise Refused(f'resource quota set "{s.name}" already exists')
    for s in sets:
        _put_rqs(a, s)
    if sets:  # Grid Engine reports the first set only
        ans.out.append(a.added(sets[0].name, "resource quota set"))


def m_rqs(a: Admin, ans: Answer, args, text, path) -> None:
    """``-Mrqs FILE [rqs_list]``: the named sets from the file; no names: the
    file replaces every set."""
    sets = _parse_rqs_sets(a, text, path)
    if args:
        by = {s.name: s for s in sets}
        for n in _names(args[0]):
            if n not in a.cfg.rqs:
                raise Refused(f'denied: resource quota set "{n}" does not exist')
            if n not in by:
                raise Refused("No resource quota set found")
        for n in _names(args[0]):
            _put_rqs(a, by[n])
            ans.err.append(a.modified(n, "resource quota set"))
        return
    for n in sorted(a.cfg.rqs):
        a.drop("resource_quotas", n)
        ans.err.append(a.removed(n, "resource quota set"))
    a.cfg.rqs = {}
    for s in sets:
        _put_rqs(a, s)
        ans.err.append(a.added(s.name, "resource quota set"))


def d_rqs(a: Admin, ans: Answer, args, text, path) -> None:
    _need(args)
    for n in _names(args[0]):
        if n not in a.cfg.rqs:
            raise Refused(f'denied: resource quota set "{n}" does not exist')
        a.drop("resource_quotas", n)
        a.cfg.rqs = {k: v for k, v in a.cfg.rqs.items() if k != n}
        ans.err.append(a.removed(n, "resource quota set"))


# --------------------------------------------------------------------- complex
def centry_text(c) -> str:
    """One complex attribute as classic spooling keeps it (``centry/NAME``)."""
    values = (c.name, c.shortcut, str(c.type), str(c.relop), str(c.requestable), str(c.consumable),
              c.default, c.urgency)
    return write_attributes(list(zip(CENTRY_FIELDS, values, strict=True)), 12, wrap=False)


def complex_in_use(a: Admin, name: str) -> str | None:
    for q in a.cfg.cqueues.values():
        for attr in ("complex_values", "load_thresholds", "suspend_thresholds"):
            if name in _decoded_names(q, attr):
                return f'denied: Complex attribute "{name}" is still referenced in queue "{q.qname}".'
    for eh in a.cfg.exec_hosts.values():
        if any(n == name for n, _ in eh.complex_values):
            return f'denied: Complex attribute "{name}" is still referenced in host "{eh.hostname}".'
    for s in a.cfg.rqs.values():
        if any(lim.complex_name == name for r in s.rules for lim in r.limits):
            return f'denied: Complex attribute "{name}" is still referenced in resource quota set "{s.name}".'
    return None


def m_complex(a: Admin, ans: Answer, args, text, path) -> None:
    """``-Mc FILE``: the file is the new complex list."""
    old = a.cfg.complexes
    try:
        new = complex_fmt.parse(text or "", path)
        new = complex_fmt.check_modification(old, new, path)
    except FormatError as e:
        if e.message.startswith("The built-in complex"):
            raise Refused(e.message) from e
        raise file_error("complex", e, text or "", path) from e
    old_by = {c.name: c for c in old.attrs}
    new_by = {c.name: c for c in new.attrs}
    gone = [n for n in old_by if n not in new_by]
    for n in gone:
        reason = complex_in_use(a, n)
        if reason:
            raise Refused(reason)
    changed = [n for n in new_by if n in old_by and new_by[n] != old_by[n]]
    added = [n for n in new_by if n not in old_by]
    if not (gone or changed or added):
        ans.err.append("Complex attribute configuration has not been changed")
        return
    try:  # the centry files as the next start reads them
        new = a.cfg.check_complexes({n: centry_text(c) for n, c in new_by.items()})
    except FormatError as e:
        raise a.unloadable(e) from e
    for n in added + changed:
        a.save("centry", n, centry_text(new_by[n]))
    for n in gone:
        a.drop("centry", n)
    a.cfg.complexes = new
    ans.err.extend(a.added(n, "complex entry") for n in added)
    ans.err.extend(a.modified(n, "complex entry") for n in changed)
    ans.err.extend(a.removed(n, "complex") for n in gone)


# --------------------------------------------------------------------- global and scheduler configuration
def m_sched_conf(a: Admin, ans: Answer, args, text, path) -> None:
    try:
        sc = sched_conf.parse(text or "", path)
    except FormatError as e:
        raise file_error("flat", e, text or "", path, ()) from e
    a.save_common("sched_configuration", sched_conf.write(sc))
    a.cfg.sched_conf = sc
    ans.err.append("changed scheduler configuration")


def m_conf(add: bool) -> Callable:
    """``-Mconf file_list`` / ``-Aconf file_list``: each file is named for the
    configuration it holds (``global`` or a host)."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        for item in args:
            fpath, ftext = item.get("path", ""), item.get("text")
            base = os.path.basename(fpath)
            name = base if base == "global" else a.resolve_host(base)
            if name is None:
                ans.err.append(f'can\'t resolve hostname "{base}": can\'t resolve host name')
                ans.err.append(f"configuration {base} does not exist")
                ans.rc = 1
                continue
            if ftext is None:
                raise Refused(f'error: error opening file "{fpath}" for reading: No such file or directory')
            exists = name == "global" or _local_conf(a, name) is not None
            if add and exists:
                raise Refused(f'configuration "{name}" already exists')
            if not add and not exists:
                raise Refused(f"configuration {name} does not exist")
            try:
                conf = sge_conf.parse(ftext, fpath, name=name)
            except FormatError as e:
                raise Refused(f"error: {e.message}") from e
            if name == "global":
                a.save_common("configuration", sge_conf.write(conf))
                a.cfg.global_conf = conf
            else:
                a.save_common(f"local_conf/{name}", sge_conf.write(conf))
            ans.err.append(a.added(name, "configuration") if add else a.modified(name, "configuration"))
            a.qm.unknown_hosts.config_changed()  # reschedule_unknown may have changed

    return run


def d_conf(a: Admin, ans: Answer, args, text, path) -> None:
    _need(args)
    for n in _names(args[0]):
        host = a.resolve_host(n)
        if n == "global" or host is None or _local_conf(a, host) is None:
            raise Refused(f'denied: configuration "{host or n}" does not exist')
        remove_file(os.path.join(_local_conf_dir(a), host))
        ans.err.append(a.removed(host, "configuration"))


# --------------------------------------------------------------------- managers, operators, hosts
def _user_list(name: str, what: str) -> tuple[Callable, Callable]:
    def add(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        entries = a.cfg.names(name)
        for u in _names(args[0]):
            if u in entries:
                ans.err.append(f'{what} "{u}" already exists')
                ans.rc = 1
                continue
            entries.append(u)
            a.save_names(name, entries, what)
            a.cfg.set_names(name, entries)
            ans.err.append(a.added(u, what))

    def remove(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        entries = a.cfg.names(name)
        for u in _names(args[0]):
            if name == "managers" and u == "root":
                ans.err.append(f'may not remove user "{u}" from {what} list')
                ans.rc = 1
                continue
            if u not in entries:
                ans.err.append(f'denied: {what} "{u}" does not exist')
                ans.rc = 1
                continue
            entries.remove(u)
            a.save_names(name, entries, what)
            a.cfg.set_names(name, entries)
            ans.err.append(a.removed(u, what))

    return add, remove


def _host_list(name: str, noun: str, what: str) -> tuple[Callable, Callable]:
    """``-as``/``-ah`` and ``-ds``/``-dh``.  Grid Engine resolves the names
    first (even for a non-manager) and exits 0 after ``-as``/``-ah`` whatever
    happened to a resolvable host."""
    def add(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        hosts = []
        for n in _names(args[0]):
            h = a.resolve_host(n)
            if h is None:
                raise Refused(f'can\'t resolve hostname "{n}"')
            hosts.append(h)
        if not a.qm.is_manager(a.uid):
            ans.err.append(f'denied: "{a.user}" must be manager for this operation')
            return
        for h in hosts:
            if h in a.cfg.names(name):
                ans.err.append(f'{noun} "{h}" already exists')
                continue
            a.spool.add_host(name, h)
            a.cfg.set_names(name, sorted([*a.cfg.names(name), h]))
            ans.err.append(f"{h} added to {what} list")

    def remove(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args)
        if not a.qm.is_manager(a.uid):
            raise Refused(f'denied: "{a.user}" must be manager for this operation')
        for n in _names(args[0]):
            h = a.resolve_host(n)
            if h is None:
                raise Refused(f'can\'t resolve hostname "{n}"')
            if h not in a.cfg.names(name):
                raise Refused(f'denied: {what} "{h}" does not exist')
            if name == "admin_hosts" and h == a.qm.host:
                raise Refused(f'denied: can\'t delete master host "{h}" from admin host list')
            a.spool.remove_host(name, h)
            a.cfg.set_names(name, [x for x in a.cfg.names(name) if x != h])
            ans.err.append(a.removed(h, what))

    return add, remove


# --------------------------------------------------------------------- user lists (-au, -du, -dul)
def au(a: Admin, ans: Answer, args, text, path) -> None:
    """``-au user_list listname_list``: a list that does not exist is created."""
    if len(args) < 2:
        raise Refused(f'error: no list_name provided to "-au {" ".join(args)}"')
    users, lists = _names(args[0]), _names(args[1])
    for ln in lists:
        acl = a.cfg.usersets.get(ln) or access_list.template(ln)
        for u in users:
            if u in acl.entries:
                ans.err.append(f'"{u}" is already in access list "{ln}"')
                ans.rc = 1
                continue
            acl = attrs.evolve(acl, entries=(*acl.entries, u))
            _put(a, KINDS["userset"], acl)
            ans.err.append(f'added "{u}" to access list "{ln}"')


def du(a: Admin, ans: Answer, args, text, path) -> None:
    """``-du user_list listname_list``."""
    if len(args) < 2:
        raise Refused(f'error: no list_name provided to "-du {" ".join(args)}"')
    users, lists = _names(args[0]), _names(args[1])
    for ln in lists:
        for u in users:
            acl = a.cfg.usersets.get(ln)
            if acl is None or u not in acl.entries:
                ans.err.append(f'user "{u}" is not in access list "{ln}"')
                ans.rc = 1
                continue
            _put(a, KINDS["userset"], attrs.evolve(acl, entries=tuple(e for e in acl.entries if e != u)))
            ans.err.append(f'deleted user "{u}" from access list "{ln}"')


# --------------------------------------------------------------------- attribute edits
OBJECT_KINDS = {"queue": "queue", "exechost": "exechost", "pe": "pe", "hostgroup": "hostgroup",
                "resource_quota": "resource_quota"}

#: list attributes: name -> True for ``name=value`` elements (keyed by name)
QUEUE_LISTS = {"load_thresholds": True, "suspend_thresholds": True, "complex_values": True,
               "pe_list": False, "ckpt_list": False, "owner_list": False, "user_lists": False,
               "xuser_lists": False, "projects": False, "xprojects": False, "subordinate_list": True,
               "hostlist": False}
FLAT_LISTS = {
    "pe": {"user_lists": False, "xuser_lists": False},
    "exechost": {"complex_values": True, "load_scaling": True, "usage_scaling": True, "user_lists": False,
                 "xuser_lists": False, "projects": False, "xprojects": False, "report_variables": False},
    "hostgroup": {"hostlist": False},
}
#: the attributes a file of -Aattr... may name (None: the object's own reader decides)
ATTRIBUTE_NAMES: dict[str, tuple[str, ...]] = {"queue": queue_conf.ATTRIBUTES, "hostgroup": hostgroup.ATTRIBUTES,
                                             "pe": sge_pe.ATTRIBUTES}
KEY_ATTRIBUTE = {"queue": "qname", "pe": "pe_name", "exechost": "hostname", "hostgroup": "group_name",
                 "resource_quota": "name"}


class _Invalid(Exception):
    """A value the list syntax cannot take (``-dattr ... complex_values h_vmem``)."""


def _split_items(text: str, keyed: bool) -> list[str]:
    items = [s for s in text.replace(" ", ",").split(",") if s] if not keyed else [
        s.strip() for s in text.split(",") if s.strip()]
    if text.strip().upper() == "NONE":
        return []
    return items


def _key(item: str, keyed: bool) -> str:
    if not keyed:
        return item
    for sep in ("=", ":"):
        if sep in item:
            return item.split(sep, 1)[0]
    return item


def edit_list(mode: str, current: list[str], new: list[str], keyed: bool, attr: str, obj: str,
              infos: list[str]) -> list[str]:
    """sge_utility_qmaster's ``attr_mod_sub_list``: -aattr adds elements not
    there yet, -mattr replaces (or adds) them, -dattr removes them, -rattr
    replaces the whole list; ``infos`` gets Grid Engine's notes."""
    if mode == "rattr":
        return list(new)
    cur = list(current)
    if mode == "mattr" and not cur:
        infos.append(f'"{attr}" of "{obj}" is empty - Adding new element(s).')
        return list(new)
    if mode == "dattr" and keyed and any("=" not in i and ":" not in i for i in new):
        raise _Invalid()
    for item in new:
        k = _key(item, keyed)
        idx = next((i for i, c in enumerate(cur) if _key(c, keyed) == k), None)
        if mode == "aattr":
            if idx is not None:
                infos.append(f'No modification because "{k}" already exists in "{attr}" of "{obj}"')
                break
            cur.append(item)
        elif mode == "mattr":
            if idx is None:
                infos.append(f'Unable to find "{k}" in "{attr}" of "{obj}" - Adding new element.')
                cur.append(item)
            elif cur[idx] != item:
                del cur[idx]
                cur.append(item)
        elif mode == "dattr":
            if idx is None:
                infos.append(f'"{k}" does not exist in "{attr}" of "{obj}"')
            else:
                del cur[idx]
    return cur


def _join(items: list[str], keyed: bool) -> str:
    if not items:
        return "NONE"
    return ",".join(items) if keyed else " ".join(items)


def attr_edit(mode: str) -> Callable:
    """``-aattr``/``-mattr``/``-rattr``/``-dattr obj_nm attr_nm val obj_id``."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        if len(args) < 4:
            raise Refused("error: no option argument provided")
        obj, attr, value, target = args[0], args[1], args[2], args[3]
        if obj not in OBJECT_KINDS:
            raise Refused(f'Modification of object "{obj}" not supported')
        if attr == KEY_ATTRIBUTE[obj]:
            raise Refused(f"qconf: cannot change {attr}")
        if obj == "queue":
            _queue_attr(a, ans, mode, attr, value, target, path)
        elif obj == "resource_quota":
            _rqs_attr(a, ans, mode, attr, value, target, path)
        else:
            _flat_attr(a, ans, obj, mode, attr, value, target, path)

    return run


def _invalid_attr(attr: str, value: str, path: str, *more: str) -> Refused:
    return Refused(f'The attribute name ("{attr}") and/or value ("{value}") is invalid', *more,
                   f'error reading file: "{path}"')


def _queue_attr(a: Admin, ans: Answer, mode, attr, value, target, path) -> None:
    qname, at, host = target.partition("@")
    conf = a.cfg.cqueues.get(qname)
    if conf is None:
        raise Refused(f'denied: cluster queue "{target}" does not exist')
    if attr not in queue_conf.ATTRIBUTES:
        raise _invalid_attr(attr, value, path)
    keyed = QUEUE_LISTS.get(attr)
    if keyed is not None and mode != "rattr" and mode != "dattr" and value.strip().upper() == "NONE":
        raise Refused('"NONE" is not a valid list attribute value for -mattr.  Try using -rattr instead.')
    infos: list[str] = []
    try:
        if attr == "hostlist":
            items = edit_list(mode, list(conf.hostlist), _split_items(value, False), False, attr, qname, infos)
            for h in items:
                if h.startswith("@") and h not in a.cfg.hostgroups:
                    raise Refused(f'denied: host group "{h}" does not exist')
            new = attrs.evolve(conf, hostlist=tuple(items))
        else:
            new = attrs.evolve(conf, **{attr: _edited_host_values(a, conf, mode, attr, value, host if at else None,
                                                                  keyed, infos)})
    except _Invalid:
        raise Refused(f'error parsing value "{value}"', f'Error during parsing of attribute value "{value}"',
                      f'error reading file: "{path}"') from None
    except FormatError as e:
        more = []
        if attr == "qtype":
            more.append(f'The attribute name ("{attr}") and/or value ("{value}") is invalid')
        raise Refused(*more, _core(e, [attr]), f'Error during parsing of attribute value "{value}"',
                      f'error reading file: "{path}"') from e
    check_queue(a, new)
    _put(a, KINDS["queue"], new)
    ans.out.extend(infos)
    ans.out.append(a.modified(qname, "cluster queue"))


def _edited_host_values(a: Admin, conf, mode, attr, value, host, keyed, infos):
    """The attribute's value with the edit applied to its default (no host)
    or to the entry of ``host`` (made if missing; -dattr leaves a missing one)."""
    hv = getattr(conf, attr)
    overrides = list(hv.overrides)
    if host is not None and host.startswith("@") and host not in a.cfg.hostgroups:
        raise Refused(f'Did not modify "{attr}" for host group "{host}" which does not exist.')
    if host is None:
        current = hv.default
    else:
        host = host if host.startswith("@") else (a.resolve_host(host) or host)
        idx = next((i for i, (h, _) in enumerate(overrides) if h.lower() == host.lower()), None)
        if idx is None and mode == "dattr":
            return hv
        current = overrides[idx][1] if idx is not None else None
    if keyed is None:  # a single value: -dattr leaves it alone
        new_text = current if mode == "dattr" else value
    else:
        cur_items = _split_items(current, keyed) if current is not None else []
        new_text = _join(edit_list(mode, cur_items, _split_items(value, keyed), keyed, attr, conf.qname, infos),
                         keyed)
    new_text = queue_conf.normalise_value(attr, new_text)
    if host is None:
        default = new_text
    else:
        default = hv.default
        if idx is None:
            overrides.append((host, new_text))
        else:
            overrides[idx] = (host, new_text)
    return queue_conf.parse_host_values(attr, queue_conf.HostValues(default, tuple(overrides)).text())


def _flat_attr(a: Admin, ans: Answer, obj: str, mode, attr, value, target, path) -> None:
    """PE, execution host and host group attributes: the object's text with one
    value changed, parsed again."""
    kind = KINDS[obj]
    name = target
    if obj == "exechost" and target != "global":
        name = a.resolve_host(target) or target
    model = _store(a, kind).get(name)
    if model is None:
        raise Refused(f'denied: {kind.noun} "{target}" does not exist')
    pairs = read_attributes(kind.text(model))
    if attr not in pairs:
        raise _invalid_attr(attr, value, path)
    keyed = FLAT_LISTS.get(obj, {}).get(attr)
    if keyed is not None and mode in ("aattr", "mattr") and value.strip().upper() == "NONE":
        raise Refused('"NONE" is not a valid list attribute value for -mattr.  Try using -rattr instead.')
    infos: list[str] = []
    current = pairs[attr].value
    try:
        if keyed is None:
            new_value = current if mode == "dattr" else value
        else:
            new_value = _join(edit_list(mode, _split_items(current, keyed), _split_items(value, keyed), keyed,
                                        attr, name, infos), keyed)
    except _Invalid:
        raise Refused(f'error parsing value "{value}"', f'error reading file: "{path}"') from None
    text = "".join(f"{n} {new_value if n == attr else p.value}\n" for n, p in pairs.items())
    try:
        new = kind.fmt.parse(text, path)
    except FormatError as e:
        raise Refused(_core(e, [attr]), f'error reading file: "{path}"') from e
    kind.check(a, new)
    if obj == "exechost":
        new = attrs.evolve(long_form_resource_maps(a, new), load_values=(), processors=model.processors)
    _put(a, kind, new)
    ans.out.extend(infos)
    ans.out.append(a.modified(name, kind.list_name))


def _rqs_attr(a: Admin, ans: Answer, mode, attr, value, target, path) -> None:
    """``enabled`` and ``description`` of a resource quota set."""
    rqs = a.cfg.rqs.get(target)
    if rqs is None:
        raise Refused(f'denied: resource quota set "{target}" does not exist')
    if attr == "enabled":
        try:
            new = attrs.evolve(rqs, enabled=resource_quota.parse_bool(value, path))
        except FormatError as e:
            raise Refused(e.message, f'error reading file: "{path}"') from e
    elif attr == "description":
        new = attrs.evolve(rqs, description=" ".join(value.split()) or "NONE")
    else:
        raise _invalid_attr(attr, value, path)
    if mode != "dattr":
        _put_rqs(a, new)
    ans.out.append(a.modified(target, "resource quota set"))


# --------------------------------------------------------------------- editor support
def get_template(a: Admin, ans: Answer, args, text, path) -> None:
    """The text the editor forms start from: ``["queue", NAME]`` → a template
    queue called NAME (``-aq``); the ``-m`` forms show the object with ``-s``."""
    _need(args, 2)
    kind, name = args[0], args[1]
    makers = {
        "queue": lambda n: queue_conf.write(queue_conf.template(n)),
        "pe": lambda n: sge_pe.write(sge_pe.template(n)),
        "exechost": lambda n: host_conf.write(host_conf.template(n), show_load=False),
        "hostgroup": lambda n: hostgroup.write(hostgroup.template(n)),
        "userset": lambda n: access_list.write(access_list.template(n)),
        "project": lambda n: project.write(project.template(n)),
        "rqs": lambda n: resource_quota.write(resource_quota.ResourceQuotaSet(
            n, "NONE", True, (resource_quota.QuotaRule(limits=(resource_quota.Limit("slots", "0"),)),))),
    }
    if kind not in makers and kind != "sharetree":
        raise Refused(f"unknown object kind {kind}")
    if kind == "sharetree":  # -astree, -mstree: the tree there is, else a root alone
        tree = a.qm.share_usage.tree
        ans.out.extend(_lines(share_tree.write(tree) if tree is not None
                              else "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=NONE\n"))
        return
    if kind == "exechost" and name:
        edit = a.cfg.exec_hosts.get(a.resolve_host(name) or name)
        if edit is not None:  # -me HOST: the configuration without the reported values
            ans.out.extend(_lines(host_conf.write(edit, show_load=False)))
            return
    ans.out.extend(_lines(makers[kind](name)))


# --------------------------------------------------------------------- what minisge does not keep
def unsupported(a: Admin, ans: Answer, args, text, path) -> None:
    """An option for objects minisge does not keep (calendars, checkpointing
    interfaces, the share tree, user objects) or daemons it does not run
    apart (the scheduler thread, event clients): refused in the words 8.1.9
    uses for a feature it lacks."""
    raise Refused(f'Unsupported: "{a.cmd}" is not supported in this version')


def s_not_one(kind: str) -> Callable:
    """``-scal NAME``, ``-sckpt NAME``: 8.1.9's answer when there is none of that name."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args, 1)
        raise Refused(*(f"{n} is {kind}" for n in _names(args[0])))

    return run


def no_sharetree(rc: int) -> Callable:
    """``-rsstnode``: 8.1.9's answer with no share tree; with one, minisge does
    not show subtrees (it says so)."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        if a.qm.share_usage.tree is not None:
            unsupported(a, ans, args, text, path)
        raise Refused("No sharetree", rc=rc)

    return run


def _tree_refusal(a: Admin, tree: share_tree.ShareTree, with_root: bool) -> str | None:
    """What the qmaster says against a share tree (None: it takes it): a leaf
    names no user or project it knows (the root too for a node edit), a user
    is not a leaf."""
    for n in tree.nodes:
        if not n.children and (with_root or n.id != tree.root.id) and not _known_tree_name(a, n.name):
            return f'denied: share tree contains reference to unknown user/project "{n.name}"'
    for n in tree.nodes:
        if n.children and n.id != tree.root.id and n.name in a.qm.share_usage.users:
            return f'found user "{n.name}" in share tree as a non-leaf node'
    return None


def edit_sharetree_nodes(a: Admin, ans: Answer, args, text, path) -> None:
    """``-astnode``, ``-mstnode`` node_path=shares,...; ``-dstnode`` node_path,...
    (the command checked the form): each node set, added (under a parent there
    is; ``-astnode`` with no tree starts one) or removed, each said on stderr as
    8.1.9 does; then the tree is checked and kept (``modified sharetree``) or
    nothing changes (``no modifications to sharetree``, exit 1)."""
    _need(args, 1)
    tree = a.qm.share_usage.tree
    if tree is None:
        if a.cmd != "-astnode":
            raise Refused("No sharetree", rc=0 if a.cmd == "-mstnode" else 1)
        tree = share_tree.ShareTree((share_tree.ShareTreeNode(0, "Root", 1),))
    modified = False
    items = _names(args[0])
    if a.cmd != "-dstnode":
        for item in items:
            if not sge_types.is_node_share(item):
                raise Refused(f"{item} is not a valid argument, see node_shares_list format",
                              "no modifications to sharetree")
    for item in items:
        where, _sep, shares = item.partition("=")
        node = share_tree.locate(tree, where)
        if a.cmd == "-dstnode":
            if node is None:
                ans.err.append(f"Unable to locate {item} in sharetree")
                continue
            ans.err.extend(("removing ", where))
            tree, modified = share_tree.without_node(tree, node.id), True
            continue
        if node is not None:
            tree = share_tree.with_shares(tree, node.id, int(shares))
        elif a.cmd == "-astnode":
            above = share_tree.parent_path(where)
            parent = share_tree.locate(tree, above) if above else tree.root
            if parent is None:
                ans.err.append(f"Unable to locate {above} in sharetree")
                continue
            name = where[len(above):].lstrip("/.")
            tree = share_tree.with_child(tree, parent.id, name, int(shares))
        else:
            ans.err.append(f"Unable to locate {where} in sharetree")
            continue
        ans.err.extend(("setting ", f"{where}={shares}"))
        modified = True
    if not modified:
        raise Refused("no modifications to sharetree")
    if not a.qm.is_manager(a.uid):
        raise Refused(f'denied: "{a.user}" must be manager for this operation', rc=0)
    refusal = _tree_refusal(a, tree, with_root=True)
    if refusal is not None:
        raise Refused(refusal, rc=1 if a.cmd == "-dstnode" else 0)
    a.qm.share_usage.set_tree(tree)
    ans.err.append("modified sharetree")


def clear_usage(a: Admin, ans: Answer, args, text, path) -> None:
    """``-clearusage [user_list]``: the share tree usage of the named users (all
    user objects when none is named) set to none, each said as 8.1.9 does."""
    users = a.qm.share_usage.users
    names = _names(args[0]) if args and args[0] else list(users)
    for name in names:
        if name not in users:
            ans.err.append(f'denied: user "{name}" does not exist')
            continue
        a.qm.share_usage.clear_usage(name)
        ans.err.append(f'{a.who} modified "{name}" in user list')


def s_sharetree_node(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sstnode node_path,...``: ``/path=shares`` of each node (a path of
    names from below the root, ``/`` the root); with no tree ``No sharetree``."""
    tree = a.qm.share_usage.tree
    if tree is None:
        raise Refused("No sharetree", rc=0)
    _need(args, 1)
    paths = {"/" + "/".join((*p[1:], n.name)) if d else "/": n for d, n, p in tree.walk()}
    missing = []
    for want in _names(args[0]):
        key = "/" + want.strip("/") if want.strip("/") else "/"
        node = paths.get(key)
        if node is None:
            missing.append(f'Unable to find "{want}" in sharetree')
        else:
            ans.out.append(f"{key}={node.shares}")
    if missing:
        raise Refused(*missing, rc=1)


def _known_tree_name(a: Admin, name: str) -> bool:
    """A share tree leaf names a user (one with a user object or a login) or a project, or is ``default``."""
    if name == "default" or name in a.cfg.projects or name in a.qm.share_usage.users:
        return True
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def put_sharetree(a: Admin, ans: Answer, args, text, path) -> None:
    """``-Astree file``, ``-Mstree file``: the share tree (share_tree(5)) from a file."""
    try:
        tree = share_tree.parse(text or "", path)
    except FormatError as e:
        raise Refused(e.message, f'error reading file: "{path}"') from e
    refusal = _tree_refusal(a, tree, with_root=False)
    if refusal is not None:
        raise Refused(refusal, rc=0 if refusal.startswith("found user") else 1)
    a.qm.share_usage.set_tree(tree)
    ans.err.append("changed sharetree")


def s_sharetree(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sstree``: the share tree file; none: ``no sharetree element``."""
    tree = a.qm.share_usage.tree
    if tree is None:
        raise Refused("no sharetree element")
    ans.out.extend(_lines(share_tree.write(tree)))


def s_sharetree_indented(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sst``: the share tree, one ``name=shares`` line per node, indented; none: ``No sharetree``."""
    tree = a.qm.share_usage.tree
    if tree is None:
        raise Refused("No sharetree", rc=0)
    ans.out.extend(_lines(share_tree.indented(tree)))


def d_sharetree(a: Admin, ans: Answer, args, text, path) -> None:
    """``-dstree``."""
    if a.qm.share_usage.tree is None:
        raise Refused("sharetree does not exist")
    a.qm.share_usage.set_tree(None)
    ans.err.append(f"{a.who} removed sharetree list")


def d_none(what: str) -> Callable:
    """``-dcal``, ``-dckpt``, ``-duser``: there is none to delete."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        _need(args, 1)
        raise Refused(*(f'denied: {what} "{n}" does not exist' for n in _names(args[0])))

    return run


def s_user(a: Admin, ans: Answer, args, text, path) -> None:
    """``-suser user_list``: each user object (qconf -suser's five attributes);
    an unknown name says so (exit 0, as 8.1.9)."""
    _need(args, 1)
    missing = []
    for n in _names(args[0]):
        u = a.cfg.users.get(n)
        if u is None:
            missing.append(f"{n} is not known as a user")
        else:
            ans.out.extend(_lines(user.write(u)))
    if missing:
        raise Refused(*missing, rc=0)


def check_user(a: Admin, u: user.User) -> None:
    """user(5): a ``default_project`` must be a project."""
    if u.default_project and u.default_project not in a.cfg.projects:
        raise Refused(f'denied: project "{u.default_project}" does not exist')


def s_detached(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sds``: minisge's queue instances have no settings apart from their cluster queue."""


def s_eventclients(a: Admin, ans: Answer, args, text, path) -> None:
    """``-secl``: minisge's scheduler is part of the qmaster, no event client."""
    ans.err.append("no event clients registered")  # on stderr, as 8.1.9 says it


def s_scheduler_state(a: Admin, ans: Answer, args, text, path) -> None:
    """``-sss``: the host the scheduler runs on (the qmaster's)."""
    ans.out.append(a.qm.host)


def k_master(a: Admin, ans: Answer, args, text, path) -> None:
    """``-km``: a manager's is answered, then the command asks for the
    shutdown (op ``shutdown``: the daemon that owns the qmaster ends)."""
    if not a.qm.is_manager(a.uid):
        raise Refused("shutting down qmaster requires manager privileges")
    ans.err.append(f"{a.who} kills qmaster")


def k_thread(a: Admin, ans: Answer, args, text, path) -> None:
    """``-kt thread_name``: only "scheduler" and "jvm" are threads of 8.1.9's."""
    _need(args, 1)
    if args[0] not in ("scheduler", "jvm"):
        raise Refused(f'thread with name "{args[0]}" is not supported', rc=0)
    unsupported(a, ans, args, text, path)


def need_manager(message: str, rc: int = 1) -> Callable:
    """8.1.9's own refusal of a non-manager, then unsupported."""

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        if not a.qm.is_manager(a.uid):
            raise Refused(message, rc=rc)
        unsupported(a, ans, args, text, path)

    return run


def file_attr_edit(mode: str) -> Callable:
    """``-Aattr``/``-Mattr``/``-Rattr``/``-Dattr obj_nm fname obj_id_list``:
    each ``attribute value`` line of the file, as -aattr... would take it,
    one answer per object; an attribute the object does not have: 8.1.9's
    four lines and nothing changed."""
    edit = attr_edit(mode)

    def run(a: Admin, ans: Answer, args, text, path) -> None:
        if len(args) < 3:
            raise Refused("error: no option argument provided")
        obj, targets = args[0], args[2:]
        pairs = []
        for line in (text or "").splitlines():
            name, _, value = line.strip().partition(" ")
            if name and not name.startswith("#"):
                pairs.append((name, value.strip()))
        known = ATTRIBUTE_NAMES.get(obj)
        for name, _value in pairs:
            if known is not None and name not in known:
                raise Refused(f'error: unknown attribute name "{name}"', f'error: error reading file: "{path}"',
                              f'error: invalid option argument "{path}"', "Usage: qconf -help")
        for target in targets:
            before = len(ans.out)
            for name, value in pairs:
                edit(a, ans, [obj, name, value, target], None, path)
            done = ans.out[before:]
            del ans.out[before:]
            ans.out.extend(ln for i, ln in enumerate(done) if ln not in done[:i])

    return run


def purge(a: Admin, ans: Answer, args, text, path) -> None:
    """``-purge queue attr_nm cqueue@host``, ``cqueue@@hostgroup``: the
    attribute's setting for that host (group) goes, its default applies."""
    if len(args) < 3:
        raise Refused("error: no option argument provided")
    obj, attr, target = args[0], args[1], args[2]
    qname, at, host = target.partition("@")
    if obj != "queue":
        raise Refused(f'Modification of object "{obj}" not supported')
    if not at:
        raise Refused(f'error: Given object_instance "{target}" is incomplete')
    conf = a.cfg.cqueues.get(qname)
    hv = getattr(conf, attr, None) if conf is not None and attr in queue_conf.ATTRIBUTES else None
    if conf is None:
        raise Refused(f'denied: cluster queue "{qname}" does not exist')
    overrides = list(hv.overrides) if hv is not None and attr != "hostlist" else []
    if not host.startswith("@"):
        host = a.resolve_host(host) or host
    keep = [(h, v) for h, v in overrides if h.lower() != host.lower()]
    if hv is None or len(keep) == len(overrides):
        raise Refused(f'Attribute name ("{attr}") and/or value ("{host}") not found', rc=0)
    if not a.qm.is_manager(a.uid):  # 8.1.9 looks for the setting first
        raise Refused(f'denied: "{a.user}" must be manager for this operation')
    new = attrs.evolve(conf, **{attr: attrs.evolve(hv, overrides=tuple(keep))})
    check_queue(a, new)
    _put(a, KINDS["queue"], new)
    ans.out.append(a.modified(qname, "cluster queue"))


# --------------------------------------------------------------------- the table
_am, _dm = _user_list("managers", "manager")
_ao, _do = _user_list("operators", "operator")
_as, _ds = _host_list("submit_hosts", "submithost", "submit host")
_ah, _dh = _host_list("admin_hosts", "adminhost", "administrative host")

COMMANDS: dict[str, tuple[Callable, str | None]] = {
    # show (anyone)
    "-sq": (s_queue, None),
    "-sql": (show_list(lambda a: a.cfg.cqueues, "cqueue list"), None),
    "-sc": (s_complex, None),
    "-sp": (s_pe, None),
    "-spl": (show_list(lambda a: a.cfg.pes, "parallel environment"), None),
    "-srqs": (s_rqs, None),
    "-srqsl": (show_list(lambda a: a.cfg.rqs, "resource quota set list"), None),
    "-se": (s_exechost, None),
    "-sel": (show_list(lambda a: a.cfg.exec_hosts, "execution host"), None),
    "-shgrp": (s_hostgroup("plain"), None),
    "-shgrp_tree": (s_hostgroup("tree"), None),
    "-shgrp_resolved": (s_hostgroup("resolved"), None),
    "-shgrpl": (show_list(lambda a: a.cfg.hostgroups, "host group list"), None),
    "-su": (s_userset, None),
    "-sul": (show_list(lambda a: a.cfg.usersets, "userset list"), None),
    "-sprj": (s_project, None),
    "-sprjl": (show_list(lambda a: a.cfg.projects, "project list"), None),
    "-sm": (show_list(lambda a: a.cfg.managers, "manager"), None),
    "-so": (show_list(lambda a: a.cfg.operators, "operator"), None),
    "-ss": (show_list(lambda a: a.cfg.submit_hosts, "submit host"), None),
    "-sh": (show_list(lambda a: a.cfg.admin_hosts, "administrative host"), None),
    "-sconf": (s_conf, None),
    "-sconfl": (show_list(_local_conf_names, "config"), None),
    "-ssconf": (s_sched_conf, None),
    "-sckptl": (s_fixed("no ckpt interface definition defined"), None),
    "-scall": (s_fixed("no calendar defined"), None),
    "-sstree": (s_sharetree, None),
    "-scal": (s_not_one("not a calendar"), None),
    "-sckpt": (s_not_one("not a checkpointing interface definition"), None),
    "-sst": (s_sharetree_indented, None),
    "-sstnode": (s_sharetree_node, None),
    "-rsstnode": (no_sharetree(0), None),
    "-astnode": (edit_sharetree_nodes, None),
    "-mstnode": (edit_sharetree_nodes, None),
    "-dstnode": (edit_sharetree_nodes, None),
    "-suser": (s_user, None),
    "-suserl": (show_list(lambda a: a.cfg.users, "user list"), None),
    "-sds": (s_detached, None),
    "-secl": (s_eventclients, None),
    "-sss": (s_scheduler_state, None),
    "-sobjl": (unsupported, None),
    # objects and daemons minisge does not have (8.1.9's own refusals of a non-manager first)
    "-acal": (unsupported, "manager"),
    "-Acal": (unsupported, "manager"),
    "-mcal": (unsupported, "manager"),
    "-Mcal": (unsupported, "manager"),
    "-dcal": (d_none("calendar"), "manager"),
    "-Ackpt": (unsupported, "manager"),
    "-mckpt": (unsupported, "manager"),
    "-Mckpt": (unsupported, "manager"),
    "-dckpt": (d_none("checkpointing environment"), "manager"),
    "-Astree": (put_sharetree, "manager"),
    "-Mstree": (put_sharetree, "manager"),
    "-dstree": (d_sharetree, "manager"),
    "-auser": (unsupported, "manager"),
    "-Auser": (add_from_file("user"), "manager"),
    "-muser": (unsupported, "manager"),
    "-Muser": (modify_from_file("user"), "manager"),
    "-duser": (delete("user", lambda a, n: None), "manager"),
    "-clearusage": (clear_usage, "manager"),
    "-cq": (need_manager("cleaning a queue requires manager privileges"), None),
    "-km": (k_master, None),
    "-ks": (need_manager("no scheduler registered at qmaster"), None),
    "-ke": (need_manager("shutting down execd requires manager privileges"), None),
    "-kej": (need_manager("shutting down execd requires manager privileges"), None),
    "-kec": (need_manager("shutdown requires manager privileges"), None),
    "-kt": (k_thread, None),
    "-tsm": (need_manager("starting scheduler monitoring requires manager privileges", rc=0), None),
    "-purge": (purge, None),
    "template": (get_template, None),
    # add, modify, delete from a file (managers)
    "-Aq": (add_from_file("queue"), "manager"),
    "-Mq": (modify_from_file("queue"), "manager"),
    "-dq": (delete("queue", queue_in_use), "manager"),
    "-Ap": (add_from_file("pe"), "manager"),
    "-Mp": (modify_from_file("pe"), "manager"),
    "-dp": (delete("pe", pe_in_use), "manager"),
    "-Au": (add_from_file("userset"), "manager"),
    "-Mu": (modify_from_file("userset"), "manager"),
    "-dul": (delete("userset", userset_in_use), "manager"),
    "-Ahgrp": (add_from_file("hostgroup"), "manager"),
    "-Mhgrp": (modify_from_file("hostgroup"), "manager"),
    "-dhgrp": (delete("hostgroup", hostgroup_in_use), "manager"),
    "-Aprj": (add_from_file("project"), "manager"),
    "-Mprj": (modify_from_file("project"), "manager"),
    "-dprj": (delete("project", project_in_use), "manager"),
    "-Ae": (add_from_file("exechost"), "manager"),
    "-Me": (modify_from_file("exechost"), "manager"),
    "-de": (delete("exechost", exechost_in_use), "manager"),
    "-Arqs": (a_rqs, "manager"),
    "-Mrqs": (m_rqs, "manager"),
    "-drqs": (d_rqs, "manager"),
    "-Mc": (m_complex, "manager"),
    "-Msconf": (m_sched_conf, "manager"),
    "-Mconf": (m_conf(False), "manager"),
    "-Aconf": (m_conf(True), "manager"),
    "-dconf": (d_conf, "manager"),
    # attribute edits
    "-aattr": (attr_edit("aattr"), "manager"),
    "-mattr": (attr_edit("mattr"), "manager"),
    "-rattr": (attr_edit("rattr"), "manager"),
    "-dattr": (attr_edit("dattr"), "manager"),
    "-Aattr": (file_attr_edit("aattr"), "manager"),
    "-Mattr": (file_attr_edit("mattr"), "manager"),
    "-Rattr": (file_attr_edit("rattr"), "manager"),
    "-Dattr": (file_attr_edit("dattr"), "manager"),
    # managers, operators, hosts, user lists
    "-am": (_am, "manager"),
    "-dm": (_dm, "manager"),
    "-ao": (_ao, "manager"),
    "-do": (_do, "manager"),
    "-as": (_as, None),  # resolves first, then checks the right itself
    "-ds": (_ds, None),
    "-ah": (_ah, None),
    "-dh": (_dh, None),
    "-au": (au, "operator"),
    "-du": (du, "operator"),
}
