"""A channel's posting schedule: local time, IANA zone, weekdays; when a post is due.

Every function takes `now` (an aware UTC datetime): nothing here reads the clock, so
tests and `paperclub tick --at ...` can travel in time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.channels.times import NAMED_TIMES, TIME_HOW, clock_time, joined_halves
from bot.channels.times import (
    ScheduleError as ScheduleError,  # where the features have always found it
)

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_SETS = {"daily": WEEKDAYS, "weekdays": WEEKDAYS[:5], "weekends": WEEKDAYS[5:]}
_DAY_NAMES = {
    **{d: d for d in WEEKDAYS},
    **dict(zip(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"), WEEKDAYS, strict=True
    )),
}

SCHEDULE_USAGE = (
    "schedule HH:MM [ZONE] [daily|weekdays|weekends|mon,wed,fri] (any one part alone changes just that part)  ·  "
    "schedule off  ·  schedule on  ·  "
    "schedule pause until YYYY-MM-DD  ·  schedule resume"
)
SCHEDULE_EXAMPLE = "schedule 09:00 Europe/Berlin weekdays"


@dataclass(frozen=True)
class Schedule:
    post_time: time
    zone: str = "UTC"
    days: tuple[str, ...] = WEEKDAYS

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)

    def days_text(self) -> str:
        for name, days in DAY_SETS.items():
            if self.days == days:
                return name
        return ",".join(self.days)

    def describe(self) -> str:
        return f"{self.post_time:%H:%M} {self.zone}, {self.days_text()}"

    def runs_on(self, day: date) -> bool:
        return WEEKDAYS[day.weekday()] in self.days

    def slot(self, day: date) -> datetime:
        """The UTC instant of the post on local `day`.

        A wall time that does not exist (skipped by a spring-forward change) resolves
        the way zoneinfo does, one hour later; a repeated one takes its first occurrence.
        Either way each local date has exactly one slot.
        """
        local = datetime.combine(day, self.post_time, tzinfo=self.tz)
        return local.astimezone(timezone.utc)

    def due_date(self, now: datetime, grace: timedelta) -> date | None:
        """The local date whose post is due at `now`: its slot has passed, by no more
        than `grace`. Yesterday is checked too (a 23:30 post caught up after midnight)."""
        today = now.astimezone(self.tz).date()
        for day in (today, today - timedelta(days=1)):
            if self.runs_on(day) and timedelta(0) <= now - self.slot(day) <= grace:
                return day
        return None

    def missed_date(self, now: datetime, grace: timedelta) -> date | None:
        """A local date whose slot passed more than `grace` ago today or yesterday."""
        today = now.astimezone(self.tz).date()
        for day in (today, today - timedelta(days=1)):
            if self.runs_on(day) and now - self.slot(day) > grace:
                return day
        return None

    def next_slot(self, now: datetime, after: date | None = None) -> datetime:
        """The next slot at or after `now` (on a day after `after`, if given: a pause
        may end months ahead, so the search starts the day after it)."""
        day = now.astimezone(self.tz).date()
        if after is not None:
            day = max(day, after + timedelta(days=1))
        for offset in range(8):  # a week, and today's slot may have passed
            candidate = day + timedelta(days=offset)
            if self.runs_on(candidate) and self.slot(candidate) >= now:
                return self.slot(candidate)
        raise ScheduleError("this schedule has no active day")  # unreachable: days is never empty


def shown_at(moment: datetime, zone: str, pattern: str = "%a %d %b %H:%M") -> str:
    """`moment` as a channel's members read it: in the channel's zone, with the zone's
    abbreviation (CET, CEST, EST, UTC), or its IANA name where the zone has only an
    offset for one (+03 -> Europe/Istanbul). Stored times may come back naive (SQLite): UTC."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    local = aware.astimezone(ZoneInfo(zone))
    abbreviation = local.tzname() or ""
    return f"{local.strftime(pattern)} {abbreviation if abbreviation.isalpha() else zone}"


def parse_time(text: str) -> time:
    """A time as members write it (09:00, 9am, 5:30pm, 17h30, noon): bot.channels.times."""
    at = clock_time(text)
    if at is None:
        raise ScheduleError(f"`{text}` is not a time: {TIME_HOW}")
    return at


