"""The weekly digest by meaning, end to end: a follow's papers fetched from the fake arXiv
by the tick and embedded as `paperclub embed` embeds them are listed in the digest the
scheduler posts in the order of the channel's profile (what its members voted up), with
the real model; by words alone the channel, which has no topics, gets the newest first
(tests/follows/sea.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import pytest

from adapters.fakes.arxiv import FakeArxiv
from adapters.fakes.openalex import FakeOpenAlex
from bot.app import Services, build_services
from bot.search.hybrid import HybridSearcher
from tests.clock import Clock
from tests.conftest import MINILM
from tests.digest.scene import Delivery
from tests.follows.conftest import clients
from tests.follows.sea import BY_MEANING, NEWEST_FIRST, sea_channel

THURSDAY = datetime(2026, 11, 26, 7, 0, tzinfo=timezone.utc)
NEXT_MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)  # the channel's digest: Mondays 09:00 UTC


@pytest.fixture
def following(db, database_url) -> Iterator[Callable[[], tuple[Services, FakeArxiv, Clock]]]:
    """Services on the database whose follows reach a fake arXiv, with the clock they
    read, made when the test asks (after it set the environment they are wired from)."""
    clock = Clock(THURSDAY)
    made: list[Services] = []
    with FakeArxiv() as arxiv, FakeOpenAlex() as openalex:

        def make() -> tuple[Services, FakeArxiv, Clock]:
            made.append(build_services(database_url, clock=clock, given=[clients(arxiv, openalex)]))
            return made[-1], arxiv, clock

        yield make
    for services in made:
        services.db.dispose()


def digest_of_the_follows(services: Services, clock: Clock) -> list[str]:
    """The titles the week's digest lists under "New from your follows", in its order."""
    clock.now = NEXT_MONDAY
    delivery = Delivery()
    assert services.core.tick(clock.now, delivery, ["console"])["digests"] == 1
    (_channel, digest), = delivery.digests()
    (section,) = [s for s in digest.sections if s.title.startswith("New from your follows")]
    assert section.title == f"New from your follows ({len(BY_MEANING)} papers, all)"
    # Each line: "[number] title: why it came".
    numbers = [int(line[1:].split("]", 1)[0]) for line in section.lines]
    papers = services.library.get_many(numbers)
    assert all(line.startswith(f"[{n}] {papers[n].title}: ") for n, line in zip(numbers, section.lines, strict=True))
    return [papers[n].title for n in numbers]


def test_the_digest_lists_the_weeks_papers_closest_to_the_channels_profile_first(following, minilm, monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "on")
    monkeypatch.setenv("PAPERCLUB_MODEL_DIR", str(MINILM))
    services, arxiv, clock = following()
    sea_channel(services, arxiv, clock.now, minilm)
    assert isinstance(services.search.current(), HybridSearcher)
    assert digest_of_the_follows(services, clock) == [title for title, _ in BY_MEANING]


def test_by_words_alone_the_digest_lists_them_newest_first(following, monkeypatch):
    monkeypatch.setenv("PAPERCLUB_EMBEDDINGS", "off")
    services, arxiv, clock = following()
    sea_channel(services, arxiv, clock.now, None)
    assert digest_of_the_follows(services, clock) == NEWEST_FIRST
