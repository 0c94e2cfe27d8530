"""Schedules: parsing what people type, and due times across time zones and DST."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import pytest

from bot.channels.schedule import Schedule, ScheduleError, parse_change, parse_schedule

UTC = timezone.utc
GRACE = timedelta(hours=3)


def test_parse_full_and_defaults():
    assert parse_schedule(["09:00", "Europe/Berlin", "weekdays"]) == Schedule(
        time(9, 0), "Europe/Berlin", ("mon", "tue", "wed", "thu", "fri")
    )
    assert parse_schedule(["7:30"]) == Schedule(time(7, 30))
    assert parse_schedule(["18:00", "mon,wed,Friday"]).days == ("mon", "wed", "fri")
    assert parse_schedule(["18:00", "America/New_York"]).zone == "America/New_York"


@pytest.mark.parametrize("words, at", [
    (["9am"], time(9, 0)), (["9", "am", "Europe/Berlin"], time(9, 0)), (["5:30pm", "weekdays"], time(17, 30)),
    (["17h30"], time(17, 30)), (["noon", "UTC"], time(12, 0)), (["12am"], time(0, 0)),
])
def test_a_time_is_read_as_members_write_it_as_in_meetings(words, at):
    """Issue 45: `schedule` and `digest` took only HH:MM while `session` took 5pm."""
    assert parse_schedule(words).post_time == at


@pytest.mark.parametrize(
    "words",
    [["25:00"], ["9"], ["09:60"], ["13pm"], ["0am"], ["09:00", "Mars/Olympus"], ["09:00", "fryday"],
     ["09:00", "UTC", "mon,fryday"], ["09:00", "UTC", "daily", "extra"], [], ["09:00", "../../etc/passwd"]],
)
def test_bad_schedules_are_refused(words):
    with pytest.raises(ScheduleError):
        parse_schedule(words)


def test_berlin_nine_is_eight_utc_in_winter_and_seven_in_summer():
    berlin = Schedule(time(9, 0), "Europe/Berlin")
    assert berlin.slot(date(2026, 1, 15)) == datetime(2026, 1, 15, 8, 0, tzinfo=UTC)
    assert berlin.slot(date(2026, 7, 15)) == datetime(2026, 7, 15, 7, 0, tzinfo=UTC)


@pytest.mark.parametrize("changeover", [date(2026, 3, 29), date(2026, 10, 25)])
def test_each_dst_changeover_day_is_due_exactly_once(changeover):
    # Early-morning times are the ones a DST change moves or repeats.
    for post_time in (time(2, 30), time(9, 0)):
        schedule = Schedule(post_time, "Europe/Berlin")
        start = datetime.combine(changeover - timedelta(days=1), time(0), tzinfo=UTC)
        due_dates = set()
        due_ticks = []
        for minute in range(0, 3 * 24 * 60, 15):
            now = start + timedelta(minutes=minute)
            day = schedule.due_date(now, GRACE)
            if day is not None:
                due_dates.add(day)
                due_ticks.append((day, now))
        assert changeover in due_dates
        first_due = min(now for day, now in due_ticks if day == changeover)
        assert first_due >= schedule.slot(changeover)


def test_due_window_and_yesterday_catch_up():
    late = Schedule(time(23, 30), "UTC")
    assert late.due_date(datetime(2026, 5, 2, 1, 0, tzinfo=UTC), GRACE) == date(2026, 5, 1)
    assert late.due_date(datetime(2026, 5, 1, 23, 29, tzinfo=UTC), GRACE) is None
    assert late.missed_date(datetime(2026, 5, 2, 3, 0, tzinfo=UTC), GRACE) == date(2026, 5, 1)


def test_next_slot_skips_inactive_days_and_pauses():
    weekdays = parse_schedule(["09:00", "UTC", "weekdays"])
    saturday = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    assert weekdays.next_slot(saturday) == datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    assert weekdays.next_slot(saturday, after=date(2026, 11, 24)) == datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("typed", ["europe/berlin", "EUROPE/BERLIN", "Europe/Berlin", "eUrOpE/bErLiN"])
def test_a_zone_in_any_case_becomes_its_canonical_name(typed):
    assert parse_schedule(["09:00", typed]).zone == "Europe/Berlin"


def test_a_pause_months_ahead_still_finds_the_slot_after_it():
    daily = parse_schedule(["09:00"])
    after = datetime(2026, 11, 23, 10, 0, tzinfo=timezone.utc)
    assert daily.next_slot(after, after=date(2027, 3, 1)) == datetime(2027, 3, 2, 9, 0, tzinfo=timezone.utc)


def test_a_partial_schedule_changes_only_the_parts_it_names():
    berlin = Schedule(time(9, 0), "Europe/Berlin", ("mon", "tue", "wed", "thu", "fri"))
    assert parse_change(["9:30"]).applied_to(berlin) == Schedule(time(9, 30), "Europe/Berlin", berlin.days)
    assert parse_change(["weekends"]).applied_to(berlin) == Schedule(time(9, 0), "Europe/Berlin", ("sat", "sun"))
    assert parse_change(["Asia/Tokyo"]).applied_to(berlin) == Schedule(time(9, 0), "Asia/Tokyo", berlin.days)
    assert parse_change(["fri", "UTC"]).applied_to(berlin) == Schedule(time(9, 0), "UTC", ("fri",))
    with pytest.raises(ScheduleError, match="no schedule yet"):
        parse_change(["weekends"]).applied_to(None)
    for words in (["09:00", "10:00"], ["UTC", "Europe/Berlin"], ["daily", "weekends"], ["9"]):
        with pytest.raises(ScheduleError):
            parse_change(words)
