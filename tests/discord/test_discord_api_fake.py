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
from pathlib import Path

import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.app import PaperClubClient, ShardedPaperClubClient
from adapters.discord.endpoint import use_api_url
from adapters.discord.messages import DiscordDelivery
from bot.app import Services, build_services
from bot.messages import Action, ChannelRef, DeliveryRefused, Incoming, PaperCard, Reply, UserRef
from bot.ops.settings import ConfigError
from tests.fake_discord_api import (
    BOT_USER_ID,
    CHANNEL_ID,
    GUILD_ID,
    INVALID_FORM_BODY,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    TOKEN,
    UNKNOWN_CHANNEL,
    FakeDiscordAPI,
    PostedMessage,
)
from tests.processes import free_port

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc)  # a Monday
READY_SECONDS = 10.0
# discord.py waits this long after the last GUILD_CREATE before it is ready (2 s by default).
GUILD_READY_TIMEOUT = 0.1
THREADS_END_SECONDS = 5.0
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
    # The fake's thread has ended, and discord.py's keep-alive threads with the client
    # (closing the client tells its keep-alive thread to stop without waiting for it).
    for thread in set(threading.enumerate()) - threads_before:
        thread.join(THREADS_END_SECONDS)
    assert set(threading.enumerate()) <= threads_before


@pytest.fixture
def services(seeded_copy) -> Iterator[Services]:
    services = build_services(seeded_copy, clock=lambda: NOW)
    yield services
    services.core.stop()  # the add feature's fetch threads end with the test
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
    assert fake.api_url == Route.BASE
    assert yarl.URL(fake.gateway_url) == DiscordWebSocket.DEFAULT_GATEWAY  # from the fake's GET /gateway
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
    assert report["posted"] == 1 and not report["failed"], report
    (identify,) = fake.identified
    assert identify["intents"] == discord.Intents.default().value  # no privileged intent asked

    (message,) = fake.messages
    assert message.channel_id == CHANNEL_ID and message.answered
    assert message.content == "Paper of the day, Monday 23 November 2026"  # the embed names the paper
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
            paper = services.votes.post_in_channel(post_id, services.channels.get(CHANNEL).id).paper_id
            assert services.core.handle(Incoming(CHANNEL, MANAGER, f"vote {paper} up")).ok
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
    assert before == Route.BASE


