"""Deliveries that cannot succeed: a permanent refusal ends the day's attempt at once and
three posting days of them pause the schedule, with a notice on the next command;
transient failures back off instead of retrying every minute."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.messages import DeliveryRefused
from bot.services.models import Claim
from bot.services.posts import REFUSED_DAYS_TO_PAUSE, RETRY_MOST, retry_after
from store.models import Channel

UTC = timezone.utc
DAY1 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)  # a Monday


class Platform:
    """Counts every call; refuses for good, fails for now, or posts."""

    def __init__(self, outcome: str):
        self.outcome = outcome
        self.calls = 0

    def __call__(self, channel, reply) -> str:
        self.calls += 1
        if self.outcome == "gone":
            raise DeliveryRefused("Slack refused: channel_not_found", permanent=True)
        if self.outcome == "down":
            raise DeliveryRefused("Slack refused: service_unavailable")
        return f"ts-{self.calls}"


def every_minute(services, platform, start: datetime, hours: int = 4):
    for minute in range(hours * 60):
        services.core.tick(start + timedelta(minutes=minute), platform, ["console"])


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_three_days_of_permanent_refusals_make_three_calls_and_pause_the_schedule(seeded_db_url):
    services = build_services(seeded_db_url)
    boss = ConsoleSession(services.core, channel="gone", user="ann", manager=True)
    boss.send("schedule 09:00 UTC weekdays")
    platform = Platform("gone")
    for day in range(REFUSED_DAYS_TO_PAUSE + 2):  # two more days: nothing is tried once paused
        every_minute(services, platform, DAY1 + timedelta(days=day))
    assert platform.calls == REFUSED_DAYS_TO_PAUSE
    with services.db.session() as s:
        channel = s.scalars(select(Channel).where(Channel.channel == "gone")).one()
        assert not channel.enabled and channel.refusals == REFUSED_DAYS_TO_PAUSE
        assert {c.state for c in s.scalars(select(Claim))} == {"refused"}
    # The next command, whatever it is, says why and how to resume; once.
    member = ConsoleSession(services.core, channel="gone", user="bob")
    first = member.send("help")
    assert "paused this channel's paper of the day" in first.text and "channel_not_found" in first.text
    assert "`schedule on`" in first.text
    assert "paused" not in member.send("help").text
    # Back in the channel, a manager resumes and the next post goes out.
    assert boss.send("schedule on").ok
    platform.outcome = "ok"
    every_minute(services, platform, DAY1 + timedelta(days=7), hours=1)
    assert platform.calls == REFUSED_DAYS_TO_PAUSE + 1
    with services.db.session() as s:
        assert s.scalars(select(Channel.refusals).where(Channel.channel == "gone")).one() == 0
    services.db.dispose()


def test_a_success_between_refusals_starts_the_count_again(seeded_copy):
    services = build_services(seeded_copy)
    ConsoleSession(services.core, channel="flaky", user="ann", manager=True).send("schedule 09:00 UTC daily")
    platform = Platform("gone")
    for day, outcome in enumerate(["gone", "gone", "ok", "gone", "gone"]):
        platform.outcome = outcome
        every_minute(services, platform, DAY1 + timedelta(days=day), hours=1)
    with services.db.session() as s:
        channel = s.scalars(select(Channel).where(Channel.channel == "flaky")).one()
        assert channel.enabled and channel.refusals == 2


def test_a_transient_failure_backs_off_within_the_grace(seeded_copy):
    services = build_services(seeded_copy, grace=timedelta(hours=3))
    ConsoleSession(services.core, channel="down", user="ann", manager=True).send("schedule 09:00 UTC daily")
    platform = Platform("down")
    every_minute(services, platform, DAY1, hours=3)
    # 1, 2, 4, 8, 16 minutes, then every 30: about a dozen tries in three hours, not 180.
    assert 8 <= platform.calls <= 12
    with services.db.session() as s:
        assert s.scalars(select(Claim.state)).one() == "failed"
        assert s.scalars(select(Channel.refusals).where(Channel.channel == "down")).one() == 0


def test_retry_after_doubles_up_to_its_ceiling():
    assert [retry_after(n) for n in (1, 2, 3)] == [timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=4)]
    assert retry_after(20) == RETRY_MOST
