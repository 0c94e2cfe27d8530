"""What one version of the search index holds, and how it is built from papers.

An `IndexContent` is BM25 over the papers' text, the papers' ids and titles, the
postings of the filter fields (author words, tracks, collections, tags) with the values
as written for those a reply lists, and the words as written that did-you-mean suggests
(see bot.search.suggest), all flat arrays that `bot.search.files` writes and
memory-maps back.

Building tokenises papers in batches; past `PARALLEL_AFTER` papers the batches go to
worker processes (tokenising is pure Python and dominates a build). `paperclub import`
has them tokenised earlier still, while it writes them (`TokenisedAhead`). Given the previous
version, a build re-tokenises only papers whose content hash changed or that are new,
and reuses the other rows: the global statistics (N, avgdl, idf) change with every
import, so each term's bounds are always recomputed, but that is compiled work.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain
from operator import itemgetter

import numpy as np

from bot.collector import give_back_free_memory, without_cycle_collection
from bot.corpus.folding import fold
from bot.corpus.indexed import IndexedPaper
from bot.search.arrays import Arrays, SparseRows, StringTable
from bot.search.bm25 import Bm25Index, Bm25Params, TermCounts
from bot.search.suggest import Spelling, WordCounts
from bot.search.tokens import Tokenizer

log = logging.getLogger(__name__)

FILTER_FIELDS = ("author", "track", "in", "tag")
# Fields whose values a reply lists when one typed matches nothing ("tracks: Oral, ...");
# author keys are single words of names, which nobody needs listed.
LISTED_FIELDS = ("track", "in", "tag")
SPELLING_MIN_PAPERS = 2  # a word is suggested only if its stem is in this many papers
BATCH = 2_000  # papers a worker tokenises per task
GROUP = 50  # batches merged together as they arrive
PARALLEL_AFTER = 20_000  # below this, starting worker processes costs more than it saves
AHEAD_NICENESS = 10  # TokenisedAhead's workers yield the CPU to the import writing
# TokenisedAhead starts its workers at an import's first flush of new papers (5,000): on
# cores that would idle, their start costs the import nothing.
AHEAD_AFTER = 5_000


@lru_cache(maxsize=100_000)
def field_value_key(value: str) -> str:
    """How filter values are compared: case, accents and punctuation ignored. Cached:
    the same author names come back on thousands of papers."""
    return "-".join(re.findall(r"\w+", fold(value)))


def filter_keys(paper: IndexedPaper) -> dict[str, set[str]]:
    tags = {field_value_key(t) for t in paper.tags}
    return {
        "author": {w for name in paper.authors for w in _words(name)},
        "track": {field_value_key(v) for v in (paper.track, paper.award) if v},
        "in": {field_value_key(c) for c in paper.collections},
        "tag": tags.union(*(_words(t) for t in paper.tags)),
    }


@lru_cache(maxsize=100_000)
def _words(value: str) -> tuple[str, ...]:
    return tuple(w for w in field_value_key(value).split("-") if w)


def display_names(papers: Iterable[IndexedPaper]) -> dict[str, dict[str, str]]:
    """Per listed field, each key's value as first written ("top-25" -> "top 25%")."""
    names: dict[str, dict[str, str]] = {f: {} for f in LISTED_FIELDS}
    for paper in papers:
        values = {"track": (paper.track, paper.award), "in": paper.collections, "tag": paper.tags}
        for fld, written in values.items():
            for value in written:
                if value:
                    names[fld].setdefault(field_value_key(value), value)
    return names


def merge_names(parts: Iterable[dict[str, dict[str, str]]]) -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {f: {} for f in LISTED_FIELDS}
    for part in parts:
        for fld, names in part.items():
            for key, value in names.items():
                merged[fld].setdefault(key, value)
    return merged


def content_hash(paper: IndexedPaper) -> int:
    """A 63-bit hash of everything the index reads of a paper (its id aside)."""
    fields = [
        paper.title,
        paper.text,
        *paper.authors,
        "",
        paper.track or "",
        paper.award or "",
        *paper.collections,
        "",
        *paper.tags,
    ]
    digest = hashlib.blake2b(
        "\x1f".join(fields).encode("utf-8", "surrogatepass"), digest_size=8
    ).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclass
