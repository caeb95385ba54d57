"""The single binary's entry: a multi-call program, like busybox.

Called as ``qsub``, ``qstat``, … (a symlink or a copy named so) it is that
command; called as ``minisge`` it takes the command as its first argument
(``minisge qsub -b y /bin/true``) or is the cell manager (``minisge start``).
"""

import os
import sys

COMMANDS = ("qsub", "qstat", "qdel", "qacct", "qconf", "qhold", "qrls", "qmod", "qrsh")


def main() -> int:
    name = os.path.basename(sys.argv[0])
    if name in COMMANDS:
        cmd, argv = name, sys.argv[1:]
    elif len(sys.argv) > 1 and sys.argv[1] in COMMANDS:
        cmd, argv = sys.argv[1], sys.argv[2:]
    else:
        from minisge.cli.minisge import main as minisge_main

        return minisge_main(sys.argv[1:])
    import importlib

    return importlib.import_module(f"minisge.cli.{cmd}").main(argv)


if __name__ == "__main__":
    sys.exit(main())
