"""Where an `add` line's fetches run: side by side, under the line's one deadline, on a
pool of their own.

A member waits in chat while paperclub fetches, so a line has a budget (5 s by default)
however many links it names and whatever their pages do. The fetches never run on the
thread that answers the member (a platform's request thread): they go to this bounded
pool, whose size is the cap on fetches under way in the process, and the line takes
what has come back at its deadline; a fetch still queued then is cancelled. One member
has one line in flight at a time, so a member alone cannot fill the pool. `stop`
abandons every line in flight and refuses new ones: the process is shutting down and
answers what it has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from bot.messages import Incoming, Reply

T = TypeVar("T")

FETCH_WORKERS = 16  # fetches under way at once in one process, all members together
# A fetch ends itself at the line's deadline (bot/adding/web.py); this is the time its
# answer may take to come back after that before the line stops waiting for it.
GRACE = 0.5


class MemberBusy(Exception):
    """The member has a line in flight already."""


class Stopped(Exception):
    """The process is shutting down: no new line starts."""


class FetchPool:
    def __init__(self, workers: int = FETCH_WORKERS):
        self._pool = ThreadPoolExecutor(workers, "add-fetch")
        self._changed = threading.Condition()
        self._members: set[Hashable] = set()
        self.stopped = False

    @contextmanager
    def line(self, member: Hashable) -> Iterator[None]:
        """The member's one line in flight: MemberBusy when they have one, Stopped when
        the process is stopping."""
        with self._changed:
            if self.stopped:
                raise Stopped()
            if member in self._members:
                raise MemberBusy()
            self._members.add(member)
        try:
            yield
        finally:
            with self._changed:
                self._members.discard(member)

    def answer(self, incoming: Incoming, line: Callable[[], Reply], busy: str, stopping: str) -> Reply:
        """`line()` as the member's one line in flight; `busy` when they have one already,
        `stopping` when the process is ending (each private, as a refusal)."""
        member = (incoming.user.platform, incoming.channel.workspace, incoming.user.user_id)
        try:
            with self.line(member):
                return line()
        except MemberBusy:
            return Reply(text=busy, ephemeral=True, ok=False)
        except Stopped:
            return Reply(text=stopping, ephemeral=True, ok=False)

    def run(self, jobs: list[Callable[[], T]], deadline: float) -> list[T | None]:
        """Each job's result in order; None for a job that had not finished when the
        deadline (plus GRACE) passed or the pool was stopped."""
        try:
            futures = [self._pool.submit(job) for job in jobs]
        except RuntimeError:  # stopped between the line's start and here: the pool is shut
            return [None] * len(jobs)
        for future in futures:
            future.add_done_callback(self._finished)
        with self._changed:
            self._changed.wait_for(lambda: self.stopped or all(f.done() for f in futures),
                                   max(0.0, deadline + GRACE - time.monotonic()))
        return [_result(future) for future in futures]

    def stop(self) -> None:
        """Every line in flight answers now with what it has; no new one starts."""
        with self._changed:
            self.stopped = True
            self._changed.notify_all()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _finished(self, _future: Future[Any]) -> None:
        with self._changed:
            self._changed.notify_all()


def _result(future: Future[T]) -> T | None:
    if future.done() and not future.cancelled():
        return future.result()
    future.cancel()  # still queued: it never starts
    return None
