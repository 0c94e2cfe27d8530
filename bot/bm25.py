"""BM25 scoring with rank-bm25's BM25Okapi semantics, over a sparse term-by-document matrix.

Each stored entry is one term's whole contribution to one document's score (its
"impact"), computed once at build time with BM25Okapi's formula:

    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

with idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and terms whose idf is negative floored to
epsilon * (mean idf over the vocabulary), as rank-bm25 does. A query then only adds up
the rows of its own terms (with their multiplicity, as rank-bm25 does), so its cost is
the length of those postings, not the size of the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


class Bm25Index:
    """Impacts in CSR form: row = term id, columns = documents containing it."""

    def __init__(
        self,
        vocabulary: dict[str, int],
        impacts: sparse.csr_matrix,
        doc_count: int,
        params: Bm25Params,
    ):
        self.vocabulary = vocabulary
        self.impacts = impacts
        self.doc_count = doc_count
        self.params = params

    @classmethod
    def build(cls, documents: Iterable[Sequence[str]], params: Bm25Params = Bm25Params()) -> Bm25Index:
        vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        doc_lengths: list[int] = []
        for tokens in documents:
            doc_lengths.append(len(tokens))
            term_ids.extend(vocabulary.setdefault(t, len(vocabulary)) for t in tokens)
        doc_count = len(doc_lengths)
        if doc_count == 0:
            return cls({}, sparse.csr_matrix((0, 0)), 0, params)
        lengths = np.asarray(doc_lengths, dtype=np.int64)
        doc_of_token = np.repeat(np.arange(doc_count, dtype=np.int64), lengths)
        # Summing duplicate (term, doc) pairs gives the term frequencies.
        tf = sparse.csr_matrix(
            (np.ones(len(term_ids), dtype=np.float64), (np.asarray(term_ids, dtype=np.int64), doc_of_token)),
            shape=(len(vocabulary), doc_count),
        )
        tf.sum_duplicates()
        idf = _okapi_idf(np.diff(tf.indptr), doc_count, params.epsilon)
        avgdl = lengths.sum() / doc_count
        norm = params.k1 * (1 - params.b + params.b * lengths / avgdl)
        freq = tf.data
        docs = tf.indices
        term_of_entry = np.repeat(np.arange(len(vocabulary)), np.diff(tf.indptr))
        impact = idf[term_of_entry] * freq * (params.k1 + 1) / (freq + norm[docs])
        impacts = sparse.csr_matrix((impact, docs, tf.indptr), shape=tf.shape)
        return cls(vocabulary, impacts, doc_count, params)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Dense scores for every document, exactly what BM25Okapi.get_scores returns."""
        scores = np.zeros(self.doc_count, dtype=np.float64)
        for token in query_tokens:
            row = self.vocabulary.get(token)
            if row is None:
                continue
            start, end = self.impacts.indptr[row], self.impacts.indptr[row + 1]
            # Column indices are unique within a row, so fancy-index += is exact.
            scores[self.impacts.indices[start:end]] += self.impacts.data[start:end]
        return scores

    def candidates(self, query_tokens: Sequence[str]) -> np.ndarray:
        """The documents that contain at least one query term (the only ones that score)."""
        rows = [self.vocabulary[t] for t in set(query_tokens) if t in self.vocabulary]
        if not rows:
            return np.zeros(0, dtype=np.int64)
        postings = [self.impacts.indices[self.impacts.indptr[r] : self.impacts.indptr[r + 1]] for r in rows]
        return np.unique(np.concatenate(postings))

    def top(
        self, query_tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The k best (document, score) pairs; ties go to the earlier document.

        `allowed` is a boolean mask over documents (filters); documents outside it
        never appear.
        """
        docs = self.candidates(query_tokens)
        if allowed is not None:
            docs = docs[allowed[docs]]
        if len(docs) == 0 or k <= 0:
            return []
        scores = self.scores(query_tokens)[docs]
        if len(docs) > k:
            # Keep everything that ties with the k-th score so tie-breaking stays stable.
            kth = np.partition(scores, len(scores) - k)[len(scores) - k]
            keep = scores >= kth
            docs, scores = docs[keep], scores[keep]
        order = np.lexsort((docs, -scores))[:k]
        return [(int(docs[i]), float(scores[i])) for i in order]


def _okapi_idf(doc_freq: np.ndarray, doc_count: int, epsilon: float) -> np.ndarray:
    idf = np.log(doc_count - doc_freq + 0.5) - np.log(doc_freq + 0.5)
    floor = epsilon * idf.mean() if len(idf) else 0.0
    return np.where(idf < 0, floor, idf)
