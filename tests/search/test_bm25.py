"""The BM25 engine answers exactly like rank_bm25.BM25Okapi on the same tokens."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bot.search.builtin import bm25, compiled, postings
from bot.search.builtin.bm25 import Bm25Index
from bot.search.builtin.files import IndexStore
from bot.search.params import Bm25Params


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


def _saved_and_loaded(index: Bm25Index, directory) -> Bm25Index:
    stored = IndexStore(directory).save(index.arrays(), {"revision": 1, "fingerprint": "test"})
    return Bm25Index.from_arrays(stored.load(), index.params)


@pytest.fixture(params=["built", "loaded"])
def engine(request, corpus_tokens, tmp_path) -> Bm25Index:
    """The engine as built in memory, and as a process serves it: memory-mapped from disk."""
    built = Bm25Index.build(corpus_tokens)
    return built if request.param == "built" else _saved_and_loaded(built, tmp_path)


@pytest.fixture(params=["cost-based", "always"])
def seeding(request, monkeypatch) -> str:
    """Small corpora skip the first threshold (summing every list is cheaper); "always"
    forces it, so leaving the longest lists out is checked on this corpus too."""
    if request.param == "always":
        monkeypatch.setattr(Bm25Index, "_worth_seeding", lambda self, lengths, k: True)
    return request.param


@pytest.fixture(params=["lists read again", "sums scanned"])
def survivors(request, monkeypatch) -> str:
    """Both ways of finding the documents whose partial sums reach the bar: a second
    read of the summed lists (DENSE_SCAN 1: unless every document was summed), and a
    scan of every document's sum (a DENSE_SCAN so large that it always scans)."""
    monkeypatch.setattr(bm25, "DENSE_SCAN", 1 if request.param == "lists read again" else 10**9)
    return request.param


@pytest.fixture(params=["best sums probed", "none probed"])
def probing(request, monkeypatch) -> str:
    """With and without scoring the survivors with the best sums whole first: PROBES 1
    (then k of them) before the left-out terms are looked up, or so many that none are."""
    monkeypatch.setattr(bm25, "PROBES", 1 if request.param == "best sums probed" else 10**9)
    return request.param


def _expected_top(expected: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[int]:
    """rank-bm25 ranks every document; only those with a score are hits."""
    ranked = sorted(range(len(expected)), key=lambda d: (-expected[d], d))
    return [d for d in ranked if expected[d] > 0 and (allowed is None or allowed[d])][:k]


def test_scores_equal_rank_bm25_on_the_seed_corpus(
    corpus_tokens, engine, seeding, survivors, probing
):
    ours = engine
    reference = BM25Okapi(corpus_tokens)
    # The corpus must contain terms in more than half the documents, or the floor is untested.
    assert any(v == reference.epsilon * reference.average_idf for v in reference.idf.values())
    for query in _queries(corpus_tokens, 1000):
        expected = reference.get_scores(query)
        got = ours.scores(query)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12, err_msg=str(query))
        top = ours.top(query, 10)
        assert [d for d, _ in top] == _expected_top(expected, 10), query
        for doc, score in top:
            assert score == pytest.approx(expected[doc], rel=1e-6)


@pytest.mark.parametrize("direct_limit", [0, bm25.DIRECT_LIMIT])
def test_top_k_with_filters_equals_rank_bm25(
    corpus_tokens, engine, monkeypatch, direct_limit, seeding, survivors, probing
):
    """Both ways of ranking a filtered query: pruning with the mask (large filters) and
    scoring the allowed documents directly (selective ones); k from 1 to past the matches."""
    monkeypatch.setattr(bm25, "DIRECT_LIMIT", direct_limit)
    reference = BM25Okapi(corpus_tokens)
    rng = np.random.default_rng(5)
    for i, query in enumerate(_queries(corpus_tokens, 300, seed=11)):
        expected = reference.get_scores(query)
        allowed = rng.random(len(corpus_tokens)) < (0.02, 0.3, 0.9)[i % 3]
        for k in (1, 7, 50, 2000):
            got = [d for d, _ in engine.top(query, k, allowed)]
            assert got == _expected_top(expected, k, allowed), (query, k)