class Batch:
    """Some papers, tokenised: the unit a worker hands back, and what batches merge into."""

    paper_ids: np.ndarray  # int64
    hashes: np.ndarray  # int64
    titles: StringTable
    terms: TermCounts
    title_terms: TermCounts  # the title's terms without hyphenated wholes (title matching)
    filters: dict[str, TermCounts]  # field -> document -> keys
    # Not per document, so `take` keeps them whole: after an incremental build the counts
    # include papers since changed or gone. They only order suggestions and listings, and
    # a word or value whose stem or key left the index is dropped when it is assembled.
    words: WordCounts  # the plain words of the text as written (did-you-mean)
    names: dict[str, dict[str, str]]  # listed field -> key -> value as written

    @classmethod
    def of(cls, papers: Sequence[IndexedPaper], tokenizer: Tokenizer) -> Batch:
        keys = [filter_keys(p) for p in papers]
        tokens = [_text_and_title_tokens(p, tokenizer) for p in papers]
        return cls(
            np.array([p.paper_id for p in papers], dtype=np.int64),
            np.array([content_hash(p) for p in papers], dtype=np.int64),
            StringTable.from_strings(p.title for p in papers),
            TermCounts.count([t for t, _w in text] for text, _title in tokens),
            TermCounts.count(sorted(plain_terms(title)) for _text, title in tokens),
            {f: TermCounts.count(sorted(k[f]) for k in keys) for f in FILTER_FIELDS},
            WordCounts.count(map(itemgetter(1), chain.from_iterable(t for t, _ in tokens))),
            display_names(papers),
        )

    @classmethod
    def merge(cls, batches: list[Batch]) -> Batch:
        """The batches' papers one after another; consumes the list as it copies."""
        if len(batches) == 1:  # already in the form a merge gives: nothing to copy
            return batches.pop()
        paper_ids = np.concatenate([b.paper_ids for b in batches])
        hashes = np.concatenate([b.hashes for b in batches])
        titles = StringTable.concat([b.titles for b in batches])
        terms, title_terms = [b.terms for b in batches], [b.title_terms for b in batches]
        filters = {f: [b.filters[f] for b in batches] for f in FILTER_FIELDS}
        words, names = [b.words for b in batches], [b.names for b in batches]
        batches.clear()
        return cls(
            paper_ids,
            hashes,
            titles,
            TermCounts.merge(terms),
            TermCounts.merge(title_terms),
            {f: TermCounts.merge(parts) for f, parts in filters.items()},
            WordCounts.merge(words),
            merge_names(names),
        )

    def take(self, docs: np.ndarray) -> Batch:
        """These papers only, in this order."""
        return Batch(
            self.paper_ids[docs],
            self.hashes[docs],
            self.titles.take(docs),
            self.terms.take(docs),
            self.title_terms.take(docs),
            {f: c.take(docs) for f, c in self.filters.items()},
            self.words,
            self.names,
        )


def _text_and_title_tokens(
    paper: IndexedPaper, tokenizer: Tokenizer
) -> tuple[list[tuple[str, str]], list[str]]:
    """The (term, word as written) pairs of the text, and the title's terms. A searchable
    text starts with its title line, and no token spans a line break, so the title is
    tokenised once, not twice."""
    title = tokenizer.terms_with_words(paper.title)
    title_terms = [t for t, _w in title]
    if paper.text.startswith(paper.title + "\n"):
        return title + tokenizer.terms_with_words(paper.text[len(paper.title) + 1 :]), title_terms
    return tokenizer.terms_with_words(paper.text), title_terms


def plain_terms(tokens: Iterable[str]) -> set[str]:
    """Terms without the whole hyphenated words, whose parts are already there."""
    return {t for t in tokens if "-" not in t}


@dataclass
class FilterPostings:
    """One filter field: sorted keys and, per key, the documents that have it."""

    keys: StringTable
    docs: SparseRows
    # Listed fields: per key, the value as written, or "" for a key that is only a word
    # of values (tag:learning); None for authors.
    names: StringTable | None = None

    def docs_of(self, key: str) -> np.ndarray:
        row = self.keys.find(key)
        if row is None:
            return np.zeros(0, dtype=np.int32)
        return self.docs.cols[slice(*self.docs.bounds(row))]

    def values(self) -> list[tuple[str, int]]:
        """(value as written, how many papers have it) for each whole value."""
        if self.names is None:
            return []
        sizes = self.docs.row_lengths().tolist()
        return [(name, size) for name, size in zip(self.names.to_list(), sizes) if name]

    def names_by_key(self) -> dict[str, str]:
        if self.names is None:
            return {}
        return {k: n for k, n in zip(self.keys.to_list(), self.names.to_list()) if n}


