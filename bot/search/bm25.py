"""BM25 with rank-bm25's BM25Okapi semantics, as a sparse index of precomputed impacts.

A term's contribution to a document's score (its "impact") is BM25Okapi's

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

with idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and terms whose idf is negative floored to
epsilon * (mean idf over the vocabulary), as rank-bm25 does. A query term that occurs
twice counts twice, as in rank-bm25.

Three flat arrays views of the corpus (memory-mapped when loaded):
- term -> (document, impact as float32), documents ascending: what a query adds up.
  Document order rather than impact order: the sums are scattered into a dense array,
  and in ascending order that scatter runs about 3x faster (cache lines and prefetching);
- term -> its highest impacts (the impact-ordered head of each long list): the
  documents that give a first k-th best score and each term's maximum impact;
- document -> (term id, frequency), term ids ascending: where a candidate's exact score
  is computed, in float64 with the formula above, so every score returned is the
  reference's value, never the float32 approximation.

`top` is MaxScore-like (see `_pruned`): the k-th best score among the heads says which of
the longest lists cannot lift a document into the top k on their own; those are left out
of the sums, and only the documents that can still make it are completed and scored.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain

import numpy as np

from bot.search.arrays import Arrays, SparseRows, StringTable, ranges

# Float32 impacts are within ~1e-7 of the float64 ones; sums of them, within ~1e-6. Every
# bound computed from them gets this much relative slack, so none of them can drop a
# document that belongs in the top k (ties included).
SLACK = 1e-4
# With a filter this selective, scoring the allowed documents directly is cheapest.
DIRECT_LIMIT = 20_000
FIRST_SEEDS = 64  # best postings per term scored exactly to get a first k-th best score
HEAD = 256  # highest-impact postings kept apart for each term that has more
# Longest lists are left out of the sums while their highest impacts add up to at most
# this share of that score: the rest of the score must come from the other terms.
LEAVE_OUT_SHARE = 0.5


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


@dataclass
class TermCounts:
    """Term frequencies of some documents over a sorted vocabulary: the input of a build."""

    vocabulary: list[str]  # sorted, so a term's id is its rank
    rows: SparseRows  # document -> (term id, frequency), ids ascending within a row; the
    # narrowest unsigned types that hold them (uint16 ids for a vocabulary under 65,536)
    lengths: np.ndarray  # tokens per document, repeats included (int32)

    @classmethod
    def count(cls, documents: Iterable[Sequence[str]]) -> TermCounts:
        documents = list(documents)
        tokens = list(chain.from_iterable(documents))
        vocabulary = sorted(set(tokens))
        position = {t: i for i, t in enumerate(vocabulary)}
        # One C-level pass maps every token; the vocabulary's size bounds the key below.
        ids = np.fromiter(map(position.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        lengths = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
        width = max(len(vocabulary), 1)
        doc_of = np.repeat(np.arange(len(documents), dtype=np.int64), lengths)
        # One sort of (document, term) keys gives both the rows' order and the frequencies.
        keys, tf = np.unique(doc_of * width + ids, return_counts=True)
        indptr = np.zeros(len(documents) + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // width, minlength=len(documents)), out=indptr[1:])
        cols = (keys % width).astype(_smallest_unsigned(width - 1))
        rows = SparseRows(
            indptr, cols, tf.astype(_smallest_unsigned(int(tf.max()) if len(tf) else 0))
        )
        return cls(vocabulary, rows, lengths.astype(np.int32))

    @classmethod
    def merge(cls, parts: list[TermCounts]) -> TermCounts:
        """One vocabulary for all parts, their documents one after another.

        Consumes `parts`: each is copied into the result and dropped, so a build holds the
        postings about once rather than twice (at a million papers, 600 MB less).
        """
        vocabulary = sorted(set().union(*(p.vocabulary for p in parts)))
        position = {t: i for i, t in enumerate(vocabulary)}
        entries = sum(len(p.rows.cols) for p in parts)
        docs = sum(p.rows.row_count for p in parts)
        value_type = np.result_type(*(p.rows.values.dtype for p in parts)) if parts else np.uint16
        indptr, cols = (
            np.zeros(docs + 1, np.int64),
            np.empty(entries, _smallest_unsigned(max(len(vocabulary) - 1, 0))),
        )
        values, lengths = np.empty(entries, value_type), np.empty(docs, np.int32)
        entry = doc = 0
        parts.reverse()
        while parts:
            part = parts.pop()
            # Both vocabularies are sorted, so renumbering keeps each row's ids ascending.
            mapping = np.array([position[t] for t in part.vocabulary], dtype=cols.dtype)
            count, rows = len(part.rows.cols), part.rows.row_count
            cols[entry : entry + count] = mapping[part.rows.cols]
            values[entry : entry + count] = part.rows.values
            indptr[doc + 1 : doc + rows + 1] = part.rows.indptr[1:] + entry
            lengths[doc : doc + rows] = part.lengths
            entry, doc = entry + count, doc + rows
        return cls(vocabulary, SparseRows(indptr, cols, values), lengths)

    def take(self, docs: np.ndarray) -> TermCounts:
        """These documents only, in this order."""
        return TermCounts(self.vocabulary, self.rows.take(docs), self.lengths[docs])


class Bm25Index:
    """The index of one corpus; immutable."""

    def __init__(
        self,
        vocabulary: StringTable,
        doc_terms: SparseRows,
        doc_lengths: np.ndarray,
        params: Bm25Params,
        term_docs: SparseRows | None = None,
        term_heads: SparseRows | None = None,
    ):
        self.vocabulary = vocabulary
        self.doc_terms = doc_terms
        self.doc_lengths = doc_lengths
        self.params = params
        self.doc_count = len(doc_lengths)
        by_term = doc_terms.transpose(len(vocabulary)) if term_docs is None else term_docs
        self.idf = _okapi_idf(by_term.row_lengths(), self.doc_count, params.epsilon)
        avgdl = doc_lengths.sum() / self.doc_count if self.doc_count else 1.0
        self.norm = params.k1 * (1 - params.b + params.b * doc_lengths / avgdl)
        self.term_docs = self._with_impacts(by_term) if term_docs is None else term_docs
        self.term_heads = self._heads() if term_heads is None else term_heads

    @classmethod
    def build(
        cls, documents: Iterable[Sequence[str]], params: Bm25Params = Bm25Params()
    ) -> Bm25Index:
        return cls.from_counts(TermCounts.count(documents), params)

    @classmethod
    def from_counts(cls, counts: TermCounts, params: Bm25Params = Bm25Params()) -> Bm25Index:
        return cls(StringTable.from_strings(counts.vocabulary), counts.rows, counts.lengths, params)

    def counts(self) -> TermCounts:
        """The term frequencies this index was built from (to extend it with more documents)."""
        return TermCounts(self.vocabulary.to_list(), self.doc_terms, self.doc_lengths)

    # --- persistence ---------------------------------------------------------------

    def arrays(self) -> Arrays:
        return {
            **self.vocabulary.arrays("vocabulary"),
            **self.doc_terms.arrays("doc_terms"),
            **self.term_docs.arrays("term_docs"),
            **self.term_heads.arrays("term_heads"),
            "doc_lengths": self.doc_lengths,
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], params: Bm25Params) -> Bm25Index:
        return cls(
            StringTable.from_arrays(arrays, "vocabulary"),
            SparseRows.from_arrays(arrays, "doc_terms"),
            arrays["doc_lengths"],
            params,
            term_docs=SparseRows.from_arrays(arrays, "term_docs"),
            term_heads=SparseRows.from_arrays(arrays, "term_heads"),
        )

    # --- scoring -------------------------------------------------------------------

    def term_ids(self, query_tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, how often each occurs in the query); unknown terms dropped."""
        ids, weights = [], []
        for token, count in Counter(query_tokens).items():
            term = self.vocabulary.find(token)
            if term is not None:
                ids.append(term)
                weights.append(count)
        return np.asarray(ids, dtype=np.int64), np.asarray(weights, dtype=np.float64)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Dense scores for every document, what BM25Okapi.get_scores returns."""
        ids, weights = self.term_ids(query_tokens)
        docs = self.candidates(query_tokens)
        scores = np.zeros(self.doc_count, dtype=np.float64)
        scores[docs] = self.score_docs(docs, ids, weights)[0]
        return scores

    def candidates(self, query_tokens: Sequence[str]) -> np.ndarray:
        """The documents that contain at least one query term (the only ones that score)."""
        ids, _weights = self.term_ids(query_tokens)
        postings = [self.term_docs.cols[slice(*self.term_docs.bounds(t))] for t in ids]
        if not postings:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(postings)).astype(np.int64)

    def top(
        self, query_tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The k best (document, score) pairs among documents with a query term; ties go to
        the earlier document. `allowed` is a boolean mask over documents (filters)."""
        ids, weights = self.term_ids(query_tokens)
        if len(ids) == 0 or k <= 0:
            return []
        if allowed is not None and np.count_nonzero(allowed) <= DIRECT_LIMIT:
            docs = np.flatnonzero(allowed)
        elif self.idf[ids].min() <= 0:
            # A floored idf can be negative in tiny corpora: no bound holds, score them all.
            docs = self.candidates(query_tokens)
            docs = docs if allowed is None else docs[allowed[docs]]
        else:
            docs = self._pruned(ids, weights, k, allowed)
        scores, present = self.score_docs(docs, ids, weights)
        return _best(docs[present > 0], scores[present > 0], k)

    def score_docs(
        self, docs: np.ndarray, ids: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact float64 scores of the given documents and how many query terms each has,
        read from their own term lists (all of them at once). Within a document the
        impacts are added in term id order, the same for every document, so equal
        documents get bit-for-bit equal scores."""
        owner, terms, tf = self._query_terms_in(docs, ids)
        order = np.argsort(ids)
        weight = weights[order][np.searchsorted(ids[order], terms)]
        impacts = weight * self._impacts(terms, docs[owner], tf)
        return np.bincount(owner, impacts, minlength=len(docs)), np.bincount(
            owner, minlength=len(docs)
        )

    def matched(self, docs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """A boolean per (document, term id): which of the terms each document contains."""
        owner, terms, _tf = self._query_terms_in(docs, ids)
        found = np.zeros((len(docs), len(ids)), dtype=bool)
        order = np.argsort(ids)
        found[owner, order[np.searchsorted(ids[order], terms)]] = True
        return found

    def _query_terms_in(
        self, docs: np.ndarray, ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(which of `docs`, term id, frequency) for each query term a document contains."""
        rows = self.doc_terms
        starts = rows.indptr[docs]
        lengths = rows.indptr[docs + 1] - starts
        where = ranges(starts, lengths)
        terms = rows.cols[where].astype(np.int64)
        wanted = np.sort(ids)
        position = np.minimum(np.searchsorted(wanted, terms), max(len(wanted) - 1, 0))
        hit = wanted[position] == terms if len(wanted) else np.zeros(len(terms), dtype=bool)
        owner = np.repeat(np.arange(len(docs)), lengths)[hit]
        return owner, terms[hit], rows.values[where[hit]]

    def doc_impacts(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, exact impacts) of one document's terms."""
        start, end = self.doc_terms.bounds(doc)
        terms = self.doc_terms.cols[start:end].astype(np.int64)
        return terms, self._impacts(
            terms, np.full(len(terms), doc), self.doc_terms.values[start:end]
        )

    # --- internals -----------------------------------------------------------------

    def _impacts(self, terms: int | np.ndarray, docs: np.ndarray, tf: np.ndarray) -> np.ndarray:
        tf = tf.astype(np.float64)
        p = self.params
        return self.idf[terms] * tf * (p.k1 + 1) / (tf + self.norm[docs])

    def _with_impacts(self, by_term: SparseRows) -> SparseRows:
        """The postings with float32 impacts in place of frequencies. numpy computes
        without the GIL, so threads share the terms, the longest first so that no thread
        is left alone with a long one at the end."""
        lengths = by_term.row_lengths()
        impacts = np.empty(len(by_term.cols), dtype=np.float32)
        terms = np.argsort(-lengths, kind="stable")
        threads = min(os.cpu_count() or 1, 8)

        def fill(share: np.ndarray) -> None:
            for term in share:
                start, end = by_term.bounds(term)
                impacts[start:end] = self._impacts(
                    term, by_term.cols[start:end], by_term.values[start:end]
                )

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(fill, [terms[i::threads] for i in range(threads)]))
        return SparseRows(by_term.indptr, by_term.cols, impacts)

    def _heads(self) -> SparseRows:
        """For each term with more than HEAD postings, its HEAD highest, by impact."""
        lengths = self.term_docs.row_lengths()
        long_terms = np.flatnonzero(lengths > HEAD)
        indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        indptr[long_terms + 1] = HEAD
        np.cumsum(indptr, out=indptr)
        cols = np.empty(HEAD * len(long_terms), dtype=np.int32)
        values = np.empty(HEAD * len(long_terms), dtype=np.float32)
        for i, term in enumerate(long_terms):
            start, end = self.term_docs.bounds(term)
            impacts = self.term_docs.values[start:end]
            best = np.argpartition(-impacts, HEAD - 1)[:HEAD]
            best = best[np.argsort(-impacts[best], kind="stable")]
            cols[i * HEAD : (i + 1) * HEAD] = self.term_docs.cols[start:end][best]
            values[i * HEAD : (i + 1) * HEAD] = impacts[best]
        return SparseRows(indptr, cols, values)

    def _df(self, term: int) -> int:
        start, end = self.term_docs.bounds(term)
        return end - start

    def _best_postings(self, term: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(documents, impacts) of up to `count` of the term's highest-impact postings: its
        head, or its whole list when that is short (or the head is not enough)."""
        start, end = self.term_heads.bounds(term)
        if end - start >= count:
            return self.term_heads.cols[start : start + count], self.term_heads.values[
                start : start + count
            ]
        start, end = self.term_docs.bounds(term)
        return self.term_docs.cols[start:end], self.term_docs.values[start:end]

    def _pruned(
        self, ids: np.ndarray, weights: np.ndarray, k: int, allowed: np.ndarray | None
    ) -> np.ndarray:
        """The documents that can be in the top k (a superset, scored exactly afterwards).

        1. theta: the k-th best exact score among the best postings of each term. The top
           k all score at least theta.
        2. The longest lists whose highest impacts add up to at most LEAVE_OUT_SHARE of
           theta are left out: a document needs the rest of theta from the other terms.
        3. The other terms' float32 impacts are summed into a dense array: documents
           whose sum misses theta minus what the left-out terms could add are dropped.
        4. The left-out terms' impacts are added to the survivors (approximate scores),
           and only those within SLACK of the approximate k-th best are kept.
        """
        lengths = [self._df(t) for t in ids]
        theta = (
            self._seed_threshold(ids, weights, k, allowed)
            if self._worth_seeding(lengths, k)
            else 0.0
        )
        highest = np.array([float(self._best_postings(t, 1)[1].max()) for t in ids]) * (1 + SLACK)
        left_out, budget = [], theta * LEAVE_OUT_SHARE
        for i in sorted(range(len(ids)), key=lambda i: -lengths[i]):
            if weights[i] * highest[i] > budget:
                break
            left_out.append(i)
            budget -= weights[i] * highest[i]
        partial = np.zeros(self.doc_count, dtype=np.float32)
        for i in (i for i in range(len(ids)) if i not in left_out):
            start, end = self.term_docs.bounds(ids[i])
            impacts = self.term_docs.values[start:end]
            partial[self.term_docs.cols[start:end]] += (
                impacts if weights[i] == 1 else np.float32(weights[i]) * impacts
            )
        reach = theta * (1 - SLACK) - sum(weights[i] * highest[i] for i in left_out)
        docs = np.flatnonzero(partial >= reach) if reach > 0 else np.flatnonzero(partial > 0)
        if allowed is not None:
            docs = docs[allowed[docs]]
        approximate = partial[docs].astype(np.float64)
        for i in left_out:
            approximate += weights[i] * self._impacts_in(docs, ids[i])
        if len(docs) > k:
            kth = np.partition(approximate, len(docs) - k)[len(docs) - k]
            docs = docs[approximate >= kth * (1 - SLACK)]
        return docs

    def _worth_seeding(self, lengths: list[int], k: int) -> bool:
        """Scoring a seed reads its whole term list: in small corpora summing every list
        costs less than finding out which of them could be left out."""
        seeds = sum(min(n, max(FIRST_SEEDS, 2 * k)) for n in lengths)
        return seeds * len(self.doc_terms.cols) / max(self.doc_count, 1) < sum(lengths)

    def _impacts_in(self, docs: np.ndarray, term: int) -> np.ndarray:
        """The term's float32 impact in each of the (ascending) documents, 0 where absent:
        a binary search of its document-ordered postings."""
        start, end = self.term_docs.bounds(term)
        postings = self.term_docs.cols[start:end]
        where = np.minimum(np.searchsorted(postings, docs), max(end - start - 1, 0))
        found = postings[where] == docs if end > start else np.zeros(len(docs), dtype=bool)
        return np.where(found, self.term_docs.values[start:end][where] if end > start else 0.0, 0.0)

    def _seed_threshold(
        self, ids: np.ndarray, weights: np.ndarray, k: int, allowed: np.ndarray | None
    ) -> float:
        """The k-th best exact score among the best postings of each term (taking more
        until k allowed documents are found; 0 if fewer than k contain a term)."""
        take = max(FIRST_SEEDS, 2 * k)
        while True:
            best = [self._best_postings(t, take)[0] for t in ids]
            seeds = np.unique(np.concatenate(best))
            if allowed is not None:
                seeds = seeds[allowed[seeds]]
            if len(seeds) >= k:
                scores = self.score_docs(seeds.astype(np.int64), ids, weights)[0]
                return float(np.partition(scores, len(scores) - k)[len(scores) - k])
            if all(len(docs) == self._df(t) for docs, t in zip(best, ids)):
                return 0.0  # every posting was a seed: fewer than k documents qualify
            take *= 8


def _best(docs: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    if len(docs) > k:
        # Keep everything that ties with the k-th score so tie-breaking stays stable.
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        docs, scores = docs[keep], scores[keep]
    order = np.lexsort((docs, -scores))[:k]
    return [(int(docs[i]), float(scores[i])) for i in order]


def _smallest_unsigned(largest: int) -> type:
    """One byte a frequency in abstracts; more only for a document that repeats a term."""
    return next(
        t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if largest <= np.iinfo(t).max
    )


def _okapi_idf(doc_freq: np.ndarray, doc_count: int, epsilon: float) -> np.ndarray:
    idf = np.log(doc_count - doc_freq + 0.5) - np.log(doc_freq + 0.5)
    floor = epsilon * idf.mean() if len(idf) else 0.0
    return np.where(idf < 0, floor, idf)
