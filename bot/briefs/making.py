"""Making one brief: claim it, spend a call of the channel's budget, ask the model on a
pool, keep the answer made safe, or give the claim back. A member's `brief` and the
scheduler's briefs made ahead (bot/briefs/ahead.py) both make them here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.briefs.made import Briefs, Key
from bot.briefs.prompt import BriefText, messages, parsed
from bot.briefs.provider import Completion, Failure, Model
from bot.briefs.untrusted import made_safe
from bot.cards.latex import readable
from bot.services.fetching import FetchPool
from store.models import Paper


class Spent:
    """The channel's budget for the day was spent: nothing was asked."""


SPENT = Spent()


class Maker:
    def __init__(self, briefs: Briefs, model: Model, clock: Callable[[], datetime]):
        self.briefs = briefs
        self.model = model
        self.clock = clock

    def make(self, key: Key, paper: Paper, channel_id: int, deadline: float, pool: FetchPool,
             budget: int) -> BriefText | Failure | Spent | None:
        """The brief, made now by this caller; why not (a failure, or the budget spent:
        nothing stored); None when another asker has claimed it (it is being made)."""
        now = self.clock()
        if not self.briefs.claim(key, now):
            return None
        if not self.briefs.spend(channel_id, now.date(), budget):
            self.briefs.release(key)
            return SPENT
        model = self.model

        def call() -> Completion | Failure:
            return model.complete(messages(readable(paper.title), readable(paper.abstract), key.language), deadline)

        answer = pool.run([call], deadline)[0]
        brief = parsed(answer.text) if isinstance(answer, Completion) else None
        if brief is None:
            self.briefs.release(key)
            if isinstance(answer, Failure):
                return answer
            return Failure("the model did not answer in time" if answer is None
                           else "the model's answer was not a brief")
        brief = made_safe(brief)
        self.briefs.fill(key, brief, self.clock())
        return brief
