"""A query that spells a paper's title puts that paper first, wherever BM25 ranks it
(bot.search.builtin.index.SearchIndex._titled, bot.search.builtin.content.IndexContent.titled)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.content import IndexContent
from bot.search.builtin.files import SEGMENTS, load_arrays
from bot.search.builtin.index import SearchIndex
from bot.search.builtin.service import SearchService
from bot.search.query import Query
from bot.search.tokens import Tokenizer
from tests.search.test_segments import ChangingCorpus

FILLER = " ".join(f"filler{i} words{i} about{i} nothing{i}" for i in range(60))


def _paper(paper_id: int, title: str, abstract: str, tags=()) -> IndexedPaper:
    return IndexedPaper(paper_id, title, f"{title}\n{abstract}", tags=tags)


def _distractors(count: int, start: int = 100) -> list[IndexedPaper]:
    """Short papers full of the query's words: BM25 ranks every one of them first."""
    return [
        _paper(start + i, f"Distractor {i}", "graph coarsening kernels graph kernels coarsening")
        for i in range(count)
    ]


def test_a_title_typed_whole_comes_first_however_low_bm25_ranks_it():
    target = _paper(1, "Graph Coarsening Kernels", FILLER)
    tokenizer = Tokenizer()
    index = SearchIndex.build(1, tokenizer, [target, *_distractors(80)])
    tokens = tokenizer.tokens("graph coarsening kernels")
    assert 1 not in [h.paper_id for h in index.rank(tokens, 60)]  # BM25 alone: below 60
    hits = index.search(Query.parse("graph coarsening kernels"), 5)
    assert (hits[0].paper_id, hits[0].title_match) == (1, True)
    assert hits[0].score == index.scores(tokens, [1])[1]  # its own BM25 score
    # The others follow in BM25's order, as they would without the title.
    assert [h.paper_id for h in hits[1:]] == [h.paper_id for h in index.rank(tokens, 4)]
    assert not any(h.title_match for h in hits[1:])


def test_of_several_papers_with_the_title_the_best_by_bm25_that_passes_the_filters_is_first():
    title = "Graph Coarsening Kernels"
    papers = [
        _paper(1, title, FILLER, tags=("long",)),
        _paper(2, title, "short", tags=("short",)),
        _paper(3, title, FILLER[:200], tags=("long",)),
        *_distractors(60),
    ]
    index = SearchIndex.build(1, Tokenizer(), papers)
    first = index.search(Query.parse("graph coarsening kernels"), 5)[0]
    assert (first.paper_id, first.title_match) == (2, True)
    filtered = index.search(Query.parse("graph coarsening kernels tag:long"), 5)
    assert (filtered[0].paper_id, filtered[0].title_match) == (3, True)
    assert [h.paper_id for h in filtered] == [3, 1]


def test_a_title_match_needs_every_term_of_the_title_and_nothing_more():
    index = SearchIndex.build(
        1, Tokenizer(), [_paper(1, "Graph Coarsening Kernels", "abstract"), *_distractors(3)]
    )
    for query in ("graph coarsening", "graph coarsening kernels networks", "coarsening"):
        assert not any(h.title_match for h in index.search(Query.parse(query), 5)), query
    # Case, punctuation, stop words and plurals aside, it is the title.
    hits = index.search(Query.parse("the graph-coarsening kernel"), 5)
    assert (hits[0].paper_id, hits[0].title_match) == (1, True)


def test_a_segment_written_without_title_sets_finds_titles_all_the_same():
    papers = [
        _paper(1, "Graph Coarsening Kernels", "abstract"),
        _paper(2, "Kernels Coarsening Graph", "the same terms in another order"),
        _paper(3, "Graph Kernels", "a subset"),
        *_distractors(20),
    ]
    tokenizer = Tokenizer()
    content = IndexContent.build(papers, tokenizer)
    arrays = content.arrays()
    assert {"title_sets.keys", "title_sets.docs"} <= set(arrays)  # stored with the segment
    older = {name: a for name, a in arrays.items() if not name.startswith("title_sets.")}
    restored = IndexContent.from_arrays(older, content.bm25.params)
    assert restored.title_sets is None
    for terms in ({"graph", "coarsen", "kernel"}, {"graph", "kernel"}, {"graph", "unknown"}):
        want = content.titled(terms)
        assert restored.titled(terms).tolist() == want.tolist()
    assert content.titled({"graph", "coarsen", "kernel"}).tolist() == [0, 1]
    assert restored.title_sets is not None  # made on first use
    keys, docs = restored.title_sets
    assert np.all(keys[:-1] <= keys[1:]) and sorted(docs.tolist()) == list(range(len(papers)))


def test_a_retitled_paper_is_found_by_its_new_title_only(tmp_path):
    old = _paper(1, "Graph Coarsening Kernels", "graph coarsening kernels")
    corpus = ChangingCorpus([old, *_distractors(5)])
    service = SearchService(corpus, index_dir=tmp_path / "idx", merge_in_background=False)
    service.current()
    corpus.put([replace(old, title="Spectral Sparsifiers", text="Spectral Sparsifiers\ngraphs")])
    index = service.current()
    assert len(index.parts) == 2
    assert not any(h.title_match for h in index.search(Query.parse("graph coarsening kernels"), 5))
    hits = index.search(Query.parse("spectral sparsifiers"), 5)
    assert (hits[0].paper_id, hits[0].title_match) == (1, True)


def test_a_stored_segment_without_title_sets_gets_them_from_the_first_process_to_open_it(
    tmp_path,
):
    papers = [_paper(1, "Graph Coarsening Kernels", FILLER), *_distractors(70)]
    corpus = ChangingCorpus(papers)
    SearchService(corpus, index_dir=tmp_path / "idx").current()
    (segment,) = (tmp_path / "idx" / SEGMENTS).iterdir()
    _as_written_before_title_sets(segment)

    index = SearchService(corpus, index_dir=tmp_path / "idx").current()
    hits = index.search(Query.parse("graph coarsening kernels"), 5)
    assert (hits[0].paper_id, hits[0].title_match) == (1, True)
    stored = load_arrays(segment)
    assert {"title_sets.keys", "title_sets.docs"} <= set(stored)
    assert not [f.name for f in segment.iterdir() if f.name.startswith("tmp-")]
    reopened = IndexContent.from_arrays(stored, index.parts[0].content.bm25.params)
    assert reopened.title_sets is not None  # the next process reads them
    assert reopened.titled({"graph", "coarsen", "kernel"}).tolist() == [0]


def _as_written_before_title_sets(segment) -> None:
    meta = json.loads((segment / "meta.json").read_text())
    meta["arrays"] = [a for a in meta["arrays"] if not a.startswith("title_sets.")]
    (segment / "meta.json").write_text(json.dumps(meta))
    for file in segment.glob("title_sets.*"):
        file.unlink()
