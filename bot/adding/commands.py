"""`add LINK|ID ...`, "Add to paperclub" on a message, and `discuss ID`.

An add looks the paper up in the library first (any spelling of its arXiv id, DOI or
OpenReview id), fetches only what is not there, and imports what it fetched through the
library, whose matcher merges by external ids and normalised title: adding a paper that
exists answers with its card, same number, and stores nothing new.

A line's fetches share one time budget (PAPERCLUB_ADD_TIMEOUT) and run side by side on
the pool of bot/services/fetching.py; a member has one line in flight at a time, and every
fetch, failed or not, counts toward the member's hourly limit (PAPERCLUB_ADD_PER_HOUR).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import select

from bot.adding.additions import ASKED_MAX, HOUR, Additions
from bot.adding.providers import NAMES, AddProblem, Providers, Ref
from bot.adding.settings import PER_HOUR, AddSettings
from bot.adding.web import link_problem
from bot.cards.cards import card
from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings, added_collection
from bot.corpus.identifiers import PAGE, find_all
from bot.corpus.library import Library
from bot.corpus.records import CorpusFormatError, PaperRecord, title_key
from bot.feature import DigestSection, Feature, Kit
from bot.grammar import Command, Param, UsageError, always, require_manager
from bot.messages import Action, Incoming, PaperCard, Reply, counted
from bot.search.engine import SearchBackend
from bot.services.fetching import FetchPool
from bot.services.posts import Posts
from store.models import Paper, PaperExternalId, PaperSource

MESSAGE_PAPERS = 5  # papers one `add` or one message adds at most: a reply stays readable
# What the buttons under a paper added in chat say (see _card_actions): the command itself.
ADDED_BUTTON = re.compile(r"(?:nominate|discuss) [0-9]{1,10}")
FORMAT = "added"  # the format the sources of papers added in chat are stored under
ADD_HELP = ("Give an arXiv id or link (2106.01345, arxiv.org/abs/...), a DOI or doi.org link, an "
            "OpenReview forum link, or a link to the paper's page.")
STILL_ADDING = ("I'm still adding your last links: their answer comes within a few seconds. "
                "Send these again after it.")
STOPPING = "paperclub is restarting and stopped before I could finish; try again in a minute."


def per_hour_from_env(env: Mapping[str, str] = os.environ) -> int:
    """PAPERCLUB_ADD_PER_HOUR (default 20); ConfigError naming it when it is not a number."""
    return AddSettings.from_env(env).add_per_hour


@dataclass
class _Result:
    asked: str
    paper_id: int | None = None
    outcome: str = ""  # added | existed | the AddProblem's outcome | limited | stopped
    message: str = ""


class AddingFeature(Feature):
    """Papers from the conversation: `add LINK|ID`, "Add to paperclub" on a message, and
    the buttons under what was added."""

    name = "adding"
    settings_model = AddSettings

    def __init__(
        self,
        library: Library,
        search: SearchBackend,
        channels: Channels,
        daily: Posts,
        providers: Providers,
        clock: Callable[[], datetime],
        per_hour: int = PER_HOUR,
        pool: FetchPool | None = None,
    ):
        self.library = library
        self.search = search
        self.channels = channels
        self.daily = daily
        self.providers = providers
        self.clock = clock
        self.per_hour = per_hour
        self.additions = Additions(library.db)
        self.pool = pool or FetchPool()

    @classmethod
    def build(cls, kit: Kit) -> AddingFeature:
        return cls(kit.library, kit.search, kit.channels, kit.posts, Providers.from_env(kit.env), kit.clock,
                   kit.settings(AddSettings).add_per_hour)

    def on_show(self, incoming: Incoming, paper_id: int, card: PaperCard) -> None:
        card.added_by = self.added_by(incoming, paper_id)

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """The papers members added here this week, with who added each."""
        added = self.additions.added_between(channel.id, since, until)
        papers = self.library.get_many(paper_id for paper_id, _ in added)
        lines = [f"[{paper_id}] {readable(papers[paper_id].title)}, added by {who}"
                 for paper_id, who in added if paper_id in papers]
        if not lines:
            return None
        return DigestSection(f"Added by members ({counted(len(lines), 'paper')})", lines,
                             papers=tuple(p for p, _ in added if p in papers))

    def stop(self) -> None:
        """Lines in flight answer now with what they have; their fetches are cut."""
        self.pool.stop()
        self.providers.fetcher.cutoffs.cut_all()

    def button(self, value: str) -> str | None:
        """The buttons under a paper added in chat are the commands themselves."""
        return value if ADDED_BUTTON.fullmatch(value) else None

    def commands(self) -> list[Command]:
        return [
            Command("add", "add LINK|ID [LINK|ID ...]", "Add papers to the library by link or id (arXiv, DOI, "
                    "OpenReview, a paper's page).", "add https://arxiv.org/abs/2106.01345", self.add,
                    answered_later=True,
                    brief="Add a paper by its link or id (arXiv, DOI, OpenReview, a paper's page).",
                    # as long as what an addition keeps of what was asked
                    params=(Param("paper", "an arXiv id or link, a DOI, an OpenReview link, or a paper's page",
                                  required=True, low=1, high=ASKED_MAX),)),
            Command("discuss", "discuss ID", "Post this paper here now for discussion, with vote buttons "
                    "(managers).", "discuss 42", self.discuss, manager_rights=always,
                    params=(Param("paper", "the paper's ID (the number on its card)", required=True),)),
        ]

    # --- the commands ---------------------------------------------------------------------

    def add(self, incoming: Incoming, args: str) -> Reply:
        if not args.strip():
            raise UsageError(ADD_HELP)
        found = find_all(args)
        if not found:
            raise UsageError(f"No paper link or id in that. {ADD_HELP}")
        return self._add(incoming, found)

    def from_message(self, incoming: Incoming) -> Reply:
        """"Add to paperclub" on a message: every paper link in it, answered privately."""
        found = find_all(incoming.text)
        if not found:
            return Reply(text=f"No paper links in that message. {ADD_HELP}", ephemeral=True, ok=False)
        reply = self._add(incoming, found)
        reply.ephemeral = True
        return reply

    def discuss(self, incoming: Incoming, args: str) -> Reply:
        require_manager(incoming, "post a paper for discussion")
        paper = self.library.named(args)  # says which, as `show` does, when there is no such paper
        channel = self.channels.get(incoming.channel)
        posted = self.daily.posted_at(channel.id, paper.id)
        reply = None
        if posted is None:
            who = incoming.user.display_name or incoming.user.user_id
            reply = self.daily.post_paper(channel, paper, self.clock(), f"Chosen for discussion by {who}.")
        if reply is None:
            posted = posted or self.daily.posted_at(channel.id, paper.id)
            when = f" on {posted:%Y-%m-%d}" if posted else ""
            return Reply(text=f"“{readable(paper.title)}” [{paper.id}] was posted in this channel already{when}; "
                              "`history` lists what was.", ephemeral=True, ok=False)
        return reply

    def added_by(self, incoming: Incoming, paper_id: int) -> str:
        return self.additions.added_by(incoming.channel, [paper_id]).get(paper_id, "")

    # --- adding ------------------------------------------------------------------------------

    def _add(self, incoming: Incoming, found: list[tuple[str, Ref]]) -> Reply:
        return self.pool.answer(incoming, lambda: self._add_line(incoming, found), STILL_ADDING, STOPPING)

    def _add_line(self, incoming: Incoming, found: list[tuple[str, Ref]]) -> Reply:
        deadline = time.monotonic() + self.providers.fetcher.policy.timeout
        now = self.clock()
        results = {ref: _Result(asked) for asked, ref in found[:MESSAGE_PAPERS]}
        for ref, result in results.items():
            if ref[0] == PAGE and link_problem(ref[1]):
                result.outcome, result.message = "unreadable", _unreadable(result.asked)
                continue
            paper = self.library.find(ref[1]) if ref[0] != PAGE else None
            if paper is not None:
                self._keep(result, incoming, paper, now)
        self._fetch(incoming, [r for r, res in results.items() if not res.outcome], results, now, deadline)
        if any(r.outcome in ("added", "existed") for r in results.values()):
            self.search.current()  # the new revision of the index, so the next search finds it at once
        return self._reply(incoming, list(results.values()), len(found) - len(results))

    def _keep(self, result: _Result, incoming: Incoming, paper: Paper, now: datetime) -> None:
        """A paper the library has: it joins the workspace's added collection as it is."""
        if added_collection(incoming.channel) not in paper.collections:
            self._store(incoming, _as_record(paper), "library")
        self._done(result, incoming, paper.id, "existed", now)

    def _fetch(self, incoming: Incoming, refs: list[Ref], results: dict[Ref, _Result], now: datetime,
               deadline: float) -> None:
        budget = self.per_hour - self.additions.fetched_since(incoming, now - HOUR)
        for ref in refs[max(budget, 0):]:
            results[ref].outcome = "limited"
            results[ref].message = (f"Not added ({results[ref].asked}): a member may add {self.per_hour} papers "
                                    "an hour, and you have; try again later.")
        refs = refs[: max(budget, 0)]
        fetched = self._fetched(refs, deadline)
        for ref in refs:
            outcome, result = fetched.get(ref), results[ref]
            if not isinstance(outcome, PaperRecord):
                self._failed(result, incoming, outcome, now)
                continue
            try:
                paper_id, new = self._store(incoming, outcome, _source(ref))
            except CorpusFormatError as problem:
                result.outcome, result.message = "refused", f"That paper cannot be stored: {problem.message}"
                continue
            self._done(result, incoming, paper_id, "added" if new else "existed", now)

    def _fetched(self, refs: list[Ref], deadline: float) -> dict[Ref, PaperRecord | AddProblem]:
        """What came back by the deadline, the line's fetches run side by side; a
        reference missing from the answer ran out of time."""
        jobs = self.providers.jobs(refs, deadline) if refs else []
        answers = self.pool.run([job for _refs, job in jobs], deadline)
        return {ref: outcome for answer in answers if answer for ref, outcome in answer.items()}

    def _failed(self, result: _Result, incoming: Incoming, problem: AddProblem | None, now: datetime) -> None:
        """A fetch that brought no paper: named in the reply, and counted toward the
        member's hour like any fetch (a slow link costs paperclub as much as a good one)."""
        outcome = problem.outcome if problem is not None else "timed_out"
        if self.pool.stopped and outcome in ("timed_out", "unreachable"):
            outcome = "stopped"  # cut by the shutdown, not by the page
        result.outcome = outcome
        result.message = {
            "timed_out": f"{result.asked}: timed out; try again.",
            "stopped": f"{result.asked}: stopped before I could finish (paperclub is restarting); try again.",
            "unreadable": _unreadable(result.asked),
        }.get(outcome) or str(problem)
        self.additions.record(incoming, self.channels.get(incoming.channel).id, result.asked, None, outcome, now)

    def _store(self, incoming: Incoming, record: PaperRecord, source: str) -> tuple[int | None, bool]:
        collection = added_collection(incoming.channel)
        record.line = 1  # one record per answer: its line in the provider's answer means nothing here
        summary = self.library.import_records([record], collection=collection, source=source, fmt=FORMAT)
        return self._paper_of(record, collection, source), summary.added > 0

    def _paper_of(self, record: PaperRecord, collection: str, source: str) -> int | None:
        """The paper the record was stored as: by one of its ids, else by its source row
        (None if neither finds it)."""
        with self.library.db.session() as session:
            for scheme, value in record.external_ids.items():
                found = session.scalar(select(PaperExternalId.paper_id).where(
                    PaperExternalId.scheme == scheme, PaperExternalId.value == value))
                if found is not None:
                    return found
            return session.scalars(select(PaperSource.paper_id).where(
                PaperSource.collection == collection, PaperSource.source == source,
                PaperSource.title_key == title_key(record.title)).order_by(PaperSource.paper_id)).first()

    def _done(self, result: _Result, incoming: Incoming, paper_id: int | None, outcome: str,
              now: datetime) -> None:
        channel_id = self.channels.get(incoming.channel).id
        self.additions.record(incoming, channel_id, result.asked, paper_id, outcome, now)
        result.paper_id, result.outcome = paper_id, outcome

    def _reply(self, incoming: Incoming, results: list[_Result], left_out: int) -> Reply:
        ids = list(dict.fromkeys(r.paper_id for r in results if r.paper_id is not None))
        papers = self.library.get_many(ids)
        lines = self.additions.added_by(incoming.channel, ids)
        text = [_line(r, papers.get(r.paper_id) if r.paper_id is not None else None) for r in results]
        if left_out:
            text.append(f"That names {len(results) + left_out} papers; paperclub adds the first {MESSAGE_PAPERS} "
                        "at a time. Add the others with `add LINK`.")
        cards = [card(papers[i], self.search.tokenizer, added_by=lines.get(i, "")) for i in ids if i in papers]
        actions = [action for i in ids for action in _buttons(i)]
        return Reply(text="\n".join(text), cards=cards, actions=actions, ok=bool(cards), ephemeral=not cards)


def _line(result: _Result, paper: Paper | None) -> str:
    if paper is None:
        return result.message
    title = readable(paper.title)
    if result.outcome == "added":
        return f"Added “{title}” as paper {paper.id}."
    return f"“{title}” is paper {paper.id} already: the same paper, no second copy."


def _unreadable(asked: str) -> str:
    return f"{asked}: not a link I can read (check its host name and port)."


def _buttons(paper_id: int) -> list[Action]:
    return [
        Action(f"Nominate {paper_id}", f"nominate {paper_id}", "primary"),
        Action(f"Discuss {paper_id} now", f"discuss {paper_id}"),
    ]


def _source(ref: Ref) -> str:
    """The source name a fetched record is filed under: the provider, or the page's host."""
    return NAMES.get(ref[0]) or (urlsplit(ref[1]).hostname or "page")[:200]


def _as_record(paper: Paper) -> PaperRecord:
    return PaperRecord(
        title=paper.title, authors=list(paper.authors), abstract=paper.abstract, url=paper.url,
        external_ids=paper.ids(), track=paper.track, presentation=paper.presentation, award=paper.award,
        venue=paper.venue, year=paper.year, tags=list(paper.tags), notes=list(paper.notes),
        title_derived=paper.title_derived,
    )
