"""Issue 45: a meeting line says what it understood. `at 5pm`, `17:30`, `5pm` and `17h`
set the time; a place is only what follows `at`/`in` when it is not a time; the reply
echoes the time, place and link it read; `session on` undoes `session off`."""

from __future__ import annotations

from datetime import datetime, time, timezone

import pytest
from sqlalchemy import select

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.channels.schedule import ScheduleError
from bot.channels.times import clock_time, joined_halves
from bot.services.models import MeetingPlan
from tests.clock import Clock

UTC = timezone.utc
NOW = datetime(2026, 11, 30, 8, tzinfo=UTC)  # a Monday
CALL = "https://meet.example/abc"


@pytest.fixture
def services(seeded_copy):
    built = build_services(seeded_copy, clock=Clock(NOW))
    yield built
    built.db.dispose()


def member(services, user="ann", manager=True, channel="club") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user=user, manager=manager)


def stored(services) -> tuple:
    with services.db.session() as session:
        row = session.scalar(select(MeetingPlan))
        return row.weekday, row.local_time, row.timezone, row.length_minutes, row.place, row.link, row.enabled


@pytest.mark.parametrize("line, typed", [
    ("session every wed at 5pm", "5pm"), ("session every wednesday at 5 pm", "5pm"), ("session every wed 5pm", "5pm"),
    ("session every wed at 17:00", ""), ("session wed 17h", "17h"), ("session every Wed AT 5PM", "5PM"),
    ("session wednesdays at 5 p.m.", "5p.m."),
])
def test_at_5pm_is_the_time_not_the_place(services, line, typed):
    reply = member(services).send(line)
    assert reply.ok, reply.text
    assert stored(services)[:2] == ("wed", "17:00") and stored(services)[4] is None
    read = f"Read as: time 17:00 (from `{typed}`).\n" if typed else ""
    assert reply.text.startswith(f"Done. {read}The group meets"), reply.text
    assert "The group meets every Wed at 17:00 UTC for 1 hour. Next: Wednesday 02 December 17:00." in reply.text


def test_a_new_time_after_at_keeps_the_place_and_a_place_after_the_time_is_the_place(services):
    boss = member(services)
    assert boss.send("session every thu 16:00 at Room 4.12").ok
    reply = boss.send("session every thursday at 4pm")
    assert stored(services)[:2] == ("thu", "16:00") and stored(services)[4] == "Room 4.12", reply.text
    reply = boss.send(f"session at 17h30 in Hörsaal 1 in Gebäude B {CALL}")
    assert reply.ok, reply.text
    assert stored(services)[1:] == ("17:30", "UTC", 60, "Hörsaal 1 in Gebäude B", CALL, True)
    assert reply.text.splitlines()[0] == ("Done. Read as: time 17:30 (from `17h30`), place “Hörsaal 1 in Gebäude "
                                          f"B”, call link {CALL}")
    reply = boss.send("session in Room 7 at noon")  # the time may come after the place
    assert stored(services)[1] == "12:00" and stored(services)[4] == "Room 7", reply.text


def test_a_first_meeting_takes_the_channels_zone(services):
    boss = member(services)
    assert boss.send("schedule 09:00 Europe/Berlin").ok
    reply = boss.send("session every wed at 5pm")
    assert stored(services)[:3] == ("wed", "17:00", "Europe/Berlin"), reply.text
    assert boss.send("session in America/New_York").ok
    assert stored(services)[2] == "America/New_York"


@pytest.mark.parametrize("line, says", [
    ("session 1h30", "for the time write 01:30 or `at 1h30`, for the length 1h30m"),
    ("session at 5", "`at 5`: a time or a place?"),
    ("session at 13pm", "`13pm` is not a time"),
    ("session 25:00", "`25:00` is not a time"),
    ("session 17", "`17` is not a time: write 17:00, 5pm"),
    ("session fooday", "`fooday` is not a weekday (mon to sun), a time"),
    ("session 5pm at 6pm", "give one time only"),
    ("session on now", "`session on` takes nothing after it"),
    ("session off please", "`session off` takes nothing after it"),
    ("session skip", "Give one date to skip: `session skip YYYY-MM-DD`"),
])
def test_what_is_not_a_time_is_refused_and_says_how_to_write_one(services, line, says):
    boss = member(services)
    assert boss.send("session every thu 17:00 at Room 1").ok
    before = stored(services)
    reply = boss.send(line)
    assert not reply.ok and says in reply.text, reply.text
    assert stored(services) == before


def test_two_hours_is_still_a_length_and_at_2h_a_time(services):
    boss = member(services)
    assert boss.send("session every thu 17:00").ok
    assert boss.send("session 2h").text.startswith("Done. The group meets every Thu at 17:00 UTC for 2 hours.")
    assert stored(services)[1:4] == ("17:00", "UTC", 120)
    assert "Read as: time 02:00 (from `2h`)." in boss.send("session at 2h").text
    assert stored(services)[1:4] == ("02:00", "UTC", 120)


def test_session_off_and_on(services):
    boss = member(services)
    refused = boss.send("session on")
    assert not refused.ok and "There is no meeting to switch on yet" in refused.text
    assert boss.send("session every thu 17:00 Europe/Berlin 90m at Room 1").ok
    assert boss.send("session off").text == ("Done. The meeting (every Thu at 17:00 Europe/Berlin) is off: "
                                             "`session on` brings it back.")
    assert stored(services)[-1] is False
    not_manager = member(services, "bob", manager=False).send("session on")
    assert not not_manager.ok and "Only channel managers" in not_manager.text and stored(services)[-1] is False
    on = boss.send("session on")
    assert on.text == ("Done. The group meets every Thu at 17:00 Europe/Berlin for 1 hour 30 minutes, at Room 1. "
                       "Next: Thursday 03 December 17:00."), on.text
    assert stored(services) == ("thu", "17:00", "Europe/Berlin", 90, "Room 1", None, True)
    assert boss.send("session on").ok  # already on: says so, changes nothing


@pytest.mark.parametrize("word, expected", [
    ("17:30", time(17, 30)), ("9:00", time(9)), ("00:00", time(0)), ("5pm", time(17)), ("5PM", time(17)),
    ("5:30pm", time(17, 30)), ("12pm", time(12)), ("12am", time(0)), ("12:15am", time(0, 15)),
    ("11p.m.", time(23)), ("7am", time(7)), ("17h", time(17)), ("17h30", time(17, 30)), ("9H05", time(9, 5)),
    ("noon", time(12)), ("Midnight", time(0)),
])
def test_clock_times(word, expected):
    assert clock_time(word) == expected


@pytest.mark.parametrize("word", ["5", "4.12", "Room", "17.30", "90m", "-", "https://x", "٠٥pm", "5p", "1700"])
def test_words_not_written_as_times(word):
    assert clock_time(word) is None


@pytest.mark.parametrize("word", ["24:00", "17:60", "13pm", "0am", "0:30pm", "25h", "9h75"])
def test_times_that_do_not_exist(word):
    with pytest.raises(ScheduleError):
        clock_time(word)


def test_halves_join_the_number_before_them():
    assert joined_halves(["at", "5", "pm", "in", "Room", "5"]) == ["at", "5pm", "in", "Room", "5"]
    assert joined_halves(["5:30", "P.M."]) == ["5:30P.M."]
    assert joined_halves(["pm", "Room", "pm"]) == ["pm", "Room", "pm"]
