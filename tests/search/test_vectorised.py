"""The plain numpy loops (`paperclub search` and `import`, short-lived) answer exactly as
the compiled ones: the same documents in the same order, every score to the last bit,
the same matched terms; and such a process never imports numba (issue 31)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from bot.search.builtin import compiled, loops, postings, vectorised
from bot.search.builtin.bm25 import Bm25Index
from tests.conftest import REPO
from tests.search.test_bm25 import _expected_top, _queries, _saved_and_loaded


@pytest.fixture
def plain(monkeypatch):
    """Search with the numpy loops for this test, as `paperclub search` does."""
    monkeypatch.setattr(loops, "_short_lived", True)


def _answers(index: Bm25Index, queries, k=10, allowed=None):
    return [index.top_matched(q, k, allowed) for q in queries]


def _corpus(seed: int = 3, docs: int = 400) -> list[list[str]]:
    """Zipf-like words, a few repeated past a byte's count (wider frequencies)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(600)]
    corpus = []
    for d in range(docs):
        ranks = np.minimum(rng.zipf(1.3, size=int(rng.integers(1, 60))), len(words)) - 1
        corpus.append([words[r] for r in ranks] + (["loud"] * 300 if d % 97 == 5 else []))
    return corpus


@pytest.mark.parametrize("source", ["seeds", "zipf"])
def test_numpy_loops_answer_as_the_compiled_ones(source, corpus_tokens, tmp_path, monkeypatch):
    documents = corpus_tokens if source == "seeds" else _corpus()
    built = Bm25Index.build(documents)
    loaded = _saved_and_loaded(built, tmp_path)
    queries = _queries(documents, 80, seed=5) + [["loud", "w1"], ["w0"] * 3]
    rng = np.random.default_rng(1)
    masks = [None, rng.random(len(documents)) < 0.5]
    for index in (built, loaded):
        for allowed in masks:
            for k in (1, 10):
                fast = _answers(index, queries, k, allowed)
                monkeypatch.setattr(loops, "_short_lived", True)
                slow = _answers(index, queries, k, allowed)
                monkeypatch.setattr(loops, "_short_lived", False)
                assert slow == fast  # documents, float scores (==, not approx), matched terms
    assert sum(len(a) for a in fast) > 50  # the queries found something


def test_numpy_loops_give_rank_bm25s_scores(corpus_tokens, plain):
    index = Bm25Index.build(corpus_tokens)
    reference = BM25Okapi(corpus_tokens)
    for query in _queries(corpus_tokens, 60, seed=9):
        expected = reference.get_scores(query)
        top = index.top(query, 10)
        assert [d for d, _ in top] == _expected_top(expected, 10), query
        for doc, score in top:  # rank-bm25 adds a document's impacts in another order
            assert score == pytest.approx(expected[doc], rel=1e-6)


def test_live_document_frequencies_read_a_chunk_at_a_time(monkeypatch):
    index = Bm25Index.build(_corpus(docs=300))
    rows = index.term_docs
    live = np.random.default_rng(4).random(index.doc_count) < 0.7
    expected = compiled.live_doc_freq(rows.indptr, rows.cols, live)
    monkeypatch.setattr(vectorised, "CHUNK", 37)  # chunk ends inside and between lists
    assert vectorised.live_doc_freq(rows.indptr, rows.cols, live).tolist() == expected.tolist()
    monkeypatch.setattr(vectorised, "CHUNK", 1 << 24)
    assert vectorised.live_doc_freq(rows.indptr, rows.cols, live).tolist() == expected.tolist()
    assert expected.sum() < rows.row_lengths().sum()  # some postings were dead


def test_highest_impacts_match_to_the_bit():
    index = Bm25Index.build(_corpus(docs=300))
    rows, idf = index.term_docs, postings.frozen(index.built.idf)
    for norm in (index.norm, index._norm(index.built.avgdl * 1.7)):
        want = compiled.highest_impacts(rows.indptr, rows.cols, rows.values, idf,
                                        index.k1_plus_1, norm)
        got = vectorised.highest_impacts(rows.indptr, rows.cols, rows.values, idf,
                                         index.k1_plus_1, norm)
        assert got.tobytes() == want.tobytes() and want.max() > 0
    empty = np.zeros(3, dtype=np.int64)  # no postings at all
    assert vectorised.highest_impacts(empty, rows.cols[:0], rows.values[:0], idf[:2],
                                      index.k1_plus_1, index.norm).tolist() == [0.0, 0.0]


def test_a_short_lived_process_builds_large_segments_compiled(monkeypatch):
    """numpy's loops take ~40 bytes a posting: past NUMPY_POSTINGS a build goes compiled."""
    monkeypatch.setattr(loops, "_short_lived", True)
    small, large = np.zeros((10, 3), np.uint8), np.zeros((loops.NUMPY_POSTINGS + 1, 3), np.uint8)
    assert loops._loops_for(small) is vectorised
    assert loops._loops_for(large) is compiled


def test_a_search_command_imports_no_numba(seeded_copy):
    """`paperclub search` (one query, a new process) answers without numba or scipy,
    with the hits a running bot gives."""
    probe = (
        "import json, sys\n"
        "from adapters.cli.main import main\n"
        "main(sys.argv[1:])\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    argv = ["--database-url", seeded_copy, "search", "graph", "neural", "networks", "--json"]
    # The copy has no index beside it yet: the first search builds it (a build's loops).
    first = subprocess.run([sys.executable, "-m", "adapters.cli", *argv], cwd=REPO,
                           capture_output=True, timeout=120, check=False)
    assert first.returncode == 0
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "bot.search.builtin.vectorised" in modules
    # Nor what only other commands use: PostgreSQL's dialect (SQLite here), the
    # tokenising pool, did-you-mean's edit distances (the query matches).
    assert not {"numba", "scipy", "alembic", "bot.search.builtin.compiled", "sqlalchemy.dialects.postgresql",
                "concurrent.futures.process", "multiprocessing", "rapidfuzz"} & modules
    hits = [(h["paper_id"], h["score"]) for h in json.loads(done.stdout)["hits"]]
    assert hits == _compiled_hits(seeded_copy, "graph neural networks") and len(hits) == 10


def _compiled_hits(url: str, text: str) -> list[tuple[int, float]]:
    from adapters.cli.searching import open_search
    from bot.search.query import Query

    library, search = open_search(url)
    hits = search.current().search(Query.parse(text), 10)
    library.db.dispose()
    return [(h.paper_id, round(h.score, 4)) for h in hits]  # as a card shows a score


@pytest.mark.parametrize("cols_dtype", [np.uint32, np.int64, np.uint16])
def test_a_small_transpose_sorts_as_scipy_counts(monkeypatch, cols_dtype):
    """A day's segment is transposed by numpy's stable sort (no scipy to import): the
    same rows, values and types as scipy's counting sort gives a large build."""
    from bot.search.builtin import arrays

    rng = np.random.default_rng(8)
    lengths = rng.integers(0, 12, size=200)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cols = np.concatenate([np.sort(rng.choice(90, n, replace=False)) for n in lengths])
    rows = arrays.SparseRows(indptr, cols.astype(cols_dtype), rng.integers(1, 9, len(cols)).astype(np.uint8))
    small = rows.transpose(95)  # 95 columns: the last five empty
    monkeypatch.setattr(arrays, "SMALL_TRANSPOSE", 0)
    large = rows.transpose(95)
    for got, want in zip(dataclasses.astuple(small), dataclasses.astuple(large), strict=True):
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert small.row_count == 95 and small.row_lengths()[-5:].tolist() == [0] * 5
