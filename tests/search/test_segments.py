"""A segmented index answers exactly like one built from scratch, and like
rank_bm25.BM25Okapi over the live papers; segments are added and merged without a
search ever seeing a half-made set."""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from adapters.bench.search.realistic import RealisticCorpus
from bot.corpus.indexed import IndexedPaper
from bot.search.builtin import index as index_module
from bot.search.builtin import segments
from bot.search.builtin.arrays import digest_order
from bot.search.builtin.content import IndexContent
from bot.search.builtin.files import SEGMENTS, IndexStore, load_arrays
from bot.search.builtin.index import SearchIndex
from bot.search.builtin.segments import live_masks, merge_plan
from bot.search.builtin.service import SearchService
from bot.search.params import Bm25Params
from bot.search.query import Query
from bot.search.tokens import Tokenizer


class ChangingCorpus:
    """A loader like bot.corpus.library.Library: papers by id, a revision, and which
    papers each revision touched."""

    def __init__(self, papers: list[IndexedPaper] = ()):
        self.papers_by_id: dict[int, IndexedPaper] = {}
        self.changed_at: dict[int, int] = {}
        self.rev = 0
        self.lock = threading.Lock()
        self.put(papers)

    def put(self, papers: list[IndexedPaper]) -> None:
        with self.lock:
            self.rev += 1
            for paper in papers:
                self.papers_by_id[paper.paper_id] = paper
                self.changed_at[paper.paper_id] = self.rev

    def revision(self) -> int:
        return self.rev

    def identity(self) -> str:
        return "corpus-1"

    def papers(self):
        return [self.papers_by_id[i] for i in sorted(self.papers_by_id)]

    def papers_changed(self, since: int):
        with self.lock:
            ids = sorted(i for i, r in self.changed_at.items() if r > since)
            return [self.papers_by_id[i] for i in ids]

    def changes(self, since: int | None):
        with self.lock:
            ids = sorted(i for i, r in self.changed_at.items() if since is None or r > since)
            return ids, [self.changed_at[i] for i in ids]

    def papers_with(self, ids):
        return [self.papers_by_id[i] for i in ids]


def _renumbered(papers, start: int) -> list[IndexedPaper]:
    return [replace(p, paper_id=start + i) for i, p in enumerate(papers)]


def _rewritten(paper: IndexedPaper, rng: random.Random) -> IndexedPaper:
    """The same paper with its abstract changed: some words dropped, some repeated."""
    words = paper.text.split()
    kept = [w for w in words if rng.random() > 0.3] + rng.sample(words, min(5, len(words)))
    return replace(paper, text=" ".join(kept))


@pytest.fixture(scope="module")
def realistic() -> list[IndexedPaper]:
    return list(RealisticCorpus.from_seeds().papers(20_000))


def _reference(corpus: ChangingCorpus, tokenizer: Tokenizer):
    papers = corpus.papers()
    model = BM25Okapi([tokenizer.tokens(p.text) for p in papers])
    return model, np.array([p.paper_id for p in papers])


def _expected(model, ids, tokens, k=10) -> list[tuple[int, float]]:
    scores = model.get_scores(tokens)
    order = np.lexsort((ids, -scores))
    return [(int(ids[i]), float(scores[i])) for i in order[:k] if scores[i] != 0]


def _queries(corpus: ChangingCorpus, tokenizer: Tokenizer, count: int) -> list[list[str]]:
    rng = random.Random(3)
    papers = corpus.papers()
    queries = []
    for _ in range(count):
        tokens = tokenizer.tokens(rng.choice(papers).text)
        queries.append([rng.choice(tokens) for _ in range(rng.randint(1, 5))])
    return queries


def test_segments_and_deletions_score_exactly_like_rank_bm25(realistic, tmp_path):
    """20,000 realistic papers reach the index in five revisions (new papers, rewritten
    ones, a paper changed twice): every score is BM25Okapi's over the live papers."""
    rng = random.Random(11)
    corpus = ChangingCorpus(realistic[:12_000])
    service = SearchService(corpus, index_dir=tmp_path / "idx", merge_in_background=False)
    tokenizer = service.tokenizer
    service.current()
    corpus.put(realistic[12_000:16_000])
    service.current()
    corpus.put([_rewritten(corpus.papers_by_id[i], rng) for i in rng.sample(range(1, 16_000), 400)])
    corpus.put(realistic[16_000:20_000] + [_rewritten(corpus.papers_by_id[5], rng)])
    index = service.current()
    assert len(index.parts) >= 2 and not index.live.all()  # segments, and papers replaced
    assert index.live_count() == 20_000 and len(corpus.papers()) == 20_000
    model, ids = _reference(corpus, tokenizer)
    for tokens in _queries(corpus, tokenizer, 40):
        got = [(h.paper_id, h.score) for h in index.rank(tokens, 10)]
        want = _expected(model, ids, tokens)
        assert [p for p, _s in got] == [p for p, _s in want], tokens
        assert np.allclose([s for _p, s in got], [s for _p, s in want], rtol=0, atol=1e-6)
    # The segments have merged since (the service merges when it is asked, here): a
    # process that opens the stored version answers the same from fewer segments.
    reopened = SearchService(corpus, index_dir=tmp_path / "idx").current()
    assert len(reopened.parts) < len(index.parts)
    for tokens in _queries(corpus, tokenizer, 10):
        again, before = reopened.rank(tokens, 10), index.rank(tokens, 10)
        assert [h.paper_id for h in again] == [h.paper_id for h in before]
        assert np.allclose([h.score for h in again], [h.score for h in before], rtol=0, atol=1e-9)


