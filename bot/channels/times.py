"""Clock times as members write them, in a schedule, a digest or a meeting line: 17:30,
5pm, 5:30 pm, 17h, 17h30, noon, midnight.

A small strict grammar rather than a date library: dateutil reads "4.12" (a room) as a
date and "5" as midnight, and a meeting line needs each word to be a time or plainly
not one, so a place is never taken for a time nor a time for a place.
"""

from __future__ import annotations

import re
from datetime import time


class ScheduleError(ValueError):
    """A schedule a person typed that cannot be used (a time, a zone, days); the message
    says why."""


# ASCII digits only, as everywhere a member types a number (bot/grammar.py).
_H24 = re.compile(r"([0-9]{1,2}):([0-9]{2})")  # 17:30, 9:00
_HALF = re.compile(r"([0-9]{1,2})(?::([0-9]{2}))?([ap])\.?m\.?", re.IGNORECASE)  # 5pm, 5:30pm, 5p.m.
_FRENCH = re.compile(r"([0-9]{1,2})h([0-9]{2})?", re.IGNORECASE)  # 17h, 17h30
NAMED_TIMES = {"noon": time(12, 0), "midnight": time(0, 0)}
HALVES = ("am", "pm", "a.m.", "p.m.", "a.m", "p.m")  # the second word of `5 pm`
TIME_HOW = "write 17:00, 5pm, 5:30pm, 17h30 or noon"


def clock_time(word: str) -> time | None:
    """The time `word` spells; None when it is not written as a time at all (a room
    number, a length). Written as a time but none (25:00, 13pm, 17:75): ScheduleError."""
    text = word.strip().lower()
    if text in NAMED_TIMES:
        return NAMED_TIMES[text]
    if match := _H24.fullmatch(text):
        return _checked(word, int(match.group(1)), int(match.group(2)), 23)
    if match := _HALF.fullmatch(text):
        hour = _checked(word, int(match.group(1)), int(match.group(2) or 0), 12).hour
        if hour == 0:
            raise ScheduleError(f"`{word}` is not a time: the hours of am and pm run from 1 to 12")
        return time(hour % 12 + (12 if match.group(3) == "p" else 0), int(match.group(2) or 0))
    if match := _FRENCH.fullmatch(text):
        return _checked(word, int(match.group(1)), int(match.group(2) or 0), 23)
    return None


def hours_only(word: str) -> int | None:
    """The hour of `17h` or `2h` (a time or a length: the caller decides), else None."""
    match = _FRENCH.fullmatch(word.strip())
    return int(match.group(1)) if match and match.group(2) is None else None


def hours_and_minutes(word: str) -> int | None:
    """The hour of `1h30` (01:30, or one hour and a half?), else None."""
    match = _FRENCH.fullmatch(word.strip())
    return int(match.group(1)) if match and match.group(2) is not None else None


def joined_halves(words: list[str]) -> list[str]:
    """`5 pm` and `5:30 p.m.` as one word each, the way `5pm` is written."""
    out: list[str] = []
    for word in words:
        if out and word.lower() in HALVES and re.fullmatch(r"[0-9]{1,2}(?::[0-9]{2})?", out[-1]):
            out[-1] += word
        else:
            out.append(word)
    return out


def _checked(word: str, hour: int, minute: int, top: int) -> time:
    if hour > top or minute > 59:
        raise ScheduleError(f"`{word}` is not a time: {TIME_HOW}")
    return time(hour, minute)
