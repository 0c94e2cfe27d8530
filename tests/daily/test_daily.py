"""The paper of the day: two weeks of ticks, exactly-once claims, catch-up, retries."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.messages import ChannelRef, DeliveryRefused, Reply
from bot.services.models import Claim, Post

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")


class Recorder:
    """A delivery that records what was posted where, and when."""

    def __init__(self, fail_times: int = 0):
        self.posts: list[tuple[datetime, ChannelRef, Reply]] = []
        self.now: datetime | None = None
        self.fail_times = fail_times

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        if self.fail_times:
            self.fail_times -= 1
            raise ConnectionError("platform unreachable")
        self.posts.append((self.now, channel, reply))
        return f"msg-{len(self.posts)}"

    def tick(self, services, now: datetime):
        self.now = now
        return services.posts.tick(now, self, ["console"])


def manager(services, channel: str) -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user="alice", manager=True)


def _about_rl(reply: Reply) -> bool:
    text = (reply.cards[0].title + " " + reply.cards[0].snippet).lower()
    return "reinforcement" in text or " rl " in text or "(rl)" in text


def test_two_weeks_of_weekday_picks_at_nine_berlin(seeded_copy):
    services = build_services(seeded_copy)
    session = manager(services, "rl")
    assert session.send("schedule 09:00 Europe/Berlin weekdays").ok
    assert session.send("topics add reinforcement learning").ok
    recorder = Recorder()
    start = datetime(2026, 3, 16, tzinfo=UTC)  # a Monday; the fortnight crosses the March DST change
    for step in range(14 * 24 * 4):
        recorder.tick(services, start + timedelta(minutes=15 * step))

    assert len(recorder.posts) == 10
    papers = [reply.cards[0].paper_id for _, _, reply in recorder.posts]
    assert len(set(papers)) == 10
    for when, channel, reply in recorder.posts:
        local = when.astimezone(BERLIN)
        assert channel.channel == "rl"
        assert local.weekday() < 5 and (local.hour, local.minute) >= (9, 0)
        assert reply.cards[0].reason.startswith("Matches this channel's topics")
        assert reply.open_thread  # every post opens a discussion thread
    assert sum(_about_rl(reply) for _, _, reply in recorder.posts) >= 8
    # A second tick at the same instant as the last post posts nothing more.
    assert recorder.tick(services, recorder.posts[-1][0]).posted == []
    assert len(recorder.posts) == 10
    history = session.send("history 20").text
    assert history.count("\n") == 10


def test_catch_up_within_grace_and_skip_beyond_it(seeded_copy, caplog):
    services = build_services(seeded_copy, grace=timedelta(hours=3))
    manager(services, "late").send("schedule 09:00 UTC daily")
    manager(services, "later").send("schedule 07:00 UTC daily")
    recorder = Recorder()
    with caplog.at_level(logging.WARNING, logger="bot.services.posts"):
        report = recorder.tick(services, datetime(2026, 6, 1, 11, 0, tzinfo=UTC))
    assert [c.channel for c, _ in report.posted] == ["late"]  # two hours late: caught up
    assert [(c.channel, d.isoformat()) for c, d in report.skipped] == [("later", "2026-06-01")]  # four: skipped
    assert "skipped the 2026-06-01 post of console:local:later" in caplog.text
    # The skip is logged once, not on every later tick.
    again = recorder.tick(services, datetime(2026, 6, 1, 11, 1, tzinfo=UTC))
    assert again.skipped == [] and again.posted == []


def test_a_failed_post_is_retried_within_the_grace_and_never_doubled(seeded_copy):
    services = build_services(seeded_copy)
    manager(services, "flaky").send("schedule 09:00 UTC daily")
    recorder = Recorder(fail_times=1)
    first = recorder.tick(services, datetime(2026, 6, 1, 9, 0, tzinfo=UTC))
    assert first.posted == [] and len(first.failed) == 1
    with services.db.session() as s:
        assert s.scalar(select(func.count(Post.id))) == 0  # the reservation was released
    second = recorder.tick(services, datetime(2026, 6, 1, 9, 1, tzinfo=UTC))
    assert len(second.posted) == 1
    for minute in range(2, 30):
        recorder.tick(services, datetime(2026, 6, 1, 9, minute, tzinfo=UTC))
    assert len(recorder.posts) == 1
    with services.db.session() as s:
        claim = s.scalars(select(Claim)).one()
        assert (claim.state, claim.attempts) == ("posted", 2)


@pytest.mark.parametrize("error, traceback", [
    (DeliveryRefused("Slack refused: channel_not_found"), False),  # the platform said no
    (ConnectionError("platform unreachable"), False),
    (TypeError("a bug in a renderer"), True),  # ours: the traceback is how it gets fixed
])
def test_a_refused_post_is_a_warning_and_a_bug_is_a_traceback(seeded_copy, caplog, error, traceback):
    services = build_services(seeded_copy)
    manager(services, "refused").send("schedule 09:00 UTC daily")

    def deliver(channel, reply):
        raise error

    with caplog.at_level(logging.WARNING, logger="bot.services.posts"):
        report = services.posts.tick(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), deliver, ["console"])
    assert report.failed == [(ChannelRef("console", "local", "refused"), str(error))]
    assert "posting to console:local:refused failed" in caplog.text
    assert ("Traceback" in caplog.text) is traceback
    assert _claims(services) == {"refused": "failed"}  # retried by the next tick


def _claims(services) -> dict[str, str]:
    with services.db.session() as s:
        rows = s.execute(select(Claim.channel_id, Claim.state)).all()
    names = {c.id: c.ref.channel for c in services.channels.scheduled()}
    return {names[channel_id]: state for channel_id, state in rows}


def test_a_stopping_process_finishes_the_post_in_flight_and_leaves_the_rest_due(seeded_copy):
    services = build_services(seeded_copy)
    for name in ("a", "b", "c"):
        manager(services, name).send("schedule 09:00 UTC daily")
    recorder = Recorder()
    stop = []

    def deliver_then_stop(channel: ChannelRef, reply: Reply) -> str:
        stop.append(True)  # SIGTERM arrives while the first post is being sent
        return recorder(channel, reply)

    at = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    report = services.posts.tick(at, deliver_then_stop, ["console"], stopping=lambda: bool(stop))
    assert len(report.posted) == 1 and report.released == 2
    states = _claims(services)
    assert sorted(states.values()) == ["posted", "released", "released"]
    with services.db.session() as s:  # the released claims' papers went back to the pool
        assert s.scalar(select(func.count(Post.id))) == 1
    # The next process (or tick) takes the released claims at once, and only those.
    again = recorder.tick(services, at + timedelta(minutes=1))
    assert len(again.posted) == 2
    assert sorted(c.channel for _, c, _ in recorder.posts) == ["a", "b", "c"]
    assert set(_claims(services).values()) == {"posted"}


def test_a_process_killed_mid_post_loses_only_that_post_never_doubles_it(seeded_copy):
    services = build_services(seeded_copy)
    for name in ("a", "b", "c"):
        manager(services, name).send("schedule 09:00 UTC daily")
    recorder = Recorder()

    def killed_on_second(channel: ChannelRef, reply: Reply) -> str:
        if len(recorder.posts) == 1:
            raise SystemExit("SIGKILL")  # the process is gone: no bookkeeping at all
        return recorder(channel, reply)

    at = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    with pytest.raises(SystemExit):
        services.posts.tick(at, killed_on_second, ["console"])
    states = _claims(services)
    # The post out is recorded; the one in flight may have gone out: never retried;
    # the one not started is still only claimed, and is taken over after the lease.
    assert sorted(states.values()) == ["claimed", "posted", "sending"]
    recorder.tick(services, at + timedelta(minutes=5))
    assert len(recorder.posts) == 1  # within the lease: left alone
    recorder.tick(services, at + timedelta(minutes=11))
    assert len(recorder.posts) == 2
    assert len({c.channel for _, c, _ in recorder.posts}) == 2
    assert sorted(_claims(services).values()) == ["posted", "posted", "sending"]


def test_nothing_left_says_so_once_and_posts_nothing_else(seeded_copy):
    services = build_services(seeded_copy)
    session = manager(services, "small")
    assert session.send("use topic-abstracts").ok
    titles = {session.send("next").cards[0].title for _ in range(17)}
    assert len(titles) == 17
    empty = session.send("next")
    assert not empty.cards and "Nothing left to pick" in empty.text and "use all" in empty.text
    session.send("schedule 09:00 UTC daily")
    recorder = Recorder()
    for minute in range(0, 60, 5):
        recorder.tick(services, datetime(2026, 6, 1, 9, minute, tzinfo=UTC))
    assert len(recorder.posts) == 1 and not recorder.posts[0][2].cards
    assert "Nothing left to pick" in recorder.posts[0][2].text


def test_without_topics_the_tour_is_varied_not_file_order(seeded_copy):
    services = build_services(seeded_copy)
    session = manager(services, "tour")
    picks = [session.send("next").cards[0] for _ in range(10)]
    ids = [c.paper_id for c in picks]
    assert len(set(ids)) == 10
    assert ids != sorted(ids)  # not the file order
    assert len({c.venue.split(" · ")[0] for c in picks}) >= 2  # more than one collection
    assert all(c.reason.startswith("A tour of the corpus") for c in picks)


@pytest.mark.postgres
def test_three_processes_ticking_at_once_post_once_per_channel(postgres_url, tmp_path):
    services = build_services(postgres_url, ensure_schema=False)
    services.db.upgrade()
    from tests.conftest import SEED_FILES

    services.library.import_file(SEED_FILES["trending"])
    for name in ("a", "b", "c", "d", "e"):
        manager(services, name).send("schedule 09:00 Europe/Berlin daily")
    env = {**os.environ, "PAPERCLUB_DATABASE_URL": postgres_url}
    command = [sys.executable, "-m", "adapters.cli", "tick", "--at", "2026-11-23T08:00:30Z"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    headers = [line for out, _ in outputs for line in out.splitlines() if line.startswith("#")]
    assert sorted(headers) == ["#a", "#b", "#c", "#d", "#e"]
    with services.db.session() as s:
        assert s.scalar(select(func.count(Post.id)).where(Post.state == "sent")) == 5
        assert s.scalar(select(func.count(Claim.id)).where(Claim.state == "posted")) == 5
    services.db.dispose()


def test_catchup_setting_is_read_and_checked():
    from bot.app import catchup_grace
    from bot.ops.settings import ConfigError

    assert catchup_grace({}) == timedelta(hours=3)
    assert catchup_grace({"PAPERCLUB_CATCHUP": "90m"}) == timedelta(minutes=90)
    assert catchup_grace({"PAPERCLUB_CATCHUP": "2"}) == timedelta(hours=2)
    with pytest.raises(ConfigError, match="PAPERCLUB_CATCHUP"):
        catchup_grace({"PAPERCLUB_CATCHUP": "soon"})
