"""What a paper-of-the-day post says: the card, why it was picked, the vote buttons."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import date

from bot.cards.cards import card, matched_words
from bot.cards.latex import readable
from bot.channels.channels import ChannelSettings
from bot.corpus.library import Library
from bot.messages import Action, Reply
from bot.search.engine import Hit
from bot.search.tokens import Tokenizer
from bot.services.models import Post
from bot.services.picks import Pick
from store.models import Paper

log = logging.getLogger(__name__)

# Lines the features add about a paper to a scheduled message (bot.feature.Features.lines_about):
# (channel, paper id, occasion) -> lines, made ahead (a TL;DR), never waiting on a provider.
LinesAbout = Callable[[ChannelSettings, int, str], list[str]]


def no_lines(_channel: ChannelSettings, _paper_id: int, _occasion: str) -> list[str]:
    return []


class PostReplies:
    def __init__(self, library: Library, tokenizer: Tokenizer, lines_about: LinesAbout = no_lines):
        self.library = library
        self.tokenizer = tokenizer
        self.lines_about = lines_about

    def about(self, channel: ChannelSettings, paper_id: int) -> list[str]:
        """The features' lines about the paper for its post; none when one fails (a bug
        there is logged, and the post goes out without them)."""
        try:
            return self.lines_about(channel, paper_id, "post")
        except Exception:
            log.exception("the lines about paper %d for %s failed; the post goes without them", paper_id,
                          channel.ref.key())
            return []

    def rerendered(self, channel: ChannelSettings, post: Post, paper: Paper, tally_line: str) -> Reply:
        """A sent post again, with the reason it was given then, its current tally, and
        the features' lines about it (a TL;DR made since it went out joins it)."""
        hit = Hit(paper.id, 0.0, tuple(post.matched)) if post.matched else None
        shown = card(paper, self.tokenizer, hit, reason=post.reason)
        shown.about = self.about(channel, paper.id)
        return Reply(
            text=f"{heading(post.kind, post.local_date)}\n{tally_line}",  # the card names the paper
            cards=[shown],
            actions=vote_actions(post.id, paper.id),
            post_id=post.id,
        )

    def post(
        self, channel: ChannelSettings, paper: Paper, pick: Pick, day: date | None, post_id: int | None,
        kind: str = "manual",
    ) -> Reply:
        reason = self.reason(channel, paper, pick)
        hit = Hit(paper.id, pick.score, pick.matched) if pick.matched else None
        shown = card(paper, self.tokenizer, hit, reason=reason)
        shown.about = self.about(channel, paper.id)
        return Reply(
            text=heading(kind, day),  # the card below says the title: not twice
            cards=[shown],
            actions=vote_actions(post_id, paper.id) if post_id is not None else [],
            open_thread=_thread_name(readable(paper.title)),
            post_id=post_id,
        )

    def reason(self, channel: ChannelSettings, paper: Paper, pick: Pick) -> str:
        """Why this paper: the liked papers it resembles, the topic terms it matched."""
        tokenizer = self.tokenizer
        topic_terms = set(tokenizer.tokens(" ".join(channel.topics)))
        on_topic = [t for t in pick.matched if t in topic_terms]
        close = self._close_in_meaning(pick)
        if pick.reason:  # offered by a candidate source: its reason, then the topics it matches
            offered = offered_reason(pick.reason, paper, on_topic, tokenizer) + "."
            return f"{offered} {close}" if close else offered
        parts = []
        if close:
            parts.append(close)
        elif pick.resembles:
            liked = self.library.get_many(pick.resembles)
            titles = ", ".join(f"“{readable(liked[p].title)}”" for p in pick.resembles if p in liked)
            parts.append(f"Like papers this channel voted up: {titles}.")
        if on_topic:
            words = matched_words(f"{paper.title} {paper.abstract}", on_topic, tokenizer)
            parts.append(f"Matches this channel's topics: {', '.join(words)}.")
        if not parts and pick.by_meaning:
            wanted = "this channel's topics" if channel.topics else "what this channel voted up"
            parts.append(f"Close in meaning to {wanted}.")
        if not parts and pick.matched:
            words = matched_words(f"{paper.title} {paper.abstract}", pick.matched[:6], tokenizer)
            parts.append(f"Close to what this channel voted up (shares: {', '.join(words)}).")
        if parts:
            return " ".join(parts)
        if channel.topics:
            return "Nothing unposted matches this channel's topics any more, so a paper from the wider corpus."
        return (
            "A tour of the corpus: this channel has no topics yet (`topics add WORDS` steers the picks, "
            "and so do votes); chosen to differ from the last posts."
        )


    def _close_in_meaning(self, pick: Pick) -> str:
        """The upvoted papers a pick by meaning is close to, by number and title ("" for a
        pick by words: it says which papers it shares terms with, as it always did)."""
        if not (pick.by_meaning and pick.resembles):
            return ""
        liked = self.library.get_many(pick.resembles)
        titles = " and ".join(f"[{p}] “{readable(liked[p].title)}”" for p in pick.resembles if p in liked)
        return f"Close in meaning to {titles}, which this channel voted up." if titles else ""


HEADINGS = {"manual": "Next paper", "discussion": "For discussion"}  # by the post's kind


def heading(kind: str, day: date | None) -> str:
    """What a post is: the paper of the day (its date), a `next` pick, a `discuss` post."""
    if day is not None:
        return f"Paper of the day, {day:%A %d %B %Y}"
    return HEADINGS.get(kind, "Next paper")


def vote_actions(post_id: int, paper_id: int) -> list[Action]:
    """The three buttons under every post; each value is the command a click sends (it
    names the post), and `typed` the one a member types (the number on the card)."""
    return [
        Action(label, f"vote {post_id} {choice}", style, typed=f"vote {paper_id} {choice}")
        for label, choice, style in (("Want to discuss", "up", "primary"), ("Not for us", "down", "danger"),
                                     ("I read it", "read", "default"))
    ]


# What `search`, `next` and a due post say before the library has any paper.
EMPTY_LIBRARY = ("The library has no papers yet. Add some with `add LINK|ID` (an arXiv id, a DOI or a paper's "
                 "link), or an operator imports a corpus (`paperclub import FILE`; `paperclub demo` for a sample).")


def nothing_left_reply(library_empty: bool = False) -> Reply:
    if library_empty:
        return Reply(text=EMPTY_LIBRARY, ok=True)
    return Reply(
        text=(
            "Nothing left to pick: every paper this channel can draw from has been posted. "
            "Widen it with `use all` (or `use COLLECTION...`), or import more papers "
            "(`paperclub import FILE`)."
        ),
        ok=True,
    )


def _thread_name(title: str) -> str:
    # Discord allows 1..100 characters for a thread name.
    return title if len(title) <= 100 else title[:99] + "…"


def offered_reason(reason: str, paper: Paper, on_topic: Sequence[str], tokenizer: Tokenizer) -> str:
    """A candidate source's reason (a follow's: "new on arXiv 25 Nov in cs.LG"), then the
    channel's topics the paper matches, as their words appear in it."""
    words = matched_words(f"{paper.title} {paper.abstract}", on_topic, tokenizer) if on_topic else []
    topics = f", matches your topics: {', '.join(words)}" if words else ""
    return f"{reason[:1].upper()}{reason[1:]}{topics}"
