"""`paperclub feed`: collections refreshed from a feed URL on a cron (bot.corpus.feeds).

    paperclub feed add cs-lg \
        "https://export.arxiv.org/api/query?search_query=cat:cs.LG&sortBy=submittedDate&sortOrder=descending" \
        --cron "0 6 * * *"
    paperclub feed list
    paperclub feed refresh [COLLECTION]
    paperclub feed remove cs-lg

The running scheduler (`paperclub serve`) refreshes every enabled feed when its cron fires.
"""

from __future__ import annotations

import argparse

from adapters.cli.lazy import Lazy
from bot.corpus.formats import EXAMPLE_FEED_URL, FORMAT_NAMES


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
        epilog=f"example:\n  paperclub feed add cs-lg \\\n    '{EXAMPLE_FEED_URL}' \\\n    --cron '0 6 * * *'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument("collection", metavar="COLLECTION", help="collection the papers go into")
    q.add_argument("url", metavar="URL", help="http(s) feed URL (arXiv API queries are paged politely), or "
                   "zotero:GROUP[/COLLECTION]: a Zotero group's collection (key: $PAPERCLUB_ZOTERO_API_KEY)")
    q.add_argument(
        "--cron", required=True,
        help='when to refresh: a five-field crontab in UTC (minute hour day month weekday), e.g. "0 6 * * *"',
    )
    q.add_argument(
        "--format", choices=sorted(FORMAT_NAMES), help="read the feed as this format (default: detect)"
    )
    q.set_defaults(func=Lazy("adapters.cli.feed_commands:cmd_feed_add"))

    q = feed.add_parser("list", help="the feeds, their schedule and last run")
    q.add_argument("--json", action="store_true", help="one JSON object a line")
    q.set_defaults(func=Lazy("adapters.cli.feed_commands:cmd_feed_list"))

    q = feed.add_parser("remove", help="stop refreshing a collection (its papers stay)")
    q.add_argument("collection", metavar="COLLECTION", help="the collection whose feed stops (as `feed list` names it)")
    q.set_defaults(func=Lazy("adapters.cli.feed_commands:cmd_feed_remove"))

    q = feed.add_parser(
        "refresh", help="refresh now: one feed, or every enabled feed (exit 1 if any failed)"
    )
    q.add_argument("collection", metavar="COLLECTION", nargs="?", help="only this feed")
    q.add_argument(
        "--max-entries", type=_positive,
        help="most entries to fetch from an arXiv query (default: $PAPERCLUB_FEED_MAX_ENTRIES or 500)",
    )
    q.set_defaults(func=Lazy("adapters.cli.feed_commands:cmd_feed_refresh"))
