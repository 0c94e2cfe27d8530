"""Why a paper may matter to this channel, in words a member can check: the channel's
topics it shares terms with, and the papers the channel upvoted or read that share the
most terms with it, named. Made here, not by the model: it is the channel's own part of
a brief (a model's brief is shared by every channel that asks), and it costs nothing.
"""

from __future__ import annotations

from sqlalchemy import case, func, select

from bot.cards.latex import readable
from bot.channels.channels import ChannelSettings
from bot.corpus.library import Library
from bot.search.tokens import Tokenizer
from bot.services.models import Post, PostVote
from store import Database

READ_PAPERS = 30  # the channel's latest upvoted or read papers compared with this one
NAMED = 2  # papers named at most
SHARED_WORDS = 4  # shared words shown per paper or topic at most
MIN_SHARED = 2  # terms a read paper must share to be named (one is chance)


def why_here(db: Database, library: Library, tokenizer: Tokenizer, channel: ChannelSettings, paper_id: int,
             title: str, abstract: str) -> list[str]:
    """Lines for "Why it may matter here", or one line saying no link was found."""
    words = _words(tokenizer, f"{title} {abstract}")
    lines = []
    topics = [(topic, shared) for topic in channel.topics if (shared := _shared(words, _words(tokenizer, topic)))]
    if topics:
        lines.append("It touches this channel's topics: " + "; ".join(
            f"{topic} ({', '.join(shared[:SHARED_WORDS])})" for topic, shared in topics))
    read = _read_papers(db, channel.id, paper_id)
    papers = library.get_many(read)
    near = sorted(((len(shared), pid, shared) for pid in read if pid in papers
                   if len(shared := _shared(words, _words(tokenizer, f"{papers[pid].title} {papers[pid].abstract}")))
                   >= MIN_SHARED), key=lambda item: (-item[0], read.index(item[1])))
    for _count, pid, shared in near[:NAMED]:
        lines.append(f"Close to [{pid}] “{readable(papers[pid].title)}”, which this channel {read[pid]} "
                     f"(shared: {', '.join(shared[:SHARED_WORDS])}).")
    return lines or ["No link found yet to this channel's topics or to the papers it upvoted and read."]


def _words(tokenizer: Tokenizer, text: str) -> dict[str, str]:
    """Each term of `text` with the word it was written as (its first)."""
    found: dict[str, str] = {}
    for term, word in tokenizer.terms_with_words(text):
        found.setdefault(term, word.lower())
    return found


def _shared(paper: dict[str, str], other: dict[str, str]) -> list[str]:
    return [paper[term] for term in paper if term in other]


class _Read(dict[int, str]):
    """Paper id -> what the channel did ("upvoted", "read"), latest first (dicts keep order)."""

    def index(self, paper_id: int) -> int:
        return list(self).index(paper_id)


def _read_papers(db: Database, channel_id: int, paper_id: int) -> _Read:
    net = func.sum(case((PostVote.value == "up", 1), (PostVote.value == "down", -1), else_=0))
    reads = func.sum(case((PostVote.value == "read", 1), else_=0))
    with db.session() as session:
        rows = session.execute(
            select(Post.paper_id, net, reads, func.max(PostVote.updated_at))
            .join(PostVote, PostVote.post_id == Post.id)
            .where(Post.channel_id == channel_id, Post.paper_id != paper_id)
            .group_by(Post.paper_id)
            .order_by(func.max(PostVote.updated_at).desc(), Post.paper_id)
        ).all()
    found = _Read()
    for pid, up, read, _latest in rows:
        if (up or 0) > 0 or (read or 0) > 0:
            found[pid] = "upvoted" if (up or 0) > 0 else "read"
        if len(found) >= READ_PAPERS:
            break
    return found
