"""Embedding the papers that need a vector: none yet under the model, or a changed text.

Batches are stored as they are made (each in its own transaction), so a run stopped
halfway keeps what it made and the next run goes on from there. Embedding is the costly
part of relevance (tens of abstracts a second on 2 cores): it runs in `paperclub embed`
or in the background, never on a member's request.

Every serving process with the scheduler on runs the background job, and an operator may
run `paperclub embed` beside them, all on one database: a run claims each batch before embedding it
(bot.corpus.embedded.StoredVectors.claim) and passes over papers another run holds, so
each paper is embedded once. A run releases what it claimed but did not store however
it ends; a process that dies leaves its claims to expire.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from bot.corpus.embedded import Made, StoredVectors
from bot.search.embedding import (
    Embedder,
    EmbeddingConfig,
    FastEmbedder,
    ModelUnavailable,
    paper_text,
    text_hash,
)
from bot.search.vectors import quantised

log = logging.getLogger(__name__)

# Papers embedded and stored together: a stop loses at most one batch.
BATCH = 256
# In a serving process: small batches (a shutdown waits for one, a few seconds on one
# core) and a bounded run every few minutes, on one thread, so members' searches keep a core.
BACKGROUND_BATCH, BACKGROUND_SECONDS, BACKGROUND_MINUTES, BACKGROUND_THREADS = 32, 120.0, 2, 1


@dataclass(frozen=True)
class Backlog:
    embedded: int  # papers with a vector under the model
    papers: int

    @property
    def missing(self) -> int:
        return max(self.papers - self.embedded, 0)


def backlog(stored: StoredVectors, model: str) -> Backlog:
    """How far the library is embedded under `model` (a changed abstract is not counted
    as missing here; `embed_pending` finds it)."""
    return Backlog(stored.count(model), stored.papers())


def embed_pending(
    stored: StoredVectors,
    embedder: Embedder,
    progress: Callable[[int], None] | None = None,
    seconds: float | None = None,
    batch: int = BATCH,
    stop: threading.Event | None = None,
) -> int:
    """Embed and store every paper that needs a vector and no other run is embedding, a
    claimed batch at a time; stop after the batch that passes `seconds` when given, or
    once `stop` is set. `progress` hears the count done so far. Returns how many papers
    were embedded."""
    owner = uuid.uuid4().hex  # this run's claims, told from other runs' and processes'
    try:
        return _embed_claimed(stored, embedder, owner, progress, seconds, batch, stop)
    finally:
        _release(stored, embedder.name, owner)


def _embed_claimed(
    stored: StoredVectors,
    embedder: Embedder,
    owner: str,
    progress: Callable[[int], None] | None,
    seconds: float | None,
    batch: int,
    stop: threading.Event | None,
) -> int:
    started = time.monotonic()
    after, done = 0, 0
    while True:
        claimed = stored.claim(embedder.name, paper_text, text_hash, owner, after=after, limit=batch)
        if claimed is None:
            return done
        if claimed.papers:  # else another run holds the whole batch: on to the next
            todo = claimed.papers
            vectors = embedder.documents([p.text for p in todo])
            made = [Made(p.paper_id, p.text_hash, *quantised(v)) for p, v in zip(todo, vectors, strict=True)]
            stored.save(embedder.name, made)
            done += len(todo)
            if progress is not None:
                progress(done)
        after = claimed.after
        if seconds is not None and time.monotonic() - started >= seconds:
            return done
        if stop is not None and stop.is_set():
            return done


def _release(stored: StoredVectors, model: str, owner: str) -> None:
    """Best effort, and never in place of the error that stopped the run: when the database
    is what failed, this fails too, and the claims expire after the lease instead
    (bot.corpus.embedded.LEASE)."""
    try:
        stored.release(model, owner)
    except SQLAlchemyError as problem:
        log.warning("claims of papers not embedded kept until they expire: %s: %s", type(problem).__name__, problem)


def background_model(config: EmbeddingConfig) -> Embedder:
    """The model as the background job runs it: from its folder or the runtime's cache
    (never a download inside a serving process), on one thread."""
    return FastEmbedder(config.model, config.model_dir, threads=BACKGROUND_THREADS, offline=True)


def background_job(stored: StoredVectors, load: Callable[[], Embedder], stop: threading.Event) -> Callable[[], None]:
    """The scheduler's job that embeds what imports, follows and adds brought in, a
    bounded run at a time (claimed: beside other replicas' jobs, each paper is embedded once).
    The model is loaded (`load`) on the first run that finds the corpus changed; one that
    will not load is said once, and the job does nothing after."""
    state: dict[str, Embedder | None] = {}
    done_at: list[int] = []  # the corpus revision at which nothing was left to embed

    def run() -> None:
        revision = stored.corpus_revision()
        if done_at == [revision] or stop.is_set():
            return  # no import, add or follow since: nothing new to embed (no scan of the library)
        if "model" not in state:
            try:
                state["model"] = load()
            except ModelUnavailable as problem:
                log.warning("not embedding new papers: %s", problem)
                state["model"] = None
        model = state["model"]
        if model is None or stop.is_set():
            return
        try:
            done = embed_pending(stored, model, seconds=BACKGROUND_SECONDS, batch=BACKGROUND_BATCH, stop=stop)
        except Exception as problem:  # noqa: BLE001 - a job that raises is logged with a traceback each run
            log.warning("embedding new papers failed: %s: %s", type(problem).__name__, problem)
            return
        if done:
            log.info("embedded %d papers with %s", done, model.name)
        if not stop.is_set() and not stored.pending(model.name, paper_text, text_hash, limit=1):
            done_at[:] = [revision]

    return run
