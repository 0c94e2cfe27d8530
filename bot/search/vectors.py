"""Papers' vectors as a search reads them, and as they are stored.

Stored, a unit vector is 384 signed bytes and one scale (int8 codes: a quarter of float32,
38 MB per 100k papers, with no loss measured on SciFact); read, the codes of every paper
one model embedded become one float32 matrix, in paper id order, that a query's vector
is multiplied with: the dense top-k is exact (brute force), not approximate.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Sequence
from functools import partial

import numpy as np
import numpy.typing as npt

from bot.corpus.embedded import VectorRules
from bot.search.embedding import EmbeddingConfig, Vectors, catalogue_dimension

Codes = npt.NDArray[np.int8]


def quantised(vector: Vectors) -> tuple[bytes, float]:
    """A unit vector as int8 codes and the scale that turns them back (code * scale)."""
    peak = float(np.abs(vector).max()) if vector.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    codes = np.clip(np.rint(vector / scale), -127, 127).astype(np.int8)
    return codes.tobytes(), scale


def import_rules(config: EmbeddingConfig) -> VectorRules:
    """What an import takes as a paper's precomputed vector (docs/relevance.md): one of the
    configured model, whether or not embeddings are on (turned on later, they are used),
    of that model's dimension, stored as `paperclub embed` stores the model's own."""
    return VectorRules(config.model, _quantised_values, partial(catalogue_dimension, config.model))


def _quantised_values(values: array[float]) -> tuple[bytes, float]:
    """Unit float32 values, as a reader scaled them, as codes and a scale."""
    return quantised(np.frombuffer(values, dtype=np.float32))


def restored(codes: bytes, scale: float) -> Vectors:
    return (np.frombuffer(codes, dtype=np.int8).astype(np.float32) * np.float32(scale)).astype(np.float32)


class VectorMatrix:
    """The vectors of some papers, one row each in paper id order, for one model."""

    def __init__(self, model: str, paper_ids: npt.NDArray[np.int64], rows: Vectors):
        order = np.argsort(paper_ids, kind="stable")
        self.model = model
        self.paper_ids = np.ascontiguousarray(paper_ids[order])
        self.rows = np.ascontiguousarray(rows[order], dtype=np.float32)

    @classmethod
    def from_stored(
        cls, model: str, stored: Iterable[tuple[int, bytes, float]], dimension: int | None = None
    ) -> VectorMatrix:
        """From (paper id, codes, scale) rows, of `dimension` or the first row's; rows of
        another dimension are left out (a model whose name was reused for another shape)."""
        ids: list[int] = []
        codes = bytearray()
        scales: list[float] = []
        for paper_id, code, scale in stored:
            dimension = dimension or len(code)
            if len(code) != dimension:
                continue
            ids.append(paper_id)
            codes += code
            scales.append(scale)
        matrix = np.frombuffer(bytes(codes), dtype=np.int8).reshape(len(ids), dimension or 0).astype(np.float32)
        matrix *= np.asarray(scales, dtype=np.float32)[:, None]
        return cls(model, np.asarray(ids, dtype=np.int64), matrix)

    def updated(self, newer: VectorMatrix) -> VectorMatrix:
        """This matrix with `newer`'s rows added, replacing the rows of papers it has
        again (a re-embedded abstract)."""
        if not len(newer):
            return self
        keep = ~np.isin(self.paper_ids, newer.paper_ids)
        return VectorMatrix(
            self.model,
            np.concatenate([self.paper_ids[keep], newer.paper_ids]),
            np.concatenate([self.rows[keep], newer.rows]),
        )

    @classmethod
    def empty(cls, model: str, dimension: int) -> VectorMatrix:
        return cls(model, np.zeros(0, dtype=np.int64), np.zeros((0, dimension), dtype=np.float32))

    def __len__(self) -> int:
        return len(self.paper_ids)

    @property
    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.paper_ids.nbytes)

    def rows_of(self, paper_ids: Sequence[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
        """The given papers that have a vector, and their rows."""
        wanted = np.asarray(list(paper_ids), dtype=np.int64)
        if not len(self) or not len(wanted):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp)
        rows = np.minimum(np.searchsorted(self.paper_ids, wanted), len(self) - 1)
        found = self.paper_ids[rows] == wanted
        return wanted[found], rows[found]

    def vector(self, paper_id: int) -> Vectors | None:
        ids, rows = self.rows_of([paper_id])
        return self.rows[rows[0]] if len(ids) else None

    def similarities(self, query: Vectors, paper_ids: Sequence[int]) -> dict[int, float]:
        """The cosine of `query` with each of these papers that has a vector."""
        ids, rows = self.rows_of(paper_ids)
        return dict(zip(ids.tolist(), (self.rows[rows] @ query).tolist(), strict=True))

    def top(
        self,
        query: Vectors,
        k: int,
        among: Collection[int] | None = None,
        excluded: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """The k papers closest to `query` (ties to the lower id), only of `among` when
        given, none of `excluded`."""
        if among is not None:
            ids, rows = self.rows_of(sorted(among))
            scores = self.rows[rows] @ query
        else:
            ids, scores = self.paper_ids, self.rows @ query
        if excluded:
            keep = ~np.isin(ids, np.fromiter(excluded, dtype=np.int64))
            ids, scores = ids[keep], scores[keep]
        if not len(ids):
            return []
        k = min(k, len(ids))
        if k < len(ids):
            # Everything as close as the k-th, so that ties at the edge go to the lower id
            # whatever order argpartition left them in.
            kth = np.partition(-scores, k - 1)[k - 1]
            best = np.flatnonzero(-scores <= kth)
        else:
            best = np.arange(len(ids))
        best = best[np.lexsort((ids[best], -scores[best]))][:k]
        return list(zip(ids[best].tolist(), scores[best].tolist(), strict=True))