def test_use_api_url_refuses_an_api_that_does_not_answer(discord_endpoint):
    with socket.socket() as unused:  # a port nothing listens on once this is closed
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    with pytest.raises(ConfigError, match=r"DISCORD_API_URL=.*GET .*/gateway"):
        use_api_url(f"http://127.0.0.1:{port}/api/v10")
    assert before == (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


# --- Discord's limits: links, embed sizes, refusals ------------------------------------------------


def import_bibtex(services: Services, path: Path, entries: list[str]) -> list[int]:
    """The entries as a BibTeX file in the collection "bib"; their paper ids."""
    path.write_text("\n".join(entries), encoding="utf-8")
    services.library.import_file(path, collection="bib")
    return sorted(services.library.get_many(range(1, 100_000)).keys())[-len(entries):]


def embed_size(embed: dict) -> int:
    """Discord's count toward the 6,000 characters of a message's embeds."""
    return (len(embed.get("title", "")) + len(embed.get("description", ""))
            + sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
            + len(embed.get("footer", {}).get("text", "")) + len(embed.get("author", {}).get("name", "")))


def test_the_fake_refuses_what_discord_refuses(fake, services):
    """The fake's limits are Discord's: a malformed url, or embeds past 6,000 characters in
    total though each is within its own limits, gets 400 with code 50035."""
    spaced = discord.Embed(title="Robust", url="https://example.org/Robust Diffusion.pdf")
    big = [discord.Embed(title="t", description="d" * 4000) for _ in range(2)]

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            channel = client.get_channel(CHANNEL_ID)
            refused = []
            for embeds in ([spaced], big):
                with pytest.raises(discord.HTTPException) as error:
                    await channel.send(embeds=embeds)
                refused.append(error.value)
            return refused

    url_error, size_error = asyncio.run(scenario())
    assert (url_error.status, url_error.code) == (400, INVALID_FORM_BODY)
    assert "embeds.0.url" in url_error.text and "Not a well formed URL" in url_error.text
    assert size_error.code == INVALID_FORM_BODY and "6000" in size_error.text
    assert fake.messages == []


def test_a_bibtex_paper_with_a_spaced_url_is_posted_with_the_link_encoded(fake, services, tmp_path):
    import_bibtex(services, tmp_path / "robust.bib", [
        "@inproceedings{robust2024, title = {Robust Diffusion Models},",
        "  author = {Ada Lovelace}, abstract = {Diffusion models that stay robust under attack.},",
        "  url = {https://example.org/papers/Robust Diffusion Models.pdf}}",
    ])
    for line in ("use bib", "schedule 09:00 UTC daily"):
        assert services.core.handle(Incoming(CHANNEL, MANAGER, line)).ok, line

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            return await tick(services, client)

    report = asyncio.run(scenario())
    assert report["posted"] == 1 and not report["failed"], report
    (message,) = fake.messages
    (embed,) = message.embeds
    assert embed["title"].endswith("Robust Diffusion Models")
    assert embed["url"] == "https://example.org/papers/Robust%20Diffusion%20Models.pdf"


HUGE_KEYWORDS = ", ".join(f"keyword number {i} of many" for i in range(300))  # ~7,000 characters
LONG_NAMES = " and ".join(f"Bartholomew{'x' * 50} Longname{i}" for i in range(12))


def test_a_ten_option_poll_of_papers_with_huge_keyword_lists_posts_within_6000(fake, services, tmp_path):
    papers = import_bibtex(services, tmp_path / "huge.bib", [
        f"@article{{huge{i}, title = {{Paper {i} with a title long enough to need every one of its "
        f"words {'and more words ' * 20}}}, author = {{{LONG_NAMES}}}, keywords = {{{HUGE_KEYWORDS}}}, "
        f"abstract = {{{'An abstract that goes on. ' * 400}}}, url = {{https://example.org/{i}}}}}"
        for i in range(10)
    ])
    for paper_id in papers:
        assert services.core.handle(Incoming(CHANNEL, MANAGER, f"nominate {paper_id}")).ok
    poll = services.core.handle(Incoming(CHANNEL, MANAGER, "poll 10"))
    assert poll.ok and len(poll.cards) == 10, poll.text

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            return await client.messenger.post(CHANNEL_ID, poll)

    asyncio.run(scenario())
    (message,) = fake.messages
    assert len(message.embeds) == 10 and sum(map(embed_size, message.embeds)) <= 6000
    # Every option keeps its number (in its title, not as a "Why"), and its button.
    assert [e["title"].split("]")[0] for e in message.embeds] == [f"Option {i}: [{p}" for i, p in enumerate(papers, 1)]
    assert not any(f["name"] == "Why" and "Option" in f["value"] for e in message.embeds for f in e.get("fields", []))
    assert message.custom_ids() == [f"paperclub:vote {poll.poll_id} {i}" for i in range(1, 11)]


def test_cards_past_every_embed_limit_still_post(fake, services):
    """Each limit at once (title, description, author, fields, footer), ten times over."""
    card = PaperCard(
        paper_id=1, title="T" * 1000, url="https://example.org/a paper", authors_display="A" * 1000,
        venue="V" * 5000, matched_terms=["matched"] * 2000, snippet="S" * 10_000, score=1.5,
        reason="R" * 3000, tags=["tag"] * 3000, notes=["N" * 2000] * 40, discussion=["D" * 3000] * 5,
    )
    reply = Reply(text="x" * 5000, cards=[card] * 12,
                  actions=[Action(f"{i}. " + "L" * 200, f"vote 1 {i}") for i in range(1, 11)])

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            return await client.messenger.post(CHANNEL_ID, reply)

    asyncio.run(scenario())
    messages = fake.messages
    assert "".join(m.content for m in messages) == reply.text  # in 2,000-character messages
    assert sum(len(m.embeds) for m in messages) == 12 and all(len(m.embeds) <= 10 for m in messages)
    assert all(sum(map(embed_size, m.embeds)) <= 6000 for m in messages)
    assert len(messages[-1].custom_ids()) == 10


@pytest.mark.parametrize("status, code, permanent", [
    (403, MISSING_ACCESS, True),  # the bot was removed from the channel
    (403, MISSING_PERMISSIONS, True),  # it may not send messages there
    (404, UNKNOWN_CHANNEL, True),  # the channel was deleted
    (400, INVALID_FORM_BODY, True),  # the same message would be refused again
    (429, 0, False),  # rate limited: passes
    (503, 0, False),  # Discord's trouble: passes
])
def test_a_refused_scheduled_post_says_whether_the_refusal_is_permanent(fake, services, status, code, permanent):
    fake.refuse(CHANNEL_ID, status, code)

    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            delivery = DiscordDelivery(client.messenger, asyncio.get_running_loop())
            with pytest.raises(DeliveryRefused) as refused:
                await asyncio.to_thread(delivery, CHANNEL, Reply(text="Paper of the day"))
            return refused.value

    refusal = asyncio.run(scenario())
    assert refusal.permanent is permanent
    assert str(refusal).startswith(f"Discord refused: {status} ")
    assert fake.messages == []


def test_an_unreachable_discord_is_a_transient_refusal(fake, services, monkeypatch):
    async def scenario():
        client = PaperClubClient(services.core, guild_ready_timeout=GUILD_READY_TIMEOUT)
        async with connected(client):
            # The network goes: every later request meets a port nobody listens on.
            monkeypatch.setattr(Route, "BASE", f"http://127.0.0.1:{free_port()}/api/v10")
            delivery = DiscordDelivery(client.messenger, asyncio.get_running_loop())
            with pytest.raises(DeliveryRefused) as refused:
                await asyncio.to_thread(delivery, CHANNEL, Reply(text="Paper of the day"))
            return refused.value

    refusal = asyncio.run(scenario())
    assert refusal.permanent is False and str(refusal).startswith("could not reach Discord: ")
