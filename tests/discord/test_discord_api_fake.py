"""The Discord app over real discord.py HTTP and gateway, against the fake Discord of
tests/fake_discord_api.py: the client logs in, connects, becomes ready, and the paper of
the day goes out as Discord would receive it (an embed, buttons, a thread under it).
These also keep the fake honest: whatever discord.py asks that the fake does not know
shows up in `fake.unhandled`.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone

import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.app import PaperClubClient, ShardedPaperClubClient
from adapters.discord.endpoint import use_api_url
from adapters.discord.messages import DiscordDelivery
from bot.app import ConfigError, Services, build_services
from bot.messages import ChannelRef, Incoming, Reply, UserRef
from tests.fake_discord_api import (
    BOT_USER_ID,
    CHANNEL_ID,
    GUILD_ID,
    TOKEN,
    FakeDiscordAPI,
    PostedMessage,
)

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)  # a Monday
READY_SECONDS = 10.0
# discord.py waits this long after the last GUILD_CREATE before it is ready (2 s by default).
GUILD_READY_TIMEOUT = 0.1
CHANNEL = ChannelRef("discord", str(GUILD_ID), str(CHANNEL_ID))
MANAGER = UserRef("discord", "7", is_manager=True)
BUTTON_STYLES = {"primary": 1, "secondary": 2, "danger": 4}  # Discord's button style numbers


@pytest.fixture
def discord_endpoint(monkeypatch) -> None:
    """Give discord.py back its own endpoints after the test (use_api_url sets them
    process-wide): monkeypatch restores what it is handed here."""
    monkeypatch.setattr(Route, "BASE", Route.BASE)
    monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", DiscordWebSocket.DEFAULT_GATEWAY)


@pytest.fixture
def fake(discord_endpoint) -> Iterator[FakeDiscordAPI]:
    threads_before = set(threading.enumerate())
    with FakeDiscordAPI() as server:
        use_api_url(server.api_url)
        yield server
    # The fake's thread has ended, and discord.py's keep-alive threads with the client.
    assert set(threading.enumerate()) <= threads_before


@pytest.fixture
def services(seeded_copy) -> Iterator[Services]:
    services = build_services(seeded_copy, clock=lambda: NOW)
    yield services
    services.db.dispose()


@asynccontextmanager
async def connected(client: discord.Client, token: str = TOKEN) -> AsyncIterator[discord.Client]:
    """`client.start(token)` until the client is ready; closed (HTTP session, gateway,
    keep-alive thread) on the way out, whatever happened."""
    async with client:
        started = asyncio.create_task(client.start(token))
        ready = asyncio.create_task(client.wait_until_ready())
        done, _ = await asyncio.wait({started, ready}, timeout=READY_SECONDS,
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if started in done:
                started.result()  # the reason it stopped (LoginFailure, ...)
            started.cancel()
            raise TimeoutError(f"the client was not ready within {READY_SECONDS}s")
        try:
            yield client
        finally:
            await client.close()
            await started  # start() returns once the client is closed


async def tick(services: Services, client: PaperClubClient):
    """The scheduler's tick as `serve` runs it: the core in a worker thread, each
    delivery handed back to the client's event loop."""
    delivery = DiscordDelivery(client.messenger, asyncio.get_running_loop())
    return await asyncio.to_thread(services.core.tick, NOW, delivery, ["discord"])


def schedule_daily(services: Services) -> None:
    reply = services.core.handle(Incoming(CHANNEL, MANAGER, "schedule 09:00 UTC daily"))
    assert reply.ok, reply.text


def buttons(message: PostedMessage) -> list[tuple[str, str, int]]:
    return [(b["label"], b["custom_id"], b["style"]) for row in message.components for b in row["components"]]


def test_use_api_url_points_rest_and_the_gateway_at_the_fake(fake):
    assert Route.BASE == fake.api_url
    assert DiscordWebSocket.DEFAULT_GATEWAY == yarl.URL(fake.gateway_url)  # from the fake's GET /gateway
    assert Route("GET", "/users/@me").url == fake.api_url + "/users/@me"


def test_the_client_becomes_ready_and_posts_the_paper_of_the_day_with_buttons_and_a_thread(fake, services):
    schedule_daily(services)

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            assert client.user.id == BOT_USER_ID and client.user.bot
            assert isinstance(client.get_channel(CHANNEL_ID), discord.TextChannel)  # from GUILD_CREATE
            return await tick(services, client)

    report = asyncio.run(scenario())
    assert len(report.posted) == 1 and not report.failed, report
    (identify,) = fake.identified
    assert identify["intents"] == discord.Intents.default().value  # no privileged intent asked

    (message,) = fake.messages
    assert message.channel_id == CHANNEL_ID and message.answered
    assert message.content.startswith("Paper of the day, Monday 23 November 2026: ")
    post_id = int(message.custom_ids()[0].split()[1])
    ref, rendered = services.core.render_post(post_id)
    assert ref == f"{CHANNEL_ID}/{message.id}"  # the core keeps where the post is
    card = rendered.cards[0]
    (embed,) = message.embeds
    assert embed["title"] == f"[{card.paper_id}] {card.title}"[:256]
    assert any(f["name"] == "Why" and f["value"] for f in embed["fields"])
    assert buttons(message) == [
        ("Want to discuss", f"paperclub:vote {post_id} up", BUTTON_STYLES["primary"]),
        ("Not for us", f"paperclub:vote {post_id} down", BUTTON_STYLES["danger"]),
        ("I read it", f"paperclub:vote {post_id} read", BUTTON_STYLES["secondary"]),
    ]
    assert message.payload["allowed_mentions"] == {"parse": []}  # the client never pings

    (thread,) = fake.threads
    assert (thread.id, thread.parent_id, thread.auto_archive_duration) == (message.id, CHANNEL_ID, 1440)
    assert card.title.startswith(thread.name.rstrip("…"))
    assert fake.unhandled == []


