"""`brief N`: a paper's brief from the group's own language model, answered later like `add`.

The model's part (a three-sentence TL;DR, the key contribution, three questions) is
made once per paper, text, model, language and prompt version and shared by every
channel (bot/briefs/made.py); the channel's part ("why it may matter here") is made by
paperclub from the channel's topics and votes (bot/briefs/relevance.py). A line waits
on the model on a pool of its own, within its deadline; whatever goes wrong (a timeout,
a refusal, a provider error, junk, the budget) is one line, "no brief now (why)", one
log line, and nothing stored. Without PAPERCLUB_LLM_BASE_URL the feature has no
commands at all: `help` does not list `brief` and every transcript is as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.briefs.languages import DEFAULT, Languages, language_code
from bot.briefs.made import Briefs, Key, text_hash
from bot.briefs.prep import MeetingPrep
from bot.briefs.prompt import BriefText, messages, parsed
from bot.briefs.provider import Completion, Failure, Model
from bot.briefs.relevance import why_here
from bot.briefs.settings import BriefSettings
from bot.briefs.summaries import NotesSummaries
from bot.briefs.untrusted import made_safe
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings
from bot.corpus.library import Library
from bot.feature import Feature, Kit
from bot.grammar import Command, Param, UsageError, require_manager, with_arguments
from bot.messages import Incoming, Reply, Section
from bot.search.tokens import Tokenizer
from bot.services.fetching import FetchPool
from bot.services.meetings import Meetings
from bot.services.votes import Votes
from store.models import Paper

log = logging.getLogger(__name__)

WORKERS = 4  # model calls under way at once in one process, all members together
STILL_WRITING = "I'm still writing your last brief: it comes within a few seconds. Ask again after it."
STOPPING = "paperclub is restarting and stopped before the brief was written; try again in a minute."
NOTICE = "Written by a language model from the title and abstract only; check it against the paper."


class BriefsFeature(Feature):
    name = "briefs"
    settings_model = BriefSettings

    def __init__(self, settings: BriefSettings, library: Library, channels: Channels, tokenizer: Tokenizer,
                 clock: Callable[[], datetime], model: Model | None = None, pool: FetchPool | None = None,
                 meetings: Meetings | None = None, votes: Votes | None = None):
        self.config = settings
        self.library = library
        self.channels = channels
        self.tokenizer = tokenizer
        self.clock = clock
        self.model = model if model is not None else (Model(settings) if settings.enabled else None)
        self.pool = pool or FetchPool(WORKERS)
        # A claim older than the longest line another asker may wait was abandoned.
        self.briefs = Briefs(library.db, timedelta(seconds=2 * settings.llm_timeout))
        self.languages = Languages(library.db)
        meetings = meetings or Meetings(library.db)
        # Meeting prep (bot/briefs/prep.py) and `notes ID summary` (bot/briefs/summaries.py).
        self.prep = MeetingPrep(meetings, library, self.languages, self.briefs, self.model.name, self._made,
                                settings.llm_timeout) if self.model is not None else None
        self.summaries = NotesSummaries(self.model, meetings, votes or Votes(library.db), library, channels,
                                        self.briefs, self.languages.of, self.pool, clock, settings.llm_daily_calls,
                                        settings.llm_timeout) if self.model is not None else None

    @classmethod
    def build(cls, kit: Kit) -> BriefsFeature:
        settings = kit.settings(BriefSettings)
        return cls(settings, kit.library, kit.channels, kit.search.tokenizer, kit.clock, kit.provided(Model),
                   meetings=kit.meetings, votes=kit.votes)

    def commands(self) -> list[Command]:
        if self.model is None:
            return []  # off: nothing to list, nothing changes
        return [Command("brief", "brief ID", "A language model's brief of a paper: TL;DR, key contribution, why "
                        "it may matter here, questions for the discussion.", "brief 42", self.brief,
                        answered_later=True,
                        brief="A paper's TL;DR, contribution, why it may matter here, and discussion questions.",
                        params=(Param("paper", "the paper's ID (the number on its card)", required=True),)),
                Command("language", "language [CODE]", "The language briefs come in here (managers set it: de, fr, "
                        "pt-BR ...).", "language de", self.language, manager_rights=with_arguments,
                        params=(Param("code", "a language code: de, fr, es, pt-BR, zh-Hant ...", low=2, high=20),))]

    def settings(self, channel: ChannelSettings) -> list[str]:
        if self.model is None:
            return []
        return [(f"Briefs: in `{self.languages.of(channel.id)}`, from {self.model.name}; "
                 f"{self.config.llm_daily_calls} new briefs a day (`language CODE` changes the language).")]

    def stop(self) -> None:
        self.pool.stop()

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """Briefs made ahead, on a scheduler job of its own: for the meetings to come."""
        return self.prep.step(now, stopping) if self.prep is not None else {}

    def lines_about(self, channel: ChannelSettings, paper_id: int, occasion: str) -> list[str]:
        """The day-before reminder's brief for the presenter, if made already."""
        return self.prep.lines(channel, paper_id) if self.prep is not None and occasion == "reminder" else []

    def notes_summary(self) -> Callable[[Incoming, int], Reply] | None:
        return self.summaries.answer if self.summaries is not None else None

    # --- the commands ---------------------------------------------------------------------

    def language(self, incoming: Incoming, args: str) -> Reply:
        channel = self.channels.get(incoming.channel)
        words = args.split()
        if not words:
            return Reply(text=f"Briefs here come in `{self.languages.of(channel.id)}`; a manager's "
                              "`language CODE` changes it (de, fr, pt-BR ...).", ephemeral=True)
        require_manager(incoming, "change the language of briefs")
        code = language_code(words[0]) if len(words) == 1 else None
        if code is None:
            raise UsageError(f"`{' '.join(words)[:40]}` is not a language code: give one like de, fr, es, pt-BR "
                             f"or zh-Hant ({DEFAULT} is English).")
        self.languages.set(channel.id, code, self.clock())
        return Reply(text=f"Briefs here now come in `{code}`; those made already in another language are made "
                          "again when asked.")

    def brief(self, incoming: Incoming, args: str) -> Reply:
        paper = self.library.named(args)
        if not (paper.abstract or "").strip():
            raise UsageError(f"Paper {paper.id} has no abstract to write a brief from; `show {paper.id}` shows "
                             "what paperclub knows of it.")
        return self.pool.answer(incoming, lambda: self._brief(incoming, paper), STILL_WRITING, STOPPING)

    def _brief(self, incoming: Incoming, paper: Paper) -> Reply:
        assert self.model is not None  # commands() offers `brief` only with a model
        deadline = time.monotonic() + self.config.llm_timeout
        channel = self.channels.get(incoming.channel)
        key = Key(paper.id, text_hash(paper.title, paper.abstract), self.model.name,
                  self.languages.of(channel.id))
        made = self.briefs.made(key)
        if made is None:
            made, why = self._made(key, paper, channel.id, deadline)
            if made is None:
                log.warning("no brief for paper %s in %s: %s", paper.id, incoming.channel.key(), why)
                return Reply(text=f"No brief now ({why}).", ephemeral=True, ok=False)
        lines = why_here(self.library.db, self.library, self.tokenizer, channel, paper.id, paper.title,
                         paper.abstract)
        return _reply(paper, made, lines)

    def _made(self, key: Key, paper: Paper, channel_id: int, deadline: float) -> tuple[BriefText | None, str]:
        """The brief, made now by this line or by another asker meanwhile; else why not."""
        now = self.clock()
        if not self.briefs.claim(key, now):
            waited = self.briefs.wait(key, deadline)
            return (waited, "") if waited is not None else (None, "another request for it failed or is slow")
        if not self.briefs.spend(channel_id, now.date(), self.config.llm_daily_calls):
            self.briefs.release(key)
            return None, (f"this channel has had its {self.config.llm_daily_calls} new briefs for today; "
                          "briefs made already still come at once")
        model = self.model
        assert model is not None

        def call() -> Completion | Failure:
            return model.complete(messages(readable(paper.title), readable(paper.abstract), key.language), deadline)

        answer = self.pool.run([call], deadline)[0]
        brief = parsed(answer.text) if isinstance(answer, Completion) else None
        if brief is None:
            self.briefs.release(key)
            return None, (getattr(answer, "why", "") or ("the model did not answer in time" if answer is None
                                                         else "the model's answer was not a brief"))
        brief = made_safe(brief)
        self.briefs.fill(key, brief, self.clock())
        return brief, ""


def _reply(paper: Paper, brief: BriefText, why: list[str]) -> Reply:
    return Reply(
        text=f"Brief of [{paper.id}] “{readable(paper.title)}”\n{NOTICE}",
        sections=[
            Section("TL;DR", [brief.tldr]),
            Section("Key contribution", [brief.contribution]),
            Section("Why it may matter here", why),
            Section("Questions for the discussion", [f"{n}. {q}" for n, q in enumerate(brief.questions, 1)]),
        ],
    )
