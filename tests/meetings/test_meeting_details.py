"""Meetings people can join: a length, a place and a call link, each set or changed alone
(`session 90m`, `session at Room 4.12`, `session at https://...`, `session at -`), stored
on SQLite and PostgreSQL alike, refused with a clear reply when they cannot be used, and
shown in `session`, `settings` and the reminders."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.channels.schedule import ScheduleError
from bot.meetings.commands import parse_length
from bot.services.models import MEETING_PLACE_CHARS, MeetingPlan
from tests.clock import Clock

UTC = timezone.utc
NOW = datetime(2026, 11, 30, 8, tzinfo=UTC)  # a Monday; the meetings below are on Thursdays
CALL = "https://meet.example/abc"


@pytest.fixture
def services(db, database_url):
    built = build_services(database_url, clock=Clock(NOW))
    yield built
    built.db.dispose()


def member(services, user="ann", manager=True) -> ConsoleSession:
    return ConsoleSession(services.core, channel="club", user=user, manager=manager)


def stored(services) -> tuple:
    with services.db.session() as session:
        row = session.scalar(select(MeetingPlan))
        return row.weekday, row.local_time, row.timezone, row.length_minutes, row.place, row.link


def test_the_whole_line_sets_length_and_link_and_each_part_changes_alone(services):
    boss = member(services)
    reply = boss.send(f"session every thu 17:00 Europe/Berlin 90m at {CALL}")
    assert reply.ok, reply.text
    assert reply.text == (f"Done. Read as: call link {CALL}\n"
                          "The group meets every Thu at 17:00 Europe/Berlin for 1 hour 30 minutes. "
                          f"Next: Thursday 03 December 17:00. Call link: {CALL}")
    assert stored(services) == ("thu", "17:00", "Europe/Berlin", 90, None, CALL)
    steps = [
        ("session at Room 4.12", ("thu", "17:00", "Europe/Berlin", 90, "Room 4.12", CALL)),  # the link stays
        ("session 2h", ("thu", "17:00", "Europe/Berlin", 120, "Room 4.12", CALL)),
        ("session AT https://call.example/x?pwd=1", ("thu", "17:00", "Europe/Berlin", 120, "Room 4.12",
                                                    "https://call.example/x?pwd=1")),  # the place stays
        ("session every fri 1h30m", ("fri", "17:00", "Europe/Berlin", 90, "Room 4.12",
                                     "https://call.example/x?pwd=1")),
        ("session at -", ("fri", "17:00", "Europe/Berlin", 90, None, None)),
        ("session 18:00 45min at Hörsaal 1, Gebäude B https://meet.example/b", (
            "fri", "18:00", "Europe/Berlin", 45, "Hörsaal 1, Gebäude B", "https://meet.example/b")),
        ("session off", ("fri", "18:00", "Europe/Berlin", 45, "Hörsaal 1, Gebäude B", "https://meet.example/b")),
    ]
    for command, expected in steps:
        assert boss.send(command).ok, command
        assert stored(services) == expected, command
    shown = member(services, "bob", manager=False).send("session").text
    assert shown == "The meeting (every Fri at 18:00 Europe/Berlin) is off: `session on` brings it back."
    assert boss.send("session every fri").ok  # back on, with everything it had
    settings = member(services, "bob", manager=False).send("settings").text
    assert ("Meeting: The group meets every Fri at 18:00 Europe/Berlin for 45 minutes, at Hörsaal 1, Gebäude B. "
            "Next: Friday 04 December 18:00. Call link: https://meet.example/b") in settings


@pytest.mark.parametrize("command, says", [
    ("session 4m", "from 5 minutes to 8 hours"),
    ("session 8h1m", "from 5 minutes to 8 hours"),
    ("session 90x", "is not a time"),
    ("session 1h30", "is not a time"),
    ("session 90m 2h", "give one length only"),
    ("session at", "Say where after `at`"),
    ("session at ftp://files.example/x", "not a call link paperclub can show"),
    ("session at javascript:alert(1)", "not a call link paperclub can show"),
    ("session at https://", "not a call link paperclub can show"),
    (f"session at {CALL} https://meet.example/other", "Give one call link"),
    (f"session at {'x' * (MEETING_PLACE_CHARS + 1)}", f"A place is at most {MEETING_PLACE_CHARS} characters"),
])
def test_what_cannot_be_used_is_refused_clearly_and_changes_nothing(services, command, says):
    boss = member(services)
    assert boss.send(f"session every thu 17:00 Europe/Berlin 90m at Room 1 {CALL}").ok
    before = stored(services)
    reply = boss.send(command)
    assert not reply.ok and says in reply.text and "Usage: session" in reply.text, reply.text
    assert stored(services) == before


def test_a_place_of_the_longest_length_is_stored_whole_on_both_databases(services):
    longest = "Seminar room " + "ä" * (MEETING_PLACE_CHARS - len("Seminar room "))
    boss = member(services)
    assert boss.send(f"session every thu 17:00 at {longest}").ok
    assert stored(services)[4] == longest


def test_details_need_a_meeting_and_a_manager(services):
    assert "no meeting yet" in member(services).send("session 90m").text
    assert "no meeting yet" in member(services).send("session at Room 1").text
    assert member(services).send("session every thu 17:00").ok
    refused = member(services, "bob", manager=False).send(f"session at {CALL}")
    assert not refused.ok and "manager" in refused.text
    assert stored(services)[3:] == (60, None, None)  # an hour, as plans made before lengths


@pytest.mark.parametrize("word, minutes", [("5m", 5), ("90m", 90), ("1h30m", 90), ("2h", 120), ("8h", 480),
                                           ("45min", 45), ("1H", 60)])
def test_lengths(word, minutes):
    assert parse_length(word) == minutes


@pytest.mark.parametrize("word", ["0m", "4m", "9h", "h", "m", "1h30", "90", "1.5h", "-5m"])
def test_lengths_refused(word):
    with pytest.raises(ScheduleError):
        parse_length(word)


def test_reminders_say_how_long_where_and_the_call_link(services):
    boss = member(services)
    assert boss.send(f"session every thu 17:00 Europe/Berlin 90m at Room 4.12 {CALL}").ok
    sent: list[str] = []
    day_before = datetime(2026, 12, 2, 16, 0, tzinfo=UTC)  # Wednesday 17:00 Berlin
    for moment in (day_before, day_before + timedelta(hours=23)):
        services.core.tick(moment, lambda channel, reply: sent.append(reply.text) or "ref", ["console"])
    assert sent == [
        ("Tomorrow: reading group (Thursday 03 December 17:00 Europe/Berlin, for 1 hour 30 minutes, at Room 4.12). "
         f"The reading queue is empty; start a `poll` to choose the paper. Call link: {CALL}"),
        ("In one hour: reading group (Thursday 03 December 17:00 Europe/Berlin, for 1 hour 30 minutes, at Room "
         f"4.12). The reading queue is empty; start a `poll` to choose the paper. Call link: {CALL}"),
    ]