def test_a_vote_redraws_the_post_and_a_reply_goes_to_its_thread(fake, services):
    schedule_daily(services)

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            await tick(services, client)
            (post,) = fake.messages
            post_id = int(post.custom_ids()[0].split()[1])
            assert services.core.handle(Incoming(CHANNEL, MANAGER, f"vote {post_id} up")).ok
            await client.messenger.refresh_post(post_id)
            # The thread came with THREAD_CREATE, so the cache has it: no GET /channels.
            assert isinstance(client.get_channel(post.id), discord.Thread)
            note = Reply(text="Notes so far", reply_to=f"{CHANNEL_ID}/{post.id}")
            ref = await client.messenger.post(CHANNEL_ID, note)
            return post, ref

    post, ref = asyncio.run(scenario())
    (edit,) = fake.edits
    assert (edit.channel_id, edit.message_id) == (CHANNEL_ID, post.id)
    assert "1" in edit.payload["content"].split("\n")[-1]  # the tally line counts the vote
    assert fake.messages[0].content == edit.payload["content"]  # the channel shows the edit
    assert fake.messages[0].custom_ids() == post.custom_ids()  # the buttons stay
    reply = fake.messages[-1]
    assert (reply.channel_id, reply.content) == (post.id, "Notes so far")
    assert ref == f"{post.id}/{reply.id}"
    assert not any(r.startswith("GET /api/v10/channels/") for r in fake.requests)
    assert fake.unhandled == []


def test_a_refused_token_ends_start_with_login_failure(fake, services):
    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        with pytest.raises(discord.LoginFailure):
            async with connected(client, token="not-the-token"):
                pass
        assert client.is_closed()

    asyncio.run(scenario())
    assert fake.requests[-1] == "GET /api/v10/users/@me"  # refused there: no gateway
    assert fake.identified == [] and fake.messages == []


def test_a_dropped_gateway_connection_is_resumed(fake, services):
    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            session = client.ws.session_id
            await asyncio.to_thread(fake.drop_gateway, 4000)  # "unknown error": discord.py resumes
            assert await asyncio.to_thread(fake.wait_until, lambda: fake.connected == 1 and fake.resumed)
            assert fake.resumed == [session] and len(fake.identified) == 1
            channel = client.get_channel(CHANNEL_ID)
            await channel.send("still here")

    asyncio.run(scenario())
    assert [m.content for m in fake.messages] == ["still here"]


def test_a_slow_post_is_in_the_channel_before_its_answer_comes(fake, services):
    fake.post_delay = 0.5

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            sending = asyncio.create_task(client.get_channel(CHANNEL_ID).send("slow"))
            (arrived,) = await asyncio.to_thread(fake.wait_for_messages, 1)
            assert not arrived.answered and not sending.done()
            await sending
            assert arrived.answered

    asyncio.run(scenario())


def test_the_sharded_client_asks_the_gateway_bot_endpoint_and_identifies_its_shard(fake, services):
    async def scenario():
        client = ShardedPaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            assert client.shard_count == 1 and client.get_channel(CHANNEL_ID) is not None

    asyncio.run(scenario())
    assert "GET /api/v10/gateway/bot" in fake.requests
    assert [i["shard"] for i in fake.identified] == [[0, 1]]


def test_what_the_fake_does_not_know_is_a_404_it_keeps(fake):
    request = urllib.request.Request(fake.api_url + "/guilds/1/roles",
                                     headers={"Authorization": f"Bot {TOKEN}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    refused.value.close()  # the error holds the response open
    assert refused.value.code == 404
    assert fake.unhandled == ["GET /api/v10/guilds/1/roles"]


@pytest.mark.parametrize("url", ["ws://127.0.0.1:8080/api/v10", "127.0.0.1:8080/api/v10", "http://", "",
                                 "discord.com"])
def test_use_api_url_refuses_what_is_not_an_http_url(discord_endpoint, url):
    before = Route.BASE
    with pytest.raises(ConfigError, match=r"DISCORD_API_URL=.* is not an http\(s\) URL"):
        use_api_url(url)
    assert Route.BASE == before


def test_use_api_url_refuses_an_api_that_does_not_answer(discord_endpoint):
    with socket.socket() as unused:  # a port nothing listens on once this is closed
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    with pytest.raises(ConfigError, match="DISCORD_API_URL=.*GET .*/gateway"):
        use_api_url(f"http://127.0.0.1:{port}/api/v10")
    assert (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == before
