"""Sentences to vectors: the meaning half of relevance.

A sentence-embedding model (all-MiniLM-L6-v2 unless the operator names another) turns a
paper's title and abstract, or a member's query, into a unit vector; papers close in
meaning have vectors with a high dot product even where they share no word. The model
runs through fastembed (ONNX Runtime, no torch), imported only when a model is loaded:
a process that never embeds never pays for it.

The operator's switches are environment variables, read here because the search layer
sits below bot/ops (which declares them for `config check`, bot.ops.settings):
PAPERCLUB_EMBEDDINGS (on/off), PAPERCLUB_EMBEDDING_MODEL and PAPERCLUB_MODEL_DIR.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

# What a paper's vector is made of, and the hash that tells a changed text: the corpus's,
# which stores the hash beside the vector (and an imported vector with it); named here too.
from bot.corpus.embedded import paper_text as paper_text
from bot.corpus.embedded import text_hash as text_hash
from bot.search.params import DEFAULT_MODEL, MODEL, MODEL_DIR, OFF, ON, SWITCH

log = logging.getLogger(__name__)

# Papers a model reads at once: larger batches pad more (abstracts differ in length) and
# measured no faster on 2 cores.
BATCH = 32

Vectors = npt.NDArray[np.float32]


class ModelUnavailable(RuntimeError):
    """No model could be loaded; the message says why in one line."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """What the operator chose: whether to embed, which model, and where it lies."""

    enabled: bool = True
    model: str = DEFAULT_MODEL
    model_dir: Path | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> EmbeddingConfig:
        env = os.environ if env is None else env
        switch = (env.get(SWITCH) or "on").strip().lower()
        if switch not in ON + OFF:
            raise ValueError(f"{SWITCH}={switch!r}: use on or off")
        folder = (env.get(MODEL_DIR) or "").strip()
        return cls(
            enabled=switch in ON,
            model=(env.get(MODEL) or "").strip() or DEFAULT_MODEL,
            model_dir=Path(folder).expanduser() if folder else None,
        )


class Embedder(Protocol):
    """A model as the search uses it: unit-length float32 rows, one per text."""

    @property
    def name(self) -> str:
        """The model's name: stored vectors are keyed by it, so another model re-embeds."""
        ...

    @property
    def dimension(self) -> int: ...

    def documents(self, texts: Sequence[str]) -> Vectors:
        """The vectors of papers' texts (paper_text), one row each."""
        ...

    def query(self, text: str) -> Vectors:
        """The vector of a member's query (a model may read queries differently)."""
        ...


class FastEmbedder:
    """A model run by fastembed: from `model_dir` when given (fastembed's layout:
    model.onnx, tokenizer.json, config.json, ...), else fastembed's own download and
    cache. Raises ModelUnavailable when neither gives a model."""

    def __init__(self, model: str = DEFAULT_MODEL, model_dir: Path | None = None, threads: int | None = None,
                 offline: bool = False):
        try:
            from fastembed import TextEmbedding  # here: 1 s to import, only where a model runs
            from loguru import logger
        except ImportError as problem:
            raise ModelUnavailable(f"fastembed is not installed ({problem})") from None
        logger.disable("fastembed")  # its retries' noise: ModelUnavailable says why in one line
        if model_dir is not None and not (model_dir / "model.onnx").is_file():
            raise ModelUnavailable(f"{MODEL_DIR}={model_dir}: no model.onnx there")
        try:
            path = str(model_dir) if model_dir is not None else None
            # offline: only what the runtime's cache holds (`config check` downloads nothing)
            self._model = TextEmbedding(model, specific_model_path=path, threads=threads,
                                        local_files_only=offline)
        except Exception as problem:  # noqa: BLE001 - fastembed raises anything from a download to a bad graph
            reason = str(problem).splitlines()[0] if str(problem) else type(problem).__name__
            if offline and model_dir is None:
                reason = f"not in the runtime's cache (`paperclub embed` downloads it, or set {MODEL_DIR})"
            raise ModelUnavailable(f"{model}: {reason}") from None
        self._name = model
        # Which files: two folders may hold one model in two precisions (float32, int8).
        onnx = model_dir / "model.onnx" if model_dir is not None else None
        self.source = f"{onnx}:{onnx.stat().st_size}" if onnx is not None else "the runtime's cache"
        self._dimension = int(self.documents(["dimension"]).shape[1])

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, getattr(self, "_dimension", 0)), dtype=np.float32)
        rows: Vectors = np.asarray(list(self._model.embed(list(texts), batch_size=BATCH)), dtype=np.float32)
        return unit(rows)

    def query(self, text: str) -> Vectors:
        rows: Vectors = np.asarray(list(self._model.query_embed([text])), dtype=np.float32)
        first: Vectors = unit(rows)[0]
        return first


def unit(rows: Vectors) -> Vectors:
    """Rows scaled to length 1 (models that already normalise are left as they are, up to
    rounding), so that a dot product is a cosine."""
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    unit: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


# A process that embeds members' queries runs the model on one thread: a query is a few
# tokens, and ONNX Runtime's idle threads spin after each run, which on 2 cores slowed the
# dense top-k that follows from 17 to 37 ms at 100k papers (search 61 -> 31 ms with one).
QUERY_THREADS = 1


def load_embedder(config: EmbeddingConfig, download: bool = False, threads: int | None = QUERY_THREADS,
                  ) -> Embedder | None:
    """The configured model, or None when embeddings are off or no model loads (one log
    line says why: everything then ranks by words alone). Only `download` lets the
    runtime fetch a model it has not cached (`paperclub embed`): a fetch that cannot
    reach the hub retries for most of a minute, which no search may wait for."""
    if not config.enabled:
        return None
    try:
        return FastEmbedder(config.model, config.model_dir, threads=threads, offline=not download)
    except ModelUnavailable as problem:
        log.warning("embeddings unavailable, ranking by words only: %s", problem)
        return None


def catalogue_dimension(model: str) -> int | None:
    """The dimension of `model`'s vectors as fastembed's catalogue lists it (a list in its
    code: nothing downloaded, nothing loaded but fastembed itself, half a second), or None
    for a model it does not list, or without fastembed."""
    try:
        from fastembed import TextEmbedding
    except ImportError:
        return None
    wanted = model.lower()
    for known in TextEmbedding.list_supported_models():
        if str(known.get("model", "")).lower() == wanted and isinstance(known.get("dim"), int):
            return int(known["dim"])
    return None
