"""Reactions that vote and the "Add to paperclub" message shortcut, on the real bolt App
behind the signed edge, against the fake Slack Web API (adapters/fakes/slack_api.py) and
the fake paper providers (tests/adding/fake_providers.py). Redraws wait in a Debouncer
whose timers only fire when the test flushes them: no sleeping, no races."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from adapters.debounce import Debouncer
from adapters.fakes.slack_api import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    event_callback,
    message_shortcut,
    reaction_event,
    signed_headers,
)
from adapters.slack.app import build_app, event_order, message_text
from adapters.slack.config import EVENTS_PATH, SlackSettings
from adapters.slack.edge import SignedOnly, WholeForms
from bot.services.models import Nomination, Post, PostVote
from tests.adding.conftest import providers_for
from tests.adding.fake_providers import FakeProviders
from tests.slack.harness import (
    BOSS,
    CHANNEL,
    MEMBER,
    InlineExecutor,
    click,
    command,
    posted,
    wsgi_post,
)


class HeldTimer:
    """A Debouncer timer that never fires by itself: `flush` runs what waits."""

    def __init__(self, _delay, _callback):
        self.cancelled = False

    def cancel(self):
        self.cancelled = True


@pytest.fixture
def providers() -> Iterator[FakeProviders]:
    with FakeProviders() as fake:
        yield fake


@pytest.fixture
def redraws() -> Debouncer:
    return Debouncer(2.0, HeldTimer)


@pytest.fixture
def stack(services, slack, redraws, providers):
    """What `paperclub serve` answers at /slack/events: the edge, bolt, our listeners."""
    services.feature("adding").providers = providers_for(providers)
    settings = SlackSettings(SIGNING_SECRET, bot_token=BOT_TOKEN, api_url=slack.api_url)
    app = build_app(services, settings, InlineExecutor(), redraws)[0]
    return app, SignedOnly(WholeForms(app, EVENTS_PATH), SIGNING_SECRET)


def signed_event(edge, event: dict, event_id: str | None = None) -> tuple[int, str]:
    body = event_callback(event, event_id=event_id)
    status, _ = wsgi_post(edge, body, signed_headers(body, content_type="application/json"))
    return status, body


def post_next(app, slack) -> dict:
    assert command(app, slack, "next", user=BOSS).status == 200
    return posted(slack)


def tally_of(update: dict) -> str:
    return json.dumps(update["blocks"], ensure_ascii=False)


def test_signed_reactions_count_as_votes_and_a_burst_is_one_chat_update(stack, slack, services, redraws):
    app, edge = stack
    post = post_next(app, slack)
    for user, name in ((MEMBER, "+1"), ("U0CY", "thumbsup::skin-tone-4"), ("U0DAN", "white_check_mark")):
        assert signed_event(edge, reaction_event(name, post["ts"], user=user))[0] == 200
    assert slack.calls_to("chat.update") == [] and len(redraws.pending()) == 1  # waiting for the burst to end
    redraws.flush()
    (update,) = slack.calls_to("chat.update")
    assert (update.params["channel"], update.params["ts"]) == (CHANNEL, post["ts"])
    assert "👍 2 · 👎 0 · read 1" in tally_of(update.params)
    # Taking the reaction off withdraws the vote; the post is redrawn again.
    assert signed_event(edge, reaction_event("+1", post["ts"], user=MEMBER, added=False))[0] == 200
    redraws.flush()
    assert "👍 1 · 👎 0 · read 1" in tally_of(slack.calls_to("chat.update")[-1].params)
    with services.db.session() as session:
        assert set(session.execute(select(PostVote.user_id, PostVote.value))) == {("U0CY", "up"), ("U0DAN", "read")}


def test_a_replayed_reaction_event_acts_once(stack, slack, services, redraws):
    app, edge = stack
    post = post_next(app, slack)
    added = reaction_event("+1", post["ts"])
    assert signed_event(edge, added, event_id="Ev0ADDED01")[0] == 200
    assert signed_event(edge, reaction_event("+1", post["ts"], added=False), event_id="Ev0REMOVED")[0] == 200
    # The same event again (Slack's retry, or a replay inside the signature window).
    assert signed_event(edge, added, event_id="Ev0ADDED01")[0] == 200
    with services.db.session() as session:
        assert session.scalars(select(PostVote)).all() == []  # the replay did not bring the vote back


def event_ts(micros: int) -> str:
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def test_a_reaction_removed_before_its_add_is_handled_leaves_no_vote(stack, slack, services, redraws):
    """Twenty members put 👍 on and take it off at once; each remove (the later event_ts)
    is handled before its add: no vote stays, and nothing is redrawn. The same pairs in
    the order they happened count, then withdraw."""
    app, edge = stack
    post = post_next(app, slack)
    start = 1_764_000_000_000_000
    for n in range(20):
        added, removed = event_ts(start + 10 * n), event_ts(start + 10 * n + 3)
        user = f"U0LATE{n:02d}"
        assert signed_event(edge, reaction_event("+1", post["ts"], user=user, added=False, event_ts=removed))[0] == 200
        assert signed_event(edge, reaction_event("+1", post["ts"], user=user, event_ts=added))[0] == 200
    with services.db.session() as session:
        assert session.scalars(select(PostVote)).all() == []
    assert redraws.pending() == [] and slack.calls_to("chat.update") == []
    for n in range(20):
        user = f"U0KEPT{n:02d}"
        signed_event(edge, reaction_event("+1", post["ts"], user=user, event_ts=event_ts(start + 10 * n)))
    redraws.flush()
    assert "👍 20 · 👎 0 · read 0" in tally_of(slack.calls_to("chat.update")[-1].params)
    for n in range(20):
        user = f"U0KEPT{n:02d}"
        signed_event(edge, reaction_event("+1", post["ts"], user=user, added=False,
                                          event_ts=event_ts(start + 10 * n + 3)))
    redraws.flush()
    assert "👍 0 · 👎 0 · read 0" in tally_of(slack.calls_to("chat.update")[-1].params)


def test_event_ts_orders_reactions_to_the_microsecond():
    assert event_order("1764000000.000100") == 1_764_000_000_000_100
    assert event_order("1764000000.1") == 1_764_000_000_100_000
    assert event_order("1764000000.000100") < event_order("1764000000.000101")
    before = time.time_ns() // 1000
    assert event_order(None) >= before and event_order("junk") >= before  # no event_ts: when it came


def test_reactions_that_are_not_votes_change_nothing(stack, slack, services, redraws):
    app, edge = stack
    post = post_next(app, slack)
    ignored = [
        reaction_event("+1", post["ts"], user=BOT_USER),  # the bot's own
        reaction_event("+1", post["ts"], author="U0ALICE"),  # on someone else's message
        reaction_event("+1", "1700000000.999999"),  # a message of ours that is no post
        reaction_event("tada", post["ts"]),  # not one of the channel's emoji
        {**reaction_event("+1", post["ts"]), "item": {"type": "file", "file": "F0123"}},
    ]
    for event in ignored:
        assert signed_event(edge, event)[0] == 200
    assert redraws.pending() == [] and slack.calls_to("chat.update") == []
    with services.db.session() as session:
        assert session.scalars(select(PostVote)).all() == []


def test_an_unsigned_reaction_is_refused_at_the_edge(stack, slack, services):
    app, edge = stack
    post = post_next(app, slack)
    body = event_callback(reaction_event("+1", post["ts"]))
    headers = signed_headers(body, secret="not-the-secret", content_type="application/json")
    assert wsgi_post(edge, body, headers)[0] == 401
    with services.db.session() as session:
        assert session.scalars(select(PostVote)).all() == []


def test_a_channels_own_emoji_vote_by_their_slack_names(stack, slack, services, redraws):
    app, edge = stack
    assert json.loads(command(app, slack, "reactions :fire: :see_no_evil: :book:", user=BOSS).body)["text"] \
        == "Reactions: 🔥 want to discuss · 🙈 not for us · 📖 read"
    post = post_next(app, slack)
    signed_event(edge, reaction_event("+1", post["ts"]))  # not this channel's any more
    signed_event(edge, reaction_event("fire", post["ts"], user="U0CY"))
    redraws.flush()
    assert "👍 1 · 👎 0 · read 0" in tally_of(slack.calls_to("chat.update")[-1].params)


# --- "Add to paperclub" on a message ------------------------------------------------------------------


ARXIV_MESSAGE = {
    "text": "Worth a read: <https://arxiv.org/abs/2106.01345v2|arxiv.org/abs/2106.01345v2> :eyes:",
}


def shortcut(edge, slack, message: dict, user: str = MEMBER, trigger: str | None = None) -> int:
    body = message_shortcut(message, slack.response_url(), user=user, trigger=trigger)
    return wsgi_post(edge, body, signed_headers(body))[0]


def buttons(blocks: list[dict]) -> list[tuple[str, str]]:
    return [(e["text"]["text"], e["value"]) for b in blocks if b["type"] == "actions" for e in b["elements"]]


def test_the_message_shortcut_adds_the_linked_paper_and_answers_privately(stack, slack, services):
    _app, edge = stack
    assert shortcut(edge, slack, ARXIV_MESSAGE, trigger="13345224609.738474920.8088930838d88f008e0") == 200
    (answer,) = slack.calls_to("response_url")
    assert answer.params["response_type"] == "ephemeral" and answer.params["replace_original"] is False
    assert "Decision Transformer" in json.dumps(answer.params["blocks"])
    paper = services.library.find("arXiv:2106.01345")
    assert paper is not None
    assert buttons(answer.params["blocks"]) == [(f"Nominate {paper.id}", f"nominate {paper.id}"),
                                                (f"Discuss {paper.id} now", f"discuss {paper.id}")]
    assert slack.calls_to("chat.postMessage") == []  # nothing in the channel
    # The same shortcut replayed (same trigger_id): acknowledged, not acted on again.
    assert shortcut(edge, slack, ARXIV_MESSAGE, trigger="13345224609.738474920.8088930838d88f008e0") == 200
    assert len(slack.calls_to("response_url")) == 1


def test_links_in_attachments_and_blocks_are_read_too():
    message = {
        "text": "see the thread",
        "attachments": [{"from_url": "https://openreview.net/forum?id=abc123", "title": "x"}],
        "blocks": [{"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": [
            {"type": "link", "url": "https://doi.org/10.1000/xyz"}, {"type": "text", "text": " nice"}]}]}],
    }
    assert message_text(message).split("\n") == [
        "see the thread", "https://openreview.net/forum?id=abc123", "https://doi.org/10.1000/xyz"]
    assert message_text({"text": "<https://arxiv.org/abs/1|label> &amp; more"}) == "https://arxiv.org/abs/1 & more"


def test_a_message_without_paper_links_gets_a_clear_private_answer(stack, slack, services):
    _app, edge = stack
    before = services.library.count()
    assert shortcut(edge, slack, {"text": "lunch at noon?"}) == 200
    (answer,) = slack.calls_to("response_url")
    assert answer.params["response_type"] == "ephemeral" and "No paper links" in answer.params["text"]
    assert services.library.count() == before


def test_the_cards_buttons_nominate_for_anyone_and_discuss_for_managers(stack, slack, services):
    app, edge = stack
    shortcut(edge, slack, ARXIV_MESSAGE)
    blocks = slack.calls_to("response_url")[0].params["blocks"]
    card = {"ts": "1700000000.000050", "blocks": blocks}  # the private answer's buttons
    assert click(app, slack, card, 0, user=MEMBER).status == 200  # nominate
    with services.db.session() as session:
        assert len(session.scalars(select(Nomination)).all()) == 1
    assert click(app, slack, card, 1, user=MEMBER).status == 200  # discuss, as a member
    refused = slack.calls_to("response_url")[-1].params
    assert refused["response_type"] == "ephemeral" and refused["text"].startswith("Only channel managers")
    assert [c.params["user"] for c in slack.calls_to("users.info")] == [MEMBER]  # rights asked for discuss only
    assert slack.calls_to("chat.postMessage") == []
    assert click(app, slack, card, 1, user=BOSS).status == 200  # discuss, as an admin: posted now
    post = posted(slack)
    assert post["channel"] == CHANNEL and "Decision Transformer" in json.dumps(post["blocks"])
    with services.db.session() as session:
        (row,) = session.scalars(select(Post)).all()
        assert row.message_ref == post["ts"]  # kept, so reactions and buttons on it vote