@pytest.mark.parametrize(
    "params", [Bm25Params(k1=1.2, b=0.5, epsilon=0.1), Bm25Params(k1=2.0, b=1.0)]
)
def test_other_parameters_match_too(corpus_tokens, params):
    ours = Bm25Index.build(corpus_tokens, params)
    reference = BM25Okapi(corpus_tokens, k1=params.k1, b=params.b, epsilon=params.epsilon)
    for query in _queries(corpus_tokens, 50, seed=3):
        np.testing.assert_allclose(
            ours.scores(query), reference.get_scores(query), rtol=1e-6, atol=1e-12
        )


def test_top_respects_the_allowed_mask_and_breaks_ties_by_document_order():
    docs = [["apple", "pie"], ["apple", "pie"], ["banana"], ["apple", "pie"]]
    index = Bm25Index.build(docs)
    assert [d for d, _ in index.top(["apple"], 2)] == [0, 1]
    allowed = np.array([False, True, True, True])
    assert [d for d, _ in index.top(["apple"], 5, allowed)] == [1, 3]
    assert index.top(["cherry"], 5) == []


@pytest.mark.parametrize("repeats", [1, 40, 300, 5_000])
def test_a_document_repeating_a_word_thousands_of_times_scores_exactly(repeats):
    """Frequencies past a byte are stored in wider postings and still score exactly."""
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(300)]
    docs = [list(rng.choice(words, size=int(rng.integers(5, 60)))) for _ in range(400)]
    docs[17] += ["echo"] * repeats
    docs[18] += ["echo", "w1"]
    index, reference = Bm25Index.build(docs), BM25Okapi(docs)
    for query in (["echo"], ["echo", "w1"], ["w2", "echo", "w3"]):
        expected = reference.get_scores(query)
        got = index.top(query, 5)
        assert [d for d, _ in got] == _expected_top(expected, 5)
        assert [s for _, s in got] == pytest.approx([expected[d] for d, _ in got], rel=1e-9)


def test_top_matched_names_the_query_terms_each_document_has():
    docs = [["graph", "neural"], ["graph"], ["neural", "net"]]
    index = Bm25Index.build(docs)
    found = {doc: m.terms() for doc, _score, m in index.top_matched(["neural", "graph", "x"], 3)}
    assert found == {0: ("neural", "graph"), 1: ("graph",), 2: ("neural",)}


def test_empty_corpus_has_no_hits():
    index = Bm25Index.build([])
    assert index.top(["anything"], 3) == []
    assert len(index.scores(["anything"])) == 0


def test_document_numbers_take_three_bytes_and_a_segment_refuses_more():
    docs = np.array([0, 1, 255, 256, 65_535, 65_536, 2**24 - 1])
    packed = postings.pack(docs)
    assert packed.shape == (len(docs), 3) and packed.dtype == np.uint8
    assert postings.unpack(packed).tolist() == docs.tolist()
    assert postings.unpack(packed, np.int32).tolist() == docs.tolist()
    with pytest.raises(ValueError, match="16,777,215"):
        postings.pack(np.array([2**24]))


def test_one_documents_terms_and_a_merge_read_back_from_the_postings():
    """No document -> terms rows are stored: `doc_impacts` and `counts` recover them."""
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(50)]
    docs = [list(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(300)]
    index = Bm25Index.build(docs)
    for doc in (0, 150, 299):
        terms, impacts = index.doc_impacts(doc)
        assert [index.vocabulary[t] for t in terms] == sorted(set(docs[doc]))
        assert np.all(impacts > 0)
    counts = index.counts()
    for doc in (0, 150, 299):
        start, end = counts.rows.bounds(doc)
        pairs = zip(counts.rows.cols[start:end], counts.rows.values[start:end], strict=True)
        got = {counts.vocabulary[t]: int(f) for t, f in pairs}
        assert got == {w: docs[doc].count(w) for w in set(docs[doc])}


def test_an_index_hands_its_loops_one_type_built_or_loaded(corpus_tokens, tmp_path):
    """Each compiled loop is compiled once (and cached): an index built in memory and
    the same index memory-mapped from disk give them read-only arrays alike."""
    built = Bm25Index.build(corpus_tokens)
    loaded = _saved_and_loaded(built, tmp_path)
    for index in (built, loaded):
        arrays = [*index.term_docs.arrays("t").values(), *index.heads]
        assert not any(a.flags.writeable for a in arrays)
    # Counted after the built index's query: a test before it in this process may have
    # compiled the loop for other frequency widths.
    built.top(corpus_tokens[0][:3], 5)
    signatures = len(compiled.contenders.signatures)
    loaded.top(corpus_tokens[0][:3], 5)
    assert len(compiled.contenders.signatures) == signatures
