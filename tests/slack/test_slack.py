"""The Slack adapter on the real bolt App, against a fake Slack Web API on 127.0.0.1.

Requests are signed like Slack signs them and go through `App.dispatch`, so signature
checks, listener matching, acks and lazy listeners are bolt's own. Bolt's listeners run
on an inline executor here: a dispatch returns once its lazy listener has finished.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.oauth.installation_store import Installation
from sqlalchemy import func, select

from adapters.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    TEAM,
    signed_headers,
    slash_command,
)
from adapters.slack.app import (
    BotClients,
    Managers,
    SlackDelivery,
    build_app,
    command_text,
    web_client,
)
from adapters.slack.blocks import MESSAGE_CHARS, text_chars
from adapters.slack.config import SlackSettings
from bot.app import build_services
from bot.corpus.records import PaperRecord
from bot.messages import ChannelRef, DeliveryRefused, Incoming, Reply, UserRef
from bot.services.models import PollVote, Post, PostVote
from store.models import Channel
from tests.slack.harness import (
    BOSS,
    CHANNEL,
    MEMBER,
    InlineExecutor,
    click,
    command,
    posted,
    section_texts,
    send,
)

# --- slash commands -------------------------------------------------------------------------


def test_a_signed_search_is_answered_in_the_ack_with_the_paper_card(app, slack):
    response = command(app, slack, "search graph biconnectivity")
    assert response.status == 200
    answer = json.loads(response.body)
    assert answer["response_type"] == "in_channel"
    first_card = answer["blocks"][1]["text"]["text"]
    assert first_card.startswith(
        "*Rethinking the Expressive Power of GNNs via Graph Biconnectivity*"
    )
    assert "*biconnectivity*" in first_card  # the matched words in bold in the snippet
    facts = [e["text"] for e in answer["blocks"][2]["elements"]]
    assert (
        "matched: *graph*, *biconnectivity*" in facts and "top 5% · Outstanding Paper" in facts[1]
    )
    # Answered inside the ack: nothing was posted through the Web API or the response_url.
    assert slack.calls_to("chat.postMessage") == [] and slack.calls_to("response_url") == []


def test_errors_and_usage_are_ephemeral(app, slack):
    usage = json.loads(command(app, slack, "search").body)
    assert usage["response_type"] == "ephemeral" and "Usage: search QUERY" in usage["text"]
    unknown = json.loads(command(app, slack, "frobnicate").body)
    assert (
        unknown["response_type"] == "ephemeral"
        and "Unknown command `frobnicate`" in unknown["text"]
    )


def test_markup_typed_into_a_command_is_shown_not_acted_on(app, slack):
    # Slack sends a typed "<!channel>" escaped; the core sees it as typed and echoes it.
    answer = json.loads(command(app, slack, "search qqqzzzx &lt;!channel&gt;").body)
    assert "papers for `qqqzzzx &lt;!channel&gt;`" in answer["blocks"][0]["text"]["text"]
    assert "<!channel>" not in json.dumps(answer)


def test_a_search_over_huge_abstracts_fits_one_slack_message_and_pings_nobody(app, slack, services):
    # Five cards of about 2,000 characters and a pasted paragraph as the query: all of it
    # whole would be about 13,700 characters, past the ~12,000 at which Slack refuses it.
    records = [
        PaperRecord(
            title=f"Attention variant {n} " + "with a very long descriptive title " * 7,
            authors=[f"Author Number{k} " + "Withaverylongfamilyname" * 3 for k in range(8)],
            abstract="@here " + " ".join(f"attention {'x' * 45}{n}{i}" for i in range(300)),
            url=f"https://openreview.net/forum?id=huge{n}",
            track=("Oral presentation in the long-sequence track " * 3)[:90],
            award=("Outstanding Paper Honourable Mention " * 3)[:90],
            tags=[f"@channel long-tag-{k}-" + "y" * 40 for k in range(10)],
        )
        for n in range(5)
    ]
    services.library.import_records(records, collection="huge", source="huge.jsonl", fmt="jsonl")
    pasted = "sequence models need long context windows " * 60  # a member pastes a paragraph
    answer = json.loads(command(app, slack, f"search attention in:huge {pasted}").body)
    blocks = answer["blocks"]
    assert text_chars(blocks) <= MESSAGE_CHARS < 12_000
    cards = [b["text"]["text"] for b in blocks if b["type"] == "section" and "Attention variant" in b["text"]["text"]]
    more = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"] if "more paper" in e["text"]]
    left_out = int(more[0].split()[1]) if more else 0
    assert len(cards) + left_out == 5 and len(cards) >= 3  # every paper shown or counted
    assert "@here" in cards[0]  # shown as text, and verbatim: Slack does not turn it into a ping
    assert all(b["text"]["verbatim"] is True for b in blocks if b["type"] == "section")


def test_a_bad_signature_or_a_six_minute_old_request_gets_401_and_changes_nothing(
    app, slack, services
):
    body = slash_command("next", slack.response_url(), user=BOSS)
    forged = signed_headers(body, secret="not-the-signing-secret")
    stale = signed_headers(body, timestamp=int(time.time()) - 360)
    calls_before = len(slack.calls)
    assert send(app, body, forged).status == 401
    assert send(app, body, stale).status == 401
    assert len(slack.calls) == calls_before  # no users.info, no post
    with services.db.session() as session:
        assert session.scalar(select(func.count(Post.id))) == 0
        assert session.scalar(select(func.count(Channel.id))) == 0


def test_next_is_posted_with_chat_postmessage_and_a_click_updates_the_tally(app, slack, services):
    ack = command(app, slack, "next", user=BOSS)
    assert (
        ack.status == 200 and ack.body == ""
    )  # acked at once; the post comes from the lazy listener
    post = posted(slack)
    assert post["channel"] == CHANNEL and post["text"].startswith("Next paper: ")
    buttons = post["blocks"][-1]["elements"]
    assert [b["action_id"] for b in buttons] == [
        "paperclub_action_0",
        "paperclub_action_1",
        "paperclub_action_2",
    ]
    post_id = int(buttons[0]["value"].split()[1])
    assert [b["value"] for b in buttons] == [
        f"vote {post_id} up",
        f"vote {post_id} down",
        f"vote {post_id} read",
    ]
    assert services.core.render_post(post_id)[0] == post["ts"]  # the ts was remembered

    for _ in range(2):  # the same vote delivered twice counts once
        assert click(app, slack, post, 0).status == 200
    updates = slack.calls_to("chat.update")
    assert len(updates) == 2 and all(u.params["ts"] == post["ts"] for u in updates)
    assert "👍 1 · 👎 0 · read 0" in section_texts(updates[-1].params["blocks"])
    answers = slack.calls_to("response_url")
    assert (
        answers[-1].params["response_type"] == "ephemeral"
        and answers[-1].params["replace_original"] is False
    )
    assert "You want to discuss it" in answers[-1].params["text"]
    with services.db.session() as session:
        assert session.scalar(select(func.count(PostVote.id))) == 1


def test_a_members_schedule_is_refused_and_an_admins_is_taken(app, slack, services):
    refused = json.loads(command(app, slack, "schedule 09:00 Europe/Berlin weekdays").body)
    assert refused["response_type"] == "ephemeral" and "Only channel managers" in refused["text"]
    channel = ChannelRef("slack", TEAM, CHANNEL)
    assert services.channels.get(channel).schedule is None
    taken = json.loads(command(app, slack, "schedule 09:00 Europe/Berlin weekdays", user=BOSS).body)
    assert taken["response_type"] == "in_channel"
    assert services.channels.get(channel).schedule is not None
    command(app, slack, "schedule off", user=BOSS)
    assert [c.params["user"] for c in slack.calls_to("users.info")] == [MEMBER, BOSS]  # cached


def test_a_poll_has_one_button_per_option_and_its_result_goes_to_its_thread(app, slack, services):
    command(app, slack, "poll 3 1h", user=BOSS)
    poll = posted(slack)
    buttons = poll["blocks"][-1]["elements"]
    poll_id = int(buttons[0]["value"].split()[1])
    assert [b["value"] for b in buttons] == [f"vote {poll_id} {n}" for n in (1, 2, 3)]
    click(app, slack, poll, 1)
    assert "option 2" in slack.calls_to("response_url")[-1].params["text"]
    with services.db.session() as session:
        assert session.scalar(select(func.count(PollVote.id))) == 1

    command(app, slack, "poll close", user=BOSS)
    result = slack.calls_to("chat.postMessage")[-1].params
    assert result["thread_ts"] == poll["ts"] and f"Poll {poll_id} closed." in result["text"]


def test_the_tick_closes_a_poll_at_its_deadline_and_posts_the_result_in_its_thread(
    app, slack, services
):
    command(app, slack, "poll 2 1h", user=BOSS)
    poll = posted(slack)
    delivery = SlackDelivery(BotClients(slack.api_url, token=BOT_TOKEN))
    report = services.core.tick(datetime.now(UTC) + timedelta(hours=2), delivery, ["slack"])
    assert report["polls_closed"] == 1
    result = slack.calls_to("chat.postMessage")[-1].params
    assert (
        result["thread_ts"] == poll["ts"]
        and "closed" in result["text"]
        and "No votes" in result["text"]
    )


def test_a_private_channel_without_the_bot_gets_a_way_out_not_silence(app, slack):
    slack.failing["chat.postMessage"] = "not_in_channel"
    command(app, slack, "next", user=BOSS)
    answer = slack.calls_to("response_url")[-1].params
    assert answer["response_type"] == "ephemeral" and "/invite @paperclub" in answer["text"]


def test_the_allowlist_makes_managers_without_asking_slack(slack):
    managers = Managers(frozenset({"U0LEAD"}))
    client = web_client(slack.api_url, BOT_TOKEN)
    assert managers.is_manager(client, TEAM, "U0LEAD")
    assert not managers.is_manager(client, TEAM, MEMBER)
    assert [c.params["user"] for c in slack.calls_to("users.info")] == [MEMBER]


def test_an_admin_is_asked_again_once_the_cache_has_expired(slack):
    now = [0.0]
    managers = Managers(frozenset(), ttl=300, clock=lambda: now[0])
    client = web_client(slack.api_url, BOT_TOKEN)
    assert managers.is_manager(client, TEAM, BOSS)
    slack.admins.clear()  # demoted
    now[0] = 299.0
    assert managers.is_manager(client, TEAM, BOSS)
    now[0] = 301.0
    assert not managers.is_manager(client, TEAM, BOSS)


def test_command_text_undoes_slacks_escaping_and_keeps_mentions():
    assert command_text("search a &amp; b &lt;x&gt;") == "search a & b <x>"
    assert command_text("show <https://arxiv.org/abs/2202.06709|arxiv.org/abs/2202.06709>") == (
        "show https://arxiv.org/abs/2202.06709"
    )
    assert command_text("swap <@U0BEN|ben>") == "swap <@U0BEN|ben>"


# --- the scheduler's delivery ---------------------------------------------------------------


def test_a_tick_posts_the_card_with_vote_buttons_and_a_click_updates_it(app, slack, services):
    boss = Incoming(ChannelRef("slack", TEAM, CHANNEL), UserRef("slack", BOSS, is_manager=True), "")
    assert services.core.handle(_with_text(boss, "schedule 09:00 UTC daily")).ok
    assert services.core.handle(_with_text(boss, "topics add graph neural networks")).ok
    delivery = SlackDelivery(BotClients(slack.api_url, token=BOT_TOKEN))
    report = services.core.tick(datetime(2026, 6, 1, 9, 0, tzinfo=UTC), delivery, ["slack"])
    assert report["posted"] == 1
    post = posted(slack)
    assert post["channel"] == CHANNEL and post["text"].startswith(
        "Paper of the day, Monday 01 June 2026"
    )
    assert "*Why:* Matches this channel's topics" in section_texts(post["blocks"])
    assert len(post["blocks"][-1]["elements"]) == 3
    assert slack.calls_to("chat.postMessage")[-1].token == BOT_TOKEN

    click(app, slack, post, 2)
    update = slack.calls_to("chat.update")[-1].params
    assert update["channel"] == CHANNEL and update["ts"] == post["ts"]
    assert "👍 0 · 👎 0 · read 1" in section_texts(update["blocks"])


def test_delivery_waits_out_a_rate_limit(slack):
    slack.rate_limited["chat.postMessage"] = 1
    delivery = SlackDelivery(BotClients(slack.api_url, token=BOT_TOKEN))
    ts = delivery(ChannelRef("slack", TEAM, CHANNEL), Reply(text="hello"))
    assert ts and len(slack.calls_to("chat.postMessage")) == 2  # a 429, then the post


def _with_text(incoming: Incoming, text: str) -> Incoming:
    return Incoming(incoming.channel, incoming.user, text)


# --- many workspaces through OAuth ------------------------------------------------------------


def test_with_oauth_each_workspace_is_answered_and_posted_to_with_its_own_token(
    database_url, slack
):
    services = build_services(database_url, ensure_schema=False)
    services.db.upgrade()
    settings = SlackSettings(
        SIGNING_SECRET,
        client_id="111.222",
        client_secret="not-a-real-secret",
        api_url=slack.api_url,
    )
    app, clients = build_app(services, settings, InlineExecutor())
    for team in ("T0ONE", "T0TWO"):  # what two OAuth installs leave in the store
        app.installation_store.save(
            Installation(
                app_id="A0PAPERCLUB",
                team_id=team,
                user_id="U0INSTALLER",
                bot_token=f"xoxb-{team.lower()}-not-real",
                bot_id=f"B{team}",
                bot_user_id=f"U{team}",
                bot_scopes=["commands", "chat:write"],
                installed_at=time.time(),
            )
        )
    response = command(app, slack, "help", team="T0TWO")
    assert response.status == 200 and "paperclub commands" in response.body
    command(app, slack, "schedule off", user=BOSS, team="T0TWO")  # a manager's line asks users.info
    assert slack.calls_to("users.info")[-1].token == "xoxb-t0two-not-real"

    SlackDelivery(clients)(ChannelRef("slack", "T0ONE", "C0ONE"), Reply(text="hello"))
    assert slack.calls_to("chat.postMessage")[-1].token == "xoxb-t0one-not-real"
    with pytest.raises(DeliveryRefused, match="not installed in Slack workspace T0NEW") as refused:
        SlackDelivery(clients)(ChannelRef("slack", "T0NEW", "C0NEW"), Reply(text="hello"))
    assert refused.value.permanent  # only an admin's new install helps: no retries all day
    unknown = command(app, slack, "help", team="T0NEW")
    assert unknown.body == ""  # bolt refuses it before our listener runs, and says why:
    assert "not installed in this workspace" in slack.calls_to("response_url")[-1].params["text"]
    services.db.dispose()


def test_a_reminder_goes_into_the_posts_thread_and_the_channel(slack):
    delivery = SlackDelivery(BotClients(slack.api_url, token=BOT_TOKEN))
    delivery(ChannelRef("slack", TEAM, CHANNEL), Reply(text="Tomorrow: reading group.", link_to="1700000000.000100"))
    post = posted(slack)
    assert post["thread_ts"] == "1700000000.000100" and post["reply_broadcast"] in (True, "true", "1")


def test_a_typed_vote_takes_the_number_on_the_card(app, slack, services):
    command(app, slack, "next", user=BOSS)
    post = posted(slack)
    post_id = int(post["blocks"][-1]["elements"][0]["value"].split()[1])
    with services.db.session() as session:
        paper = session.get(Post, post_id).paper_id
    assert f"ID {paper}" in json.dumps(post["blocks"])  # the number the card shows
    assert command(app, slack, f"vote {paper} up").status == 200  # acked, answered after
    answer = slack.wait_for("response_url")[-1].params
    assert answer["text"].startswith(f"You want to discuss it. Paper {paper}: 👍 1")
    assert "👍 1 · 👎 0 · read 0" in section_texts(slack.wait_for("chat.update")[-1].params["blocks"])
