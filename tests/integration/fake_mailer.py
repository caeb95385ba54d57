"""A fake sge_conf(5) ``mailer`` for the tests: a script that keeps each
mail it is given (its argv and its standard input) in a file of its own."""

from __future__ import annotations

import os
import re


def install_mailer(cell) -> None:
    """Make the cell's global ``mailer`` a script that writes one file per
    mail under ``cell.work/mails``: ``$0|$1|$2|$3``, the body, then ``.``."""
    mailer = os.path.join(cell.work, "mailer.sh")
    with open(mailer, "w") as f:  # a file per mail: its argv, its body, then a final '.'
        f.write('#!/bin/sh\nf=$(mktemp "$(dirname "$0")/mails/m.XXXXXX")\n'
                '{ echo "$0|$1|$2|$3"; cat; echo .; } > "$f"\n')
    os.chmod(mailer, 0o755)
    os.mkdir(os.path.join(cell.work, "mails"))
    conf = cell.run("qconf", "-sconf")
    text = re.sub(r"(?m)^mailer\s.*$", f"mailer                       {mailer}", conf.out)
    path = os.path.join(cell.work, "global")
    with open(path, "w") as f:
        f.write(text)
    assert cell.run("qconf", "-Mconf", path).rc == 0


def mails(cell) -> list[str]:
    """What the test mailer got: one entry per mail, its argv line then its standard input."""
    d = os.path.join(cell.work, "mails")
    out = []
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name)) as f:
            text = f.read()
        if text.endswith("\n.\n"):  # written whole
            out.append(text[:-2])
    return out
