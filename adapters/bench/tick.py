"""`paperclub tick-bench`: one tick with many channels due in the same minute.

Setup (a corpus, N scheduled channels) is not timed; the tick is, and a second tick at
the same instant checks that nothing is posted twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import insert

from bot.app import build_services
from bot.channels.schedule import WEEKDAYS
from store.models import Channel, utcnow

TOPIC_SETS = [
    [],
    ["reinforcement learning"],
    ["diffusion models", "image generation"],
    ["graph neural networks"],
    ["language models", "reasoning"],
    ["continual learning"],
    ["robustness", "adversarial examples"],
]
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]


@dataclass
class TickBenchResult:
    database: str
    channels: int
    posted: int
    seconds: float
    second_tick_posted: int

    def line(self) -> str:
        rate = self.posted / self.seconds if self.seconds else 0.0
        return (
            f"{self.database}: {self.channels:,} channels due, {self.posted:,} posted in {self.seconds:.1f} s "
            f"({rate:,.0f} posts/s); a second tick posted {self.second_tick_posted}"
        )


def run_tick_bench(url: str, channels: int, at: datetime | None = None) -> TickBenchResult:
    services = build_services(url)
    if services.library.count() == 0:
        corpus = resources.files("bot") / "demo_corpus"
        for name in ("iclr2021-openreview.md", "iclr2023-poster-session.txt", "trending-papers.txt"):
            with resources.as_file(corpus / name) as path:
                services.library.import_file(Path(path))
    at = at or datetime(2026, 11, 23, 12, 0, 30, tzinfo=timezone.utc)
    _create_due_channels(services, channels, at)
    services.search.current()  # the index is built at start-up in a real process, not per tick
    sink = lambda channel, reply: f"bench:{channel.channel}"  # noqa: E731 - a delivery that only acknowledges
    started = time.perf_counter()
    report = services.posts.tick(at, sink, ["bench"])
    seconds = time.perf_counter() - started
    again = services.posts.tick(at, sink, ["bench"])
    services.db.dispose()
    return TickBenchResult(services.db.describe(), channels, len(report.posted), seconds, len(again.posted))


def _create_due_channels(services, count: int, at: datetime) -> None:
    """`count` channels whose local post time is the minute of `at`, in several zones."""
    rows = []
    for n in range(count):
        zone = ZONES[n % len(ZONES)]
        local = at.astimezone(ZoneInfo(zone))
        rows.append({
            "platform": "bench", "workspace": "w", "channel": f"c{n}",
            "post_time": f"{local:%H:%M}", "timezone": zone, "days": ",".join(WEEKDAYS), "enabled": True,
            "topics": TOPIC_SETS[n % len(TOPIC_SETS)], "collections": [],
            "created_at": utcnow(), "updated_at": utcnow(),
        })
    with services.db.session() as session:
        for start in range(0, len(rows), 1000):
            session.execute(insert(Channel), rows[start : start + 1000])

