"""Fixtures for the enrichment: a fake OpenAlex on 127.0.0.1, services whose enrichment
reaches it without waiting (no host spacing, no back-off sleeps) and runs in the
background (PAPERCLUB_ENRICH=on), and a clock tests move."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from adapters.fakes.openalex import FakeAuthor, FakeOpenAlex, FakeWork
from bot.app import build_services
from bot.corpus.fetch import Fetcher, FetchPolicy, HostLimiter
from bot.corpus.records import PaperRecord
from bot.enrich.openalex import TitleSearch
from tests.clock import Clock

CONTACT = "club@example.org"
ON = {"PAPERCLUB_ENRICH": "on", "PAPERCLUB_ENRICH_EVERY": "60"}


def quick_fetcher(attempts: int = 2, timeout: float = 5.0) -> Fetcher:
    """The fetcher's manners without the waiting: the sleeps it asks for are recorded."""
    fetcher = Fetcher(FetchPolicy(max_attempts=attempts, timeout=timeout, max_retry_after=30.0),
                      limiter=HostLimiter(0.0), agent="paperclub-test (club@example.org)")
    fetcher.slept = []
    fetcher.sleep = fetcher.slept.append
    return fetcher


def work(n: int, title: str, authors: list[str], year: int = 2021, **more) -> FakeWork:
    """A work at an ICLR-like venue, with a landing page, a PDF and a DOI."""
    people = [FakeAuthor(f"A{n}{i:02d}", name) for i, name in enumerate(authors)]
    given = {"venue": "International Conference on Learning Representations",
             "landing": f"https://openreview.net/forum?id=f{n}", "pdf": f"https://openreview.net/pdf?id=f{n}",
             "doi": f"10.5555/test.{n}", "cited_by": 10 * n, **more}
    return FakeWork(f"W{n}", title, published=f"{year}-05-01", authors=people, **given)


def record(title: str, authors: list[str] = (), **more) -> PaperRecord:
    return PaperRecord(title=title, authors=list(authors), **more)


@pytest.fixture
def fake():
    with FakeOpenAlex() as server:
        yield server


@pytest.fixture
def clock():
    return Clock(datetime(2026, 11, 26, 7, 0, tzinfo=timezone.utc))


@pytest.fixture
def make_services(db, database_url, fake, clock):
    made = []

    def make(fetcher: Fetcher | None = None, env: dict | None = None):
        client = TitleSearch(fake.base, fetcher or quick_fetcher(), CONTACT)
        services = build_services(database_url, clock=clock, given=[client], env={**ON, **(env or {})})
        made.append(services)
        return services

    yield make
    for services in made:
        services.db.dispose()


@pytest.fixture
def services(make_services):
    return make_services()
