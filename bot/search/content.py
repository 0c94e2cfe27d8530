"""What one version of the search index holds, and how it is built from papers.

An `IndexContent` is BM25 over the papers' text, the papers' ids and titles, and the
postings of the filter fields (author words, tracks, collections, tags), all flat arrays
that `bot.search.files` writes and memory-maps back.

Building tokenises papers in batches; past `PARALLEL_AFTER` papers the batches go to
worker processes (tokenising is pure Python and dominates a build). Given the previous
version, a build re-tokenises only papers whose content hash changed or that are new,
and reuses the other rows: the global statistics (N, avgdl, idf) change with every
import, so the impact-ordered lists are always recomputed, but that is numpy work.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from bot.search.arrays import Arrays, SparseRows, StringTable
from bot.search.bm25 import Bm25Index, Bm25Params, TermCounts
from bot.search.tokens import Tokenizer, fold

FILTER_FIELDS = ("author", "track", "in", "tag")
BATCH = 2_000  # papers a worker tokenises per task
GROUP = 50  # batches merged together as they arrive
PARALLEL_AFTER = 20_000  # below this, starting worker processes costs more than it saves


@dataclass(frozen=True)
class IndexedPaper:
    """What the index needs of one paper: its text and the fields filters look at."""

    paper_id: int
    title: str
    text: str  # everything searchable: title, abstract, reviewer notes
    authors: Sequence[str] = ()
    track: str | None = None
    award: str | None = None
    collections: Sequence[str] = ()
    tags: Sequence[str] = ()


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

    @classmethod
    def of(cls, papers: Sequence[IndexedPaper], tokenizer: Tokenizer) -> Batch:
        keys = [filter_keys(p) for p in papers]
        tokens = [_text_and_title_tokens(p, tokenizer) for p in papers]
        return cls(
            np.array([p.paper_id for p in papers], dtype=np.int64),
            np.array([content_hash(p) for p in papers], dtype=np.int64),
            StringTable.from_strings(p.title for p in papers),
            TermCounts.count(text for text, _title in tokens),
            TermCounts.count(sorted(plain_terms(title)) for _text, title in tokens),
            {f: TermCounts.count(sorted(k[f]) for k in keys) for f in FILTER_FIELDS},
        )

    @classmethod
    def merge(cls, batches: list[Batch]) -> Batch:
        """The batches' papers one after another; consumes the list as it copies."""
        paper_ids = np.concatenate([b.paper_ids for b in batches])
        hashes = np.concatenate([b.hashes for b in batches])
        titles = StringTable.concat([b.titles for b in batches])
        terms, title_terms = [b.terms for b in batches], [b.title_terms for b in batches]
        filters = {f: [b.filters[f] for b in batches] for f in FILTER_FIELDS}
        batches.clear()
        return cls(
            paper_ids,
            hashes,
            titles,
            TermCounts.merge(terms),
            TermCounts.merge(title_terms),
            {f: TermCounts.merge(parts) for f, parts in filters.items()},
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
        )


def _text_and_title_tokens(
    paper: IndexedPaper, tokenizer: Tokenizer
) -> tuple[list[str], list[str]]:
    """The tokens of the text and of the title. A searchable text starts with its title
    line, and no token spans a line break, so the title is tokenised once, not twice."""
    title = tokenizer.tokens(paper.title)
    if paper.text.startswith(paper.title + "\n"):
        return title + tokenizer.tokens(paper.text[len(paper.title) + 1 :]), title
    return tokenizer.tokens(paper.text), title


def plain_terms(tokens: Iterable[str]) -> set[str]:
    """Terms without the whole hyphenated words, whose parts are already there."""
    return {t for t in tokens if "-" not in t}


@dataclass
class FilterPostings:
    """One filter field: sorted keys and, per key, the documents that have it."""

    keys: StringTable
    docs: SparseRows

    def docs_of(self, key: str) -> np.ndarray:
        row = self.keys.find(key)
        if row is None:
            return np.zeros(0, dtype=np.int32)
        return self.docs.cols[slice(*self.docs.bounds(row))]


