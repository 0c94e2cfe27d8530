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

import copy
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
# Reading this many row entries costs about what one term's binary search does (its
# numpy calls): the measured break-even on 100k realistic abstracts.
ROW_ENTRIES_PER_TERM = 2_000


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


@dataclass(frozen=True)
class Matched:
    """Which query terms a hit contains: a flag per known term of the query, in order."""

    flags: np.ndarray
    known: tuple[str, ...]

    def terms(self) -> tuple[str, ...]:
        return tuple(t for t, found in zip(self.known, self.flags.tolist()) if found)


@dataclass(frozen=True)
class Stats:
    """The corpus statistics a score depends on besides the document's own counts."""

    idf: np.ndarray  # float64, per vocabulary term (floored as BM25Okapi does)
    avgdl: float


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
        stats: Stats | None = None,
    ):
        """`stats`: the idf of each vocabulary term and the mean length the impacts are
        computed with, when they are the whole index's rather than these documents' own
        (a segment, see bot.search.segments). `term_docs` and `term_heads` come with the
        stats they were computed with."""
        self.vocabulary = vocabulary
        self.doc_terms = doc_terms
        self.doc_lengths = doc_lengths
        self.params = params
        self.doc_count = len(doc_lengths)
        by_term = doc_terms.transpose(len(vocabulary)) if term_docs is None else term_docs
        if stats is None:
            avgdl = doc_lengths.sum() / self.doc_count if self.doc_count else 1.0
            stats = Stats(_okapi_idf(by_term.row_lengths(), self.doc_count, params.epsilon), avgdl)
        self.built = stats  # what the float32 impacts were computed with
        self._use(stats)
        self.term_docs = self._with_impacts(by_term) if term_docs is None else term_docs
        self.term_heads = self._heads() if term_heads is None else term_heads

    def _use(self, stats: Stats) -> None:
        """Score exactly with these statistics. The float32 impacts keep the ones they were
        built with: each term's are off by the ratio of its idfs (`scale`), and every
        impact by at most `drift` either way from the change of the mean length, which
        `_pruned` widens its bounds by."""
        p = self.params
        self.idf = stats.idf
        self.norm = p.k1 * (1 - p.b + p.b * self.doc_lengths / stats.avgdl)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.scale = np.where(self.built.idf > 0, stats.idf / self.built.idf, 0.0)
        ratio = stats.avgdl / self.built.avgdl if self.built.avgdl > 0 else 1.0
        self.drift = max(ratio, 1 / ratio) if ratio > 0 else 1.0

    def with_stats(self, stats: Stats) -> Bm25Index:
        """This index scored with other (global) statistics; the arrays are shared."""
        view = copy.copy(self)
        view._use(stats)
        return view

    def reimpacted(self, stats: Stats) -> Bm25Index:
        """This index with its impacts recomputed from `stats` (a segment about to be
        written: its impacts are then exact for the index it joins)."""
        return Bm25Index(
            self.vocabulary, self.doc_terms, self.doc_lengths, self.params, stats=stats
        )

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
            "built_idf": self.built.idf,
            "built_avgdl": np.array([self.built.avgdl], dtype=np.float64),
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
            stats=Stats(np.asarray(arrays["built_idf"]), float(arrays["built_avgdl"][0])),
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
        return [(doc, score) for doc, score, _found in self.top_matched(query_tokens, k, allowed)]

    def top_matched(
        self, query_tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float, Matched]]:
        """`top`, with the query terms each document contains (in query order), read
        while scoring instead of looked up again."""
        tokens = list(dict.fromkeys(query_tokens))
        ids, weights = self.term_ids(query_tokens)
        if len(ids) == 0 or k <= 0:
            return []
        if allowed is not None and np.count_nonzero(allowed) <= DIRECT_LIMIT:
            docs = np.flatnonzero(allowed)
        elif min(self.idf[ids].min(), self.built.idf[ids].min()) <= 0:
            # A floored idf can be negative in tiny corpora (or in a small segment's own
            # statistics, which its impacts may have been built with): no bound holds,
            # score them all.
            docs = self.candidates(query_tokens)
            docs = docs if allowed is None else docs[allowed[docs]]
        else:
            docs = self._pruned(ids, weights, k, allowed)
        owner, terms, tf = self._query_terms_in(docs, ids)
        scores, present = self._scored(docs, ids, weights, owner, terms, tf)
        best = _best(docs[present > 0], scores[present > 0], k)
        # term_ids keeps the known tokens in query order: `known` lines up with `ids`.
        known = tuple(t for t in tokens if self.vocabulary.find(t) is not None)
        best_docs = np.array([doc for doc, _score in best], dtype=np.int64)
        # Which query terms each of the best documents has; their names are only
        # spelled out for the hits a reply shows (Matched.terms).
        order, by_id = np.argsort(best_docs), np.argsort(ids)
        place = np.minimum(np.searchsorted(best_docs[order], docs[owner]), max(len(best) - 1, 0))
        chosen = best_docs[order][place] == docs[owner] if len(best) else place < 0
        column = by_id[np.searchsorted(ids, terms[chosen], sorter=by_id)]
        found = np.zeros((len(best), len(ids)), dtype=bool)
        found[order[place[chosen]], column] = True
        return [(doc, score, Matched(row, known)) for (doc, score), row in zip(best, found)]

    def score_docs(
        self, docs: np.ndarray, ids: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact float64 scores of the given documents and how many query terms each has.
        Within a document the impacts are added in term id order, the same for every
        document, so equal documents get bit-for-bit equal scores."""
        return self._scored(docs, ids, weights, *self._query_terms_in(docs, ids))

    def _scored(
        self,
        docs: np.ndarray,
        ids: np.ndarray,
        weights: np.ndarray,
        owner: np.ndarray,
        terms: np.ndarray,
        tf: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
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
        """(which of `docs`, term id, frequency) for each query term a document contains,
        in term id order within each document. Reading the documents' rows costs their
        length; searching the terms' postings, some numpy calls per term: few documents
        are cheaper by rows."""
        entries = len(docs) * len(self.doc_terms.cols) / max(self.doc_count, 1)
        if entries <= ROW_ENTRIES_PER_TERM * len(ids):
            return self._from_rows(docs, ids)
        found = self._from_postings(docs, ids)
        return found if found is not None else self._from_rows(docs, ids)

    def _from_postings(
        self, docs: np.ndarray, ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The same, by a binary search of each query term's postings for the documents:
        a few probes per document, where reading their whole term lists costs a hundred
        entries each. The frequency is read back from the stored float32 impact,

            impact = idf * tf * (k1 + 1) / (tf + norm)  =>  tf = impact * norm / (idf * (k1 + 1) - impact)

        with the statistics the impacts were built with. A float32 is within 2**-24 of
        the exact impact, so for the frequencies of abstracts the quotient is within
        1e-3 of a whole number; anything further off (a document repeating a word
        thousands of times) and the rows are read instead. None then, or when an idf
        the impacts were built with is not positive (no frequency can be read back)."""
        terms = np.sort(ids)
        built_idf = self.built.idf[terms] if len(terms) else terms
        if len(terms) and built_idf.min() <= 0:
            return None
        p = self.params
        norm = p.k1 * (1 - p.b + p.b * self.doc_lengths[docs] / self.built.avgdl)
        owners, found_terms, frequencies = [], [], []
        for term, idf in zip(terms.tolist(), built_idf.tolist()):
            start, end = self.term_docs.bounds(term)
            if end == start:
                continue
            postings = self.term_docs.cols[start:end]
            where = np.minimum(np.searchsorted(postings, docs), end - start - 1)
            hit = np.flatnonzero(postings[where] == docs)
            impact = self.term_docs.values[start:end][where[hit]].astype(np.float64)
            raw = impact * norm[hit] / (idf * (p.k1 + 1) - impact)
            tf = np.rint(raw)
            if len(tf) and np.abs(raw - tf).max() > 1e-3:
                return None
            owners.append(hit)
            found_terms.append(np.full(len(hit), term, dtype=np.int64))
            frequencies.append(tf)
        if not owners:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        owner = np.concatenate(owners)
        # In document order, and within a document in term id order (a stable sort of
        # lists that are each in term order), as a row read gives them.
        order = np.argsort(owner, kind="stable")
        return owner[order], np.concatenate(found_terms)[order], np.concatenate(frequencies)[order]

    def _from_rows(
        self, docs: np.ndarray, ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
        # The stored impacts times `scale` are within a factor `drift` of the true ones
        # (1 when the index's statistics are the ones it was built with).
        drift = self.drift
        approx = weights * self.scale[ids]
        highest = np.array([float(self._best_postings(t, 1)[1].max()) for t in ids])
        highest *= (1 + SLACK) * drift
        left_out, budget = [], theta * LEAVE_OUT_SHARE
        for i in sorted(range(len(ids)), key=lambda i: -lengths[i]):
            if approx[i] * highest[i] > budget:
                break
            left_out.append(i)
            budget -= approx[i] * highest[i]
        partial = np.zeros(self.doc_count, dtype=np.float32)
        for i in (i for i in range(len(ids)) if i not in left_out):
            start, end = self.term_docs.bounds(ids[i])
            impacts = self.term_docs.values[start:end]
            partial[self.term_docs.cols[start:end]] += (
                impacts if approx[i] == 1 else np.float32(approx[i]) * impacts
            )
        reach = (theta * (1 - SLACK) - sum(approx[i] * highest[i] for i in left_out)) / drift
        docs = np.flatnonzero(partial >= reach) if reach > 0 else np.flatnonzero(partial > 0)
        if allowed is not None:
            docs = docs[allowed[docs]]
        approximate = partial[docs].astype(np.float64)
        for i in left_out:
            approximate += approx[i] * self._impacts_in(docs, ids[i])
        if len(docs) > k:
            # Each approximate score is within `drift` of its exact one both ways, so
            # the top k are within drift squared of the approximate k-th best.
            kth = np.partition(approximate, len(docs) - k)[len(docs) - k]
            docs = docs[approximate >= kth * (1 - SLACK) / drift**2]
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
