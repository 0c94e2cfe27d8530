"""BM25 with rank-bm25's BM25Okapi semantics, over postings of term frequencies.

A term's contribution to a document's score (its "impact") is BM25Okapi's

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

with idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and terms whose idf is negative floored to
epsilon * (mean idf over the vocabulary), as rank-bm25 does. A query term that occurs
twice counts twice, as in rank-bm25.

Two flat arrays views of the corpus (memory-mapped when loaded):
- term -> (document, frequency), documents ascending: four bytes a posting (a
  three-byte document number and a one-byte frequency in abstracts). Impacts are
  computed from them as a query reads them (bot.search.builtin.loops, compiled), always
  with the statistics the index is scored with, so a returned score is the
  reference's value in float64;
- per term its highest impact (float32, rounded up), and for each long list the
  documents of its HEAD highest impacts: the bounds of the pruning and the documents
  that give a first k-th best score.

`top` is MaxScore-like (see `_pruned`): the k-th best score among the heads says which of
the longest lists cannot lift a document into the top k on their own; those are left out
of the sums, and only the documents that can still make it are completed and scored.
There is no document -> terms index: the one document `similar` asks about is found by
a binary search of every term's list, and a merge transposes the postings.
"""

from __future__ import annotations

import copy
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, compress
from typing import Any, NamedTuple

import numpy as np

from bot.search.builtin import loops, postings
from bot.search.builtin.arrays import Arrays, SparseRows, StringTable
from bot.search.params import Bm25Params

# Float32 impacts are within ~1e-7 of the float64 ones; sums of them, within ~1e-6. Every
# bound computed from them gets this much relative slack, so none of them can drop a
# document that belongs in the top k (ties included).
SLACK = 1e-4
# With a filter this selective, scoring the allowed documents directly is cheapest.
DIRECT_LIMIT = 20_000
FIRST_SEEDS = 16  # best postings per term scored exactly to get a first k-th best score
SEEDS_PER_HIT = 1  # ... or this many per hit asked for, if more
HEAD = 128  # highest-impact postings kept apart for each term that has more
# Longest lists are left out of the sums while their highest impacts add up to at most
# this share of that score: the rest of the score must come from the other terms.
LEAVE_OUT_SHARE = 0.5
# From one summed posting per DENSE_SCAN documents on, a scan of every document's sum
# finds those that reach the bar faster than a second read of the summed lists, whose
# documents are scattered over the sums (at 2.6M papers: 4.5 ms for the scan against 16
# ms for the 1.3M postings of a two-term query; at 1/8 the scan made the median worse).
DENSE_SCAN = 4
# Of the documents left after the sums, this many with the best sums are scored whole
# first: their k-th best score rules out most of the others before the left-out terms
# are looked up for them (at 2.6M papers: p99 of the bench's queries 16.8 -> 13.9 ms).
PROBES = 256
# A binary search for a seed in a term's list costs about what adding this many postings
# to the dense sums does.
SEARCH_COST = 2


class Matched(NamedTuple):
    """Which query terms a hit contains: a flag per known term of the query, in order.
    (A tuple: a search makes fifty of them, and a frozen dataclass costs 1 us each.)"""

    flags: list[bool]
    known: tuple[str, ...]

    def terms(self) -> tuple[str, ...]:
        return tuple(compress(self.known, self.flags))


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
        """These documents only, in this order, over the terms they hold: a term that
        only the documents left out held leaves the vocabulary (BM25Okapi's idf floor is
        a mean over the terms of the corpus, and a reply lists only values papers have)."""
        rows = self.rows.take(docs)
        held = np.bincount(rows.cols, minlength=len(self.vocabulary)) > 0
        if held.all():
            return TermCounts(self.vocabulary, rows, self.lengths[docs])
        renumbered = np.cumsum(held) - 1  # in order: each row's ids stay ascending
        kept = int(renumbered[-1]) + 1
        cols = renumbered[rows.cols].astype(_smallest_unsigned(max(kept - 1, 0)))
        vocabulary = list(compress(self.vocabulary, held.tolist()))
        return TermCounts(vocabulary, SparseRows(rows.indptr, cols, rows.values), self.lengths[docs])


