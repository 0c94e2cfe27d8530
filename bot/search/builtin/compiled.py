"""The loops over postings that a query runs, compiled (numba, cached on disk).

A query touches a handful of postings lists; in numpy each list costs several calls
of a few microseconds whatever its length, and a BM25 impact computed from a
frequency costs several passes. Here each loop is one pass, with the impact

    weight * tf * (k1 + 1) / (tf + norm[doc])

computed as it goes (`weight` is the query term's count times its idf, `norm[doc]` is
k1 * (1 - b + b * dl / avgdl)), so the index stores small integer frequencies rather
than float impacts, and every score is exact for whatever statistics it is given.
The layout of the postings is bot.search.builtin.postings's; bot.search.builtin.vectorised holds the
same query loops in plain numpy, for a process that answers one query and exits.

`cache=True` compiles once per machine (into __pycache__, or numba's user cache when
that is read-only); `nogil=True` lets the threads of a bot search side by side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from bot.search.builtin.postings import Counts, Floats, Ints, Mask, Packed


@njit(cache=True, nogil=True, inline="always")
def _doc(cols: Packed, j: int) -> np.int64:  # pragma: no cover - compiled
    return np.int64(cols[j, 0]) | (np.int64(cols[j, 1]) << 8) | (np.int64(cols[j, 2]) << 16)


@njit(cache=True, nogil=True)
def _first_doc_at_least(cols: Packed, lo: int, hi: int, doc: int) -> int:  # pragma: no cover
    """The first position in cols[lo:hi] holding doc or more (hi when none does)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if _doc(cols, mid) < doc:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _next_doc_at_least(cols: Packed, lo: int, hi: int, doc: int) -> int:  # pragma: no cover
    """_first_doc_at_least for a caller walking ascending documents through a list: steps
    of 1, 2, 4, ... from `lo`, then a binary search inside the last step, so a search
    costs the log of how far it moves, in memory near the last, rather than the log of
    the rest of the list (at 2.6M papers, 240k survivors of a query probed in a list of
    580k postings: 22 ms by whole-list searches, 12 ms so)."""
    step = 1
    while True:
        probe = lo + step - 1
        if probe >= hi:
            return _first_doc_at_least(cols, lo, hi, doc)
        if _doc(cols, probe) >= doc:
            return _first_doc_at_least(cols, lo, probe + 1, doc)
        lo = probe + 1
        step <<= 1


@njit(cache=True, nogil=True)
def _first_at_least(cols: Ints, lo: int, hi: int, doc: int) -> int:  # pragma: no cover - compiled
    """The first position in cols[lo:hi] holding doc or more (hi when none does)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if cols[mid] < doc:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def exact_impacts(docs: Ints, terms: Ints, idf: Floats, indptr: Ints, cols: Packed, values: Counts,
                  k1_plus_1: float, norm: Floats) -> tuple[Floats, Counts]:  # pragma: no cover
    """(impact, frequency) per document and term, for these documents over these terms,
    in float64 as rank-bm25 computes each: idf * (tf * (k1 + 1) /
    (tf + norm)). The caller adds them up in the query's order, as rank-bm25 does."""
    impacts = np.zeros((len(docs), len(terms)), dtype=np.float64)
    tf = np.zeros((len(docs), len(terms)), dtype=np.uint32)
    for t in range(len(terms)):
        start, end = indptr[terms[t]], indptr[terms[t] + 1]
        lo = start
        for i in range(len(docs)):
            doc = docs[i]
            lo = _next_doc_at_least(cols, lo, end, doc)
            if lo == end:
                break
            if _doc(cols, lo) == doc:
                f = values[lo]
                tf[i, t] = f
                impacts[i, t] = idf[t] * (f * k1_plus_1 / (f + norm[doc]))
    return impacts, tf


@njit(cache=True, nogil=True)
def ranked(k: int, docs: Ints, terms: Ints, idf: Floats, sequence: Ints, indptr: Ints, cols: Packed,
           values: Counts, k1_plus_1: float, norm: Floats
           ) -> tuple[Ints, Floats, Counts]:  # pragma: no cover - compiled
    """The k best of these documents (ascending) by exact score: (documents, scores,
    frequency per hit and term), best first, ties to the earlier document; only
    documents with a term count. Each impact is rank-bm25's idf * (tf * (k1 + 1) /
    (tf + norm)) in float64, and a document's impacts are added up token by token in
    the query's order (`sequence`: each known token's column), as rank-bm25 adds them,
    so documents that tie there tie here to the last bit."""
    impacts, tf = exact_impacts(docs, terms, idf, indptr, cols, values, k1_plus_1, norm)
    scores = np.zeros(len(docs), dtype=np.float64)
    for column in sequence:
        for i in range(len(docs)):
            scores[i] += impacts[i, column]
    present = np.zeros(len(docs), dtype=np.bool_)
    for i in range(len(docs)):
        for t in range(len(terms)):
            if tf[i, t] > 0:
                present[i] = True
    hits = np.flatnonzero(present)
    # A stable sort of ascending documents: equal scores stay in document order.
    order = hits[np.argsort(-scores[hits], kind="mergesort")][:k]
    return docs[order], scores[order], tf[order]


