"""The loops a query runs (bot.search.builtin.compiled's), in plain numpy: for a process that
answers one query and exits, which would spend longer importing numba and loading its
compiled loops than searching. Each returns what its compiled twin returns, to the
last bit of every score (the same float64 operations in the same order;
tests/search/test_vectorised.py holds them to it).

They score every posting of the query's terms into a dense array, where the compiled
loops first rule out documents that cannot reach the top k: linear in the postings,
tens of milliseconds for the longest lists of all of arXiv, paid once.
"""

from __future__ import annotations

import numpy as np

from bot.search.builtin.postings import Counts, Floats, Ints, Mask, Packed, unpack

CHUNK = 1 << 24  # postings unpacked at a time by live_doc_freq: bounded memory


def _postings(term: int, indptr: Ints, cols: Packed, values: Counts) -> tuple[Ints, Counts]:
    start, end = int(indptr[term]), int(indptr[term + 1])
    return unpack(cols[start:end]), values[start:end]


def contenders(k: int, terms: Ints, weights: Floats, bounds: Floats, seed_take: int, share: float,
               slack: float, indptr: Ints, cols: Packed, values: Counts, heads: tuple[Ints, Ints],
               allowed: Mask, k1_plus_1: float, norm: Floats, norm32: Floats, partial: Floats,
               scan_from: int, probes: int) -> Ints:
    """Every document holding a query term (allowed ones only): a superset of the top
    k, as compiled.contenders returns, without ruling any out."""
    present = np.zeros(len(norm), dtype=np.bool_)
    for term in terms:
        present[_postings(term, indptr, cols, values)[0]] = True
    if len(allowed):
        present &= allowed
    return np.flatnonzero(present)


def ranked(k: int, docs: Ints, terms: Ints, idf: Floats, sequence: Ints, indptr: Ints, cols: Packed,
           values: Counts, k1_plus_1: float, norm: Floats) -> tuple[Ints, Floats, Counts]:
    """compiled.ranked: the k best of these documents (ascending) by exact score, best
    first, ties to the earlier document, with each hit's frequency per term. Impacts
    are rank-bm25's idf * (tf * (k1 + 1) / (tf + norm)) in float64, added up token by
    token in the query's order."""
    lists = [_postings(term, indptr, cols, values) for term in terms]
    scores = np.zeros(len(norm), dtype=np.float64)
    impacts = []
    for t, (found, tf) in enumerate(lists):
        f = tf.astype(np.float64)
        impacts.append(idf[t] * (f * k1_plus_1 / (f + norm[found])))
    for column in sequence:
        scores[lists[column][0]] += impacts[column]
    present = np.zeros(len(norm), dtype=np.bool_)
    for found, _tf in lists:
        present[found] = True
    chosen = np.zeros(len(norm), dtype=np.bool_)
    chosen[docs] = True
    hits = np.flatnonzero(present & chosen)
    if len(hits) > k > 0:  # only the k best need sorting (ties at the k-th stay in)
        kth = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
        hits = hits[scores[hits] >= kth]
    best = hits[np.argsort(-scores[hits], kind="stable")][: max(k, 0)]
    tf_of = np.zeros((len(best), len(terms)), dtype=np.uint32)
    for t, (found, tf) in enumerate(lists):
        at = np.minimum(np.searchsorted(found, best), max(len(found) - 1, 0))
        if len(found):
            match = found[at] == best
            tf_of[match, t] = tf[at[match]]
    return best.astype(np.int64), scores[best], tf_of


def highest_impacts(indptr: Ints, cols: Packed, values: Counts, idf: Floats, k1_plus_1: float,
                    norm: Floats) -> Floats:
    """Per term, its highest impact, and 0 for a term whose impacts are all below (the
    compiled loop starts its maximum at 0)."""
    lengths = np.diff(indptr)
    highest = np.zeros(len(lengths), dtype=np.float64)
    rows = np.flatnonzero(lengths)
    if len(rows) == 0:
        return highest
    term = np.repeat(np.arange(len(lengths)), lengths)
    tf = values.astype(np.float64)
    impact = idf[term] * tf * k1_plus_1 / (tf + norm[unpack(cols)])
    # Between one non-empty row's start and the next lie only its own postings.
    highest[rows] = np.maximum.reduceat(impact, indptr[rows])
    return np.maximum(highest, 0.0)


def live_doc_freq(indptr: Ints, cols: Packed, live: Mask) -> Ints:
    """Per term, how many of its documents are live: live postings counted a chunk at
    a time, read off at each term's boundary."""
    before = np.zeros(len(indptr), dtype=np.int64)  # live postings before indptr[i]
    running = 0
    for start in range(0, len(cols), CHUNK):
        end = min(start + CHUNK, len(cols))
        alive = np.cumsum(live[unpack(cols[start:end])], dtype=np.int64)
        first, last = np.searchsorted(indptr, [start, end], side="right")
        before[first:last] = running + alive[indptr[first:last] - start - 1]
        running += int(alive[-1])
    return np.diff(before)
