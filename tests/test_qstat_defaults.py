"""sge_qstat(5) default option files and qstat's -l/-U command line
(minisge.cli.qstat): as 8.1.9's qstat merges them (checked on the peer: a
command-line option replaces the same option of the files, the others
stay; ``#`` starts a comment)."""

from __future__ import annotations

from pathlib import Path

from minisge.cli import qstat


def test_default_files_are_the_cells_then_the_users(tmp_path: Path) -> None:
    assert qstat.default_files("/sge/default/common", "/home/u") == [
        "/sge/default/common/sge_qstat", "/home/u/.sge_qstat"]
    assert qstat.default_files("/sge/default/common", None) == ["/sge/default/common/sge_qstat"]


def test_options_are_read_in_order_without_comments_and_missing_files(tmp_path: Path) -> None:
    cell, home = tmp_path / "sge_qstat", tmp_path / ".sge_qstat"
    cell.write_text("# the cell's\n-u *   -s p\n\n")
    home.write_text("-ext # wide\n-l arch=lx-amd64\n")
    words = qstat.read_default_options([str(cell), str(tmp_path / "none"), str(home)])
    assert words == ["-u", "*", "-s", "p", "-ext", "-l", "arch=lx-amd64"]


def test_a_command_line_option_replaces_the_same_option_of_the_files() -> None:
    defaults = ["-u", "sgetest", "-s", "p", "-u", "other", "-ext"]
    assert qstat.with_defaults(["-s", "r"], defaults) == ["-s", "r", "-u", "sgetest", "-u", "other", "-ext"]
    assert qstat.with_defaults([], defaults) == defaults
    assert qstat.with_defaults(["-u", "x", "-s", "a"], defaults) == ["-u", "x", "-s", "a", "-ext"]


def test_option_groups_know_which_options_take_an_argument() -> None:
    assert qstat.option_groups(["-f", "-F", "-j", "1", "2", "-l", "a=b", "-F", "mem_free", "-foo"]) == [
        ["-f"], ["-F"], ["-j", "1", "2"], ["-l", "a=b"], ["-F", "mem_free"], ["-foo"]]


def test_l_and_U_are_kept_for_the_qmaster() -> None:
    args = qstat.parse_args(["-l", "arch=lx-amd64,hostname=h1", "-l", "slots=2", "-U", "alice,@staff"])
    assert args.requests == ["arch=lx-amd64", "hostname=h1", "slots=2"]
    assert args.queue_users == ["alice", "@staff"]
