"""The scheduler: one APScheduler job that runs the core's tick every minute, and beside
it a job per feature whose work waits on providers (follows, Zotero), so a provider that
stalls holds only its own work, never the minute's posts.

One scheduler per deployment (APScheduler job stores must never be shared), and the
claims in the database keep posts exactly-once even if that rule is broken. The tick
posts to every platform it has a delivery for, so one scheduler serves Slack and
Discord alike, and writes a heartbeat that /healthz reports from any process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.core import DATABASE_UNAVAILABLE, PaperClub
from bot.feature import Step, TickReport
from bot.messages import ChannelRef, Deliver, Reply
from bot.ops.heartbeats import SCHEDULER, Heartbeats
from bot.ops.logs import event

log = logging.getLogger(__name__)

# A tick that starts up to 50 s late still runs (the claims make a late or doubled
# tick harmless); missed ticks collapse into one; never two ticks at once.
MISFIRE_GRACE_SECONDS = 50
TICK_JOB = "paperclub-tick"
PROVIDER_JOB_PREFIX = "paperclub-providers-"


class Deliveries:
    """`Deliver` for several platforms: each post goes to its channel's platform."""

    def __init__(self, by_platform: Mapping[str, Deliver]):
        self.by_platform = dict(by_platform)

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(self.by_platform)

    def __call__(self, channel: ChannelRef, reply: Reply) -> str | None:
        return self.by_platform[channel.platform](channel, reply)


def tick_job(
    core: PaperClub,
    clock: Callable[[], datetime],
    deliver: Deliver,
    platforms: Iterable[str],
    stop: threading.Event | None = None,
    beats: Heartbeats | None = None,
) -> Callable[[], None]:
    """The job: one tick, never raising (APScheduler would log a traceback a minute
    while the database is down); `stop` set means a shutdown: post nothing new."""
    platforms = tuple(platforms)
    stop = stop or threading.Event()

    def run() -> None:
        if stop.is_set():
            return
        started = time.perf_counter()
        now = clock()
        try:
            report = core.tick(now, deliver, platforms, stopping=stop.is_set, providers=False)
            if beats is not None:
                beats.beat(SCHEDULER, now, _summary(report))
        except DATABASE_UNAVAILABLE as problem:
            log.warning("tick skipped: the database is unreachable (%s); the next tick retries",
                        type(problem).__name__)
            return
        except Exception:  # one bad tick must not stop the next
            log.exception("tick failed; the next tick retries")
            return
        if report.any():
            event(log, "tick", **report.flat(), ms=(time.perf_counter() - started) * 1000)

    return run


def provider_job(name: str, step: Step, clock: Callable[[], datetime],
                 stop: threading.Event) -> Callable[[], None]:
    """One feature's work that waits on providers (follows, Zotero), as a job beside the
    tick: a stuck provider holds this job, never the minute's posts. Never raises."""

    def run() -> None:
        if stop.is_set():
            return
        started = time.perf_counter()
        try:
            counts = step(clock(), stop.is_set)
        except DATABASE_UNAVAILABLE as problem:
            log.warning("%s skipped: the database is unreachable (%s); the next run retries",
                        name, type(problem).__name__)
            return
        except Exception:  # one bad run must not stop the next
            log.exception("%s failed; the next run retries", name)
            return
        if counts:
            event(log, name, **counts, ms=(time.perf_counter() - started) * 1000)

    return run


def add_provider_jobs(scheduler: BaseScheduler, core: PaperClub, clock: Callable[[], datetime],
                      stop: threading.Event, seconds: int = 60, run_now: bool = False) -> list[str]:
    """A job per feature with provider work, each on the tick's period, one run at a time
    (a run still going when the next is due: the next is skipped, not queued), the first
    at once with `run_now`; the jobs' ids."""
    ids = []
    for name, step in core.provider_steps().items():
        job_id = f"{PROVIDER_JOB_PREFIX}{name}"
        scheduler.add_job(provider_job(name, step, clock, stop), tick_trigger(seconds), id=job_id,
                          misfire_grace_time=MISFIRE_GRACE_SECONDS, coalesce=True, max_instances=1,
                          replace_existing=True,
                          **({"next_run_time": datetime.now(timezone.utc)} if run_now else {}))
        ids.append(job_id)
    return ids


def _summary(report: TickReport) -> str:
    return " ".join(f"{k}={v}" for k, v in report.flat().items() if v) or "nothing due"


def tick_trigger(seconds: int = 60) -> BaseTrigger:
    # Every minute on the minute, so "09:00" posts at 09:00:00; other periods (tests,
    # demos) are plain intervals.
    if seconds == 60:
        return CronTrigger(second=0, timezone=timezone.utc)
    return IntervalTrigger(seconds=seconds, timezone=timezone.utc)


def add_tick(
    scheduler: BaseScheduler, job: Callable[[], None], seconds: int = 60, run_now: bool = False
) -> None:
    """The tick job; with `run_now` the first tick runs at once, so a restarted process
    catches up on what came due while it was down without waiting for the minute."""
    scheduler.add_job(
        job,
        tick_trigger(seconds),
        id=TICK_JOB,
        misfire_grace_time=MISFIRE_GRACE_SECONDS,
        coalesce=True,
        max_instances=1,
        replace_existing=True,
        **({"next_run_time": datetime.now(timezone.utc)} if run_now else {}),
    )


def start_background(job: Callable[[], None], seconds: int = 60, run_now: bool = False) -> BackgroundScheduler:
    """The scheduler in a thread, beside the adapters' servers and event loops."""
    scheduler = BackgroundScheduler(timezone="UTC")
    add_tick(scheduler, job, seconds, run_now)
    scheduler.start()
    return scheduler

