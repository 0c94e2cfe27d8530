"""Fresh picks: a channel following cs.LG gets yesterday's relevant paper as its paper of
the day, with the reason; otherwise the corpus, as before."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from adapters.fakes.arxiv import ArxivPaper
from bot.corpus.records import PaperRecord
from tests.follows.conftest import manager

UTC = timezone.utc
YESTERDAY = datetime(2026, 11, 25, 15, 30, tzinfo=UTC)


class Posts:
    def __init__(self):
        self.replies = []

    def __call__(self, channel, reply):
        self.replies.append(reply)
        return f"m{len(self.replies)}"


def corpus(services) -> None:
    """A corpus paper that matches the topics too: fresh picks must win over it."""
    services.library.import_records(
        [PaperRecord("Diffusion robustness revisited", abstract="An older study of diffusion robustness.",
                     external_ids={"arxiv": "2001.00001"})],
        collection="corpus", source="corpus.jsonl", fmt="jsonl")


def listing(fake_arxiv) -> None:
    fake_arxiv.papers += [
        ArxivPaper("2611.10001", "Certified robustness for diffusion models",
                   "We certify diffusion samplers against adversarial robustness attacks.", YESTERDAY, ["cs.LG"]),
        ArxivPaper("2611.10002", "Graph transformers at scale", "Message passing on large graphs.",
                   YESTERDAY + timedelta(minutes=5), ["cs.LG", "stat.ML"]),
        ArxivPaper("2611.10003", "Diffusion for video robustness", "Video diffusion and robustness.",
                   YESTERDAY, ["cs.CV"]),  # not in cs.LG: never fetched
    ]


def setup_channel(services, fresh: str = "fresh 7d"):
    session = manager(services)
    for line in ("schedule 09:00 UTC daily", "topics add diffusion, robustness", "follow arxiv cs.LG", fresh):
        assert session.send(line).ok, line
    return session


def test_a_channel_following_cs_lg_gets_yesterdays_relevant_paper_with_the_reason(services, fake_arxiv, clock):
    corpus(services)
    listing(fake_arxiv)
    setup_channel(services)
    posts = Posts()
    report = services.core.tick(clock.now, posts, ["console"])  # 07:00: the ingest
    assert report["papers_arrived"] == 2
    clock.now = clock.now.replace(hour=9)
    services.core.tick(clock.now, posts, ["console"])
    [post] = posts.replies
    card = post.cards[0]
    assert card.title == "Certified robustness for diffusion models"
    assert card.reason == "New on arXiv 25 Nov in cs.LG, matches your topics: diffusion, robustness."
    found = services.library.find("arXiv:2611.10001")
    assert found is not None and found.id == card.paper_id
    assert "follow-1-arxiv-cs.LG" in found.collections
    assert services.search.current().title(card.paper_id) is not None  # searchable


def test_the_next_day_picks_the_next_fresh_paper_never_the_same_twice(services, fake_arxiv, clock):
    listing(fake_arxiv)
    fake_arxiv.papers.append(ArxivPaper("2611.10004", "Robustness of score-based diffusion",
                                        "Diffusion robustness again.", YESTERDAY, ["cs.LG"]))
    setup_channel(services)
    posts = Posts()
    for hour in (7, 9, 33):
        clock.now = datetime(2026, 11, 26, tzinfo=UTC) + timedelta(hours=hour)
        services.core.tick(clock.now, posts, ["console"])
    titles = [r.cards[0].title for r in posts.replies]
    assert len(titles) == 2 and len(set(titles)) == 2
    assert all("diffusion" in t.lower() for t in titles)


def test_without_fresh_picks_or_without_relevant_arrivals_the_corpus_decides(services, fake_arxiv, clock):
    corpus(services)
    fake_arxiv.papers.append(ArxivPaper("2611.10002", "Graph transformers at scale", "Message passing.",
                                        YESTERDAY, ["cs.LG"]))
    setup_channel(services)  # fresh on, but nothing that arrived matches the topics
    posts = Posts()
    services.core.tick(clock.now, posts, ["console"])
    clock.now = clock.now.replace(hour=9)
    services.core.tick(clock.now, posts, ["console"])
    [post] = posts.replies
    assert post.cards[0].title == "Diffusion robustness revisited"
    assert not post.cards[0].reason.startswith("New on arXiv")


def test_fresh_off_keeps_the_corpus_picks(services, fake_arxiv, clock):
    corpus(services)
    listing(fake_arxiv)
    session = setup_channel(services, fresh="fresh off")
    assert "off" in session.send("fresh").text
    posts = Posts()
    services.core.tick(clock.now, posts, ["console"])
    clock.now = clock.now.replace(hour=9)
    services.core.tick(clock.now, posts, ["console"])
    [post] = posts.replies
    assert not post.cards[0].reason.startswith("New on arXiv")


def test_a_channel_without_topics_gets_the_newest_arrival(services, fake_arxiv, clock):
    listing(fake_arxiv)
    session = manager(services)
    for line in ("schedule 09:00 UTC daily", "follow arxiv cs.LG", "fresh 3d"):
        assert session.send(line).ok
    posts = Posts()
    services.core.tick(clock.now, posts, ["console"])
    clock.now = clock.now.replace(hour=9)
    services.core.tick(clock.now, posts, ["console"])
    [post] = posts.replies
    assert post.cards[0].title == "Graph transformers at scale"  # submitted last, arrived together: newest first
    assert post.cards[0].reason == "New on arXiv 25 Nov in cs.LG."


def test_the_weekly_digest_lists_the_follows_papers_best_for_the_channel_first(services, fake_arxiv, clock):
    """The digest's "new from your follows": the week's arrivals ranked by the channel's
    topics, with the numbers members type and why each came; a paper of the same week
    the channel's topics do not match comes after those they do."""
    corpus(services)
    listing(fake_arxiv)
    setup_channel(services)
    services.core.tick(clock.now, Posts(), ["console"])  # the ingest brings 2611.10001 and 2611.10002
    channel = services.channels.get(manager(services).channel)
    section = services.feature("follows").digest(channel, clock.now - timedelta(days=7), clock.now + timedelta(hours=1))
    robust = services.library.find("arXiv:2611.10001").id
    graphs = services.library.find("arXiv:2611.10002").id
    assert section.papers == (robust, graphs)  # graphs is newer, but robustness matches the topics
    assert section.title == "New from your follows (2 papers, all)"
    assert section.lines[0] == (f"[{robust}] Certified robustness for diffusion models: New on arXiv 25 Nov in "
                                "cs.LG, matches your topics: diffusion, robustness")
    assert section.lines[1].startswith(f"[{graphs}] Graph transformers at scale: New on arXiv 25 Nov in cs.LG")
    before = services.feature("follows").digest(channel, clock.now - timedelta(days=14),
                                                  clock.now - timedelta(days=7))
    assert before is None  # nothing arrived that week: no section
    clock.now += timedelta(hours=1)
    preview = manager(services).send("digest preview")  # the digest itself asks the follows
    assert [s.title for s in preview.sections if s.title.startswith("New from your follows")] == [section.title]
