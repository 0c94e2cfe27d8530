"""Slack over Socket Mode in `paperclub serve`: no public URL, no TLS proxy, the app's
own websocket to Slack (a lab's own workspace behind a firewall).

bolt's `SocketModeHandler` is slack_sdk's built-in client (no other dependency). It
reconnects by itself: a `disconnect` message from Slack (a refresh) opens a new
connection at once, and a monitor checks the connection every `ping_interval` seconds
(ping frames; no pong for four intervals is a dead link) and opens a new one, asking
apps.connections.open for a fresh URL each time.

Slack spreads the events of an app over all its open connections, so a second process
with the same app token gets some of the commands. Slack's hello says how many are
open: more than this one on the first connection is logged as a warning naming the
cause (docs/deploy.md: run one Socket Mode process).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from adapters.slack.delivery import error
from adapters.slack.edge import CheckedSocketModeHandler
from bot.ops.settings import ConfigError

log = logging.getLogger(__name__)

PING_SECONDS = 10.0  # bolt's default: a dead link is noticed within about 40 s


class SocketMode:
    """The connection, its reconnections, and what /healthz says about it."""

    def __init__(self, app: App, app_token: str, ping_interval: float = PING_SECONDS):
        self.handler = CheckedSocketModeHandler(app, app_token, ping_interval=ping_interval)
        self.handler.client.message_listeners.append(self._on_message)
        self.hellos = 0
        self.connections: int | None = None  # what Slack's last hello counted

    def connect(self) -> None:
        """Open the connection; a token Slack refuses is a ConfigError naming it. A link
        that does not open at once is retried by the client's monitor."""
        try:
            self.handler.connect()
        except SlackApiError as problem:
            raise ConfigError(
                f"Socket Mode could not connect ({error(problem)}): SLACK_APP_TOKEN must be an "
                "app-level token with connections:write, and Socket Mode must be on in the app's "
                "settings"
            ) from None

    def _on_message(self, _client: Any, message: dict, _raw: str | None) -> None:
        if message.get("type") != "hello":
            return
        count = message.get("num_connections")
        first, self.hellos = self.hellos == 0, self.hellos + 1
        self.connections = count if isinstance(count, int) else None
        if isinstance(count, int) and count > 1:
            # On a reconnection the old link may still be counted; on the first, another process is there.
            log.log(logging.WARNING if first else logging.INFO,
                    "Slack counts %d Socket Mode connections for this app: another process with this "
                    "SLACK_APP_TOKEN gets some of the commands; run one (docs/deploy.md)", count)
        else:
            log.info("Slack over Socket Mode: connected (%s)", "first link" if first else "reconnected")

    @property
    def connected(self) -> bool:
        return self.handler.client.is_connected()

    def health(self) -> dict[str, Any]:
        """For /healthz: `ok` false while the link is down (the client is reconnecting)."""
        return {"mode": "socket", "ok": self.connected,
                "status": "connected" if self.connected else "reconnecting",
                "connections": self.connections, "hellos": self.hellos}

    def close(self) -> None:
        self.handler.close()
