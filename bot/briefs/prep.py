"""Meeting prep: the brief of a meeting's paper made ahead, and carried by its day-before
reminder for the presenter (the TL;DR and the three questions).

The reminder is sent by the minute's tick, which never waits on a provider: it asks the
features for their lines about the paper (`Feature.lines_about`, occasion "reminder"),
and briefs answers only from what is made already. So the briefs feature's provider
step (a scheduler job of its own; `paperclub tick` runs it too) makes, for each meeting
starting within AHEAD, the brief of its paper: the one given to it already, else the
head of the reading queue, which its day-before reminder will give it. A meeting's
brief needs no `briefs on`: a configured model is the operator's choice to use one, and
the call counts against the channel's daily budget like a member's `brief`. It is the
same cached brief a member's `brief N` gets (one per paper, text, model, language and
prompt version), so a paper briefed already costs nothing. A brief that could not be made
is tried again after RETRY, not every minute; a reminder whose brief is missing goes out
without it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.briefs.languages import Languages
from bot.briefs.made import Briefs, Key, text_hash
from bot.briefs.prompt import BriefText
from bot.channels.channels import ChannelSettings
from bot.corpus.library import Library
from bot.services.meetings import Meetings
from store.models import Paper

log = logging.getLogger(__name__)

# Made from this long before a meeting: its day-before reminder goes 24 hours before, so
# the job has twelve hours to make the brief (the queue's head may change meanwhile).
AHEAD = timedelta(hours=36)
RETRY = timedelta(minutes=30)  # after a failed try, the next for the same brief
PRESENTER = ("For the presenter, a language model's brief of [{id}] (from its abstract only; check it against "
             "the paper):")

# (key, paper, channel id, monotonic deadline) -> the brief, or None and why not.
Make = Callable[[Key, Paper, int, float], tuple[BriefText | None, str]]


class MeetingPrep:
    def __init__(self, meetings: Meetings, library: Library, languages: Languages, briefs: Briefs, model: str,
                 make: Make, timeout: float):
        self.meetings = meetings
        self.library = library
        self.languages = languages
        self.briefs = briefs
        self.model = model
        self.make = make
        self.timeout = timeout  # seconds one brief may take, retries included
        self.failed: dict[Key, datetime] = {}  # this process's failed tries, for RETRY

    def step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """Make the briefs of the papers of meetings starting within AHEAD, as counts."""
        made = failed = 0
        for channel_id, paper_id in self.meetings.coming_papers(now, AHEAD):
            if stopping():
                break
            paper = self._paper(paper_id)
            if paper is None:
                continue
            key = self._key(paper, channel_id)
            if self.briefs.made(key) is not None or now - self.failed.get(key, now - RETRY) < RETRY:
                continue
            brief, why = self.make(key, paper, channel_id, time.monotonic() + self.timeout)
            if brief is None:
                log.warning("no brief ahead of the meeting for paper %s in channel %s: %s", paper.id, channel_id,
                            why)
                self.failed[key] = now
                failed += 1
            else:
                self.failed.pop(key, None)
                made += 1
        return {name: count for name, count in (("briefs_ahead", made), ("briefs_ahead_failed", failed)) if count}

    def lines(self, channel: ChannelSettings, paper_id: int) -> list[str]:
        """The brief's TL;DR and questions for the presenter, if made already; else none."""
        paper = self._paper(paper_id)
        brief = self.briefs.made(self._key(paper, channel.id)) if paper is not None else None
        if brief is None:
            return []
        return [PRESENTER.format(id=paper_id), f"TL;DR: {brief.tldr}", "Questions for the discussion:",
                *(f"{n}. {question}" for n, question in enumerate(brief.questions, 1))]

    def _paper(self, paper_id: int) -> Paper | None:
        """The paper, when it has an abstract to make a brief from."""
        paper = self.library.get_many([paper_id]).get(paper_id)
        return paper if paper is not None and (paper.abstract or "").strip() else None

    def _key(self, paper: Paper, channel_id: int) -> Key:
        return Key(paper.id, text_hash(paper.title, paper.abstract), self.model, self.languages.of(channel_id))
