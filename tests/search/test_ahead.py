"""Tokenising ahead: `paperclub import` hands the papers it writes to worker processes,
and the index build that follows takes them from there where nothing changed them
after (bot.search.builtin.tokenising.TokenisedAhead, Told.split, SearchService.ahead)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from adapters.bench.search.realistic import RealisticCorpus
from bot.corpus.indexed import IndexedPaper
from bot.search.builtin import content, tokenising
from bot.search.builtin.content import IndexContent
from bot.search.builtin.service import SearchService
from bot.search.builtin.tokenising import TokenisedAhead
from bot.search.query import Query
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


def _told(papers, commits=(), small=True) -> tokenising.Told:
    """What TokenisedAhead holds after an import told it `papers` (as its flushes do,
    70 at a time) and made `commits` (revision, reopened ids)."""
    ahead = TokenisedAhead(Tokenizer, workers=1)
    try:
        for start in range(0, len(papers), 70):
            ahead(papers[start : start + 70])
        for revision, reopened in commits:
            ahead.committed(revision, reopened)
        told = ahead.result()
    finally:
        ahead.close()
    assert told is not None
    return told


def test_a_build_takes_the_papers_told_and_reads_back_those_changed_since(
    papers, small_batches, monkeypatch
):
    corpus = ChangingCorpus(papers)  # the import's commit: revision 1
    # A later record of the import merged into paper 10; another process changed 200.
    told = _told(papers, commits=[(1, {papers[10].paper_id})])
    assert told.batch.paper_ids.tolist() == [p.paper_id for p in papers]
    corpus.put([replace(papers[10], text=papers[10].text + " merged")])
    corpus.rev += 1  # the import's revision was 2; another process made 3
    corpus.put([replace(papers[200], text=papers[200].text + " amended")])
    rows, read = told.split(*map(np.asarray, corpus.changes(None)))
    assert read.tolist() == [papers[10].paper_id, papers[200].paper_id]
    assert rows is not None and len(rows.paper_ids) == len(papers) - 2
    seen = _tokenised_in_build(monkeypatch)
    built = IndexContent.build(corpus.papers_with(read.tolist()), Tokenizer(), told=rows)
    assert sorted(seen) == read.tolist()
    monkeypatch.undo()
    _same_bm25(built, IndexContent.build(corpus.papers(), Tokenizer()))


def test_a_paper_told_by_a_file_that_rolled_back_is_never_taken(papers, small_batches):
    """A file's papers are told as they are written; if it is refused after, nothing of
    it is committed and the next file gives its ids to other papers: told again, the
    last told of each id is taken; an id no paper took is left out."""
    corpus = ChangingCorpus(papers[100:160])  # the second file, committed: revision 1
    rolled_back = [replace(p, paper_id=101 + i) for i, p in enumerate(papers[:100])]
    told = _told(rolled_back + papers[100:160], commits=[(1, set())])
    rows, read = told.split(*map(np.asarray, corpus.changes(None)))
    assert read.tolist() == [] and rows is not None
    assert rows.paper_ids.tolist() == [p.paper_id for p in papers[100:160]]
    _same_bm25(
        IndexContent.build([], Tokenizer(), told=rows),
        IndexContent.build(corpus.papers(), Tokenizer()),
    )


def test_without_its_commit_nothing_told_is_taken(papers, small_batches):
    """Papers told whose commit the import never reported (it failed between its
    commit and telling, or the revision is another process's) are all read back."""
    corpus = ChangingCorpus(papers[:80])
    told = _told(papers[:80])
    rows, read = told.split(*map(np.asarray, corpus.changes(None)))
    assert rows is None and read.tolist() == [p.paper_id for p in papers[:80]]


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
    assert tokenised.batch.paper_ids.tolist() == [p.paper_id for p in papers]
    _same_bm25(
        IndexContent.build([], Tokenizer(), told=tokenised.batch),
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
        written.committed(corpus.revision(), set())
        seen = _tokenised_in_build(monkeypatch)
        index = service.current()
    assert seen == []  # the new segment's papers all came tokenised
    assert len(index.parts) == 2 and index.live_count() == len(papers)
    reference = SearchService(ChangingCorpus(papers), index_dir=None).current()
    query = Query.parse(papers[150].title)
    found = [h.paper_id for h in index.search(query)]
    assert found == [h.paper_id for h in reference.search(query)] and papers[150].paper_id in found
