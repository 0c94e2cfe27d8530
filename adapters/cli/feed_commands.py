"""What each `paperclub feed` action does (its parser: adapters.cli.feeds)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from datetime import datetime, timezone

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
    feeds = Feeds(services.db, services.feed_sources)
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
    rows = Feeds(services.db, services.feed_sources).list()
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
    feeds = Feeds(services.db, services.feed_sources)
    if not feeds.remove(args.collection):
        return _unknown(feeds, args.collection)
    print(f"feed {args.collection} removed (its papers stay in the collection)")
    return 0


def cmd_feed_refresh(args: argparse.Namespace) -> int:
    services = _services(args)
    feeds = Feeds(services.db, services.feed_sources)
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