def test_a_new_revision_adds_a_segment_and_reads_only_the_changed_papers(
    realistic, tmp_path, monkeypatch
):
    corpus = ChangingCorpus(realistic[:3_000])
    service = SearchService(corpus, index_dir=tmp_path / "idx", merge_in_background=False)
    first = service.current()
    read = []
    original = corpus.papers_changed
    corpus.papers_changed = lambda since: read.extend(original(since)) or original(since)
    computed = _counting_global_stats(monkeypatch)
    added = _renumbered(realistic[3_000:3_001], 50_000)
    corpus.put(added)
    index = service.current()
    assert [p.paper_id for p in read] == [50_000]  # not the 3,000 others
    assert len(computed) == 1  # the new segment's bounds and the index share them
    assert len(index.parts) == len(first.parts) + 1
    hits = index.search(Query.parse(added[0].title), 1)
    assert hits and hits[0].paper_id == 50_000


def _counting_global_stats(monkeypatch) -> list[int]:
    """Each computation of the global statistics, by the segments it was asked for."""
    calls: list[int] = []
    real = segments.global_stats

    def counting(contents, lives, params):
        calls.append(len(contents))
        return real(contents, lives, params)

    monkeypatch.setattr(segments, "global_stats", counting)
    monkeypatch.setattr(index_module, "global_stats", counting)
    return calls


def test_filters_titles_and_similar_see_only_live_copies(tmp_path):
    tokenizer = Tokenizer()
    old = IndexedPaper(1, "Graph coarsening", "Graph coarsening\nwe coarsen graphs", tags=("old",))
    other = IndexedPaper(2, "Diffusion robustness", "Diffusion robustness\nnoise", tags=("old",))
    corpus = ChangingCorpus([old, other])
    service = SearchService(corpus, tokenizer, index_dir=tmp_path / "idx", merge_in_background=False)
    service.current()
    corpus.put([replace(old, title="Spectral coarsening", text="Spectral coarsening\nspectra", tags=("new",))])
    index = service.current()
    assert len(index.parts) == 2
    assert index.title(1) == "Spectral coarsening"
    assert [h.paper_id for h in index.search(Query.parse("tag:old"), 10)] == [2]
    assert [h.paper_id for h in index.search(Query.parse("tag:new"), 10)] == [1]
    assert index.search(Query.parse("graphs"), 10) == []  # only the dead copy had it
    assert index.mask_of([1, 2]).sum() == 2
    assert index.search(Query.parse("spectral coarsening"), 1)[0].title_match


