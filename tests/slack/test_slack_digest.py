"""The weekly digest on Slack: one chat.postMessage whose Block Kit stays within Slack's
limits, however much the week held."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapters.fakes.slack_api import BOT_TOKEN, TEAM
from adapters.slack.app import BotClients, SlackDelivery
from adapters.slack.blocks import MAX_BLOCKS, MESSAGE_CHARS, SECTION_CHARS, message, text_chars
from bot.digest.compose import digest_reply
from bot.messages import ChannelRef, Incoming, Reply, Section, UserRef
from tests.digest.scene import giant_sections
from tests.slack.harness import BOSS, CHANNEL, section_texts

MONDAY = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def within_limits(payload: dict) -> None:
    blocks = payload["blocks"]
    assert len(blocks) <= MAX_BLOCKS and text_chars(blocks) <= MESSAGE_CHARS < 12_000
    assert all(len(b["text"]["text"]) <= SECTION_CHARS for b in blocks if b["type"] == "section")
    assert all(len(b["elements"]) <= 10 for b in blocks if b["type"] == "context")
    assert len(payload["text"]) <= 3000


def test_a_weeks_digest_is_one_message_with_a_block_per_section(services, slack):
    boss = Incoming(ChannelRef("slack", TEAM, CHANNEL), UserRef("slack", BOSS, is_manager=True), "")
    for line in ("schedule 09:00 UTC daily", "digest mon 08:30"):
        assert services.core.handle(Incoming(boss.channel, boss.user, line)).ok
    delivery = SlackDelivery(BotClients(slack.api_url, token=BOT_TOKEN))
    for day in range(7):
        assert services.core.tick(MONDAY + timedelta(days=day), delivery, ["slack"])["posted"] == 1
    report = services.core.tick(MONDAY + timedelta(days=7, minutes=-30), delivery, ["slack"])
    assert report["digests"] == 1 and report["posted"] == 0
    digest = slack.calls_to("chat.postMessage")[-1].params
    assert digest["channel"] == CHANNEL
    assert digest["text"].startswith("Weekly digest: the week from Mon 23 Nov to Mon 30 Nov 08:30 UTC")
    within_limits(digest)
    texts = section_texts(digest["blocks"])
    assert "*Posted this week (7 papers)*\n[" in texts and "👍 0 · 👎 0 · read 0" in texts
    assert services.core.tick(MONDAY + timedelta(days=7, minutes=-29), delivery, ["slack"])["digests"] == 0
    sent = [c.params["text"] for c in slack.calls_to("chat.postMessage")]
    assert len(sent) == 9 and sent[1].startswith("Quiet week")  # Monday 23's digest (09:00 tick) had nothing


def test_a_digest_holding_too_much_is_cut_to_slacks_limits_with_what_was_left_out_said():
    since = datetime(2026, 11, 23, tzinfo=UTC)
    payload = message(digest_reply(giant_sections(), since, since + timedelta(days=7), "UTC"))
    within_limits(payload)
    texts = section_texts(payload["blocks"])
    assert texts.count("*Part ") >= 3 and "_…and " in texts  # lines counted, not silently dropped
    assert "&lt;b&gt;&amp;amp;" in texts and all(b["text"]["verbatim"] for b in payload["blocks"]
                                                  if b["type"] == "section")
    notes = [e["text"] for b in payload["blocks"] if b["type"] == "context" for e in b["elements"]]
    assert any("more parts" in n or "more paper" in n for n in notes)


def test_sixty_sections_stop_at_fifty_blocks_and_say_so():
    reply = Reply(text="many parts", sections=[Section(f"Part {n}", ["a line"]) for n in range(60)])
    payload = message(reply)
    within_limits(payload)
    assert payload["blocks"][-1]["elements"][0]["text"].startswith("…and 12 more parts")
