"""sge_conf(5) execd_params as the execd reads them (minisge.execd.execd_params):
the host's local configuration wins, changes are seen without a restart,
and every parameter the execd does not act on is named in its log."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from minisge.execd import task_dir
from minisge.execd.execd_params import ExecdParams, not_honoured

GLOBAL = "# Version: 8.1.9\n#\n# DO NOT MODIFY THIS FILE MANUALLY!\n#\n"  # the spool header


def conf(common: Path, execd_params: str, host: str | None = None) -> None:
    if host is None:
        (common / "configuration").write_text(f"{GLOBAL}execd_params {execd_params}\nload_report_time 00:00:40\n")
    else:
        (common / "local_conf").mkdir(exist_ok=True)
        (common / "local_conf" / host).write_text(f"execd_params {execd_params}\n")
    # the same second as the last write: make the change visible to the stat check
    for p in (common / "configuration", common / "local_conf" / (host or "-")):
        if p.exists():
            st = p.stat()
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_keep_active_is_read_from_the_global_configuration_and_follows_changes(tmp_path: Path) -> None:
    params = ExecdParams(str(tmp_path), "h1")
    assert params.keep_active is False  # no configuration at all
    conf(tmp_path, "KEEP_ACTIVE=true")
    assert params.keep_active is True
    conf(tmp_path, "keep_active=false")
    assert params.keep_active is False
    conf(tmp_path, "KEEP_ACTIVE")
    assert params.keep_active is True


def test_the_hosts_local_configuration_wins(tmp_path: Path) -> None:
    conf(tmp_path, "KEEP_ACTIVE=true")
    conf(tmp_path, "KEEP_ACTIVE=false", host="h1")
    assert ExecdParams(str(tmp_path), "h1").keep_active is False
    assert ExecdParams(str(tmp_path), "h2").keep_active is True


def test_parameters_without_effect_are_named_once_per_change(tmp_path: Path,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    assert not_honoured({"KEEP_ACTIVE": True, "S_DESCRIPTORS": "100", "FOO": True}) == ["S_DESCRIPTORS", "FOO"]
    conf(tmp_path, "KEEP_ACTIVE=true,S_DESCRIPTORS=100,FOO")
    params = ExecdParams(str(tmp_path), "h1")
    with caplog.at_level(logging.WARNING, logger="minisge.execd"):
        params.current()
        params.current()
    said = [r.getMessage() for r in caplog.records]
    assert said == ["execd_params S_DESCRIPTORS, FOO: not supported by minisge's execd, without effect"]
    caplog.clear()
    conf(tmp_path, "KEEP_ACTIVE=true")
    with caplog.at_level(logging.WARNING, logger="minisge.execd"):
        params.current()
    assert caplog.records == []


def test_a_kept_task_directory_is_marked(tmp_path: Path) -> None:
    d = str(tmp_path / "1.1")
    os.makedirs(d)
    assert not task_dir.is_kept(d)
    task_dir.keep(d)
    assert task_dir.is_kept(d)
