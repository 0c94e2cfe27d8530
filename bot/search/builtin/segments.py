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
with the statistics of the day it was written, and bot.search.builtin.bm25 corrects them per
term and widens them by how far the mean length moved since.

Segments merge into larger ones (`merge_plan`, like a binary counter: the newest
merge while the one before is no larger than they are together), so there are a few
of them: about log2 of the corpus over the size of a day's papers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.search.builtin.arrays import digest_order
from bot.search.builtin.bm25 import Stats
from bot.search.builtin.content import IndexContent
from bot.search.params import Bm25Params

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
    for content, live in zip(contents, lives, strict=True):
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
    groups, df = _term_groups(contents, frequencies)
    idf = _floored_idf(df, live_docs, params.epsilon)
    return [Stats(idf[g], avgdl) for g in groups]


def _term_groups(
    contents: Sequence[IndexContent], frequencies: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each distinct term of the segments numbered once: per segment, the number of each
    of its terms, and per number the document frequency summed over the segments.

    Terms are matched across segments by digest (equal strings, equal digests). The
    largest segment's terms keep their own numbers and its digests are read in their
    stored order (`IndexContent.key_order`), so only the other segments' are sorted and
    looked up in it: a day's 20,000 terms, not all of arXiv's 770,000 again (0.3 s on
    each update at 2.6M papers)."""
    big = max(range(len(contents)), key=lambda i: len(frequencies[i]))
    keys = contents[big].keys()
    order = contents[big].key_order()
    first = keys[order, 0]
    if not len(first) or np.any(first[1:] == first[:-1]):  # one first half, two digests
        return _sorted_groups(contents, frequencies)
    others = [i for i in range(len(contents)) if i != big]
    small, small_df = _sorted_groups([contents[i] for i in others], [frequencies[i] for i in others])
    # One digest per distinct term of the smaller segments (any of its rows), looked up.
    rows = np.empty(len(small_df), dtype=np.int64)
    rows[np.concatenate(small)] = np.arange(sum(len(g) for g in small))
    wanted = np.concatenate([contents[i].keys() for i in others])[rows]
    at = np.minimum(np.searchsorted(first, wanted[:, 0]), len(first) - 1)
    term = order[at]
    found = (first[at] == wanted[:, 0]) & (keys[term, 1] == wanted[:, 1])
    # Numbers: the big segment's terms keep theirs, the terms it lacks follow.
    number = np.empty(len(small_df), dtype=np.int64)
    number[found] = term[found]
    number[~found] = len(first) + np.arange(np.count_nonzero(~found))
    df = np.concatenate([frequencies[big], small_df[~found]])
    df[term[found]] += small_df[found]  # distinct digests: distinct terms
    groups: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(contents)
    groups[big] = np.arange(len(first))
    for i, group in zip(others, small, strict=True):
        groups[i] = number[group]
    return groups, df


def _sorted_groups(
    contents: Sequence[IndexContent], frequencies: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], np.ndarray]:
    """`_term_groups` by sorting every segment's digests together."""
    keys = np.concatenate([c.keys() for c in contents])
    df = np.concatenate(frequencies)
    order = digest_order(keys)
    ordered = keys[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ordered[1:, 0] != ordered[:-1, 0]) | (ordered[1:, 1] != ordered[:-1, 1])
    group = np.empty(len(order), dtype=np.int64)
    group[order] = np.cumsum(starts) - 1
    total = np.bincount(group, weights=df, minlength=int(starts.sum())).astype(np.int64)
    bounds = np.cumsum([0] + [len(f) for f in frequencies])
    return [group[bounds[i] : bounds[i + 1]] for i in range(len(contents))], total


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
