"""The Discord app driven through its command and button callbacks with fakes of
discord.Interaction and of Discord's channels (tests/fake_discord.py): no gateway, no
network, no private discord.py API. The core behind it is the real one, on a copy of
the seeded database.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import discord
import pytest
from discord import app_commands

from adapters.discord.answers import FAILED
from adapters.discord.app import INVITE_PERMISSIONS, PaperClubClient, sync
from adapters.discord.commands import paper_commands
from adapters.discord.messages import DiscordDelivery
from adapters.discord.views import VOTE_ID, VoteButton, actions_view
from bot.app import build_services, command_grammar
from bot.daily.commands import HISTORY_MAX
from bot.meetings.commands import SESSIONS_MAX
from bot.messages import Action, ChannelRef, Incoming, Reply, UserRef
from bot.services.meetings import NOTE_CHARS
from bot.services.models import Post
from bot.votes.commands import POLL_OPTIONS_MAX
from tests.clock import Clock
from tests.conftest import REPO
from tests.fake_discord import (
    CHANNEL_ID,
    GUILD_ID,
    FakeChannel,
    FakeDiscord,
    FakeFollowup,
    FakeInteraction,
    FakeMember,
    FakeMessage,
    FakeResponse,
)
from tests.processes import free_port, paperclub

UTC = timezone.utc
NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)  # a Monday
DISCORD_DOCS = REPO / "docs" / "discord.md"  # the manual's Discord page: set-up and invite


def leaves(group: app_commands.Group) -> dict[str, app_commands.Command]:
    """Every subcommand by name, those of nested groups (/paper channel schedule) too."""
    found: dict[str, app_commands.Command] = {}
    for command in group.commands:
        found.update(leaves(command) if isinstance(command, app_commands.Group) else {command.name: command})
    return found


class Harness:
    """One bot process: services on the database, a client, and the fake guild."""

    def __init__(self, url: str, world: FakeDiscord | None = None, clock: Clock | None = None):
        self.clock = clock or Clock(NOW)
        self.services = build_services(url, clock=self.clock)
        self.world = world or FakeDiscord()
        if CHANNEL_ID not in self.world.channels:
            self.world.add_channel(CHANNEL_ID)
        self.client = PaperClubClient(self.services.core, channels=self.world)

    @property
    def channel(self) -> FakeChannel:
        return self.world.channels[CHANNEL_ID]

    @property
    def group(self) -> app_commands.Group:
        return self.client.tree.get_command("paper")

    async def use(self, name: str, manager: bool = False, user_id: int = 7, channel: FakeChannel | None = None,
                  **options) -> FakeInteraction:
        """/paper NAME option=value..., as Discord would call the subcommand's callback."""
        interaction = FakeInteraction(self.client, self.world, channel or self.channel, user_id=user_id,
                                      manager=manager)
        command = leaves(self.group)[name]
        await command.callback(interaction, **options)
        return interaction

    async def tick(self, at: datetime):
        """The scheduler's tick as `serve` runs it: the core in a worker thread, each
        delivery handed back to the client's event loop."""
        delivery = DiscordDelivery(self.client.messenger, asyncio.get_running_loop())
        return await asyncio.to_thread(self.services.core.tick, at, delivery, ["discord"])

    def channel_ref(self) -> ChannelRef:
        return ChannelRef("discord", str(GUILD_ID), str(CHANNEL_ID))

    def close(self) -> None:
        self.services.db.dispose()


async def click(client: discord.Client, factories: list[type], message: FakeMessage, custom_id: str,
                user_id: int = 7, manager: bool = False) -> FakeInteraction:
    """A click as discord.py's view store dispatches it to a registered DynamicItem: the
    base button rebuilt from the message's components, the factory's from_custom_id,
    then interaction_check and callback."""
    interaction = FakeInteraction(client, message.world, message.channel, user_id=user_id, message=message,
                                  manager=manager)
    posted = next(i.item for i in message.view.children if i.custom_id == custom_id)
    base = discord.ui.Button(label=posted.label, style=posted.style, custom_id=posted.custom_id)
    assert factories == [VoteButton], factories
    match = VOTE_ID.fullmatch(custom_id)
    item = await VoteButton.from_custom_id(interaction, base, match)
    assert await item.interaction_check(interaction)
    await item.callback(interaction)
    return interaction


# --- commands ----------------------------------------------------------------------------------


