"""``minisge init``: lay a cell down from the default spool (``spool/`` in the source tree).

The templates carry ``@@HOST@@``, ``@@SLOTS@@`` and ``@@EXECD_SPOOL@@``; the
cell gets this host as admin, submit and execution host, ``all.q`` with one
slot per core, the default complex list, PEs ``make`` and ``smp``, the cell
key and the cell certificate for TLS between hosts (both mode 0600),
``settings.sh`` and ``settings.csh`` (the cell's environment, and this
installation's commands and manual pages first in ``PATH`` and ``MANPATH``, as
Grid Engine's put ``$SGE_ROOT/bin/$ARCH`` and ``$SGE_ROOT/man``) and
``spool_version`` (:mod:`minisge.daemon.spool_version`).
"""

from __future__ import annotations

import os
import pwd
import socket
import sys
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable

from minisge import protocol
from minisge.cell import Cell
from minisge.daemon.cell_certificate import write_cell_certificate
from minisge.daemon.settings_files import write_settings
from minisge.daemon.spool_version import write_spool_version
from minisge.formats.lines import SPOOL_HEADER
from minisge.qmaster.spool import QmasterSpool, atomic_write

EXEC_HOST_TEMPLATE = """hostname              {host}
load_scaling          NONE
complex_values        NONE
load_values           NONE
processors            0
user_lists            NONE
xuser_lists           NONE
projects              NONE
xprojects             NONE
usage_scaling         NONE
report_variables      NONE
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _copy_tree(src: Traversable, dst: str, subst: dict[str, str]) -> None:
    for entry in src.iterdir():
        if entry.name in ("__init__.py", "__pycache__"):
            continue
        target = os.path.join(dst, entry.name)
        if entry.is_dir():
            os.makedirs(target, exist_ok=True)
            _copy_tree(entry, target, subst)
        else:
            text = entry.read_text(encoding="utf-8")
            for k, v in subst.items():
                text = text.replace(k, v)
            atomic_write(target, text, sync=False)


#: what a split cell's new execution hosts join (bootstrap's ``execd_joins``)
SPLIT_JOINS = "@allhosts"


def init_cell(cell: Cell, host: str, slots: int | None = None, env: Mapping[str, str] | None = None,
              split: bool = False) -> list[str]:
    """Create the cell; returns what was done, for the user. Refuses an existing cell.

    ``split``: a cell spread over hosts (``minisge qmaster``): the master host
    is admin and submit host but runs no execd, so it is no execution host
    and ``@allhosts`` starts empty; each execd that registers with the cell
    key for the first time becomes an execution host and joins ``@allhosts``
    (bootstrap: ``execd_joins @allhosts``)."""
    if env is None:
        env = os.environ
    if cell.exists():
        raise FileExistsError(f"cell {cell.path} already exists")
    slots = slots or os.cpu_count() or 1
    spool = QmasterSpool(cell)
    os.makedirs(cell.common, exist_ok=True)
    spool.create_dirs()
    execd_spool = os.path.join(cell.path, "spool")
    subst = {"@@HOST@@": host, "@@SLOTS@@": str(slots), "@@EXECD_SPOOL@@": execd_spool}
    tmpl = resources.files("minisge.default_spool")
    _copy_tree(tmpl / "common", cell.common, subst)
    _copy_tree(tmpl / "qmaster", cell.qmaster_spool, subst)
    for kind in ("cqueues", "pe", "usersets", "hostgroups", "centry"):
        d = os.path.join(cell.qmaster_spool, kind)
        for name in os.listdir(d):
            p = os.path.join(d, name)
            with open(p, encoding="utf-8") as f:
                text = f.read()
            if not text.startswith(SPOOL_HEADER):
                atomic_write(p, SPOOL_HEADER + text, sync=False)
    if split:
        spool.write_object("hostgroups", SPLIT_JOINS, f"group_name {SPLIT_JOINS}\nhostlist NONE\n")
    else:
        spool.write_object("exec_hosts", host, EXEC_HOST_TEMPLATE.format(host=host))
    spool.write_object("exec_hosts", "global", EXEC_HOST_TEMPLATE.format(host="global"))
    atomic_write(os.path.join(cell.qmaster_spool, "submit_hosts", host), "")
    atomic_write(os.path.join(cell.qmaster_spool, "admin_hosts", host), "")
    admin = pwd.getpwuid(os.getuid()).pw_name
    spool.write_list("managers", sorted({"root", admin}))
    spool.write_list("operators", [])
    spool.write_jobseqnum(0)
    qport = int(env.get("SGE_QMASTER_PORT") or _free_port())
    eport = int(env.get("SGE_EXECD_PORT") or _free_port())
    atomic_write(cell.common_file("act_qmaster"), f"{host}\n")
    atomic_write(
        cell.common_file("bootstrap"),
        "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n"
        f"admin_user              {admin}\n"
        "default_domain          none\n"
        "ignore_fqdn             true\n"
        "spooling_method         classic\n"
        "spooling_lib            minisge\n"
        f"spooling_params         {cell.common};{cell.qmaster_spool}\n"
        f"binary_path             {os.path.dirname(os.path.abspath(sys.executable))}\n"
        f"qmaster_spool_dir       {cell.qmaster_spool}\n"
        "security_mode           cell_key\n"
        + (f"execd_joins             {SPLIT_JOINS}\n" if split else ""),
    )
    write_settings(cell, qport, eport)
    write_spool_version(cell)
    protocol.write_key(cell.key_file, protocol.make_key())
    write_cell_certificate(cell.tls_file, cell.name)
    if not os.path.exists(cell.accounting):
        atomic_write(cell.accounting, "# Version: 8.1.9\n# \n# DO NOT MODIFY THIS FILE MANUALLY!\n# \n")
    if split:
        return [f"cell {cell.name} created in {cell.root} (qmaster {host}, ports {qport}/{eport}, "
                f"all.q with {slots} slots on each execution host; {host} runs no execd, "
                f"each new execd joins {SPLIT_JOINS})"]
    return [f"cell {cell.name} created in {cell.root} (qmaster {host}, ports {qport}/{eport}, "
            f"all.q with {slots} slots)"]
