"""Reactions that vote, and the "Add to paperclub" message menu, on Discord.

Reactions go the whole way: the real discord.py client logs in to the fake Discord of
tests/fake_discord_api.py, which dispatches MESSAGE_REACTION_ADD / _REMOVE over its
gateway; the redraw is a PATCH of the post through the fake REST API. The redraw's timer
is held until the test flushes it (no sleeping, no race on "within two seconds").

The message menu goes through the fake gateway too (INTERACTION_CREATE, then the
deferral and the answer through the interaction callback and webhook routes); its buttons
(nominate, discuss) are clicked through the interaction fakes of tests/fake_discord.py.
The paper providers are the fakes of tests/adding/fake_providers.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import discord
import pytest

from adapters.discord.app import PaperClubClient
from adapters.discord.commands import message_text
from adapters.discord.reactions import ReceiptOrder
from adapters.discord.views import VoteButton
from bot.messages import Incoming
from bot.services.models import Nomination, Post
from tests.adding.conftest import providers_for
from tests.adding.fake_providers import FakeProviders
from tests.discord import test_discord_api_fake as api_fake
from tests.discord.test_discord import Harness, click
from tests.discord.test_discord_api_fake import (
    CHANNEL,
    GUILD_READY_TIMEOUT,
    MANAGER,
    connected,
    schedule_daily,
    tick,
)
from tests.fake_discord_api import BOT_USER_ID, CHANNEL_ID

# The fixtures of the real-client tests: the fake Discord, services on a seeded copy.
discord_endpoint, fake, services = api_fake.discord_endpoint, api_fake.fake, api_fake.services
ANN, BOB, CY = 1_100_000_000_000_000_501, 1_100_000_000_000_000_502, 1_100_000_000_000_000_503
WAIT_SECONDS = 10.0


class HeldTimer:
    """A redraw timer that never fires by itself: `client.redraws.flush()` runs it."""

    def __init__(self, _delay, _callback):
        pass

    def cancel(self):
        pass


def client_for(services) -> PaperClubClient:
    client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
    client.redraws.start_timer = HeldTimer
    return client


async def until(condition: Callable[[], bool]) -> None:
    """Wait (on the loop, so the client keeps handling events) until `condition()`."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "the client did not get there in time"
        await asyncio.sleep(0.02)


def tally(services, post_id: int) -> tuple[int, int, int]:
    counted = services.votes.tallies([post_id])[post_id]
    return counted.up, counted.down, counted.read


async def counted(client: PaperClubClient, services, post_id: int, expected: tuple[int, int, int]) -> None:
    """Until the tally is `expected` and the adapter has asked to redraw the post: the
    core counts the vote in a worker thread, and only then does the event handler, back
    on the loop, mark the post for its redraw (a flush in between would find nothing)."""
    await until(lambda: tally(services, post_id) == expected and post_id in client.redraws.pending())


async def redraw(client: PaperClubClient) -> None:
    client.redraws.flush()
    await client.reaction_votes.settled()


def counting(services) -> list:
    """The reactions that reached the core, once each has been answered (the adapter
    handles events concurrently: waiting for the last to count is not enough)."""
    answered: list = []
    react = services.core.react

    def counted(reaction):
        post_id = react(reaction)
        answered.append((reaction, post_id))
        return post_id

    services.core.react = counted
    return answered


async def react(fake, *args, **kwargs) -> None:
    await asyncio.to_thread(fake.react, *args, **kwargs)


