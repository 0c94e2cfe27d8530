"""`brief N`: a paper's brief from the group's own language model, answered later like `add`.

The model's part (a three-sentence TL;DR, the key contribution, three questions) is
made once per paper, text, model, language and prompt version and shared by every
channel (bot/briefs/made.py); the channel's part ("why it may matter here") is made by
paperclub from the channel's topics and votes (bot/briefs/relevance.py). A line waits
on the model on a pool of its own, within its deadline; whatever goes wrong (a timeout,
a refusal, a provider error, junk, the budget) is one line, "no brief now (why)", one
log line, and nothing stored. `briefs on` puts a TL;DR on the channel's paper of the day
and in its digest (`lines_about`), only ever from briefs made already: the provider step
makes them ahead (bot/briefs/ahead.py). Without PAPERCLUB_LLM_BASE_URL the feature has no
commands at all: `help` does not list `brief` and every transcript is as before.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.briefs.ahead import Ahead
from bot.briefs.languages import DEFAULT, Languages, OnPosts, language_code
from bot.briefs.made import Briefs, Key, text_hash
from bot.briefs.making import Maker, Spent
from bot.briefs.prep import MeetingPrep
from bot.briefs.prompt import BriefText
from bot.briefs.provider import Failure, Model
from bot.briefs.relevance import why_here
from bot.briefs.settings import BriefSettings
from bot.briefs.summaries import NotesSummaries
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings
from bot.corpus.library import Library
from bot.feature import Feature, Features, Kit
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
TLDR = "TL;DR (language model): "  # how a post's and a digest's line about a paper starts
DIGEST_CHARS = 200  # a digest's TL;DR: its first sentence, cut here
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


class BriefsFeature(Feature):
    name = "briefs"
    settings_model = BriefSettings

    def __init__(self, settings: BriefSettings, library: Library, channels: Channels, tokenizer: Tokenizer,
                 clock: Callable[[], datetime], model: Model | None = None, pool: FetchPool | None = None,
                 features: Features | None = None, meetings: Meetings | None = None, votes: Votes | None = None):
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
        self.on_posts = OnPosts(library.db)
        self.maker: Maker | None = None
        self.ahead: Ahead | None = None  # TL;DRs of the coming posts of channels with `briefs on`
        if self.model is not None:
            self.maker = Maker(self.briefs, self.model, clock)
            self.ahead = Ahead(self.on_posts, library, features or Features(), self.briefs, self.maker,
                               self.model.name, settings.llm_daily_calls, settings.llm_timeout)
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
                   features=kit.features, meetings=kit.meetings, votes=kit.votes)

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
                        params=(Param("code", "a language code: de, fr, es, pt-BR, zh-Hant ...", low=2, high=20),)),
                Command("briefs", "briefs [on|off]", "Whether the paper of the day and the weekly digest carry a "
                        "one-line TL;DR from the language model (managers switch it).", "briefs on",
                        self.briefs_switch, manager_rights=with_arguments, group="channel",
                        brief="A TL;DR on the paper of the day and in the digest (managers switch it).",
                        params=(Param("switch", "on or off (left out: says which)", choices=("on", "off")),))]

    def settings(self, channel: ChannelSettings) -> list[str]:
        if self.model is None:
            return []
        return [(f"Briefs: in `{self.languages.of(channel.id)}`, from {self.model.name}; "
                 f"{self.config.llm_daily_calls} new briefs a day (`language CODE` changes the language)."),
                self._describe(channel.id)]

    def stop(self) -> None:
        self.pool.stop()
        if self.ahead is not None:
            self.ahead.stop()

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """Briefs made ahead, on a job of their own beside the minute's tick: the TL;DRs of
        the coming posts and digests of channels with `briefs on` (bot/briefs/ahead.py),
        then the briefs of the meetings to come (bot/briefs/prep.py)."""
        counts = Counter(self.ahead.run(now, stopping) if self.ahead is not None else {})
        counts.update(self.prep.step(now, stopping) if self.prep is not None else {})
        return dict(counts)

    def lines_about(self, channel: ChannelSettings, paper_id: int, occasion: str) -> list[str]:
        """A post's TL;DR (a digest's: its first sentence), where the channel has `briefs
        on`, and a reminder's brief for the presenter, when made already in the channel's
        language; never a call."""
        if occasion == "reminder":  # the presenter's brief: needs no `briefs on`
            return self.prep.lines(channel, paper_id) if self.prep is not None else []
        if self.model is None or occasion not in ("post", "digest") or not self.on_posts.on(channel.id):
            return []
        paper = self.library.get_many([paper_id]).get(paper_id)
        if paper is None or not (paper.abstract or "").strip():
            return []
        made = self.briefs.made(Key(paper.id, text_hash(paper.title, paper.abstract), self.model.name,
                                    self.languages.of(channel.id)))
        if made is None or not made.tldr:
            return []
        return [TLDR + (made.tldr if occasion == "post" else _first_sentence(made.tldr))]

    def notes_summary(self) -> Callable[[Incoming, int], Reply] | None:
        return self.summaries.answer if self.summaries is not None else None

    # --- the commands ---------------------------------------------------------------------

    def briefs_switch(self, incoming: Incoming, args: str) -> Reply:
        channel = self.channels.get(incoming.channel)
        words = args.lower().split()
        if not words:
            return Reply(text=self._describe(channel.id))
        if words not in (["on"], ["off"]):
            raise UsageError(f"`{' '.join(args.split())[:40]}` is neither on nor off.")
        require_manager(incoming, "switch the TL;DRs on the paper of the day")
        self.on_posts.set(channel.id, words[0] == "on", self.clock())
        return Reply(text=f"Done. {self._describe(channel.id)}")

    def _describe(self, channel_id: int) -> str:
        if not self.on_posts.on(channel_id):
            return ("TL;DRs on posts: off (a manager's `briefs on` puts a one-line TL;DR on the paper of the day "
                    "and in the weekly digest).")
        return (f"TL;DRs on posts: on: the paper of the day and the weekly digest carry a one-line TL;DR in "
                f"`{self.languages.of(channel_id)}`, written ahead by the language model (`briefs off` stops "
                "them).")

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
        assert self.maker is not None  # commands() offers `brief` only with a model
        made = self.maker.make(key, paper, channel_id, deadline, self.pool, self.config.llm_daily_calls)
        if made is None:
            waited = self.briefs.wait(key, deadline)
            return (waited, "") if waited is not None else (None, "another request for it failed or is slow")
        if isinstance(made, Spent):
            return None, (f"this channel has had its {self.config.llm_daily_calls} new briefs for today; "
                          "briefs made already still come at once")
        if isinstance(made, Failure):
            return None, made.why
        return made, ""


def _first_sentence(text: str) -> str:
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return first if len(first) <= DIGEST_CHARS else first[: DIGEST_CHARS - 1].rsplit(" ", 1)[0] + "…"


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
