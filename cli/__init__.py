"""The commands (packaged as ``minisge.cli``).

``commands.py`` is the one table of commands (the console scripts, the single binary and its
links, ``minisge -help``); each command is a module with ``main(argv) -> int``:
``qsub.py``, ``qstat.py``, ``qdel.py``, ``qhold.py`` and ``qrls.py``, ``qalter.py``, ``qresub.py``, ``qmod.py``,
``qacct.py`` (reads the accounting file itself), ``qconf.py``, ``qquota.py``, ``qhost.py``, ``qselect.py``, ``qrsh.py``
(``-inherit``, and interactive jobs), ``qlogin.py`` (qrsh's login form), ``qsh.py`` (refused: X11), ``qping.py``,
``sge_share_mon.py`` (the share tree with usage), ``qrsub.py``, ``qrstat.py`` and ``qrdel.py`` (advance reservations)
and ``minisge.py`` (init, start, stop, status, the roles); ``submitter.py`` is what qsub, qrsh and qlogin read
of the calling process (environment, user, home, cell, directory, host).

A command starts about as fast as the interpreter: it imports the standard library, the
protocol's wire and client, the cell's paths, the formats it needs and the output modules,
never trio, attrs or cattrs (tests/test_architecture.py checks both the imports and what a
started command loads).
"""
