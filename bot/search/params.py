"""BM25's parameters, apart from the engine: the command line reads their defaults for
its help without importing numpy, scipy and numba."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25
