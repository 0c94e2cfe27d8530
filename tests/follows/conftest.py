"""Fixtures for the follows: fake arXiv and OpenAlex on 127.0.0.1, services whose
follow clients reach them without waiting (no host spacing, no back-off sleeps), and a
clock tests move."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from adapters.console import ConsoleSession
from adapters.fakes.arxiv import FakeArxiv
from adapters.fakes.openalex import FakeOpenAlex
from bot.app import build_services
from bot.corpus.fetch import Fetcher, FetchPolicy, HostLimiter
from bot.follows.clients import FollowClients, FollowUrls
from tests.clock import Clock

CONTACT = "club@example.org"


def quick_fetcher(timeout: float = 5.0, attempts: int = 3) -> Fetcher:
    """The fetcher's manners (retries, Retry-After, caps), without the waiting: the
    sleeps it asks for are recorded instead."""
    fetcher = Fetcher(FetchPolicy(max_attempts=attempts, timeout=timeout, page_size=2, max_entries=500),
                      limiter=HostLimiter(0.0), agent="paperclub-test (club@example.org)")
    fetcher.slept = []
    fetcher.sleep = fetcher.slept.append
    return fetcher


def clients(arxiv: FakeArxiv, openalex: FakeOpenAlex, fetcher: Fetcher | None = None) -> FollowClients:
    urls = FollowUrls(arxiv.url, openalex.base, CONTACT)
    return FollowClients(urls, fetcher or quick_fetcher(), quick_fetcher(attempts=1))


@pytest.fixture
def fake_arxiv():
    with FakeArxiv() as fake:
        yield fake


@pytest.fixture
def fake_openalex():
    with FakeOpenAlex() as fake:
        yield fake


@pytest.fixture
def clock():
    return Clock(datetime(2026, 11, 26, 7, 0, tzinfo=timezone.utc))  # a Thursday


@pytest.fixture
def make_services(db, database_url, fake_arxiv, fake_openalex, clock):
    made = []

    def make(fetcher: Fetcher | None = None):
        services = build_services(database_url, clock=clock,
                                  given=[clients(fake_arxiv, fake_openalex, fetcher)])
        made.append(services)
        return services

    yield make
    for services in made:
        services.db.dispose()


@pytest.fixture
def services(make_services):
    return make_services()


def manager(services, channel: str = "ml") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user="alice", manager=True)


def member(services, channel: str = "ml") -> ConsoleSession:
    return ConsoleSession(services.core, channel=channel, user="bob")
