"""``minisge init``: lay a cell down from the default spool (``spool/`` in the source tree).

The templates carry ``@@HOST@@``, ``@@SLOTS@@`` and ``@@EXECD_SPOOL@@``; the
cell gets this host as admin, submit and execution host, ``all.q`` with one
slot per core, the default complex list, PEs ``make`` and ``smp``, the cell
key (mode 0600) and ``settings.sh``.
"""

from __future__ import annotations

import os
import socket
from importlib import resources

from minisge import protocol
from minisge.cell import Cell
from minisge.spool import SPOOL_HEADER, QmasterSpool, atomic_write

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
        return s.getsockname()[1]


def _copy_tree(src, dst: str, subst: dict[str, str]) -> None:
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


def init_cell(cell: Cell, host: str, slots: int | None = None, env: dict | None = None) -> list[str]:
    """Create the cell; returns what was done, for the user. Refuses an existing cell."""
    env = os.environ if env is None else env
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
    spool.write_object("exec_hosts", host, EXEC_HOST_TEMPLATE.format(host=host))
    spool.write_object("exec_hosts", "global", EXEC_HOST_TEMPLATE.format(host="global"))
    atomic_write(os.path.join(cell.qmaster_spool, "submit_hosts", host), "")
    atomic_write(os.path.join(cell.qmaster_spool, "admin_hosts", host), "")
    import pwd

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
        f"binary_path             {os.path.dirname(os.path.abspath(os.sys.executable))}\n"
        f"qmaster_spool_dir       {cell.qmaster_spool}\n"
        "security_mode           cell_key\n",
    )
    atomic_write(
        cell.settings,
        f"export SGE_ROOT={cell.root}\n"
        f"export SGE_CELL={cell.name}\n"
        f"export SGE_CLUSTER_NAME=p{qport}\n"
        f"export SGE_QMASTER_PORT={qport}\n"
        f"export SGE_EXECD_PORT={eport}\n",
    )
    protocol.write_key(cell.key_file, protocol.make_key())
    if not os.path.exists(cell.accounting):
        atomic_write(cell.accounting, "# Version: 8.1.9\n# \n# DO NOT MODIFY THIS FILE MANUALLY!\n# \n")
    return [f"cell {cell.name} created in {cell.root} (qmaster {host}, ports {qport}/{eport}, all.q with {slots} slots)"]
