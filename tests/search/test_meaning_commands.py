"""`search` and `similar` by meaning, end to end: a member's line through the console and
the chat core, on services wired from the environment as a deployment's are
(PAPERCLUB_EMBEDDINGS, PAPERCLUB_MODEL_DIR), the papers embedded as `paperclub embed`
embeds them, with the real model. The corpus is made so that words alone answer
otherwise: no paper uses the query's words, and the paper sharing the most words with
the one `similar` is asked about is on another subject."""

from __future__ import annotations

import pytest

from adapters.console import ConsoleSession
from bot.app import Services, build_services
from bot.cards.cards import NEAR_IN_MEANING, NEAR_TO_PAPER
from bot.corpus.embedded import StoredVectors
from bot.corpus.library import Library
from bot.corpus.records import PaperRecord
from bot.search.backfill import embed_pending
from bot.search.hybrid import HybridSearcher
from bot.search.tokens import Tokenizer
from tests.conftest import MINILM
from tests.search.test_meaning import PAPERS

MOTORWAYS = "Vehicle collisions on motorways"
CAMERAS = "Road deaths fall where speed cameras slow cars"
CELLS = "How cells change their number of chromosomes"
ROADS = [
    *PAPERS[1:],  # proteins, molecules, robots, images, language
    # Close in meaning to the motorways paper; shares three of its words (speed, cars, highways).
    (CAMERAS, "Fewer drivers are killed after cameras are installed on rural highways."),
    # Far in meaning; shares four of its words (study, limits, change, number).
    (CELLS, "We study limits on division in yeast."),
    PAPERS[0],  # the motorways paper, last: a ranking that ties everything (ties go to the lower id) puts it last
]
QUERY = "traffic accidents"


@pytest.fixture
def roads(sqlite_db, minilm):
    """The library, embedded as `paperclub embed` embeds it."""
    assert ROADS[-1][0] == MOTORWAYS
    records = [PaperRecord(title, line=n, abstract=abstract) for n, (title, abstract) in enumerate(ROADS, 1)]
    Library(sqlite_db).import_records(records, collection="roads", source="roads.jsonl", fmt="jsonl")
    assert embed_pending(StoredVectors(sqlite_db), minilm) == len(ROADS)
    return sqlite_db


@pytest.fixture
def member_of(roads, monkeypatch):
    """A member of a channel on the library, with services wired from the environment
    with embeddings on (the model from ../shared/models) or off."""
    made = []

    def member(switch: str) -> tuple[Services, ConsoleSession]:
        monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", switch)
        monkeypatch.setenv("PAPERCLUB_MODEL_DIR", str(MINILM))
        services = build_services(roads.url)
        made.append(services)
        assert isinstance(services.search.current(), HybridSearcher) == (switch == "on")
        return services, ConsoleSession(services.core, channel="roads", user="ann")

    yield member
    for services in made:
        services.db.dispose()


def test_search_answers_first_with_a_paper_that_shares_no_word_with_the_query(member_of):
    _services, member = member_of("on")
    first = member.send(f"search {QUERY}").cards[0]
    assert first.title == MOTORWAYS
    words = Tokenizer().tokens
    assert not set(words(QUERY)) & set(words(" ".join(ROADS[-1]))) and first.matched_terms == []
    assert first.reason == NEAR_IN_MEANING
    _services, by_words = member_of("off")
    assert by_words.send(f"search {QUERY}").text.startswith(f"No papers match `{QUERY}`")


def test_similar_lists_the_paper_close_in_meaning_first(member_of):
    services, member = member_of("on")
    motorways = next(paper.id for paper in services.library.iter_papers() if paper.title == MOTORWAYS)
    titles = [card.title for card in member.send(f"similar {motorways}").cards]
    assert titles[:2] == [CAMERAS, CELLS] and MOTORWAYS not in titles
    _services, by_words = member_of("off")
    assert [card.title for card in by_words.send(f"similar {motorways}").cards] == [CELLS, CAMERAS]


def test_similar_says_when_a_paper_shares_none_of_the_papers_words(member_of):
    services, member = member_of("on")
    language = next(paper.id for paper in services.library.iter_papers() if paper.title == PAPERS[5][0])
    cards = member.send(f"similar {language}").cards
    # Brought by meaning alone: the card does not speak of words the member never typed.
    assert cards and all(card.reason == NEAR_TO_PAPER and card.matched_terms == [] for card in cards)
    _services, by_words = member_of("off")
    assert all(card.reason == "" for card in by_words.send(f"similar {language}").cards)
