"""One message edit for a burst of reactions: a post's redraw waits a moment, and every
reaction that comes in meanwhile rides along with it.

Twenty members clicking 👍 within a second would otherwise be twenty chat.update /
Message.edit calls against limits of about one edit per second per channel. The redraw
renders the tally as it is when the timer fires, so nothing counted is left out; a
reaction that arrives while a redraw is running starts the next one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Protocol

log = logging.getLogger(__name__)

REDRAW_SECONDS = 2.0


class Timer(Protocol):
    def cancel(self) -> None: ...


# (delay, callback) -> a started timer: threads by default; Discord passes its event
# loop's call_later, tests a timer that only `flush` fires.
StartTimer = Callable[[float, Callable[[], None]], Timer]


def thread_timer(delay: float, callback: Callable[[], None]) -> Timer:
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class Debouncer:
    """`touch(key, action)`: run `action` once, `delay` seconds after the first touch of
    `key` since its last run; the latest action given for the key is the one run."""

    def __init__(self, delay: float = REDRAW_SECONDS, start_timer: StartTimer = thread_timer):
        self.delay = delay
        self.start_timer = start_timer
        self._lock = threading.Lock()
        self._pending: dict[Hashable, tuple[Timer, Callable[[], None]]] = {}

    def touch(self, key: Hashable, action: Callable[[], None]) -> None:
        with self._lock:
            pending = self._pending.get(key)
            if pending is not None:
                self._pending[key] = (pending[0], action)
                return
            # Registered before the timer starts: a zero delay may fire at once.
            self._pending[key] = (_NotStarted(), action)
        timer = self.start_timer(self.delay, lambda: self._fire(key))
        with self._lock:
            if key in self._pending and isinstance(self._pending[key][0], _NotStarted):
                self._pending[key] = (timer, self._pending[key][1])

    def pending(self) -> list[Hashable]:
        with self._lock:
            return list(self._pending)

    def flush(self) -> None:
        """Run every waiting action now (shutting down; tests)."""
        with self._lock:
            waiting = list(self._pending.items())
            self._pending.clear()
        for _key, (timer, action) in waiting:
            timer.cancel()
            _run(action)

    def _fire(self, key: Hashable) -> None:
        # Taken off before running: a touch during the run schedules the next redraw.
        with self._lock:
            pending = self._pending.pop(key, None)
        if pending is not None:
            _run(pending[1])


class _NotStarted:
    def cancel(self) -> None:
        pass


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # a failed redraw must not stop the next one; the vote counted
        log.exception("redrawing a post after reactions failed")
