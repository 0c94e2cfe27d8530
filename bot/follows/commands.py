"""The follows feature: `follow`, `unfollow`, `following`, `fresh`, the daily ingest as
its tick step, its lines in `settings`, and the fresh picks it offers the paper of the
day (a candidate source: bot.services.picks.CandidateSource).

Follows change only for managers and only when the whole command is valid: every
handler parses first, asks OpenAlex when it must (an author's name), and writes last.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.cards.latex import readable
from bot.channels.channels import Channels, ChannelSettings
from bot.channels.schedule import shown_at
from bot.corpus.fetch import FetchError
from bot.feature import DigestSection, Feature, Kit
from bot.follows.answers import Author, OpenAlexError, author_id
from bot.follows.arxiv import categories
from bot.follows.clients import FollowClients
from bot.follows.follows import (
    FOLLOWS_MAX,
    Arrival,
    FollowExists,
    Follows,
    FollowView,
    TooManyFollows,
)
from bot.follows.ingest import Ingest
from bot.follows.openalex import OpenAlex
from bot.grammar import Command, Param, UsageError, always, number, require_manager, with_arguments
from bot.messages import Incoming, Reply, counted
from bot.search.engine import Engine
from bot.services.fetching import FetchPool, MemberBusy, Stopped
from bot.services.picks import Candidate, FeedbackSource, Picker
from bot.services.replies import offered_reason
from store.models import Paper

log = logging.getLogger(__name__)

FOLLOW_USAGE = ('follow arxiv CATEGORY ["WORDS"] · follow author "NAME" · follow author OPENALEX_ID · '
                "follow citations")
QUERY_CHARS = 200
NAME_CHARS = 100
FRESH_MAX_DAYS = 30
WEEK = timedelta(days=7)
LOOKUP_SECONDS = 8.0  # a member waits this long at most for OpenAlex to name an author
LOOKUP_WORKERS = 4  # author lookups under way at once in one process
DIGEST_TOP = 5  # the week's arrivals a digest lists, best for the channel first
_FRESH = re.compile(r"(\d{1,3})d")
_CATEGORY = re.compile(r"[A-Za-z-]+(\.[A-Za-z-]+)?")
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})


class FollowsFeature(Feature):
    """What a channel follows, what that brought, and fresh picks from it."""

    name = "follows"

    def __init__(self, channels: Channels, follows: Follows, ingest: Ingest, lookup: OpenAlex,
                 clock: Callable[[], datetime], picker: Picker, feedback: FeedbackSource,
                 zone_of: Callable[[ChannelSettings], str] = lambda _channel: "UTC"):
        self.channels = channels
        self.zone_of = zone_of  # the zone the channel's members read times in (Meetings.zone_of)
        self.picker = picker  # the digest orders the week's papers as picks are ranked
        self.feedback = feedback
        self.follows = follows
        self.ingest = ingest
        self.lookup = lookup
        self.clock = clock
        # Lookups wait on the network: on a bounded pool of their own, under a deadline,
        # never on the thread that answers the platform.
        self.pool = FetchPool(LOOKUP_WORKERS)
        self.taxonomy = categories()
        self._by_folded = {c.casefold(): c for c in self.taxonomy}

    @classmethod
    def build(cls, kit: Kit) -> FollowsFeature:
        clients = kit.provided(FollowClients) or FollowClients.from_env(kit.env)
        feature = cls(kit.channels, Follows(kit.db),
                      Ingest(kit.db, kit.library, kit.search, clients.arxiv, clients.openalex), clients.lookup,
                      kit.clock, kit.posts.picker, kit.votes.feedback, kit.meetings.zone_of)
        kit.posts.sources.append(feature.fresh_candidates)  # fresh picks: the follows' papers first
        return feature

    def commands(self) -> list[Command]:
        return [
            Command("follow", FOLLOW_USAGE,
                    "Follow an arXiv category, an author or the papers citing what this channel read (managers).",
                    'follow arxiv cs.CL "retrieval augmented"', self.follow, always, answered_later=True,
                    group="channel",
                    brief="Follow new papers: an arXiv category, an author, citations (managers).",
                    params=(Param("what", "arxiv, author or citations", required=True,
                                  choices=("arxiv", "author", "citations")),
                            Param("target", "a category (cs.LG), or an author's name or OpenAlex id"),
                            Param("words", "for arxiv: words the papers must contain")),
                    written='{what} {target} ["{words}"]'),
            Command("unfollow", "unfollow N", "Stop a follow, by its number in `following` (managers).",
                    "unfollow 2", self.unfollow, always, group="channel",
                    params=(Param("number", "the follow's number", kind="number", required=True, low=1),)),
            Command("following", "following", "What this channel follows, and what each brought this week.",
                    "following", self.following, group="channel"),
            Command("fresh", "fresh · fresh 7d · fresh off",
                    "Take the paper of the day from what the follows brought in the last days (managers).",
                    "fresh 7d", self.fresh, with_arguments, group="channel",
                    params=(Param("window", "e.g. 7d, or off", required=True),)),
        ]

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """The follows' fetches, on a job of their own beside the minute's tick."""
        return self.ingest.tick(now, stopping)

    def stop(self) -> None:
        self.pool.stop()
        self.ingest.stop()
        self.lookup.fetcher.stop()

    def settings(self, channel: ChannelSettings) -> list[str]:
        follows = self.follows.of_channel(channel.id)
        days = self.follows.fresh_days([channel.id]).get(channel.id)
        listed = "; ".join(f"{f.id}. {f.label}" for f in follows) or "none (`follow arxiv cs.LG` starts one)"
        fresh = f"from the follows' last {counted(days, 'day')}" if days else "off"
        return [f"Follows: {listed}", f"Fresh picks: {fresh}"]

    def archive_sections(self, channel: ChannelSettings) -> list[tuple[str, list[str]]]:
        """The archive page's section: each follow with what it brought this week."""
        follows = self.follows.of_channel(channel.id)
        if not follows:
            return []
        since = self.clock() - WEEK
        brought = self.follows.brought([f.id for f in follows], since)
        days = self.follows.fresh_days([channel.id]).get(channel.id)
        fresh = f"from the follows' last {counted(days, 'day')}" if days else "off"
        zone = self.zone_of(channel)
        return [("Follows", [self._line(f, brought.get(f.id, 0), since, zone) for f in follows]
                 + [f"Fresh picks: {fresh}"])]

    # --- what other features ask --------------------------------------------------------------

    def arrivals(self, channel_id: int, since: datetime, until: datetime) -> list[Arrival]:
        """The papers this channel's follows brought in [since, until), newest first, each
        with its follow and why (for the weekly digest)."""
        return self.follows.arrivals([channel_id], since, until)[channel_id]

    def digest(self, channel: ChannelSettings, since: datetime, until: datetime) -> DigestSection | None:
        """The week's new papers from the follows, the best for the channel first (by its
        topics and votes, words and meaning, as its picks are ranked; else the newest), with
        their numbers so members can `vote`, `nominate` or `add` them, and why each came."""
        arrived = list({a.paper_id: a for a in reversed(self.arrivals(channel.id, since, until))}.values())[::-1]
        engine = self.ingest.search.current()
        arrived = [a for a in arrived if engine.title(a.paper_id) is not None]  # still in the library
        if not arrived:
            return None
        tokenizer = self.ingest.search.tokenizer
        topics = list(dict.fromkeys(tokenizer.tokens(" ".join(channel.topics))))
        scores = self.picker.relevance(engine, channel, [a.paper_id for a in arrived],
                                self.feedback([channel.id])[channel.id])
        arrived.sort(key=lambda a: -scores.get(a.paper_id, 0.0))  # stable: ties stay newest first
        top = arrived[:DIGEST_TOP]
        papers = self.ingest.library.get_many(a.paper_id for a in top)
        lines = [f"[{a.paper_id}] {readable(papers[a.paper_id].title)}: "
                 f"{self._why(a, papers[a.paper_id], engine, topics)}" for a in top if a.paper_id in papers]
        shown = f"the top {len(top)}" if len(top) < len(arrived) else "all"
        return DigestSection(f"New from your follows ({counted(len(arrived), 'paper')}, {shown})", lines,
                             papers=tuple(a.paper_id for a in top if a.paper_id in papers))

    def _why(self, arrival: Arrival, paper: Paper, engine: Engine, topics: list[str]) -> str:
        """The arrival's reason and the channel's topics it matches, as a fresh pick says it."""
        on_topic = [t for t in topics if engine.scores([t], [paper.id]).get(paper.id)]
        return offered_reason(arrival.reason, paper, on_topic, self.ingest.search.tokenizer)

    def fresh_candidates(self, channels: list[ChannelSettings], now: datetime) -> dict[int, list[Candidate]]:
        """For the paper of the day: per channel with fresh picks on, what its follows
        brought in its window, newest first."""
        out: dict[int, list[Candidate]] = {}
        for channel_id, days in self.follows.fresh_days([c.id for c in channels]).items():
            found = self.follows.arrivals([channel_id], now - timedelta(days=days), now + timedelta(seconds=1))
            out[channel_id] = [Candidate(a.paper_id, a.reason) for a in found[channel_id]]
        return out

    # --- follow ---------------------------------------------------------------------------------

    def follow(self, incoming: Incoming, args: str) -> Reply:
        words = _words(args)
        if not words:
            raise UsageError("Say what to follow.")
        kind = words[0].lower()
        parsed: tuple[str, str, str, str] | Reply
        if kind == "arxiv":
            parsed = self._arxiv(words[1:])
        elif kind == "author":  # by id or by name, OpenAlex says who it is
            given = self._author_given(words[1:])
            require_manager(incoming, "change what this channel follows")
            return self._author(incoming, given)
        elif kind == "citations":
            if len(words) > 1:
                raise UsageError("`follow citations` takes nothing more.")
            parsed = ("citations", "", "", "papers citing what this channel read, voted up or discussed")
        else:
            raise UsageError(f"There is no `follow {words[0][:30]}`: follow arxiv, author or citations.")
        if isinstance(parsed, Reply):
            return parsed
        require_manager(incoming, "change what this channel follows")
        return self._add(incoming, *parsed)

    def _arxiv(self, words: list[str]) -> tuple[str, str, str, str] | Reply:
        if not words or len(words) > 2:
            raise UsageError("Give one category, then (in quotes) the words papers must contain, if any.")
        given, query = words[0], " ".join(words[1].split()) if len(words) > 1 else ""
        if len(query) > QUERY_CHARS:
            raise UsageError(f"The words are {len(query)} characters; at most {QUERY_CHARS}.")
        if len(words) > 1 and not query:
            raise UsageError("The words in quotes are empty.")
        category = self._by_folded.get(given.casefold())
        if category is None:
            return Reply(text=self._unknown_category(given, " ".join(words)), ephemeral=True, ok=False)
        label = f"{category} ({self.taxonomy[category]})" + (f' "{query}"' if query else "")
        return ("arxiv", category, query, label)

    def _unknown_category(self, given: str, typed: str) -> str:
        """What to say to a category arXiv does not have: the ids spelt like it, and the
        categories whose names read like what was typed ("machine learning")."""
        from rapidfuzz import fuzz, process  # here: only a category arXiv lacks needs it

        shown = typed[:60]
        close = process.extract(given, list(self.taxonomy), scorer=fuzz.WRatio, limit=5, score_cutoff=60,
                                processor=str.casefold)
        named = process.extract(typed, self.taxonomy, scorer=fuzz.WRatio, limit=3, score_cutoff=80,
                                processor=str.casefold)
        ids = list(dict.fromkeys([c for c, _, _ in close] + [key for _, _, key in named]))[:5]
        if not _CATEGORY.fullmatch(given):
            ids = [key for _, _, key in named] or ids
        hint = "; ".join(f"{c} ({self.taxonomy[c]})" for c in ids)
        closest = (f" Close ones: {hint}." if hint
                   else " arXiv's categories look like cs.LG, stat.ML, math.OC, quant-ph.")
        return f"arXiv has no category “{shown}”.{closest} Nothing was changed."

    def _author_given(self, words: list[str]) -> str:
        """The author as given: a name, or an OpenAlex id."""
        if len(words) != 1:
            raise UsageError('Give one author: their name in quotes, or their OpenAlex id (A5023888391).')
        text = " ".join(words[0].split())
        if not text or len(text) > NAME_CHARS:
            raise UsageError(f"Give an author's name of 1 to {NAME_CHARS} characters.")
        return text

    def _author(self, incoming: Incoming, text: str) -> Reply:
        """An author by id (checked with OpenAlex) or by name (one match follows; several
        are listed, to choose one by its id)."""
        given = author_id(text)

        def ask() -> list[Author] | FetchError:
            try:
                if given:
                    found = self.lookup.author(given)
                    return [found] if found else []
                return self.lookup.authors(text)
            except FetchError as problem:
                return problem

        try:
            with self.pool.line((incoming.channel.platform, incoming.user.user_id)):
                [people] = self.pool.run([ask], time.monotonic() + LOOKUP_SECONDS)
        except MemberBusy:
            return Reply(text="Your last line is still being answered; send this again in a moment.",
                         ephemeral=True, ok=False)
        except Stopped:
            return Reply(text="paperclub is restarting; send this again in a minute.", ephemeral=True, ok=False)
        if isinstance(people, OpenAlexError):
            log.warning("follow author: OpenAlex answered badly: %s", people)
            return Reply(text=f"OpenAlex answered something paperclub cannot read ({people.reason[:200]}), so "
                              "nothing was changed. Try again later, or give the author's OpenAlex id (A…).",
                         ephemeral=True, ok=False)
        if people is None or isinstance(people, FetchError):
            log.warning("follow author: OpenAlex lookup failed: %s", people or "no answer in time")
            return Reply(text="OpenAlex could not be reached just now, so nothing was changed. Try again in a "
                              "few minutes.", ephemeral=True, ok=False)
        if not people:
            what = f"the id {given}" if given else f"“{text}”"
            return Reply(text=f"OpenAlex knows no author by {what}, so nothing was changed. Check the spelling, "
                              "or look the author up on openalex.org and give their id (A…).",
                         ephemeral=True, ok=False)
        if len(people) > 1:
            lines = "\n".join(f"• {p.line()}" for p in people)
            return Reply(text=f"{counted(len(people), 'author')} on OpenAlex go by “{text}”:\n{lines}\n"
                              f"Follow one by its id, e.g. `follow author {people[0].id}`. Nothing was changed yet.",
                         ephemeral=True, ok=True)
        person = people[0]
        return self._add(incoming, "author", person.id, "", person.name)

    def _add(self, incoming: Incoming, kind: str, target: str, query: str, label: str) -> Reply:
        channel = self.channels.get(incoming.channel)
        try:
            follow = self.follows.add(channel.id, kind, target, query, label, incoming.user.user_id, self.clock())
        except FollowExists:
            return Reply(text=f"This channel follows {label} already; nothing was changed.", ephemeral=True, ok=False)
        except TooManyFollows:
            return Reply(text=f"This channel has {counted(FOLLOWS_MAX, 'follow')}, the most it may have: "
                              "`unfollow N` one first. Nothing was changed.", ephemeral=True, ok=False)
        return Reply(text=f"Following {follow.label} (number {follow.id}). New papers arrive once a day, in the "
                          f"collection {follow.collection}; `following` shows what each follow brought, and "
                          "`fresh 7d` makes the paper of the day come from them.")

    # --- unfollow, following, fresh -------------------------------------------------------------

    def unfollow(self, incoming: Incoming, args: str) -> Reply:
        words = args.split()
        follow_id = number(words[0]) if len(words) == 1 else None
        if follow_id is None:
            raise UsageError("Give the follow's number, as `following` lists it.")
        require_manager(incoming, "change what this channel follows")
        channel = self.channels.get(incoming.channel)
        gone = self.follows.remove(channel.id, follow_id)
        if gone is None:
            return Reply(text=f"This channel has no follow number {follow_id} (`following` lists them); nothing "
                              "was changed.", ephemeral=True, ok=False)
        return Reply(text=f"Stopped following {gone.label}. The papers it brought stay in {gone.collection}.")

    def following(self, incoming: Incoming, args: str) -> Reply:
        if args.strip():
            raise UsageError("`following` takes nothing more.")
        channel = self.channels.get(incoming.channel)
        follows = self.follows.of_channel(channel.id)
        if not follows:
            return Reply(text="This channel follows nothing yet. A manager can start with `follow arxiv cs.LG`, "
                              '`follow author "Yann LeCun"` or `follow citations`.')
        since = self.clock() - WEEK
        brought = self.follows.brought([f.id for f in follows], since)
        zone = self.zone_of(channel)
        lines = [self._line(f, brought.get(f.id, 0), since, zone) for f in follows]
        return Reply(text=f"This channel follows {counted(len(follows), 'thing')}:\n" + "\n".join(lines))

    def _line(self, follow: FollowView, brought: int, since: datetime, zone: str) -> str:
        week = f"{counted(brought, 'new paper')} this week"
        if brought:
            titles = self.follows.latest_titles(follow.id, since, 2)
            shown = "; ".join(f"[{pid}] {title[:80]}" for pid, title in titles)
            week += f" ({shown}{'; …' if brought > 2 else ''})"
        if follow.last_run_at is None:
            state = "first fetch within the day"
        elif follow.last_status == "waiting" and follow.wait_until:
            state = f"fetching again after {shown_at(follow.wait_until, zone, '%d %b %H:%M')} " \
                    f"({(follow.last_message or '').partition(': ')[0]})"
        elif follow.last_status == "failed":
            state = (f"last fetch {shown_at(follow.last_run_at, zone, '%d %b %H:%M')} failed: "
                     f"{(follow.last_message or '')[:160]}")
        else:
            state = f"last fetched {shown_at(follow.last_run_at, zone, '%d %b %H:%M')}"
            if follow.last_status == "partial":  # "2 new; skipped 1 work: W2 (why)"
                state += f", {(follow.last_message or '').partition('; ')[2][:300]}"
        return f"{follow.id}. {follow.label}: {week}; {state}"

    def fresh(self, incoming: Incoming, args: str) -> Reply:
        words = args.lower().split()
        channel = self.channels.get(incoming.channel)
        if not words:
            days = self.follows.fresh_days([channel.id]).get(channel.id)
            return Reply(text=_describe_fresh(days))
        if len(words) != 1:
            raise UsageError("Give one window, e.g. 7d, or off.")
        days = None
        if words[0] != "off":
            found = _FRESH.fullmatch(words[0])
            days = int(found.group(1)) if found else 0
            if not 1 <= days <= FRESH_MAX_DAYS:
                raise UsageError(f"The window is a number of days from 1d to {FRESH_MAX_DAYS}d, e.g. 7d, or off.")
        require_manager(incoming, "change where the paper of the day comes from")
        self.follows.set_fresh(channel.id, days)
        return Reply(text=f"Done. {_describe_fresh(days)}")


def _describe_fresh(days: int | None) -> str:
    if not days:
        return "Fresh picks are off: the paper of the day comes from the corpus (`fresh 7d` turns them on)."
    return (f"Fresh picks: when the follows brought papers on this channel's topics in the last "
            f"{counted(days, 'day')}, the paper of the day is one of them; otherwise it comes from the corpus.")


def _words(args: str) -> list[str]:
    """The arguments split as a shell would (quotes group words; typographic quotes
    count), or a usage error for an unclosed quote."""
    try:
        return shlex.split(args.translate(_QUOTES))
    except ValueError:
        raise UsageError("A quote is not closed.") from None