@lru_cache(maxsize=1)
def zone_names() -> tuple[str, ...]:
    """Every IANA zone name, sorted: what a form suggests for a time zone."""
    return tuple(sorted(available_timezones()))


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    """Every IANA zone name by its lowercase form: members type europe/berlin too."""
    return {name.lower(): name for name in available_timezones()}


def parse_zone(text: str) -> str:
    """The canonical IANA name for `text`, in any case (europe/berlin -> Europe/Berlin)."""
    if text.upper() == "UTC":
        return "UTC"
    name = _zone_names().get(text.lower())
    if name is None and "/" not in text:
        raise ScheduleError(
            f"`{text}` is neither a time zone (an IANA name such as Europe/Berlin) "
            "nor days (daily, weekdays, mon,wed,fri)"
        )
    try:
        zone = ZoneInfo(name or "")
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"`{text}` is not a time zone: use an IANA name such as Europe/Berlin") from None
    return zone.key  # the name it was made from


def parse_days(text: str) -> tuple[str, ...]:
    key = text.lower()
    if key in DAY_SETS:
        return DAY_SETS[key]
    names = [part.strip() for part in key.split(",")]
    unknown = [n for n in names if n not in _DAY_NAMES]
    if unknown or not names:
        raise ScheduleError(
            f"`{text}` is not a set of days: use daily, weekdays, weekends or a list like mon,wed,fri"
        )
    chosen = {_DAY_NAMES[n] for n in names}
    return tuple(d for d in WEEKDAYS if d in chosen)


@dataclass(frozen=True)
class ScheduleChange:
    """The parts of a schedule a manager named; the others stay as they are."""

    post_time: time | None = None
    zone: str | None = None
    days: tuple[str, ...] | None = None

    def applied_to(self, current: Schedule | None) -> Schedule:
        if current is None:
            if self.post_time is None:
                raise ScheduleError(f"there is no schedule yet: give a time first, e.g. `{SCHEDULE_EXAMPLE}`")
            current = Schedule(self.post_time)
        return Schedule(
            self.post_time if self.post_time is not None else current.post_time,
            self.zone if self.zone is not None else current.zone,
            self.days if self.days is not None else current.days,
        )


def parse_change(args: list[str]) -> ScheduleChange:
    """A time, a zone and days, each optional and in any order, each at most once:
    `9:00` moves the time alone, `weekends` the days, `Europe/Berlin` the zone."""
    args = joined_halves(args)  # `9 am` is one time
    if not 1 <= len(args) <= 3:
        raise ScheduleError("give a time, a zone or days (or all three)")
    parts = named_parts(args, _part)
    post_time, zone, days = parts.get("post_time"), parts.get("zone"), parts.get("days")
    # named_parts hands values back as objects; _part gave each kind its type
    assert post_time is None or isinstance(post_time, time)
    assert zone is None or isinstance(zone, str)
    assert days is None or isinstance(days, tuple)
    return ScheduleChange(post_time, zone, days)


def named_parts(words: list[str], part: Callable[[str], tuple[str, object]]) -> dict[str, object]:
    """Each word as the part `part` takes it for (kind, value), each kind at most once:
    how `schedule` and `session` read their parts in any order."""
    parts: dict[str, object] = {}
    for word in words:
        kind, value = part(word)
        if kind in parts:
            raise ScheduleError(f"`{word}`: give one {kind.replace('_', ' ')} only")
        parts[kind] = value
    return parts


def _part(word: str) -> tuple[str, object]:
    if word[:1].isdigit() or word.lower() in NAMED_TIMES:
        return "post_time", parse_time(word)
    if _looks_like_days(word):
        return "days", parse_days(word)
    return "zone", parse_zone(word)


def parse_schedule(args: list[str]) -> Schedule:
    """A whole schedule: a time, optionally a zone (default UTC) and days (default daily)."""
    return parse_change(args).applied_to(None)


def _looks_like_days(word: str) -> bool:
    key = word.lower()
    return key in DAY_SETS or ("/" not in word and "," in word) or key in _DAY_NAMES


def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ScheduleError(f"`{text}` is not a date: use YYYY-MM-DD, e.g. 2026-12-27") from None
