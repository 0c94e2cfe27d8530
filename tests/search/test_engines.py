"""The search interface (bot.search.engine) answered by two engines: the built-in index
and rank-bm25's BM25Okapi (tests/search/simple_engine.py) give the same answers, to
rankings and to members' queries, so the interface says all that callers depend on.
(tests/search/test_backends.py holds the backends that hand them out to one contract.)"""

from __future__ import annotations

import random

import pytest

from bot.search.engine import Engine, Searcher
from bot.search.query import Query
from tests.search.simple_engine import SimpleEngine

COLLECTIONS = ["openreview", "poster-session", "Trending", "topic-abstracts", "blog-review", "no-such"]


@pytest.fixture(scope="module")
def both(seeded):
    library, search, _core = seeded
    return search.current(), SimpleEngine(library.papers(), search.tokenizer)


def _same_hits(got, expected):
    assert [(h.paper_id, h.matched) for h in got] == [(h.paper_id, h.matched) for h in expected]
    assert [h.score for h in got] == pytest.approx([h.score for h in expected], rel=1e-9)


def test_both_are_searchers(both):
    for engine in both:
        assert isinstance(engine, Engine) and isinstance(engine, Searcher)
    assert not isinstance(object(), Engine)


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


def _queries(simple: SimpleEngine) -> list[str]:
    """Members' queries drawn from the corpus: words of abstracts, whole titles (promoted),
    each filter alone and with words, values no paper has, and typos."""
    rng = random.Random(7)
    queries = [
        "graph neural networks", "author:levine", 'author:"yoshua bengio" reinforcement',
        "track:oral", 'track:"top 25%" attention', "in:trending", 'tag:"domain adaptation"',
        "tag:learning", "in:openreview track:spotlight diffusion", "track:keynote", "in:nowhere",
        'tag:"no such tag"', "author:nobodyatall", "nueral netwroks", "reinforcment lerning",
        "raph neural networks", "graph author:zzzz", "zzqxv", "transformer in:blog-review",
    ]
    for paper in rng.sample(simple.papers, 40):
        words = paper.text.split()
        start = rng.randrange(max(len(words) - 6, 1))
        queries += [paper.title, " ".join(words[start : start + rng.randint(1, 6)])]
        if paper.authors:
            queries.append(f'author:"{rng.choice(paper.authors)}" {rng.choice(words)}')
        word = max(words, key=len).strip(".,;:()").lower()
        if len(word) > 5:  # two letters swapped: a typo did-you-mean should catch
            queries.append(word[:2] + word[3] + word[2] + word[4:])
    return queries


def test_members_queries_get_the_same_answers(both):
    index, simple = both
    for text in _queries(simple):
        query = Query.parse(text)
        for k in (1, 10):
            got, expected = simple.search(query, k), index.search(query, k)
            _same_hits(got, expected)
            assert [h.title_match for h in got] == [h.title_match for h in expected], text
        assert simple.filtered_count(query) == index.filtered_count(query), text
        assert simple.unknown_filter(query) == index.unknown_filter(query), text
        assert simple.spellcheck(query) == index.spellcheck(query), text


def test_the_answers_compared_are_not_all_alike(both):
    """The queries above reach every kind of answer: a promoted title, a filter's
    listing, a refusal that lists values, and a correction."""
    _index, simple = both
    answers = [Query.parse(text) for text in _queries(simple)]
    hits = [simple.search(query, 10) for query in answers]
    assert any(found and found[0].title_match for found in hits)
    assert any(not query.text and len(found) == 10 for query, found in zip(answers, hits, strict=True))
    refusal = simple.unknown_filter(Query.parse("track:keynote"))
    assert refusal is not None and refusal.startswith("No track `keynote`; tracks: ")
    assert simple.spellcheck(Query.parse("nueral netwroks")).corrections == {
        "nueral": "neural", "netwroks": "networks"}
