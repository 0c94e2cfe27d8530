"""follow, unfollow, following, fresh: bad follows are refused with a clear reply and
change nothing; an ambiguous author is resolved by asking; `follow citations` brings the
papers citing what the channel read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from adapters.fakes.openalex import FakeAuthor, FakeWork
from bot.corpus.records import PaperRecord
from bot.follows.models import Follow, FollowArrival, FreshWindow, OpenAlexWork
from tests.follows.conftest import manager, member

LECUN_NYU = FakeAuthor("A5023888391", "Yann LeCun", "New York University", 612)
LECUN_OTHER = FakeAuthor("A5100000001", "Yann LeCun", "Meta (United States)", 41)
HINTON = FakeAuthor("A5011111111", "Geoffrey Hinton", "University of Toronto", 400)


def state(services) -> tuple:
    with services.db.session() as session:
        return (session.scalar(select(func.count(Follow.id))),
                session.scalar(select(func.count(FreshWindow.channel_id))))


@pytest.mark.parametrize("line, says", [
    ("follow", "Usage: follow arxiv CATEGORY"),
    ("follow arxiv", "Give one category"),
    ("follow arxiv cs.XY", "arXiv has no category “cs.XY”"),
    ("follow arxiv cs.LGG", "Close ones: cs.LG (Machine Learning)"),
    ("follow arxiv mashine learning", "Close ones: cs.LG (Machine Learning); stat.ML (Machine Learning)"),
    ('follow arxiv cs.CL "retrieval', "A quote is not closed"),
    ('follow arxiv cs.CL "a" "b"', "Give one category"),
    ('follow arxiv cs.CL ""', "The words in quotes are empty"),
    ("follow arxiv cs.CL " + '"' + "x" * 201 + '"', "at most 200"),
    ("follow planets", "There is no `follow planets`"),
    ("follow citations please", "takes nothing more"),
    ("follow author", "Give one author"),
    ('follow author "Nobody Atall"', "OpenAlex knows no author by “Nobody Atall”"),
    ("follow author A999", "OpenAlex knows no author by the id A999"),
    ("unfollow", "Usage: unfollow N"),
    ("unfollow 99", "no follow number 99"),
    ("unfollow two", "Usage: unfollow N"),
    ("fresh 0d", "from 1d to 30d"),
    ("fresh 31d", "from 1d to 30d"),
    ("fresh soon", "from 1d to 30d"),
    ("fresh 7d now", "Give one window"),
    ("following everything", "takes nothing more"),
])
def test_bad_follows_are_refused_with_a_clear_reply_and_change_nothing(services, fake_openalex, line, says):
    fake_openalex.authors += [LECUN_NYU, HINTON]
    session = manager(services)
    assert session.send("follow arxiv cs.LG").ok
    before = state(services)
    reply = session.send(line)
    assert not reply.ok and says in reply.text, reply.text
    assert "Nothing was changed" in reply.text or "nothing was changed" in reply.text or "Usage" in reply.text \
        or says in reply.text
    assert state(services) == before


def test_members_list_but_only_managers_change(services):
    assert manager(services).send("follow arxiv cs.LG").ok
    before = state(services)
    for line in ("follow arxiv cs.CL", "unfollow 1", "fresh 7d", "follow citations"):
        reply = member(services).send(line)
        assert not reply.ok and "Only channel managers" in reply.text
    assert state(services) == before
    assert "1. cs.LG (Machine Learning)" in member(services).send("following").text
    assert "Fresh picks are off" in member(services).send("fresh").text


def test_the_same_follow_twice_and_openalex_down_change_nothing(services, fake_openalex):
    session = manager(services)
    assert session.send('follow arxiv cs.CL "retrieval augmented"').ok
    reply = session.send("follow arxiv CS.cl “retrieval augmented”")  # typographic quotes, any case
    assert not reply.ok and "already" in reply.text
    fake_openalex.fail("503", "503")
    reply = session.send('follow author "Yann LeCun"')
    assert not reply.ok and "OpenAlex could not be reached" in reply.text
    assert state(services) == (1, 0)


def test_an_author_name_that_matches_several_people_is_resolved_by_asking(services, fake_openalex, clock):
    fake_openalex.authors += [LECUN_NYU, LECUN_OTHER, HINTON]
    fake_openalex.works.append(FakeWork("W4400000001", "Joint embedding predictive architectures",
                                        "Predict in representation space.", "2026-11-25", [LECUN_NYU]))
    session = manager(services)
    reply = session.send('follow author "Yann LeCun"')
    assert reply.ok and state(services) == (0, 0)
    assert "2 authors on OpenAlex go by “Yann LeCun”" in reply.text
    assert "A5023888391: Yann LeCun, New York University (612 works)" in reply.text
    assert "A5100000001: Yann LeCun, Meta (United States) (41 works)" in reply.text
    assert "follow author A5023888391" in reply.text
    reply = session.send("follow author A5023888391")
    assert reply.ok and "Following Yann LeCun" in reply.text
    reply = session.send('follow author "geoffrey hinton"')  # one person: followed at once
    assert reply.ok and "Following Geoffrey Hinton" in reply.text
    services.core.tick(clock.now, lambda *_: None, ["console"])
    text = session.send("following").text
    assert "Yann LeCun: 1 new paper this week ([1] Joint embedding predictive architectures)" in text
    assert "Geoffrey Hinton: 0 new papers this week" in text


def read_three(services, session) -> list:
    """Three papers the channel read: posted with `next`, then voted up, marked read, and
    one discussed at a meeting's queue (voted up here)."""
    services.library.import_records([
        PaperRecord("Attention is all you need", abstract="Transformers.", external_ids={"arxiv": "1706.03762"}),
        PaperRecord("Deep residual learning", abstract="ResNets.", external_ids={"doi": "10.1109/cvpr.2016.90"}),
        PaperRecord("Adam: a method for stochastic optimization", abstract="Adam.",
                    external_ids={"arxiv": "1412.6980"}),
        PaperRecord("A paper nobody read", abstract="Unread.", external_ids={"arxiv": "1111.11111"}),
    ], collection="classics", source="classics.jsonl", fmt="jsonl")
    papers = [services.library.find(ref) for ref in ("arXiv:1706.03762", "10.1109/cvpr.2016.90", "arXiv:1412.6980")]
    assert session.send("use classics").ok
    for paper, vote in zip(papers, ("up", "read", "up"), strict=True):
        reply = services.posts.post_paper(services.channels.get(session.channel), paper, services.core.clock(),
                                          "read by the club")
        assert reply is not None
        assert session.send(f"vote {paper.id} {vote}").ok
    return papers


