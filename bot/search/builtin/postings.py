"""Postings: how a segment lays out which documents hold a term.

Postings are CSR rows: term t's documents are cols[indptr[t]:indptr[t+1]], ascending,
with their frequencies in values at the same positions. A document number is three
little-endian bytes (`pack`: rows of cols are uint8 triples), so a posting is four
bytes with its frequency; a segment holds at most 2**24 - 1 documents. Document lists
passed in are ascending too, so each term's list is searched from where the last
document was found. The loops over them are bot.search.builtin.loops's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

DOC_BYTES = 3
MAX_DOCS = 1 << (8 * DOC_BYTES)

# What the loops take, by kind of element: numba compiles a loop once per dtype (int64
# or int32 documents; uint8, uint16 or uint32 frequencies; float64 or float32 sums).
Ints = npt.NDArray[np.signedinteger[Any]]  # document numbers, term ids, row offsets
Packed = npt.NDArray[np.uint8]  # `pack`'s rows
Counts = npt.NDArray[np.unsignedinteger[Any]]  # term frequencies
Floats = npt.NDArray[np.floating[Any]]  # idf, lengths' norms, sums
Mask = npt.NDArray[np.bool_]  # live or allowed documents


def frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view. numba compiles a function once per argument type, and a
    writable array is another type than a read-only one: the index hands its arrays
    to the loops read-only, built in memory or memory-mapped alike, so that each loop
    is compiled (and cached) once, not again at the first search of a new segment."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


def pack(docs: np.ndarray) -> np.ndarray:
    """Document numbers (below MAX_DOCS) as rows of DOC_BYTES little-endian bytes."""
    if len(docs) and int(docs.max()) >= MAX_DOCS:
        raise ValueError(f"a segment holds at most {MAX_DOCS - 1:,} documents")
    wide = np.ascontiguousarray(docs, dtype="<u4").view(np.uint8).reshape(-1, 4)
    return np.ascontiguousarray(wide[:, :DOC_BYTES])


def unpack(packed: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """The document numbers of `pack`'s rows (int32 halves the memory of a merge)."""
    wide = np.zeros((len(packed), 4), dtype=np.uint8)
    wide[:, :DOC_BYTES] = packed
    numbers = wide.view("<u4").ravel()  # below 2**24: the same bits as int32
    return numbers.view(np.int32) if dtype == np.int32 else numbers.astype(dtype)
