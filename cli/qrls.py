"""qrls: release holds.  ``qrls [-h u|o|s] job_task_list``"""

from __future__ import annotations

import sys

from minisge.cli.qhold import run


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, True, "qrls")


if __name__ == "__main__":
    sys.exit(main())
