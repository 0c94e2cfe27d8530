"""The weekly digest on Discord: one message, its sections as embeds within Discord's
limits (the fake channel refuses what Discord refuses, 50035), however much the week held."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from adapters.discord.embeds import outgoing
from bot.digest.compose import digest_reply
from bot.messages import Reply, Section
from tests.digest.scene import giant_sections
from tests.discord.test_discord import NOW, Harness
from tests.fake_discord_api import message_errors


def payload(message) -> dict:
    return {"content": message.content or "", "embeds": [e.to_dict() for e in message.embeds]}


def test_a_weeks_digest_is_one_message_with_an_embed_per_section(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        await bot.use("schedule", manager=True, time="09:00", zone="UTC", days="daily")
        await bot.use("digest", manager=True, day="mon", time="08:30")
        for day in range(7):
            assert (await bot.tick(NOW + timedelta(days=day)))["posted"] == 1
        before = len(bot.channel.messages)
        report = await bot.tick(NOW + timedelta(days=7, minutes=-30))
        assert report["digests"] == 1
        (digest,) = bot.channel.messages[before:]  # one post
        assert digest.content.startswith("Weekly digest: the week from Mon 23 Nov to Mon 30 Nov 08:30 UTC")
        assert [e.title for e in digest.embeds] == ["Posted this week (7 papers)"]
        assert digest.embeds[0].description.count("\n") == 6 and "👍 0 · 👎 0 · read 0" in digest.embeds[0].description
        assert message_errors(payload(digest)) == {}
        assert digest.view is None or not digest.view.children  # no buttons: members type the numbers
        assert (await bot.tick(NOW + timedelta(days=7, minutes=-29)))["digests"] == 0
        assert len(bot.channel.messages) == before + 1
        bot.close()

    asyncio.run(scenario())


def test_a_digest_holding_too_much_is_one_message_within_discords_limits():
    since = NOW - timedelta(days=7)
    messages = outgoing(digest_reply(giant_sections(), since, NOW, "UTC"))
    (message,) = messages
    body = {"content": message.content, "embeds": [e.to_dict() for e in message.embeds]}
    assert message_errors(body) == {}
    assert len(message.embeds) == 10 and sum(len(e) for e in message.embeds) <= 6000
    parts = [e for e in message.embeds if e.title.startswith("Part ")]
    assert len(parts) == 8 and all(p.description.endswith("\n…") for p in parts)  # cut by whole lines
    assert all(line.startswith("[") for p in parts for line in p.description.split("\n")[:-1])


def test_a_members_mention_in_a_section_names_them():
    reply = Reply(text="digest", sections=[Section("Meetings", ["Next: presented by @123456789012345678"])])
    (message,) = outgoing(reply)
    assert message.embeds[0].description == "Next: presented by <@123456789012345678>"
