"""Issue 45 (items 6 and 7): junk from the providers. One bad work is skipped, said once in
the log (which follow, which work, why) and in `following`, while the rest arrive and the
mark moves; an unreadable author or JSON nested past reason is a clear refusal, never a
traceback or "Something went wrong". On SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from datetime import timedelta, timezone

import pytest
from sqlalchemy import select

from adapters.fakes.arxiv import ArxivPaper
from adapters.fakes.openalex import FakeAuthor, FakeWork
from bot.follows.models import Follow, FollowArrival
from tests.follows.conftest import manager

UTC = timezone.utc
LECUN = FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600)
HUGE = "x" * 5_000_000


def nothing(channel, reply):
    raise AssertionError("the ingest posts nothing")


def arrived(services) -> list[str]:
    with services.db.session() as session:
        return sorted(session.scalars(select(FollowArrival.reason)).all())


@pytest.mark.parametrize("changes, why", [
    ({"title": "Broken\x00title", "display_name": "Broken\x00title"}, "NUL character"),
    ({"primary_location": "https://example.org/w2"}, "primary_location is a string, not an object"),
    ({"referenced_works": [12345]}, "referenced_works holds a number, not a string"),
    ({"title": HUGE, "display_name": HUGE}, "the title is 5,000,000 characters long"),
    ({"publication_year": "2026"}, "publication_year is a string, not a whole number"),
    ({"authorships": [{"author": {"display_name": ["Yann", "LeCun"]}}]}, "display_name is a list, not a string"),
    ({"abstract_inverted_index": {"word": "0"}}, "abstract_inverted_index"),
    ({"doi": 10.1}, "doi is a number, not a string"),
])
def test_one_bad_work_is_skipped_and_the_rest_arrive_and_the_mark_moves(make_services, fake_openalex, clock, caplog,
                                                                         changes, why):
    services = make_services()
    fake_openalex.authors.append(LECUN)
    fake_openalex.works += [
        FakeWork("W1", "Good work one", "Fine.", "2026-11-25", [LECUN]),
        FakeWork("W2", "Bad work", "Junk.", "2026-11-25", [LECUN], changes=changes),
        FakeWork("W3", "Good work three", "Fine too.", "2026-11-25", [LECUN], cites=["W1"]),
    ]
    session = manager(services)
    assert session.send("follow author A5023888391").ok
    with caplog.at_level(logging.WARNING, logger="bot.follows"):
        report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_fetched"] == 1 and report["papers_arrived"] == 2 and not report["follows_failed"]
    assert {services.library.find(str(n)).title for n in (1, 2)} == {"Good work one", "Good work three"}
    with services.db.session() as db:
        follow = db.scalar(select(Follow))
        assert follow.fetched_through.replace(tzinfo=UTC) == clock.now  # the mark moved
    skipped = [r.getMessage() for r in caplog.records if "W2" in r.getMessage()]
    assert len(skipped) == 1 and f"follow {follow.id}" in skipped[0] and why in skipped[0], skipped
    text = session.send("following").text
    assert "2 new papers this week" in text and "skipped 1 work" in text and "W2" in text and why in text, text
    assert "failed" not in text


def test_a_bad_arxiv_entry_is_skipped_and_the_rest_arrive(make_services, fake_arxiv, clock, caplog):
    services = make_services()
    at = clock.now - timedelta(hours=20)
    fake_arxiv.papers += [
        ArxivPaper("2611.00001", "A fine paper", "Fine.", at, ["cs.LG"]),
        ArxivPaper("2611.00002", "y" * 3_000, "A title of 3,000 characters.", at + timedelta(minutes=1), ["cs.LG"]),
        ArxivPaper("2611.00003", "Another fine paper", "Fine.", at + timedelta(minutes=2), ["cs.LG"]),
    ]
    session = manager(services)
    assert session.send("follow arxiv cs.LG").ok
    with caplog.at_level(logging.WARNING, logger="bot.follows"):
        report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_fetched"] == 1 and report["papers_arrived"] == 2
    with services.db.session() as db:
        mark = db.scalar(select(Follow.fetched_through)).replace(tzinfo=UTC)
    assert mark == at + timedelta(minutes=2)
    skipped = [r.getMessage() for r in caplog.records if "2611.00002" in r.getMessage()]
    assert len(skipped) == 1 and "3,000 characters" in skipped[0], skipped
    assert "skipped 1 entry" in session.send("following").text


def test_nested_json_fails_the_author_follow_as_malformed_not_as_a_bug(make_services, fake_openalex, clock):
    services = make_services()
    fake_openalex.authors.append(LECUN)
    assert manager(services).send("follow author A5023888391").ok
    fake_openalex.fail("nested")
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_failed"] == 1
    with services.db.session() as db:
        message = db.scalar(select(Follow.last_message))
    assert "nested too deep" in message and "unexpected" not in message, message


@pytest.mark.parametrize("changes, why", [
    ({"works_count": "many"}, "works_count is a string, not a whole number"),
    ({"works_count": 1e300}, "works_count is a number, not a whole number"),
    ({"display_name": 42}, "display_name is a number, not a string"),
    ({"last_known_institutions": "NYU"}, "last_known_institutions is a string, not a list"),
])
def test_follow_author_refuses_an_author_openalex_answered_badly(services, fake_openalex, changes, why):
    fake_openalex.authors.append(FakeAuthor("A5023888391", "Yann LeCun", "New York University", 600, changes))
    for line in ("follow author A5023888391", 'follow author "Yann LeCun"'):
        reply = manager(services).send(line)
        assert not reply.ok and "OpenAlex answered something paperclub cannot read" in reply.text, reply.text
        assert why in reply.text and "nothing was changed" in reply.text
    with services.db.session() as db:
        assert db.scalar(select(Follow.id)) is None


def test_an_unreadable_namesake_is_left_out_of_the_list(services, fake_openalex):
    fake_openalex.authors += [LECUN, FakeAuthor("A5100000001", "Yann LeCun", "Meta", 41, {"works_count": "x"})]
    reply = manager(services).send('follow author "Yann LeCun"')
    assert reply.ok and "Following Yann LeCun" in reply.text  # the one readable person


def test_follow_author_refuses_nested_json_clearly(services, fake_openalex):
    fake_openalex.fail("nested")
    reply = manager(services).send("follow author A5023888391")
    assert not reply.ok and "OpenAlex answered something paperclub cannot read" in reply.text, reply.text
    assert "Something went wrong" not in reply.text


def test_a_mark_set_before_is_kept_when_every_work_is_skipped(make_services, fake_openalex, clock):
    """Skips alone still move the mark: a bad work is not asked for (and logged) every day."""
    services = make_services()
    fake_openalex.authors.append(LECUN)
    fake_openalex.works.append(FakeWork("W2", "Bad", "", "2026-11-25", [LECUN],
                                        changes={"primary_location": 3}))
    assert manager(services).send("follow author A5023888391").ok
    report = services.core.tick(clock.now, nothing, ["console"])
    assert report["follows_fetched"] == 1 and report["papers_arrived"] == 0
    with services.db.session() as db:
        follow = db.scalar(select(Follow))
    assert follow.fetched_through.replace(tzinfo=UTC) == clock.now and follow.last_status != "failed"
    assert arrived(services) == []
