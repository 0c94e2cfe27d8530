"""Fresh papers from a follow by meaning, end to end: fetched from the fake arXiv by the
tick, embedded as `paperclub embed` embeds them, and posted as the paper of the day day
after day in the order of the channel's profile (what its members voted up), with the
real model; by words alone the same follow posts the newest first (tests/follows/sea.py)."""

from __future__ import annotations

from datetime import timedelta

from bot.search.hybrid import HybridSearcher
from tests.conftest import MINILM
from tests.follows.sea import BY_MEANING, CATEGORY, NEWEST_FIRST, ON_THE_SEA, Posts, sea_channel


def papers_of_the_day(services, clock, days: int) -> list:
    """The cards of the next `days` papers of the day, at 09:00 UTC each day."""
    posts = Posts()
    start = clock.now.replace(hour=9)
    for day in range(days):
        clock.now = start + timedelta(days=day)
        services.core.tick(clock.now, posts, ["console"])
    return [reply.cards[0] for reply in posts.replies]


def test_fresh_papers_reach_the_channel_closest_to_its_profile_first(make_services, fake_arxiv, clock, minilm,
                                                                     monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "on")
    monkeypatch.setenv("PAPERCLUB_MODEL_DIR", str(MINILM))
    services = make_services()
    sea_channel(services, fake_arxiv, clock.now, minilm)
    assert isinstance(services.search.current(), HybridSearcher)
    liked = {paper.id for paper in services.library.iter_papers() if paper.title not in dict(BY_MEANING)}
    cards = papers_of_the_day(services, clock, len(ON_THE_SEA))
    assert [card.title for card in cards] == ON_THE_SEA
    for card in cards:
        assert card.reason.startswith(f"New on arXiv 25 Nov in {CATEGORY}. Close in meaning to [")
        assert card.reason.endswith("which this channel voted up.")
        named = int(card.reason.split("[", 1)[1].split("]", 1)[0])
        assert named in liked


def test_by_words_alone_the_same_follow_brings_the_newest_first(make_services, fake_arxiv, clock, monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "off")
    services = make_services()
    sea_channel(services, fake_arxiv, clock.now, None)
    assert not isinstance(services.search.current(), HybridSearcher)
    cards = papers_of_the_day(services, clock, len(ON_THE_SEA))
    assert [card.title for card in cards] == NEWEST_FIRST[:len(ON_THE_SEA)]
    assert all(card.reason == f"New on arXiv 25 Nov in {CATEGORY}." for card in cards)

