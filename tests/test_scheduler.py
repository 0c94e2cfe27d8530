"""The APScheduler job: configured on purpose, and running the tick."""

from __future__ import annotations

from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler

from bot.scheduler import MISFIRE_GRACE_SECONDS, add_tick, tick_job


class FakeCore:
    def __init__(self):
        self.calls = []

    def tick(self, now, deliver, platforms):
        from bot.daily import TickReport

        self.calls.append((now, deliver, platforms))
        return TickReport()


def test_tick_job_is_one_coalescing_job_every_minute_with_a_set_grace():
    scheduler = BackgroundScheduler(timezone="UTC")
    scheduler.start(paused=True)  # a started scheduler, so the job store is real
    try:
        add_tick(scheduler, lambda: None)
        add_tick(scheduler, lambda: None)  # re-adding replaces, never duplicates
        jobs = scheduler.get_jobs()
    finally:
        scheduler.shutdown(wait=False)
    assert len(jobs) == 1
    job = jobs[0]
    assert job.misfire_grace_time == MISFIRE_GRACE_SECONDS
    assert job.coalesce is True and job.max_instances == 1
    assert str(job.trigger) == "cron[second='0']"


def test_the_job_ticks_with_the_clock_and_the_platforms():
    core = FakeCore()
    moment = datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc)
    deliver = object()
    tick_job(core, lambda: moment, deliver, ["console", "slack"])()
    assert core.calls == [(moment, deliver, ("console", "slack"))]
