"""The papers closest in meaning without reading every vector: an inverted-file index
(faiss IVF, 8-bit scalar codes) for libraries too large to score by brute force.

Brute force over every vector is exact and fast enough to a few hundred thousand papers
(4-13 ms at 100k); at 1M it takes 38-136 ms and at 2.6M 72-390 ms (both cores free, or
one), more than a member's search may spend, and holds every vector as float32 (1.5 GB at
1M). Measured on 1M vectors made like real ones (mixtures of MiniLM vectors of SciFact's
abstracts, with SciFact's queries), faiss's IVF with 8-bit codes found 97-98% of the true
top-10 in 0.2-0.6 ms and built in 58 s on two threads; usearch's HNSW with int8 codes
found 76-83% in 0.2-0.5 ms and built in 151 s (its int8 codes lose the small components
of unit vectors). `paperclub bench-relevance` measures it again.

The index only proposes candidates (more than asked for); bot.search.vectors rescores
them with the papers' own vectors, so scores are exact and ties break by paper id, as
with brute force. Training and the sample it uses are seeded: the same vectors give the
same index.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bot.search.embedding import Vectors

# From this many vectors, the dense top-k comes from the index; below, by brute force.
NEIGHBOURS_FROM = 200_000
# Candidates the index proposes for a top-k: k times this (then rescored exactly).
OVERFETCH = 2
# Lists probed per query: a share of the 4 * sqrt(n) lists, at least PROBES. At 1M (4,000
# lists) on the bench's vectors, probing 32 found 93.8% of the top-10 (0.4 ms), 64 97.5%,
# 128 99.1% (1.2 ms), 256 99.6% (2.0 ms); proposing 4k candidates instead of 2k found no more.
PROBES, PROBE_SHARE = 32, 0.03
# Vectors the lists are trained on, per list; and the fewest faiss asks for (fewer vectors
# get fewer lists).
TRAINING_PER_LIST, FEWEST_PER_LIST = 64, 39
SEED = 20261128


def _faiss() -> Any:
    """faiss, imported on first need (a library below NEIGHBOURS_FROM never loads it), on
    one thread: a query should leave the other core to members, as the model does."""
    import faiss

    faiss.omp_set_num_threads(1)
    return faiss


def lists_for(size: int) -> int:
    return max(1, min(int(4 * math.sqrt(size)), size // FEWEST_PER_LIST))


def training_size(size: int) -> int:
    """How many vectors the lists of an index of `size` are trained on."""
    return min(size, lists_for(size) * TRAINING_PER_LIST)


def probes_for(lists: int) -> int:
    return min(lists, max(PROBES, math.ceil(lists * PROBE_SHARE)))


class NeighbourIndex:
    """Approximate nearest neighbours by inner product (cosine, for unit vectors), keyed by
    paper id. Safe to search while papers are added from another thread."""

    def __init__(self, index: Any, size: int):
        self._index = index
        self._lock = threading.Lock()
        self.trained_on = size

    @classmethod
    def build(cls, training: Vectors, blocks: Iterable[tuple[npt.NDArray[np.int64], Vectors]],
              size: int) -> NeighbourIndex:
        """An index of `size` vectors given a block at a time (so that a library held as
        codes is never all floats at once), its lists trained on `training`."""
        faiss = _faiss()
        dimension = training.shape[1]
        lists = lists_for(size)
        quantiser = faiss.IndexFlatIP(dimension)
        index = faiss.IndexIVFScalarQuantizer(
            quantiser, dimension, lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
        )
        index.cp.seed = SEED
        index.train(np.ascontiguousarray(training, dtype=np.float32))
        index.nprobe = probes_for(lists)
        built = cls(index, size)
        for ids, rows in blocks:
            built.add(ids, rows)
        return built

    def add(self, paper_ids: npt.NDArray[np.int64], rows: Vectors) -> None:
        """Add these papers' vectors, replacing any they had."""
        if not len(paper_ids):
            return
        faiss = _faiss()
        ids = np.ascontiguousarray(paper_ids, dtype=np.int64)
        with self._lock:
            self._index.remove_ids(faiss.IDSelectorBatch(ids))
            self._index.add_with_ids(np.ascontiguousarray(rows, dtype=np.float32), ids)

    def save(self, path: Path) -> None:
        with self._lock:
            _faiss().write_index(self._index, str(path))

    @classmethod
    def load(cls, path: Path, trained_on: int) -> NeighbourIndex:
        """An index `save` wrote (read into memory: papers are added to it as they come)."""
        index = _faiss().read_index(str(path))
        index.nprobe = probes_for(index.nlist)
        return cls(index, trained_on)

    def candidates(self, query: Vectors, k: int) -> npt.NDArray[np.int64]:
        """About the `k` papers closest to `query` (fewer when the index holds fewer)."""
        with self._lock:
            _scores, ids = self._index.search(np.ascontiguousarray(query[None, :], dtype=np.float32), k)
        found = np.asarray(ids[0], dtype=np.int64)
        return found[found >= 0]

    def __len__(self) -> int:
        return int(self._index.ntotal)

    @property
    def nbytes(self) -> int:
        """The codes and ids the lists hold (the centroids are a few MB more)."""
        return len(self) * (int(self._index.code_size) + 8)
