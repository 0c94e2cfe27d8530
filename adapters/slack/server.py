"""Slack in `paperclub serve` (adapters/runtime.py): the app over HTTP on $PORT (waitress, a
production WSGI server, with the serving process's /healthz and pages beside it) or, with
SLACK_APP_TOKEN, over Socket Mode (adapters/slack/socket_mode.py: no public URL; /healthz
and the pages are then the serving process's own server). Either way a request passes
adapters/slack/edge.py first (signature on the raw bytes, a readable body, once per id).

`SlackServer` is Slack's `Served` (adapters/platforms.py): start, stop taking requests,
then let the answers in flight finish.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from waitress import wasyncore

from adapters.debounce import Debouncer
from adapters.replies import LATER_THREADS
from adapters.slack.config import EVENTS_PATH, SlackSettings
from adapters.slack.delivery import SlackDelivery
from adapters.slack.edge import SignedOnly, WholeForms
from adapters.slack.listeners import build_app
from adapters.slack.socket_mode import (
    LEASE_NAME,
    PING_SECONDS,
    RENEW_SECONDS,
    STALE_AFTER,
    HeldLink,
    SocketMode,
)
from bot.app import Services, utc_now
from bot.ops.defaults import DEFAULT_HOST
from bot.ops.leases import Lease
from bot.ops.settings import ConfigError

log = logging.getLogger(__name__)

HTTP_THREADS = 8
LISTENER_THREADS = 16  # bolt runs each ack and lazy listener on this pool, beside the HTTP thread


class SlackServer:
    """Slack in `paperclub serve`: HTTP on $PORT (waitress, a production WSGI server,
    with `extra` answering other paths such as /healthz), or Socket Mode when
    SLACK_APP_TOKEN is set (one process holds the link; `health` says how it is)."""

    def __init__(self, services: Services, settings: SlackSettings, extra: dict | None = None,
                 address: str = DEFAULT_HOST, ping_interval: float = PING_SECONDS,
                 renew_seconds: float = RENEW_SECONDS):
        self.settings = settings
        self.executor = ThreadPoolExecutor(LISTENER_THREADS, "slack-listener")
        self.later = ThreadPoolExecutor(LATER_THREADS, "slack-later")
        self.redraws = Debouncer()
        self.app, clients = build_app(services, settings, self.executor, self.redraws, self.later)
        self.delivery = SlackDelivery(clients)
        self.extra = extra or {}
        self.address = address  # what the HTTP server listens on
        self._server = None
        self._loop: threading.Thread | None = None
        self._socket_mode: HeldLink | None = None
        self.db = services.db  # Socket Mode's lease
        self.ping_interval = ping_interval  # Socket Mode's check of its link
        self.renew_seconds = renew_seconds  # and of its lease

    @property
    def answers_port(self) -> bool:
        """Over HTTP it answers $PORT (with /healthz beside); over Socket Mode it does not,
        and the serving process runs /healthz on its own."""
        return not self.settings.app_token

    def health(self) -> dict | None:
        """The Socket Mode link's state for /healthz (None over HTTP: answering is the proof)."""
        return None if self._socket_mode is None else self._socket_mode.health()

    def start(self) -> None:
        if self.settings.app_token:
            self._start_socket_mode()
        else:
            self._start_http()

    def _start_socket_mode(self) -> None:
        token = self.settings.app_token
        assert token is not None
        self._socket_mode = HeldLink(lambda: SocketMode(self.app, token, self.ping_interval),
                                     Lease(self.db, LEASE_NAME, STALE_AFTER), utc_now, self.renew_seconds)
        self._socket_mode.start()
        log.info("Slack over Socket Mode: no public URL needed; one process at a time holds the link")

    def _start_http(self) -> None:
        import waitress

        from adapters.wsgi import listening, route

        slack = SignedOnly(WholeForms(self.app, EVENTS_PATH), self.settings.signing_secret)
        app = route(slack, self.extra)
        port = self.settings.port
        try:
            self._server = waitress.create_server(
                app, host=self.address, port=port, threads=HTTP_THREADS, ident="paperclub"
            )
        except OSError as problem:
            raise ConfigError(f"{listening(self.address, port)}: cannot listen there ({problem.strerror})") from None
        self._loop = threading.Thread(target=self._server.run, name="slack-http", daemon=True)
        self._loop.start()
        log.info("Slack over HTTP on port %d of %s: requests at %s", port, self.address, EVENTS_PATH)

    def stop_accepting(self) -> None:
        """First step of a shutdown: no new requests (the load balancer moves on)."""
        if self._server is not None:
            self._in_loop(lambda: wasyncore.dispatcher.close(self._server))  # the listening socket only
        if self._socket_mode is not None:
            self._socket_mode.close()

    def _in_loop(self, change: Callable[[], None]) -> None:
        """Run `change` in waitress's loop thread: closing its sockets from another
        thread races a request still being answered (select on a closed descriptor)."""
        try:
            self._server.trigger.pull_trigger(change)
        except OSError:  # the loop has closed everything already
            pass

    def stop(self, timeout: float) -> None:
        """Let the requests and lazy answers in flight finish, up to `timeout` seconds."""
        self.stop_accepting()
        self.redraws.flush()  # posts waiting for their redraw show their last reactions
        if self._server is not None:
            self._server.task_dispatcher.shutdown(cancel_pending=False, timeout=timeout)
            self._in_loop(lambda: wasyncore.close_all(self._server._map))  # the loop ends with its map
            self._loop.join(timeout)
        waiter = threading.Thread(target=self._shut_pools, daemon=True)
        waiter.start()
        waiter.join(timeout)
        if waiter.is_alive():
            log.warning("Slack answers still running after %.0f s; leaving them", timeout)

    def _shut_pools(self) -> None:
        """Answers queued after the ack still run (an `add` then answers at once that
        paperclub stopped: the core was told), and every answer under way ends."""
        self.later.shutdown(wait=True)
        self.executor.shutdown(wait=True)
