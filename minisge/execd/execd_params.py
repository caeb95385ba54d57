"""sge_conf(5) ``execd_params`` of one execution host, as its execd applies them.

Named for the configuration attribute.  The host's local configuration
(``common/local_conf/<host>``) wins over the global one when it sets
``execd_params`` (as every host-local attribute of sge_conf(5)).  The file
is read again when it changes, so ``qconf -mconf`` takes effect at the next
task end without a restart.

minisge's execd acts on ``KEEP_ACTIVE``: with it true the directory of an
ended task, ``active_jobs/<job>.<task>/``, is kept after the qmaster has
recorded the end (for debugging, as in Grid Engine), marked so that a
restarted execd does not report it again.  Grid Engine 8.1.9's execd passes
over the parameters it does not know without a word; minisge's names in its
messages file, once per change of the configuration, every parameter it
does not act on, so that none is taken silently.
"""

from __future__ import annotations

import logging
import os

from minisge.formats import sge_conf
from minisge.formats.lines import strip_header

log = logging.getLogger("minisge.execd")

#: the execd_params minisge's execd acts on
HONOURED = frozenset({"KEEP_ACTIVE"})

Params = dict[str, bool | str]


def not_honoured(params: Params) -> list[str]:
    """The names in ``params`` minisge's execd does not act on, in their order."""
    return [name for name in params if name not in HONOURED]


class ExecdParams:
    """The ``execd_params`` of ``host`` in the cell whose ``common`` directory is ``common_dir``."""

    def __init__(self, common_dir: str, host: str):
        self.paths = (os.path.join(common_dir, "local_conf", host), os.path.join(common_dir, "configuration"))
        self.names = (host, "global")
        self.stamp: tuple[tuple[int, int] | None, ...] | None = None
        self.params: Params = {}

    def _stamps(self) -> tuple[tuple[int, int] | None, ...]:
        out: list[tuple[int, int] | None] = []
        for path in self.paths:
            try:
                st = os.stat(path)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_mtime_ns, st.st_size))
        return tuple(out)

    def _read(self) -> Params:
        for path, name in zip(self.paths, self.names, strict=True):
            try:
                with open(path, encoding="utf-8") as f:
                    conf = sge_conf.parse(strip_header(f.read()), path, name=name)
                if name != "global" and conf.get("execd_params") is None:
                    continue
                return conf.execd_params
            except (OSError, ValueError) as e:
                if name == "global" and not isinstance(e, FileNotFoundError):
                    log.warning("cannot read execd_params from %s: %s", path, e)
                continue
        return {}

    def current(self) -> Params:
        """The parameters in force, read again when a configuration file changed;
        a change that brings parameters minisge does not act on is logged."""
        stamp = self._stamps()
        if stamp != self.stamp:
            self.stamp = stamp
            params = self._read()
            ignored = not_honoured(params)
            if params != self.params and ignored:
                log.warning("execd_params %s: not supported by minisge's execd, without effect",
                            ", ".join(ignored))
            self.params = params
        return self.params

    @property
    def keep_active(self) -> bool:
        """``KEEP_ACTIVE``: keep the directory of an ended task."""
        return bool(self.current().get("KEEP_ACTIVE", False))
