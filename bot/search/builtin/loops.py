"""The loops a query runs over postings (bot.search.builtin.postings), and which build of them.

The loops come in two builds with the same results to the last bit: compiled
(bot.search.builtin.compiled, numba), what a running bot and every long job use, and plain
numpy (bot.search.builtin.vectorised), for a process that does one thing and exits
(`paperclub search`, `paperclub import` of a day's papers): importing numba and
loading its compiled loops from the cache costs most of a second, more than such a
query over all of arXiv or such a segment's build.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from bot.search.builtin.postings import Counts, Floats, Ints, Mask, Packed, frozen, pack

_short_lived = False
# Postings a short-lived process passes through numpy's loops at most, where one pass
# takes about 40 bytes a posting: a day's new papers, not a whole library's build.
NUMPY_POSTINGS = 1 << 21


class Loops(Protocol):
    """One build of the loops: the module bot.search.builtin.compiled or .vectorised."""

    @property
    def contenders(self) -> Callable[..., Ints]: ...

    @property
    def ranked(self) -> Callable[..., tuple[Ints, Floats, Counts]]: ...

    @property
    def live_doc_freq(self) -> Callable[[Ints, Packed, Mask], Ints]: ...

    @property
    def highest_impacts(
        self,
    ) -> Callable[[Ints, Packed, Counts, Floats, float, Floats], Floats]: ...


def short_lived() -> None:
    """This process does one thing and exits (`paperclub search`, `paperclub import`):
    it searches, and builds a small segment, with the plain numpy loops, so that it
    never imports numba unless it builds a large index. The answers are the same."""
    global _short_lived  # noqa: PLW0603 - a switch for the whole process, set once at its start
    _short_lived = True


def _query_loops() -> Loops:
    if _short_lived:
        from bot.search.builtin import vectorised

        return vectorised
    return _compiled()


def _loops_for(cols: Packed) -> Loops:
    return _query_loops() if len(cols) <= NUMPY_POSTINGS else _compiled()


def _compiled() -> Loops:
    from bot.search.builtin import compiled

    return compiled


def contenders(*args: Any) -> Ints:
    """The documents that can be in the top k (see bot.search.builtin.compiled.contenders)."""
    return _query_loops().contenders(*args)


def ranked(*args: Any) -> tuple[Ints, Floats, Counts]:
    """The k best of these documents by exact score (bot.search.builtin.compiled.ranked)."""
    return _query_loops().ranked(*args)


def live_doc_freq(indptr: Ints, cols: Packed, live: Mask) -> Ints:
    """Per term, how many of its documents are live (compiled.live_doc_freq)."""
    return _loops_for(cols).live_doc_freq(indptr, cols, live)


def highest_impacts(
    indptr: Ints, cols: Packed, values: Counts, idf: Floats, k1_plus_1: float, norm: Floats
) -> Floats:
    """Per term, its highest impact (compiled.highest_impacts): a build's."""
    return _loops_for(cols).highest_impacts(indptr, cols, values, idf, k1_plus_1, norm)


def terms_of(doc: int, indptr: Ints, cols: Packed, values: Counts) -> tuple[Ints, Ints]:
    """(term ids, frequencies) of one document (compiled.terms_of)."""
    from bot.search.builtin import compiled

    return compiled.terms_of(doc, indptr, cols, values)


_warmed = False


def warm() -> None:
    """Compile (or load from the disk cache) the loops a search runs, with the types
    the index gives them: once per process, at start-up, not during a member's first
    search (a first compile takes seconds; loading from the cache, milliseconds)."""
    global _warmed  # noqa: PLW0603 - the loops are compiled once per process
    if _warmed or _short_lived:
        return
    _warmed = True
    from bot.search.builtin import compiled as loops
    docs = pack(np.array([0, 1], dtype=np.int64))
    indptr, cols = frozen(np.array([0, 2], dtype=np.int64)), frozen(docs)
    heads = (frozen(np.zeros(0, dtype=np.int64)), frozen(np.zeros(0, dtype=np.int32)))
    terms, weights = np.array([0], dtype=np.int64), np.array([1.0])
    norm, norm32 = np.ones(2), np.ones(2, dtype=np.float32)
    # Term frequencies take one byte in abstracts, more where a paper repeats a word past
    # 255 times (bm25._smallest_unsigned): each width is its own compiled loop.
    for width in (np.uint8, np.uint16, np.uint32):
        values = frozen(np.array([1, 2], dtype=width))
        found = loops.contenders(1, terms, weights, weights, 1, 0.5, 1e-4, indptr, cols, values,
                                 heads, np.zeros(0, dtype=np.bool_), 2.5, norm, norm32,
                                 np.zeros(2, dtype=np.float32), 1, 1)
        loops.ranked(1, found, terms, weights, terms, indptr, cols, values, 2.5, norm)
        loops.terms_of(0, indptr, cols, values)
        loops.highest_impacts(indptr, cols, values, frozen(weights), 2.5, norm)
    loops.live_doc_freq(indptr, cols, np.ones(2, dtype=np.bool_))
