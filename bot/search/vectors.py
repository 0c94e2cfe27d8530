"""Papers' vectors as a search reads them, and as they are stored.

Stored, a unit vector is 384 signed bytes and one scale (int8 codes: a quarter of float32,
38 MB per 100k papers, with no loss measured on SciFact). Read, they stay codes: a base
part (memory-mapped from the files beside the index, bot.search.vector_files, or empty)
and a tail of those read from the database since, in memory; a code row becomes floats
only when it is scored.

The dense top-k is exact (brute force) below NEIGHBOURS_FROM papers, over one float32
matrix made on first need (1.5 KB a paper: fast, and small at that size). From there,
once its index is built (bot.search.neighbours), that index proposes candidates and their
own vectors score them, so scores stay exact and only a rare true neighbour is missed.
"""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from bot.corpus.embedded import VectorRules
from bot.search.embedding import EmbeddingConfig, Vectors, catalogue_dimension
from bot.search.neighbours import NEIGHBOURS_FROM, OVERFETCH, SEED, NeighbourIndex, training_size

Ids = npt.NDArray[np.int64]
# Rows scored a block at a time when a large library has no index yet (a few MB of floats).
BLOCK = 1 << 15


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


@dataclass(frozen=True)
class Part:
    """Some papers' vectors in paper id order: int8 codes with a scale each (as stored), or
    float32 rows (`scales` None). The arrays may be memory-mapped."""

    paper_ids: Ids
    codes: npt.NDArray[Any]  # int8 codes, or float32 rows
    scales: npt.NDArray[np.float32] | None

    @classmethod
    def sorted(cls, paper_ids: Ids, codes: npt.NDArray[Any],
               scales: npt.NDArray[np.float32] | None = None) -> Part:
        if len(paper_ids) < 2 or bool(np.all(paper_ids[:-1] < paper_ids[1:])):  # as the database reads them
            return cls(np.ascontiguousarray(paper_ids, dtype=np.int64), np.ascontiguousarray(codes),
                       None if scales is None else np.ascontiguousarray(scales, dtype=np.float32))
        order = np.argsort(paper_ids, kind="stable")
        return cls(np.ascontiguousarray(paper_ids[order], dtype=np.int64), np.ascontiguousarray(codes[order]),
                   None if scales is None else np.ascontiguousarray(scales[order], dtype=np.float32))

    @classmethod
    def empty(cls, dimension: int) -> Part:
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, dimension), dtype=np.float32), None)

    def __len__(self) -> int:
        return len(self.paper_ids)

    @property
    def dimension(self) -> int:
        return int(self.codes.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.paper_ids.nbytes + self.codes.nbytes + (0 if self.scales is None else self.scales.nbytes))

    def find(self, wanted: Ids) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
        """For each wanted id: whether this part has it, and where."""
        if not len(self):
            return np.zeros(len(wanted), dtype=bool), np.zeros(len(wanted), dtype=np.intp)
        at = np.minimum(np.searchsorted(self.paper_ids, wanted), len(self) - 1)
        return self.paper_ids[at] == wanted, at

    def rows(self, at: npt.NDArray[np.intp] | slice) -> Vectors:
        """These rows as float32 (codes times their scale, as stored vectors are read)."""
        if self.scales is None:
            return np.asarray(self.codes[at], dtype=np.float32)
        rows = self.codes[at].astype(np.float32)
        rows *= self.scales[at][:, None]
        return rows

    def without(self, paper_ids: Ids) -> Part:
        return self.masked(~np.isin(self.paper_ids, paper_ids))

    def masked(self, keep: npt.NDArray[np.bool_]) -> Part:
        return Part(self.paper_ids[keep], self.codes[keep], None if self.scales is None else self.scales[keep])

    def joined(self, newer: Part) -> Part:
        """This part with `newer`'s rows, which replace any of the same papers."""
        older = self.without(newer.paper_ids)
        if (older.scales is None) != (newer.scales is None):  # codes beside floats: all as floats
            older, newer = older.as_floats(), newer.as_floats()
        scales = None if older.scales is None or newer.scales is None else np.concatenate([older.scales, newer.scales])
        return Part.sorted(np.concatenate([older.paper_ids, newer.paper_ids]),
                           np.concatenate([older.codes, newer.codes]), scales)

    def as_floats(self) -> Part:
        return self if self.scales is None else Part(self.paper_ids, self.rows(slice(None)), None)


