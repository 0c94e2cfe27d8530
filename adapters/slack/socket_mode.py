"""Slack over Socket Mode in `paperclub serve`: no public URL, no TLS proxy, the app's
own websocket to Slack (a lab's own workspace behind a firewall).

bolt's `SocketModeHandler` is slack_sdk's built-in client (no other dependency). It
reconnects by itself: a `disconnect` message from Slack (a refresh) opens a new
connection at once, and a monitor checks the connection every `ping_interval` seconds
(ping frames; no pong for four intervals is a dead link) and opens a new one, asking
apps.connections.open for a fresh URL each time.

Slack spreads the events of an app over all its open connections, so a second process
with the same app token would get some of the commands. Processes sharing a database
take turns instead: `HeldLink` opens the link only while this process holds a lease in
the database (bot/ops/leases.py); the others wait and one takes over within
`RENEW_SECONDS` of a clean stop, or `STALE_AFTER` after the holder died. A process
outside the lease (another database, the same token) shows in Slack's hello, which
counts the open connections: more than this one on a first link is a warning.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from slack_bolt import App
from slack_sdk.errors import SlackApiError

from adapters.slack.delivery import error
from adapters.slack.edge import CheckedSocketModeHandler
from bot.core import DATABASE_UNAVAILABLE
from bot.ops.leases import Lease
from bot.ops.settings import ConfigError
from store.database import as_utc

log = logging.getLogger(__name__)

PING_SECONDS = 10.0  # bolt's default: a dead link is noticed within about 40 s
LEASE_NAME = "slack-socket-mode"
RENEW_SECONDS = 10.0  # the holder renews its lease; the others try to take it
STALE_AFTER = timedelta(seconds=45)  # a lease not renewed for this long: its holder is gone


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
                    "SLACK_APP_TOKEN gets some of the commands; run one (docs/deploying.md)", count)
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


class HeldLink:
    """The link, open only while this process holds the lease: taken at start or later
    (a takeover), given up when another process took it (this one missed its renewals)
    and let go at a clean stop so a waiting process takes over at once."""

    def __init__(self, open_link: Callable[[], SocketMode], lease: Lease, clock: Callable[[], datetime],
                 renew_seconds: float = RENEW_SECONDS):
        self.open_link = open_link
        self.lease = lease
        self.clock = clock
        self.renew_seconds = renew_seconds
        self.link: SocketMode | None = None
        self._stop = threading.Event()
        self._keeper = threading.Thread(target=self._keep, name="slack-socket-lease", daemon=True)

    def start(self) -> None:
        """Open the link if the lease is free (a refused token is a ConfigError), else wait."""
        if self.lease.take(self.clock()):
            self._open()
        else:
            log.info("Slack over Socket Mode: standing by, %s holds the link; this process takes over "
                     "when it stops", self._holder())
        self._keeper.start()

    def _keep(self) -> None:
        while not self._stop.wait(self.renew_seconds):
            self._round()

    def _round(self) -> None:
        try:
            held = self.lease.take(self.clock())
        except DATABASE_UNAVAILABLE as problem:  # nobody can take it meanwhile: keep things as they are
            log.warning("Socket Mode lease not renewed: the database is unreachable (%s)", type(problem).__name__)
            return
        if held and self.link is None:
            log.info("Slack over Socket Mode: taking over the link")
            try:
                self._open()
            except ConfigError as problem:  # kept: tried again next round
                log.error("%s", problem)
        elif not held and self.link is not None:
            log.warning("Slack over Socket Mode: %s took the link over (this process missed its renewals); "
                        "closing this one", self._holder())
            self.link.close()
            self.link = None

    def _open(self) -> None:
        link = self.open_link()
        try:
            link.connect()
        except ConfigError:
            link.close()
            raise
        self.link = link

    def _holder(self) -> str:
        beat = self.lease.holder()
        return "nobody" if beat is None else f"{beat.host} (pid {beat.pid})"

    def health(self) -> dict[str, Any]:
        if self.link is not None:
            return self.link.health()
        try:
            beat = self.lease.holder()
        except DATABASE_UNAVAILABLE:  # /healthz says so already (503)
            return {"mode": "socket", "ok": False, "status": "standby", "holder": "unknown: no database"}
        age = None if beat is None else (self.clock() - as_utc(beat.at)).total_seconds()
        fresh = age is not None and age <= STALE_AFTER.total_seconds()
        holder = None if beat is None else {"host": beat.host, "pid": beat.pid, "age_seconds": round(age or 0)}
        return {"mode": "socket", "ok": fresh, "status": "standby", "holder": holder}

    def close(self) -> None:
        self._stop.set()
        if self._keeper.is_alive():
            self._keeper.join(self.renew_seconds + 5)
        if self.link is not None:
            self.link.close()
            self.link = None
        try:
            self.lease.release()
        except DATABASE_UNAVAILABLE:  # it goes stale by itself
            pass
