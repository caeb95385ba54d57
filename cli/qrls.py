"""qrls: release holds of jobs or tasks.  ``qrls [-h u|o|s] [-u user_list] job_task_list`` (see qhold)."""

from __future__ import annotations

import sys

from .qhold import run


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, True, "qrls")


if __name__ == "__main__":
    sys.exit(main())