class VectorMatrix:
    """The vectors of some papers under one model: a base part (files) with the rows the
    tail replaced masked out, and the tail (read since)."""

    def __init__(self, model: str, paper_ids: Ids, rows: Vectors):
        """Of float32 rows (the evaluation's and the benchmarks' vectors)."""
        dimension = rows.shape[1] if rows.ndim == 2 else 0
        self._set(model, Part.empty(dimension), None, Part.sorted(paper_ids, np.asarray(rows, dtype=np.float32)))

    def _set(self, model: str, base: Part, alive: npt.NDArray[np.bool_] | None, tail: Part) -> None:
        self.model = model
        self.base, self.alive, self.tail = base, alive, tail
        self.neighbours: NeighbourIndex | None = None
        self._dense: tuple[Ids, Vectors] | None = None

    @classmethod
    def of_parts(cls, model: str, base: Part, tail: Part) -> VectorMatrix:
        """The base's vectors, those of `tail` replacing any of the same papers."""
        matrix = cls.__new__(cls)
        alive = ~np.isin(base.paper_ids, tail.paper_ids) if len(base) and len(tail) else None
        matrix._set(model, base, alive, tail)
        return matrix

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
        matrix = np.frombuffer(codes, dtype=np.int8).reshape(len(ids), dimension or 0)
        tail = Part.sorted(np.asarray(ids, dtype=np.int64), matrix, np.asarray(scales, dtype=np.float32))
        return cls.of_parts(model, Part.empty(dimension or 0), tail)

    def updated(self, newer: VectorMatrix) -> VectorMatrix:
        """This matrix with `newer`'s rows added, replacing the rows of papers it has
        again (a re-embedded abstract)."""
        if not len(newer):
            return self
        fresh = newer.tail
        matrix = VectorMatrix.__new__(VectorMatrix)
        alive = self.alive
        if len(self.base):
            gone = np.isin(self.base.paper_ids, fresh.paper_ids)
            alive = ~gone if alive is None else alive & ~gone
        matrix._set(self.model, self.base, alive, self.tail.joined(fresh) if len(self.tail) else fresh)
        if self.neighbours is not None:  # shared: this matrix's searches rescore what they lack away
            self.neighbours.add(fresh.paper_ids, fresh.rows(slice(None)))
            matrix.neighbours = self.neighbours
        return matrix

    @classmethod
    def empty(cls, model: str, dimension: int) -> VectorMatrix:
        return cls(model, np.zeros(0, dtype=np.int64), np.zeros((0, dimension), dtype=np.float32))

    def __len__(self) -> int:
        based = len(self.base) if self.alive is None else int(self.alive.sum())
        return based + len(self.tail)

    @property
    def dimension(self) -> int:
        return self.tail.dimension if len(self.tail) or not len(self.base) else self.base.dimension

    @property
    def nbytes(self) -> int:
        """Bytes the vectors take: both parts (the base mapped from its file), the float
        matrix of a brute-force library once made, and the neighbour index."""
        dense = 0
        if self._dense is not None and not np.may_share_memory(self._dense[1], self.tail.codes):
            dense = self._dense[1].nbytes  # made from codes (float rows are used as they are)
        index = self.neighbours.nbytes if self.neighbours is not None else 0
        return int(self.base.nbytes + self.tail.nbytes + dense + index)

    def stored_part(self) -> Part | None:
        """Every vector as one part of int8 codes, for the files (None for float rows)."""
        if self.tail.scales is None and len(self.tail):
            return None
        base = self.base if self.alive is None else self.base.masked(self.alive)
        if not len(base):
            return self.tail
        return base.joined(self.tail) if len(self.tail) else base

    def blocks(self, size: int = BLOCK) -> Iterator[tuple[Ids, Vectors]]:
        """Every vector, a block of rows at a time, as floats."""
        for start in range(0, len(self.base), size):
            ids, rows = self.base.paper_ids[start:start + size], self.base.rows(slice(start, start + size))
            if self.alive is not None:
                keep = self.alive[start:start + size]
                ids, rows = ids[keep], rows[keep]
            yield ids, rows
        for start in range(0, len(self.tail), size):
            yield self.tail.paper_ids[start:start + size], self.tail.rows(slice(start, start + size))

    @property
    def paper_ids(self) -> Ids:
        """Every paper with a vector, in id order."""
        return self._all()[0]

    @property
    def rows(self) -> Vectors:
        """Every vector as float32, in paper id order (the brute-force matrix)."""
        return self._all()[1]

    def _all(self) -> tuple[Ids, Vectors]:
        if self._dense is None:
            if not len(self.base):
                self._dense = (self.tail.paper_ids, self.tail.rows(slice(None)))  # in id order already
            else:
                self._dense = self._merged()
        return self._dense

    def _merged(self) -> tuple[Ids, Vectors]:
        """Both parts as one float32 matrix in paper id order, filled a block at a time (the
        matrix is the only large allocation: it is what a search holds)."""
        ids = np.concatenate([self.base.paper_ids if self.alive is None else self.base.paper_ids[self.alive],
                              self.tail.paper_ids])
        order = np.argsort(ids, kind="stable")
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        rows = np.empty((len(ids), self.dimension), dtype=np.float32)
        filled = 0
        for block_ids, block in self.blocks():
            rows[place[filled:filled + len(block_ids)]] = block
            filled += len(block_ids)
        return ids[order], rows

    def wants_index(self) -> bool:
        """Whether a neighbour index should be built: large enough, and none yet or one
        trained on less than half of what there is now."""
        if len(self) < NEIGHBOURS_FROM:
            return False
        return self.neighbours is None or len(self) > 2 * self.neighbours.trained_on

    def indexed(self) -> VectorMatrix:
        """This matrix with its neighbour index built now (bot.search.hybrid builds it in
        the background instead)."""
        self.neighbours = self.new_index()
        return self

    def new_index(self) -> NeighbourIndex:
        """A neighbour index of these vectors, trained on a seeded sample of them."""
        return NeighbourIndex.build(self.sample(), self.blocks(), len(self))

    def sample(self, count: int | None = None) -> Vectors:
        """Some vectors, the same ones each time (what a neighbour index is trained on)."""
        count = training_size(len(self)) if count is None else count
        rng = np.random.default_rng(SEED)
        picked = np.sort(rng.choice(len(self), min(count, len(self)), replace=False))
        rows, start = [], 0
        for _ids, block in self.blocks():
            inside = picked[(picked >= start) & (picked < start + len(block))] - start
            rows.append(block[inside])
            start += len(block)
        return np.concatenate(rows) if rows else np.zeros((0, self.dimension), np.float32)

    def rows_of(self, paper_ids: Sequence[int]) -> tuple[Ids, Vectors]:
        """The given papers that have a vector (in the order given), and their vectors."""
        wanted = np.asarray(list(paper_ids), dtype=np.int64)
        in_tail, at_tail = self.tail.find(wanted)
        in_base, at_base = self.base.find(wanted)
        if self.alive is not None and len(self.base):
            in_base &= self.alive[at_base]
        in_base &= ~in_tail
        rows = np.zeros((len(wanted), self.dimension), dtype=np.float32)
        if in_tail.any():
            rows[in_tail] = self.tail.rows(at_tail[in_tail])
        if in_base.any():
            rows[in_base] = self.base.rows(at_base[in_base])
        found = in_tail | in_base
        return wanted[found], rows[found]

    def vector(self, paper_id: int) -> Vectors | None:
        ids, rows = self.rows_of([paper_id])
        return rows[0] if len(ids) else None

    def similarities(self, query: Vectors, paper_ids: Sequence[int]) -> dict[int, float]:
        """The cosine of `query` with each of these papers that has a vector."""
        ids, rows = self.rows_of(paper_ids)
        return dict(zip(ids.tolist(), (rows @ query).tolist(), strict=True))

    def top(
        self,
        query: Vectors,
        k: int,
        among: Collection[int] | None = None,
        excluded: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """The k papers closest to `query` (ties to the lower id), only of `among` when
        given, none of `excluded`."""
        ids, scores = self._scored(query, k, among, excluded)
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

    def _scored(
        self, query: Vectors, k: int, among: Collection[int] | None, excluded: Collection[int]
    ) -> tuple[Ids, npt.NDArray[np.float32]]:
        """The papers a top-k looks at, with their cosines: `among`, or the index's
        candidates when there is one, or every paper (a block at a time in a large
        library still waiting for its index)."""
        if among is None and self.neighbours is not None:
            among = self.neighbours.candidates(query, (k + len(excluded)) * OVERFETCH).tolist()
        if among is not None:
            ids, rows = self.rows_of(sorted(among))
            return ids, rows @ query
        if len(self) < NEIGHBOURS_FROM:
            ids, rows = self._all()
            return ids, rows @ query
        blocks = [(ids, rows @ query) for ids, rows in self.blocks()]
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
