"""TL;DRs made ahead: the scheduler's briefs for the posts of channels with `briefs on`.

The paper of the day and the digest never wait on the model: they show a TL;DR only when
it was made already (`BriefsFeature.lines_about`). This makes them before they are due,
on the briefs feature's provider step (a scheduler job of its own under `serve`, after
the minute's posts under `paperclub tick`): for each channel with TL;DRs on, the papers
its next post and digest will likely name when either is due within AHEAD
(`Features.papers_ahead`), in the channel's language, each made once for every channel
(the cache). A run is bounded: MADE_PER_RUN briefs, RUN_SECONDS in all, each within
PAPERCLUB_LLM_TIMEOUT, nothing new once the process stops; briefs made ahead take at most
half of a channel's daily calls, so members' `brief` keeps the other half. A provider
that fails (slow, 5xx, 429, junk) is one log line, and is not asked again before BACKOFF
or its Retry-After, whichever is longer: the post goes out without a TL;DR, and the digest
may carry it, made later.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta

from bot.briefs.languages import OnPosts
from bot.briefs.made import Briefs, Key, text_hash
from bot.briefs.making import Maker, Spent
from bot.briefs.provider import Failure
from bot.corpus.library import Library
from bot.feature import Features
from bot.services.fetching import FetchPool

log = logging.getLogger(__name__)

AHEAD = timedelta(hours=3)  # a post or digest due within this has its TL;DRs made now
LOOK_EVERY = timedelta(minutes=10)  # a channel whose coming papers all had theirs is looked at again then
MADE_PER_RUN = 5
RUN_SECONDS = 120.0
BACKOFF = timedelta(minutes=10)  # after a failure, the provider is not asked again before this
SHARE = 2  # briefs made ahead take at most 1/SHARE of a channel's daily calls


class Ahead:
    def __init__(self, on_posts: OnPosts, library: Library, features: Features, briefs: Briefs, maker: Maker,
                 model_name: str, daily_calls: int, timeout: float,
                 monotonic: Callable[[], float] = time.monotonic):
        self.on_posts = on_posts
        self.library = library
        self.features = features
        self.briefs = briefs
        self.maker = maker
        self.model_name = model_name
        self.daily_calls = daily_calls
        self.timeout = timeout  # PAPERCLUB_LLM_TIMEOUT: one brief's deadline
        self.monotonic = monotonic
        self.pool = FetchPool(1)  # one call at a time, beside the members' pool
        self.resume_at: datetime | None = None  # no call before then (the provider failed)
        self.looked: dict[int, datetime] = {}  # channel id -> when to look at its coming papers again
        self.spent_said: set[tuple[int, date]] = set()  # (channel, day) whose spent share was logged

    def run(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        if self.resume_at is not None and now < self.resume_at:
            return {}
        end = self.monotonic() + RUN_SECONDS
        made = 0
        for channel, language in self.on_posts.channels():
            if self.looked.get(channel.id, now) > now:
                continue
            whole = True  # every coming paper of the channel has its brief (or cannot have one)
            ids = self.features.papers_ahead(channel, now, AHEAD)
            papers = self.library.get_many(ids)
            for paper in (papers[n] for n in ids if n in papers and (papers[n].abstract or "").strip()):
                key = Key(paper.id, text_hash(paper.title, paper.abstract), self.model_name, language)
                if self.briefs.made(key) is not None:
                    continue
                if stopping() or made >= MADE_PER_RUN or end - self.monotonic() < 1:
                    return _counts(made)
                deadline = min(self.monotonic() + self.timeout, end)
                outcome = self.maker.make(key, paper, channel.id, deadline, self.pool, self.daily_calls // SHARE)
                if outcome is None:  # another asker is making it
                    whole = False
                elif isinstance(outcome, Spent):
                    self._spent(channel.id, channel.ref.key(), now)
                    whole = False
                    break
                elif isinstance(outcome, Failure):
                    return self._failed(paper.id, channel.ref.key(), outcome, now, made)
                else:
                    made += 1
            if whole:
                self.looked[channel.id] = now + LOOK_EVERY
        return _counts(made)

    def stop(self) -> None:
        self.pool.stop()

    def _failed(self, paper_id: int, channel: str, failure: Failure, now: datetime, made: int) -> dict[str, int]:
        self.resume_at = now + max(BACKOFF, timedelta(seconds=failure.wait))
        log.warning("no brief made ahead for paper %s in %s: %s; the model is asked again from %s", paper_id,
                    channel, failure.why, f"{self.resume_at:%Y-%m-%d %H:%M} UTC")
        return {**_counts(made), "briefs_ahead_failed": 1}

    def _spent(self, channel_id: int, channel: str, now: datetime) -> None:
        if (channel_id, now.date()) not in self.spent_said:
            self.spent_said.add((channel_id, now.date()))
            log.info("no more briefs made ahead today for %s: they took their half of its %d daily calls",
                     channel, self.daily_calls)


def _counts(made: int) -> dict[str, int]:
    return {"briefs_ahead": made} if made else {}