def test_reactions_over_the_gateway_vote_and_a_burst_is_one_edit(fake, services):
    schedule_daily(services)

    async def scenario():
        client = client_for(services)
        async with connected(client):
            await tick(services, client)
            (post,) = fake.messages
            post_id = int(post.custom_ids()[0].split()[1])
            await react(fake, ANN, CHANNEL_ID, post.id, "👍")
            await react(fake, BOB, CHANNEL_ID, post.id, "👍🏽")  # a skin tone: the same vote
            await react(fake, CY, CHANNEL_ID, post.id, "✅")
            await counted(client, services, post_id, (2, 0, 1))
            assert fake.edits == [] and client.redraws.pending() == [post_id]
            await redraw(client)
            assert len(fake.edits) == 1  # three reactions, one edit
            await react(fake, ANN, CHANNEL_ID, post.id, "👍", added=False)
            await counted(client, services, post_id, (1, 0, 1))
            await redraw(client)
            return post

    post = asyncio.run(scenario())
    first, second = fake.edits
    assert (first.channel_id, first.message_id) == (CHANNEL_ID, post.id)
    assert first.payload["content"].splitlines()[-1].endswith("👍 2 · 👎 0 · read 1")
    assert second.payload["content"].splitlines()[-1].endswith("👍 1 · 👎 0 · read 1")
    assert fake.messages[0].custom_ids() == post.custom_ids()  # the buttons stay
    assert fake.unhandled == []


def removes_counted_first(services) -> list:
    """The core counts each member's remove before their add, though the gateway sent the
    add first: an add waits in its worker thread until the remove that followed it has
    been counted (the adapter hands each event to a thread of its own)."""
    removed: dict[str, threading.Event] = {}
    answered: list = []
    react = services.core.react

    def in_reverse(reaction):
        gate = removed.setdefault(reaction.user.user_id, threading.Event())
        if reaction.added:
            assert gate.wait(WAIT_SECONDS), "the remove never came"
        post_id = react(reaction)
        answered.append((reaction, post_id))
        if not reaction.added:
            gate.set()
        return post_id

    services.core.react = in_reverse
    return answered


def test_a_reaction_removed_before_its_add_is_counted_leaves_no_vote(fake, services):
    """Twenty members put 👍 on and take it off again; each remove is counted before its
    add: no vote stays, and nothing is redrawn. Twenty more in the usual order count."""
    schedule_daily(services)

    async def scenario():
        client = client_for(services)
        as_usual = services.core.react
        answered = removes_counted_first(services)
        async with connected(client):
            await tick(services, client)
            (post,) = fake.messages
            post_id = int(post.custom_ids()[0].split()[1])
            for n in range(20):
                await react(fake, 1_100_000_000_000_001_000 + n, CHANNEL_ID, post.id, "👍")
                await react(fake, 1_100_000_000_000_001_000 + n, CHANNEL_ID, post.id, "👍", added=False)
                await until(lambda n=n: len(answered) == 2 * (n + 1))
            order = [(r.user.user_id, r.added) for r, _ in answered]
            assert order[:2] == [("1100000000000001000", False), ("1100000000000001000", True)]
            assert tally(services, post_id) == (0, 0, 0) and client.redraws.pending() == []
            services.core.react = as_usual
            for n in range(20):
                await react(fake, 1_100_000_000_000_002_000 + n, CHANNEL_ID, post.id, "👍")
            await counted(client, services, post_id, (20, 0, 0))
            return [changed for _, changed in answered]

    changed = asyncio.run(scenario())
    assert changed == [None] * 40  # neither the early remove nor the late add changed a vote
    assert fake.unhandled == []


def test_receipt_stamps_keep_the_order_events_came_in_even_when_the_clock_steps_back():
    times = iter([5_000_000, 5_000_000, 4_000_000, 9_000_000])
    order = ReceiptOrder(lambda: next(times))
    assert [order.stamp() for _ in range(4)] == [5_000, 5_001, 5_002, 9_000]


def test_a_post_in_a_thread_counts_reactions_for_its_parent_channel(fake, services):
    schedule_daily(services)

    async def scenario():
        client = client_for(services)
        async with connected(client):
            await tick(services, client)
            (daily,) = fake.messages
            thread_id = daily.id  # the discussion thread under the paper of the day
            # `/paper next` typed in that thread: the post belongs to the channel, the
            # message is in the thread.
            reply = await asyncio.to_thread(services.core.handle, Incoming(CHANNEL, MANAGER, "next"))
            ref = await client.messenger.post(thread_id, reply)
            await asyncio.to_thread(services.core.remember_message, reply, ref)
            in_thread = fake.messages[-1]
            assert in_thread.channel_id == thread_id
            await react(fake, ANN, thread_id, in_thread.id, "👎")
            await counted(client, services, reply.post_id, (0, 1, 0))
            await redraw(client)
            return in_thread

    in_thread = asyncio.run(scenario())
    (edit,) = fake.edits
    assert (edit.channel_id, edit.message_id) == (in_thread.channel_id, in_thread.id)
    assert fake.unhandled == []


