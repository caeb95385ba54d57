"""minisge: a Grid Engine for a few workstations, on trio.

The packages (each folder's README.md maps its files; ARCHITECTURE.md at the top of the
source tree maps the whole): ``formats/`` (Grid Engine's text formats), ``rules/`` (pure
rules the daemons share), ``scheduler/`` (snapshot in, plan out), ``protocol/``,
``qmaster/``, ``execd/``, ``daemon/`` (the processes), ``output/`` (how the commands
print); the commands are ``minisge.cli`` (the ``cli/`` folder).  Four modules of their own:

- ``cell.py``: where a cell lives (``$SGE_ROOT/$SGE_CELL``) and the paths inside it;
- ``offline.py``: ``python -m minisge.offline``, the scheduler run on a cell's spool;
- ``mailer.py``: running sge_conf(5) ``mailer`` for one mail (the execd's and the qmaster's);
- ``name_service.py``: the password and group databases' entries, kept a few seconds (both daemons).
"""

__version__ = "0.1.0"
