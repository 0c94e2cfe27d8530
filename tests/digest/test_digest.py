"""The weekly digest: one post per channel and ISO week with every feature's section, a
quiet week in one line, retries within the grace, three schedulers at once, the command's
refusals, settings and the archive page."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from adapters.console import ConsoleDelivery
from bot.channels.schedule import ScheduleError
from bot.digest.models import DigestPlan
from bot.digest.weekly import WeeklySlot, parse_slot
from bot.services.models import Digest
from tests.clock import Clock
from tests.digest.scene import (
    MONDAY,
    NEXT_MONDAY,
    Delivery,
    busy_week,
    manager,
    member,
    services,
)


@pytest.fixture
def scene(database_url, tmp_path):
    clock = Clock(MONDAY)
    built = services(database_url, clock, tmp_path)
    yield built, clock
    built.db.dispose()


def digest_rows(built) -> list[Digest]:
    with built.db.session() as session:
        return list(session.scalars(select(Digest).order_by(Digest.id)))


def test_a_busy_week_makes_one_digest_with_every_features_section(scene):
    built, clock = scene
    delivery = Delivery()
    busy_week(built, clock, delivery)
    daily = [r.cards[0].paper_id for _, r in delivery.posts if r.post_id is not None]
    clock.now = NEXT_MONDAY
    report = built.core.tick(NEXT_MONDAY, delivery, ["console"])
    assert report["digests"] == 1
    (channel, digest), = delivery.digests()
    assert channel.channel == "general" and digest.text.startswith("Weekly digest: the week from Mon 23 Nov")
    sections = {s.title: s.lines for s in digest.sections}
    assert list(sections) == ["Posted this week (7 papers)", "Poll 1 closed", "Added by members (1 paper)",
                              "Meetings"]  # the features' order
    posted = sections["Posted this week (7 papers)"]
    assert [int(line[1:].split("]")[0]) for line in posted] == daily[:7]
    assert posted[0].endswith("(Mon 23): 👍 1 · 👎 0 · read 0")
    assert sections["Poll 1 closed"][0].endswith(": 1 vote") and "now in the reading queue" in \
        sections["Poll 1 closed"][-1]
    (added,) = sections["Added by members (1 paper)"]
    assert added.startswith("[") and added.endswith("] Okapi Attention for Reading Groups, added by ann")
    assert sections["Meetings"][0].startswith("Met Thu 26 Nov: [") and "presented by @ann" in sections["Meetings"][0]
    assert sections["Meetings"][1].startswith("Next: Thu 03 Dec 17:00 Europe/Berlin")
    # A later tick, a retried one, or the same minute again: nothing more.
    for later in (NEXT_MONDAY, NEXT_MONDAY + timedelta(minutes=1), NEXT_MONDAY + timedelta(hours=2)):
        assert built.core.tick(later, delivery, ["console"])["digests"] == 0
    assert len(delivery.digests()) == 1
    (row,) = [r for r in digest_rows(built) if r.state == "posted"]
    assert row.week == "2026-W49" and row.message_ref and row.body["sections"][0]["papers"] == daily[:7]


def test_a_quiet_week_is_one_line_and_still_the_weeks_one_post(scene):
    built, clock = scene
    delivery = Delivery()
    assert manager(built).send("digest mon 09:00").ok  # UTC: the channel has no schedule
    clock.now = NEXT_MONDAY + timedelta(hours=1)
    assert built.core.tick(clock.now, delivery, ["console"])["digests_quiet"] == 1
    (_, reply), = delivery.digests()
    assert reply.text == "Quiet week: nothing new here since Mon 23 Nov." and not reply.sections
    assert "\n" not in reply.text and not reply.cards
    assert built.core.tick(clock.now + timedelta(minutes=5), delivery, ["console"])["digests_quiet"] == 0
    assert "Last: Mon 30 Nov (a quiet week)" in manager(built).send("digest").text


def test_an_open_poll_alone_is_not_news_but_shows_in_a_busy_week(scene):
    built, clock = scene
    boss = manager(built)
    clock.now = MONDAY - timedelta(days=3)  # opened the week before
    assert boss.send("poll 2 14d").ok and boss.send("digest mon 09:00").ok
    clock.now = NEXT_MONDAY + timedelta(hours=1)  # 09:00 UTC: the channel has no schedule
    delivery = Delivery()
    built.core.tick(clock.now, delivery, ["console"])
    assert delivery.digests()[0][1].text.startswith("Quiet week")
    assert boss.send("digest preview").sections == []  # the preview agrees
    assert boss.send("next").ok  # a post: news; the open poll comes with it
    clock.now += timedelta(minutes=1)
    preview = boss.send("digest preview")
    assert [s.title for s in preview.sections] == ["Posted this week (1 paper)", "Poll 1 is open"]
    assert preview.sections[1].lines[-1].startswith("Open until")


def test_a_failed_delivery_is_retried_within_the_grace_and_never_doubled(scene):
    built, _clock = scene
    assert manager(built).send("digest mon 09:00").ok
    delivery = Delivery(fail=2)
    at = NEXT_MONDAY + timedelta(hours=1)
    assert built.core.tick(at, delivery, ["console"])["digests_failed"] == 1
    assert built.core.tick(at + timedelta(seconds=30), delivery, ["console"])["digests_failed"] == 0  # backing off
    assert built.core.tick(at + timedelta(minutes=1), delivery, ["console"])["digests_failed"] == 1
    assert built.core.tick(at + timedelta(minutes=3), delivery, ["console"])["digests_quiet"] == 1
    assert built.core.tick(at + timedelta(minutes=9), delivery, ["console"])["digests_quiet"] == 0
    assert len(delivery.digests()) == 1
    (row,) = digest_rows(built)
    assert (row.state, row.attempts) == ("quiet", 3)


def test_a_refusal_for_good_is_not_retried_that_week(scene):
    built, _clock = scene
    assert manager(built).send("digest mon 09:00").ok
    delivery = Delivery(fail=1, refuse=True)
    at = NEXT_MONDAY + timedelta(hours=1)
    assert built.core.tick(at, delivery, ["console"])["digests_failed"] == 1
    assert built.core.tick(at + timedelta(minutes=30), delivery, ["console"])["digests_failed"] == 0
    assert delivery.digests() == [] and digest_rows(built)[0].state == "refused"


def test_beyond_the_grace_the_week_is_skipped_once_with_a_log_line(scene, caplog):
    built, _clock = scene
    assert manager(built).send("digest mon 09:00").ok
    delivery = Delivery()
    late = NEXT_MONDAY + timedelta(hours=5)  # the grace is 3 hours
    built.core.tick(late, delivery, ["console"])
    built.core.tick(late + timedelta(minutes=1), delivery, ["console"])
    assert delivery.posts == [] and [r.state for r in digest_rows(built)] == ["skipped"]
    assert len([r for r in caplog.records if "skipped the 2026-W49 digest" in r.getMessage()]) == 1


def test_digest_off_stops_it_and_on_restarts_it(scene):
    built, _clock = scene
    boss = manager(built)
    assert boss.send("digest tue 18:30").ok
    assert boss.send("digest off").text == "Done. Weekly digest: off (`digest on` restarts it, Tuesdays at 18:30 UTC)."
    delivery = Delivery()
    tuesday = NEXT_MONDAY + timedelta(days=1, hours=10, minutes=30)
    assert not built.core.tick(tuesday, delivery, ["console"]).any() or delivery.digests() == []
    assert delivery.digests() == [] and digest_rows(built) == []
    assert boss.send("digest on").ok
    built.core.tick(tuesday + timedelta(minutes=1), delivery, ["console"])
    assert len(delivery.digests()) == 1


def test_settings_and_status_show_the_digest_in_the_channels_zone(scene):
    built, _clock = scene
    boss = manager(built)
    assert "Weekly digest: none yet" in boss.send("settings").text
    assert boss.send("schedule 08:00 America/New_York weekdays").ok and boss.send("digest friday 16:00").ok
    status = "Weekly digest: Fridays at 16:00 America/New_York; the next is due Fri 27 Nov 16:00."
    assert boss.send("digest").text == status and status in boss.send("settings").text
    assert member(built).send("digest").text == status  # anyone may ask


@pytest.mark.parametrize("line, problem", [
    ("digest someday", "is neither a day"),
    ("digest mon", "give a day and a time"),  # no plan yet to keep the time of
    ("digest mon tue 09:00", "give a day and a time"),
    ("digest mon tue", "give one day only"),
    ("digest 25:00", "is not a time"),
    ("digest weekdays 09:00", "one day of the week"),
    ("digest off now", "takes nothing after it"),
    ("digest on", "There is no weekly digest here yet"),
])
def test_bad_commands_print_the_usage_and_change_nothing(scene, line, problem):
    built, _ = scene
    reply = manager(built).send(line)
    assert not reply.ok and problem in reply.text and "Usage: digest" in reply.text
    with built.db.session() as session:
        assert session.scalar(select(func.count()).select_from(DigestPlan)) == 0


def test_members_may_not_change_or_preview_it(scene):
    built, _ = scene
    assert manager(built).send("digest mon 09:00").ok
    for line in ("digest off", "digest wed 10:00", "digest preview"):
        reply = member(built).send(line)
        assert not reply.ok and reply.text.startswith("Only channel managers can")
    assert manager(built).send("digest").text.startswith("Weekly digest: Mondays at 09:00 UTC")


def test_the_preview_is_private_and_posts_and_claims_nothing(scene):
    built, clock = scene
    delivery = Delivery()
    busy_week(built, clock, delivery)
    posts = len(delivery.posts)
    clock.now = NEXT_MONDAY - timedelta(minutes=5)
    preview = manager(built).send("digest preview")
    assert preview.ephemeral and preview.text.startswith("Preview, for you only (nothing was posted):\nWeekly digest")
    assert len(preview.sections) == 4 and len(delivery.posts) == posts and digest_rows(built) == []
    assert built.core.tick(NEXT_MONDAY, delivery, ["console"])["digests"] == 1  # the week's post still goes out


@pytest.mark.parametrize("schedulers", [3])
def test_three_schedulers_post_once_per_week_per_channel(database_url, tmp_path, schedulers):
    """Three processes' worth of services on one database, ticking the same minute at
    once (a barrier lines them up): each channel gets its digest exactly once."""
    clock = Clock(MONDAY)
    first = services(database_url, clock, tmp_path)
    names = ["a", "b", "c", "d", "e"]
    for name in names:
        assert manager(first, name).send("digest mon 09:00").ok
    replicas = [first] + [services(database_url, clock, tmp_path, corpus=False) for _ in range(schedulers - 1)]
    delivery, lock = Delivery(), threading.Lock()
    barrier = threading.Barrier(schedulers)
    reports = []

    def deliver(channel, reply):
        with lock:
            return delivery(channel, reply)

    def run(replica):
        for minute in range(3):  # the slot's minute, and two retries of the tick
            barrier.wait()
            at = NEXT_MONDAY + timedelta(hours=1, minutes=minute)  # 09:00 UTC: no schedule, no zone
            reports.append(replica.core.tick(at, deliver, ["console"]))

    threads = [threading.Thread(target=run, args=(r,)) for r in replicas]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(c.channel for c, _ in delivery.digests()) == names
    assert sum(r["digests_quiet"] for r in reports) == len(names)
    with first.db.session() as session:
        assert session.scalar(select(func.count(Digest.id)).where(Digest.state == "quiet")) == len(names)
    for replica in replicas:
        replica.db.dispose()


def test_the_console_shows_each_section_under_its_title(scene, capsys):
    import io

    built, clock = scene
    delivery = Delivery()
    busy_week(built, clock, delivery)
    out = io.StringIO()
    built.core.tick(NEXT_MONDAY, ConsoleDelivery(out), ["console"])
    text = out.getvalue()
    assert text.startswith("#general\nPaper of the day")  # the daily feature's tick comes first
    assert "\n\n#general\nWeekly digest: the week from Mon 23 Nov" in text
    assert "\n\n== Posted this week (7 papers)\n  [" in text and "\n\n== Meetings\n  Met Thu 26 Nov" in text


def test_the_archive_page_lists_the_last_digests(scene):
    from bot.memory.record import Recorder

    built, clock = scene
    delivery = Delivery()
    busy_week(built, clock, delivery)
    built.core.tick(NEXT_MONDAY, delivery, ["console"])
    channel = built.channels.get(delivery.posts[0][0])
    record = Recorder(built.db, built.library, built.votes).record(channel)
    (entry,) = record.digests
    assert entry.day.isoformat() == "2026-11-30" and entry.text.startswith("Weekly digest")
    first_title, _ = entry.sections[0]
    assert first_title == "Posted this week (7 papers)"
    from bot.memory.archive import ArchivePage

    page = ArchivePage(built.search.tokenizer).render(record, "general", "", "bib", "nonce", NEXT_MONDAY)
    assert '<section id="digests">' in page and "Posted this week (7 papers)" in page


# --- the weekly slot --------------------------------------------------------------------------


def test_the_slot_follows_the_zone_across_a_clock_change_and_keys_by_iso_week():
    slot = WeeklySlot("sun", parse_slot(["23:30"])[1], "Europe/Berlin")
    # Sunday 25 October 2026: summer time ends at 03:00; 23:30 is CET (UTC+1).
    october = slot.slot_in_week_of(MONDAY.date().replace(month=10, day=21))
    assert october.isoformat() == "2026-10-25T22:30:00+00:00" and slot.week(october) == "2026-W43"
    # Caught up on Monday 00:10 local: last week's slot is the one due.
    assert slot.due(october + timedelta(minutes=40), timedelta(hours=3)) == october
    assert slot.missed(october + timedelta(minutes=40), timedelta(hours=3)) is None
    year_end = WeeklySlot("mon", parse_slot(["09:00"])[1]).slot_in_week_of(MONDAY.date().replace(month=12, day=31))
    assert slot.week(year_end) == "2026-W53"


def test_parse_slot_reads_day_and_time_in_any_order():
    assert parse_slot(["09:00", "Monday"]) == ("mon", parse_slot(["09:00"])[1])
    assert parse_slot(["fri", "4", "pm"]) == parse_slot(["16:00", "friday"]) == parse_slot(["16h", "fri"])
    assert parse_slot(["noon"])[1].hour == 12
    with pytest.raises(ScheduleError):
        parse_slot([])