def test_reactions_that_are_not_votes_change_nothing(fake, services):
    schedule_daily(services)

    async def scenario():
        client = client_for(services)
        answered = counting(services)
        async with connected(client):
            await tick(services, client)
            (post,) = fake.messages
            post_id = int(post.custom_ids()[0].split()[1])
            await react(fake, BOT_USER_ID, CHANNEL_ID, post.id, "👍")  # the bot's own
            await react(fake, ANN, CHANNEL_ID, post.id, "👍", author_id=ANN)  # Discord says: not ours
            await react(fake, ANN, CHANNEL_ID, post.id, "partyparrot", emoji_id=1_100_000_000_000_000_900)
            await react(fake, ANN, CHANNEL_ID, post.id, "🎉")
            await react(fake, BOB, CHANNEL_ID, post.id, "✅")
            # ✅ counted, and its redraw asked for (the handler does that after the core answers).
            await until(lambda: len(answered) == 3 and client.redraws.pending() == [post_id])
            return post_id, answered

    post_id, answered = asyncio.run(scenario())
    # The first two never reached the core (no query for them); of the rest only ✅ counts.
    assert [(r.emoji, changed) for r, changed in answered if r.emoji != "✅"] in (
        [("<:partyparrot:1100000000000000900>", None), ("🎉", None)],
        [("🎉", None), ("<:partyparrot:1100000000000000900>", None)])
    assert tally(services, post_id) == (0, 0, 1)
    # The ✅ redraw was still waiting when the client closed: closing drew it, once.
    (edit,) = fake.edits
    assert edit.payload["content"].splitlines()[-1].endswith("👍 0 · 👎 0 · read 1")
    assert fake.unhandled == []


def test_a_channels_custom_emoji_votes(fake, services):
    schedule_daily(services)
    assert services.core.handle(Incoming(CHANNEL, MANAGER, "reactions <:paper:1100000000000000900> 🙈 📖")).ok

    async def scenario():
        client = client_for(services)
        answered = counting(services)
        async with connected(client):
            await tick(services, client)
            (post,) = fake.messages
            post_id = int(post.custom_ids()[0].split()[1])
            await react(fake, ANN, CHANNEL_ID, post.id, "👍")  # not this channel's any more
            await react(fake, BOB, CHANNEL_ID, post.id, "paper", emoji_id=1_100_000_000_000_000_900)
            await until(lambda: len(answered) == 2)
            return post_id

    assert tally(services, asyncio.run(scenario())) == (1, 0, 0)


def test_the_menu_is_a_guild_only_message_command_in_the_tree_and_in_sync(seeded_copy):
    bot = Harness(seeded_copy)
    menu = bot.client.tree.get_command("Add to paperclub", type=discord.AppCommandType.message)
    assert menu is not None and menu.guild_only
    payload = menu.to_dict(bot.client.tree)
    assert payload["type"] == 3 and payload["contexts"] == [0]  # MESSAGE, guilds only
    bot.close()


# --- "Add to paperclub" on a message --------------------------------------------------------------


@pytest.fixture
def providers() -> Iterator[FakeProviders]:
    with FakeProviders() as fake_providers:
        yield fake_providers


def a_message(content: str, embed_urls: tuple[str, ...] = ()) -> SimpleNamespace:
    """What the interaction's resolved message carries: content and embeds."""
    return SimpleNamespace(content=content, embeds=[discord.Embed(url=u) for u in embed_urls])


async def use_menu(bot: Harness, message, manager: bool = False):
    from tests.fake_discord import FakeInteraction

    interaction = FakeInteraction(bot.client, bot.world, bot.channel, manager=manager)
    menu = bot.client.tree.get_command("Add to paperclub", type=discord.AppCommandType.message)
    await menu.callback(interaction, message)
    return interaction


