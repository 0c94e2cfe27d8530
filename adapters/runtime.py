"""`paperclub serve`: one process that runs the chat adapters and the scheduler.

    paperclub serve                  every platform whose credentials are set
    paperclub serve slack            Slack only (the Procfile's web: add --no-scheduler)
    paperclub serve discord          Discord (the Procfile's worker, with the scheduler)
    paperclub serve --scheduler-only the scheduler alone (a Slack-only deployment's worker)

The platforms are those of the registry (adapters/platforms.py); nothing here names one.
The scheduler posts to every configured platform, whichever apps this process serves,
where the platform can post from elsewhere: Slack posts need only a bot token, so the
Discord worker's scheduler posts Slack's paper of the day too, and the web processes can
scale out without one.

SIGTERM (a deploy, a daily restart) and Ctrl-C stop it gracefully: no new request is
taken, `add` lines waiting on pages answer at once that paperclub stopped before it
could finish, the post in flight finishes, posts not yet started are released for the
next process (bot/services/posts.py), answers in flight get a few seconds, then the process
exits 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters import platforms
from adapters.config_check import startup_settings
from adapters.platforms import Platform
from adapters.wsgi import (
    HEALTH_PATH,
    HealthServer,
    json_endpoint,
    listening,
    os_reason,
    pages_endpoint,
)
from bot.app import Services, utc_now
from bot.core import DATABASE_UNAVAILABLE
from bot.corpus.feeds import JOB_PREFIX as FEED_JOB_PREFIX
from bot.corpus.feeds import sync_jobs
from bot.corpus.fetch import Fetcher
from bot.ops.defaults import DEFAULT_HOST
from bot.ops.health import health_report
from bot.ops.heartbeats import Heartbeats
from bot.ops.settings import ConfigError
from bot.scheduler import Deliveries, add_provider_jobs, start_background, tick_job

log = logging.getLogger(__name__)

# Heroku-style hosts send SIGTERM and SIGKILL 30 s later: the steps below fit in that.
SCHEDULER_STOP_SECONDS = 20.0
ANSWERS_STOP_SECONDS = 5.0
# How often the scheduler re-reads the feeds table (`paperclub feed add` elsewhere).
FEED_SYNC_MINUTES = 5


@dataclass
class Process:
    """What runs, and how it stops. Each part has start() and stop()."""

    services: Services
    scheduler_on: bool
    tick_seconds: int = 60
    address: str = DEFAULT_HOST  # what $PORT is listened on (PAPERCLUB_HOST, serve --host)
    stop: threading.Event = field(default_factory=threading.Event)
    problem: str | None = None
    deliveries: dict[str, Callable] = field(default_factory=dict)
    apps: dict[str, Any] = field(default_factory=dict)  # platform name -> its app (platforms.Served)
    health: Any = None
    scheduler: Any = None

    def request_stop(self, problem: str | None = None) -> None:
        if problem and not self.stop.is_set():
            self.problem = problem
        self.stop.set()

    def health_endpoint(self):
        beats = Heartbeats(self.services.db)
        s = self.services

        def report() -> tuple[bool, dict]:
            healthy, data = health_report(s.db, s.library, s.search, beats, utc_now())
            for name, state in self.links().items():
                data[name] = state
                if not state.get("ok", True) and data["status"] == "ok":
                    data["status"] = "degraded"  # the client reconnects by itself: no restart
            return healthy, data

        return json_endpoint(report)

    def links(self) -> dict[str, dict]:
        """What each app with a link of its own (Slack's Socket Mode) says about it."""
        states = {}
        for name, app in self.apps.items():
            health = getattr(app, "health", None)
            state = health() if health is not None else None
            if state is not None:
                states[name] = state
        return states

    def routes(self) -> dict:
        """/healthz, and beside it the features' pages (their plugins' routes: the channels'
        archive pages and calendar feeds)."""
        s = self.services
        pages = {}
        for plugin, feature in zip(s.plugins, s.features, strict=True):
            for route in plugin.routes:
                pages[route.prefix] = pages_endpoint(feature.page)
        return {HEALTH_PATH: self.health_endpoint(), **pages}


def serve(
    services: Services,
    requested: list[str],
    scheduler: bool = True,
    apps: bool = True,
    env: Mapping[str, str] | None = None,
    host: str | None = None,
) -> int:
    """Run until SIGTERM/SIGINT; 0 after a clean stop, 1 when a part failed. `host`
    (`serve --host`) wins over PAPERCLUB_HOST."""
    env = os.environ if env is None else env
    core, configured = startup_settings(env, requested)  # one ConfigError listing every problem
    process = Process(services, scheduler, core.tick_seconds, address=host or core.host)
    served = [p for p in platforms.chat_platforms()
              if apps and configured[p.name] is not None and (not requested or p.name in requested)]
    if not (served or scheduler):
        raise ConfigError("nothing to run: no chat app is configured (see `paperclub config check`) "
                          "and --no-scheduler leaves out the scheduler")
    _build(process, served, configured, env)
    if apps and not served:
        log.warning("%s", nothing_to_serve())
    services.search.warm()  # the index and the compiled loops now, not inside the first 3-second ack
    _install_signals(process)
    try:
        _start(process)
        log.info("paperclub serving %s%s", ", ".join(_parts(process)) or "nothing",
                 f"; scheduler for {', '.join(process.deliveries)}" if process.scheduler else "; no scheduler")
        while not process.stop.wait(1.0):
            pass
    finally:
        _shut_down(process)
    if process.problem:
        print(f"error: {process.problem}", file=sys.stderr)
        return 1
    return 0


def nothing_to_serve() -> str:
    """The line `serve` logs when no chat platform is configured: what to set. It still
    runs the scheduler (console channels), as `serve --help` promises."""
    wants = "; ".join(f"{p.title}: {p.needs}" for p in platforms.chat_platforms())
    return (f"nothing to serve: no chat platform is configured ({wants}); see docs/deploying.md. "
            "Running the scheduler alone, for console channels")


def _build(process: Process, served: list[Platform], configured: Mapping[str, Any],
           env: Mapping[str, str]) -> None:
    """Each platform served gets its app; each other one configured, its delivery for the
    scheduler when it has one; no chat delivery at all: the scheduler posts console channels."""
    services = process.services
    unposted: list[str] = []  # configured, not served here, and reachable only from where it is
    for platform in platforms.chat_platforms():
        settings = configured[platform.name]
        if platform in served:
            app = platform.serve(services, settings, process)
            process.apps[platform.name] = app
            process.deliveries[platform.name] = app.delivery
        elif settings is not None and process.scheduler_on:
            if platform.deliver is not None:
                process.deliveries[platform.name] = platform.deliver(services, settings)
            else:
                unposted.append(platform.title)
    if not process.deliveries:
        console = platforms.CONSOLE
        process.deliveries[console.name] = console.deliver(services, None)  # console channels
    for title in unposted:
        log.warning("%s is configured but not served here: this scheduler posts to %s only", title,
                    ", ".join(platforms.titles(list(process.deliveries))))
    # Slack answers $PORT over HTTP, not over Socket Mode: its app has the last word.
    on_port = any(p.answers_port and getattr(process.apps[p.name], "answers_port", True) for p in served)
    if not on_port and env.get("PORT", "").strip().isdigit():
        process.health = _health_server(process.address, int(env["PORT"]), process.routes())


# Start-up failures the operator fixes (a port taken, Slack out of reach) become one
# ConfigError line naming the setting, instead of a traceback from deep in a library.


def _health_server(address: str, port: int, routes: dict) -> HealthServer:
    try:
        return HealthServer(port, routes.pop(HEALTH_PATH), routes, host=address)
    except OSError as problem:
        raise ConfigError(f"{listening(address, port)}: cannot listen there ({os_reason(problem)})") from None


def _parts(process: Process) -> list[str]:
    return platforms.titles(list(process.apps)) + (["/healthz"] if process.health is not None else [])


def _install_signals(process: Process) -> None:
    def on_signal(number, _frame):
        log.info("%s: shutting down (the post in flight finishes, the rest stay due)",
                 signal.Signals(number).name)
        process.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def _start(process: Process) -> None:
    if process.health is not None:
        process.health.start()
    for app in process.apps.values():
        app.start()
    if process.scheduler_on:
        deliveries = Deliveries(process.deliveries)
        services = process.services
        job = tick_job(services.core, utc_now, deliveries, deliveries.platforms, process.stop,
                       Heartbeats(services.db))
        process.scheduler = start_background(job, process.tick_seconds, run_now=True)
        add_provider_jobs(process.scheduler, services.core, utc_now, process.stop, process.tick_seconds,
                          run_now=True)
        _schedule_feeds(process.scheduler, services)
        _schedule_embedding(process.scheduler, services, process.stop)


def _schedule_embedding(scheduler, services: Services, stop: threading.Event) -> None:
    """New papers' vectors, made in the background beside the tick (never holding it)."""
    from bot.corpus.embedded import StoredVectors
    from bot.search.backfill import BACKGROUND_MINUTES, background_job, background_model
    from bot.search.embedding import EmbeddingConfig

    config = EmbeddingConfig.from_env()
    if not config.enabled:
        return
    job = background_job(StoredVectors(services.db), lambda: background_model(config), stop)
    scheduler.add_job(job, "interval",
                      minutes=BACKGROUND_MINUTES, id="paperclub-embed", coalesce=True, max_instances=1,
                      replace_existing=True, next_run_time=utc_now())


def _schedule_feeds(scheduler, services: Services) -> None:
    """The scheduled corpus refreshes, kept in step with the feeds table."""

    scheduled: list[str] = []

    def sync() -> None:
        try:
            jobs = sync_jobs(scheduler, services)
        except DATABASE_UNAVAILABLE as problem:
            log.warning("feeds not re-read: the database is unreachable (%s)", type(problem).__name__)
            return
        if jobs != scheduled:  # say so when `paperclub feed` changed the set
            scheduled[:] = jobs
            names = ", ".join(job.removeprefix(FEED_JOB_PREFIX) for job in jobs) or "none"
            log.info("scheduled feed refreshes: %s", names)

    sync()
    scheduler.add_job(sync, "interval", minutes=FEED_SYNC_MINUTES, id="paperclub-feed-sync",
                      coalesce=True, max_instances=1, replace_existing=True)


def _shut_down(process: Process) -> None:
    process.stop.set()  # the tick starts no further post from here
    for app in process.apps.values():
        app.stop_accepting()
    process.services.core.stop()  # adds waiting on pages answer now instead of at their deadline
    Fetcher.stop_all()  # provider fetches in flight (follows, feeds) are cut and end their jobs
    if process.scheduler is not None:
        # The tick in flight finishes its current post (Discord's loop is still up for it).
        waiter = threading.Thread(target=process.scheduler.shutdown, kwargs={"wait": True}, daemon=True)
        waiter.start()
        waiter.join(SCHEDULER_STOP_SECONDS)
        if waiter.is_alive():
            log.error("the tick did not finish within %.0f s; its post in flight stays claimed",
                      SCHEDULER_STOP_SECONDS)
    for app in process.apps.values():
        app.stop(ANSWERS_STOP_SECONDS)
    if process.health is not None:
        process.health.stop()
    process.services.db.dispose()
    log.info("paperclub stopped")