@dataclass
class IndexContent:
    bm25: Bm25Index
    paper_ids: np.ndarray  # document -> paper id, ascending
    hashes: np.ndarray  # document -> content_hash, to tell what an update must re-read
    titles: StringTable
    title_vocabulary: StringTable  # sorted
    title_terms: SparseRows  # document -> ids of its title's plain terms
    filters: dict[str, FilterPostings]
    spelling: Spelling  # the words did-you-mean suggests
    # BLAKE2b digests of the BM25 vocabulary (StringTable.keys): how the segments of an
    # index add up their document frequencies. Made on first use, then stored.
    term_keys: np.ndarray | None = None

    @property
    def doc_count(self) -> int:
        return len(self.paper_ids)

    def keys(self) -> np.ndarray:
        if self.term_keys is None:
            self.term_keys = self.bm25.vocabulary.keys()
        return self.term_keys

    def with_bm25(self, bm25: Bm25Index) -> IndexContent:
        return replace(self, bm25=bm25)

    @classmethod
    def merge(
        cls,
        parts: Sequence[tuple[IndexContent, np.ndarray | None]],
        tokenizer: Tokenizer,
        params: Bm25Params = Bm25Params(),
    ) -> IndexContent:
        """One segment of the live documents of several (content, live mask or None for
        all); nothing is tokenised again."""
        batches = [
            c._as_batch() if live is None else c._as_batch().take(np.flatnonzero(live))
            for c, live in parts
        ]
        batch = Batch.merge(batches) if batches else Batch.of([], tokenizer)
        return cls._assemble(batch, params, tokenizer)

    @classmethod
    def build(
        cls,
        papers: Iterable[IndexedPaper],
        tokenizer: Tokenizer,
        params: Bm25Params = Bm25Params(),
        previous: IndexContent | None = None,
        workers: int | None = None,
        ahead: Batch | None = None,
    ) -> IndexContent:
        """The index of `papers`; rows of `previous` whose paper is unchanged are reused,
        and so are those of `ahead` (papers tokenised while an import wrote them)."""
        reused: list[int] = []
        taken: list[int] = []
        fresh = _unchanged_filter(papers, previous, reused)
        fresh = _unchanged_filter(fresh, ahead, taken)
        groups: list[Batch] = []
        waiting: list[Batch] = []
        for batch in _tokenised(fresh, tokenizer, workers or os.cpu_count() or 1):
            waiting.append(batch)
            if len(waiting) == GROUP:
                # Merged as they come: a few large arrays instead of thousands of small
                # ones and their vocabularies, which fragment the heap and hold memory.
                groups.append(Batch.merge(waiting))
        if waiting:
            groups.append(Batch.merge(waiting))
        if previous is not None and reused:
            groups.insert(0, previous._as_batch().take(np.asarray(reused, dtype=np.int64)))
        if ahead is not None and taken:
            rows = np.asarray(taken, dtype=np.int64)
            whole = len(rows) == len(ahead.paper_ids) and np.array_equal(rows, np.arange(len(rows)))
            groups.insert(0, ahead if whole else ahead.take(rows))  # whole: no copy (1M: 1 GB)
        batch = Batch.merge(groups) if groups else Batch.of([], tokenizer)
        give_back_free_memory()  # what reading the papers left in the heap: before the peak
        return cls._assemble(batch, params, tokenizer)

    @classmethod
    def _assemble(cls, batch: Batch, params: Bm25Params, tokenizer: Tokenizer) -> IndexContent:
        order = np.argsort(batch.paper_ids, kind="stable")
        if np.any(order != np.arange(len(order))):
            batch = batch.take(order)
        postings = {f: _postings(c, batch.names.get(f)) for f, c in batch.filters.items()}
        bm25 = Bm25Index.from_counts(batch.terms, params)
        return cls(
            bm25,
            batch.paper_ids,
            batch.hashes,
            batch.titles,
            StringTable.from_strings(batch.title_terms.vocabulary),
            batch.title_terms.rows,
            postings,
            _spelling(batch.words, tokenizer, batch.terms.vocabulary, bm25),
        )

    def _as_batch(self) -> Batch:
        """This index's documents in the form a worker returns, to reuse some of them."""
        filters = {}
        for fld, postings in self.filters.items():
            by_doc = postings.docs.transpose(self.doc_count)
            filters[fld] = TermCounts(
                postings.keys.to_list(), by_doc, np.zeros(self.doc_count, np.int32)
            )
        titles = TermCounts(
            self.title_vocabulary.to_list(), self.title_terms, np.zeros(self.doc_count, np.int32)
        )
        names = {f: self.filters[f].names_by_key() for f in LISTED_FIELDS}
        return Batch(
            self.paper_ids,
            self.hashes,
            self.titles,
            self.bm25.counts(),
            titles,
            filters,
            self.spelling.word_counts(),
            names,
        )

    # --- persistence ---------------------------------------------------------------

    def arrays(self) -> Arrays:
        arrays = {
            **self.bm25.arrays(),
            "paper_ids": self.paper_ids,
            "hashes": self.hashes,
            **self.titles.arrays("titles"),
            **self.title_vocabulary.arrays("title_vocabulary"),
            **self.title_terms.arrays("title_terms"),
            **self.spelling.arrays(),
            "vocabulary.keys": self.keys(),
        }
        for fld, postings in self.filters.items():
            arrays.update(postings.keys.arrays(f"filter.{fld}.keys"))
            arrays.update(postings.docs.arrays(f"filter.{fld}.docs"))
            if postings.names is not None:
                arrays.update(postings.names.arrays(f"filter.{fld}.names"))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], params: Bm25Params) -> IndexContent:
        filters = {
            f: FilterPostings(
                StringTable.from_arrays(arrays, f"filter.{f}.keys"),
                SparseRows.from_arrays(arrays, f"filter.{f}.docs"),
                _names_from(arrays, f),
            )
            for f in FILTER_FIELDS
        }
        return cls(
            Bm25Index.from_arrays(arrays, params),
            arrays["paper_ids"],
            arrays["hashes"],
            StringTable.from_arrays(arrays, "titles"),
            StringTable.from_arrays(arrays, "title_vocabulary"),
            SparseRows.from_arrays(arrays, "title_terms"),
            filters,
            Spelling.from_arrays(arrays),
            arrays.get("vocabulary.keys"),
        )