@njit(cache=True, nogil=True)
def terms_of(doc: int, indptr: Ints, cols: Packed, values: Counts
             ) -> tuple[Ints, Ints]:  # pragma: no cover - compiled
    """(term ids, frequencies) of one document: a binary search of every term's list.
    What a forward index would hold, for the rare question about one document."""
    terms = np.empty(len(indptr) - 1, dtype=np.int64)
    tf = np.empty(len(indptr) - 1, dtype=np.int64)
    found = 0
    for term in range(len(indptr) - 1):
        start, end = indptr[term], indptr[term + 1]
        at = _first_doc_at_least(cols, start, end, doc)
        if at < end and _doc(cols, at) == doc:
            terms[found] = term
            tf[found] = values[at]
            found += 1
    return terms[:found], tf[:found]


@njit(cache=True, nogil=True)
def live_doc_freq(indptr: Ints, cols: Packed, live: Mask) -> Ints:  # pragma: no cover - compiled
    """Per term, how many of its documents are live."""
    df = np.zeros(len(indptr) - 1, dtype=np.int64)
    for term in range(len(indptr) - 1):
        count = 0
        for j in range(indptr[term], indptr[term + 1]):
            if live[_doc(cols, j)]:
                count += 1
        df[term] = count
    return df


@njit(cache=True, nogil=True)
def highest_impacts(indptr: Ints, cols: Packed, values: Counts, idf: Floats, k1_plus_1: float,
                    norm: Floats) -> Floats:  # pragma: no cover - compiled
    """Per term, its highest impact (what no document can get more of from it)."""
    highest = np.zeros(len(indptr) - 1, dtype=np.float64)
    for term in range(len(indptr) - 1):
        best = 0.0
        for j in range(indptr[term], indptr[term + 1]):
            tf = np.float64(values[j])
            impact = idf[term] * tf * k1_plus_1 / (tf + norm[_doc(cols, j)])
            if impact > best:
                best = impact
        highest[term] = best
    return highest


@njit(cache=True, nogil=True)
def _seeds(take: int, terms: Ints, lengths: Ints, indptr: Ints, cols: Packed,
           heads: tuple[Ints, Ints], allowed: Mask) -> tuple[Ints, bool]:  # pragma: no cover
    """(distinct allowed documents among the `take` best postings of each term, whether
    that was every posting): a term's head when it holds that many, else its list.
    `heads`: (the terms that have one, ascending; their documents, `width` each)."""
    head_terms, head_docs = heads
    width = len(head_docs) // max(len(head_terms), 1)
    slots = np.empty(len(terms), dtype=np.int64)
    sizes = np.empty(len(terms), dtype=np.int64)
    whole = True
    for t in range(len(terms)):
        at = _first_at_least(head_terms, 0, len(head_terms), terms[t])
        found_head = at < len(head_terms) and head_terms[at] == terms[t] and width >= take
        slots[t] = at if found_head else -1
        sizes[t] = take if found_head else lengths[t]
        whole = whole and sizes[t] == lengths[t]
    found = np.empty(sizes.sum(), dtype=np.int64)
    at = 0
    for t in range(len(terms)):
        if slots[t] >= 0:
            for j in range(take):
                found[at] = head_docs[slots[t] * width + j]
                at += 1
        else:
            for j in range(indptr[terms[t]], indptr[terms[t] + 1]):
                found[at] = _doc(cols, j)
                at += 1
    seeds = np.unique(found)
    if len(allowed):
        seeds = seeds[allowed[seeds]]
    return seeds, whole


@njit(cache=True, nogil=True)
def _add_term(out: Floats, docs: Ints, term: int, weight: float, indptr: Ints, cols: Packed,
              values: Counts, k1_plus_1: float, norm: Floats) -> None:  # pragma: no cover
    """out[i] += the term's impact in docs[i] (ascending; nothing where it is absent)."""
    end = indptr[term + 1]
    lo = indptr[term]
    for i in range(len(docs)):
        lo = _next_doc_at_least(cols, lo, end, docs[i])
        if lo == end:
            return
        if _doc(cols, lo) == docs[i]:
            tf = np.float64(values[lo])
            out[i] += weight * tf * k1_plus_1 / (tf + norm[docs[i]])


