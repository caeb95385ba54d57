"""A daemon's ``messages`` file is bounded (issue 13, item 8): at
``max_bytes`` it is renamed ``messages.1`` (the one before dropped) and a new
one begins, so the log never takes more than twice the bound."""

from __future__ import annotations

import logging
import os

from minisge.daemon.process import MESSAGES_MAX_BYTES, setup_logging


def test_messages_rotates_once_at_its_bound_and_keeps_one_old_file(tmp_path):
    path = str(tmp_path / "messages")
    setup_logging(path, max_bytes=4096)
    log = logging.getLogger("minisge.test")
    try:
        for n in range(400):
            log.info("line %04d %s", n, "x" * 60)
        for h in logging.getLogger("minisge").handlers:
            h.flush()
        names = sorted(os.listdir(tmp_path))
        assert names == ["messages", "messages.1"]
        assert all(os.path.getsize(tmp_path / n) <= 4096 for n in names)
        with open(path) as f:
            assert f.read().rstrip("\n").endswith(f"line 0399 {'x' * 60}")
        with open(path + ".1") as f:
            first_kept = int(f.readline().split("line ")[1].split()[0])
        assert first_kept > 0  # the oldest lines are gone with the file before
    finally:
        for h in logging.getLogger("minisge").handlers:
            h.close()
        logging.getLogger("minisge").handlers[:] = []


def test_the_bound_is_ten_mebibytes():
    assert MESSAGES_MAX_BYTES == 10 * 1024 * 1024
