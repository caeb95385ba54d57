"""Count the conformance cases: identical to 8.1.9, differing with a written
reason, not captured yet (the test checks each: an identical case must match
the capture, a differing one must print its own text and still differ).

    python tests/conformance/count.py [-v]     (-v: list the differing cases and their reasons)
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from case import all_cases


def main(argv: list[str]) -> int:
    cases = all_cases()
    captured = [c for c in cases if os.path.exists(c.expected("peer", "out"))]
    differing = [c for c in captured if c.differs is not None]
    identical = len(captured) - len(differing)
    print(f"identical: {identical}  differing-with-reason: {len(differing)}  "
          f"not captured: {len(cases) - len(captured)}  total: {len(cases)}")
    if "-v" in argv:
        for c in differing:
            print(f"  {c.name}: {c.differs}")
        for c in cases:
            if c not in captured:
                print(f"  {c.name}: not captured")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