@njit(cache=True, nogil=True)
def _kth_seed_score(k: int, take: int, terms: Ints, lengths: Ints, weights: Floats, indptr: Ints,
                    cols: Packed, values: Counts, heads: tuple[Ints, Ints], allowed: Mask,
                    k1_plus_1: float, norm: Floats) -> float:  # pragma: no cover - compiled
    """The k-th best score among the best postings of each term (taking more until k
    allowed documents are found; 0 if fewer than k have a term at all)."""
    while True:
        seeds, whole = _seeds(take, terms, lengths, indptr, cols, heads, allowed)
        if len(seeds) >= k:
            scores = np.zeros(len(seeds), dtype=np.float64)
            for t in range(len(terms)):
                _add_term(scores, seeds, terms[t], weights[t], indptr, cols, values, k1_plus_1,
                          norm)
            kth: float = np.partition(scores, len(scores) - k)[len(scores) - k]
            return kth
        if whole:
            return 0.0
        take *= 8


@njit(cache=True, nogil=True)
def _reaching(partial: Floats, reach: float, terms: Ints, left_out: Mask, indptr: Ints,
              cols: Packed, summed: int) -> tuple[Ints, Floats]:  # pragma: no cover - compiled
    """(the documents of the summed lists whose partial sum reaches `reach`, ascending;
    their sums), zeroing every sum on the way: one more read of those lists, cheaper
    than a scan of every document when they are shorter than the corpus. A document
    is taken at its first posting; the zero left there keeps it from being taken
    twice."""
    found = np.empty(summed, dtype=np.int64)
    sums = np.empty(summed, dtype=np.float64)
    runs = np.zeros(len(terms) + 1, dtype=np.int64)  # each list's documents: one ascending run
    count, run = 0, 0
    for t in range(len(terms)):
        if not left_out[t]:
            for j in range(indptr[terms[t]], indptr[terms[t] + 1]):
                doc = _doc(cols, j)
                if partial[doc] >= reach:
                    found[count] = doc
                    sums[count] = partial[doc]
                    count += 1
                partial[doc] = 0
            run += 1
            runs[run] = count
    return _merged_runs(found[:count], sums[:count], runs[: run + 1])


