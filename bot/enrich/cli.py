"""`paperclub enrich`: one run of the enrichment at once, whatever PAPERCLUB_ENRICH says,
printing what it did.

    paperclub enrich              # up to 100 papers
    paperclub enrich --limit 2000 # the whole demo library
"""

from __future__ import annotations

import argparse

LIMIT_MOST = 100_000
RUN_SECONDS = 1_800.0  # a run from the command line: half an hour at most, waits included


def _limit(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= LIMIT_MOST:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of papers from 1 to {LIMIT_MOST:,}")
    return int(text)


def cmd_enrich(args: argparse.Namespace) -> int:
    # Here, not above: `paperclub --help` loads no database layer.
    import os
    from datetime import datetime, timezone

    from bot.corpus.library import Library
    from bot.enrich.commands import title_search
    from bot.enrich.enrich import Enricher
    from store import open_database

    client = title_search(os.environ)
    db = open_database(args.database_url)
    enricher = Enricher(db, Library(db), None, client)
    outcome = enricher.run(datetime.now(timezone.utc), args.limit, seconds=RUN_SECONDS)
    print(f"paperclub enrich: {outcome.line()}")
    standing = enricher.status()
    if standing:
        print("papers asked so far: " + ", ".join(f"{n:,} {state}" for state, n in sorted(standing.items())))
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("enrich", help="fill in links, DOIs, years and venues from OpenAlex, now, for papers that "
                                      "lack them (matched by title and authors; what a person gave is kept)")
    p.add_argument("--limit", type=_limit, default=100, metavar="N",
                   help="ask about N papers at most (default: 100)")
    p.set_defaults(func=cmd_enrich)