def test_every_core_command_has_a_subcommand_whose_limits_are_the_cores(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        subcommands = leaves(bot.group)
        assert set(subcommands) == set(bot.services.core.commands)
        history = subcommands["history"].get_parameter("count")
        assert (history.min_value, history.max_value) == (1, HISTORY_MAX)
        options = subcommands["poll"].get_parameter("options")
        assert (options.min_value, options.max_value) == (2, POLL_OPTIONS_MAX)
        sessions = subcommands["sessions"].get_parameter("count")
        assert (sessions.min_value, sessions.max_value) == (1, SESSIONS_MAX)
        assert subcommands["notes"].get_parameter("text").max_value == NOTE_CHARS  # a string's max length
        # Every numeric range is the one the core enforces: its ends pass, one beyond is refused.
        manager = UserRef("discord", "1", is_manager=True)
        for name, parameter in (("history", "count"), ("top", "days"), ("stats", "days"), ("poll", "options"),
                                ("sessions", "count")):
            low, high = (subcommands[name].get_parameter(parameter).min_value,
                         subcommands[name].get_parameter(parameter).max_value)
            for value, accepted in ((low - 1, False), (low, True), (high, True), (high + 1, False)):
                channel = ChannelRef("discord", "1", f"limits-{name}-{value}")
                reply = bot.services.core.handle(Incoming(channel, manager, f"{name} {value}"))
                assert reply.ok is accepted, (name, value, reply.text)
        bot.close()

    asyncio.run(scenario())


def test_the_command_group_is_guild_only_with_valid_discord_payloads():
    client = discord.Client(intents=discord.Intents.default())
    tree = app_commands.CommandTree(client)
    tree.add_command(paper_commands(command_grammar()))
    payload = tree.get_command("paper").to_dict(tree)
    assert payload["contexts"] == [0] and payload["dm_permission"] is False
    assert len(payload["options"]) <= 25
    nested = [o for o in payload["options"] if o["type"] == 2]  # SUB_COMMAND_GROUP: /paper channel ...
    assert [g["name"] for g in nested] == ["channel"] and all(len(g["options"]) <= 25 for g in nested)
    for subcommand in [o for o in payload["options"] if o["type"] == 1] + [s for g in nested for s in g["options"]]:
        assert 1 <= len(subcommand["description"]) <= 100, subcommand["name"]
        for option in subcommand.get("options", []):
            assert 1 <= len(option["description"]) <= 100, (subcommand["name"], option["name"])


def test_search_defers_at_once_runs_the_core_off_the_loop_and_shows_cards(seeded_copy, monkeypatch):
    async def scenario():
        bot = Harness(seeded_copy)
        seen = []
        handle = bot.services.core.handle

        def watched(incoming):
            seen.append((threading.current_thread() is threading.main_thread(), incoming.text))
            return handle(incoming)

        monkeypatch.setattr(bot.services.core, "handle", watched)
        interaction = await bot.use("search", query="graph biconnectivity", collection="poster-session")
        # The first answer is the deferral, before the core ran (so no slow search can miss
        # Discord's 3 seconds); the core ran in a worker thread, never on the event loop.
        assert interaction.events[0] == ("defer", {"ephemeral": False, "thinking": True})
        assert seen == [(False, 'search graph biconnectivity in:"poster-session"')]
        (message,) = interaction.public()
        assert not interaction.private()
        # The answer is the deferred response itself, edited: no followup, nothing deleted.
        assert [kind for kind, _ in interaction.events] == ["defer", "edit_original"]
        assert message.content.startswith("Top ") and "graph biconnectivity" in message.content
        first = message.embeds[0]
        assert first.title.endswith("Rethinking the Expressive Power of GNNs via Graph Biconnectivity")
        fields = {f.name: f.value for f in first.fields}
        assert "poster-session" not in fields["Venue"] and "biconnectivity" in fields["Matched"].lower()
        assert first.footer.text is None  # no title match, and no raw score for members
        assert first.author.name  # the authors line
        bot.close()

    asyncio.run(scenario())


def test_a_schedule_change_by_a_manager_and_the_same_refused_for_a_member(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        options = {"time": "09:00", "zone": "Europe/Berlin", "days": "weekdays"}
        member = await bot.use("schedule", **options)
        assert not member.public()
        assert ("delete_original", None) in member.events  # the public "thinking" did not stay
        assert "Only channel managers can change the schedule" in member.private()[0].content
        assert bot.services.channels.get(bot.channel_ref()).schedule is None
        manager = await bot.use("schedule", manager=True, **options)
        assert "Paper of the day at 09:00 Europe/Berlin, weekdays" in manager.public()[0].content
        assert bot.services.channels.get(bot.channel_ref()).schedule.describe() == "09:00 Europe/Berlin, weekdays"
        # The core validates what the options say: a bad zone changes nothing.
        wrong = await bot.use("schedule", manager=True, time="10:00", zone="Mars/Olympus")
        assert "Mars/Olympus" in wrong.private()[0].content and not wrong.public()
        assert bot.services.channels.get(bot.channel_ref()).schedule.describe() == "09:00 Europe/Berlin, weekdays"
        bot.close()

    asyncio.run(scenario())


def test_a_command_in_a_thread_acts_on_its_channel(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        thread = bot.world.add_channel(555, type=discord.ChannelType.public_thread, parent_id=CHANNEL_ID)
        await bot.use("topics", manager=True, channel=thread, action="add", words="world models")
        assert list(bot.services.channels.get(bot.channel_ref()).topics) == ["world models"]
        posted = await bot.use("next", manager=True, channel=thread)  # no thread inside a thread
        (message,) = posted.public()
        assert message.channel is thread and bot.world.threads() == [thread]
        assert bot.services.core.render_post(int(message.custom_ids()[0].split()[1]))[0] == f"555/{message.id}"
        bot.close()

    asyncio.run(scenario())


def test_meeting_commands_name_members_with_discord_mentions(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        planned = await bot.use("session", manager=True, day="tue", time="17:00", zone="Europe/Berlin")
        assert "The group meets every Tue at 17:00 Europe/Berlin" in planned.public()[0].content
        ana = FakeMember(123456789012345678, "ana")
        rota = await bot.use("presenters", manager=True, action="add", member=ana, more="<@223456789012345678>")
        # The core keeps the ids; members read names: <@id> renders as one (and never pings).
        assert rota.public()[0].content == ("Presenter rota:\n<@123456789012345678>: presented 0 times\n"
                                            "<@223456789012345678>: presented 0 times")
        refused = await bot.use("presenters", action="remove", member=ana)
        assert "Only channel managers" in refused.private()[0].content
        noted = await bot.use("notes", user_id=123456789012345678, paper="12", text="section 4 is the key result")
        assert noted.public()[0].content.startswith("Noted on")
        shown = await bot.use("show", paper="12")
        (discussion,) = [f.value for f in shown.public()[0].embeds[0].fields if f.name == "Discussion"]
        assert discussion.startswith("<@123456789012345678>, ") and discussion.endswith("section 4 is the key result")
        bot.close()

    asyncio.run(scenario())


def test_zone_autocomplete_offers_up_to_25_iana_zones(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        schedule = leaves(bot.group)["schedule"]
        assert schedule.get_parameter("zone").autocomplete
        interaction = FakeInteraction(bot.client, bot.world, bot.channel)
        suggest = schedule.extras["suggest"]  # the callbacks handed to discord.py's autocomplete
        berlin = await suggest["zone"](interaction, "berl")
        assert [c.value for c in berlin] == ["Europe/Berlin"]
        europe = await suggest["zone"](interaction, "europe/")
        assert len(europe) == 25 and all(c.value.startswith("Europe/") for c in europe)
        days = await suggest["days"](interaction, "week")
        assert [c.value for c in days] == ["weekdays", "weekends"]
        bot.close()

    asyncio.run(scenario())


def test_help_longer_than_a_discord_message_comes_in_several_private_messages(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        interaction = await bot.use("help")
        messages = interaction.private()
        assert len(messages) >= 2 and not interaction.public()
        assert all(len(m.content) <= 2000 for m in messages)
        whole = bot.services.core.handle(Incoming(bot.channel_ref(), UserRef("discord", "7"), "help")).text
        assert "\n".join(m.content for m in messages) == whole
        bot.close()

    asyncio.run(scenario())


def test_outside_a_server_nothing_reaches_the_core(seeded_copy, monkeypatch):
    async def scenario():
        bot = Harness(seeded_copy)
        monkeypatch.setattr(bot.services.core, "handle", lambda incoming: pytest.fail("the core was called"))
        interaction = FakeInteraction(bot.client, bot.world, bot.channel, guild_id=None)
        await bot.group.get_command("today").callback(interaction)
        assert "server channels" in interaction.private()[0].content
        bot.close()

    asyncio.run(scenario())


def discord_refusal(status: int, text: str, code: int = 0) -> discord.HTTPException:
    """What discord.py raises for an error answer from Discord."""
    response = SimpleNamespace(status=status, reason="Bad Request")
    return discord.HTTPException(response, {"code": code, "message": text})


@pytest.mark.parametrize("name, options", [("today", {}), ("help", {}), ("search", {"query": "diffusion"})])
def test_a_failing_core_still_answers_the_member_privately(seeded_copy, monkeypatch, name, options):
    async def scenario():
        bot = Harness(seeded_copy)

        def broken(incoming):
            raise RuntimeError("a bug in the core")

        monkeypatch.setattr(bot.services.core, "handle", broken)
        interaction = await bot.use(name, **options)
        assert not interaction.thinking()
        (answer,) = interaction.sent()
        assert answer.ephemeral and answer.content == FAILED and not interaction.public()
        if bot.services.core.commands[name].private:  # deferred privately: the error is the response itself
            assert [kind for kind, _ in interaction.events] == ["defer", "edit_original"]
        else:  # a public "thinking…" cannot turn private: it goes, the member alone is told
            assert [kind for kind, _ in interaction.events] == ["defer", "delete_original", "followup"]
        bot.close()

    asyncio.run(scenario())


def test_a_post_discord_refuses_is_withdrawn_and_the_member_told(seeded_copy, monkeypatch):
    """Discord refusing the answer itself (a malformed embed: 50035) used to leave the
    member at "thinking…" for 15 minutes."""
    async def scenario():
        bot = Harness(seeded_copy)
        replies = []
        handle = bot.services.core.handle
        monkeypatch.setattr(bot.services.core, "handle", lambda incoming: replies.append(handle(incoming)) or
                            replies[-1])
        interaction = FakeInteraction(bot.client, bot.world, bot.channel, manager=True)
        interaction.fail("edit_original_response", discord_refusal(400, "Invalid Form Body", 50035))
        await bot.group.get_command("next").callback(interaction)
        assert not interaction.thinking() and not interaction.public()
        assert [m.content for m in interaction.private()] == [FAILED]
        assert not bot.channel.messages
        # The pick was withdrawn, not used up: the next `next` offers the same paper.
        again = await bot.use("next", manager=True)
        (message,) = again.public()
        assert message.custom_ids() and not again.thinking()
        assert replies[1].cards[0].paper_id == replies[0].cards[0].paper_id
        bot.close()

    asyncio.run(scenario())


def test_when_even_the_apology_fails_nothing_escapes(seeded_copy, monkeypatch, caplog):
    async def scenario():
        bot = Harness(seeded_copy)
        monkeypatch.setattr(bot.services.core, "handle", lambda incoming: 1 / 0)
        interaction = FakeInteraction(bot.client, bot.world, bot.channel)
        interaction.fail("delete_original_response", discord_refusal(404, "Unknown Webhook", 10015))
        await bot.group.get_command("today").callback(interaction)  # does not raise
        assert "could not tell the member" in caplog.text and "ZeroDivisionError" in caplog.text
        bot.close()

    asyncio.run(scenario())


def test_a_failure_after_the_answer_went_out_asks_for_no_retry(seeded_copy, monkeypatch):
    """A vote counted and answered, then the post's redraw failed: telling the member to
    try again would be wrong, so it is only logged."""
    async def scenario():
        bot = Harness(seeded_copy)
        posted = await bot.use("next", manager=True)
        post_id = int(posted.public()[0].custom_ids()[0].split()[1])
        with bot.services.db.session() as session:
            paper = session.get(Post, post_id).paper_id  # members type the paper's number

        async def redraw_fails(post_id):
            raise discord_refusal(500, "Internal Server Error")

        monkeypatch.setattr(bot.client.messenger, "refresh_post", redraw_fails)
        vote = await bot.use("vote", user_id=9, target=paper, choice="up")
        (answer,) = vote.sent()
        assert answer.ephemeral and answer.content.startswith("You want to discuss it")
        assert FAILED not in vote.text() and not vote.thinking()
        bot.close()

    asyncio.run(scenario())


def test_always_private_commands_are_deferred_privately_and_answered_in_place(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        posted = await bot.use("next", manager=True)
        post_id = int(posted.public()[0].custom_ids()[0].split()[1])
        for name, options in (("help", {"command": "search"}), ("vote", {"target": post_id, "choice": "read"}),
                              ("vote", {"target": 999999, "choice": "up"})):
            interaction = await bot.use(name, user_id=9, **options)
            # Private from the deferral on: never a public "thinking…" for others to see.
            assert interaction.events[0] == ("defer", {"ephemeral": True, "thinking": True})
            assert [kind for kind, _ in interaction.events] == ["defer", "edit_original"]
            assert interaction.private() and not interaction.public()
        bot.close()

    asyncio.run(scenario())


def test_the_core_answers_the_private_commands_privately(seeded_copy):
    """The grammar's `private` commands are the adapter's guess, before the core runs, of what the core
    answers privately: a public answer deferred privately would reach one member only."""
    services = build_services(seeded_copy, clock=Clock(NOW))
    channel = ChannelRef("discord", "1", "2")
    manager = UserRef("discord", "9", is_manager=True)
    assert services.core.handle(Incoming(channel, manager, "schedule 09:00 UTC daily")).ok
    paper = services.core.handle(Incoming(channel, manager, "next")).cards[0].paper_id
    poll_id = services.core.handle(Incoming(channel, manager, "poll 2")).poll_id
    lines = {"help": ["help", "help vote", "help nothing"],
             "vote": [f"vote {paper} up", f"vote {paper} none", f"vote {poll_id} 1", "vote 1", "vote 99999 up",
                      "vote x"],
             "settings": ["settings", "settings now"],
             # the answers that reach Zotero are private too; none of these needs it (no key is set)
             "zotero": ["zotero", "zotero link 4242", "zotero key abcdefgh1234", "zotero unlink", "zotero x"]}
    assert set(lines) == {name for name, command in services.core.commands.items() if command.private}
    for line in [text for texts in lines.values() for text in texts]:
        assert services.core.handle(Incoming(channel, manager, line)).ephemeral, line
    services.db.dispose()


# --- posts, threads, buttons ---------------------------------------------------------------------


async def _daily_post(bot: Harness) -> FakeMessage:
    await bot.use("schedule", manager=True, time="09:00", zone="UTC", days="daily")
    report = await bot.tick(NOW)
    assert report["posted"] == 1, report
    return bot.channel.messages[-1]


def test_a_scheduled_post_sends_the_embed_opens_the_thread_and_attaches_the_buttons(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        message = await _daily_post(bot)
        assert not (await bot.tick(NOW))["posted"] and bot.channel.messages[-1] is message  # once
        post_id = int(message.custom_ids()[0].split()[1])
        assert message.custom_ids() == [f"paperclub:vote {post_id} up", f"paperclub:vote {post_id} down",
                                        f"paperclub:vote {post_id} read"]
        assert message.view.timeout is None and message.view.is_persistent()
        ref, rendered = bot.services.core.render_post(post_id)
        assert ref == f"{CHANNEL_ID}/{message.id}"  # the core keeps where the post is
        title = rendered.cards[0].title
        assert message.content == "Paper of the day, Monday 23 November 2026"  # the embed names the paper
        (embed,) = message.embeds
        assert embed.title == f"[{rendered.cards[0].paper_id}] {title}"[:256]
        assert any(f.name == "Why" and f.value for f in embed.fields)
        (thread,) = bot.world.threads()
        assert (thread.id, thread.parent_id, thread.auto_archive_duration) == (message.id, CHANNEL_ID, 1440)
        assert thread.name == (title if len(title) <= 100 else title[:99] + "…")
        bot.close()

    asyncio.run(scenario())


def test_a_post_whose_thread_is_refused_is_still_posted_once(seeded_copy, caplog):
    async def scenario():
        bot = Harness(seeded_copy, FakeDiscord(threads_allowed=False))
        message = await _daily_post(bot)
        assert not bot.world.threads() and message.custom_ids()
        assert "can the bot create public threads" in caplog.text
        later = await bot.tick(NOW + timedelta(minutes=1))  # nothing failed, so nothing is retried
        assert not later["posted"] and not later["failed"] and bot.channel.messages[-1] is message
        bot.close()

    asyncio.run(scenario())


def test_a_click_after_a_restart_is_counted_once_and_redraws_the_post(seeded_copy, monkeypatch):
    async def scenario():
        world = FakeDiscord()
        first = Harness(seeded_copy, world)
        message = await _daily_post(first)
        first.close()
        # A new process: new services, a new client; only setup_hook re-registers the buttons.
        again = Harness(seeded_copy, world)
        registered = []
        add = again.client.add_dynamic_items
        monkeypatch.setattr(again.client, "add_dynamic_items", lambda *items: (registered.extend(items), add(*items)))
        await again.client.setup_hook()
        up = message.custom_ids()[0]
        post_id = int(up.split()[1])
        for _ in range(2):  # the same click delivered twice still counts once
            clicked = await click(again.client, registered, message, up, user_id=7)
            assert clicked.events[0] == ("defer", {"ephemeral": True, "thinking": True})
            (answer,) = clicked.sent()
            assert answer.ephemeral and answer.content.startswith("You want to discuss it. Paper ")
            assert answer.content.endswith("👍 1 · 👎 0 · read 0")
        assert message.content.endswith("👍 1 · 👎 0 · read 0")
        assert message.custom_ids() == [f"paperclub:vote {post_id} {v}" for v in ("up", "down", "read")]
        assert message.edits == 2
        other = await click(again.client, registered, message, message.custom_ids()[1], user_id=8)
        assert other.sent()[0].content.endswith("👍 1 · 👎 1 · read 0")
        assert message.content.endswith("👍 1 · 👎 1 · read 0")
        again.close()

    asyncio.run(scenario())


def test_a_crafted_button_runs_no_command(seeded_copy, caplog):
    """A button's custom_id comes back from the member's client, which can send any: a
    manager's crafted `paperclub:schedule off` must not switch the schedule off."""
    async def scenario():
        bot = Harness(seeded_copy)
        await bot.use("schedule", manager=True, time="09:00", zone="UTC", days="daily")
        crafted = bot.channel.post("looks like ours", [], actions_view([Action("Off", "schedule off")]))
        clicked = await click(bot.client, [VoteButton], crafted, "paperclub:schedule off", manager=True)
        (answer,) = clicked.sent()
        assert answer.ephemeral and "not one of paperclub's" in answer.content
        settings = bot.services.channels.get(bot.channel_ref())
        assert settings.enabled and settings.schedule.describe() == "09:00 UTC, daily"
        assert "refused a click" in caplog.text
        bot.close()

    asyncio.run(scenario())


def test_a_click_whose_core_fails_is_answered_with_the_error(seeded_copy, monkeypatch):
    async def scenario():
        bot = Harness(seeded_copy)
        message = await _daily_post(bot)

        def broken(incoming):
            raise RuntimeError("a bug in the core")

        monkeypatch.setattr(bot.services.core, "click", broken)
        clicked = await click(bot.client, [VoteButton], message, message.custom_ids()[0])
        assert not clicked.thinking()
        assert [kind for kind, _ in clicked.events] == ["defer", "edit_original"]
        assert [(m.ephemeral, m.content) for m in clicked.sent()] == [(True, FAILED)]
        bot.close()

    asyncio.run(scenario())


def test_next_opens_a_thread_and_a_typed_vote_redraws_the_post(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        refused = await bot.use("next")
        assert "Only channel managers" in refused.private()[0].content and not bot.channel.messages
        posted = await bot.use("next", manager=True)
        (message,) = posted.public()
        post_id = int(message.custom_ids()[0].split()[1])
        (thread,) = bot.world.threads()
        assert thread.id == message.id and thread.name
        assert bot.services.core.render_post(post_id)[0] == f"{CHANNEL_ID}/{message.id}"
        with bot.services.db.session() as session:
            paper = session.get(Post, post_id).paper_id  # the number on the card
        vote = await bot.use("vote", user_id=9, target=paper, choice="read")
        assert vote.private()[0].content.endswith("👍 0 · 👎 0 · read 1")
        assert message.content.endswith("👍 0 · 👎 0 · read 1") and message.embeds
        bot.close()

    asyncio.run(scenario())


def test_poll_buttons_and_the_result_in_the_poll_thread(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        started = await bot.use("poll", manager=True, options=2, duration="1h")
        (poll_message,) = started.public()
        poll_id = int(poll_message.custom_ids()[0].split()[1])
        assert poll_message.custom_ids() == [f"paperclub:vote {poll_id} 1", f"paperclub:vote {poll_id} 2"]
        assert len(poll_message.embeds) == 2
        assert bot.services.polls.get(poll_id).message_ref == f"{CHANNEL_ID}/{poll_message.id}"
        voted = await click(bot.client, [VoteButton], poll_message, f"paperclub:vote {poll_id} 2", user_id=9)
        assert voted.sent()[0].ephemeral and f"poll {poll_id}: option 2" in voted.sent()[0].content
        assert poll_message.edits == 0  # a poll shows no running tally
        report = await bot.tick(NOW + timedelta(hours=1))
        assert report["polls_closed"] == 1
        (thread,) = bot.world.threads()
        # The poll opened its discussion thread when it was posted; the result lands there.
        assert thread.id == poll_message.id and thread.name == f"Poll {poll_id}: what do we read next?"
        (result,) = thread.messages
        assert "2. " in result.content and ": 1 vote" in result.content and "Winner" in result.content
        assert poll_message.channel.messages == [poll_message]  # nothing else in the channel
        bot.close()

    asyncio.run(scenario())


def test_a_poll_result_finds_a_place_when_its_message_has_no_thread_possible(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        thread = bot.world.add_channel(555, type=discord.ChannelType.public_thread, parent_id=CHANNEL_ID)
        in_thread = await bot.use("poll", manager=True, channel=thread, options=2, duration="1h")
        other = bot.world.add_channel(101)
        in_other = await bot.use("poll", manager=True, channel=other, options=2, duration="1h")
        (gone,) = in_other.public()
        other.messages.remove(gone)  # someone deleted the poll's message
        del bot.world.messages[gone.id]
        assert (await bot.tick(NOW + timedelta(hours=1)))["polls_closed"] == 2
        assert thread.messages[-1].content.startswith(f"Poll {in_thread.public()[0].custom_ids()[0].split()[1]} closed")
        # The deleted poll message's thread outlives it (as on Discord): the result goes there.
        (poll_thread,) = [t for t in bot.world.threads() if t.id == gone.id]
        assert poll_thread.messages[-1].content.startswith(f"Poll {gone.custom_ids()[0].split()[1]} closed")
        assert {t.id for t in bot.world.threads()} == {thread.id, gone.id}
        bot.close()

    asyncio.run(scenario())


def test_a_ten_option_poll_fits_discords_embed_limits(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        started = await bot.use("poll", manager=True, options=10)
        (message,) = started.public()
        assert len(message.embeds) == 10 and sum(len(e) for e in message.embeds) <= 6000
        assert len(message.custom_ids()) == 10 and all(len(i) <= 100 for i in message.custom_ids())
        bot.close()

    asyncio.run(scenario())


# --- the app around it --------------------------------------------------------------------------------


def test_the_client_uses_default_intents_and_never_mentions(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        assert bot.client.intents == discord.Intents.default()
        mentions = bot.client.allowed_mentions
        assert not (mentions.everyone or mentions.users or mentions.roles or mentions.replied_user)
        bot.close()

    asyncio.run(scenario())


def test_sync_without_a_token_says_what_to_set(monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert sync(None) == 2
    assert "DISCORD_TOKEN is not set" in capsys.readouterr().err


def test_sync_that_cannot_reach_discord_says_so_in_one_line():
    """No network: one line naming where it tried, status 1, no aiohttp traceback."""
    api = f"http://127.0.0.1:{free_port()}/api/v10"  # nothing listens there
    result = paperclub("discord", "sync", cwd=REPO,
                       env={"DISCORD_TOKEN": "a-fake-token-for-this-test", "DISCORD_API_URL": api})
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: could not reach Discord at {api}: ") and "Connect call failed" in line
    assert "a-fake-token-for-this-test" not in result.stderr + result.stdout


def test_serve_stops_with_one_line_when_discord_cannot_be_reached(seeded_copy, monkeypatch, caplog):
    from discord.http import Route

    from adapters.discord.app import DiscordRunner

    api = f"http://127.0.0.1:{free_port()}/api/v10"
    monkeypatch.setattr(Route, "BASE", api)
    services = build_services(seeded_copy)
    stopped = []
    finished = threading.Event()
    runner = DiscordRunner(services.core, "a-fake-token", None,
                           on_exit=lambda problem: (stopped.append(problem), finished.set()))
    runner.start()
    assert finished.wait(30)
    runner.stop(5)
    assert stopped == [stopped[0]] and stopped[0].startswith(f"could not reach Discord at {api}: ")
    assert "Traceback" not in caplog.text
    services.db.dispose()


def test_the_documented_invite_asks_for_exactly_the_permissions_used():
    text = DISCORD_DOCS.read_text(encoding="utf-8")
    assert text.index("# Discord") < text.index("## Set it up") < text.index("## How it behaves")
    section = text[text.index("## Set it up"):text.index("## How it behaves")]
    invites = re.findall(r"https://discord\.com/oauth2/authorize\S*", section)
    assert invites, "docs/discord.md's set-up has no invite URL"
    for invite in invites:
        assert f"permissions={INVITE_PERMISSIONS.value}" in invite
        assert "scope=bot+applications.commands" in invite
    assert f"permissions={INVITE_PERMISSIONS.value}" in section
    assert "scope=bot+applications.commands" in section
    # The README's set-up step gives the same invite: no other permission integer anywhere.
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"permissions={INVITE_PERMISSIONS.value}" in readme
    assert set(re.findall(r"permissions=(\d+)", readme + text)) == {str(INVITE_PERMISSIONS.value)}
    needed = discord.Permissions(
        view_channel=True, send_messages=True, embed_links=True, create_public_threads=True,
        send_messages_in_threads=True, read_message_history=True,
    )
    assert needed == INVITE_PERMISSIONS


@pytest.mark.parametrize("fake, real", [
    (FakeResponse.defer, discord.InteractionResponse.defer),
    (FakeFollowup.send, discord.Webhook.send),
    (FakeInteraction.delete_original_response, discord.Interaction.delete_original_response),
    (FakeInteraction.edit_original_response, discord.Interaction.edit_original_response),
    (FakeChannel.send, discord.TextChannel.send),
    (FakeChannel.send, discord.Thread.send),
    (FakeChannel.get_partial_message, discord.TextChannel.get_partial_message),
    (FakeMessage.edit, discord.PartialMessage.edit),
    (FakeMessage.create_thread, discord.PartialMessage.create_thread),
    (FakeMessage.create_thread, discord.Message.create_thread),
    (FakeDiscord.get_channel, discord.Client.get_channel),
    (FakeDiscord.fetch_channel, discord.Client.fetch_channel),
])
def test_the_fakes_have_discord_pys_signatures(fake, real):
    """A fake accepting what discord.py does not would let a broken adapter pass."""
    fake_parameters = inspect.signature(fake).parameters
    real_parameters = inspect.signature(real).parameters
    for name, parameter in fake_parameters.items():
        assert name in real_parameters, f"{fake.__qualname__}: discord.py has no parameter {name!r}"
        assert parameter.kind == real_parameters[name].kind, (fake.__qualname__, name)
    assert inspect.iscoroutinefunction(fake) == inspect.iscoroutinefunction(real), fake.__qualname__


def test_the_fake_interaction_has_only_what_a_real_one_has(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        interaction = FakeInteraction(bot.client, bot.world, bot.channel)
        used = ("client", "guild_id", "channel", "channel_id", "user", "permissions", "message", "response",
                "followup", "delete_original_response", "edit_original_response")
        for name in used:
            assert hasattr(interaction, name) and hasattr(discord.Interaction, name), name
        bot.close()

    asyncio.run(scenario())


def test_a_shutdown_while_discord_is_still_logging_in_fails_the_post_for_retry(seeded_copy):
    """The scheduler's post waits for the login; a SIGTERM meanwhile must not leave the
    claim 'sending' (never retaken): nothing went out, so it is a failure to retry."""
    import time

    from sqlalchemy import select

    from adapters.discord.app import DiscordRunner
    from bot.services.models import Claim

    services = build_services(seeded_copy)
    ref = ChannelRef("discord", "1", "2")
    manager = UserRef("discord", "9", "admin", is_manager=True)
    assert services.core.handle(Incoming(ref, manager, "schedule 09:00 UTC daily")).ok
    stopping = threading.Event()
    runner = DiscordRunner(services.core, "never-used", None, on_exit=lambda _: None, stopping=stopping)
    threading.Timer(0.3, stopping.set).start()  # SIGTERM arrives while the login is pending
    started = time.monotonic()
    report = services.posts.tick(datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc), runner.deliver, ["discord"])
    assert time.monotonic() - started < 5  # not the 60 s login wait
    assert report.failed == [(ref, "the Discord client has not logged in yet")]
    with services.db.session() as session:
        assert session.scalar(select(Claim.state)) == "failed"
    services.db.dispose()


def test_a_reminder_links_to_the_posts_discussion(seeded_copy):
    async def scenario():
        bot = Harness(seeded_copy)
        ref = f"{CHANNEL_ID}/4242"
        await bot.client.messenger.post(CHANNEL_ID, Reply(text="Tomorrow: reading group.", link_to=ref))
        content = bot.channel.messages[-1].content
        assert content == f"Tomorrow: reading group.\nDiscussion: https://discord.com/channels/{GUILD_ID}/{ref}"
        bot.close()

    asyncio.run(scenario())
