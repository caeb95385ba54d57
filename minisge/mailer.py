"""The one place a daemon sends mail: the sge_conf(5) ``mailer`` run once
per recipient, ``mailer -s SUBJECT RECIPIENT`` with the body on its
standard input, as Grid Engine 8.1.9 runs it (mail.c): as the daemon's
user, in a session of its own, with no output kept, given 60 seconds.  A
mailer that is missing or fails is logged; nothing else is affected.

The execd sends the job mails of qsub(1) ``-m`` (:mod:`minisge.execd.mail`),
the qmaster those of qrsub(1) ``-m``
(:mod:`minisge.qmaster.advance_reservations`); the texts are
:mod:`minisge.rules.mail`'s.
"""

from __future__ import annotations

import logging
import subprocess

import trio

from minisge.rules import mail

log = logging.getLogger("minisge.mailer")

MAILER_SECONDS = 60.0  # 8.1.9's alarm(60) around the mailer


async def send(mailer: str, subject: str, body: str, recipient: str) -> None:
    """Run the mailer for one recipient; never raises."""
    try:
        with trio.move_on_after(MAILER_SECONDS) as scope:
            done = await trio.run_process(mail.mailer_argv(mailer, subject, recipient), executable=mailer,
                                          stdin=(body + "\n").encode("utf-8", "surrogateescape"),
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True, check=False)
        if scope.cancelled_caught:
            log.error("mailer %s for %s did not end in %.0f s: killed", mailer, recipient, MAILER_SECONDS)
        elif done.returncode:
            log.error("mailer %s for %s exited with status %d", mailer, recipient, done.returncode)
    except OSError as err:
        log.error("cannot start mailer %s for %s: %s", mailer, recipient, err)
