"""The search interface (bot.search.engine) answered by two engines: the built-in index
and rank-bm25's BM25Okapi (tests/search/simple_engine.py) give the same answers, so the
interface says all that callers depend on."""

from __future__ import annotations

import random

import pytest

from bot.search.engine import Engine, Searcher
from tests.search.simple_engine import SimpleEngine

COLLECTIONS = ["openreview", "poster-session", "Trending", "topic-abstracts", "blog-review", "no-such"]


@pytest.fixture(scope="module")
def both(seeded):
    library, search, _core = seeded
    return search.current(), SimpleEngine(library.papers(), search.tokenizer)


def _same_hits(got, expected):
    assert [(h.paper_id, h.matched) for h in got] == [(h.paper_id, h.matched) for h in expected]
    assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-9)


def test_the_built_in_index_is_a_searcher_and_the_simple_one_an_engine(both):
    index, simple = both
    assert isinstance(index, Searcher)
    assert isinstance(simple, Engine) and not isinstance(simple, Searcher)


def test_rankings_agree_with_collections_and_exclusions(both, seeded):
    index, simple = both
    _library, search, _core = seeded
    rng = random.Random(5)
    ids = sorted(simple.ids)
    for _ in range(60):
        text = simple.papers[rng.randrange(len(ids))].text
        terms = search.tokenizer.tokens(text)[: rng.randint(1, 12)] * rng.randint(1, 2)
        collections = tuple(rng.sample(COLLECTIONS, rng.randint(0, 2)))
        excluded = set(rng.sample(ids, rng.choice([0, 5, 200])))
        k = rng.choice([1, 10, 40])
        expected = index.rank(terms, k, collections, excluded)
        _same_hits(simple.rank(terms, k, collections, excluded), expected)
        assert not {h.paper_id for h in expected} & excluded
        among = rng.sample(ids, 30)
        assert simple.scores(terms, among) == pytest.approx(index.scores(terms, among), rel=1e-9)


def test_a_paper_reads_the_same_through_both(both):
    index, simple = both
    assert simple.live_count() == index.live_count()
    for paper_id in random.Random(2).sample(simple.ids, 25):
        assert simple.title(paper_id) == index.title(paper_id)
        assert simple.distinctive_terms(paper_id, 12) == index.distinctive_terms(paper_id, 12)
        _same_hits(simple.similar(paper_id, 5), index.similar(paper_id, 5))
    missing = max(simple.ids) + 1
    for engine in both:
        assert engine.title(missing) is None and engine.distinctive_terms(missing, 5) == []
        assert engine.similar(missing) == []


def test_tour_samples_agree(both):
    index, simple = both
    excluded = set(simple.ids[::3])
    for collections in [(), ("blog-review",), ("topic-abstracts", "trending"), ("no-such",)]:
        for seed in ("a:0", "b:12"):
            sample = index.sample(40, seed, collections, excluded)
            assert simple.sample(40, seed, collections, excluded) == sample
            assert not set(sample) & excluded
    assert index.sample(40, "a:0", ("no-such",)) == []
