"""A clock a test sets by hand: services built with `clock=` read the time from it, and
the test moves `now` (a tick at 09:00, then a day later)."""

from __future__ import annotations

from datetime import datetime


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now
