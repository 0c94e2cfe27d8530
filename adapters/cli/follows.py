"""`paperclub bench-ingest`: the follows' daily ingest timed on fakes (adapters/bench/ingest.py)."""

from __future__ import annotations

import argparse


def cmd_bench_ingest(args: argparse.Namespace) -> int:
    from adapters.bench.ingest import run_ingest_bench  # the bench extra: loaded only here

    # paperclub --database-url URL bench-ingest: that (empty) database; default: a temporary SQLite file.
    result = run_ingest_bench(getattr(args, "database_url", None), args.papers, args.follows)
    print(result.line())
    return 0 if result.searchable and result.arrived == args.papers else 1


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench-ingest", help="time a day of new papers for many follows, ingested and searchable")
    p.add_argument("--papers", type=int, default=2000, help="new papers that day (default 2000)")
    p.add_argument("--follows", type=int, default=100, help="follows: arXiv categories and authors (default 100)")
    p.set_defaults(func=cmd_bench_ingest)
