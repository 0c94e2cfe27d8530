"""The APScheduler job: configured on purpose, and running the tick."""

from __future__ import annotations

from datetime import datetime, timezone

from apscheduler.schedulers.background import BackgroundScheduler

from bot.scheduler import MISFIRE_GRACE_SECONDS, add_tick, tick_job


class FakeCore:
    def __init__(self):
        self.calls = []

    def tick(self, now, deliver, platforms, stopping=None, providers=True):
        from bot.feature import TickReport

        assert providers is False  # a serving process runs the providers' work on jobs of its own
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


class Refusing:
    """A core whose database is down (or broken) for every tick."""

    def __init__(self, error):
        self.error = error

    def tick(self, now, deliver, platforms, stopping=None, providers=True):
        raise self.error


def test_a_tick_with_the_database_down_is_skipped_quietly(caplog):
    from sqlalchemy.exc import OperationalError

    job = tick_job(Refusing(OperationalError("SELECT 1", {}, Exception("server closed"))),
                   lambda: datetime.now(timezone.utc), object(), ["slack"])
    job()  # never raises: APScheduler would log a traceback every minute
    assert "tick skipped: the database is unreachable (OperationalError)" in caplog.text
    assert "Traceback" not in caplog.text


def test_a_failing_tick_is_logged_and_the_job_survives(caplog):
    job = tick_job(Refusing(RuntimeError("boom")), lambda: datetime.now(timezone.utc), object(), ["slack"])
    job()
    assert "tick failed; the next tick retries" in caplog.text


def test_a_set_stop_flag_runs_no_tick_and_the_tick_sees_it():
    import threading

    core = FakeCore()
    stop = threading.Event()
    job = tick_job(core, lambda: datetime.now(timezone.utc), object(), ["slack"], stop)
    seen = []
    def tick(now, deliver, platforms, stopping, providers=True):
        from bot.feature import TickReport

        seen.append(stopping())
        return TickReport()

    core.tick = tick
    job()
    stop.set()
    job()
    assert seen == [False]  # one tick ran, told "not stopping"; none after the stop


def test_each_tick_leaves_a_heartbeat_with_what_it_did(sqlite_db):
    from bot.ops.heartbeats import SCHEDULER, Heartbeats

    moment = datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc)
    beats = Heartbeats(sqlite_db, host="worker-1", pid=42)
    tick_job(FakeCore(), lambda: moment, object(), ["slack"], beats=beats)()
    beat = beats.last(SCHEDULER)
    assert (beat.at.replace(tzinfo=timezone.utc), beat.host, beat.pid, beat.detail) == (
        moment, "worker-1", 42, "nothing due")
    later = datetime(2026, 11, 23, 8, 1, tzinfo=timezone.utc)
    tick_job(FakeCore(), lambda: later, object(), ["slack"], beats=beats)()
    assert beats.last(SCHEDULER).at.replace(tzinfo=timezone.utc) == later  # one row, moved on


def test_other_tick_periods_are_intervals():
    from bot.scheduler import tick_trigger

    assert str(tick_trigger(60)) == "cron[second='0']"
    assert str(tick_trigger(5)) == "interval[0:00:05]"
