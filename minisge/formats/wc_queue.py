"""sge_types(5) ``wc_queue_list``: which queue instances a list of queue expressions names.

::

    wc_queue_list := wc_queue[,wc_queue,...]
    wc_queue      := wc_cqueue | wc_qdomain | wc_qinstance
    wc_qinstance  := wc_cqueue@wc_host        all.q@node1, *@b*|c*
    wc_qdomain    := wc_cqueue@@wc_hostgroup  big.q@@solaris, *@@*

``wc_cqueue``, ``wc_host`` and ``wc_hostgroup`` are wildcard expressions
(:mod:`minisge.formats.wildcard`: ``*?[]`` patterns joined with ``& | !``
and parentheses); host names and host group names compare without regard
to case (Grid Engine's TYPE_HOST), cluster queue names with it.  A queue
domain names the instances on the hosts of every host group whose name
(without its ``@``) matches.  As Grid Engine's ``qref_cq_rejected`` and
``qref_list_host_rejected`` (sge_qref.c) read them; an empty part (``@h``,
``q@``) is taken as ``*``.

Every place that takes a ``wc_queue_list`` asks here: ``qsub -q``,
``-soft -q`` and ``-masterq`` in the scheduler, ``qmod``, ``qconf -sq``,
``qstat -q``.  Standard library only (the commands use it).
"""

from __future__ import annotations

from minisge.formats import wildcard

TYPE_CHECKING = False  # not typing's, nor collections.abc at run time: qstat imports this module
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    #: host group name (with its ``@``) -> the host names it holds, nested groups resolved
    HostGroups = Mapping[str, Collection[str]]


def cqueue_matches(pattern: str, cqueue: str) -> bool:
    """Whether the cluster queue part of ``pattern`` (all of it without an
    ``@``) names the cluster queue ``cqueue``."""
    return wildcard.match(pattern.partition("@")[0] or "*", cqueue)


def host_matches(href: str, host: str, hostgroups: HostGroups | None = None) -> bool:
    """Whether the host part of a queue expression names ``host``: a
    ``wc_host``, or (starting with ``@``) a ``wc_hostgroup`` whose groups
    hold it.  Without ``hostgroups`` a host group names nothing."""
    if not href.startswith("@"):
        return wildcard.match(href or "*", host, ignore_case=True)
    if not hostgroups:
        return False
    wc_group = href[1:]
    wanted = wildcard.lower_ascii(host)
    for group, members in hostgroups.items():
        if wildcard.match(wc_group, group[1:] if group.startswith("@") else group, ignore_case=True):
            if any(wildcard.lower_ascii(m) == wanted for m in members):
                return True
    return False


def matches(pattern: str, cqueue: str, host: str, hostgroups: HostGroups | None = None) -> bool:
    """Whether the ``wc_queue`` ``pattern`` names the queue instance ``cqueue@host``."""
    cq, at, href = pattern.partition("@")
    if not wildcard.match(cq or "*", cqueue):
        return False
    return not at or host_matches(href, host, hostgroups)


def list_matches(patterns: Iterable[str], cqueue: str, host: str, hostgroups: HostGroups | None = None) -> bool:
    """Whether any ``wc_queue`` of ``patterns`` names ``cqueue@host``."""
    return any(matches(p, cqueue, host, hostgroups) for p in patterns)

