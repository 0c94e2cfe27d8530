"""The neighbour index of large libraries (bot.search.neighbours): it proposes candidates
and the papers' own vectors score them, so what it returns is scored and ordered as brute
force would; it follows vectors written later, and a serving backend builds it on a thread
of its own without losing what arrives meanwhile."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bot.corpus.embedded import StoredVectors
from bot.corpus.records import PaperRecord
from bot.search import vectors as vectors_module
from bot.search.backfill import embed_pending
from bot.search.builtin.service import SearchService
from bot.search.embedding import EmbeddingConfig
from bot.search.hybrid import HybridBackend
from bot.search.neighbours import NeighbourIndex
from bot.search.vectors import VectorMatrix
from tests.search.record_scifact import RECORDED
from tests.search.test_meaning import PAPERS, TinyModel, library_of


@pytest.fixture(scope="module")
def scifact() -> tuple[np.ndarray, np.ndarray]:
    """SciFact's abstracts and queries as MiniLM embeds them (recorded): real vectors, with
    the structure an index relies on (uniformly random ones have none)."""
    recorded = np.load(RECORDED)
    documents = recorded["documents"].astype(np.float32) * recorded["document_scales"][:, None]
    queries = recorded["queries"].astype(np.float32) * recorded["query_scales"][:, None]
    return documents, queries


def brute_and_indexed(documents: np.ndarray, ids: np.ndarray) -> tuple[VectorMatrix, VectorMatrix]:
    return VectorMatrix("m", ids, documents), VectorMatrix("m", ids, documents).indexed()


def test_the_index_finds_what_brute_force_finds_scored_the_same(scifact):
    documents, queries = scifact
    ids = np.arange(1000, 1000 + len(documents), dtype=np.int64)
    brute, indexed = brute_and_indexed(documents, ids)
    assert indexed.neighbours is not None and len(indexed.neighbours) == len(documents)
    found = 0
    for query in queries:
        exact, near = dict(brute.top(query, 10)), indexed.top(query, 10)
        found += len(exact.keys() & {paper for paper, _ in near})
        # Whatever it found is scored by the paper's own vector, best first.
        assert all(score == pytest.approx(float(brute.vector(paper) @ query), abs=1e-5) for paper, score in near)
        assert [score for _, score in near] == sorted((score for _, score in near), reverse=True)
    assert found / (10 * len(queries)) >= 0.95
    # Built from the same vectors, it is the same index: the same answers.
    again = VectorMatrix("m", ids, documents).indexed()
    assert [again.top(q, 10) for q in queries[:20]] == [indexed.top(q, 10) for q in queries[:20]]


def test_the_index_leaves_out_the_excluded_and_follows_later_vectors(scifact):
    documents, _queries = scifact
    ids = np.arange(len(documents), dtype=np.int64)
    _brute, indexed = brute_and_indexed(documents[:-1], ids[:-1])
    query = documents[-1]  # the paper not yet in: its own vector is the query
    first = indexed.top(query, 1)[0][0]
    assert first not in [p for p, _ in indexed.top(query, 5, excluded={first})]
    later = VectorMatrix("m", ids[-1:], documents[-1:])
    updated = indexed.updated(later)
    assert updated.neighbours is indexed.neighbours and len(updated.neighbours) == len(documents)
    assert updated.top(query, 1)[0][0] == ids[-1]
    # A re-embedded paper moves: its old vector is no longer found.
    moved = VectorMatrix("m", np.array([first]), -documents[first][None, :])
    assert first not in [p for p, _ in updated.updated(moved).top(documents[first], 10)]


def test_small_libraries_are_searched_by_brute_force(scifact):
    documents, _queries = scifact
    matrix = VectorMatrix("m", np.arange(len(documents), dtype=np.int64), documents)
    assert not matrix.wants_index() and matrix.neighbours is None


def test_a_backend_builds_the_index_on_a_thread_and_keeps_what_arrives_meanwhile(sqlite_db, monkeypatch):
    monkeypatch.setattr(vectors_module, "NEIGHBOURS_FROM", 3)
    library = library_of(sqlite_db)
    stored, model = StoredVectors(sqlite_db), TinyModel()
    embed_pending(stored, model)
    release, building = threading.Event(), threading.Event()
    build = NeighbourIndex.build

    def held_build(*args):
        building.set()
        release.wait()
        return build(*args)

    monkeypatch.setattr(NeighbourIndex, "build", staticmethod(held_build))
    backend = HybridBackend(SearchService(library, index_dir=None), stored, EmbeddingConfig(model="tiny"),
                            load=lambda _c: model)
    assert len(backend.vectors()) == len(PAPERS)  # the build starts, held
    assert building.wait(timeout=60)
    assert backend.vectors().neighbours is None  # searches go on by brute force meanwhile
    library.import_records([PaperRecord("Bridges under wind load", line=1, abstract="Cables sway in storms.")],
                           collection="c", source="more.jsonl", fmt="jsonl")
    embed_pending(stored, model)
    assert len(backend.vectors()) == len(PAPERS) + 1  # arrived while the index is built
    release.set()
    backend.live.wait()
    matrix = backend.vectors()
    assert matrix.neighbours is not None and len(matrix.neighbours) == len(PAPERS) + 1
    newest = max(int(i) for i in matrix.paper_ids)
    assert matrix.top(model.query("Bridges under wind load. Cables sway in storms."), 1)[0][0] == newest