@dataclass
class IndexContent:
    bm25: Bm25Index
    paper_ids: np.ndarray  # document -> paper id, ascending
    hashes: np.ndarray  # document -> content_hash, to tell what an update must re-read
    titles: StringTable
    title_vocabulary: StringTable  # sorted
    title_terms: SparseRows  # document -> ids of its title's plain terms
    filters: dict[str, FilterPostings]

    @property
    def doc_count(self) -> int:
        return len(self.paper_ids)

    @classmethod
    def build(
        cls,
        papers: Iterable[IndexedPaper],
        tokenizer: Tokenizer,
        params: Bm25Params = Bm25Params(),
        previous: IndexContent | None = None,
        workers: int | None = None,
    ) -> IndexContent:
        """The index of `papers`; rows of `previous` whose paper is unchanged are reused."""
        reused: list[int] = []
        fresh = _unchanged_filter(papers, previous, reused)
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
        return cls._assemble(Batch.merge(groups) if groups else Batch.of([], tokenizer), params)

    @classmethod
    def _assemble(cls, batch: Batch, params: Bm25Params) -> IndexContent:
        order = np.argsort(batch.paper_ids, kind="stable")
        if np.any(order != np.arange(len(order))):
            batch = batch.take(order)
        postings = {
            f: FilterPostings(
                StringTable.from_strings(c.vocabulary), c.rows.transpose(len(c.vocabulary))
            )
            for f, c in batch.filters.items()
        }
        return cls(
            Bm25Index.from_counts(batch.terms, params),
            batch.paper_ids,
            batch.hashes,
            batch.titles,
            StringTable.from_strings(batch.title_terms.vocabulary),
            batch.title_terms.rows,
            postings,
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
        return Batch(self.paper_ids, self.hashes, self.titles, self.bm25.counts(), titles, filters)

    # --- persistence ---------------------------------------------------------------

    def arrays(self) -> Arrays:
        arrays = {
            **self.bm25.arrays(),
            "paper_ids": self.paper_ids,
            "hashes": self.hashes,
            **self.titles.arrays("titles"),
            **self.title_vocabulary.arrays("title_vocabulary"),
            **self.title_terms.arrays("title_terms"),
        }
        for fld, postings in self.filters.items():
            arrays.update(postings.keys.arrays(f"filter.{fld}.keys"))
            arrays.update(postings.docs.arrays(f"filter.{fld}.docs"))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], params: Bm25Params) -> IndexContent:
        filters = {
            f: FilterPostings(
                StringTable.from_arrays(arrays, f"filter.{f}.keys"),
                SparseRows.from_arrays(arrays, f"filter.{f}.docs"),
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
        )


def _unchanged_filter(
    papers: Iterable[IndexedPaper], previous: IndexContent | None, reused: list[int]
) -> Iterator[IndexedPaper]:
    """The papers `previous` does not hold as they are now; the documents it can reuse
    are appended to `reused` as a side effect while the stream is consumed."""
    for paper in papers:
        if previous is not None:
            doc = int(np.searchsorted(previous.paper_ids, paper.paper_id))
            if (
                doc < previous.doc_count
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
        yield from (Batch.of(batch, tokenizer) for batch in waiting)
        return
    context = multiprocessing.get_context("spawn")  # fork is unsafe in a threaded bot
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(type(tokenizer),)
    ) as pool:
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


# A worker process keeps one tokenizer (and its stem cache) for all its batches.
_worker_tokenizer: Tokenizer | None = None


def _start_worker(tokenizer_type: type[Tokenizer]) -> None:
    global _worker_tokenizer
    _worker_tokenizer = tokenizer_type()


def _tokenise_in_worker(papers: list[IndexedPaper]) -> Batch:
    assert _worker_tokenizer is not None
    return Batch.of(papers, _worker_tokenizer)
