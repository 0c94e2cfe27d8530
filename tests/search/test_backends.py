"""The search backend contract (bot.search.engine.SearchBackend): what the bot, its
health check and the command line hold of an engine. The built-in engine (through the
factory the bot runs) and rank-bm25 (tests/search/simple_engine.py) are held to it
alike, through the protocol's members alone; a new backend joins BACKENDS.

Rankings are compared with rank-bm25's BM25Okapi itself, built here over the library's
papers as they are when the ranking is asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rank_bm25 import BM25Okapi

from adapters.bench.search.realistic import RealisticCorpus, write_jsonl
from bot.corpus.library import Library
from bot.search.builtin.service import open_search
from bot.search.engine import Engine, SearchBackend, Searcher, StoredIndex
from bot.search.params import Bm25Params
from store import Database
from tests.search.simple_engine import SimpleBackend

# name -> (the backend over a library, whether it keeps its index where location() says)
BACKENDS: dict[str, tuple[Callable[[Library], SearchBackend], bool]] = {
    "built-in": (open_search, True),
    "rank-bm25": (SimpleBackend, False),
}
QUERIES = [
    "graph neural networks",
    "reinforcement learning exploration",
    "diffusion image generation",
    "adversarial robustness certified",
    "transformer attention",
    "meta-learning few-shot",
]


@pytest.fixture
def library(seeded_copy) -> Iterator[Library]:
    db = Database(seeded_copy)
    yield Library(db)
    db.dispose()


@pytest.fixture(params=sorted(BACKENDS))
def backend(request, library) -> Iterator[SearchBackend]:
    make, _persisted = BACKENDS[request.param]
    search = make(library)
    yield search
    search.wait_for_merges()  # nothing left running on a database the test removes


def _import(library: Library, tmp_path: Path, count: int, start: int, written=None) -> None:
    """`count` new papers of realistic text, imported as `paperclub import` does."""
    path = tmp_path / f"new-{start}.jsonl"
    papers = RealisticCorpus.from_seeds().papers(start + count)
    with open(path, "w", encoding="utf-8") as out:
        write_jsonl((p for i, p in enumerate(papers) if i >= start), out)
    library.import_file(path, collection="new", written=written)


def _ranks_as_rank_bm25(engine: Engine, library: Library, search: SearchBackend) -> None:
    """`rank` gives BM25Okapi's top 10 over every paper, in its order (ties to the lower
    id), with its scores."""
    papers = sorted(library.papers(), key=lambda p: p.paper_id)
    params = Bm25Params()
    bm25 = BM25Okapi(
        [search.tokenizer.tokens(p.text) for p in papers],
        k1=params.k1,
        b=params.b,
        epsilon=params.epsilon,
    )
    assert engine.live_count() == len(papers)
    for text in QUERIES + [p.title for p in papers[-3:]]:
        terms = search.tokenizer.tokens(text)
        scores = bm25.get_scores(terms)
        having = [r for r in range(len(papers)) if any(t in bm25.doc_freqs[r] for t in terms)]
        expected = sorted(having, key=lambda r: (-scores[r], papers[r].paper_id))[:10]
        hits = engine.rank(terms, 10)
        assert [h.paper_id for h in hits] == [papers[r].paper_id for r in expected], text
        assert [h.score for h in hits] == pytest.approx([scores[r] for r in expected], rel=1e-9)


def test_a_backend_is_a_search_backend_and_hands_out_a_searcher(backend):
    assert isinstance(backend, SearchBackend)
    index = backend.current()
    assert isinstance(index, Searcher) and not isinstance(index, SearchBackend)
    assert not isinstance(object(), SearchBackend)


def test_current_ranks_as_rank_bm25(backend, library):
    index = backend.current()
    assert index.revision == library.revision()
    _ranks_as_rank_bm25(index, library, backend)


def test_current_follows_the_corpus(backend, library, tmp_path):
    before = backend.current()
    _import(library, tmp_path, 40, start=0)
    after = backend.current()
    assert after.revision == library.revision() > before.revision
    assert after.live_count() == before.live_count() + 40
    _ranks_as_rank_bm25(after, library, backend)
    assert before.live_count() == after.live_count() - 40  # what a caller held is unchanged


def test_loaded_is_none_until_warm_loads_the_index(backend, library):
    assert backend.loaded() is None
    index = backend.warm()
    assert backend.loaded() is index
    assert index.revision == library.revision() and index.live_count() > 1000


def test_the_tokenizer_makes_the_index_terms(backend, library):
    tokenizer = backend.tokenizer
    assert tokenizer.tokens("Graph Neural Networks, GPT-4 and the $\\epsilon$-greedy") == [
        "graph",
        "neural",
        "network",
        "gpt-4",
        "gpt",
        "epsilon",
        "greedi",
    ]
    paper = next(iter(library.papers()))
    assert backend.current().rank(tokenizer.tokens(paper.title), 1)[0].paper_id == paper.paper_id


def test_ahead_is_a_block_around_an_import(backend, library, tmp_path):
    with backend.ahead() as written:
        _import(library, tmp_path, 300, start=0, written=written)
        index = backend.current()
    assert index.revision == library.revision()
    _ranks_as_rank_bm25(index, library, backend)
    _ranks_as_rank_bm25(backend.current(), library, backend)


def test_wait_for_merges_returns_once_the_work_is_over(backend, library, tmp_path):
    """No thread the backend started is left running once it returns."""
    backend.current()
    before = set(threading.enumerate())
    for start in (0, 300):  # the built-in engine merges two segments of 300 in the background
        _import(library, tmp_path, 300, start=start)
        backend.current()
    waiting = threading.Thread(target=backend.wait_for_merges)
    waiting.start()
    waiting.join(timeout=120)
    assert not waiting.is_alive()
    assert [t.name for t in set(threading.enumerate()) - before if t is not waiting] == []
    _ranks_as_rank_bm25(backend.current(), library, backend)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_location_says_where_the_index_is_kept(name, library):
    make, persisted = BACKENDS[name]
    search = make(library)
    search.current()
    where = search.location()
    if persisted:
        assert where is not None and any(Path(where).iterdir())
    else:
        assert where is None


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_the_stored_index_is_the_librarys_once_built_and_none_in_memory(name, library):
    make, persisted = BACKENDS[name]
    search = make(library)
    search.current()
    expected = StoredIndex(library.count(), current=True) if persisted else None
    assert search.stored_index() == expected
    assert make(library).stored_index() == expected  # another process reads it without loading it