def test_follow_citations_after_reading_three_papers_brings_the_papers_citing_them(services, fake_openalex, clock):
    session = manager(services)
    attention, resnet, _adam = read_three(services, session)
    fake_openalex.works += [
        FakeWork("W2963403868", "Attention is all you need", published="2017-06-12", doi="10.48550/arxiv.1706.03762"),
        FakeWork("W2194775991", "Deep residual learning", published="2016-06-01", doi="10.1109/cvpr.2016.90"),
        FakeWork("W1522301498", "Adam", published="2014-12-22", doi="10.48550/arxiv.1412.6980"),
        FakeWork("W4410000001", "Sparse attention for long documents", "Cites the transformer.", "2026-11-24",
                 cites=["W2963403868"], doi="10.1000/sparse", arxiv="2611.20001"),
        FakeWork("W4410000002", "Residual adaptive optimisers", "Residual nets meet Adam.", "2026-11-25",
                 cites=["W2194775991", "W1522301498"]),
        FakeWork("W4410000003", "Unrelated citing work", "Cites something else.", "2026-11-25", cites=["W1"]),
        FakeWork("W4410000004", "Old citing work", "From before the follow.", "2020-01-01",
                 cites=["W2963403868"]),
    ]
    assert session.send("follow citations").ok
    report = services.core.tick(clock.now, lambda *_: None, ["console"])
    assert report["papers_arrived"] == 2
    with services.db.session() as db:
        reasons = dict(db.execute(select(FollowArrival.paper_id, FollowArrival.reason)).all())
    sparse = services.library.find("10.1000/sparse")
    assert services.library.find("arXiv:2611.20001").id == sparse.id  # the preprint and its DOI: one paper
    day = f"{clock.now.day} {clock.now:%b}"
    assert reasons[sparse.id] == f"cites [{attention.id}] Attention is all you need, which you voted up on {day}"
    [other] = [pid for pid in reasons if pid != sparse.id]
    assert reasons[other] == f"cites [{resnet.id}] Deep residual learning, which you read on {day}"
    with services.db.session() as db:
        assert db.scalar(select(func.count(OpenAlexWork.paper_id))) == 3  # cached
    resolving = [f for f in fake_openalex.filters() if f.startswith("doi:")]
    assert len(resolving) == 1
    services.core.tick(clock.now + timedelta(days=1), lambda *_: None, ["console"])
    assert len([f for f in fake_openalex.filters() if f.startswith("doi:")]) == 1  # not asked again
    assert fake_openalex.filters()[-1].startswith("cites:W1522301498|W2194775991|W2963403868,")


def test_unfollow_stops_and_keeps_the_papers(services, fake_arxiv, clock):
    session = manager(services)
    assert session.send("follow arxiv cs.LG").ok
    assert session.send("fresh 7d").ok
    settings = session.send("settings").text
    assert "Follows: 1. cs.LG (Machine Learning)" in settings
    assert "Fresh picks: from the follows' last 7 days" in settings
    reply = session.send("unfollow 1")
    assert reply.ok and "Stopped following cs.LG (Machine Learning)" in reply.text
    assert "follows nothing yet" in session.send("following").text
    assert "Follows: none" in session.send("settings").text
    assert session.send("fresh off").ok and state(services) == (0, 0)


def test_another_channel_cannot_unfollow_this_ones_follow(services):
    assert manager(services, "ml").send("follow arxiv cs.LG").ok
    reply = manager(services, "other").send("unfollow 1")
    assert not reply.ok and "no follow number 1" in reply.text
    assert state(services) == (1, 0)


def test_arrivals_lists_what_the_follows_brought_a_channel(services, fake_openalex, clock):
    fake_openalex.authors.append(LECUN_NYU)
    fake_openalex.works.append(FakeWork("W4400000001", "JEPA", "Predict.", "2026-11-25", [LECUN_NYU]))
    assert manager(services).send("follow author A5023888391").ok
    services.core.tick(clock.now, lambda *_: None, ["console"])
    channel = services.channels.get(manager(services).channel)
    found = services.feature("follows").arrivals(channel.id, clock.now - timedelta(days=7), clock.now + timedelta(1))
    assert [(a.follow, a.reason) for a in found] == [("Yann LeCun", "by Yann LeCun (followed)")]
    assert services.feature("follows").arrivals(channel.id, clock.now + timedelta(1), clock.now + timedelta(2)) == []


def test_an_author_lookup_that_does_not_answer_in_time_changes_nothing(services, fake_openalex, monkeypatch):
    monkeypatch.setattr("bot.follows.commands.LOOKUP_SECONDS", 0.2)
    fake_openalex.fail("timeout")
    reply = manager(services).send('follow author "Yann LeCun"')
    assert not reply.ok and "OpenAlex could not be reached" in reply.text
    assert state(services) == (0, 0)
    fake_openalex.release.set()
