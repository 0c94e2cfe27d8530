"""The paper of the day by meaning: a channel whose members upvoted papers on one subject
gets papers on that subject though they share few words with the upvoted ones, and the
card names the paper each is close to. The real model (../shared/models), a corpus built
for it: papers on the sea, and papers elsewhere that share the upvoted titles' words."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from adapters.console import ConsoleSession
from bot.app import build_services
from bot.corpus.embedded import StoredVectors
from bot.corpus.library import Library
from bot.corpus.records import PaperRecord
from bot.messages import Reply
from bot.search.backfill import embed_pending
from bot.search.hybrid import HybridSearcher
from bot.search.tokens import Tokenizer
from bot.services.models import Post
from tests.clock import Clock
from tests.conftest import MINILM

LIKED = [
    ("Coral reef bleaching under warming seas",
     "Heat stress expels the symbiotic algae of corals; we survey reefs across three summers."),
    ("Migration routes of humpback whales",
     "Satellite tags follow whales between feeding grounds and breeding lagoons."),
    ("Plankton blooms and ocean nutrient cycles",
     "Phytoplankton growth follows upwelling of nitrogen and iron in the open sea."),
]
ON_THE_SUBJECT = [
    ("Deep-sea hydrothermal vent ecosystems",
     "Tube worms and bacteria live on chemical energy far below the surface."),
    ("Overfishing and the decline of tuna stocks",
     "Catch records show fleets depleting bluefin populations faster than they recover."),
    ("Kelp forests as carbon sinks", "Giant seaweed stores carbon along rocky coasts and shelters juvenile fish."),
    ("Sea turtle nesting on tropical beaches",
     "Hatchlings emerge at night and crawl toward the waves; lights disorient them."),
    ("Acidification threatens shellfish larvae",
     "Lower pH dissolves the shells of oysters and mussels in their first weeks."),
]
# Elsewhere, and sharing the upvoted titles' words: what words alone pick.
ELSEWHERE = [
    ("Warming up learning rate schedules for transformers",
     "A linear warm-up of the learning rate stabilises training of deep networks."),
    ("Migration of legacy databases to the cloud",
     "Routes for moving relational schemas between data centres with little downtime."),
    ("Bloom filters for fast set membership",
     "Hash functions answer membership queries with a bounded false positive rate."),
    ("Nutrient intake and child growth in rural schools",
     "School meals improve height and weight of children over two years."),
    ("Cycles in random graphs", "The number of cycles of each length in sparse random graphs converges."),
    ("Reef: a runtime for streaming analytics", "Reef schedules operators across a cluster for low latency streams."),
    ("Routing algorithms for delivery trucks", "Vehicle routing with time windows solved by column generation."),
    ("Humpback: a compressed index for genomes", "Succinct data structures store DNA reads for fast lookup."),
    ("Seasonal demand forecasting for retail", "Gradient boosted trees predict weekly sales across stores."),
    ("Proof search in dependent type theory", "Tactics automate proofs of program properties."),
    ("Bleaching of paper pulp with ozone", "Industrial chemistry replaces chlorine in pulp mills."),
    ("Heat exchangers for data centre cooling", "Liquid cooling lowers the energy use of servers."),
]


@pytest.fixture
def sea(sqlite_db, minilm):
    library = Library(sqlite_db)
    papers = LIKED + ON_THE_SUBJECT + ELSEWHERE
    records = [PaperRecord(title, line=n, abstract=abstract) for n, (title, abstract) in enumerate(papers, 1)]
    library.import_records(records, collection="c", source="c.jsonl", fmt="jsonl")
    embed_pending(StoredVectors(sqlite_db), minilm)
    return sqlite_db


def _channel_that_upvoted(services) -> tuple[ConsoleSession, dict[str, int]]:
    """A channel where the three papers on the sea were posted and voted up."""
    ids = {paper.title: paper.id for paper in services.library.iter_papers()}
    boss = ConsoleSession(services.core, channel="sea", user="ann", manager=True)
    boss.send("settings")  # the channel exists
    channel = services.channels.get(boss.channel)
    for title, _abstract in LIKED:
        with services.db.session() as session:
            session.add(Post(channel_id=channel.id, paper_id=ids[title], kind="daily", state="sent", reason="",
                             matched=[]))
        for member in ("bob", "cy"):
            assert ConsoleSession(services.core, channel="sea", user=member).send(f"vote {ids[title]} up").ok
    return boss, ids


def test_upvotes_on_one_subject_bring_that_subject_in_other_words(sea):
    services = build_services(sea.url, env={"PAPERCLUB_MODEL_DIR": str(MINILM)})
    assert isinstance(services.search.current(), HybridSearcher)
    boss, ids = _channel_that_upvoted(services)
    words = services.search.tokenizer.tokens  # stemmed, stop words left out
    liked_words = {term for title, _ in LIKED for term in words(title)}
    subject = {title for title, _ in ON_THE_SUBJECT}
    picks = [boss.send("next").cards[0] for _day in range(5)]
    titles = [card.title for card in picks]
    assert sum(title in subject for title in titles) >= 4, titles
    for card in picks:
        if card.title in subject:
            assert len(set(words(card.title)) & liked_words) <= 1  # few words shared
            # The card says which upvoted paper it is close to, by its number and title.
            assert card.reason.startswith("Close in meaning to [")
            assert "which this channel voted up" in card.reason
            named = int(card.reason.split("[", 1)[1].split("]", 1)[0])
            assert named in {ids[title] for title, _ in LIKED}


def test_by_words_alone_the_same_votes_bring_the_shared_words(sea):
    services = build_services(sea.url, env={"PAPERCLUB_EMBEDDINGS": "off"})
    assert not isinstance(services.search.current(), HybridSearcher)
    boss, _ids = _channel_that_upvoted(services)
    titles = [boss.send("next").cards[0].title for _day in range(5)]
    assert sum(title in {t for t, _ in ON_THE_SUBJECT} for title in titles) <= 1, titles


def test_fresh_papers_from_a_follow_are_ranked_against_the_profile(sea, minilm):
    from bot.channels.channels import ChannelSettings
    from bot.messages import ChannelRef
    from bot.search.builtin.service import SearchService
    from bot.search.embedding import EmbeddingConfig
    from bot.search.hybrid import HybridBackend
    from bot.services.picks import Candidate, Feedback, Picker

    library = Library(sea)
    ids = {paper.title: paper.id for paper in library.iter_papers()}
    index = HybridBackend(SearchService(library, index_dir=None), StoredVectors(sea), EmbeddingConfig(),
                          load=lambda _config: minilm).current()
    picker = Picker(index.tokenizer)
    fresh = [Candidate(ids[title], "new on arXiv 25 Nov in q-bio.PE") for title in
             ("Routing algorithms for delivery trucks", "Kelp forests as carbon sinks", "Cycles in random graphs")]

    def channel(*topics: str) -> ChannelSettings:
        return ChannelSettings(1, ChannelRef("console", "local", "f"), None, True, None, topics, ())

    liked = Feedback(liked=tuple(ids[title] for title, _ in LIKED))
    pick = picker.choose_from(index, channel(), fresh, set(), liked)
    assert pick is not None and pick.paper_id == ids["Kelp forests as carbon sinks"] and pick.by_meaning
    assert pick.reason == "new on arXiv 25 Nov in q-bio.PE" and pick.resembles  # named on the card
    # Topics alone, in words the paper does not use: close in meaning is on the subject.
    pick = picker.choose_from(index, channel("marine ecology"), fresh, set())
    assert pick is not None and pick.paper_id == ids["Kelp forests as carbon sinks"] and pick.matched == ()
    # Nothing fresh on the channel's subject: none of them (the corpus decides then).
    assert picker.choose_from(index, channel("marine ecology"), fresh[:1] + fresh[2:], set()) is None
    # Without topics or votes: the newest, as by words.
    assert picker.choose_from(index, channel(), fresh, set()).paper_id == fresh[0].paper_id


def test_the_digest_orders_the_weeks_papers_by_the_same_profile(sea, minilm):
    from bot.channels.channels import ChannelSettings
    from bot.messages import ChannelRef
    from bot.search.builtin.service import SearchService
    from bot.search.embedding import EmbeddingConfig
    from bot.search.hybrid import HybridBackend
    from bot.services.picks import Feedback, Picker

    library = Library(sea)
    ids = {paper.title: paper.id for paper in library.iter_papers()}
    backend = HybridBackend(SearchService(library, index_dir=None), StoredVectors(sea), EmbeddingConfig(),
                            load=lambda _config: minilm)
    picker, channel = Picker(backend.tokenizer), ChannelSettings(1, ChannelRef("console", "l", "d"), None, True,
                                                                 None, (), ())
    week = [ids[t] for t in ("Cycles in random graphs", "Sea turtle nesting on tropical beaches",
                             "Bloom filters for fast set membership", "Overfishing and the decline of tuna stocks")]
    liked = Feedback(liked=tuple(ids[title] for title, _ in LIKED))
    scores = picker.relevance(backend.current(), channel, week, liked)
    ordered = sorted(week, key=lambda p: -scores.get(p, 0.0))
    assert set(ordered[:2]) == {ids["Sea turtle nesting on tropical beaches"],
                                ids["Overfishing and the decline of tuna stocks"]}
    # By words (no vectors used), a channel without topics has no order to give: newest stays first.
    assert picker.relevance(backend.current().engine, channel, week, liked) == {}


# --- end to end: members' votes and the scheduler's tick ------------------------------------


def _paper_of_the_day_after_upvotes(url: str):
    """Services wired from the environment; the channel "sea" posts at 09:00 UTC, its
    manager posts the three papers on the sea for discussion and two members vote each up
    (with the buttons' typed command); the scheduler's tick at 09:00 posts the paper of the
    day. Its card, and the upvoted papers' ids."""
    clock = Clock(datetime(2026, 11, 26, 8, 0, tzinfo=timezone.utc))
    services = build_services(url, clock=clock)
    ids = {paper.title: paper.id for paper in services.library.iter_papers()}
    boss = ConsoleSession(services.core, channel="sea", user="ann", manager=True)
    assert boss.send("schedule 09:00 UTC daily").ok
    liked = [ids[title] for title, _ in LIKED]
    for paper_id in liked:
        post = boss.send(f"discuss {paper_id}")
        up = next(action.typed for action in post.actions if action.value.endswith(" up"))
        for member in ("bob", "cy"):
            assert ConsoleSession(services.core, channel="sea", user=member).send(up).ok
    posted: list[Reply] = []
    clock.now = clock.now.replace(hour=9)
    services.core.tick(clock.now, lambda _channel, reply: posted.append(reply) or "m1", ["console"])
    (post,) = posted
    assert post.text.startswith("Paper of the day, Thursday 26 November 2026")
    services.db.dispose()
    return post.cards[0], liked


@pytest.fixture
def sea_last(sqlite_db, minilm):
    """The papers of `sea`, those on the subject imported last: a ranking that ties
    everything (ties go to the lower id) never favours them."""
    library = Library(sqlite_db)
    papers = LIKED + ELSEWHERE + ON_THE_SUBJECT
    records = [PaperRecord(title, line=n, abstract=abstract) for n, (title, abstract) in enumerate(papers, 1)]
    library.import_records(records, collection="c", source="c.jsonl", fmt="jsonl")
    assert embed_pending(StoredVectors(sqlite_db), minilm) == len(papers)
    return sqlite_db


def test_the_paper_of_the_day_after_upvotes_is_on_their_subject_in_other_words(sea_last, monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "on")
    monkeypatch.setenv("PAPERCLUB_MODEL_DIR", str(MINILM))
    card, liked = _paper_of_the_day_after_upvotes(sea_last.url)
    words = Tokenizer().tokens
    assert card.title in {title for title, _ in ON_THE_SUBJECT}
    assert len(set(words(card.title)) & {term for title, _ in LIKED for term in words(title)}) <= 1
    assert card.reason.startswith("Close in meaning to [") and card.reason.endswith("which this channel voted up.")
    assert int(card.reason.split("[", 1)[1].split("]", 1)[0]) in liked


def test_by_words_alone_the_paper_of_the_day_after_upvotes_shares_their_words(sea_last, monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "off")
    card, _liked = _paper_of_the_day_after_upvotes(sea_last.url)
    # A database "migration", like the humpback whales' routes: the words, not the subject.
    assert card.title == "Migration of legacy databases to the cloud"
    assert card.reason == "Like papers this channel voted up: “Migration routes of humpback whales”."
