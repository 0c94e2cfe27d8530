"""The realistic benchmark corpus: Heaps' law on SciFact's growth, Zipf, topics, nesting,
repeated titles, queries, and the JSON Lines `paperclub import` reads."""

from __future__ import annotations

import io
import json
from collections import Counter
from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from adapters.bench.search import realistic
from adapters.bench.search.realistic import (
    HEAD,
    HEAPS_BETA,
    HEAPS_K,
    TOPICS,
    CorpusChoice,
    RealisticCorpus,
    heaps_fit,
    heaps_points,
    write_jsonl,
    write_jsonl_parts,
)
from bot.corpus import jsonl
from bot.corpus.library import Library

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "eval" / "scifact" / "corpus.jsonl"


@pytest.fixture(scope="module")
def corpus() -> RealisticCorpus:
    return RealisticCorpus.from_seeds()


@pytest.fixture(scope="module")
def papers(corpus):
    return list(corpus.papers(10_000))


def test_distinct_words_grow_as_scifacts_do(papers):
    points = heaps_points(iter(papers), [2_000, 10_000])
    for _papers, words, distinct in points:
        assert distinct == pytest.approx(HEAPS_K * words**HEAPS_BETA, rel=0.05)
    _k, beta = heaps_fit(heaps_points(iter(papers), [500, 1_000, 2_000, 5_000, 10_000]))
    assert 0.47 < beta < 0.57  # distinct words grow about as the square root of the words


@pytest.mark.skipif(not SCIFACT.exists(), reason="eval/scifact is not beside the repository")
def test_the_curve_meets_scifact_at_its_size(papers):
    docs = [json.loads(line) for line in SCIFACT.read_text(encoding="utf-8").splitlines()]
    texts = (
        realistic.IndexedPaper(i, d["title"], f"{d['title']}\n{d['text']}")
        for i, d in enumerate(docs)
    )
    ((_n, words, distinct),) = heaps_points(texts, [len(docs)])
    assert distinct == pytest.approx(36_000, rel=0.01)  # the figure the issue names
    ours = next(p for p in heaps_points(iter(papers), list(range(1, 10_001))) if p[1] >= words)
    assert ours[2] == pytest.approx(distinct, rel=0.05)  # as many distinct words for as many words


def test_term_frequencies_are_zipfian(papers):
    counts = Counter(w for p in papers[:5_000] for w in realistic._WORD.findall(p.text.lower()))
    frequencies = np.array(sorted(counts.values(), reverse=True), dtype=float)
    ranks = np.arange(1, len(frequencies) + 1)
    middle = (ranks >= 100) & (ranks <= 10_000)
    slope = np.polyfit(np.log(ranks[middle]), np.log(frequencies[middle]), 1)[0]
    assert -1.9 < slope < -1.1  # SciFact: -1.22
    assert counts.most_common(1)[0][0] == "the"  # real words at the frequent ranks


def test_papers_are_about_a_few_topics(corpus, papers):
    rank = {w: r for r, w in enumerate(corpus._table.tolist())}
    shares = []
    for paper in papers[:300]:
        ranks = [
            rank[w] for w in realistic._WORD.findall(paper.text.lower()) if rank.get(w, 0) >= HEAD
        ]
        by_topic = Counter((r - HEAD) % TOPICS for r in ranks)
        shares.append(max(by_topic.values()) / len(ranks))
    # Spread evenly over 40 topics, the largest would hold about 6%.
    assert np.mean(shares) > 0.4


def test_papers_are_shaped_like_abstracts(papers):
    assert all(6 <= len(p.title.split()) <= 12 for p in papers)
    words = [len(p.text.split()) - len(p.title.split()) for p in papers]
    assert 180 < np.mean(words) < 200
    paper = papers[0]
    assert paper.text.startswith(paper.title + "\n") and paper.text.endswith(".")
    assert 1 <= len(paper.authors) <= 12 and all(len(a.split()) == 2 for a in paper.authors)
    assert len({p.title for p in papers}) == len(papers)  # no repeats unless asked


def test_corpora_are_deterministic_and_nested(corpus, papers):
    assert list(corpus.papers(1_500)) == papers[:1_500]  # across a chunk's end
    assert list(RealisticCorpus.from_seeds().papers(20)) == papers[:20]
    assert list(RealisticCorpus.from_seeds(seed=1).papers(20)) != papers[:20]
    assert [p.paper_id for p in corpus.papers(1_001)] == list(range(1, 1_002))


def test_a_tenth_of_the_titles_repeat_when_asked():
    repeated = list(RealisticCorpus.from_seeds(repeated_titles=0.1).papers(10_000))
    counts = Counter(p.title for p in repeated)
    share = sum(counts[p.title] > 1 for p in repeated) / len(repeated)
    assert 0.08 < share < 0.12
    assert counts.most_common(1)[0][1] > 100  # a few titles very often, as "Editorial"


def test_queries_are_half_remembered_titles_and_topic_phrases(corpus, papers):
    queries = corpus.queries(200, among=2_000)
    assert len(queries) == 200 and queries == corpus.queries(200, among=2_000)
    title_words = {w for p in papers[:2_000] for w in realistic._WORD.findall(p.title.lower())}
    titles, phrases = queries[::2], queries[1::2]
    # Most words of a remembered title are the title's; one may be replaced.
    assert np.mean([np.mean([w in title_words for w in q.split()]) for q in titles]) > 0.9
    topic_words = {w for t in range(TOPICS) for w in corpus.topic_words(t, 8)}
    assert all(2 <= len(q.split()) <= 3 and set(q.split()) <= topic_words for q in phrases)


def test_the_resampled_corpus_stays_available():
    choice = CorpusChoice("resampled")
    paper = next(iter(choice.papers(5)))
    assert paper.title in paper.text and len(choice.queries(30, 5)) == 30


def test_the_json_lines_import_as_as_many_papers_even_when_titles_repeat(db):
    papers = list(islice(RealisticCorpus.from_seeds(repeated_titles=0.5).papers(300), 300))
    out = io.StringIO()
    assert write_jsonl(iter(papers), out) == 300
    assert len({p.title for p in papers}) < 250  # titles do repeat
    library = Library(db)
    records = jsonl.parse(out.getvalue(), "bench.jsonl")
    summary = library.import_records(records, collection="bench", source="bench.jsonl", fmt="jsonl")
    assert (summary.added, summary.updated, summary.unchanged) == (300, 0, 0)
    stored = library.find("p7")
    assert (
        stored is not None
        and stored.title == papers[6].title
        and stored.authors == list(papers[6].authors)
    )


def test_a_large_corpus_is_written_in_parts_under_a_size_and_loses_no_line(tmp_path):
    papers = list(islice(RealisticCorpus.from_seeds().papers(400), 400))
    whole = io.StringIO()
    write_jsonl(iter(papers), whole)
    limit = 40_000
    files = write_jsonl_parts(iter(papers), tmp_path / "corpus", limit)
    assert len(files) > 2 and [f.name for f in files][:2] == ["corpus-001.jsonl", "corpus-002.jsonl"]
    assert all(0 < f.stat().st_size <= limit for f in files)
    assert "".join(f.read_text(encoding="utf-8") for f in files) == whole.getvalue()
