"""A week of a reading group, made the way members and the scheduler make it: a schedule,
a digest plan, a week of daily posts with votes, a poll, a meeting and an added paper."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from adapters.console import ConsoleSession
from bot.app import Services, build_services
from bot.messages import ChannelRef, DeliveryRefused, Reply
from tests.clock import Clock
from tests.conftest import SEED_FILES

UTC = timezone.utc
MONDAY = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)  # 09:00 in Berlin
NEXT_MONDAY = MONDAY + timedelta(days=7)


class Delivery:
    """Records what was posted where; fails the first `fail` posts (`refuse`: for good)."""

    def __init__(self, fail: int = 0, refuse: bool = False):
        self.posts: list[tuple[ChannelRef, Reply]] = []
        self.fail = fail
        self.refuse = refuse

    def __call__(self, channel: ChannelRef, reply: Reply) -> str:
        if self.fail:
            self.fail -= 1
            raise DeliveryRefused("channel_not_found", permanent=True) if self.refuse else ConnectionError("down")
        self.posts.append((channel, reply))
        return f"msg-{len(self.posts)}"

    def digests(self) -> list[tuple[ChannelRef, Reply]]:
        return [(c, r) for c, r in self.posts if r.text.startswith(("Weekly digest", "Quiet week"))]


ADDED = {"title": "Okapi Attention for Reading Groups", "authors": ["Ada Lovelace"], "year": 2021,
         "abstract": "Attention over what a group read.", "url": "https://arxiv.org/abs/2101.00001",
         "external_ids": {"arxiv": "2101.00001"}}


def services(url: str, clock: Clock, tmp_path: Path, corpus: bool = True) -> Services:
    built = build_services(url, clock=clock, ensure_schema=False)
    built.db.upgrade()
    if corpus and not built.library.collections():
        built.library.import_file(SEED_FILES["trending"], collection="trending")
        extra = tmp_path / "added.jsonl"
        extra.write_text(json.dumps(ADDED) + "\n")
        built.library.import_file(extra, collection="library")
    return built


def manager(services: Services, channel: str = "general") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user="alice", manager=True)


def member(services: Services, channel: str = "general", user: str = "ann") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user=user)


def busy_week(services: Services, clock: Clock, delivery: Delivery, channel: str = "general") -> None:
    """From Monday 23 November to Sunday 29: seven papers of the day, a vote, a poll that
    closes on Wednesday, Thursday's meeting on its winner, and a paper added by a member.
    The digest plan (Mondays 09:00 Berlin) is set after Monday's slot has passed."""
    boss, ann = manager(services, channel), member(services, channel)
    assert boss.send("schedule 09:00 Europe/Berlin daily").ok
    assert boss.send("session every thu 17:00 Europe/Berlin").ok and boss.send("presenters add @ann @ben").ok
    for day in range(7):
        clock.now = MONDAY + timedelta(days=day)
        services.core.tick(clock.now, delivery, ["console"])
        if day == 0:
            first = delivery.posts[0][1].cards[0].paper_id
            assert ann.send(f"vote {first} up").ok
            assert boss.send("poll 3 2d").ok and ann.send("vote 1").ok
        if day == 2:  # in the library already: found there, no fetch
            assert "Okapi Attention" in ann.send("add arXiv:2101.00001").cards[0].title
            clock.now = MONDAY + timedelta(days=2, hours=8)  # Wed 17:00 Berlin: the day-before reminder
            services.core.tick(clock.now, delivery, ["console"])
    clock.now = MONDAY + timedelta(days=6, hours=12)
    assert boss.send("digest mon 09:00").ok


def giant_sections() -> list:
    """More than any platform takes in one message: nine sections of fourteen long lines
    (markup and a mention in them), with three full cards."""
    from bot.feature import DigestSection
    from bot.messages import PaperCard

    word = "représentation <b>&amp; @here "
    cards = [PaperCard(n, f"Paper {n} " + "long title " * 30, url=f"https://example.org/{n}",
                       authors_display="Ada Lovelace, Alan Turing", venue="ICLR 2026 " * 20,
                       snippet=word * 200, reason="new on arXiv " * 40) for n in range(1, 4)]
    return [DigestSection(f"Part {s} " + "title " * 40,
                          [f"[{s * 100 + n}] " + word * 16 for n in range(14)], cards=cards if s == 0 else [],
                          papers=tuple(s * 100 + n for n in range(14))) for s in range(9)]