class Bm25Index:
    """The index of one corpus; immutable."""

    def __init__(
        self,
        vocabulary: StringTable,
        term_docs: SparseRows,
        doc_lengths: np.ndarray,
        params: Bm25Params,
        heads: tuple[np.ndarray, np.ndarray] | None = None,
        stats: Stats | None = None,
        term_max: np.ndarray | None = None,
    ):
        """`term_docs`: each term's documents, ascending, with the term's frequency in
        each. `stats`: the idf of each vocabulary term and the mean length to score
        with, when they are the whole index's rather than these documents' own (a
        segment, see bot.search.builtin.segments). `heads` (see `_heads`) and `term_max` (each
        term's highest impact) come with the stats they were computed with."""
        self.vocabulary = vocabulary
        self.term_docs = SparseRows(*map(postings.frozen, term_docs.arrays("t").values()))
        self.doc_lengths = doc_lengths
        self.params = params
        self.doc_count = len(doc_lengths)
        if stats is None:
            avgdl = doc_lengths.sum() / self.doc_count if self.doc_count else 1.0
            stats = Stats(
                _okapi_idf(term_docs.row_lengths(), self.doc_count, params.epsilon), avgdl
            )
        self.built = stats  # what the heads and term_max were computed with
        self._use(stats)
        self.heads = tuple(map(postings.frozen, self._heads() if heads is None else heads))
        self.term_max = self._highest() if term_max is None else term_max

    def _use(self, stats: Stats) -> None:
        """Score exactly with these statistics. The bounds keep the ones they were
        built with: each term's are off by the ratio of its idfs (`scale`), and every
        impact by at most `drift` either way from the change of the mean length, which
        `_pruned` widens them by."""
        p = self.params
        self.idf = stats.idf
        self.norm = self._norm(stats.avgdl)
        self.norm32 = self.norm.astype(np.float32)  # for the approximate sums
        self._scratch = threading.local()  # per thread: the float32 sums of a query
        with np.errstate(divide="ignore", invalid="ignore"):
            self.scale = np.where(self.built.idf > 0, stats.idf / self.built.idf, 0.0)
        ratio = stats.avgdl / self.built.avgdl if self.built.avgdl > 0 else 1.0
        self.drift = max(ratio, 1 / ratio) if ratio > 0 else 1.0
        self.k1_plus_1 = p.k1 + 1

    def _norm(self, avgdl: float) -> np.ndarray:
        p = self.params
        return p.k1 * (1 - p.b + p.b * self.doc_lengths / avgdl)

    def with_stats(self, stats: Stats) -> Bm25Index:
        """This index scored with other (global) statistics; the arrays are shared."""
        view = copy.copy(self)
        view._use(stats)
        return view

    def reimpacted(self, stats: Stats) -> Bm25Index:
        """This index with its heads recomputed from `stats` (a segment about to be
        written: its bounds are then exact for the index it joins)."""
        return Bm25Index(
            self.vocabulary, self.term_docs, self.doc_lengths, self.params, stats=stats
        )

    @classmethod
    def build(
        cls, documents: Iterable[Sequence[str]], params: Bm25Params = Bm25Params()
    ) -> Bm25Index:
        return cls.from_counts(TermCounts.count(documents), params)

    @classmethod
    def from_counts(cls, counts: TermCounts, params: Bm25Params = Bm25Params()) -> Bm25Index:
        """The index of these counts. Consumes their rows (`counts` has none after): the
        postings are made from them and they go before the postings are packed, so a
        build holds the postings about twice at most, not three times (1M: 600 MB less)."""
        vocabulary = StringTable.from_strings(counts.vocabulary)
        by_term = counts.rows.transpose(len(counts.vocabulary))
        del counts.rows
        packed = SparseRows(by_term.indptr, postings.pack(by_term.cols), by_term.values)
        return cls(vocabulary, packed, counts.lengths, params)

    def counts(self) -> TermCounts:
        """The term frequencies this index was built from (to merge it with others)."""
        by_term = self.term_docs
        plain = SparseRows(by_term.indptr, postings.unpack(by_term.cols, np.int32), by_term.values)
        rows = plain.transpose(self.doc_count)
        cols = rows.cols.astype(_smallest_unsigned(max(len(self.vocabulary) - 1, 0)))
        return TermCounts(
            self.vocabulary.to_list(), SparseRows(rows.indptr, cols, rows.values), self.doc_lengths
        )

    # --- persistence ---------------------------------------------------------------

    def arrays(self) -> Arrays:
        return {
            **self.vocabulary.arrays("vocabulary"),
            **self.term_docs.arrays("term_docs"),
            "head_terms": self.heads[0],
            "head_docs": self.heads[1],
            "term_max": self.term_max,
            "doc_lengths": self.doc_lengths,
            "built_idf": self.built.idf,
            "built_avgdl": np.array([self.built.avgdl], dtype=np.float64),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], params: Bm25Params) -> Bm25Index:
        return cls(
            StringTable.from_arrays(arrays, "vocabulary"),
            SparseRows.from_arrays(arrays, "term_docs"),
            arrays["doc_lengths"],
            params,
            heads=(arrays["head_terms"], arrays["head_docs"]),
            stats=Stats(np.asarray(arrays["built_idf"]), float(arrays["built_avgdl"][0])),
            term_max=arrays["term_max"],
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
        ids, _weights = self.term_ids(query_tokens)
        docs = self.candidates(query_tokens)
        scores = np.zeros(self.doc_count, dtype=np.float64)
        hits, hit_scores, _tf = self._ranked(len(docs), docs, ids, query_tokens)
        scores[hits] = hit_scores
        return scores

    def candidates(self, query_tokens: Sequence[str]) -> np.ndarray:
        """The documents that contain at least one query term (the only ones that score)."""
        ids, _weights = self.term_ids(query_tokens)
        by_term = self.term_docs
        lists = [postings.unpack(by_term.cols[slice(*by_term.bounds(t))]) for t in ids]
        if not lists:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(lists)).astype(np.int64)

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
        ids, weights = self.term_ids(query_tokens)
        if len(ids) == 0 or k <= 0:
            return []
        if allowed is not None and np.count_nonzero(allowed) <= DIRECT_LIMIT:
            docs = np.flatnonzero(allowed)
        elif min(self.idf[ids].min(), self.built.idf[ids].min()) <= 0:
            # A floored idf can be negative in tiny corpora (or in a small segment's own
            # statistics, which its heads may have been built with): no bound holds,
            # score them all.
            docs = self.candidates(query_tokens)
            docs = docs if allowed is None else docs[allowed[docs]]
        else:
            docs = self._pruned(ids, weights, k, allowed)
        best, scores, tf = self._ranked(k, docs, ids, query_tokens)
        # term_ids keeps the known tokens in query order: `known` lines up with `ids`.
        tokens = list(dict.fromkeys(query_tokens))
        known = tuple(t for t in tokens if self.vocabulary.find(t) is not None)
        return [
            (doc, score, Matched(flags, known))
            for doc, score, flags in zip(best.tolist(), scores.tolist(), (tf > 0).tolist(), strict=True)
        ]

    def _sequence(self, query_tokens: Sequence[str], ids: np.ndarray) -> np.ndarray:
        """For each known query token in order, its column in `ids`."""
        column = {int(t): i for i, t in enumerate(ids)}
        found = (self.vocabulary.find(token) for token in query_tokens)
        return np.array([column[t] for t in found if t is not None], dtype=np.int64)

    def _ranked(
        self, k: int, docs: np.ndarray, ids: np.ndarray, query_tokens: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """bot.search.builtin.loops.ranked over these (ascending) documents: the k best,
        their exact scores and their frequency per query term (columns in `ids` order)."""
        return loops.ranked(
            k,
            np.ascontiguousarray(docs, dtype=np.int64),
            ids,
            self.idf[ids],
            self._sequence(query_tokens, ids),
            self.term_docs.indptr,
            self.term_docs.cols,
            self.term_docs.values,
            self.k1_plus_1,
            self.norm,
        )

    def doc_impacts(self, doc: int) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, exact impacts) of one document's terms."""
        terms, tf = loops.terms_of(
            doc, self.term_docs.indptr, self.term_docs.cols, self.term_docs.values
        )
        return terms, self._impacts(terms, np.full(len(terms), doc), tf)

    def live_doc_freq(self, live: np.ndarray) -> np.ndarray:
        """Per term, how many of its documents `live` keeps."""
        return loops.live_doc_freq(self.term_docs.indptr, self.term_docs.cols, live)

    # --- internals -----------------------------------------------------------------

    def _impacts(self, terms: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> np.ndarray:
        tf = tf.astype(np.float64)
        p = self.params
        impacts: np.ndarray = self.idf[terms] * tf * (p.k1 + 1) / (tf + self.norm[docs])
        return impacts

    def _heads(self) -> tuple[np.ndarray, np.ndarray]:
        """(the terms with more than HEAD postings, ascending; for each, the documents of
        its HEAD highest impacts with the built statistics, best first): the seeds of a
        first k-th best score. numpy computes without the GIL, so threads share the
        terms, the longest first so that no thread is left alone with a long one."""
        lengths = self.term_docs.row_lengths()
        long_terms = np.flatnonzero(lengths > HEAD)
        docs_of = np.empty(HEAD * len(long_terms), dtype=np.int32)
        built_norm = self._norm(self.built.avgdl)
        k1_plus_1 = self.params.k1 + 1

        def fill(share: np.ndarray) -> None:
            for i in share:
                term = long_terms[i]
                start, end = self.term_docs.bounds(term)
                docs = postings.unpack(self.term_docs.cols[start:end])
                tf = self.term_docs.values[start:end].astype(np.float64)
                impacts = self.built.idf[term] * tf * k1_plus_1 / (tf + built_norm[docs])
                best = np.argpartition(-impacts, HEAD - 1)[:HEAD]
                best = best[np.argsort(-impacts[best], kind="stable")]
                docs_of[i * HEAD : (i + 1) * HEAD] = docs[best]

        threads = min(os.cpu_count() or 1, 8)
        order = np.argsort(-lengths[long_terms], kind="stable")
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(fill, [order[i::threads] for i in range(threads)]))
        return long_terms.astype(np.int64), docs_of

    def _highest(self) -> np.ndarray:
        """Each term's highest impact with the built statistics, a float32 rounded up so
        that it stays a bound."""
        highest = loops.highest_impacts(
            self.term_docs.indptr,
            self.term_docs.cols,
            self.term_docs.values,
            postings.frozen(self.built.idf),
            self.k1_plus_1,
            self._norm(self.built.avgdl),
        )
        rounded = highest.astype(np.float32)
        return np.where(rounded < highest, np.nextafter(rounded, np.float32(np.inf)), rounded)

    def _pruned(
        self, ids: np.ndarray, weights: np.ndarray, k: int, allowed: np.ndarray | None
    ) -> np.ndarray:
        """The documents that can be in the top k (a superset, scored exactly afterwards):
        bot.search.builtin.loops.contenders, with each term's bound. The heads' impacts times
        `scale` are within a factor `drift` of the true ones (1 when the index's
        statistics are the ones it was built with)."""
        lengths = (self.term_docs.indptr[ids + 1] - self.term_docs.indptr[ids]).tolist()
        take = max(FIRST_SEEDS, SEEDS_PER_HIT * k) if self._worth_seeding(lengths, k) else 0
        bounds = weights * self.scale[ids] * self.term_max[ids] * ((1 + SLACK) * self.drift)
        return loops.contenders(
            k,
            ids,
            weights * self.idf[ids],
            bounds.astype(np.float64),
            take,
            LEAVE_OUT_SHARE,
            SLACK,
            self.term_docs.indptr,
            self.term_docs.cols,
            self.term_docs.values,
            self.heads,
            _NO_MASK if allowed is None else allowed,
            self.k1_plus_1,
            self.norm,
            self.norm32,
            self._partial(),
            self.doc_count // DENSE_SCAN,
            PROBES,
        )

    def _partial(self) -> np.ndarray:
        """This thread's float32 sum per document, zeroed (contenders leaves it so)."""
        partial = getattr(self._scratch, "partial", None)
        if partial is None:
            partial = self._scratch.partial = np.zeros(self.doc_count, dtype=np.float32)
        return partial

    def _worth_seeding(self, lengths: list[int], k: int) -> bool:
        """Scoring a seed searches every query term's list: in small corpora summing
        every list costs less than finding out which of them could be left out."""
        seeds = sum(min(n, max(FIRST_SEEDS, SEEDS_PER_HIT * k)) for n in lengths)
        return seeds * len(lengths) * SEARCH_COST < sum(lengths)

_NO_MASK = np.zeros(0, dtype=bool)


def _smallest_unsigned(largest: int) -> type[np.unsignedinteger[Any]]:
    """One byte a frequency in abstracts; more only for a document that repeats a term."""
    return next(
        t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if largest <= np.iinfo(t).max
    )


def _okapi_idf(doc_freq: np.ndarray, doc_count: int, epsilon: float) -> np.ndarray:
    idf = np.log(doc_count - doc_freq + 0.5) - np.log(doc_freq + 0.5)
    floor = epsilon * idf.mean() if len(idf) else 0.0
    return np.where(idf < 0, floor, idf)
