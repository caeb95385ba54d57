"""What qsub itself refuses before it asks the qmaster."""

from __future__ import annotations

from minisge.cli import qsub


def test_pty_yes_for_a_batch_job_is_refused(capsys, tmp_path, monkeypatch):
    # 8.1.9 accepts it and never starts the script (the job stays in state t): minisge says so at once
    monkeypatch.setenv("SGE_ROOT", str(tmp_path))  # no cell there: the refusal comes first
    monkeypatch.chdir(tmp_path)
    assert qsub.main(["-pty", "y", "-b", "y", "/bin/true"]) == 1
    assert capsys.readouterr().err == qsub.PTY_REFUSED + "\n"
