"""What a member sees of a post, a poll and a digest, on the console, Slack (Block Kit) and
Discord (embed JSON), from replies the core makes (issue 46): a paper of the day names its
title once, a poll card says its option as a label and not as "Why: Option 1", and a
digest's titles link to the papers."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from adapters.console import ConsoleSession, render_text
from adapters.discord.embeds import outgoing
from adapters.slack.blocks import message
from bot.app import build_services
from bot.messages import Reply

AT = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)  # a Monday
ABSTRACT = "We study how graph networks learn to route messages, and show that routing depends on depth. "
PAPERS = [
    {"title": f"Routing Messages in Graph Networks, Part {n}", "authors": ["Ada Lovelace"],
     "abstract": ABSTRACT * 2, "url": f"https://example.org/papers/{n}.pdf", "venue": "ICLR", "year": 2021}
    for n in (1, 2, 3)
]


@pytest.fixture
def session(seeded_copy, tmp_path):
    listing = tmp_path / "mine.jsonl"
    listing.write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n", encoding="utf-8")
    now = [AT]
    services = build_services(seeded_copy, clock=lambda: now[0])
    services.library.import_file(listing, "mine")
    boss = ConsoleSession(services.core, channel="c1", user="boss", manager=True)
    boss.later = lambda: now.__setitem__(0, AT + timedelta(hours=1))  # type: ignore[attr-defined]
    assert boss.send("use mine").ok
    yield boss
    services.db.dispose()


def slack_texts(reply: Reply) -> str:
    """Every text of the message's blocks (not the notification's `text`)."""
    return json.dumps(message(reply)["blocks"], ensure_ascii=False)


def discord_json(reply: Reply) -> list[dict]:
    sent = outgoing(reply)
    return [{"content": m.content, "embeds": [e.to_dict() for e in m.embeds]} for m in sent]


def test_a_post_names_its_title_once_on_every_platform(session):
    post = session.send("next")
    title = post.cards[0].title
    assert post.text == "Next paper"
    assert render_text(post).count(title) == 1  # console
    blocks = message(post)
    assert slack_texts(post).count(title) == 1  # Slack: the card's linked title
    assert blocks["text"] == f"Next paper: {title}"  # the notification still names it
    sent = discord_json(post)
    assert all(title not in m["content"] for m in sent)
    (embed,) = [e for m in sent for e in m["embeds"]]
    assert embed["title"].endswith(title) and json.dumps(embed, ensure_ascii=False).count(title) == 1


def test_a_poll_card_labels_its_option_and_gives_no_why_of_option(session):
    poll = session.send("poll 2")
    assert [c.option for c in poll.cards] == ["Option 1", "Option 2"]
    assert all("Option" not in c.reason for c in poll.cards)
    text = render_text(poll)
    assert "why: Option" not in text and f"Option 1: [{poll.cards[0].paper_id}] " in text
    blocks = slack_texts(poll)
    assert "Why:* Option" not in blocks and "*Option 1:* *<https://example.org/papers/" in blocks
    embeds = [e for m in discord_json(poll) for e in m["embeds"]]
    assert [e["title"].split(":")[0] for e in embeds] == ["Option 1", "Option 2"]
    assert not any(f["name"] == "Why" and "Option" in f["value"] for e in embeds for f in e.get("fields", []))


def test_the_digest_links_each_title_it_names_on_every_platform(session):
    post = session.send("next")
    paper = post.cards[0]
    session.later()  # the preview covers the week up to now: an hour after the post
    digest = session.send("digest preview")
    assert digest.sections, digest.text
    url = f"https://example.org/papers/{paper.title[-1]}.pdf"
    assert f"  <{url}>" in render_text(digest)  # console: the link after the line
    assert f"[{paper.paper_id}] <{url}|{paper.title}>" in slack_texts(digest)
    descriptions = [e.get("description", "") for m in discord_json(digest) for e in m["embeds"]]
    assert any(f"[{paper.paper_id}] [{paper.title}]({url})" in d for d in descriptions)
