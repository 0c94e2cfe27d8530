"""The flat arrays a search index is made of, so that it can be written with numpy and
memory-mapped back: strings in one byte blob, and sparse rows in CSR form.

At a million papers a Python object per title or per posting would cost gigabytes and
seconds to load; these containers cost one array each and nothing until a row is read.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Arrays = dict[str, np.ndarray]
SAMPLE = 32
FOUND_MAX = 4096


class StringTable:
    """Strings stored as UTF-8 in one blob with offsets; `find` needs them sorted.

    UTF-8 byte order is code point order, so a table built from `sorted(strings)` can be
    searched by comparing encoded bytes.
    """

    def __init__(self, offsets: np.ndarray, blob: np.ndarray):
        self.offsets = offsets
        self.blob = blob
        self._sampled: list[bytes] | None = None  # every SAMPLE-th string, made on first find
        # Recent answers of `find`: a search looks its terms up in the BM25 index, again
        # for the matched terms, and members repeat words. Cleared when full.
        self._found: dict[str, int | None] = {}

    @classmethod
    def from_strings(cls, strings: Iterable[str]) -> StringTable:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return cls(offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8).copy())

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, position: int) -> str:
        return self._bytes(position).decode("utf-8")

    def _bytes(self, position: int) -> bytes:
        return self.blob[self.offsets[position] : self.offsets[position + 1]].tobytes()

    def find(self, text: str) -> int | None:
        """The position of `text` in a sorted table, or None.

        Python's bisect (in C) over every SAMPLE-th string narrows the search to one run,
        which is read with one slice: a few microseconds, with no dictionary of the whole
        vocabulary to build at load time or to hold in memory.
        """
        found = self._found.get(text, -1)
        if found != -1:
            return found
        if len(self._found) >= FOUND_MAX:
            self._found = {}
        self._found[text] = found = self._find(text)
        return found

    def _find(self, text: str) -> int | None:
        key = text.encode("utf-8")
        run = bisect.bisect_right(self._samples(), key) - 1
        if run < 0:
            return None
        first = run * SAMPLE
        last = min(first + SAMPLE, len(self))
        data = self.blob[self.offsets[first] : self.offsets[last]].tobytes()
        bounds = (self.offsets[first : last + 1] - self.offsets[first]).tolist()
        # Five comparisons within the run, each slicing one string out of `data`.
        position = bisect.bisect_left(
            range(last - first), key, key=lambda i: data[bounds[i] : bounds[i + 1]]
        )
        if position < last - first and data[bounds[position] : bounds[position + 1]] == key:
            return first + position
        return None

    def _samples(self) -> list[bytes]:
        if self._sampled is None:
            self._sampled = [self._bytes(i) for i in range(0, len(self), SAMPLE)]
        return self._sampled

    @classmethod
    def concat(cls, tables: Sequence[StringTable]) -> StringTable:
        sizes = np.array([len(t.blob) for t in tables], dtype=np.int64)
        shifts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(tables) else sizes
        offsets = np.concatenate(
            [[0]] + [t.offsets[1:] + shift for t, shift in zip(tables, shifts, strict=True)]
        )
        blob = np.concatenate([t.blob for t in tables]) if tables else np.zeros(0, np.uint8)
        return cls(offsets.astype(np.int64), blob)

    def take(self, positions: np.ndarray) -> StringTable:
        """These strings only, in this order."""
        starts = self.offsets[positions]
        lengths = self.offsets[positions + 1] - starts
        offsets = np.zeros(len(positions) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return StringTable(offsets, self.blob[ranges(starts, lengths)])

    def keys(self) -> np.ndarray:
        """A 128-bit BLAKE2b digest of each string, as rows of two uint64: what segments'
        vocabularies are matched on without a Python object per term (computed once,
        when a segment is built, and stored with it)."""
        data = self.blob.tobytes()
        bounds = self.offsets.tolist()
        digests = b"".join(
            hashlib.blake2b(data[bounds[i] : bounds[i + 1]], digest_size=16).digest()
            for i in range(len(self))
        )
        return np.frombuffer(digests, dtype=np.uint64).reshape(-1, 2).copy()

    def to_list(self) -> list[str]:
        data = self.blob.tobytes()
        bounds = self.offsets.tolist()
        return [data[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(len(self))]

    def arrays(self, name: str) -> Arrays:
        return {f"{name}.offsets": self.offsets, f"{name}.blob": self.blob}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], name: str) -> StringTable:
        return cls(arrays[f"{name}.offsets"], arrays[f"{name}.blob"])


def digest_order(keys: np.ndarray) -> np.ndarray:
    """An order of the rows of `keys` (128-bit digests as two uint64) that puts equal
    digests next to each other: by their first half alone, one sort where lexsort takes
    two (~0.1 s at a million papers' vocabulary); by both halves when two different
    digests share a first half (64 random bits: about one chance in sixty million among
    all of arXiv's 750,000 terms)."""
    order = np.argsort(keys[:, 0], kind="stable")
    first = keys[order, 0]
    shared = np.flatnonzero(first[1:] == first[:-1])
    if len(shared) and np.any(keys[order[shared], 1] != keys[order[shared + 1], 1]):
        return np.lexsort((keys[:, 1], keys[:, 0]))
    return order


SMALL_TRANSPOSE = 1 << 21  # entries transposed by numpy's sort; more go through scipy


@dataclass(frozen=True)
class SparseRows:
    """Rows of (column, value) pairs in CSR form: row r is cols/values[indptr[r]:indptr[r+1]]."""

    indptr: np.ndarray  # int64, one more than the number of rows
    cols: np.ndarray  # unsigned or int32 ids
    values: np.ndarray  # one per entry (term frequencies; ones for plain sets)

    @property
    def row_count(self) -> int:
        return len(self.indptr) - 1

    def row_lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def bounds(self, row: int) -> tuple[int, int]:
        return int(self.indptr[row]), int(self.indptr[row + 1])

    def transpose(self, col_count: int) -> SparseRows:
        """Rows become columns; within a new row the old rows stay in ascending order."""
        index_dtype = (
            np.int32
            if len(self.cols) < 2**31 and max(col_count, self.row_count) < 2**31
            else np.int64
        )
        cols = self.cols
        if len(cols) <= SMALL_TRANSPOSE:  # a day's segment: not worth importing scipy
            return self._transposed_by_sorting(col_count, index_dtype)
        if cols.dtype == np.uint32 and index_dtype == np.int32:
            cols = cols.view(np.int32)  # the same bits (every id < 2**31): no copy (1M: 480 MB)
        from scipy import sparse  # a third of a second to import: for large builds only

        matrix = sparse.csr_matrix(
            (self.values, cols.astype(index_dtype, copy=False), self.indptr.astype(index_dtype)),
            shape=(self.row_count, col_count),
        )
        # tocsc is a counting sort in C: linear, where argsort on 80M entries takes seconds.
        flipped = matrix.tocsc()
        return SparseRows(flipped.indptr.astype(np.int64), flipped.indices, flipped.data)

    def _transposed_by_sorting(
        self, col_count: int, index_dtype: type[np.signedinteger[Any]]
    ) -> SparseRows:
        """`transpose` by a stable sort on the columns: the same rows, in the same order."""
        cols = self.cols.astype(np.int64)
        order = np.argsort(cols, kind="stable")
        indptr = np.zeros(col_count + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=col_count), out=indptr[1:])
        rows = np.repeat(np.arange(self.row_count, dtype=index_dtype), self.row_lengths())
        return SparseRows(indptr, rows[order], self.values[order])

    def take(self, rows: np.ndarray) -> SparseRows:
        """A new SparseRows holding the given rows, in the given order."""
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        source = ranges(starts, lengths)
        return SparseRows(indptr, self.cols[source], self.values[source])

    def arrays(self, name: str) -> Arrays:
        return {
            f"{name}.indptr": self.indptr,
            f"{name}.cols": self.cols,
            f"{name}.values": self.values,
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], name: str) -> SparseRows:
        return cls(arrays[f"{name}.indptr"], arrays[f"{name}.cols"], arrays[f"{name}.values"])


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of arange(s, s + n) for each (s, n), without a Python loop."""
    nonempty = np.flatnonzero(lengths)
    if len(nonempty) == 0:
        return np.zeros(0, dtype=np.int64)
    first = starts[nonempty].astype(np.int64)
    count = lengths[nonempty].astype(np.int64)
    placed = np.cumsum(count) - count  # where each run begins in the output
    # Steps of one within a run; at a run's beginning, the jump from the previous run's end.
    steps = np.ones(int(count.sum()), dtype=np.int64)
    steps[0] = first[0]
    steps[placed[1:]] = first[1:] - (first[:-1] + count[:-1] - 1)
    return np.cumsum(steps)
