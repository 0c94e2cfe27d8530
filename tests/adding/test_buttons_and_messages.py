"""The buttons under an added paper, "Add to paperclub" on a whole message, `use added`,
and the paper being searchable at once."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from bot.services.models import Nomination, Post
from tests.adding.conftest import NOW, click, counts, providers_for, say

MESSAGE = """Two good ones for next week:
<https://arxiv.org/abs/2106.01345|Decision Transformer> and the BERT paper (https://doi.org/10.18653/v1/N19-1423).
Also arXiv: 1706.03762, which everybody cites; see https://openreview.net/forum?id=2dnO3LLiJ1&amp;noteId=x!"""


def from_message(built, text: str, user: str = "ann"):
    incoming = Incoming(ChannelRef("console", "local", "reading"), UserRef("console", user, user.title()), text)
    return built.core.add_from_message(incoming)


def test_a_message_adds_every_paper_it_links_and_answers_privately(built):
    reply = from_message(built, MESSAGE)
    assert reply.ok and reply.ephemeral
    assert [c.title for c in reply.cards] == [
        "Decision Transformer: Reinforcement Learning via Sequence Modeling",
        "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
        "Attention Is All You Need", "Vision Transformers Need Registers"]
    assert all(c.added_by == "Added by Ann on 2026-11-23" for c in reply.cards)
    assert len(reply.actions) == 8
    again = from_message(built, MESSAGE)  # the same message twice: the same four papers, nothing new
    assert [c.paper_id for c in again.cards] == [c.paper_id for c in reply.cards]


def test_a_message_without_links_and_one_with_too_many(built):
    before = counts(built.db)
    reply = from_message(built, "great talk today, thanks all! 3.14 #42")
    assert not reply.ok and reply.ephemeral and "No paper links in that message" in reply.text
    assert counts(built.db) == before
    many = " ".join(["2106.01345", "1706.03762", "1810.04805", "1907.10902", "hep-th/9711200", "2106.99999"])
    reply = from_message(built, many)
    assert len(reply.cards) == 5 and "names 6 papers; paperclub adds the first 5" in reply.text


def test_a_message_mixing_good_and_bad_links_adds_the_good(built):
    reply = from_message(built, "see 2106.99999 and 2106.01345")
    assert reply.ok and len(reply.cards) == 1
    assert "arXiv has no paper 2106.99999." in reply.text


def test_nominate_and_discuss_buttons(built):
    number = say(built, "add 2106.01345").cards[0].paper_id
    nominated = click(built, f"nominate {number}", manager=False, user="bob")
    assert nominated.ok, nominated.text
    with built.db.session() as session:
        assert session.scalars(select(Nomination.paper_id)).all() == [number]
    refused = click(built, f"discuss {number}", manager=False, user="bob")
    assert not refused.ok and refused.text.startswith("Only channel managers")
    assert built.core.commands["discuss"].manager_rights(str(number))  # adapters look up rights first
    with built.db.session() as session:
        assert session.scalars(select(Post)).all() == []
    post = click(built, f"discuss {number}")
    assert post.ok and not post.ephemeral and post.post_id is not None
    assert [a.value for a in post.actions] == [f"vote {post.post_id} {c}" for c in ("up", "down", "read")]
    assert post.cards[0].reason == "Chosen for discussion by Ann." and post.open_thread
    again = click(built, f"discuss {number}")
    assert not again.ok and "was posted in this channel already on 2026-11-23" in again.text
    with built.db.session() as session:
        assert len(session.scalars(select(Post)).all()) == 1


@pytest.mark.parametrize("ref", ["99999", "#99999", "3000000000", "arXiv:1999.99999"])
def test_discuss_of_a_paper_that_does_not_exist_says_so_as_show_does(built, ref):
    """Issue 45: `discuss 99999` said "Give one paper ID" of an ID that was one."""
    shown, discussed = say(built, f"show {ref}"), say(built, f"discuss {ref}")
    assert not discussed.ok and discussed.text.startswith(f"No paper with ID `{ref}`"), discussed.text
    assert discussed.text.splitlines()[0] == shown.text.splitlines()[0]
    assert say(built, "discuss 1 2").text.startswith("Give one paper ID")
    with built.db.session() as session:
        assert session.scalars(select(Post)).all() == []

def test_a_click_with_anything_else_is_still_refused(built):
    for value in ("discuss 1 now", "nominate attention", "add 2106.01345", "discuss"):
        assert not click(built, value).ok


def test_use_added_picks_this_workspaces_added_papers(built):
    mine = say(built, "add 2106.01345").cards[0].paper_id
    theirs = say(built, "add 1706.03762", workspace="acme").cards[0].paper_id
    assert say(built, "use added").text == "This channel now picks from added in chat (`added`)."
    assert say(built, "use added", workspace="acme").text == "This channel now picks from added in chat (`added`)."
    assert "added in chat (`added`): 1 paper" in say(built, "collections", workspace="acme").text
    assert "added-console-local" in built.library.find(str(mine)).collections
    assert built.library.find(str(theirs)).collections == ["added-console-acme"]
    pick = say(built, "next")
    assert [c.paper_id for c in pick.cards] == [mine]  # the only paper this channel's collection holds


@pytest.mark.parametrize("seeded_db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
                         indirect=True)
def test_an_added_paper_is_the_first_hit_for_its_title_at_once(seeded_db_url, fake):
    services = build_services(seeded_db_url, clock=lambda: NOW)
    try:
        services.feature("adding").providers = providers_for(fake)
        services.search.current()  # the seed corpus's index, as a running bot has it
        seeds = services.library.count()
        started = time.perf_counter()
        number = say(services, "add 2106.01345").cards[0].paper_id
        hits = say(services, "search Decision Transformer: Reinforcement Learning via Sequence Modeling")
        assert time.perf_counter() - started < 10
        assert hits.cards[0].paper_id == number
        assert f"of {seeds + 1:,} papers" in hits.text  # the index of the new revision
    finally:
        services.db.dispose()
