"""`paperclub status`: the library the operator is looking at, in a few lines: its
papers, its search index, how far it is embedded, its channels and follows. It only
reads: no index is built or loaded, no model is loaded, and a SQLite file that is not
there is an error rather than a new, empty library."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.corpus.library import Library
    from bot.search.engine import SearchBackend
    from store import Database


def cmd_status(args: argparse.Namespace) -> int:
    from adapters.cli.main import database_source, fail
    from store import Database, resolve_database_url

    db = Database(args.database_url or resolve_database_url())
    if _missing_file(db):
        _given, source = database_source(args)
        return fail(f"{source}: no database at {db.describe()}: nothing was imported there yet "
                    "(`paperclub import FILE` makes one)")
    db.ensure_schema()
    from bot.corpus.library import Library
    from bot.search.builtin.service import open_search

    library = Library(db)
    print("\n".join(report(db, library, open_search(library, short_lived=True))))
    return 0


def report(db: Database, library: Library, search: SearchBackend) -> list[str]:
    """The report's lines."""
    from bot.messages import counted

    collections = library.collections()
    papers = library.count()
    return [
        f"Library: {db.describe()}",
        f"Papers: {papers:,} in {counted(len(collections), 'collection')}",
        f"Search index: {_index(search)}",
        f"Embeddings: {_embeddings(db)}",
        _channels(db),
    ]


def _index(search: SearchBackend) -> str:
    from bot.messages import counted

    stored = search.stored_index()
    where = f" ({search.location()})" if search.location() else ""
    if stored is None:
        return f"not built yet: the next search or `paperclub import` builds it{where}"
    state = "up to date" if stored.current else "behind the library: the next search or import updates it"
    return f"{counted(stored.papers, 'paper')}, {state}{where}"


def _embeddings(db: Database) -> str:
    from bot.corpus.embedded import StoredVectors
    from bot.messages import counted
    from bot.search.backfill import backlog
    from bot.search.embedding import EmbeddingConfig
    from bot.search.params import SWITCH

    try:
        config = EmbeddingConfig.from_env()
    except ValueError as problem:
        return str(problem)
    done = backlog(StoredVectors(db), config.model)
    progress = f"{done.embedded:,} of {counted(done.papers, 'paper')} have a vector"
    if not config.enabled:
        return f"off ({SWITCH}=off: words alone); model {config.model}: {progress}"
    where = f" from {config.model_dir}" if config.model_dir else ""
    todo = f", {done.missing:,} to embed (`paperclub embed`)" if done.missing else ", none to embed"
    return f"on; model {config.model}{where}: {progress}{todo}"


def _channels(db: Database) -> str:
    from sqlalchemy import func, select

    from bot.follows.models import Follow
    from store.models import Channel

    with db.session() as session:
        channels = session.scalar(select(func.count(Channel.id))) or 0
        follows = session.scalar(select(func.count(Follow.id))) or 0
    return f"Channels: {channels:,}; follows: {follows:,}"


def _missing_file(db: Database) -> bool:
    """A SQLite file that is not there (opening it would make an empty one)."""
    if not db.is_sqlite:
        return False
    path = db.engine.url.database
    return bool(path) and path != ":memory:" and not os.path.exists(path)
