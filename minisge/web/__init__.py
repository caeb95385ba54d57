"""minisge web: a live, read-only web view of a running cell (README.md
maps the package).  This file holds the defaults the ``minisge`` command
shows and passes, and imports nothing: the command loads it without trio."""

#: minisge web's port: beside Grid Engine's registered 6444 (sge_qmaster) and
#: 6445 (sge_execd), above 1024 so that any user may run it, and none of the
#: ports development servers take (8000, 8080, 5000)
DEFAULT_PORT = 6464
#: loopback only: the users are the local users (minisge.web.identity)
DEFAULT_BIND = "127.0.0.1"


def port_number(text: str) -> int:
    """``--port``: a TCP port, 0 (any free one) to 65535 (ValueError else: argparse says it)."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise ValueError(text)
    return port
