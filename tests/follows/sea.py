"""A channel whose members voted up three papers on the sea and which follows q-bio.PE on
the fake arXiv: the scene of the end-to-end tests of follows and the digest by meaning
(tests/follows/test_meaning.py, tests/digest/test_meaning_digest.py).

The fresh papers come in two kinds: three on the sea in words the upvoted papers do not
use, and two elsewhere, submitted last. By meaning (the channel's profile: the mean of
the upvoted papers' vectors) the order is BY_MEANING; by words a channel without topics
has no order but the newest first (NEWEST_FIRST), the reverse. Cosines with the profile
under all-MiniLM-L6-v2: 0.46, 0.44, 0.39 on the sea, 0.16 and 0.04 elsewhere (relevant
from 0.3, bot.services.picks.RELEVANT_COSINE)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from adapters.console import ConsoleSession
from adapters.fakes.arxiv import ArxivPaper, FakeArxiv
from bot.app import Services
from bot.corpus.embedded import StoredVectors
from bot.corpus.records import PaperRecord
from bot.messages import ChannelRef, Reply
from bot.search.backfill import embed_pending
from bot.search.embedding import Embedder
from tests.daily.test_meaning_picks import LIKED

UTC = timezone.utc
YESTERDAY = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)  # the follows' clock starts Thursday 26 November, 07:00
CATEGORY = "q-bio.PE"

# Best for the channel first; each is submitted an hour before the one after it.
BY_MEANING = [
    ("Seagrass meadows shelter juvenile fish",
     "Underwater grasses in shallow bays protect young cod and store carbon in their sediments."),
    ("Octopus camouflage on the seafloor", "Skin cells change colour in milliseconds to match rocks and sand."),
    ("Salmon returning to their native rivers",
     "Fish navigate from the ocean back upstream to spawn where they hatched."),
    ("Warming caches for faster cold starts", "Preloading functions reduces latency of serverless platforms."),
    ("Bloom: a library for approximate counting",
     "Probabilistic sketches count distinct items in data streams with little memory."),
]
ON_THE_SEA = [title for title, _ in BY_MEANING[:3]]
NEWEST_FIRST = [title for title, _ in reversed(BY_MEANING)]


class Posts:
    """A platform that takes every post, recorded in order."""

    def __init__(self):
        self.replies: list[Reply] = []

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        self.replies.append(reply)
        return f"m{len(self.replies)}"


def listing() -> list[ArxivPaper]:
    """The fresh papers as arXiv lists them, submitted yesterday, oldest first."""
    return [ArxivPaper(f"2611.2000{n}", title, abstract, YESTERDAY + timedelta(hours=n), [CATEGORY])
            for n, (title, abstract) in enumerate(BY_MEANING, 1)]


def sea_channel(services: Services, fake_arxiv: FakeArxiv, now: datetime, model: Embedder | None) -> ConsoleSession:
    """The channel "sea": a paper of the day at 09:00 UTC from the follows' last week, a
    digest on Mondays at 09:00, the three papers on the sea posted for discussion and
    voted up by two members; then the 07:00 tick fetches the fresh papers from the fake
    arXiv, and `model` (None: embeddings off) embeds every paper as `paperclub embed` does."""
    services.library.import_records(
        [PaperRecord(title, line=n, abstract=abstract) for n, (title, abstract) in enumerate(LIKED, 1)],
        collection="library", source="library.jsonl", fmt="jsonl")
    boss = ConsoleSession(services.core, channel="sea", user="alice", manager=True)
    for line in ("schedule 09:00 UTC daily", f"follow arxiv {CATEGORY}", "fresh 7d", "digest mon 09:00"):
        assert boss.send(line).ok, line
    ids = {paper.title: paper.id for paper in services.library.iter_papers()}
    for paper_id in (ids[title] for title, _abstract in LIKED):
        assert boss.send(f"discuss {paper_id}").ok
        for name in ("bob", "cy"):
            assert ConsoleSession(services.core, channel="sea", user=name).send(f"vote {paper_id} up").ok
    fake_arxiv.papers += listing()
    report = services.core.tick(now, Posts(), ["console"])
    assert report["papers_arrived"] == len(BY_MEANING)
    if model is not None:
        assert embed_pending(StoredVectors(services.db), model) == len(LIKED) + len(BY_MEANING)
    return boss
