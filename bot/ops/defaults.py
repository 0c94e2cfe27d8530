"""Where paperclub listens and where its database setting comes from: the names and
defaults the command line prints in its help and its error lines. Kept apart from the
settings models (pydantic, SQLAlchemy) so that `paperclub --help` imports neither."""

from __future__ import annotations

import ipaddress
import re

DEFAULT_HOST = "0.0.0.0"  # every interface, as hosts that route to $PORT expect
DATABASE_VARIABLES = ("PAPERCLUB_DATABASE_URL", "DATABASE_URL")
# Where the database URL came from when neither variable is set, for messages.
DEFAULT_DATABASE_SOURCE = "the default database (neither PAPERCLUB_DATABASE_URL nor DATABASE_URL is set)"

_HOST_NAME = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$")


def listen_host(raw: str) -> str:
    """PAPERCLUB_HOST or `serve --host`: an IP address or a host name to listen on;
    ValueError saying what to give otherwise."""
    text = raw.strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if len(text) <= 253 and _HOST_NAME.match(text):
        return text
    raise ValueError(f"{raw!r} is not an IP address or host name: use e.g. 127.0.0.1 (this machine only) "
                     f"or {DEFAULT_HOST} (every interface)")
