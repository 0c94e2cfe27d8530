"""The scheduler: one APScheduler job that runs the daily-post tick every minute.

One scheduler per deployment (APScheduler job stores must never be shared), and the
claims in the database keep posts exactly-once even if that rule is broken.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import BaseScheduler
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from bot.core import PaperClub
from bot.daily import Deliver

log = logging.getLogger(__name__)

# A tick that starts up to 50 s late still runs (the claims make a late or doubled
# tick harmless); missed ticks collapse into one; never two ticks at once.
MISFIRE_GRACE_SECONDS = 50


def tick_job(core: PaperClub, clock: Callable[[], datetime], deliver: Deliver, platforms: Iterable[str]):
    platforms = tuple(platforms)

    def run() -> None:
        report = core.tick(clock(), deliver, platforms)
        if report.posted or report.failed or report.skipped or report.empty or report.polls_closed:
            log.info(
                "tick: %d posted, %d empty, %d failed, %d skipped, %d polls closed",
                len(report.posted), len(report.empty), len(report.failed), len(report.skipped),
                report.polls_closed,
            )

    return run


def add_tick(scheduler: BaseScheduler, job: Callable[[], None]) -> None:
    scheduler.add_job(
        job,
        CronTrigger(second=0),  # the top of every minute, in UTC
        id="paperclub-tick",
        misfire_grace_time=MISFIRE_GRACE_SECONDS,
        coalesce=True,
        max_instances=1,
        replace_existing=True,
    )


def start_background(job: Callable[[], None]) -> BackgroundScheduler:
    """The scheduler in a thread, beside an adapter's own server or event loop."""
    scheduler = BackgroundScheduler(timezone="UTC")
    add_tick(scheduler, job)
    scheduler.start()
    return scheduler


def run_forever(job: Callable[[], None]) -> None:
    scheduler = BlockingScheduler(timezone="UTC")
    add_tick(scheduler, job)
    scheduler.start()