def test_the_message_text_is_its_content_and_embed_links():
    message = a_message("see <https://arxiv.org/abs/2106.01345>", ("https://doi.org/10.1/x",))
    assert message_text(message) == "see <https://arxiv.org/abs/2106.01345>\nhttps://doi.org/10.1/x"


def test_the_menu_adds_the_linked_paper_and_answers_privately_with_buttons(seeded_copy, providers):
    async def scenario():
        bot = Harness(seeded_copy)
        bot.services.feature("adding").providers = providers_for(providers)
        interaction = await use_menu(bot, a_message("Worth a read: https://arxiv.org/abs/2106.01345v2"))
        assert interaction.events[0] == ("defer", {"ephemeral": True, "thinking": True})
        (answer,) = interaction.private()
        assert interaction.public() == [] and bot.channel.messages == []
        paper = bot.services.library.find("arXiv:2106.01345")
        assert paper is not None and any("Decision Transformer" in (e.title or "") for e in answer.embeds)
        assert answer.custom_ids() == [f"paperclub:nominate {paper.id}", f"paperclub:discuss {paper.id}"]

        # Nominate: anyone. Discuss: a manager (Manage Channels), posted in the channel.
        nominated = await click(bot.client, [VoteButton], answer, f"paperclub:nominate {paper.id}")
        assert "Nominated" in nominated.text()
        refused = await click(bot.client, [VoteButton], answer, f"paperclub:discuss {paper.id}")
        assert refused.text().startswith("Only channel managers") and bot.channel.messages == []
        posted = await click(bot.client, [VoteButton], answer, f"paperclub:discuss {paper.id}", manager=True)
        assert posted.private()[-1].content == "Posted in the channel." and posted.public() == []
        (post,) = bot.channel.messages
        assert post.custom_ids()[0].startswith("paperclub:vote ")  # the post's vote buttons
        with bot.services.db.session() as session:
            (row,) = session.query(Post).all()
            assert row.message_ref == f"{bot.channel.id}/{post.id}"  # kept: reactions on it vote
            assert session.query(Nomination).count() == 1
        assert bot.world.threads() and bot.world.threads()[0].id == post.id  # its discussion thread
        bot.close()

    asyncio.run(scenario())


def test_a_message_without_paper_links_gets_a_private_answer_and_nothing_is_added(seeded_copy, providers):
    async def scenario():
        bot = Harness(seeded_copy)
        bot.services.feature("adding").providers = providers_for(providers)
        before = bot.services.library.count()
        interaction = await use_menu(bot, a_message("lunch at noon?"))
        (answer,) = interaction.private()
        assert "No paper links" in answer.content and not interaction.thinking()
        assert bot.services.library.count() == before and providers.requests == []
        bot.close()

    asyncio.run(scenario())


def test_the_menu_over_the_gateway_adds_the_paper_and_answers_privately(fake, services, providers):
    """INTERACTION_CREATE for the message command through the fake gateway; the deferral and
    the answer through the fake's interaction callback and webhook routes."""
    services.feature("adding").providers = providers_for(providers)

    async def scenario():
        client = client_for(services)
        async with connected(client):
            answer = await asyncio.to_thread(
                fake.message_command, "Add to paperclub", ANN, CHANNEL_ID,
                "we should read https://arxiv.org/abs/2106.01345v2 next")
            assert await asyncio.to_thread(fake.wait_until, lambda: answer.original is not None)
            return answer

    answer = asyncio.run(scenario())
    (callback,) = answer.callbacks
    assert callback == {"type": 5, "data": {"flags": 64}}  # deferred, privately
    paper = services.library.find("arXiv:2106.01345")
    assert paper is not None
    assert any("Decision Transformer" in e.get("title", "") for e in answer.original["embeds"])
    ids = [c["custom_id"] for row in answer.original["components"] for c in row["components"]]
    assert ids == [f"paperclub:nominate {paper.id}", f"paperclub:discuss {paper.id}"]
    assert fake.messages == [] and fake.unhandled == []  # nothing in the channel
