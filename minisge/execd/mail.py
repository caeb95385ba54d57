"""The execd's mails (qsub(1) -m b|e|a): which mails a task's start and end
send, to whom.  The texts are :mod:`minisge.rules.mail`'s; they are sent by
:func:`minisge.mailer.send` (the sge_conf(5) ``mailer``, once per recipient).
A mailer that is missing or fails is logged; the job is not affected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from minisge.rules import mail


def start_mails(cfg: Mapping[str, Any], host: str) -> list[tuple[str, str, str]]:
    """``-m b`` of a task's config: (subject, body, recipient) triples."""
    m = cfg.get("mail") or {}
    if "b" not in (m.get("options") or "") or cfg.get("pe_task_id") is not None:
        return []
    subject, body = mail.start_mail(cfg["job_id"], m.get("task"), m.get("job_name", ""), m.get("owner", ""),
                                    m.get("cqueue", ""), host, m.get("start_time"))
    return [(subject, body, r) for r in m.get("list") or ()]


def end_mails(cfg: Mapping[str, Any], report: Mapping[str, Any], host: str) -> list[tuple[str, str, str]]:
    """``-m e``/``-m a`` of a task's config and its end report."""
    m = cfg.get("mail") or {}
    options = m.get("options") or ""
    if not options or cfg.get("pe_task_id") is not None:
        return []
    mails = mail.end_mails(options, cfg["job_id"], m.get("task"), m.get("job_name", ""), m.get("owner", ""),
                           f"{m.get('cqueue', '')}@{host}", host, int(report.get("failed") or 0),
                           report.get("usage") or {}, report.get("error") or "")
    return [(subject, body, r) for subject, body in mails for r in m.get("list") or ()]
