"""BM25's parameters, apart from the engine: the command line reads their defaults for
its help without importing numpy, scipy and numba."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25


# The embedding model's switches (bot.search.embedding reads them; bot.ops.settings
# declares them for `config check`): here, where reading them costs no numpy.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
SWITCH, MODEL, MODEL_DIR = "PAPERCLUB_EMBEDDINGS", "PAPERCLUB_EMBEDDING_MODEL", "PAPERCLUB_MODEL_DIR"
ON, OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0")
