"""`paperclub embed`: give every paper its vector under the configured model, so that
search, similar papers and picks rank by meaning as well as by words. Resumable: what a
stopped run stored stays, and the next run goes on from there. Safe beside serving
replicas: it embeds only the batches it claims (bot.search.backfill)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from store import open_database

if TYPE_CHECKING:
    from bot.corpus.embedded import StoredVectors
    from bot.search.embedding import Embedder


def cmd_embed(args: argparse.Namespace) -> int:
    from bot.corpus.embedded import StoredVectors
    from bot.search.backfill import backlog
    from bot.search.embedding import EmbeddingConfig, FastEmbedder, ModelUnavailable
    from bot.search.params import MODEL_DIR, SWITCH

    try:
        config = EmbeddingConfig.from_env()
    except ValueError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    stored = StoredVectors(open_database(args.database_url))
    before = backlog(stored, config.model)
    if args.status or not config.enabled:
        state = "on" if config.enabled else f"off ({SWITCH}=off)"
        print(f"embeddings {state}; model {config.model}: {before.embedded:,} of {before.papers:,} papers "
              f"have a vector, {before.missing:,} to embed")
        return 0
    try:
        embedder = FastEmbedder(config.model, config.model_dir)  # the runtime may download it
    except ModelUnavailable as problem:
        print(f"error: no model: {problem} (or set {MODEL_DIR} to a folder holding it)", file=sys.stderr)
        return 1
    started = time.perf_counter()
    done = _embed(stored, embedder, before.missing, args.seconds)
    seconds = time.perf_counter() - started
    rate = f", {done / seconds:.1f} papers/s" if done and seconds > 0 else ""
    after = backlog(stored, config.model)
    print(f"embedded {done:,} papers in {seconds:.1f} s{rate}; {after.embedded:,} of {after.papers:,} have a vector")
    return 0


def _embed(stored: StoredVectors, embedder: Embedder, missing: int, seconds: float | None) -> int:
    """A progress bar on a terminal; plain output when piped."""
    from bot.search.backfill import embed_pending

    if not sys.stderr.isatty():
        return embed_pending(stored, embedder, seconds=seconds)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as progress:
        task = progress.add_task(f"embedding with {embedder.name}", total=missing or None)
        return embed_pending(stored, embedder, progress=lambda done: progress.update(task, completed=done),
                             seconds=seconds)
