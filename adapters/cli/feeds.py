"""`paperclub feed`: collections refreshed from a feed URL on a cron (bot.corpus.feeds).

    paperclub feed add cs-lg "https://export.arxiv.org/api/query?search_query=cat:cs.LG&sortBy=submittedDate&sortOrder=descending" --cron "0 6 * * *"
    paperclub feed list
    paperclub feed refresh [COLLECTION]
    paperclub feed remove cs-lg

The running scheduler (`paperclub serve`) refreshes every enabled feed when its cron fires.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from datetime import datetime, timezone

from bot.corpus import feeds as feeds_module
from bot.corpus.feeds import FeedError, Feeds, next_run, refresh
from bot.corpus.fetch import Fetcher, FetchPolicy, is_arxiv_query
from store.database import as_utc


def _services(args: argparse.Namespace):
    from bot.app import build_services

    return build_services(getattr(args, "database_url", None))


def make_fetcher(max_entries: int | None = None) -> Fetcher:
    """The fetcher `feed refresh` uses (tests replace it)."""
    policy = FetchPolicy.from_env()
    if max_entries:
        policy = dataclasses.replace(policy, max_entries=max_entries)
    return Fetcher(policy)


def _utc(moment: datetime | None) -> str:
    if moment is None:
        return "never"
    return f"{as_utc(moment).astimezone(timezone.utc):%Y-%m-%d %H:%M}Z"


def _unknown(feeds: Feeds, collection: str) -> int:
    names = [f.collection for f in feeds.list()]
    known = f" (feeds: {', '.join(names)})" if names else " (there are no feeds: add one with `paperclub feed add`)"
    print(f"error: no feed for collection {collection!r}{known}", file=sys.stderr)
    return 1


def cmd_feed_add(args: argparse.Namespace) -> int:
    services = _services(args)
    feeds = Feeds(services.db)
    existed = feeds.get(args.collection) is not None
    try:
        feed = feeds.add(args.collection, args.url, args.cron, args.format)
    except FeedError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    print(
        f"feed {feed.collection} {'updated' if existed else 'added'}: {feed.url}\n"
        f"  cron {feed.cron!r} (UTC), next run {_utc(next_run(feed))}, "
        f"format {feed.format or 'detected'}"
    )
    if is_arxiv_query(feed.url) and "sortby=submitteddate" not in feed.url.lower():
        print(
            "  note: without sortBy=submittedDate&sortOrder=descending the arXiv API returns the "
            "best matches, not the newest papers",
            file=sys.stderr,
        )
    print("  run it now with: paperclub feed refresh " + feed.collection, file=sys.stderr)
    return 0


def cmd_feed_list(args: argparse.Namespace) -> int:
    services = _services(args)
    rows = Feeds(services.db).list()
    if args.json:
        for feed in rows:
            print(json.dumps({
                "collection": feed.collection, "url": feed.url, "cron": feed.cron,
                "format": feed.format, "enabled": feed.enabled,
                "next_run": _utc(next_run(feed)) if feed.enabled else None,
                "last_run_at": _utc(feed.last_run_at) if feed.last_run_at else None,
                "last_status": feed.last_status, "last_message": feed.last_message,
            }, ensure_ascii=False))
        return 0
    if not rows:
        print("no feeds; add one with: paperclub feed add COLLECTION URL --cron \"0 6 * * *\"")
        return 0
    for feed in rows:
        state = f"next {_utc(next_run(feed))}" if feed.enabled else "disabled"
        last = f"last {_utc(feed.last_run_at)} {feed.last_status}" if feed.last_run_at else "never run"
        print(f"{feed.collection}  [{feed.cron}] UTC  {state}  {last}")
        print(f"  {feed.url}" + (f"  (format {feed.format})" if feed.format else ""))
        if feed.last_message:
            print(f"  {feed.last_message}")
    return 0


def cmd_feed_remove(args: argparse.Namespace) -> int:
    services = _services(args)
    feeds = Feeds(services.db)
    if not feeds.remove(args.collection):
        return _unknown(feeds, args.collection)
    print(f"feed {args.collection} removed (its papers stay in the collection)")
    return 0


def cmd_feed_refresh(args: argparse.Namespace) -> int:
    services = _services(args)
    feeds = Feeds(services.db)
    if args.collection:
        feed = feeds.get(args.collection)
        if feed is None:
            return _unknown(feeds, args.collection)
        chosen = [feed]
    else:
        chosen = [f for f in feeds.list() if f.enabled]
        if not chosen:
            print("no enabled feeds to refresh")
            return 0
    try:
        fetcher = make_fetcher(args.max_entries)
    except FeedError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    failed = 0
    for feed in chosen:
        result = refresh(services, feed, fetcher=fetcher, update_index=False)
        print(f"{feed.collection}: {result.status}: {result.message}")
        failed += not result.ok
    from adapters.cli import search as search_cli

    search_cli.update_index(services.search)
    return 1 if failed else 0


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("must be a whole number of at least 1")
    return int(value)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "feed",
        help="collections refreshed from a feed URL (e.g. the arXiv API) on a cron",
        description="Feeds keep a collection up to date: the scheduler (paperclub serve) fetches "
        "each feed's URL when its cron fires (UTC) and imports it into the collection.",
    )
    feed = p.add_subparsers(dest="feed_command", required=True, metavar="ACTION")

    q = feed.add_parser(
        "add",
        help="add a feed, or change the collection's feed",
        description="Add a feed for COLLECTION, or change the URL, cron and format of its feed.",
        epilog=f"example:\n  paperclub feed add cs-lg \\\n    '{feeds_module.EXAMPLE_URL}' \\\n    --cron '0 6 * * *'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument("collection", metavar="COLLECTION", help="collection the papers go into")
    q.add_argument("url", metavar="URL", help="http(s) feed URL; arXiv API queries are paged politely")
    q.add_argument(
        "--cron", required=True,
        help='when to refresh: a five-field crontab in UTC (minute hour day month weekday), e.g. "0 6 * * *"',
    )
    q.add_argument(
        "--format", choices=sorted(feeds_module.FORMATS), help="read the feed as this format (default: detect)"
    )
    q.set_defaults(func=cmd_feed_add)

    q = feed.add_parser("list", help="the feeds, their schedule and last run")
    q.add_argument("--json", action="store_true", help="one JSON object a line")
    q.set_defaults(func=cmd_feed_list)

    q = feed.add_parser("remove", help="stop refreshing a collection (its papers stay)")
    q.add_argument("collection", metavar="COLLECTION", help="the collection whose feed stops (as `feed list` names it)")
    q.set_defaults(func=cmd_feed_remove)

    q = feed.add_parser(
        "refresh", help="refresh now: one feed, or every enabled feed (exit 1 if any failed)"
    )
    q.add_argument("collection", metavar="COLLECTION", nargs="?", help="only this feed")
    q.add_argument(
        "--max-entries", type=_positive,
        help="most entries to fetch from an arXiv query (default: $PAPERCLUB_FEED_MAX_ENTRIES or 500)",
    )
    q.set_defaults(func=cmd_feed_refresh)
