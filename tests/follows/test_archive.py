"""The archive page shows the channel's follows (through Feature.archive_sections), escaped."""

from __future__ import annotations

from adapters.fakes.arxiv import ArxivPaper
from bot.memory.pages import build_pages
from bot.services.links import ChannelLinks
from tests.follows.conftest import manager


def page(services, clock, features=True) -> str:
    channel = services.channels.get(manager(services).channel)
    token = ChannelLinks(services.db).issue(channel.id, "archive", "alice", clock.now)
    pages = build_pages(services.library, services.channels, services.meetings, services.votes,
                        services.search.tokenizer, clock, services.features if features else None)
    answer = pages.answer(f"/archive/{token}", {})
    assert answer.status == 200
    return answer.body.decode()


def test_the_archive_lists_the_follows_with_what_they_brought(services, fake_arxiv, clock):
    fake_arxiv.papers.append(ArxivPaper("2611.00001", "Robust <b>diffusion</b>", "x", clock.now.replace(hour=1),
                                        ["cs.LG"]))
    session = manager(services)
    assert session.send('follow arxiv cs.CL "<script>alert(1)</script>"').ok
    assert session.send("follow arxiv cs.LG").ok
    assert session.send("fresh 7d").ok
    services.core.tick(clock.now, lambda *_: None, ["console"])
    html = page(services, clock)
    assert "<h2>Follows</h2>" in html
    assert "2. cs.LG (Machine Learning): 1 new paper this week ([1] Robust &lt;b&gt;diffusion&lt;/b&gt;)" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "Fresh picks: from the follows&#39; last 7 days" in html


def test_without_follows_or_without_the_features_the_page_has_no_follows_section(services, clock):
    assert "<h2>Follows</h2>" not in page(services, clock)
    assert manager(services).send("follow arxiv cs.LG").ok
    assert "<h2>Follows</h2>" not in page(services, clock, features=False)
