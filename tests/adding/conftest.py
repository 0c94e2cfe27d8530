"""A core wired to the fake providers, on SQLite and PostgreSQL."""

from __future__ import annotations

import socket
from datetime import datetime, timezone

import pytest
from sqlalchemy import func, select

from bot.adding.addresses import any_address
from bot.adding.providers import Providers, ProviderUrls
from bot.adding.web import ChatFetcher, ChatFetchPolicy
from bot.app import build_services
from bot.messages import ChannelRef, Incoming, Reply, UserRef
from bot.services.models import Addition
from store.models import Paper, PaperExternalId, PaperSource
from tests.adding.fake_providers import FakeProviders

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)
# Tests do not wait between requests. The budget is wide: the fakes answer in
# milliseconds, but a loaded CI machine running PostgreSQL beside three workers once
# took over a second, and `add` then answered with no card. A test of the budget itself
# sets its own (QUICK_POLICY).
POLICY = ChatFetchPolicy(timeout=10.0, spacing=0.0)
QUICK_POLICY = ChatFetchPolicy(timeout=1.0, spacing=0.0)


@pytest.fixture(scope="session")
def fake():
    with FakeProviders() as providers:
        yield providers


def providers_for(fake: FakeProviders, prefix: str = "", addresses=any_address, policy=POLICY) -> Providers:
    env = fake.env(prefix)
    urls = ProviderUrls(env["PAPERCLUB_ARXIV_API_URL"], env["PAPERCLUB_CROSSREF_API_URL"],
                        env["PAPERCLUB_OPENREVIEW_API_URL"])
    return Providers(urls, ChatFetcher(policy, addresses=addresses))


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def built(db, database_url, fake):  # `db`: the schema, on SQLite and PostgreSQL
    services = build_services(database_url, clock=lambda: NOW)
    services.feature("adding").providers = providers_for(fake)
    yield services
    services.db.dispose()


def say(built, text: str, manager: bool = True, user: str = "ann", workspace: str = "local",
        channel: str = "reading") -> Reply:
    member = UserRef("console", user, user.title(), is_manager=manager)
    return built.core.handle(Incoming(ChannelRef("console", workspace, channel), member, text))


def click(built, value: str, manager: bool = True, user: str = "ann") -> Reply:
    member = UserRef("console", user, user.title(), is_manager=manager)
    return built.core.click(Incoming(ChannelRef("console", "local", "reading"), member, value))


def counts(db) -> dict[str, int]:
    """Rows an add may write: papers, their sources and ids, additions."""
    with db.session() as session:
        return {model.__tablename__: session.scalar(select(func.count()).select_from(model))
                for model in (Paper, PaperSource, PaperExternalId, Addition)}


def stored(db) -> dict[str, int]:
    """Rows that hold papers: what a failed add must not change (its `additions` row,
    which counts toward the member's hour, it does write)."""
    return {table: n for table, n in counts(db).items() if table != "additions"}