def _postings(counts: TermCounts, names: dict[str, str] | None) -> FilterPostings:
    keys = StringTable.from_strings(counts.vocabulary)
    docs = counts.rows.transpose(len(counts.vocabulary))
    if names is None:
        return FilterPostings(keys, docs)
    written = StringTable.from_strings(names.get(k, "") for k in counts.vocabulary)
    return FilterPostings(keys, docs, written)


def _names_from(arrays: Mapping[str, np.ndarray], fld: str) -> StringTable | None:
    return StringTable.from_arrays(arrays, f"filter.{fld}.names") if fld in LISTED_FIELDS else None


def _spelling(
    words: WordCounts, tokenizer: Tokenizer, vocabulary: list[str], bm25: Bm25Index
) -> Spelling:
    """The words whose stem is in SPELLING_MIN_PAPERS papers or more (bot.search.suggest
    says why). `vocabulary` is BM25's, sorted: term ids are ranks in it."""
    papers = bm25.term_docs.row_lengths()
    keep = []
    for position, stem in enumerate(tokenizer.stems(words.words)):
        term = bisect_left(vocabulary, stem)
        known = term < len(vocabulary) and vocabulary[term] == stem
        if known and papers[term] >= SPELLING_MIN_PAPERS:
            keep.append(position)
    return Spelling.build([words.words[i] for i in keep], words.counts[keep])


def _unchanged_filter(
    papers: Iterable[IndexedPaper], previous: IndexContent | Batch | None, reused: list[int]
) -> Iterator[IndexedPaper]:
    """The papers `previous` (its paper ids sorted) does not hold as they are now; the
    documents it can reuse are appended to `reused` as a side effect while the stream is
    consumed."""
    if previous is None:
        yield from papers
        return
    count = len(previous.paper_ids)
    for paper in papers:
        doc = int(np.searchsorted(previous.paper_ids, paper.paper_id))
        if (
            doc < count
            and previous.paper_ids[doc] == paper.paper_id
            and previous.hashes[doc] == content_hash(paper)
        ):
            reused.append(doc)
            continue
        yield paper


