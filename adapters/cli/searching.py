"""`paperclub search`: the library and its index alone. A search needs no feature, so
it loads none of them (nor their settings): a one-line search is mostly start-up. The
database is opened before the search engine loads (as adapters.cli.commands does)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, TextIO

from store import open_database

if TYPE_CHECKING:
    from bot.corpus.library import Library
    from bot.search.engine import Hit, SearchBackend, Searcher


def open_search(url: str | None, short_lived: bool = False, meaning: bool = True) -> tuple[Library, SearchBackend]:
    """The library and its search engine, as bot.app wires them for the bot;
    `short_lived` for a command that does one thing and exits; without `meaning`, words
    alone (an import, which only brings the index up to date, loads no model)."""
    db = open_database(url)
    from bot.corpus.library import Library
    from bot.search.builtin import service
    from bot.search.embedding import EmbeddingConfig
    from bot.search.hybrid import with_meaning
    from bot.search.vectors import import_rules

    library = Library(db, vectors=import_rules(EmbeddingConfig.from_env()))
    words = service.open_search(library, short_lived)
    return library, with_meaning(words, db) if meaning else words


def cmd_search(args: argparse.Namespace) -> int:
    # One query: numpy's loops, as importing numba would cost more than the query.
    library, search = open_search(args.database_url, short_lived=not args.batch, meaning=not args.lexical)
    if args.batch:
        return run_batch(search, args.batch, args.k)
    text = " ".join(args.query)
    if not text.strip():
        print("usage: paperclub search QUERY [-k N] [--json]  (or --batch FILE|-)", file=sys.stderr)
        return 2
    return _print_search(library, search, text, args)


def _print_search(library: Library, search: SearchBackend, text: str, args: argparse.Namespace) -> int:
    from adapters.console import render_card
    from bot.cards.cards import card
    from bot.search.query import Query, QueryError

    try:
        query = Query.parse(text)
    except QueryError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    index = search.current()
    hits = index.search(query, args.k)
    papers = library.get_many(h.paper_id for h in hits)
    sources = getattr(args, "sources", False)
    cards = [card(papers[h.paper_id], search.tokenizer, h, sources=sources) for h in hits]
    if args.json:
        print(json.dumps({"query": text, "hits": [c.__dict__ for c in cards]}, ensure_ascii=False))
    elif not cards:
        print(f"No papers match `{text}`.")
    else:
        print("\n\n".join(render_card(c, operator=True) for c in cards))  # the operator's tool: scores
    return 0


def run_batch(search: SearchBackend, source: str, k: int) -> int:
    """One query a line in, one JSON line out, all against one loaded index."""
    from bot.search.query import Query, QueryError

    index = search.current()
    stream: TextIO = sys.stdin if source == "-" else open(source, encoding="utf-8")  # noqa: SIM115 - closed by the with below
    searched = 0.0
    count = 0
    with stream:
        for line in stream:
            text = line.strip()
            if not text:
                continue
            started = time.perf_counter()
            try:
                hits = index.search(Query.parse(text), k)
                result = {"query": text, "hits": [_batch_hit(index, h) for h in hits]}
            except QueryError as problem:
                result = {"query": text, "error": str(problem), "hits": []}
            searched += time.perf_counter() - started
            count += 1
            print(json.dumps(result, ensure_ascii=False))
    print(f"{count} queries, {searched * 1000:.1f} ms search time", file=sys.stderr)
    return 0


def _batch_hit(index: Searcher, hit: Hit) -> dict[str, object]:
    return {"id": hit.paper_id, "title": index.title(hit.paper_id), "score": hit.score}
