"""Tokenising ahead: `paperclub import` hands the papers it writes to worker processes,
and the index build that follows takes them from there where they read back the same
(bot.search.tokenising.TokenisedAhead, SearchService.ahead)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from adapters.bench.search.realistic import RealisticCorpus
from bot.corpus.indexed import IndexedPaper
from bot.search import content, tokenising
from bot.search.content import IndexContent
from bot.search.query import Query
from bot.search.service import SearchService
from bot.search.tokenising import TokenisedAhead
from bot.search.tokens import Tokenizer
from tests.search.test_segments import ChangingCorpus


@pytest.fixture(scope="module")
def papers() -> list[IndexedPaper]:
    return list(RealisticCorpus.from_seeds().papers(300))


@pytest.fixture
def small_batches(monkeypatch):
    """Workers for 300 papers, in batches of 40 (a real import: from 5,000, by 2,000)."""
    monkeypatch.setattr(tokenising, "AHEAD_AFTER", 50)
    monkeypatch.setattr(tokenising, "BATCH", 40)


def _tokenised_in_build(monkeypatch) -> list[int]:
    """The ids of the papers a build tokenises itself, recorded as it does."""
    seen: list[int] = []
    real = content.tokenised  # as the build calls it

    def counting(papers, tokenizer, workers):
        def told():
            for paper in papers:
                seen.append(paper.paper_id)
                yield paper

        return real(told(), tokenizer, workers)

    monkeypatch.setattr(content, "tokenised", counting)
    return seen


def test_a_build_takes_the_papers_tokenised_ahead_and_tokenises_the_changed_again(
    papers, small_batches, monkeypatch
):
    ahead = TokenisedAhead(Tokenizer, workers=1)
    try:
        for start in range(0, len(papers), 70):  # as an import's flushes tell them
            ahead.add(papers[start : start + 70])
        tokenised = ahead.result()
    finally:
        ahead.close()
    assert tokenised is not None
    assert tokenised.paper_ids.tolist() == [p.paper_id for p in papers]
    # Two papers change after they were told (a later record merged into them).
    changed = {papers[10].paper_id, papers[200].paper_id}
    now = [replace(p, text=p.text + " amended") if p.paper_id in changed else p for p in papers]
    seen = _tokenised_in_build(monkeypatch)
    built = IndexContent.build(now, Tokenizer(), ahead=tokenised)
    assert sorted(seen) == sorted(changed)
    monkeypatch.undo()
    plain = IndexContent.build(now, Tokenizer())
    _same_bm25(built, plain)


def _same_bm25(a: IndexContent, b: IndexContent) -> None:
    """Everything but the did-you-mean counts, which keep a replaced text's words (as a
    reused previous version's do: they only order suggestions)."""
    left, right = a.arrays(), b.arrays()
    assert sorted(left) == sorted(right)
    for name in left:
        if not name.startswith("spelling"):
            assert np.array_equal(np.asarray(left[name]), np.asarray(right[name])), name


def test_a_small_import_is_tokenised_on_a_thread_not_on_workers(papers, monkeypatch):
    monkeypatch.setattr(tokenising, "AHEAD_AFTER", 1_000)
    monkeypatch.setattr(tokenising, "_worker_pool", _no_workers)
    ahead = TokenisedAhead(Tokenizer, workers=2)
    ahead.add(papers[:120])  # two files' flushes
    ahead.add(papers[120:])
    tokenised = ahead.result()
    assert tokenised is not None
    assert tokenised.paper_ids.tolist() == [p.paper_id for p in papers]
    _same_bm25(
        IndexContent.build(papers, Tokenizer(), ahead=tokenised),
        IndexContent.build(papers, Tokenizer()),
    )


def _no_workers(*args, **kwargs):
    raise AssertionError("a worker process was started for a small import")


def test_nothing_told_nothing_tokenised():
    ahead = TokenisedAhead(Tokenizer, workers=1)
    ahead.add([])
    assert ahead.result() is None
    assert ahead._thread is None and ahead._pool is None  # nor anything started


def test_a_worker_that_dies_costs_the_head_start_not_the_import(
    papers, small_batches, monkeypatch, caplog
):
    ahead = TokenisedAhead(Tokenizer, workers=1)
    monkeypatch.setattr(tokenising, "_tokenise_in_worker", _dies)
    ahead.add(papers[:100])
    ahead.add(papers[100:])
    assert ahead.result() is None  # the build tokenises them all itself
    stopped = [r for r in caplog.records if "tokenising ahead" in r.getMessage()]
    assert len(stopped) == 1 and "ran out" in stopped[0].getMessage()


def _dies(papers):
    raise MemoryError("the worker ran out")


def test_the_service_builds_from_what_an_import_told_it(
    papers, small_batches, tmp_path, monkeypatch
):
    corpus = ChangingCorpus(papers[:100])
    service = SearchService(corpus, index_dir=tmp_path / "index", merge_in_background=False)
    service.current()
    with service.ahead() as written:
        written(papers[100:])  # an import writes them
        corpus.put(papers[100:])  # and commits
        seen = _tokenised_in_build(monkeypatch)
        index = service.current()
    assert seen == []  # the new segment's papers all came tokenised
    assert len(index.parts) == 2 and index.live_count() == len(papers)
    reference = SearchService(ChangingCorpus(papers), index_dir=None).current()
    query = Query.parse(papers[150].title)
    found = [h.paper_id for h in index.search(query)]
    assert found == [h.paper_id for h in reference.search(query)] and papers[150].paper_id in found
