"""The meetings' calendar feed: parsed back with icalendar, across a DST change, a skip,
a swap, a new time, and a reset link."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import icalendar
import pytest

from bot.memory.pages import build_pages
from tests.memory.scene import PUBLIC_URL, build_scene

UTC = timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
# Thursday 15 October 2026; Berlin leaves summer time on Sunday 25 October.
NOW = datetime(2026, 10, 15, 8, 0, tzinfo=UTC)


@pytest.fixture
def scene(db, database_url, tmp_path):  # db: the schema, upgraded
    built = build_scene(database_url, tmp_path, NOW)
    yield built
    built.services.db.dispose()


def pages(scene):
    s = scene.services
    return build_pages(s.library, s.channels, s.meetings, s.votes, s.search.tokenizer, scene.clock)


def calendar_token(scene, reset: bool = False) -> str:
    reply = scene.member("boss", manager=True).send("session calendar" + (" reset" if reset else ""))
    assert reply.ok and reply.ephemeral, reply.text
    url = next(word for word in reply.text.split() if word.startswith(PUBLIC_URL))
    assert url.startswith(f"{PUBLIC_URL}/calendar/") and url.endswith(".ics")
    return url.removeprefix(f"{PUBLIC_URL}/calendar/").removesuffix(".ics")


def feed(scene, token: str) -> icalendar.Calendar:
    page = pages(scene).answer(f"/calendar/{token}.ics", {})
    assert page.status == 200
    assert dict(page.headers)["Content-Type"] == "text/calendar; charset=utf-8"
    return icalendar.Calendar.from_ical(page.body)


def events(calendar: icalendar.Calendar) -> dict[date, icalendar.Event]:
    found = {}
    for event in calendar.walk("VEVENT"):
        start = event.decoded("dtstart")
        found[start.date()] = event
    return found


def test_events_keep_their_local_time_across_the_end_of_summer_time_and_a_skip_leaves_a_gap(scene):
    boss = scene.member("boss", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    assert boss.send("session skip 2026-11-03").ok
    calendar = feed(scene, calendar_token(scene))
    assert "Europe/Berlin" in [tz["TZID"] for tz in calendar.walk("VTIMEZONE")]
    found = events(calendar)
    oct20, oct27 = found[date(2026, 10, 20)], found[date(2026, 10, 27)]
    # 17:00 in Berlin both times: 15:00 UTC in summer time, 16:00 UTC after it ends.
    assert oct20.decoded("dtstart").astimezone(UTC) == datetime(2026, 10, 20, 15, tzinfo=UTC)
    assert oct27.decoded("dtstart").astimezone(UTC) == datetime(2026, 10, 27, 16, tzinfo=UTC)
    assert oct27["DTSTART"].params["TZID"] == "Europe/Berlin"
    assert oct27.decoded("dtend") - oct27.decoded("dtstart") == timedelta(hours=1)
    assert date(2026, 11, 3) not in found  # skipped: no event
    assert date(2026, 11, 10) in found
    # twelve weeks ahead, and nothing past it; every event a Tuesday with its own UID
    assert max(found) <= (NOW + timedelta(weeks=12)).date() and max(found) >= date(2027, 1, 1)
    assert all(d.weekday() == 1 for d in found)
    uids = [str(e["UID"]) for e in found.values()]
    assert len(set(uids)) == len(uids)


def test_the_uid_is_stable_and_a_new_time_shows_at_once(scene):
    boss = scene.member("boss", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    token = calendar_token(scene)
    before = events(feed(scene, token))[date(2026, 10, 20)]
    assert boss.send("session every tue 18:30 Europe/Berlin").ok
    after = events(feed(scene, token))[date(2026, 10, 20)]
    assert str(after["UID"]) == str(before["UID"])
    assert after.decoded("dtstart").astimezone(BERLIN).strftime("%H:%M") == "18:30"
    assert boss.send("session every wed 18:30 Europe/Berlin").ok
    moved = events(feed(scene, token))
    assert date(2026, 10, 20) not in moved and date(2026, 10, 21) in moved


def test_the_paper_presenter_and_discussion_show_and_a_swap_changes_the_presenter(scene):
    s, ids = scene.services, scene.ids
    boss = scene.member("boss", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin").ok
    assert boss.send("presenters add @ann @ben").ok
    assert boss.send(f"nominate {ids['Marmot']}").ok
    poll = boss.send("poll 2 1h")
    assert boss.send(f"vote {poll.poll_id} 1").ok and boss.send("poll close").ok
    scene.clock.now = datetime(2026, 10, 19, 15, 30, tzinfo=UTC)  # the day-before reminder is due
    assert s.feature("meetings").send_reminders(scene.clock(), lambda ref, reply: None, ["console"],
                                                  timedelta(hours=3)) == 1
    meeting = s.meetings.meeting(s.channels.get(boss.channel).id, date(2026, 10, 20))
    token = calendar_token(scene)
    event = events(feed(scene, token))[date(2026, 10, 20)]
    winner = s.library.get_many([meeting.paper_id])[meeting.paper_id]
    assert str(event["SUMMARY"]) == f"Reading group: {winner.title}"
    assert f"Presenter: @{meeting.presenter}" in str(event["DESCRIPTION"])
    other = "ben" if meeting.presenter == "ann" else "ann"
    assert boss.send(f"swap @{other}").ok
    assert f"Presenter: @{other}" in str(events(feed(scene, token))[date(2026, 10, 20)]["DESCRIPTION"])


def test_the_discussion_thread_is_linked_when_the_paper_was_posted_on_discord(database_url, tmp_path):
    from bot.memory.record import discussion_url
    from bot.messages import ChannelRef

    ref = ChannelRef("discord", "111", "222")
    assert discussion_url(ref, "222/333") == "https://discord.com/channels/111/222/333"
    assert discussion_url(ChannelRef("slack", "T1", "C9"), "1700000000.123456") == \
        "https://slack.com/archives/C9/p1700000000123456"
    assert discussion_url(ChannelRef("console", "local", "x"), "anything") is None
    assert discussion_url(ref, "javascript:alert(1)") is None


def test_a_reset_calendar_link_is_a_404_at_once_and_the_new_one_works(scene):
    assert scene.member("boss", manager=True).send("session every tue 17:00 Europe/Berlin").ok
    old = calendar_token(scene)
    new = calendar_token(scene, reset=True)
    assert pages(scene).answer(f"/calendar/{old}.ics", {}).status == 404
    assert events(feed(scene, new))
    # a calendar token does not open the archive, and a wrong one is a 404
    assert pages(scene).answer(f"/archive/{new}", {}).status == 404
    assert pages(scene).answer("/calendar/" + "A" * 43 + ".ics", {}).status == 404


def test_without_a_meeting_the_feed_is_empty_but_valid(scene):
    calendar = feed(scene, calendar_token(scene))
    assert list(calendar.walk("VEVENT")) == [] and str(calendar["VERSION"]) == "2.0"


def test_a_90_minute_meeting_with_a_place_and_a_call_link_and_the_hint_to_refresh(scene):
    boss = scene.member("boss", manager=True)
    assert boss.send("session every tue 17:00 Europe/Berlin 90m at Room 4.12 https://meet.example/abc").ok
    calendar = feed(scene, calendar_token(scene))
    assert calendar["REFRESH-INTERVAL"].to_ical() == b"PT1H" and calendar["REFRESH-INTERVAL"].params["VALUE"] == \
        "DURATION"
    assert str(calendar["X-PUBLISHED-TTL"]) == "PT1H"
    found = events(calendar)
    assert len(found) >= 12
    for day, event in found.items():
        assert event.decoded("dtend") - event.decoded("dtstart") == timedelta(minutes=90), day
        assert (str(event["location"]), str(event["url"])) == ("Room 4.12", "https://meet.example/abc")
        assert str(event["conference"]) == "https://meet.example/abc"
        assert "Call link: https://meet.example/abc" in str(event["description"])
    # a call alone: it is where the meeting is; a paper's link is the URL again once the call is gone
    assert boss.send("session at -").ok and boss.send("session at https://meet.example/only").ok
    first = events(feed(scene, calendar_token(scene)))[date(2026, 10, 20)]
    assert str(first["location"]) == "https://meet.example/only"
    assert boss.send("session at -").ok
    bare = events(feed(scene, calendar_token(scene)))[date(2026, 10, 20)]
    assert "location" not in bare and "conference" not in bare
    assert bare.decoded("dtend") - bare.decoded("dtstart") == timedelta(minutes=90)


def test_a_meeting_held_keeps_its_length_and_place_when_the_plan_changes_after_it(scene):
    boss = scene.member("boss", manager=True)
    scene.clock.now = NOW - timedelta(days=7)
    assert boss.send("session every tue 17:00 Europe/Berlin 90m at Room A https://meet.example/a").ok
    scene.services.core.tick(datetime(2026, 10, 12, 15, tzinfo=UTC), lambda c, r: "ref", ["console"])
    scene.clock.now = NOW  # 13 October was held; the plan changes after it
    assert boss.send("session 2h at Room B").ok
    found = events(feed(scene, calendar_token(scene)))
    held, next_one = found[date(2026, 10, 13)], found[date(2026, 10, 20)]
    assert held.decoded("dtend") - held.decoded("dtstart") == timedelta(minutes=90)
    assert (str(held["location"]), str(held["url"])) == ("Room A", "https://meet.example/a")
    assert next_one.decoded("dtend") - next_one.decoded("dtstart") == timedelta(hours=2)
    assert (str(next_one["location"]), str(next_one["url"])) == ("Room B", "https://meet.example/a")
    assert boss.send("session at -").ok  # a second change leaves what the first one kept
    held = events(feed(scene, calendar_token(scene)))[date(2026, 10, 13)]
    assert str(held["location"]) == "Room A"
