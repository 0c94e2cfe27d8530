"""What one version of the search index holds, and how it is built from papers.

An `IndexContent` is BM25 over the papers' text, the papers' ids and titles, the
postings of the filter fields (author words, tracks, collections, tags) with the values
as written for those a reply lists, and the words as written that did-you-mean suggests
(see bot.search.builtin.spelling), all flat arrays that `bot.search.builtin.files` writes and
memory-maps back.

A build assembles it from tokenised papers (`bot.search.builtin.batch`), tokenised here or on
worker processes (`bot.search.builtin.tokenising`). Given the previous version, a build
re-tokenises only papers whose content hash changed or that are new, and reuses the
other rows: the global statistics (N, avgdl, idf) change with every import, so each
term's bounds are always recomputed, but that is compiled work.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from bot.collector import give_back_free_memory
from bot.corpus.indexed import IndexedPaper
from bot.search.builtin.arrays import Arrays, SparseRows, StringTable, digest_order
from bot.search.builtin.batch import Batch, content_hash
from bot.search.builtin.bm25 import Bm25Index, TermCounts
from bot.search.builtin.spelling import Spelling, WordCounts
from bot.search.builtin.tokenising import GROUP, tokenised
from bot.search.fields import FILTER_FIELDS, LISTED_FIELDS
from bot.search.params import Bm25Params
from bot.search.tokens import Tokenizer

SPELLING_MIN_PAPERS = 2  # a word is suggested only if its stem is in this many papers


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
        return [(name, size) for name, size in zip(self.names.to_list(), sizes, strict=True) if name]

    def names_by_key(self) -> dict[str, str]:
        if self.names is None:
            return {}
        return {k: n for k, n in zip(self.keys.to_list(), self.names.to_list(), strict=True) if n}


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
    # The documents by the set of their title's terms (title_sets); stored, or made on
    # first use for a segment written before they were.
    title_sets: tuple[np.ndarray, np.ndarray] | None = None
    # The vocabulary's rows in the order of their digests (arrays.digest_order): where
    # a smaller segment's terms are looked up (segments.global_stats); stored, or made on
    # first use for a segment written before it was.
    term_key_order: np.ndarray | None = None

    @property
    def doc_count(self) -> int:
        return len(self.paper_ids)

    def keys(self) -> np.ndarray:
        if self.term_keys is None:
            self.term_keys = self.bm25.vocabulary.keys()
        return self.term_keys

    def key_order(self) -> np.ndarray:
        if self.term_key_order is None:
            self.term_key_order = digest_order(self.keys())
        return self.term_key_order

    def title_set_arrays(self) -> Arrays:
        keys, docs = self._title_sets()
        return {"title_sets.keys": keys, "title_sets.docs": docs}

    def _title_sets(self) -> tuple[np.ndarray, np.ndarray]:
        if self.title_sets is None:
            self.title_sets = title_sets(self.title_terms, len(self.title_vocabulary))
        return self.title_sets

    def titled(self, terms: Iterable[str]) -> np.ndarray:
        """The documents whose title's plain terms are exactly `terms` (distinct),
        ascending: one binary search of the title sets, then each found title checked."""
        ids = [self.title_vocabulary.find(t) for t in terms]
        if not ids or None in ids:
            return np.zeros(0, dtype=np.int64)
        keys, docs = self._title_sets()
        wanted = np.sort(np.asarray(ids, dtype=np.int64))
        key = _set_key(wanted)
        found = docs[np.searchsorted(keys, key) : np.searchsorted(keys, key, side="right")]
        rows = self.title_terms
        found = np.sort(found.astype(np.int64))
        found = found[rows.indptr[found + 1] - rows.indptr[found] == len(wanted)]
        # Rows of one length: their terms side by side, compared with the query's at once.
        side_by_side = rows.cols[rows.indptr[found][:, None] + np.arange(len(wanted))]
        exact: np.ndarray = found[np.all(np.sort(side_by_side, axis=1) == wanted, axis=1)]
        return exact

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
        told: Batch | None = None,
    ) -> IndexContent:
        """The index of `papers` and of the papers `told` holds tokenised already (an
        import's, TokenisedAhead: none of them among `papers`); rows of `previous` whose
        paper is unchanged are reused."""
        reused: list[int] = []
        fresh = _unchanged_filter(papers, previous, reused)
        groups: list[Batch] = []
        waiting: list[Batch] = []
        for batch in tokenised(fresh, tokenizer, workers or os.cpu_count() or 1):
            waiting.append(batch)
            if len(waiting) == GROUP:
                # Merged as they come: a few large arrays instead of thousands of small
                # ones and their vocabularies, which fragment the heap and hold memory.
                groups.append(Batch.merge(waiting))
        if waiting:
            groups.append(Batch.merge(waiting))
        if previous is not None and reused:
            groups.insert(0, previous._as_batch().take(np.asarray(reused, dtype=np.int64)))
        if told is not None:
            groups.insert(0, told)
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
            "vocabulary.key_order": self.key_order(),
        }
        arrays.update(self.title_set_arrays())
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
            (arrays["title_sets.keys"], arrays["title_sets.docs"])
            if "title_sets.keys" in arrays
            else None,
            arrays.get("vocabulary.key_order"),
        )


def title_sets(title_terms: SparseRows, vocabulary_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(a key per document for the set of its title's terms, sorted; the documents in
    that order): a title is found by its terms with one binary search (bot.search.builtin.index
    puts the paper whose title a query spells first). A set's key is the sum of a
    well-mixed 64-bit value per term id, so it needs no order; different sets that
    share a key (one chance in 2**64 for two) are told apart by checking the rows."""
    rows = title_terms
    sums = np.zeros(len(rows.cols) + 1, dtype=np.uint64)
    np.cumsum(_mixed(np.arange(vocabulary_size, dtype=np.uint64))[rows.cols], out=sums[1:])
    keys = sums[rows.indptr[1:]] - sums[rows.indptr[:-1]]  # wraps around, as the key does
    order = np.argsort(keys)  # equal keys in any order: `titled` sorts what it finds
    return keys[order], order.astype(np.int32)  # a segment holds under 2**24 documents


def _set_key(term_ids: np.ndarray) -> np.uint64:
    return np.uint64(_mixed(term_ids.astype(np.uint64)).sum(dtype=np.uint64))


def _mixed(ids: np.ndarray) -> np.ndarray:
    """splitmix64 of each id: values whose sums differ for different sets of ids."""
    z = ids + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


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
    """The words whose stem is in SPELLING_MIN_PAPERS papers or more (bot.search.builtin.spelling
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
    papers: Iterable[IndexedPaper], previous: IndexContent | None, reused: list[int]
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