def _batches(papers: Iterable[IndexedPaper]) -> Iterator[list[IndexedPaper]]:
    batch: list[IndexedPaper] = []
    for paper in papers:
        batch.append(paper)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _tokenised(
    papers: Iterable[IndexedPaper], tokenizer: Tokenizer, workers: int
) -> Iterator[Batch]:
    """Batches in order: here when there are at most PARALLEL_AFTER papers, else all on
    `workers` processes with a bounded number of batches in flight (papers are streamed)."""
    batches = _batches(papers)
    waiting: list[list[IndexedPaper]] = []
    for batch in batches:
        waiting.append(batch)
        if len(waiting) * BATCH > PARALLEL_AFTER and workers > 1:
            break
    else:
        for batch in waiting:
            with without_cycle_collection():
                tokenised = Batch.of(batch, tokenizer)
            yield tokenised
        return
    with _worker_pool(workers, type(tokenizer)) as pool:
        pending: deque[Future[Batch]] = deque(
            pool.submit(_tokenise_in_worker, batch) for batch in waiting
        )
        del waiting
        for batch in batches:
            pending.append(pool.submit(_tokenise_in_worker, batch))
            while len(pending) > 2 * workers + PARALLEL_AFTER // BATCH:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


class TokenisedAhead:
    """Papers tokenised while an import is still writing them, on worker processes that
    use the cores the import leaves idle, for the build that follows. The import writes
    on one core: the workers run at a lower priority (AHEAD_NICENESS) so that they never
    slow it, and have every core once it is done and waits for them.

    The build takes a paper's rows from here only where the paper's content hash is the
    one it reads from the database: a paper a later record of the import merged into,
    or one of a file whose import was refused and rolled back, is tokenised again.
    Below AHEAD_AFTER papers nothing is tokenised here: the build does it faster than
    a worker process starts."""

    def __init__(self, tokenizer_type: type[Tokenizer], workers: int | None = None) -> None:
        self._tokenizer_type = tokenizer_type
        self._workers = workers or os.cpu_count() or 1
        self._waiting: list[IndexedPaper] = []  # not yet a whole batch (or a pool's worth)
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[Future[Batch]] = deque()
        self._arrived: list[Batch] = []
        self._groups: list[Batch] = []
        self._failed = False

    def add(self, papers: Sequence[IndexedPaper]) -> None:
        if self._failed:
            return
        self._waiting.extend(papers)
        if self._pool is None and len(self._waiting) < AHEAD_AFTER:
            return
        whole = len(self._waiting) - len(self._waiting) % BATCH
        self._submit(self._waiting[:whole])
        self._waiting = self._waiting[whole:]
        self._collect(wait=False)

    def result(self) -> Batch | None:
        """Everything tokenised here, by paper id (waiting for the workers); None when
        the import was too small to start them."""
        if self._pool is None or self._failed:
            return None
        self._submit(self._waiting)
        self._waiting = []
        self._collect(wait=True)
        self.close()
        if self._failed:
            return None
        if self._arrived:
            self._groups.append(Batch.merge(self._arrived))
        batch = Batch.merge(self._groups) if self._groups else None
        if batch is None:
            return None
        order = np.argsort(batch.paper_ids, kind="stable")  # written in id order, but sure
        return batch if np.all(order == np.arange(len(order))) else batch.take(order)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def _submit(self, papers: list[IndexedPaper]) -> None:
        if self._pool is None:
            self._pool = _worker_pool(self._workers, self._tokenizer_type, AHEAD_NICENESS)
        for batch in _batches(papers):
            self._pending.append(self._pool.submit(_tokenise_in_worker, batch))

    def _collect(self, wait: bool) -> None:
        try:
            while self._pending and (wait or self._pending[0].done()):
                self._arrived.append(self._pending.popleft().result())
                if len(self._arrived) == GROUP:  # merged as they come, as in a build
                    self._groups.append(Batch.merge(self._arrived))
        except Exception as problem:  # a worker died: the build tokenises these itself
            log.warning("search index: tokenising ahead of the build stopped: %r", problem)
            self._failed = True
            self._waiting, self._arrived, self._groups = [], [], []
            self._pending.clear()
            self.close()


def _worker_pool(
    workers: int, tokenizer_type: type[Tokenizer], niceness: int = 0
) -> ProcessPoolExecutor:
    """Tokenising processes, each with a tokenizer of its own."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),  # fork is unsafe in a threaded bot
        initializer=_start_worker,
        initargs=(tokenizer_type, niceness),
    )


# A worker process keeps one tokenizer (and its stem cache) for all its batches.
_worker_tokenizer: Tokenizer | None = None


def _start_worker(tokenizer_type: type[Tokenizer], niceness: int = 0) -> None:
    global _worker_tokenizer
    if niceness and hasattr(os, "nice"):
        os.nice(niceness)
    _worker_tokenizer = tokenizer_type()


def _tokenise_in_worker(papers: list[IndexedPaper]) -> Batch:
    assert _worker_tokenizer is not None
    with without_cycle_collection():  # its stem cache only grows
        return Batch.of(papers, _worker_tokenizer)
