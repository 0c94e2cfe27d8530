"""An index made of immutable segments, in the manner of Lucene.

An import or an `add` writes a small segment holding the papers that are new or
changed since the last one, instead of rebuilding the index. Segments are ordered,
oldest first, and the newest copy of a paper wins: a paper in a later segment is
deleted from every earlier one (`live_masks`). Nothing else marks a deletion, so an
ordered list of segment names is a whole index, and replacing that list is the only
step that changes one.

Scores stay exactly rank-bm25's: the statistics (number of documents, mean length,
each term's document frequency and the floored idf) are those of the live documents
of all segments together (`global_stats`), and each segment is scored with them. A
segment stores frequencies, so its scores are exact for any statistics; only its
bounds (each term's highest impact, the documents of its best impacts) were computed
with the statistics of the day it was written, and bot.search.bm25 corrects them per
term and widens them by how far the mean length moved since.

Segments merge into larger ones (`merge_plan`, like a binary counter: the newest
merge while the one before is no larger than they are together), so there are a few
of them: about log2 of the corpus over the size of a day's papers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.search.bm25 import Bm25Params, Stats
from bot.search.content import IndexContent

MAX_SEGMENTS = 10  # more than this and the newest merge whatever their sizes
GROWTH = 1  # a segment is merged with the newer ones once it is at most this times their size


@dataclass(frozen=True)
class Part:
    """One segment as an index serves it: its content scored with the global statistics."""

    name: str
    content: IndexContent
    live: np.ndarray | None  # per document; None when every document is live
    offset: int  # its first document's number in the whole index

    @property
    def doc_count(self) -> int:
        return self.content.doc_count

    @property
    def live_count(self) -> int:
        return self.doc_count if self.live is None else int(np.count_nonzero(self.live))


def live_masks(contents: Sequence[IndexContent]) -> list[np.ndarray | None]:
    """Per segment, which documents are live: those whose paper no later segment holds."""
    masks: list[np.ndarray | None] = [None] * len(contents)
    newer = np.zeros(0, dtype=np.int64)
    for position in range(len(contents) - 1, -1, -1):
        ids = contents[position].paper_ids
        if len(newer):
            replaced = np.isin(ids, newer)
            if replaced.any():
                masks[position] = ~replaced
        newer = np.union1d(newer, ids) if position else newer
    return masks


def global_stats(
    contents: Sequence[IndexContent],
    lives: Sequence[np.ndarray | None],
    params: Bm25Params,
) -> list[Stats]:
    """The statistics of the live documents of all segments, per segment's vocabulary:
    what BM25Okapi would compute over the same documents as one corpus."""
    frequencies, live_docs, live_tokens = [], 0, 0.0
    for content, live in zip(contents, lives):
        bm25 = content.bm25
        if live is None:
            df, lengths = bm25.term_docs.row_lengths().astype(np.int64), bm25.doc_lengths
        else:
            df, lengths = bm25.live_doc_freq(live), bm25.doc_lengths[live]
        frequencies.append(df)
        live_docs += len(lengths)
        live_tokens += float(lengths.sum(dtype=np.float64))
    avgdl = live_tokens / live_docs if live_docs else 1.0
    if len(contents) == 1:
        return [Stats(_floored_idf(frequencies[0], live_docs, params.epsilon), avgdl)]
    # Terms are matched across segments by digest: equal strings, equal digests.
    keys = np.concatenate([c.keys() for c in contents])
    df = np.concatenate(frequencies)
    order = digest_order(keys)
    ordered = keys[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ordered[1:, 0] != ordered[:-1, 0]) | (ordered[1:, 1] != ordered[:-1, 1])
    group = np.cumsum(starts) - 1
    total = np.bincount(group, weights=df[order]).astype(np.int64)
    idf = _floored_idf(total, live_docs, params.epsilon)
    per_term = np.empty(len(order), dtype=np.float64)
    per_term[order] = idf[group]
    bounds = np.cumsum([0] + [len(f) for f in frequencies])
    return [Stats(per_term[bounds[i] : bounds[i + 1]], avgdl) for i in range(len(contents))]


def digest_order(keys: np.ndarray) -> np.ndarray:
    """An order of the rows of `keys` (128-bit digests as two uint64) that puts equal
    digests next to each other: by their first half alone, one sort where lexsort takes
    two (~0.1 s at a million papers' vocabulary, on every index update); by both halves
    when two different digests share a first half (64 random bits: about one chance in
    sixty million among all of arXiv's 750,000 terms)."""
    order = np.argsort(keys[:, 0], kind="stable")
    first = keys[order, 0]
    shared = np.flatnonzero(first[1:] == first[:-1])
    if len(shared) and np.any(keys[order[shared], 1] != keys[order[shared + 1], 1]):
        return np.lexsort((keys[:, 1], keys[:, 0]))
    return order


def joined(
    older: Sequence[IndexContent], new: IndexContent, params: Bm25Params
) -> tuple[IndexContent, list[Stats]]:
    """`new`, about to follow the `older` segments, with its bounds recomputed from the
    global statistics of them all (tight for the index it joins when it is written), and
    those statistics per segment: the index of them all is scored with them, and need
    not compute them again (0.3-0.4 s at a million papers, on every update)."""
    contents = [*older, new]
    stats = global_stats(contents, live_masks(contents), params)
    return new.with_bm25(new.bm25.reimpacted(stats[-1])), stats


def _floored_idf(df: np.ndarray, doc_count: int, epsilon: float) -> np.ndarray:
    """BM25Okapi's idf over the terms some live document holds (a term whose documents
    are all deleted is not in the vocabulary, and does not count in the mean)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        idf = np.log(doc_count - df + 0.5) - np.log(df + 0.5)
    present = df > 0
    floor = epsilon * idf[present].mean() if present.any() else 0.0
    return np.where(idf < 0, floor, idf)


def merge_plan(sizes: Sequence[int], limit: int = MAX_SEGMENTS) -> int | None:
    """Where the run of segments to merge starts (it runs to the newest), or None.

    Live documents per segment, oldest first. The newest segments merge with the one
    before while it is no larger than GROWTH times them together, like the carries of a binary
    counter: each document is merged about log2(N / batch) times in all, and a big old
    segment waits until the new ones have grown to its size. Past `limit` segments, the
    newest merge regardless.
    """
    if len(sizes) < 2:
        return None
    start, run = len(sizes) - 1, sizes[-1]
    while start > 0 and (sizes[start - 1] <= GROWTH * run or start + 1 > limit):
        start -= 1
        run += sizes[start]
    return start if start < len(sizes) - 1 else None
