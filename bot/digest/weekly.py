"""When a channel's weekly digest is due: a weekday and a local time in the zone of the
channel's schedule, one slot per ISO week.

Every function takes `now`: nothing here reads the clock, so tests and `paperclub tick
--at ...` can travel in time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

from bot.channels.schedule import WEEKDAYS, ScheduleError, named_parts, parse_days, parse_time
from bot.channels.times import NAMED_TIMES, joined_halves

WEEK = timedelta(days=7)
FULL_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class WeeklySlot:
    weekday: str  # mon..sun
    local_time: time
    zone: str = "UTC"

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def describe(self) -> str:
        return f"{FULL_NAMES[WEEKDAYS.index(self.weekday)]}s at {self.local_time:%H:%M} {self.zone}"

    def slot_in_week_of(self, day: date) -> datetime:
        """The UTC instant of the slot in the ISO week holding local `day`. A wall time
        skipped by a clock change resolves as zoneinfo does (an hour later)."""
        monday = day - timedelta(days=day.weekday())
        local = datetime.combine(monday + timedelta(days=WEEKDAYS.index(self.weekday)), self.local_time,
                                 tzinfo=self.tz)
        return local.astimezone(timezone.utc)

    def recent_slots(self, now: datetime) -> list[datetime]:
        """This ISO week's slot and last week's (a Sunday 23:30 digest caught up on Monday)."""
        today = now.astimezone(self.tz).date()
        return [self.slot_in_week_of(today), self.slot_in_week_of(today - WEEK)]

    def due(self, now: datetime, grace: timedelta) -> datetime | None:
        """The slot due at `now`: passed, by no more than `grace`."""
        return next((s for s in self.recent_slots(now) if timedelta(0) <= now - s <= grace), None)

    def missed(self, now: datetime, grace: timedelta) -> datetime | None:
        """This week's slot, when it passed more than `grace` ago."""
        slot = self.recent_slots(now)[0]
        return slot if now - slot > grace else None

    def next_slot(self, now: datetime) -> datetime:
        slot = self.recent_slots(now)[0]
        return slot if slot >= now else self.slot_in_week_of(now.astimezone(self.tz).date() + WEEK)

    def week(self, slot: datetime) -> str:
        """The ISO week a slot falls in, in its zone: "2026-W48", the digest's key."""
        year, week, _ = slot.astimezone(self.tz).date().isocalendar()
        return f"{year}-W{week:02d}"


def parse_slot(words: list[str]) -> tuple[str | None, time | None]:
    """(weekday, time) from `mon 09:00`, `09:00 monday`, or either alone; ScheduleError
    on anything else. One day only: a digest is weekly."""
    words = joined_halves(words)  # `9 am` is one time
    if not 1 <= len(words) <= 2:
        raise ScheduleError("give a day and a time, e.g. `digest mon 09:00`")
    parts = named_parts(words, _part)
    day, at = parts.get("day"), parts.get("time")
    # named_parts hands values back as objects; _part gave each kind its type
    assert day is None or isinstance(day, str)
    assert at is None or isinstance(at, time)
    return day, at


def _part(word: str) -> tuple[str, object]:
    if word[:1].isdigit() or word.lower() in NAMED_TIMES:
        return "time", parse_time(word)
    try:
        days = parse_days(word)
    except ScheduleError:
        raise ScheduleError(f"`{word}` is neither a day (mon ... sun) nor a time (09:00, 9am)") from None
    if len(days) != 1:
        raise ScheduleError(f"`{word}`: the digest goes out on one day of the week, e.g. mon")
    return "day", days[0]
