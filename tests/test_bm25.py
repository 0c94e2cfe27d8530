"""The BM25 engine answers exactly like rank_bm25.BM25Okapi on the same tokens."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bot.bm25 import Bm25Index, Bm25Params


@pytest.fixture(scope="module")
def corpus_tokens(seeded) -> list[list[str]]:
    _library, search, _core = seeded
    return search.current().documents


def _queries(documents: list[list[str]], count: int, seed: int = 7) -> list[list[str]]:
    """Queries of 1-6 terms drawn from real documents, with repeats, frequent words and
    words no document has, so the epsilon floor and query multiplicity are exercised."""
    rng = random.Random(seed)
    vocabulary = sorted({t for doc in documents for t in doc})
    queries = []
    for _ in range(count):
        doc = rng.choice(documents) or ["empty"]
        query = [rng.choice(doc) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.2:
            query.append(rng.choice(vocabulary))
        if rng.random() < 0.1:
            query.append("zzzunknownterm")
        if rng.random() < 0.1:
            query.append(query[0])
        queries.append(query)
    return queries


def test_scores_equal_rank_bm25_on_the_seed_corpus(corpus_tokens):
    ours = Bm25Index.build(corpus_tokens)
    reference = BM25Okapi(corpus_tokens)
    # The corpus must contain terms in more than half the documents, or the floor is untested.
    assert any(v == reference.epsilon * reference.average_idf for v in reference.idf.values())
    for query in _queries(corpus_tokens, 1000):
        expected = reference.get_scores(query)
        got = ours.scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12, err_msg=str(query))
        top = ours.top(query, 10)
        # rank-bm25 ranks every document; only those with a score are hits.
        expected_top = [d for d in sorted(range(len(expected)), key=lambda d: (-expected[d], d)) if expected[d] > 0]
        assert [d for d, _ in top] == expected_top[:10], query
        for doc, score in top:
            assert score == pytest.approx(expected[doc], rel=1e-6)


@pytest.mark.parametrize("params", [Bm25Params(k1=1.2, b=0.5, epsilon=0.1), Bm25Params(k1=2.0, b=1.0)])
def test_other_parameters_match_too(corpus_tokens, params):
    ours = Bm25Index.build(corpus_tokens, params)
    reference = BM25Okapi(corpus_tokens, k1=params.k1, b=params.b, epsilon=params.epsilon)
    for query in _queries(corpus_tokens, 50, seed=3):
        np.testing.assert_allclose(ours.scores(query), reference.get_scores(query), rtol=1e-6, atol=1e-12)


def test_top_respects_the_allowed_mask_and_breaks_ties_by_document_order():
    docs = [["apple", "pie"], ["apple", "pie"], ["banana"], ["apple", "pie"]]
    index = Bm25Index.build(docs)
    assert [d for d, _ in index.top(["apple"], 2)] == [0, 1]
    allowed = np.array([False, True, True, True])
    assert [d for d, _ in index.top(["apple"], 5, allowed)] == [1, 3]
    assert index.top(["cherry"], 5) == []


def test_empty_corpus_has_no_hits():
    index = Bm25Index.build([])
    assert index.top(["anything"], 3) == []
    assert len(index.scores(["anything"])) == 0
