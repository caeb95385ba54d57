"""sge_conf(5) ``load_sensor``: site programs that report load values.

The execd starts each configured program once and keeps it running; at
every load report it writes a line to the sensor's standard input, and the
sensor answers (sge_execd(8), ``execd/sge_load_sensor.c``)::

    begin
    host:name:value
    ...
    end

``host`` is the execd's host (or ``global``); a value reported by a sensor
replaces the execd's own value of that name.  On shutdown the execd writes
``quit``.  The host-local configuration's ``load_sensor`` wins over the
global one; a change takes effect at the next report (the sensor is
restarted), as is a sensor that died.

The pure part (:func:`parse_report`, :func:`configured_sensors`) comes
first; :class:`LoadSensors` runs the programs with trio, owned by the
execd's nursery-held report loop.
"""

from __future__ import annotations

import logging
import os
import subprocess

import trio

from minisge.formats import sge_conf
from minisge.formats.lines import strip_header

log = logging.getLogger("minisge.load_sensor")

READ_TIMEOUT = 5.0  # seconds a sensor may take to answer


def parse_report(lines: list[str], host: str) -> dict[str, str]:
    """The values for ``host`` in one sensor answer (the lines between
    ``begin``/``start`` and ``end``); lines for other hosts, ``global`` and
    malformed lines are left out (minisge keeps no global load)."""
    out: dict[str, str] = {}
    for line in lines:
        parts = line.strip().split(":", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        h, name, value = parts
        if h.lower() == host.lower():
            out[name] = value
    return out


def configured_sensors(common_dir: str, host: str) -> tuple[str, ...]:
    """The ``load_sensor`` programs for ``host``: its local configuration's
    (``common/local_conf/<host>``) when set there, else the global one's."""
    for path, name in ((os.path.join(common_dir, "local_conf", host), host),
                       (os.path.join(common_dir, "configuration"), "global")):
        try:
            with open(path, encoding="utf-8") as f:
                conf = sge_conf.parse(strip_header(f.read()), path, name=name)
        except (OSError, ValueError):
            continue
        if conf.get("load_sensor") is not None or name == "global":
            return conf.load_sensor
    return ()


class Sensor:
    """One running load sensor program."""

    def __init__(self, command: str):
        self.command = command
        self.proc: trio.Process | None = None
        self.buffer = b""

    async def start(self) -> None:
        self.proc = await trio.lowlevel.open_process(
            [self.command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            start_new_session=True)

    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def ask(self) -> list[str] | None:
        """One report: the lines between begin and end, None when the sensor fails."""
        p = self.proc
        if p is None or p.returncode is not None or p.stdin is None or p.stdout is None:
            return None
        try:
            await p.stdin.send_all(b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return None
        lines: list[str] = []
        started = False
        with trio.move_on_after(READ_TIMEOUT):
            while True:
                while b"\n" not in self.buffer:
                    chunk = await p.stdout.receive_some(4096)
                    if not chunk:
                        return None
                    self.buffer += chunk
                raw, self.buffer = self.buffer.split(b"\n", 1)
                line = raw.decode("utf-8", "replace").strip()
                if line in ("begin", "start"):
                    started, lines = True, []
                elif line == "end":
                    if started:
                        return lines
                elif started:
                    lines.append(line)
        return None

    async def stop(self) -> None:
        """``quit`` (sge_execd(8)); killed when it does not end within 2 s."""
        p = self.proc
        self.proc = None
        if p is None or p.returncode is not None:
            return
        if p.stdin is not None:
            try:
                await p.stdin.send_all(b"quit\n")
                await p.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
                log.warning("load sensor %s did not take quit: %s", self.command, e)
        with trio.move_on_after(2.0):
            await p.wait()
            return
        p.kill()
        with trio.move_on_after(2.0):
            await p.wait()


class LoadSensors:
    """The running sensors of one execd; :meth:`read` follows the configuration."""

    def __init__(self, common_dir: str, host: str):
        self.common = common_dir
        self.host = host
        self.sensors: dict[str, Sensor] = {}

    async def read(self) -> dict[str, str]:
        """Ask every configured sensor; (re)start those new or dead, stop those removed."""
        wanted = configured_sensors(self.common, self.host)
        for cmd in [c for c in self.sensors if c not in wanted]:
            await self.sensors.pop(cmd).stop()
        values: dict[str, str] = {}
        for cmd in wanted:
            s = self.sensors.get(cmd)
            if s is None or not s.running():
                if s is not None:
                    await s.stop()
                s = self.sensors[cmd] = Sensor(cmd)
                try:
                    await s.start()
                except OSError as e:
                    log.warning("cannot start load sensor %s: %s", cmd, e)
                    del self.sensors[cmd]
                    continue
            lines = await s.ask()
            if lines is None:
                log.warning("load sensor %s did not answer", cmd)
                await s.stop()
                continue
            values.update(parse_report(lines, self.host))
        return values

    async def aclose(self) -> None:
        for s in list(self.sensors.values()):
            await s.stop()
        self.sensors.clear()