@njit(cache=True, nogil=True)
def _merged_runs(docs: Ints, sums: Floats, runs: Ints) -> tuple[Ints, Floats]:  # pragma: no cover
    """`docs` (and their `sums`) ascending, from ascending runs docs[runs[i]:runs[i + 1]]:
    merged two by two, where a sort took 8 ms for one query's 207k survivors."""
    while len(runs) > 2:
        merged_docs, merged_sums = np.empty_like(docs), np.empty_like(sums)
        joined = np.empty((len(runs) + 2) // 2, dtype=np.int64)
        joined[0] = 0
        for r in range(0, len(runs) - 1, 2):
            left, middle = runs[r], runs[r + 1]
            end = runs[r + 2] if r + 2 < len(runs) else middle
            i, j, out = left, middle, left
            while i < middle or j < end:
                if j == end or (i < middle and docs[i] < docs[j]):
                    merged_docs[out], merged_sums[out] = docs[i], sums[i]
                    i += 1
                else:
                    merged_docs[out], merged_sums[out] = docs[j], sums[j]
                    j += 1
                out += 1
            joined[r // 2 + 1] = end
        docs, sums, runs = merged_docs, merged_sums, joined
    return docs, sums


@njit(cache=True, nogil=True)
def _kth_probed(k: int, probes: int, docs: Ints, sums: Floats, terms: Ints, left_out: Mask,
                weights: Floats, indptr: Ints, cols: Packed, values: Counts, k1_plus_1: float,
                norm: Floats) -> float:  # pragma: no cover - compiled
    """The k-th best whole score of the `probes` documents (ties: a few more) with the
    best sums of the summed terms, the left-out terms' impacts added (docs ascending)."""
    n = len(docs)
    cut = np.partition(sums, n - probes)[n - probes]
    chosen = np.flatnonzero(sums >= cut)[: 4 * probes]  # many ties: any k or more will do
    whole, probed = sums[chosen].copy(), docs[chosen]
    for t in range(len(terms)):
        if left_out[t]:
            _add_term(whole, probed, terms[t], weights[t], indptr, cols, values, k1_plus_1, norm)
    kth: float = np.partition(whole, len(whole) - k)[len(whole) - k]
    return kth


@njit(cache=True, nogil=True)
def contenders(k: int, terms: Ints, weights: Floats, bounds: Floats, seed_take: int, share: float,
               slack: float, indptr: Ints, cols: Packed, values: Counts, heads: tuple[Ints, Ints],
               allowed: Mask, k1_plus_1: float, norm: Floats, norm32: Floats, partial: Floats,
               scan_from: int, probes: int) -> Ints:  # pragma: no cover - compiled
    """The documents that can be in the top k by these terms (a superset, ascending).

    `weights`: each term's count in the query times its idf; `bounds`: the most it can
    add to any document (slack included); `seed_take` > 0: how many of each term's best
    postings give a first k-th best score (theta), 0 to go without; `allowed`: a mask
    over documents, or empty; `norm32`: `norm` as float32, for the approximate sums;
    `partial`: float32 zeros, one per document, left as zeros (a thread's scratch, so
    that a query does not allocate and fault in a fresh array); `scan_from`: from this
    many summed postings on, the sums that reach the bar are found by a scan of every
    document's sum, below it by a second read of the summed lists; `probes`: how many
    of the survivors with the best sums are scored whole first (step 4).

    1. theta: the k-th best score among the seeds. The top k all score at least theta.
    2. The longest lists whose bounds add up to at most `share` of theta are left out:
       a document needs the rest of theta from the other terms.
    3. The other terms' impacts are summed into a dense float32 array: documents whose
       sum misses theta minus what the left-out terms could add are dropped.
    4. The k-th best whole score of the survivors with the best sums (`_kth_probed`) is
       a lower bound of the k-th best score: those that cannot reach it with every
       left-out term's bound are dropped.
    5. The left-out terms' impacts are added to the survivors, and only those within
       `slack` of the k-th best of these sums are kept (float32 sums are within ~1e-6
       of the exact scores).
    """
    lengths = indptr[terms + 1] - indptr[terms]
    theta = 0.0
    if seed_take > 0:
        theta = _kth_seed_score(k, seed_take, terms, lengths, weights, indptr, cols, values,
                                heads, allowed, k1_plus_1, norm)
    left_out = np.zeros(len(terms), dtype=np.bool_)
    budget = theta * share
    for t in np.argsort(-lengths, kind="mergesort"):
        if bounds[t] > budget:
            break
        left_out[t] = True
        budget -= bounds[t]
    summed, out_bound = 0, 0.0  # out_bound: the most the left-out terms can add
    for t in range(len(terms)):
        if left_out[t]:
            out_bound += bounds[t]
            continue
        summed += lengths[t]
        weight = np.float32(weights[t] * k1_plus_1)
        for j in range(indptr[terms[t]], indptr[terms[t] + 1]):
            doc = _doc(cols, j)
            tf = np.float32(values[j])
            partial[doc] += weight * tf / (tf + norm32[doc])
    # Impacts are positive here (idf > 0): every summed document has more than 0.
    reach = max(theta * (1 - slack) - out_bound, 1e-30)
    if summed < scan_from:
        docs, approximate = _reaching(partial, reach, terms, left_out, indptr, cols, summed)
    else:
        docs = np.flatnonzero(partial >= reach)
        approximate = partial[docs].astype(np.float64)
        partial[:] = 0
    if len(allowed):
        keep = allowed[docs]
        docs, approximate = docs[keep], approximate[keep]
    if len(docs) <= k:
        return docs
    probes = max(probes, k)
    if out_bound > 0 and len(docs) > probes:
        # The k-th best whole score of any documents is a lower bound of the k-th best
        # score: of those with the best sums so far, once the left-out terms are added.
        # A document that cannot reach it with all of them is out before they are looked
        # up. At 2.6M papers the k-th best sum alone (the left-out terms not added) kept
        # all of one query's 208k survivors, the probes' 36k; 38k -> 5k and 53k -> 2.4k
        # in two others (their look-ups 8 -> 2.6 ms and 3.9 -> 0.8 ms).
        floor = _kth_probed(k, probes, docs, approximate, terms, left_out, weights, indptr, cols,
                            values, k1_plus_1, norm)
        keep = approximate >= floor * (1 - slack) - out_bound
        docs, approximate = docs[keep], approximate[keep]
    for t in range(len(terms)):
        if left_out[t]:
            _add_term(approximate, docs, terms[t], weights[t], indptr, cols, values, k1_plus_1,
                      norm)
    kth = np.partition(approximate, len(docs) - k)[len(docs) - k]
    survivors: Ints = docs[approximate >= kth * (1 - slack)]
    return survivors