def test_merge_plan_is_a_binary_counter_with_a_limit():
    assert merge_plan([100_000]) is None
    assert merge_plan([100_000, 1_000]) is None
    assert merge_plan([100_000, 1_000, 1_000]) == 1
    assert merge_plan([100_000, 4_000, 1_000]) is None
    assert merge_plan([100_000, 3_000, 2_000, 1_000]) is None
    assert merge_plan([100_000, 2_000, 1_000, 1_000]) == 1
    assert merge_plan([0, 10]) == 0  # an emptied segment goes at the next merge
    assert merge_plan([100_000, 0, 1_000]) == 1
    assert merge_plan([10**6 // 2**i for i in range(12)], limit=10) == 9


def test_newest_copy_wins():
    tokenizer = Tokenizer()
    from bot.search.builtin.content import IndexContent

    def content(ids):
        return IndexContent.build([IndexedPaper(i, "t", f"t\nword{i}") for i in ids], tokenizer)

    masks = live_masks([content([1, 2, 3]), content([2, 4]), content([3])])
    assert masks[0].tolist() == [True, False, False]
    assert masks[1] is None and masks[2] is None


def test_a_merge_replaces_its_run_and_a_crash_mid_merge_keeps_the_previous_version(
    realistic, tmp_path, monkeypatch
):
    corpus = ChangingCorpus(realistic[:2_000])
    service = SearchService(corpus, index_dir=tmp_path / "idx", merge_in_background=False)
    monkeypatch.setattr(service, "_merge_soon", lambda: None)  # merges only when told
    service.current()
    for start in range(2_000, 2_800, 200):
        corpus.put(realistic[start : start + 200])
        service.current()
    store = IndexStore(tmp_path / "idx")
    before = store.current()
    assert len(before.segments) == 5
    # The process dies after writing the merged segment, before naming the new version.
    saving = IndexStore.save_version

    def crash(self, segments, meta):
        raise OSError("killed")

    monkeypatch.setattr(IndexStore, "save_version", crash)
    with pytest.raises(OSError, match="killed"):
        service._merge_stored()
    assert store.current() == before
    assert {p.name for p in (tmp_path / "idx" / SEGMENTS).iterdir()} == set(before.segments)
    monkeypatch.setattr(IndexStore, "save_version", saving)
    service._merge_stored()
    merged = store.current()
    assert merged.revision == before.revision and len(merged.segments) < 5
    assert merged.segments[0] == before.segments[0]  # the big first segment is kept
    index = SearchService(corpus, index_dir=tmp_path / "idx").current()
    assert index.live_count() == 2_800
    tokens = service.tokenizer.tokens("model learning")
    model, ids = _reference(corpus, service.tokenizer)
    assert [(h.paper_id, round(h.score, 6)) for h in index.rank(tokens, 10)] == [
        (p, round(s, 6)) for p, s in _expected(model, ids, tokens)
    ]


def test_searches_from_eight_threads_see_one_consistent_set_while_segments_change(
    realistic, tmp_path
):
    """While papers arrive in small revisions and segments merge in the background,
    every search sees one whole set: the papers of one revision, each exactly once."""
    # Small revisions of a small library: what is tested is that a search never sees a
    # half-made set, and every search lists all live papers, so fewer papers only make
    # each search (and the suite) cheaper.
    base = realistic[:400]
    corpus = ChangingCorpus(base)
    service = SearchService(corpus, index_dir=tmp_path / "idx")
    service.current()
    # Every paper has this word once, so a search for it lists all live papers.
    marker = "zzqmarker"
    corpus.put([replace(p, text=p.text + " " + marker) for p in base])
    service.current().rank([marker], 10)  # compiled before the threads start
    problems, stop, seen = [], threading.Event(), []

    def search() -> None:
        while not stop.is_set():
            index = service.current()
            hits = index.rank([marker], 10_000)
            ids = [h.paper_id for h in hits]
            if len(ids) != len(set(ids)) or len(ids) != index.live_count():
                problems.append((index.revision, len(ids), index.live_count()))
            seen.append(index.revision)
            time.sleep(0.05)  # a breath between searches, as between members' messages

    threads = [threading.Thread(target=search) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        for start in range(400, 640, 20):
            more = realistic[start : start + 20]
            corpus.put([replace(p, text=p.text + " " + marker) for p in more])
            service.current()
            # The threads search each revision before the next one comes.
            revision, deadline = corpus.revision(), time.monotonic() + 120
            while seen.count(revision) < 8 and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        service.wait_for_merges()
    assert problems == []
    assert len(set(seen)) >= 12  # every revision was searched
    final = service.current()
    assert final.live_count() == 640
    assert len(final.rank([marker], 10_000)) == 640


def test_an_index_of_one_segment_keeps_its_content(tmp_path):
    index = SearchIndex(1, Tokenizer(), [])
    assert len(index) == 0 and index.search(Query.parse("graph"), 5) == []


def _runs_are_whole(keys: np.ndarray, order: np.ndarray) -> bool:
    """Each distinct digest's rows form one run in `order`."""
    rows = [tuple(r) for r in keys[order].tolist()]
    seen, previous = set(), None
    for row in rows:
        if row != previous and row in seen:
            return False
        seen.add(row)
        previous = row
    return True


def test_digest_order_groups_equal_digests_even_when_first_halves_collide():
    """Segments' terms are matched by 128-bit digests sorted on their first half: equal
    digests must end up side by side, also when two different ones share that half."""
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**63, size=(2_000, 2), dtype=np.uint64)
    keys = np.concatenate([keys, keys[::3]])  # terms two segments share
    order = digest_order(keys)
    assert _runs_are_whole(keys, order) and sorted(order.tolist()) == list(range(len(keys)))
    # Different digests with one first half, between copies of one of them: sorted by
    # the first half alone (stably), the two copies of (5, 1) would be split by (5, 2).
    collide = np.array([[5, 1], [5, 2], [5, 1], [9, 9]], dtype=np.uint64)
    assert not _runs_are_whole(collide, np.argsort(collide[:, 0], kind="stable"))
    assert _runs_are_whole(collide, digest_order(collide))


def _by_string(contents, lives, epsilon: float) -> list[np.ndarray]:
    """Per segment, each term's idf over all segments' live documents, its terms matched
    by their strings: BM25Okapi's formula and floor, written out without digests."""
    frequency: Counter[str] = Counter()
    per_segment = []
    for content, live in zip(contents, lives, strict=True):
        vocabulary = content.bm25.vocabulary.to_list()
        df = content.bm25.live_doc_freq(np.ones(content.doc_count, bool) if live is None else live)
        frequency.update({term: int(n) for term, n in zip(vocabulary, df, strict=True) if n})
        per_segment.append(vocabulary)
    docs = sum(c.doc_count if live is None else int(live.sum()) for c, live in zip(contents, lives, strict=True))

    def raw(n: int) -> float:
        return math.log(docs - n + 0.5) - math.log(n + 0.5)

    floor = epsilon * sum(raw(n) for n in frequency.values()) / len(frequency)
    return [
        np.array([raw(frequency[t]) if raw(frequency[t]) >= 0 else floor for t in terms], dtype=float)
        for terms in per_segment
    ]


@pytest.fixture(scope="module")
def three_segments(realistic):
    """A large segment, a day's papers (some of them again: deletions) and a tiny one."""
    tokenizer, params = Tokenizer(), Bm25Params()
    big = IndexContent.build(realistic[:3_000], tokenizer, params)
    day = IndexContent.build(realistic[2_990:3_150], tokenizer, params)
    tiny = IndexContent.build(_renumbered(realistic[9_000:9_003], 90_000), tokenizer, params)
    return [big, day, tiny]


def test_global_statistics_look_up_the_smaller_segments_terms_in_the_largest(three_segments):
    """The largest segment's terms are matched by a lookup of the others' digests in its
    stored order: every term's idf is the one its string gets over all live documents."""
    params = Bm25Params()
    for contents in (three_segments, three_segments[::-1], three_segments[1:]):
        lives = live_masks(contents)
        got = segments.global_stats(contents, lives, params)
        want = _by_string(contents, lives, params.epsilon)
        for stats, expected in zip(got, want, strict=True):
            assert np.allclose(stats.idf, expected, rtol=0, atol=1e-12)


def test_global_statistics_sort_every_digest_when_two_of_the_largest_share_a_first_half(
    three_segments,
):
    """Looked up by their first half alone, two different terms of the largest segment
    with one first half would be confused: then all digests are sorted together."""
    params = Bm25Params()
    lives = live_masks(three_segments)
    want = _by_string(three_segments, lives, params.epsilon)
    big = three_segments[0]
    keys = big.keys()
    # Every segment's copy of the big segment's second term takes the first term's first half.
    moved, first_half = keys[1].copy(), keys[0, 0]
    colliding = []
    for content in three_segments:
        changed = content.keys().copy()
        changed[np.all(changed == moved, axis=1), 0] = first_half
        colliding.append(replace(content, term_keys=changed, term_key_order=None))
    assert colliding[0].keys()[1, 0] == colliding[0].keys()[0, 0]
    assert any(np.any(c.keys()[:, 0] == first_half) for c in colliding[1:])  # shared terms
    for stats, expected in zip(segments.global_stats(colliding, lives, params), want, strict=True):
        assert np.allclose(stats.idf, expected, rtol=0, atol=1e-12)


def test_a_segment_stores_its_digests_order_and_an_older_one_gets_it_when_opened(realistic, tmp_path):
    corpus = ChangingCorpus(realistic[:400])
    SearchService(corpus, index_dir=tmp_path / "idx").current()
    (segment,) = (tmp_path / "idx" / SEGMENTS).iterdir()
    stored = load_arrays(segment)
    assert np.array_equal(stored["vocabulary.key_order"], digest_order(stored["vocabulary.keys"]))
    meta = json.loads((segment / "meta.json").read_text())
    meta["arrays"].remove("vocabulary.key_order")
    (segment / "meta.json").write_text(json.dumps(meta))
    (segment / "vocabulary.key_order.npy").unlink()
    assert "vocabulary.key_order" not in load_arrays(segment)  # as written before it was

    SearchService(corpus, index_dir=tmp_path / "idx").current()
    again = load_arrays(segment)
    assert np.array_equal(again["vocabulary.key_order"], digest_order(again["vocabulary.keys"]))
