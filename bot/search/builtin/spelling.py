"""Did you mean, in the built-in engine: the indexed words closest to a query word no
paper contains (bot.search.suggest says which words, and how far).

The BM25 vocabulary holds stems ("network", "studi"), which a member cannot retype, so
the index keeps the words as written as well: every plain word (letters a-z, 3 to 40 of
them) whose stem is in at least two papers, with how often it occurs. Stems in a
single paper are left out: they are mostly typos and one-off names, which would be
poor suggestions, and they are a large part of a vocabulary that grows with the corpus.

The words are sorted by (first letter, length, word), so the candidates for a typed
word, those that start with its first or second letter (a swap of the first two
letters) and whose length is within the edit distance allowed, are one or two
contiguous runs of the table (about a twentieth of it), compared in one rapidfuzz call
with the optimal string alignment distance (a swap of neighbours counts as one edit):
about 1 ms a word at 200,000 words, 5 ms at a million. The closest wins; among equally
close ones, the most frequent. A typo in the first letter that is not a swap with the
second ("raph" for "graph") is not corrected: it would mean comparing every word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from bot.search.builtin.arrays import Arrays, StringTable
from bot.search.suggest import correctable, max_edits

_SPAN = 64  # lengths fit under this, so (first letter, length) is one integer key


@dataclass
class WordCounts:
    """How often each plain word occurs in some papers: what a build collects."""

    words: list[str]  # sorted
    counts: np.ndarray  # int64, one per word

    @classmethod
    def count(cls, words: Iterable[str]) -> WordCounts:
        counted = Counter(words)  # counted in C first: far fewer distinct words to check
        ordered = sorted(w for w in counted if correctable(w))
        return cls(ordered, np.array([counted[w] for w in ordered], dtype=np.int64))

    @classmethod
    def merge(cls, parts: Sequence[WordCounts]) -> WordCounts:
        words = sorted(set().union(*(p.words for p in parts)))
        position = {w: i for i, w in enumerate(words)}
        counts = np.zeros(len(words), dtype=np.int64)
        for part in parts:
            ids = np.fromiter(map(position.__getitem__, part.words), np.int64, len(part.words))
            np.add.at(counts, ids, part.counts)
        return cls(words, counts)


class Spelling:
    """The words suggestions are made from, in (first letter, length, word) order."""

    def __init__(self, words: StringTable, counts: np.ndarray):
        self.words = words
        self.counts = counts
        self._keys: np.ndarray | None = None  # (first letter, length) per word, on first use

    @classmethod
    def build(cls, words: Sequence[str], counts: np.ndarray) -> Spelling:
        order = sorted(range(len(words)), key=lambda i: (words[i][0], len(words[i]), words[i]))
        table = StringTable.from_strings(words[i] for i in order)
        # uint32 offsets and counts: 8 bytes a word less than int64, on a table of millions.
        offsets = table.offsets.astype(np.uint32)
        counts = np.minimum(np.asarray(counts, dtype=np.int64)[order], np.iinfo(np.uint32).max)
        return cls(StringTable(offsets, table.blob), counts.astype(np.uint32))

    def __len__(self) -> int:
        return len(self.words)

    def closest(self, word: str) -> str | None:
        """The indexed word nearest to `word` within max_edits, never `word` itself."""
        if not correctable(word) or not len(self):
            return None
        edits = max_edits(word)
        best: tuple[int, int, str] | None = None
        for first in dict.fromkeys(word[:2]):
            candidates, counts = self._run(first, len(word) - edits, len(word) + edits)
            found = self._nearest(word, candidates, counts, edits)
            if found is not None and (best is None or found < best):
                best = found
        return best[2] if best else None

    @staticmethod
    def _nearest(
        word: str, candidates: list[str], counts: np.ndarray, edits: int
    ) -> tuple[int, int, str] | None:
        """(distance, -count, word) of the best candidate, or None."""
        if not candidates:
            return None
        from rapidfuzz import process  # here: only a query that matches nothing needs it
        from rapidfuzz.distance import OSA

        distances = process.cdist(
            [word], candidates, scorer=OSA.distance, score_cutoff=edits, dtype=np.int32
        )[0]
        near = np.flatnonzero(distances <= edits)
        near = near[[candidates[i] != word for i in near]] if len(near) else near
        if not len(near):
            return None
        pick = near[np.lexsort((-counts[near].astype(np.int64), distances[near]))[0]]
        return int(distances[pick]), -int(counts[pick]), candidates[pick]

    def _run(self, first: str, shortest: int, longest: int) -> tuple[list[str], np.ndarray]:
        """The words starting with `first` whose length is in [shortest, longest]."""
        keys = self._key_array()
        start = int(np.searchsorted(keys, _key(first, max(shortest, 0)), "left"))
        stop = int(np.searchsorted(keys, _key(first, min(longest, _SPAN - 1)), "right"))
        if start >= stop:
            return [], self.counts[:0]
        offsets = self.words.offsets[start : stop + 1]
        text = self.words.blob[offsets[0] : offsets[-1]].tobytes().decode("ascii")
        bounds = (offsets - offsets[0]).tolist()
        return [text[a:b] for a, b in pairwise(bounds)], self.counts[start:stop]

    def _key_array(self) -> np.ndarray:
        if self._keys is None:
            offsets = self.words.offsets
            firsts = self.words.blob[offsets[:-1]].astype(np.int64) if len(self) else offsets[:0]
            self._keys = firsts * _SPAN + np.diff(offsets)
        return self._keys

    def word_counts(self) -> WordCounts:
        """Back to alphabetical order, to extend the index with more papers."""
        words = self.words.to_list()
        order = sorted(range(len(words)), key=words.__getitem__)
        return WordCounts([words[i] for i in order], self.counts[order].astype(np.int64))

    def arrays(self) -> Arrays:
        return {**self.words.arrays("spelling.words"), "spelling.counts": self.counts}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> Spelling:
        return cls(StringTable.from_arrays(arrays, "spelling.words"), arrays["spelling.counts"])


def _key(first: str, length: int) -> int:
    return ord(first) * _SPAN + length
